/*
 * tests/golden/onnx/gen_hostile.c - writes the hand-made hostile models of
 * issue 26 used by tests/e2e/test_onnx.sh and the fuzz corpus (bytes from
 * tests/unit/onnx_craft.h).  Regenerate from the repository root:
 *
 *   cc -std=c11 -I. -o /tmp/gen_hostile tests/golden/onnx/gen_hostile.c
 *   /tmp/gen_hostile tests/golden/onnx
 *   cp tests/golden/onnx/bad_deep.onnx tests/fuzz/corpus/onnx/deep_nesting
 *
 * bad_deep.onnx       messages nested 12,000 levels (4,000 Graph > Node > Attribute
 *                     chains): overflowed the 8 MB stack in libprotobuf-c before
 *                     the nesting was bounded
 * bad_no_opset.onnx   no opset_import at all
 * bad_nan_init.onnx   initializer 'w' = (1, nan, 3)
 * bad_inf_init.onnx   initializer 'w' = (1, 2, -inf)
 * ext_w.onnx          initializer 'w' (16 floats) in external data 'w.bin' (the file
 *                     is made by the tests: a symlink, a FIFO, a folder ...)
 * good.xnan.npy       an input for good.onnx, float32 (2, 4), NaN at (1, 1)
 * good.xinf.npy       the same with -inf at (1, 3)
 */
#include <math.h>
#include <stdio.h>

#include "tests/unit/onnx_craft.h"

static void save(const char *dir, const char *name, struct pb *b)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(pb_data(b), 1, b->len, f) != b->len || fclose(f)) {
		perror(path);
		exit(1);
	}
	printf("%s: %zu bytes\n", path, b->len);
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

/* A float32 (2, 4) .npy (version 1.0, C order, header padded to 64 bytes). */
static void save_npy(const char *dir, const char *name, const float *x)
{
	char path[4096], h[118];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int n = snprintf(h, sizeof(h), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }");
	memset(h + n, ' ', sizeof(h) - (size_t)n);
	h[sizeof(h) - 1] = '\n'; /* 10 + 118 = 128 bytes */
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, sizeof(h), 0};
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(pre, 1, 10, f) != 10 || fwrite(h, 1, sizeof(h), f) != sizeof(h) ||
	    fwrite(x, sizeof(float), 8, f) != 8 || fclose(f)) {
		perror(path);
		exit(1);
	}
	printf("%s: 160 bytes\n", path);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	struct pb b = {0};
	craft_deep(&b, 12000);
	save(argv[1], "bad_deep.onnx", &b);
	craft_init_model(&b, -1, 3, (const float[]){1, 2, 3}, NULL);
	save(argv[1], "bad_no_opset.onnx", &b);
	craft_init_model(&b, 13, 3, (const float[]){1, NAN, 3}, NULL);
	save(argv[1], "bad_nan_init.onnx", &b);
	craft_init_model(&b, 13, 3, (const float[]){1, 2, -INFINITY}, NULL);
	save(argv[1], "bad_inf_init.onnx", &b);
	craft_init_model(&b, 13, 16, NULL, "w.bin");
	save(argv[1], "ext_w.onnx", &b);
	save_npy(argv[1], "good.xnan.npy", (const float[]){1, -2, 3, -4, 0.5f, NAN, -1, 2});
	save_npy(argv[1], "good.xinf.npy", (const float[]){1, -2, 3, -4, 0.5f, 0.25f, -1, -INFINITY});
	return 0;
}
