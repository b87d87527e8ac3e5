/*
 * targets/anon_asr_ctc.c - `asr: {recogniser: onnx}` on asr/ctc.h (see the
 * header for why a file of its own).
 */
#include <stdlib.h>
#include <string.h>

#include "asr/ctc.h"
#include "targets/anon_asr_ctc.h"

static void opts_of(const struct vpa_anon_ctc_req *r, struct vpa_ctc_opts *o)
{
	vpa_ctc_opts_init(o);
	o->model = r->model;
	o->tokens = r->tokens;
	o->blank = r->blank;
	o->delimiter = !strcmp(r->delimiter, "sentencepiece") ? "\xe2\x96\x81"
		       : !strcmp(r->delimiter, "none")        ? ""
							      : r->delimiter;
	o->input = r->features ? VPA_CTC_FEATURES : VPA_CTC_WAVEFORM;
	o->layout = r->bft ? VPA_CTC_BFT : VPA_CTC_BTF;
	o->wave_norm = r->wave_norm;
	o->resample = 1; /* as PocketSphinx's 16 kHz: another rate is resampled, and counted */
	o->threads = r->threads > 0 ? r->threads : 1;
}

int vpa_anon_ctc_check(const struct vpa_anon_ctc_req *r, struct vpa_err *err)
{
	struct vpa_ctc_opts o;
	opts_of(r, &o);
	struct vpa_ctc *c = NULL;
	int rc = vpa_ctc_new(&o, &c, err);
	vpa_ctc_free(c);
	return rc;
}

int vpa_anon_ctc_run(const struct vpa_anon_ctc_req *r, struct vpa_datadir *d, char ***hyps,
		     double *rate, struct vpa_err *err)
{
	struct vpa_ctc_opts o;
	opts_of(r, &o);
	struct vpa_ctc *c = NULL;
	int rc = vpa_ctc_new(&o, &c, err);
	if (!rc) {
		*rate = vpa_ctc_rate(c, &o);
		vpa_datadir_set_rate(d, *rate, VPA_ALLOW_DOWN | VPA_ALLOW_UP, 0);
		rc = vpa_ctc_transcribe_dd(c, &o, d, hyps, err);
	}
	vpa_ctc_free(c);
	return rc;
}
