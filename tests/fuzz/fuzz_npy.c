/*
 * tests/fuzz/fuzz_npy.c - vpa_npy_parse on arbitrary bytes: no crash, no
 * leak; on success the shape is 1-D or 2-D and the data was all there.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *buf = malloc(size ? size : 1);
	if (size)
		memcpy(buf, data, size);
	struct vpa_npy a;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_npy_parse("fuzz.npy", buf, size, &a, &err) == 0) {
		if (a.ndim != 1 && a.ndim != 2)
			abort();
		size_t count = a.ndim == 1 ? a.shape[0] : a.shape[0] * a.shape[1];
		if (count * 4 > size)
			abort(); /* more elements than bytes could hold */
		volatile double sum = 0;
		for (size_t i = 0; i < count; i++)
			sum += a.data[i]; /* touch every element (ASan checks the bounds) */
		(void)sum;
		vpa_npy_release(&a);
	} else if (err.msg[0] == '\0' || strchr(err.msg, '\n') || a.data) {
		abort();
	}
	double *x;
	size_t n;
	vpa_err_init(&err);
	if (vpa_parse_score_list("fuzz.npy", (const char *)buf, size, &x, &n, &err) == 0)
		free(x);
	free(buf);
	return 0;
}
