/*
 * tests/fuzz/fuzz_kaldi.c - the Kaldi archive parser (every mode), the list
 * and trials readers and the PLDA model reader on arbitrary bytes.  They
 * must return 0 or an error with a one-line message, never crash or leak.
 * Replayed over tests/fuzz/corpus/kaldi/ by `make test`; `make fuzz` builds
 * the libFuzzer binary.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "formats/kaldi.h"
#include "learn/plda.h"

static void check_err(const struct vpa_err *err, int rc)
{
	if (rc == 0)
		return;
	/* An error always has a message, on one line. */
	if (err->status == 0 || err->msg[0] == 0 || strchr(err->msg, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vpa_err err;
	for (int mode = VPA_KALDI_ANY; mode <= VPA_KALDI_MATRICES; mode++) {
		struct vpa_kaldi_ark a;
		vpa_kaldi_ark_init(&a);
		vpa_err_init(&err);
		int rc = vpa_kaldi_parse("fuzz.ark", data, size, mode, &a, &err);
		check_err(&err, rc);
		if (rc == 0) {
			/* Entries tile the value buffer. */
			size_t off = 0;
			for (size_t i = 0; i < a.n; i++) {
				if (a.e[i].off != off)
					abort();
				off += a.e[i].rows * a.e[i].cols;
			}
			if (off != a.n_data)
				abort();
		}
		vpa_kaldi_ark_release(&a);
	}
	struct vpa_kaldi_list l;
	for (size_t nc = 0; nc <= 2; nc++) {
		vpa_kaldi_list_init(&l);
		vpa_err_init(&err);
		check_err(&err, vpa_kaldi_parse_list("fuzz.list", (const char *)data, size, nc, &l, &err));
		vpa_kaldi_list_release(&l);
	}
	struct vpa_kaldi_trials t;
	vpa_kaldi_trials_init(&t);
	vpa_err_init(&err);
	check_err(&err, vpa_kaldi_parse_trials("fuzz.trials", (const char *)data, size, &t, &err));
	vpa_kaldi_trials_release(&t);
	vpa_err_init(&err);
	struct vpa_plda *p = vpa_plda_parse("fuzz.plda", data, size, &err);
	check_err(&err, p ? 0 : -1);
	vpa_plda_free(p);
	return 0;
}
