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
	struct vpa_err e;
	vpa_err_init(&e);
	vpa_ctc_opts_set(o, "delimiter", r->delimiter, &e); /* its names; cannot fail */
	o->input = r->features ? VPA_CTC_FEATURES : VPA_CTC_WAVEFORM;
	o->layout = r->bft ? VPA_CTC_BFT : VPA_CTC_BTF;
	o->wave_norm = r->wave_norm;
	o->resample = 1; /* as PocketSphinx's 16 kHz: another rate is resampled, and counted */
	o->threads = r->threads > 0 ? r->threads : 1;
}

struct vpa_anon_ctc {
	struct vpa_ctc_opts o;
	struct vpa_ctc *ctc;
};

int vpa_anon_ctc_open(const struct vpa_anon_ctc_req *r, struct vpa_anon_ctc **out,
		      struct vpa_err *err)
{
	struct vpa_anon_ctc *c = xcalloc(1, sizeof(*c));
	opts_of(r, &c->o);
	int rc = vpa_ctc_new(&c->o, &c->ctc, err);
	if (rc) {
		free(c);
		c = NULL;
	}
	*out = c;
	return rc;
}

void vpa_anon_ctc_close(struct vpa_anon_ctc *c)
{
	if (!c)
		return;
	vpa_ctc_free(c->ctc);
	free(c);
}

double vpa_anon_ctc_rate(const struct vpa_anon_ctc *c)
{
	return vpa_ctc_rate(c->ctc, &c->o);
}

int vpa_anon_ctc_run(const struct vpa_anon_ctc *c, struct vpa_datadir *d, char ***hyps,
		     struct vpa_err *err)
{
	vpa_datadir_set_rate(d, vpa_anon_ctc_rate(c), VPA_ALLOW_DOWN | VPA_ALLOW_UP, 0);
	return vpa_ctc_transcribe_dd(c->ctc, &c->o, d, hyps, err);
}
