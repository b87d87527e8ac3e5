/*
 * tests/fuzz/fuzz_ali.c - vpa_kaldi_parse_ali on arbitrary bytes.  On success
 * every utterance has at least one label, the offsets grow, the ids are
 * unique and each is found by vpa_kaldi_ali_find; on failure the message is
 * one line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/kaldi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vpa_kaldi_ali a;
	struct vpa_err err;
	vpa_kaldi_ali_init(&a);
	vpa_err_init(&err);
	if (vpa_kaldi_parse_ali("ali.txt", (const char *)data, size, &a, &err) == 0) {
		if (a.n == 0 || a.off[0] != 0)
			abort();
		for (size_t i = 0; i < a.n; i++) {
			if (a.off[i + 1] <= a.off[i] || vpa_kaldi_ali_find(&a, a.utt[i]) != i)
				abort();
			for (size_t k = a.off[i]; k < a.off[i + 1]; k++)
				if (a.lab[k] > INT32_MAX)
					abort();
		}
		vpa_kaldi_ali_release(&a);
	} else if (err.msg[0] == '\0' || strchr(err.msg, '\n')) {
		abort();
	}
	return 0;
}
