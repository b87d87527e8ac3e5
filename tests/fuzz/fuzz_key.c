/*
 * tests/fuzz/fuzz_key.c - vpa_parse_scores_key on arbitrary bytes: the input
 * is the scores file, a line "====", then the key (no separator: empty key).
 * On success every trial is in range and the counts add up.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *sep = memmem(data, size, "\n====\n", 6);
	size_t slen = sep ? (size_t)(sep - (const char *)data) + 1 : size;
	size_t kpos = sep ? slen + 5 : size;
	char *s = malloc(slen ? slen : 1), *k = malloc(size - kpos ? size - kpos : 1);
	memcpy(s, data, slen);
	memcpy(k, data + kpos, size - kpos);
	struct vpa_trials t;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_parse_scores_key("s.txt", s, slen, "k.txt", k, size - kpos, &t, &err) == 0) {
		if (t.n_tar + t.n_non == 0)
			abort();
		for (size_t i = 0; i < t.n_tar; i++)
			if (!isfinite(t.tar[i]) || t.tar_e[i] >= t.n_ids_e || t.tar_t[i] >= t.n_ids_t)
				abort();
		for (size_t i = 0; i < t.n_non; i++)
			if (!isfinite(t.non[i]) || t.non_e[i] >= t.n_ids_e || t.non_t[i] >= t.n_ids_t)
				abort();
		vpa_trials_release(&t);
	} else if (err.msg[0] == '\0' || strchr(err.msg, '\n')) {
		abort();
	}
	free(s);
	free(k);
	return 0;
}
