# SPDX-License-Identifier: MIT
# The plain HTTP upstream of tests/egress/test-egress-proxy.c: serves the files of DIR on
# 127.0.0.1 at a port the kernel picks, and prints that port on its first line of output.
import http.server
import sys


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main():
    directory = sys.argv[1]

    def handler(*args, **kwargs):
        return Quiet(*args, directory=directory, **kwargs)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


main()
