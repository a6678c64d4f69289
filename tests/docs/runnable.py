#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs every command example marked runnable in README.md and docs/*.md.

The mark is the fence's info string (docs/profiles.md and docs/eval.md use it):

    ```sh runnable            run the block; it must exit 0
    ```sh runnable exit=2     run the block; it must exit 2
    ```yaml file=my.yaml      write the block as my.yaml for the blocks after it

Each Markdown file gets a fresh temporary folder, the blocks' working directory, holding a
link `examples` to the source tree's examples/ and the files its `file=` blocks wrote so far.
Each runnable block runs as `sh -eu` with PATH starting at a folder where `warden` is the
build's warden, HOME in the temporary folder (so no user's policies are found) and LANG=C.UTF-8.
An unknown word in a marked fence is an error, so a typo never turns a check off.

Exit status: 0 when every block did what its mark says, 1 otherwise, 77 (skipped) when not
run as root (the examples build sandboxes), unless SBX_TEST_MUST_WORK=1.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^(\s*)(`{3,})(.*)$")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
BLOCK_TIMEOUT_S = 120


class MarkError(Exception):
    pass


def blocks(path):
    """Yields (line, info words, text) for each fenced block of path."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks, info = m.group(1), m.group(2), m.group(3).split()
        start = i + 1
        body = []
        i += 1
        while i < len(lines):
            end = FENCE.match(lines[i])
            if end and end.group(2) == ticks and not end.group(3).strip():
                break
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line)
            i += 1
        if i == len(lines):
            raise MarkError(f"{path}:{start}: a fence that is never closed")
        i += 1
        yield start, info, "\n".join(body) + "\n"


def marks(path, line, info):
    """The block's action: ('run', exit code), ('file', name) or None for an unmarked block."""
    words = info[1:]
    if "runnable" not in words and not any(w.startswith("file=") for w in words):
        return None
    if "runnable" in words:
        if not info or info[0] != "sh":
            raise MarkError(f"{path}:{line}: 'runnable' marks a ```sh block only")
        code = 0
        for w in words:
            if w == "runnable":
                continue
            if w.startswith("exit=") and w[5:].isdigit() and int(w[5:]) < 256:
                code = int(w[5:])
                continue
            raise MarkError(f"{path}:{line}: unknown word '{w}' in a runnable fence "
                            "(expected exit=N)")
        return ("run", code)
    if len(words) != 1 or not NAME.match(words[0][5:]):
        raise MarkError(f"{path}:{line}: a file= fence takes one plain file name and nothing "
                        "else")
    return ("file", words[0][5:])


def run_doc(path, source, bindir, env):
    """Runs path's marked blocks; returns (blocks run, failures)."""
    ran, failed = 0, []
    with tempfile.TemporaryDirectory(prefix="warden-docs-") as tmp:
        os.chmod(tmp, 0o755)
        os.symlink(os.path.join(source, "examples"), os.path.join(tmp, "examples"))
        home = os.path.join(tmp, ".home")
        os.mkdir(home)
        block_env = dict(env, HOME=home)
        for line, info, text in blocks(path):
            action = marks(path, line, info)
            if action is None:
                continue
            if action[0] == "file":
                with open(os.path.join(tmp, action[1]), "w", encoding="utf-8") as f:
                    f.write(text)
                continue
            ran += 1
            where = f"{os.path.relpath(path, source)}:{line}"
            try:
                p = subprocess.run(["sh", "-eu", "-c", text], cwd=tmp, env=block_env,
                                   stdin=subprocess.DEVNULL, capture_output=True,
                                   timeout=BLOCK_TIMEOUT_S)
                code, out, err = p.returncode, p.stdout, p.stderr
            except subprocess.TimeoutExpired as e:
                code, out, err = None, e.stdout or b"", e.stderr or b""
            if code != action[1]:
                failed.append(where)
                print(f"FAIL {where}: exit {code}, expected {action[1]}\n--- block ---\n{text}"
                      f"--- stdout ---\n{out.decode(errors='replace')}"
                      f"--- stderr ---\n{err.decode(errors='replace')}---")
            else:
                print(f"ok   {where}")
    return ran, failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--warden", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    must = os.environ.get("SBX_TEST_MUST_WORK") == "1"
    if os.geteuid() != 0 and not must:
        print("skipped: the examples build sandboxes; run as root")
        return 77
    source = os.path.realpath(args.source)
    docs = [os.path.join(source, "README.md")]
    docs += sorted(glob.glob(os.path.join(source, "docs", "*.md")))
    with tempfile.TemporaryDirectory(prefix="warden-docs-bin-") as bindir:
        os.chmod(bindir, 0o755)
        os.symlink(os.path.realpath(args.warden), os.path.join(bindir, "warden"))
        env = {"PATH": bindir + ":/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
        for k, v in os.environ.items():
            if k == "XDG_STATE_HOME" or k.endswith("SAN_OPTIONS"):
                env[k] = v
        total, failed = 0, []
        try:
            for doc in docs:
                ran, bad = run_doc(doc, source, bindir, env)
                total += ran
                failed += bad
        except MarkError as e:
            print(f"FAIL {e}")
            return 1
    if total == 0:
        print("FAIL no block is marked runnable")
        return 1
    print(f"{total - len(failed)} of {total} runnable blocks did what their marks say")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
