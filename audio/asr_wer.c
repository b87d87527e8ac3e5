/*
 * audio/asr_wer.c - WER of in-memory hypotheses for the recogniser's callers
 * in targets/ (audio/asr.h), which cannot include audio/anon.h next to
 * targets/anon.h (both name a struct vpa_anon_opts): audio/wer.c's scoring,
 * unchanged.
 */
#include <string.h>

#include "audio/anon.h"
#include "audio/asr.h"

int vpa_asr_wer_text(const char *ref_name, const char *ref, size_t ref_len, const char *hyp_name,
		     const char *hyp, size_t hyp_len, const char *norm, int strict,
		     struct vpa_asr_wer *out, struct vpa_err *err)
{
	struct vpa_wer_opts o;
	vpa_wer_opts_init(&o);
	if (vpa_wer_norm_parse(norm, &o))
		VPA_BUG("WER normalisation '%s' passed the scenario's choices", norm);
	o.strict = strict;
	struct vpa_wer w;
	memset(&w, 0, sizeof(w));
	int rc = vpa_wer_text_opts(ref_name, ref, ref_len, hyp_name, hyp, hyp_len, &o, &w, err);
	if (rc)
		return rc;
	out->wer = w.wer;
	out->ref_words = w.ref_words;
	out->ins = w.ins;
	out->del = w.del;
	out->sub = w.sub;
	out->n_utt = w.n_utt;
	out->n_absent = w.n_absent;
	return 0;
}
