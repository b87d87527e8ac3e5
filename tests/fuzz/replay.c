/*
 * tests/fuzz/replay.c - replays a fuzz corpus through LLVMFuzzerTestOneInput
 * (built with -DVPA_FUZZ_REPLAY by `make test`, under ASan/UBSan by `make asan`).
 * Usage: replay_X CORPUS_DIR   prints one line per input.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	DIR *d = opendir(argv[1]);
	if (!d) {
		fprintf(stderr, "%s: cannot open corpus\n", argv[1]);
		return 1;
	}
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
		char *buf;
		size_t len;
		struct vpa_err err;
		vpa_err_init(&err);
		if (vpa_read_file(path, &buf, &len, &err) != 0)
			continue;
		LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
		free(buf);
		printf("%s\n", e->d_name);
		n++;
	}
	closedir(d);
	if (n == 0) {
		fprintf(stderr, "%s: empty corpus\n", argv[1]);
		return 1;
	}
	return 0;
}
