/*
 * targets/anon_extractor_io.c - ASV_eval / ASV_eval^anon saved and reused
 * (`extractor: {from, from_anon, save}`).  See anon_extractor_io.h.
 */
#include "targets/anon_extractor_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dist.h"

static const char *const who[2] = {"ASV_eval", "ASV_eval^anon"};
static const char *const role[2] = {"asv_eval", "asv_eval_anon"};

/* The keys a saved extractor fixes.  `apply`: 0 always, 1 x-vector only, 2
 * ECAPA only (a size of the other architecture is not the saved net's). */
enum { F_FEATURES, F_MEL, F_CMVN, F_VAD, F_ARCH, F_HIDDEN, F_CHANNELS, F_SCALE, F_EMB, F_N };
static const char *const fname[F_N] = {"features", "num_mel_bins", "cmvn",     "vad",    "architecture",
				       "hidden",   "channels",     "res2_scale", "emb_dim"};
static const int fapply[F_N] = {0, 0, 0, 0, 0, 1, 2, 2, 0};

static struct vpa_mark opt_mark(const struct vpa_anon_extractor_opts *o, int f)
{
	const struct vpa_mark m[F_N] = {o->features_at, o->num_mel_bins_at, o->cmvn_at,
					o->vad_at,      o->architecture_at, o->hidden_at,
					o->channels_at, o->res2_scale_at,   o->emb_dim_at};
	return m[f];
}

/* the value of key f in the options, as YAML text */
static void opt_text(const struct vpa_anon_extractor_opts *o, int f, char *b, size_t sz)
{
	switch (f) {
	case F_FEATURES: snprintf(b, sz, "%s", o->features); break;
	case F_MEL: snprintf(b, sz, "%lld", o->num_mel_bins); break;
	case F_CMVN: snprintf(b, sz, "%s", o->cmvn); break;
	case F_VAD: snprintf(b, sz, "%s", o->vad ? "true" : "false"); break;
	case F_ARCH: snprintf(b, sz, "%s", o->architecture); break;
	case F_HIDDEN: snprintf(b, sz, "%lld", o->hidden); break;
	case F_CHANNELS: snprintf(b, sz, "%lld", o->channels); break;
	case F_SCALE: snprintf(b, sz, "%lld", o->res2_scale); break;
	default: snprintf(b, sz, "%lld", o->emb_dim); break;
	}
}

/* the same key of a saved extractor */
static void meta_text(const struct vpa_xvec_meta *m, int f, char *b, size_t sz)
{
	switch (f) {
	case F_FEATURES: snprintf(b, sz, "%s", m->features); break;
	case F_MEL: snprintf(b, sz, "%ld", m->num_mel_bins); break;
	case F_CMVN: snprintf(b, sz, "%s", m->cmvn); break;
	case F_VAD: snprintf(b, sz, "%s", m->vad ? "true" : "false"); break;
	case F_ARCH: snprintf(b, sz, "%s", vpa_xvec_arch_name(m->arch)); break;
	case F_HIDDEN: snprintf(b, sz, "%zu", m->hidden); break;
	case F_CHANNELS: snprintf(b, sz, "%zu", m->ecapa.channels); break;
	case F_SCALE: snprintf(b, sz, "%zu", m->ecapa.scale); break;
	default: snprintf(b, sz, "%zu", m->emb_dim); break;
	}
}

/* take the saved value of key f into the options (strings: the static names) */
static void adopt(struct vpa_anon_extractor_opts *o, const struct vpa_xvec_meta *m, int f)
{
	switch (f) {
	case F_FEATURES: o->features = !strcmp(m->features, "mfcc") ? "mfcc" : "fbank"; break;
	case F_MEL: o->num_mel_bins = m->num_mel_bins; break;
	case F_CMVN: o->cmvn = !strcmp(m->cmvn, "none") ? "none" : "utt"; break;
	case F_VAD: o->vad = m->vad; break;
	case F_ARCH: o->architecture = m->arch == VPA_XVEC_ECAPA ? "ecapa" : "xvector"; break;
	case F_HIDDEN: o->hidden = (long long)m->hidden; break;
	case F_CHANNELS: o->channels = (long long)m->ecapa.channels; break;
	case F_SCALE: o->res2_scale = (long long)m->ecapa.scale; break;
	default: o->emb_dim = (long long)m->emb_dim; break;
	}
}

/* an error of a lower layer (its own place inside the saved folder) put at the
 * scenario's `from` value: one line, both places */
static int at_key(const char *file, struct vpa_mark m, const char *key, struct vpa_err *err)
{
	char msg[sizeof(err->msg)];
	snprintf(msg, sizeof(msg), "%s", err->msg);
	vpa_err_init(err);
	struct vpa_loc loc = vpa_mark_loc(file, m);
	return vpa_fail(err, VPA_EINPUT, &loc, "`%s`: %s", key, msg);
}

int vpa_anon_extractor_resolve(const char *file, const char *dir,
			       const struct vpa_anon_extractor_opts *ex, const int onnx_given[2],
			       struct vpa_anon_extractor_opts *out, struct vpa_xvec_meta meta[2],
			       int have[2], struct vpa_err *err)
{
	*out = *ex;
	const char *from[2] = {ex->from, ex->from_anon};
	const struct vpa_mark from_at[2] = {ex->from_at, ex->from_anon_at};
	static const char *const key[2] = {"from", "from_anon"};
	static const char *const okey[2] = {"onnx", "onnx_anon"};
	int set_by[F_N]; /* -1: the scenario's value (written or default); k: from saved k */
	for (int f = 0; f < F_N; f++)
		set_by[f] = -1;
	for (int k = 0; k < 2; k++) {
		have[k] = 0;
		vpa_xvec_meta_init(&meta[k]);
		if (!from[k])
			continue;
		if (onnx_given[k]) {
			struct vpa_loc loc = vpa_mark_key_loc(file, from_at[k]);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`%s` and `%s` both give %s: keep one", key[k], okey[k], who[k]);
		}
		char *p = vpa_path_join(dir, from[k]);
		int rc = vpa_xvec_meta_read(p, &meta[k], err);
		free(p);
		if (rc)
			return at_key(file, from_at[k], key[k], err);
		const struct vpa_xvec_meta *m = &meta[k];
		if (strcmp(m->role, role[k])) {
			struct vpa_loc loc = vpa_mark_loc(file, from_at[k]);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`%s` expects a saved %s, '%s' holds %s (role: %s): swap `from` "
					"and `from_anon`?",
					key[k], who[k], from[k], who[!k], m->role);
		}
		have[k] = 1;
		for (int f = 0; f < F_N; f++) {
			if (fapply[f] && fapply[f] != (m->arch == VPA_XVEC_ECAPA ? 2 : 1))
				continue;
			struct vpa_mark w = opt_mark(ex, f);
			char mine[64], saved[64];
			opt_text(out, f, mine, sizeof(mine));
			meta_text(m, f, saved, sizeof(saved));
			if (!w.line && set_by[f] < 0) {
				adopt(out, m, f);
				set_by[f] = k;
				continue;
			}
			if (!strcmp(mine, saved))
				continue;
			if (w.line) {
				struct vpa_loc loc = vpa_mark_loc(file, w);
				return vpa_fail(err, VPA_EINPUT, &loc,
						"`%s: %s` differs from the saved %s's %s (%s/extractor.yaml): "
						"the front-end and sizes travel with a saved extractor; remove "
						"the key or write %s",
						fname[f], mine, who[k], saved, from[k], saved);
			}
			/* both from the saved extractors: one front-end embeds every set */
			struct vpa_loc loc = vpa_mark_loc(file, from_at[k]);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"the saved %s has `%s: %s` and the saved %s (`from`) `%s: %s`: "
					"both must share the front-end and sizes",
					who[k], fname[f], saved, who[set_by[f]], fname[f], mine);
		}
	}
	if (have[0] && have[1] &&
	    (meta[0].sample_frequency != meta[1].sample_frequency ||
	     meta[0].frame_length != meta[1].frame_length ||
	     meta[0].frame_shift != meta[1].frame_shift || meta[0].input_dim != meta[1].input_dim)) {
		struct vpa_loc loc = vpa_mark_loc(file, from_at[1]);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"the saved ASV_eval^anon reads %g Hz, %g/%g ms frames, %zu features and "
				"the saved ASV_eval %g Hz, %g/%g ms, %zu: both must share the front-end",
				meta[1].sample_frequency, meta[1].frame_length, meta[1].frame_shift,
				meta[1].input_dim, meta[0].sample_frequency, meta[0].frame_length,
				meta[0].frame_shift, meta[0].input_dim);
	}
	return 0;
}

int vpa_anon_extractor_load(const char *file, const char *dir,
			    const struct vpa_anon_extractor_opts *ex, int k, size_t feat_dim,
			    struct vpa_xvec *x, struct vpa_xvec_meta *m, struct vpa_err *err)
{
	static const char *const key[2] = {"from", "from_anon"};
	const struct vpa_mark at = k ? ex->from_anon_at : ex->from_at;
	char *p = vpa_path_join(dir, k ? ex->from_anon : ex->from);
	int rc = vpa_xvec_load(p, x, m, err);
	if (rc) {
		free(p);
		return at_key(file, at, key[k], err);
	}
	if (vpa_xvec_input_dim(x) != feat_dim) {
		/* the front-end in effect is the saved one (resolve): only a hand-edited
		 * extractor.yaml gets here */
		vpa_xvec_release(x);
		struct vpa_loc loc = vpa_mark_loc(file, at);
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "`%s`: %s takes %zu-dimensional features, its front-end makes %zu", key[k],
			      p, m->input_dim, feat_dim);
	}
	free(p);
	return rc;
}

int vpa_anon_extractor_save(const struct vpa_anon_extractor_opts *ex, struct vpa_xvec x[2],
			    const struct vpa_xvec_meta meta[2], struct vpa_err *err)
{
	if (!ex->save || vpa_dist_rank() != 0)
		return 0;
	int rc = vpa_mkdirs(ex->save, err);
	for (int k = 0; k < 2 && rc == 0; k++) {
		if (!vpa_xvec_trained(&x[k]))
			continue;
		char *d = vpa_path_join(ex->save, role[k]);
		struct vpa_xvec_meta m = meta[k];
		snprintf(m.role, sizeof(m.role), "%s", role[k]);
		rc = vpa_xvec_save(&x[k], &m, d, err);
		/* also as ONNX, for `vpaudit embed` and other tools */
		if (!rc) {
			char *op = vpa_path_join(d, "model.onnx");
			rc = vpa_anon_extractor_onnx(&x[k], &m, op, err);
			free(op);
		}
		free(d);
	}
	return rc;
}
