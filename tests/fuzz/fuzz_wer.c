/*
 * tests/fuzz/fuzz_wer.c - the Kaldi `text` reader of vpa_wer_text on
 * arbitrary bytes, as reference and as hypothesis.  It must return 0 or a
 * one-line error and never crash or leak; a file scored against itself has
 * WER 0 (also normalised, as the VPC scores); each reference word is
 * deleted, substituted or matched.  Replayed over tests/fuzz/corpus/wer/
 * by `make test`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audio/anon.h"

static void check(const struct vpa_err *err, int rc)
{
	if (rc && (err->status == 0 || err->msg[0] == 0 || strchr(err->msg, '\n')))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char ref[] = "u1 a b c\nu2 d e\n";
	struct vpa_wer w;
	struct vpa_err err;
	const char *s = (const char *)data;

	vpa_err_init(&err);
	int rc = vpa_wer_text("text", s, size, "text", s, size, &w, &err);
	check(&err, rc);
	if (rc == 0 && (w.ins || w.del || w.sub || w.wer != 0))
		abort();
	vpa_err_init(&err);
	rc = vpa_wer_text("ref", ref, sizeof ref - 1, "hyp", s, size, &w, &err);
	check(&err, rc);
	if (rc == 0 && !(w.wer >= 0 && w.ref_words == 5))
		abort();
	vpa_err_init(&err);
	check(&err, vpa_wer_text("ref", s, size, "hyp", ref, sizeof ref - 1, &w, &err));
	/* the VPC's scoring (words normalised, a missing hypothesis as deletions):
	 * a file against itself is still WER 0 with nothing absent; against the
	 * fixed reference del + sub <= its 5 words */
	struct vpa_wer_opts o;
	vpa_wer_opts_init(&o);
	vpa_err_init(&err);
	rc = vpa_wer_text_opts("text", s, size, "text", s, size, &o, &w, &err);
	check(&err, rc);
	if (rc == 0 && (w.ins || w.del || w.sub || w.wer != 0 || w.n_absent))
		abort();
	vpa_err_init(&err);
	rc = vpa_wer_text_opts("ref", ref, sizeof ref - 1, "hyp", s, size, &o, &w, &err);
	check(&err, rc);
	if (rc == 0 && !(w.ref_words == 5 && w.n_utt == 2 && w.n_absent <= 2 && w.del + w.sub <= 5))
		abort();
	return 0;
}
