/*
 * tests/fuzz/gen_seeds.c - the hand-made seeds of fuzz_npy_nd and
 * fuzz_onnx_external (issue 26 item 12).  Regenerate from the repository root:
 *
 *   cc -std=c11 -I. -o /tmp/gen_seeds tests/fuzz/gen_seeds.c && /tmp/gen_seeds
 *
 * The other seeds of corpus/npy_nd are copies: the .npy inputs of
 * tests/golden/onnx (good.x, good.x3, good.xi, good.xnan, fuse.x) and
 * corpus/npy's seeds, as npy_<name>.  corpus/onnx_external also holds
 * golden_ext: tests/golden/onnx/ext.onnx, "\n%%FILE ext.bin\n", ext.bin.
 */
#include <math.h>
#include <stdio.h>

#include "tests/unit/onnx_craft.h"

static FILE *open_seed(const char *corpus, const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "tests/fuzz/corpus/%s/%s", corpus, name);
	FILE *f = fopen(path, "wb");
	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}

/* A version 1.0 .npy: header dict padded to a multiple of 64 bytes, then data. */
static void npy(const char *name, const char *descr, const char *shape, const void *d, size_t n)
{
	char h[256];
	int len = snprintf(h, sizeof(h), "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
			   descr, shape);
	size_t hl = (size_t)len + 1;
	while ((10 + hl) % 64)
		hl++;
	memset(h + len, ' ', hl - (size_t)len);
	h[hl - 1] = '\n';
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)hl, 0};
	FILE *f = open_seed("npy_nd", name);
	fwrite(pre, 1, 10, f);
	fwrite(h, 1, hl, f);
	fwrite(d, 1, n, f);
	fclose(f);
}

/* The model, then for each part "\n%%KIND NAME\n" and its body (see fuzz_onnx_external.c). */
static void folder(const char *name, const char *location, const char *const *parts, size_t n)
{
	struct pb b = {0};
	craft_init_model(&b, 13, 16, NULL, location);
	FILE *f = open_seed("onnx_external", name);
	fwrite(pb_data(&b), 1, b.len, f);
	for (size_t i = 0; i + 1 < n; i += 2) {
		fprintf(f, "\n%s\n", parts[i]);
		if (!strcmp(parts[i + 1], "W64")) {
			float w[16];
			for (int k = 0; k < 16; k++)
				w[k] = (float)k - 7.5f;
			fwrite(w, sizeof(float), 16, f);
		} else {
			fputs(parts[i + 1], f);
		}
	}
	fclose(f);
	free(b.buf);
}

int main(void)
{
	unsigned char b[8] = {0, 1, 2, 0, 1, 1, 0, 255};
	npy("bool_2x4", "|b1", "(2, 4)", b, 8);
	npy("uint8_8", "|u1", "(8,)", b, 8);
	npy("int8_2x2x2", "|i1", "(2, 2, 2)", b, 8);
	int32_t i4[6] = {1, -2, 3, -4, 5, 2147483647};
	npy("int32_3x2", "<i4", "(3, 2)", i4, sizeof(i4));
	npy("f4_8d", "<f4", "(1, 1, 1, 1, 1, 1, 2, 1)", (float[]){1, 2}, 8);
	npy("f4_9d_too_many", "<f4", "(1, 1, 1, 1, 1, 1, 1, 2, 1)", (float[]){1, 2}, 8);
	npy("f8_scalar_inf", "<f8", "()", (double[]){INFINITY}, 8);
	npy("f4_zero_axis", "<f4", "(3, 0, 2)", NULL, 0);
	npy("f4_nan_3d", "<f4", "(1, 2, 2)", (float[]){0, 1, NAN, 3}, 16);
	npy("f4_short", "<f4", "(2, 3, 4)", (float[]){0, 1, 2}, 12);
	npy("u2_unsupported", "<u2", "(2,)", b, 4);

	static const char *const ok[] = {"%%FILE w.bin", "W64"};
	folder("regular", "w.bin", ok, 2);
	static const char *const sub[] = {"%%DIR d", "", "%%FILE d/w.bin", "W64"};
	folder("subfolder", "d/w.bin", sub, 4);
	static const char *const link_out[] = {"%%LINK w.bin", "../secret.bin"};
	folder("link_outside", "w.bin", link_out, 2);
	static const char *const link_in[] = {"%%FILE real.bin", "W64", "%%LINK w.bin", "real.bin"};
	folder("link_inside", "w.bin", link_in, 4);
	static const char *const link_dir[] = {"%%LINK d", ".."}; /* d/secret.bin: outside */
	folder("link_folder", "d/secret.bin", link_dir, 2);
	static const char *const fifo[] = {"%%FIFO w.bin", ""};
	folder("fifo", "w.bin", fifo, 2);
	static const char *const dir[] = {"%%DIR w.bin", ""};
	folder("folder", "w.bin", dir, 2);
	static const char *const shrt[] = {"%%FILE w.bin", "only 20 bytes here.."};
	folder("short", "w.bin", shrt, 2);
	folder("missing", "w.bin", NULL, 0);
	folder("dotdot_last", "d/..", sub, 4);
	return 0;
}
