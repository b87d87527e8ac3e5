/*
 * tests/fuzz/fuzz_npy_nd.c - vpa_npy_parse_nd, the N-D .npy reader behind
 * `vpaudit onnx run -i`, on arbitrary bytes, then vpa_check_finite_nd on a
 * float array as cmd_onnx.c does.  No crash, no leak; an error is one
 * non-empty line naming the file and leaves nothing allocated; an array has
 * at most VPA_NPY_MAX_DIMS axes, a kind and item size of the supported
 * dtypes, no more items than the bytes could hold, bools of 0 or 1.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_err(const struct vpa_err *err)
{
	if (!err->msg[0] || strchr(err->msg, '\n') || strncmp(err->msg, "fuzz.npy: ", 10))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vpa_npy_nd a;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_npy_parse_nd("fuzz.npy", data, size, &a, &err)) {
		if (a.data)
			abort();
		check_err(&err);
		return 0;
	}
	if (a.ndim > VPA_NPY_MAX_DIMS || !a.data)
		abort();
	int ok = (a.kind == 'f' && (a.itemsize == 4 || a.itemsize == 8)) ||
		 (a.kind == 'i' && (a.itemsize == 1 || a.itemsize == 4 || a.itemsize == 8)) ||
		 ((a.kind == 'u' || a.kind == 'b') && a.itemsize == 1);
	if (!ok)
		abort();
	size_t count = 1;
	for (size_t k = 0; k < a.ndim; k++) {
		if (a.shape[k] && count > size / a.shape[k])
			abort(); /* more items than bytes */
		count *= a.shape[k];
	}
	if (count * (size_t)a.itemsize > size)
		abort();
	volatile unsigned char sum = 0;
	for (size_t i = 0; i < count * (size_t)a.itemsize; i++)
		sum ^= ((const unsigned char *)a.data)[i]; /* ASan checks the bounds */
	(void)sum;
	if (a.kind == 'b')
		for (size_t i = 0; i < count; i++)
			if (((const unsigned char *)a.data)[i] > 1)
				abort();
	if (a.kind == 'f') {
		vpa_err_init(&err);
		if (vpa_check_finite_nd("fuzz.npy", NULL, a.data, a.itemsize, a.ndim, a.shape, &err))
			check_err(&err);
	}
	vpa_npy_nd_release(&a);
	return 0;
}
