/*
 * tests/fuzz/fuzz_scores.c - vpa_parse_scores and vpa_parse_score_list on
 * arbitrary bytes: no crash, no leak, and on success the invariants hold
 * (at least one trial, finite scores, id indices in range).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy, so that reading past the end is caught */
	char *buf = malloc(size ? size : 1);
	if (size)
		memcpy(buf, data, size);
	struct vpa_trials t;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_parse_scores("fuzz.txt", buf, size, &t, &err) == 0) {
		if (t.n_tar + t.n_non == 0)
			abort();
		for (size_t i = 0; i < t.n_tar; i++)
			if (!isfinite(t.tar[i]))
				abort();
		for (size_t i = 0; i < t.n_non; i++)
			if (!isfinite(t.non[i]))
				abort();
		if (t.ids_e) {
			for (size_t i = 0; i < t.n_tar; i++)
				if (t.tar_e[i] >= t.n_ids_e || t.tar_t[i] >= t.n_ids_t)
					abort();
			for (size_t i = 0; i < t.n_non; i++)
				if (t.non_e[i] >= t.n_ids_e || t.non_t[i] >= t.n_ids_t)
					abort();
		}
		vpa_trials_release(&t);
	} else if (err.msg[0] == '\0' || strchr(err.msg, '\n')) {
		abort(); /* every error is one non-empty line */
	}
	double *x;
	size_t n;
	vpa_err_init(&err);
	if (vpa_parse_score_list("fuzz.txt", buf, size, &x, &n, &err) == 0) {
		if (n == 0)
			abort();
		for (size_t i = 0; i < n; i++)
			if (!isfinite(x[i]))
				abort();
		free(x);
	}
	/* the number parser on the raw bytes agrees with itself at every offset */
	for (size_t i = 0; i < size && i < 64; i++) {
		double v;
		const char *e = vpa_parse_double(buf + i, buf + size, &v);
		if (e && (e <= buf + i || e > buf + size || !isfinite(v)))
			abort();
	}
	free(buf);
	return 0;
}
