/* SPDX-License-Identifier: MIT */
/*
 * A plain main() for fuzz targets built without libFuzzer: it feeds every file named on the
 * command line (directories are walked one level deep) to LLVMFuzzerTestOneInput once, so
 * `meson test` replays the seed corpus under any compiler and sanitizer.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "io-util.h"
#include "fuzz-util.h"

#define REPLAY_MAX_BYTES (4u * 1024u * 1024u)

static int replay_file(int dirfd, const char *path)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > REPLAY_MAX_BYTES)
		return -EINVAL;
	size_t len = (size_t)st.st_size;
	_cleanup_free_ uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	int r = io_read_exact(fd, buf, len);
	if (r < 0)
		return r == -ENODATA ? -EIO : r;
	(void)LLVMFuzzerTestOneInput(buf, len);
	return 0;
}

static int replay_path(const char *path, unsigned *count)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode)) {
		int r = replay_file(AT_FDCWD, path);
		if (r == 0)
			(*count)++;
		return r;
	}
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	int r = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		r = replay_file(dirfd(d), de->d_name);
		if (r < 0) {
			fprintf(stderr, "replay: %s/%s: %s\n", path, de->d_name, strerror(-r));
			break;
		}
		(*count)++;
	}
	(void)closedir(d);
	return r;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	for (int i = 1; i < argc; i++) {
		int r = replay_path(argv[i], &count);
		if (r < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(-r));
			return 1;
		}
	}
	printf("replayed %u inputs\n", count);
	return count > 0 ? 0 : 1;
}
