/*
 * tests/fuzz/fuzz_arpa.c - vpa_arpa_parse on arbitrary bytes: no crash, no
 * leak, one-line errors; a parsed model scores a few sentences to finite
 * values and survives a write/parse round trip.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/arpa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	if (size)
		memcpy(buf, data, size);
	struct vpa_arpa *m = NULL, *m2 = NULL;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_arpa_parse("fuzz.arpa", buf, size, &m, &err) == 0) {
		const char *w[] = {"a", "b", "<unk>", "zz", "</s>", "the"};
		for (size_t n = 0; n <= 6; n++) {
			double lp = vpa_arpa_sentence(m, w, n, NULL);
			/* back-off weights may be positive, so lp may be too; values are
			 * bounded by the parser, so sums stay finite (or -inf for a word
			 * without unigram, impossible from a file) */
			if (!isfinite(lp) || fabs(lp) > 1000.0 * 2 * 17 * (double)(n + 1))
				abort();
		}
		struct vpa_buf b;
		vpa_buf_init(&b);
		vpa_arpa_write(m, &b);
		if (vpa_arpa_parse("w.arpa", b.data, b.len, &m2, &err) != 0)
			abort(); /* what we write we must read */
		vpa_buf_release(&b);
		vpa_arpa_free(m2);
		vpa_arpa_free(m);
	} else if (err.msg[0] == '\0' || strchr(err.msg, '\n') || m) {
		abort();
	}
	free(buf);
	return 0;
}
