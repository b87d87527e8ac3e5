/*
 * targets/anon_import.c - `source: import` of the target kind
 * `anonymised_speech`: the embedding sets read from Kaldi archives / .npy
 * files, or Kaldi data directories of audio embedded by the ONNX extractor
 * (anon_onnx.c); and, for `source: audio` after its build (anon_audio.c), the
 * same alignment of the sets and the trials lists.
 */
#include "targets/anon_build.h"
#include "embed/embed.h"

#include <stdlib.h>
#include <string.h>

/* A set given as audio: embedded with the extractor. */
static int audio_set(struct vpa_run_ctx *ctx, const struct vpa_anon_set_opts *m, const char *role,
		     int need_gender, const struct vpa_embedder *e, const struct vpa_embed_opts *o,
		     struct vpa_embset *out, struct vpa_err *err)
{
	char *p = vpa_path_join(ctx->dir, m->audio);
	int rc = vpa_embset_from_audio_with(p, e, o, out, err);
	for (size_t s = 0; !rc && need_gender && s < out->n_spk; s++)
		if (!out->gender || !out->gender[s])
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "%s/spk2gender: no gender for speaker '%s' (needed for the "
				      "same-gender trials of set '%s')",
				      p, out->spk_id[s], role);
	if (rc) {
		vpa_embset_release(out);
		vpa_embset_init(out);
	}
	free(p);
	return rc;
}

/* The set `role` (m, written at m_at; not written: left empty). */
static int import_set(struct vpa_run_ctx *ctx, const struct vpa_anon_set_opts *m,
		      struct vpa_mark m_at, const char *role, int need_gender,
		      const struct vpa_embedder *e, const struct vpa_embed_opts *o,
		      struct vpa_embset *out, struct vpa_err *err)
{
	if (!m_at.line)
		return 0;
	if (m->audio_at.line)
		return audio_set(ctx, m, role, need_gender, e, o, out, err);
	char *p[5] = {NULL};
	const char *v[5] = {m->vectors, m->ids, m->utt2spk, m->spk2gender, m->utt2dur};
	for (int i = 0; i < 5; i++)
		p[i] = v[i] ? vpa_path_join(ctx->dir, v[i]) : NULL;
	struct vpa_embset_src src = {p[0], p[1], p[2], p[3], p[4], need_gender};
	int rc = vpa_embset_import(&src, out, err);
	for (int i = 0; i < 5; i++)
		free(p[i]);
	if (rc) {
		char old[sizeof(err->msg)];
		memcpy(old, err->msg, sizeof(old));
		int st = err->status;
		vpa_err_init(err);
		struct vpa_loc loc = vpa_mark_loc(ctx->file, m_at);
		/* messages of the readers already name the file and line */
		rc = vpa_fail(err, st, strchr(old, ':') ? NULL : &loc, "%s%s%s", old,
			      strchr(old, ':') ? "" : " in set ", strchr(old, ':') ? "" : role);
	}
	return rc;
}

int vpa_anon_audio_sets(struct vpa_run_ctx *ctx, const struct vpa_anon_audio_opts *au,
			struct vpa_anon_target *a, struct vpa_err *err)
{
	const char *enrolls = au->enrolls;
	struct vpa_embset *const en[] = {&a->enroll, &a->enroll_anon, &a->enroll_semi,
					 &a->enroll_informed, NULL};
	int rc = vpa_anon_select_enrolls(ctx, enrolls, en, err);
	if (rc)
		return rc;
	if ((rc = vpa_anon_align_spk(&a->enroll, &a->enroll_anon, "enroll_anon", err)) ||
	    (rc = vpa_anon_align_spk(&a->enroll, &a->enroll_semi, "enroll_anon", err)) ||
	    (rc = vpa_anon_align_spk(&a->enroll, &a->enroll_informed, "enroll_informed", err)))
		return rc;
	if (a->trial_anon.n &&
	    (rc = vpa_anon_align_rows(&a->trial, &a->trial_anon, "trial_anon", &a->trial_anon, err)))
		return rc;
	if (a->trial_semi.n &&
	    (rc = vpa_anon_align_rows(&a->trial, &a->trial_semi, "trial_anon", &a->trial_semi, err)))
		return rc;
	size_t n;
	char **files = vpa_anon_audio_trials_files(ctx->dir, au, &n);
	rc = vpa_anon_read_trials(ctx, (const char *const *)files, n, a, err);
	vpa_anon_audio_trials_files_free(files, n);
	return rc;
}

int vpa_anon_build_import(struct vpa_run_ctx *ctx, const struct vpa_anon_opts *o,
			  struct vpa_target *t, struct vpa_anon_target *a, struct vpa_err *err)
{
	const struct vpa_anon_import_opts *imp = &o->import;
	const char *trials = imp->trials;
	const char *enrolls = imp->enrolls;
	struct vpa_embset pool;
	struct vpa_embedder *emb = NULL;
	struct vpa_embed_opts eo;
	int rc = 0;
	vpa_embed_opts_init(&eo, VPA_FEAT_FBANK);
	vpa_embset_init(&pool);
#define ROLE(k) #k, &imp->k, imp->k##_at
	struct {
		const char *role;
		const struct vpa_anon_set_opts *m;
		struct vpa_mark m_at;
		struct vpa_embset *es;
		int need_gender;
	} roles[] = {
		{ROLE(train), &a->train, 0},
		{ROLE(train_anon), &a->train_anon, 0},
		{ROLE(pool), &pool, 1},
		{ROLE(enroll), &a->enroll, trials == NULL},
		{ROLE(enroll_anon), &a->enroll_anon, 0},
		{ROLE(enroll_informed), &a->enroll_informed, 0},
		{ROLE(trial), &a->trial, trials == NULL},
		{ROLE(trial_anon), &a->trial_anon, 0},
		{ROLE(population), &a->pop, 0},
		{ROLE(population_anon), &a->pop_anon, 0},
		{ROLE(population_informed), &a->pop_informed, 0},
	};
#undef ROLE
	size_t nr = sizeof(roles) / sizeof(roles[0]);
	if (imp->extractor_at.line &&
	    (rc = vpa_anon_onnx_new(ctx->file, ctx->dir, &imp->extractor, ctx->threads, &eo, &emb,
				    err)))
		goto out;
	for (size_t i = 0; i < nr; i++)
		if ((rc = import_set(ctx, roles[i].m, roles[i].m_at, roles[i].role,
				     roles[i].need_gender, emb, &eo, roles[i].es, err)))
			goto out;
	/* one dimension for all */
	for (size_t i = 1; i < nr; i++)
		if (roles[i].es->n && roles[i].es->d != a->train.d) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "dimension mismatch: set '%s' has dimension %zu, 'train' has %zu",
				      roles[i].role, roles[i].es->d, a->train.d);
			goto out;
		}
	size_t lda = (size_t)o->backend.lda_dim;
	if (lda >= a->train.d) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "backend lda_dim (%zu) must be below the embedding dimension (%zu)", lda,
			      a->train.d);
		goto out;
	}
	{
		struct vpa_embset *const en[] = {&a->enroll, &a->enroll_anon, &a->enroll_informed,
						 NULL};
		if ((rc = vpa_anon_select_enrolls(ctx, enrolls, en, err)))
			goto out;
	}
	if ((rc = vpa_anon_align_spk(&a->enroll, &a->enroll_anon, "enroll_anon", err)) ||
	    (rc = vpa_anon_align_spk(&a->enroll, &a->enroll_informed, "enroll_informed", err)) ||
	    (rc = vpa_anon_align_spk(&a->pop, &a->pop_anon, "population_anon", err)) ||
	    (rc = vpa_anon_align_spk(&a->pop, &a->pop_informed, "population_informed", err)))
		goto out;
	if (a->trial_anon.n &&
	    (rc = vpa_anon_align_rows(&a->trial, &a->trial_anon, "trial_anon", &a->trial_anon, err)))
		goto out;
	if ((rc = vpa_anon_read_trials(ctx, &trials, trials ? 1 : 0, a, err)))
		goto out;
	/* the anonymiser on the imported pool: pseudo-speakers for the user's synthesiser */
	if (pool.n) {
		struct vpa_anon_cfg ac;
		vpa_anon_cfg_read(&o->anonymiser, &ac);
		struct vpa_anonymiser *A = vpa_anonymiser_new(&pool, &ac, err);
		if (!A) {
			rc = err->status;
			goto out;
		}
		rc = vpa_anonymise(A, &a->trial, vpa_anon_target_seed(ctx->seed, t->id), "user",
				   &a->trial_pseudo, err);
		vpa_anonymiser_free(A);
		if (rc)
			goto out;
		vpa_anon_cfg_info(t->info, &ac);
		vpa_anon_set_info(t->info, "pool", &pool);
	}
out:
	/* kept for sets given as audio in the attacks (slicing) */
	a->extractor = emb;
	a->extractor_opts = eo;
	vpa_embset_release(&pool);
	return rc;
}
