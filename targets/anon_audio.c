/*
 * targets/anon_audio.c - `source: audio` of the target kind
 * `anonymised_speech` (issue 17): Kaldi data directories of original audio
 * (the attacker's training set, enrolment, trials) and of their anonymised
 * versions (one directory per set, the user's anonymiser output), turned into
 * the embedding sets the existing attacks read by extractors trained in C
 * (audio/xvector.h) on the attacker's training audio:
 *
 *   ASV_eval       trained on `train`; embeds train, enroll, trial (baseline,
 *                  ignorant) and enroll_anon, trial_anon (lazy-informed);
 *   ASV_eval^anon  trained on `train_anon` (VPC 2022/2024 eval_post), from
 *                  scratch or fine-tuned from ASV_eval (`semi_informed:
 *                  finetune`); embeds train_anon, enroll_anon, trial_anon for
 *                  the semi-informed attacker (its back-end is trained on
 *                  train_anon embedded the same way).
 *
 * Why a source of `anonymised_speech` and not a new kind: every attack of that
 * kind (linkage with its five attackers and G_VD, identification, the gates
 * and reports) then works unchanged on audio; only the way the embedding sets
 * are made differs.
 *
 * This file holds the cross-key checks of the `audio:` keys (the keys
 * themselves: anon_audio_keys.c) and the build;
 * the kind (anon_speech.c) and the import file (anon_import.c: the sets'
 * alignment and trials after the build) call it, it calls the ONNX extractor
 * (anon_onnx.c) and never back up (targets/anon_build.h).
 */
#include "audio/xvector.h"
#include "base/dist.h"
#include "base/inputs.h"
#include "targets/anon.h"
#include "targets/anon_extractor_io.h"
#include "targets/anon_informed.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define INF INFINITY
/* `anonymise: {low, high}` in the range of the method's coefficient (given
 * for pitch), low <= high; an: the mapping, written at an_at */
static int anon_range(const struct vpa_kind_ctx *ctx, const struct vpa_anon_anonymise_opts *an,
		      struct vpa_mark an_at, struct vpa_err *err)
{
	if (!an_at.line)
		return 0;
	const char *m = an->method;
	static const char *const key[2] = {"low", "high"};
	const struct vpa_mark at[2] = {an->low_at, an->high_at};
	double v[2] = {an->low, an->high};
	for (int k = 0; k < 2; k++) {
		const char *want = NULL;
		if (!strcmp(m, "mcadams") && !(v[k] > 0 && v[k] <= 2))
			want = "a McAdams alpha in (0, 2]";
		else if (!strcmp(m, "warp") && !(v[k] > -1 && v[k] < 1))
			want = "a warping alpha in (-1, 1)";
		if (want) {
			struct vpa_loc loc = vpa_mark_loc(ctx->file, at[k].line ? at[k] : an_at);
			return vpa_fail(err, VPA_EINPUT, &loc, "'%s' of method %s must be %s, got %g",
					key[k], m, want, v[k]);
		}
	}
	if (!strcmp(m, "pitch") && !(an->low_at.line && an->high_at.line)) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, an_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"method pitch needs 'low' and 'high' (the shift range in semitones; the "
				"defaults 0.5, 0.9 are McAdams alphas)");
	}
	if (!(v[0] <= v[1])) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, an->low_at.line ? an->low_at : an_at);
		return vpa_fail(err, VPA_EINPUT, &loc, "'low' %g is above 'high' %g", v[0], v[1]);
	}
	return 0;
}

/*
 * Every recording of the data directories a run reads opened at its header
 * (audio/audio.h, vpa_datadir_probe: exists, readable, samples, rate,
 * channel, segments), so that a run never fails at once on what validate
 * passed.  Every directory is embedded by ASV_eval (want[0]); the anonymised
 * ones and the informed enrolment by ASV_eval^anon too (want[1] when it is
 * an ONNX model).  Errors name the wav.scp line.
 */
static int probe_dirs(const struct vpa_kind_ctx *ctx, const struct vpa_anon_audio_opts *au,
		      const double want[2], struct vpa_err *err)
{
	const char *one[5] = {au->train, au->enroll, au->train_anon, au->enroll_anon,
			      au->enroll_informed};
	const struct vpa_strs *many[2] = {&au->trial, &au->trial_anon};
	for (int k = 0; k < 7; k++) {
		int anon = k == 2 || k == 3 || k == 4 || k == 6;
		size_t n = k < 5 ? one[k] != NULL : many[k - 5]->n;
		for (size_t j = 0; j < n; j++) {
			const char *rel = k < 5 ? one[k] : many[k - 5]->v[j];
			char *p = vpa_path_join(ctx->dir, rel);
			int rc = vpa_datadir_check_audio(p, want[0], err);
			if (!rc && anon && want[1] > 0 && want[1] != want[0])
				rc = vpa_datadir_check_audio(p, want[1], err);
			free(p);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int vpa_anon_audio_validate(const struct vpa_kind_ctx *ctx, const struct vpa_anon_audio_opts *au,
			    struct vpa_err *err)
{
	const struct vpa_anon_onnx_opts *ok[2] = {&au->onnx, &au->onnx_anon};
	const struct vpa_mark ok_at[2] = {au->onnx_at, au->onnx_anon_at};
	int arc = vpa_anon_asr_validate(ctx, au, err);
	if (arc)
		return arc;
	/* the rate each extractor's front-end reads: the C-trained one's fbank/MFCC
	 * at the feature default, else the ONNX model's front-end */
	struct vpa_feat_opts fo;
	vpa_feat_opts_init(&fo, VPA_FEAT_FBANK);
	double want[2] = {fo.sample_frequency, 0};
	for (int k = 0; k < 2; k++) {
		if (!ok_at[k].line)
			continue;
		struct vpa_embed_opts o;
		struct vpa_embedder *e;
		if (vpa_anon_onnx_new(ctx->file, ctx->dir, ok[k], 1, &o, &e, err))
			return err->status;
		want[k] = o.feat.sample_frequency;
		vpa_embedder_free(e);
	}
	if (probe_dirs(ctx, au, want, err))
		return err->status;
	if (au->ser_at.line && vpa_anon_ser_validate(ctx, &au->ser, au->ser_at, err))
		return err->status;
	if (anon_range(ctx, &au->anonymise, au->anonymise_at, err))
		return err->status;
	struct vpa_anon_extractor_opts exr; /* saved extractors' keys taken (issue 31.9) */
	{
		struct vpa_xvec_meta meta[2];
		int have[2], og[2] = {au->onnx_at.line != 0, au->onnx_anon_at.line != 0};
		if (vpa_anon_extractor_resolve(ctx->file, ctx->dir, &au->extractor, og, &exr, meta,
					       have, err))
			return err->status;
	}
	const struct vpa_anon_extractor_opts *ex = &exr;
	if (!strcmp(ex->architecture, "ecapa")) {
		long long c = ex->channels;
		long long sc = ex->res2_scale;
		if (c % sc) {
			struct vpa_loc loc = vpa_mark_loc(ctx->file, ex->channels_at.line
									? ex->channels_at
									: ex->res2_scale_at);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"ECAPA-TDNN `channels` (%lld) must be a multiple of `res2_scale` "
					"(%lld)", c, sc);
		}
	}
	/* both extractors given: nothing is trained in C, so an `extractor:` would be read and
	 * ignored (issue 31.12) */
	if (au->onnx_at.line && au->onnx_anon_at.line && au->extractor_at.line) {
		struct vpa_loc loc = vpa_mark_key_loc(ctx->file, au->extractor_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"`extractor` configures the extractors vpaudit trains in C, but `onnx` "
				"and `onnx_anon` give both ASV_eval and ASV_eval^anon: remove "
				"`extractor` (or one of them)");
	}
	if (au->onnx_at.line && !au->onnx_anon_at.line && !strcmp(ex->semi_informed, "finetune")) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, ex->semi_informed_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"`semi_informed: finetune` fine-tunes the ASV_eval vpaudit trains in C, "
				"and `onnx` replaces it: use `retrain` (ASV_eval^anon trained in C from "
				"scratch) or give ASV_eval^anon as `onnx_anon`");
	}
	return 0;
}

static int has_trials(const char *dir, const char *d)
{
	char *p = vpa_path_join(dir, d);
	char *t = vpa_xvec_join(p, "trials");
	int ok = access(t, F_OK) == 0;
	free(t);
	free(p);
	return ok;
}

/* (a key written as one path or a list: its items; not written: none) */
int vpa_anon_audio_validate_lists(const struct vpa_kind_ctx *ctx,
				  const struct vpa_anon_audio_opts *au, struct vpa_err *err)
{
	const struct vpa_strs *tr = &au->trial, *ta = &au->trial_anon;
	size_t nt = tr->n, na = ta->n;
	if (tr->given && ta->given && nt != na) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, au->trial_anon_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"`trial_anon` has %zu data director%s and `trial` %zu: one anonymised "
				"directory per trial directory, in the same order", na,
				na == 1 ? "y" : "ies", nt);
	}
	static const char *const hk[2] = {"hyp", "hyp_anon"};
	const struct vpa_strs *hv[2] = {&au->hyp, &au->hyp_anon};
	const struct vpa_mark h_at[2] = {au->hyp_at, au->hyp_anon_at};
	for (int h = 0; h < 2; h++) {
		const struct vpa_strs *v = hv[h];
		size_t want = nt ? nt : 1;
		if (v->given && v->n != want && !tr->given) {
			struct vpa_loc loc = vpa_mark_loc(ctx->file, h_at[h]);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`%s` has %zu files: one hypothesis file for the one trial set",
					hk[h], v->n);
		}
		if (v->given && v->n != want) {
			struct vpa_loc loc = vpa_mark_loc(ctx->file, h_at[h]);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`%s` has %zu file%s and `trial` %zu data director%s: one "
					"hypothesis file per trial directory, in the same order", hk[h],
					v->n, v->n == 1 ? "" : "s", want, want == 1 ? "y" : "ies");
		}
	}
	if (nt > 1 && !au->trials.given) {
		size_t with = nt, without = nt;
		for (size_t i = 0; i < nt; i++) {
			if (has_trials(ctx->dir, tr->v[i]))
				with = with < nt ? with : i;
			else
				without = without < nt ? without : i;
		}
		if (with < nt && without < nt) {
			struct vpa_loc loc = vpa_mark_loc(ctx->file, tr->marks[without]);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"'%s' has no `trials` file and '%s' has one: give every trial "
					"directory its list, or the lists as `trials:`",
					tr->v[without], tr->v[with]);
		}
	}
	return 0;
}

char **vpa_anon_audio_trials_files(const char *dir, const struct vpa_anon_audio_opts *au,
				   size_t *n)
{
	const struct vpa_strs *v = &au->trials, *tr = &au->trial;
	*n = 0;
	if (v->given) {
		char **out = xmalloc(xmul(v->n, sizeof(char *)));
		for (size_t i = 0; i < v->n; i++)
			out[i] = xstrdup(v->v[i]);
		*n = v->n;
		return out;
	}
	if (!tr->seq || tr->n < 2 || !has_trials(dir, tr->v[0]))
		return NULL;
	char **out = xmalloc(xmul(tr->n, sizeof(char *)));
	for (size_t i = 0; i < tr->n; i++)
		out[i] = vpa_xvec_join(tr->v[i], "trials");
	*n = tr->n;
	return out;
}

void vpa_anon_audio_trials_files_free(char **files, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

/* Every set of the roles in order embedded by an ONNX extractor (dirs[i] NULL: skipped). */
static int onnx_sets(const struct vpa_embedder *e, const struct vpa_embed_opts *o,
		     char *const *dirs, struct vpa_embset *const *out, size_t n, struct vpa_err *err)
{
	for (size_t i = 0; i < n; i++)
		if (dirs[i]) {
			int rc = vpa_embset_from_audio_with(dirs[i], e, o, out[i], err);
			if (rc)
				return rc;
		}
	return 0;
}

struct role {
	const char *key;
	struct vpa_xvec_set set;
};

/*
 * Per-stage time (bench/vpc_audio.sh reads it): info.audio.timing.NAME =
 * {wall_secs, cpu_secs} (timing fields: reports/README.md), cpu_secs the
 * process's CPU time (all threads), added up when a stage runs more than once.
 */
struct stage_clock {
	double wall, cpu;
};
static double cpu_now(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static void stage_start(struct stage_clock *c)
{
	c->wall = vpa_now();
	c->cpu = cpu_now();
}
static void stage_stop(struct vpa_json *stages, const char *name, const struct stage_clock *c)
{
	double w = vpa_now() - c->wall, u = cpu_now() - c->cpu;
	struct vpa_json *o = vpa_json_get(stages, name);
	if (o) {
		w += vpa_json_get_num(o, "wall_secs", 0);
		u += vpa_json_get_num(o, "cpu_secs", 0);
	}
	o = vpa_json_obj();
	vpa_json_set_num(o, "wall_secs", w);
	vpa_json_set_num(o, "cpu_secs", u);
	vpa_json_set(stages, name, o);
}

/* The seconds of audio in DIR/utt2dur (0 when there is none). */
static double utt2dur_seconds(const char *dir)
{
	char *p = vpa_xvec_join(dir, "utt2dur");
	FILE *f = fopen(p, "r");
	free(p);
	double sum = 0, d;
	char id[512];
	if (!f)
		return 0;
	while (fscanf(f, "%511s %lf", id, &d) == 2)
		if (isfinite(d) && d > 0)
			sum += d;
	fclose(f);
	return sum;
}

/* `extractor: {save}`: the C extractors of this run written with their
 * front-end and training (issue 31.9); without `save` (and unless `autosave:
 * false`) the ones this run trained go to OUT/extractors in the run's output
 * folder; each saved ONNX copy listed in the info with its SHA-256;
 * `from`/`from_anon` named in the info */
static int anon_extractors_saved(const struct vpa_run_ctx *ctx,
				 const struct vpa_anon_extractor_opts *ex,
				 const struct vpa_feat_opts *fo,
				 const struct vpa_xvec_opts *xo, int finetune, const int have[2],
				 const struct vpa_xvec_meta meta[2], struct vpa_xvec *asv,
				 struct vpa_xvec *asv_anon, struct vpa_json *o, struct vpa_err *err)
{
	if (have[0])
		vpa_json_set_str(o, "asv_eval_from", ex->from);
	if (have[1])
		vpa_json_set_str(o, "asv_eval_anon_from", ex->from_anon);
	struct vpa_anon_extractor_opts ex2 = *ex;
	char *auto_dir = NULL;
	if (!ex->save && ex->autosave && ctx->out_dir && (!have[0] || !have[1]))
		ex2.save = auto_dir = vpa_path_join(ctx->out_dir, "extractors");
	if (!ex2.save)
		return 0;
	ex = &ex2;
	struct vpa_xvec x[2] = {*asv, *asv_anon}; /* borrowed */
	/* the automatic copy holds what this run trained, never a reused net (it
	 * may be read from that very folder) */
	if (auto_dir)
		for (int k = 0; k < 2; k++)
			if (have[k])
				memset(&x[k], 0, sizeof(x[k]));
	struct vpa_xvec_meta m[2];
	for (int k = 0; k < 2; k++) {
		if (have[k]) { /* reused: saved again as it was */
			m[k] = meta[k];
			continue;
		}
		vpa_xvec_meta_init(&m[k]);
		m[k].hidden = xo->hidden;
		snprintf(m[k].features, sizeof(m[k].features), "%s", ex->features);
		m[k].num_mel_bins = fo->num_mel_bins;
		m[k].num_ceps = fo->kind == VPA_FEAT_MFCC ? fo->num_ceps : 0;
		snprintf(m[k].cmvn, sizeof(m[k].cmvn), "%s", ex->cmvn);
		m[k].vad = fo->vad;
		m[k].sample_frequency = fo->sample_frequency;
		m[k].frame_length = fo->frame_length;
		m[k].frame_shift = fo->frame_shift;
		snprintf(m[k].loss, sizeof(m[k].loss), "%s", ex->loss);
		m[k].epochs = (long)xo->epochs;
		m[k].final_loss = x[k].final_loss;
		if (k)
			snprintf(m[k].semi_informed, sizeof(m[k].semi_informed), "%s",
				 finetune ? "finetune" : "retrain");
	}
	int rc = vpa_anon_extractor_save(ex, x, m, err);
	/* in the output folder: named relative to it (results.json is there), so the
	 * same run written to two folders records the same text */
	const char *shown = auto_dir ? "extractors" : ex->save;
	if (!rc)
		vpa_json_set_str(o, "extractors_saved", shown);
	/* the saved ONNX copies and their content, as the provenance of written files
	 * (rank 0 wrote them; its results are the ones written) */
	struct vpa_json *files = vpa_json_arr();
	static const char *const roles[2] = {"asv_eval", "asv_eval_anon"};
	for (int k = 0; k < 2 && !rc; k++) {
		if (!vpa_xvec_trained(&x[k]))
			continue;
		char *d = vpa_path_join(ex->save, roles[k]);
		char *onnx = vpa_path_join(d, "model.onnx");
		char *sd = vpa_path_join(shown, roles[k]);
		char *so = vpa_path_join(sd, "model.onnx");
		struct vpa_json *f = vpa_json_obj();
		vpa_json_set_str(f, "role", roles[k]);
		vpa_json_set_str(f, "folder", sd);
		vpa_json_set_str(f, "onnx", so);
		free(sd);
		free(so);
		if (vpa_dist_rank() == 0) {
			/* hashed with plain stdio: a file this run wrote is no input of it
			 * (vpa_read_file would list it among results.json's inputs) */
			FILE *fp = fopen(onnx, "rb");
			struct vpa_sha256_ctx hc;
			unsigned char buf[65536], dg[32];
			char hex[65];
			size_t got;
			vpa_sha256_init(&hc);
			while (fp && (got = fread(buf, 1, sizeof(buf), fp)) > 0)
				vpa_sha256_update(&hc, buf, got);
			if (!fp || ferror(fp)) {
				struct vpa_loc loc = {onnx, 0, 0};
				rc = vpa_fail(err, VPA_EIO, &loc, "cannot read the saved model back: %s",
					      strerror(errno));
			} else {
				vpa_sha256_final(&hc, dg);
				vpa_sha256_hex_of(dg, hex);
				vpa_json_set_str(f, "onnx_sha256", hex);
			}
			if (fp)
				fclose(fp);
		}
		vpa_json_push(files, f);
		free(onnx);
		free(d);
	}
	vpa_json_set(o, "extractors_saved_files", files);
	if (!rc && auto_dir)
		vpa_progress_note("extractors saved to %s (reuse them with `extractor: {from: "
				  "%s/asv_eval, from_anon: %s/asv_eval_anon}`)", auto_dir, auto_dir,
				  auto_dir);
	free(auto_dir);
	return rc;
}

int vpa_anon_build_audio(struct vpa_run_ctx *ctx, const struct vpa_anon_audio_opts *au,
			 struct vpa_target *t, struct vpa_anon_target *a, struct vpa_err *err)
{
	/* the keys in effect: a saved extractor's front-end and sizes (`from`, issue 31.9) */
	struct vpa_anon_extractor_opts exr;
	struct vpa_xvec_meta meta[2];
	int have[2];
	{
		int og[2] = {au->onnx_at.line != 0, au->onnx_anon_at.line != 0};
		int rc0 = vpa_anon_extractor_resolve(ctx->file, ctx->dir, &au->extractor, og, &exr,
						     meta, have, err);
		if (rc0)
			return rc0;
	}
	const struct vpa_anon_extractor_opts *ex = &exr;
	struct vpa_feat_opts fo;
	int mfcc = !strcmp(ex->features, "mfcc");
	vpa_feat_opts_init(&fo, mfcc ? VPA_FEAT_MFCC : VPA_FEAT_FBANK);
	fo.num_mel_bins = (int)ex->num_mel_bins;
	if (mfcc)
		fo.num_ceps = fo.num_mel_bins < 30 ? fo.num_mel_bins : 30;
	fo.cmvn = !strcmp(ex->cmvn, "none") ? VPA_CMVN_NONE : VPA_CMVN_UTT;
	fo.vad = ex->vad;
	struct vpa_feat *feat = vpa_feat_new(&fo, err);
	if (!feat)
		return err->status;
	struct vpa_xvec_opts xo;
	vpa_xvec_opts_init(&xo);
	xo.arch = !strcmp(ex->architecture, "ecapa") ? VPA_XVEC_ECAPA : VPA_XVEC_TDNN;
	xo.hidden = (size_t)ex->hidden;
	xo.channels = (size_t)ex->channels;
	xo.res2_scale = (size_t)ex->res2_scale;
	xo.emb_dim = (size_t)ex->emb_dim;
	xo.loss = !strcmp(ex->loss, "aam") ? VPA_XVEC_AAM : VPA_XVEC_SOFTMAX;
	xo.margin = ex->margin;
	xo.scale = ex->scale;
	xo.epochs = (int)ex->epochs;
	xo.batch = (size_t)ex->batch;
	xo.shards = (size_t)ex->shards;
	xo.chunk = (size_t)ex->chunk;
	xo.lr = ex->lr;
	xo.verbose = 1;
	xo.threads = ctx->threads; /* the weights do not depend on it (xvector.h) */
	{
		char name[300];
		struct vpa_rng r;
		snprintf(name, sizeof(name), "target/%s/extractor", t->id);
		vpa_rng_split(&r, ctx->seed, name);
		xo.seed = vpa_rng_u64(&r);
	}
	int finetune = !strcmp(ex->semi_informed, "finetune");
	/* the maps written (their options hold the defaults either way) */
	const struct vpa_anon_synth_opts *sy = au->synthetic_at.line ? &au->synthetic : NULL;
	const struct vpa_anon_anonymise_opts *an = au->anonymise_at.line ? &au->anonymise : NULL;
	int utt_level = !strcmp(au->level, "anon_level_utt");
	char *tmp = NULL;
	char *paths[7] = {NULL};
	enum { TR, TRA, EN, ENA, TI, TIA, ENI, NR };
	struct role R[NR] = {{"train", {0}},	  {"train_anon", {0}}, {"enroll", {0}},
			     {"enroll_anon", {0}}, {"trial", {0}},	    {"trial_anon", {0}},
			     {"enroll_informed", {0}}};
	struct vpa_xvec asv, asv_anon;
	vpa_xvec_init(&asv);
	vpa_xvec_init(&asv_anon);
	struct vpa_embedder *onnx = NULL, *onnx_anon = NULL;
	struct vpa_embed_opts oo, ooa;
	uint32_t *lab = NULL;
	int rc = 0;
	struct vpa_json *o = vpa_json_obj();
	struct vpa_json *stages = vpa_json_obj();
	unsigned long resampled0 = vpa_resample_count(); /* audio at another rate (issue 31) */
	struct stage_clock clk;
	for (int i = 0; i < NR; i++)
		vpa_xvec_set_init(&R[i].set);
	/* `trial` and `trial_anon` may list several directories (VoicePrivacy's
	 * trials_f and trials_m): merged into one set each in the temporary folder */
	size_t n_tr[2] = {au->trial.n, au->trial_anon.n};
	const char *const *tr_dirs[2] = {au->trial.v, au->trial_anon.v};
	int merge = n_tr[0] > 1 || n_tr[1] > 1;
	const char *const one[NR] = {au->train, au->train_anon, au->enroll, au->enroll_anon,
				     NULL, NULL, au->enroll_informed};
	for (int i = 0; i < NR; i++) {
		const char *p = i == TI || i == TIA ? (n_tr[i - TI] == 1 ? tr_dirs[i - TI][0] : NULL)
						    : one[i];
		paths[i] = p ? vpa_path_join(ctx->dir, p) : NULL;
	}
	if (au->onnx_at.line &&
	    (rc = vpa_anon_onnx_new(ctx->file, ctx->dir, &au->onnx, ctx->threads, &oo, &onnx,
				    err)))
		goto out;
	if (au->onnx_anon_at.line &&
	    (rc = vpa_anon_onnx_new(ctx->file, ctx->dir, &au->onnx_anon, ctx->threads, &ooa,
				    &onnx_anon, err)))
		goto out;
	if (sy || an || merge) {
		/* under $TMPDIR (POSIX), else /tmp */
		const char *td = getenv("TMPDIR");
		char *tpl = vpa_xvec_join(td && *td ? td : "/tmp", "vpaudit-audio-XXXXXX");
		if (!mkdtemp(tpl)) {
			rc = vpa_fail(err, VPA_EIO, NULL, "cannot make a temporary folder in %s: %s",
				      td && *td ? td : "/tmp", strerror(errno));
			free(tpl);
			goto out;
		}
		tmp = tpl;
		vpa_tmp_register(tmp, 1); /* removed on SIGINT/SIGTERM (base/tmp.c) */
		vpa_inputs_ignore(tmp); /* made here: not an input (its name is random) */
	}
	for (int k = 0; k < 2 && merge; k++) {
		if (n_tr[k] < 2)
			continue;
		char **abs = xmalloc(xmul(n_tr[k], sizeof(char *)));
		for (size_t j = 0; j < n_tr[k]; j++)
			abs[j] = vpa_path_join(ctx->dir, tr_dirs[k][j]);
		paths[TI + k] = vpa_xvec_join(tmp, R[TI + k].key);
		/* any rate: the readers resample to the front-end's (vpa_datadir_set_rate) */
		double rate = -1;
		rc = vpa_datadir_merge((const char *const *)abs, n_tr[k], paths[TI + k], &rate, err);
		for (size_t j = 0; j < n_tr[k]; j++)
			free(abs[j]);
		free(abs);
		if (rc)
			goto out;
	}
	if (sy) {
		int nspk = (int)sy->speakers;
		char *cdir = vpa_xvec_join(tmp, "corpus");
		vpa_progress_note("%s: synthesising a corpus of %d speakers", t->id, nspk);
		stage_start(&clk);
		rc = vpa_xvec_synth(nspk, (int)sy->utts, sy->brown, xo.seed, cdir, ctx->threads,
				    err);
		stage_stop(stages, "synthesis", &clk);
		static const char *const sub[] = {"train", "enrol", "trials"};
		for (int i = 0; i < 3 && rc == 0; i++) {
			free(paths[2 * i]);
			paths[2 * i] = vpa_xvec_join(cdir, sub[i]);
		}
		free(cdir);
		if (rc)
			goto out;
		vpa_json_set_str(t->info, "synthetic",
				 "SYNTHETIC speech (espeak-ng / flite voices reading Brown sentences), "
				 "not recordings of people");
	}
	if (an) {
		int kind = vpa_anon_audio_kind(an->method);
		double lo = an->low;
		double hi = an->high;
		int train_utt = !strcmp(an->train_level, "anon_level_utt");
		/* the user's anonymiser draws from xo.seed (trials); the attacker
		 * anonymises its training data and the enrolment with its own draws
		 * (lazy- and semi-informed); the informed attacker's enrolment gets
		 * the trial speakers' own draws */
		uint64_t aseed;
		{
			struct vpa_rng r;
			vpa_rng_split(&r, xo.seed, "attacker");
			aseed = vpa_rng_u64(&r);
		}
		for (int i = 0; i < TI + 2 && rc == 0; i += 2) {
			if (!paths[i])
				continue;
			free(paths[i + 1]);
			paths[i + 1] = vpa_xvec_join(tmp, R[i + 1].key);
			vpa_progress_note("%s: anonymising %s", t->id, R[i].key);
			stage_start(&clk);
			rc = vpa_xvec_anonymise(paths[i], paths[i + 1], kind,
						i == TR ? train_utt : utt_level, lo, hi,
						i == TI ? xo.seed : aseed, ctx->threads, err);
			stage_stop(stages, "anonymisation", &clk);
		}
		if (!rc && paths[EN] && paths[TI]) {
			free(paths[ENI]);
			paths[ENI] = vpa_xvec_join(tmp, R[ENI].key);
			vpa_progress_note("%s: anonymising enroll as the trials (informed attacker)",
					  t->id);
			stage_start(&clk);
			rc = vpa_anon_audio_informed(paths[EN], paths[TI], paths[ENI], kind, utt_level,
						     lo, hi, xo.seed, ctx->threads, err);
			stage_stop(stages, "anonymisation", &clk);
		}
		if (rc)
			goto out;
	}
	stage_start(&clk);
	for (int i = 0; i < NR && rc == 0; i++)
		if (paths[i])
			rc = vpa_xvec_set_load(paths[i], feat, ctx->threads, &R[i].set, err);
	stage_stop(stages, "features", &clk);
	/* every anonymised set holds exactly its original's utterances */
	for (int i = 0; i < TI + 2 && rc == 0; i += 2)
		if (R[i + 1].set.dir)
			rc = vpa_xvec_set_match(&R[i].set, &R[i + 1].set, err);
	if (rc == 0 && R[ENI].set.dir)
		rc = vpa_xvec_set_match(&R[EN].set, &R[ENI].set, err);
	if (rc)
		goto out;
	/* utility: WER of the user's ASR hypotheses, rho_F0 */
	const struct vpa_strs *hv[2] = {&au->hyp, &au->hyp_anon};
	for (int h = 0; h < 2; h++) {
		size_t nh = hv[h]->n;
		const char *const *hp = hv[h]->v;
		if (!hv[h]->given)
			continue;
		/* one hypothesis file per trial directory (validated): the counts add up */
		struct vpa_xvec_wer w;
		memset(&w, 0, sizeof(w));
		for (size_t j = 0; j < nh && !rc; j++) {
			char *td = n_tr[0] > 1 ? vpa_path_join(ctx->dir, tr_dirs[0][j]) : NULL;
			char *ref = vpa_xvec_join(td ? td : paths[TI], "text");
			char *hyp = vpa_path_join(ctx->dir, hp[j]);
			struct vpa_xvec_wer w1;
			rc = vpa_xvec_wer(ref, hyp, au->wer_normalise, au->wer_strict, &w1, err);
			if (!rc && w1.n_absent)
				vpa_warn("%s: %zu utterance%s of %s not present in hyp: scored as deletions",
					 hyp, w1.n_absent, w1.n_absent == 1 ? "" : "s", ref);
			free(td);
			free(ref);
			free(hyp);
			if (rc)
				break;
			w.n_absent += w1.n_absent;
			w.ref_words += w1.ref_words;
			w.ins += w1.ins;
			w.del += w1.del;
			w.sub += w1.sub;
			w.n_utt += w1.n_utt;
		}
		if (rc)
			goto out;
		w.wer = 100.0 * (double)(w.ins + w.del + w.sub) / (double)w.ref_words;
		struct vpa_json *wo = vpa_json_obj();
		/* a fraction, as every rate of results.json (reports print percent) */
		vpa_json_set_num(wo, "wer", w.wer / 100);
		vpa_json_set_num(wo, "ref_words", (double)w.ref_words);
		vpa_json_set_num(wo, "ins", (double)w.ins);
		vpa_json_set_num(wo, "del", (double)w.del);
		vpa_json_set_num(wo, "sub", (double)w.sub);
		/* compute-wer's "N not present in hyp" (scored as deletions) and the normalisation */
		vpa_json_set_num(wo, "not_present_in_hyp", (double)w.n_absent);
		vpa_json_set_str(wo, "normalise", au->wer_normalise);
		vpa_json_set(o, h ? "wer_anon" : "wer_orig", wo);
	}
	if (au->asr_at.line) {
		/* the built-in corpus's speakers.txt names each speaker's synthesiser */
		char *spk = sy ? vpa_xvec_join(tmp, "corpus/speakers.txt") : NULL;
		stage_start(&clk);
		rc = vpa_anon_asr_wer(ctx, au, paths[TI], paths[TIA], spk, o, err);
		stage_stop(stages, "asr", &clk);
		free(spk);
		if (rc)
			goto out;
	}
	if (au->rho_f0 && paths[TIA]) {
		double rho, rho_sd;
		size_t nu;
		stage_start(&clk);
		if ((rc = vpa_xvec_rho_f0_std(paths[TI], paths[TIA], ctx->threads, &rho, &rho_sd, &nu,
					      err)))
			goto out;
		stage_stop(stages, "rho_f0", &clk);
		if (nu) {
			vpa_json_set_num(o, "rho_f0", rho);
			vpa_json_set_num(o, "rho_f0_std", rho_sd);
			vpa_json_set_num(o, "rho_f0_utterances", (double)nu);
		}
	}
	if (au->ser_at.line) {
		stage_start(&clk);
		if ((rc = vpa_anon_ser_run(ctx->file, ctx->dir, ctx->threads, &au->ser, o, err)))
			goto out;
		stage_stop(stages, "ser", &clk);
	}
	/* ASV_eval: the user's ONNX extractor, or trained in C on the original training audio */
	size_t K;
	lab = xmalloc(xmul(R[TR].set.n ? R[TR].set.n : 1, sizeof(uint32_t)));
	if (onnx) {
		char *const d[5] = {paths[TR], paths[EN], paths[TI], R[ENA].set.dir ? paths[ENA] : NULL,
				    R[TIA].set.dir ? paths[TIA] : NULL};
		struct vpa_embset *const s[5] = {&a->train, &a->enroll, &a->trial, &a->enroll_anon,
						 &a->trial_anon};
		if ((rc = onnx_sets(onnx, &oo, d, s, 5, err)))
			goto out;
		goto asv_anon_step;
	}
	vpa_xvec_set_labels(&R[TR].set, lab, &K);
	stage_start(&clk);
	if (have[0])
		rc = vpa_anon_extractor_load(ctx->file, ctx->dir, ex, 0, vpa_feat_dim(feat), &asv,
					     &meta[0], err);
	else
		rc = vpa_xvec_train(R[TR].set.feats, lab, R[TR].set.n, K, &xo, NULL, &asv, err);
	if (rc)
		goto out;
	stage_stop(stages, have[0] ? "load_asv_eval" : "train_asv_eval", &clk);
	stage_start(&clk);
	if ((rc = vpa_xvec_set_embed(&asv, &R[TR].set, ctx->threads, &a->train, err)) ||
	    (rc = vpa_xvec_set_embed(&asv, &R[EN].set, ctx->threads, &a->enroll, err)) ||
	    (rc = vpa_xvec_set_embed(&asv, &R[TI].set, ctx->threads, &a->trial, err)))
		goto out;
	if (R[ENA].set.dir &&
	    (rc = vpa_xvec_set_embed(&asv, &R[ENA].set, ctx->threads, &a->enroll_anon, err)))
		goto out;
	if (R[TIA].set.dir &&
	    (rc = vpa_xvec_set_embed(&asv, &R[TIA].set, ctx->threads, &a->trial_anon, err)))
		goto out;
	stage_stop(stages, "embed_asv_eval", &clk);
asv_anon_step:
	/* ASV_eval^anon: the user's ONNX extractor, or trained in C on the anonymised
	 * training audio */
	if (R[TRA].set.dir && onnx_anon) {
		char *const d[4] = {paths[TRA], R[ENA].set.dir ? paths[ENA] : NULL,
				    R[TIA].set.dir ? paths[TIA] : NULL,
				    R[ENI].set.dir ? paths[ENI] : NULL};
		struct vpa_embset *const s[4] = {&a->train_anon, &a->enroll_semi, &a->trial_semi,
						 &a->enroll_informed};
		if ((rc = onnx_sets(onnx_anon, &ooa, d, s, 4, err)))
			goto out;
	} else if (R[TRA].set.dir) {
		vpa_xvec_set_labels(&R[TRA].set, lab, &K);
		stage_start(&clk);
		if (have[1])
			rc = vpa_anon_extractor_load(ctx->file, ctx->dir, ex, 1, vpa_feat_dim(feat),
						     &asv_anon, &meta[1], err);
		else
			rc = vpa_xvec_train(R[TRA].set.feats, lab, R[TRA].set.n, K, &xo,
					    finetune ? &asv : NULL, &asv_anon, err);
		if (rc)
			goto out;
		stage_stop(stages, have[1] ? "load_asv_eval_anon" : "train_asv_eval_anon", &clk);
		stage_start(&clk);
		if ((rc = vpa_xvec_set_embed(&asv_anon, &R[TRA].set, ctx->threads, &a->train_anon,
					     err)))
			goto out;
		if (R[ENA].set.dir &&
		    (rc = vpa_xvec_set_embed(&asv_anon, &R[ENA].set, ctx->threads, &a->enroll_semi,
					     err)))
			goto out;
		if (R[TIA].set.dir &&
		    (rc = vpa_xvec_set_embed(&asv_anon, &R[TIA].set, ctx->threads, &a->trial_semi,
					     err)))
			goto out;
		/* the informed attacker works in ASV_eval^anon's space, as its back-end */
		if (R[ENI].set.dir &&
		    (rc = vpa_xvec_set_embed(&asv_anon, &R[ENI].set, ctx->threads,
					     &a->enroll_informed, err)))
			goto out;
		stage_stop(stages, "embed_asv_eval_anon", &clk);
	}
	/* the sizes the stages scale with (bench/vpc_audio.sh extrapolates by them) */
	{
		struct vpa_json *sz = vpa_json_obj();
		for (int i = 0; i < NR; i++) {
			if (!R[i].set.dir)
				continue;
			size_t fr = 0, ch = 0;
			for (size_t u = 0; u < R[i].set.n; u++) {
				size_t r = R[i].set.feats[u].rows;
				fr += r;
				ch += r < xo.chunk ? r : xo.chunk;
			}
			struct vpa_json *so = vpa_json_obj();
			vpa_json_set_num(so, "utterances", (double)R[i].set.n);
			vpa_json_set_num(so, "frames", (double)fr);
			if (i == TR || i == TRA) /* the frames one training epoch draws */
				vpa_json_set_num(so, "chunk_frames", (double)ch);
			double sec = utt2dur_seconds(paths[i]);
			if (sec > 0)
				vpa_json_set_num(so, "audio_seconds", sec);
			vpa_json_set(sz, R[i].key, so);
		}
		vpa_json_set(o, "sizes", sz);
	}
	vpa_json_set_str(o, "level", au->level);
	if (an && R[TRA].set.dir)
		vpa_json_set_str(o, "train_anon_level", an->train_level);
	vpa_json_set_str(o, "asv_eval", onnx ? au->onnx.model
					     : xo.arch == VPA_XVEC_ECAPA ? "ECAPA-TDNN trained in C"
									 : "x-vector trained in C");
	if (vpa_resample_count() > resampled0) {
		/* audio read at another rate than the front-end's was resampled: say so */
		vpa_json_set_num(o, "resampled_reads", (double)(vpa_resample_count() - resampled0));
		vpa_json_set_num(o, "resampled_to_hz", onnx ? oo.feat.sample_frequency : fo.sample_frequency);
		vpa_json_set_str(o, "resampler", vpa_resample_about());
	}
	if (R[TRA].set.dir)
		vpa_json_set_str(o, "asv_eval_anon",
				 onnx_anon ? au->onnx_anon.model
					   : xo.arch == VPA_XVEC_ECAPA ? "ECAPA-TDNN trained in C"
								       : "x-vector trained in C");
	if (vpa_xvec_trained(&asv) || vpa_xvec_trained(&asv_anon)) {
		/* the C-trained extractor's settings */
		vpa_json_set_str(o, "features", mfcc ? "mfcc" : "fbank");
		vpa_json_set_str(o, "architecture", vpa_xvec_arch_name(xo.arch));
		if (xo.arch == VPA_XVEC_ECAPA) {
			vpa_json_set_num(o, "channels", (double)xo.channels);
			vpa_json_set_num(o, "res2_scale", (double)xo.res2_scale);
		} else {
			vpa_json_set_num(o, "hidden", (double)xo.hidden);
		}
		/* a reused extractor's training is the saved one's (issue 31.9) */
		const struct vpa_xvec_meta *sm = have[0] ? &meta[0] : have[1] ? &meta[1] : NULL;
		vpa_json_set_str(o, "loss", sm ? sm->loss : xo.loss == VPA_XVEC_AAM ? "aam" : "softmax");
		vpa_json_set_num(o, "emb_dim", (double)xo.emb_dim);
		vpa_json_set_num(o, "epochs", sm ? (double)sm->epochs : (double)xo.epochs);
	}
	if (vpa_xvec_trained(&asv))
		vpa_json_set_num(o, "asv_eval_final_loss", asv.final_loss);
	if (vpa_xvec_trained(&asv_anon)) {
		vpa_json_set_num(o, "asv_eval_anon_final_loss", asv_anon.final_loss);
		vpa_json_set_str(o, "semi_informed", have[1] && meta[1].semi_informed[0]
							     ? meta[1].semi_informed
							     : finetune ? "finetune" : "retrain");
	}
	if ((rc = anon_extractors_saved(ctx, ex, &fo, &xo, finetune, have, meta, &asv, &asv_anon, o,
					err)))
		goto out;
	vpa_json_set(o, "timing", stages); /* a timing field (reports/README.md) */
	stages = NULL;
	vpa_json_set(t->info, "audio", o);
	o = NULL;
out:
	if (o)
		vpa_json_free(o);
	if (stages)
		vpa_json_free(stages);
	for (int i = 0; i < NR; i++)
		free(paths[i]);
	if (tmp) {
		vpa_xvec_rm_tree(tmp);
		vpa_tmp_unregister(tmp);
		free(tmp);
	}
	free(lab);
	vpa_xvec_release(&asv);
	vpa_xvec_release(&asv_anon);
	vpa_embedder_free(onnx);
	vpa_embedder_free(onnx_anon);
	for (int i = 0; i < NR; i++)
		vpa_xvec_set_release(&R[i].set);
	vpa_feat_free(feat);
	return rc;
}
