/*
 * targets/anon_sets.c - the embedding sets of an `anonymised_speech` target
 * (targets/anon_build.h): anonymised sets aligned to their originals
 * (speakers, rows), the `enrolls` selection, the trials (VoicePrivacy lists
 * or every same-gender pair), the sets' info in results.json, the
 * anonymiser's settings from its options, the target's seed.  Called by the
 * builds (anon_simulate.c, anon_import.c) and the kind (anon_speech.c).
 */
#include "targets/anon_build.h"
#include "formats/kaldi.h"

#include <stdlib.h>
#include <string.h>

void vpa_anon_trials_release(struct vpa_anon_trials *t)
{
	free(t->e);
	free(t->t);
	free(t->tar);
	memset(t, 0, sizeof(*t));
}

void vpa_anon_make_trials(const struct vpa_embset *enroll, const struct vpa_embset *trial,
			  struct vpa_anon_trials *out)
{
	size_t cap = 16, n = 0;
	memset(out, 0, sizeof(*out));
	out->e = xmalloc(cap * sizeof(uint32_t));
	out->t = xmalloc(cap * sizeof(uint32_t));
	out->tar = xmalloc(cap);
	for (size_t s = 0; s < enroll->n_spk; s++) {
		char ge = enroll->gender ? enroll->gender[s] : 0;
		for (size_t i = 0; i < trial->n; i++) {
			char gt = vpa_embset_utt_gender(trial, i);
			if (ge && gt && ge != gt)
				continue;
			if (n == cap) {
				cap *= 2;
				out->e = xrealloc(out->e, xmul(cap, sizeof(uint32_t)));
				out->t = xrealloc(out->t, xmul(cap, sizeof(uint32_t)));
				out->tar = xrealloc(out->tar, cap);
			}
			out->e[n] = (uint32_t)s;
			out->t[n] = (uint32_t)i;
			out->tar[n] = !strcmp(enroll->spk_id[s], trial->spk_id[trial->spk[i]]);
			n++;
		}
	}
	out->n = n;
}

int vpa_anon_align_rows(const struct vpa_embset *ref, const struct vpa_embset *src,
			const char *what, struct vpa_embset *out, struct vpa_err *err)
{
	size_t *idx = xmalloc(xmul(ref->n ? ref->n : 1, sizeof(size_t)));
	for (size_t i = 0; i < ref->n; i++) {
		long r = vpa_embset_find_utt(src, ref->utt[i]);
		if (r < 0) {
			free(idx);
			return vpa_fail(err, VPA_EINPUT, NULL, "%s: no embedding for utterance '%s'", what,
					ref->utt[i]);
		}
		idx[i] = (size_t)r;
	}
	struct vpa_embset tmp;
	vpa_embset_init(&tmp);
	vpa_embset_subset_rows(src, idx, ref->n, &tmp);
	free(idx);
	vpa_embset_release(out);
	*out = tmp;
	return 0;
}

int vpa_anon_align_spk(const struct vpa_embset *ref, struct vpa_embset *set, const char *what,
		       struct vpa_err *err)
{
	if (!set->n)
		return 0;
	uint32_t *idx = xmalloc(xmul(ref->n_spk ? ref->n_spk : 1, sizeof(uint32_t)));
	for (size_t s = 0; s < ref->n_spk; s++) {
		long k = vpa_embset_find_spk(set, ref->spk_id[s]);
		if (k < 0) {
			free(idx);
			return vpa_fail(err, VPA_EINPUT, NULL, "%s: no utterance of enrolment speaker '%s'",
					what, ref->spk_id[s]);
		}
		idx[s] = (uint32_t)k;
	}
	struct vpa_embset tmp;
	vpa_embset_init(&tmp);
	vpa_embset_subset_spk(set, idx, ref->n_spk, &tmp);
	free(idx);
	/* genders of the reference (the anonymised copies may lack spk2gender) */
	if (ref->gender)
		for (size_t s = 0; s < ref->n_spk; s++)
			if (ref->gender[s])
				vpa_embset_set_gender(&tmp, (uint32_t)s, ref->gender[s]);
	vpa_embset_release(set);
	*set = tmp;
	return 0;
}

int vpa_anon_select_enrolls(struct vpa_run_ctx *ctx, const char *enrolls,
			    struct vpa_embset *const *sets, struct vpa_err *err)
{
	if (!enrolls)
		return 0;
	char *path = vpa_path_join(ctx->dir, enrolls);
	int rc = 0;
	for (size_t i = 0; sets[i] && !rc; i++) {
		if (!sets[i]->n)
			continue;
		struct vpa_embset tmp;
		vpa_embset_init(&tmp);
		if ((rc = vpa_embset_select_list(sets[i], path, &tmp, err))) {
			vpa_embset_release(&tmp);
			break;
		}
		vpa_embset_release(sets[i]);
		*sets[i] = tmp;
	}
	free(path);
	return rc;
}

int vpa_anon_read_trials(struct vpa_run_ctx *ctx, const char *const *trials, size_t n_files,
			 struct vpa_anon_target *a, struct vpa_err *err)
{
	if (!n_files) {
		vpa_anon_make_trials(&a->enroll, &a->trial, &a->trials);
		return 0;
	}
	struct vpa_kaldi_trials *kt = xcalloc(n_files, sizeof(*kt));
	size_t total = 0;
	int rc = 0;
	for (size_t f = 0; f < n_files; f++)
		vpa_kaldi_trials_init(&kt[f]);
	for (size_t f = 0; f < n_files && !rc; f++) {
		char *p = vpa_path_join(ctx->dir, trials[f]);
		rc = vpa_kaldi_read_trials(p, &kt[f], err);
		free(p);
		total += kt[f].n;
	}
	struct vpa_anon_trials *T = &a->trials;
	if (!rc) {
		T->e = xmalloc(xmul(total ? total : 1, sizeof(uint32_t)));
		T->t = xmalloc(xmul(total ? total : 1, sizeof(uint32_t)));
		T->tar = xmalloc(total ? total : 1);
		T->n = 0;
	}
	/* "ENROLL_INDEX TEST_ROW" -> the trial's index over all files (keys are
	 * borrowed by the map: one fixed-width slot each) */
	enum { SLOT = 24 };
	char *keys = xmalloc(xmul(total ? total : 1, SLOT));
	size_t *file_of = xmalloc(xmul(total ? total : 1, sizeof(size_t)));
	size_t *row_of = xmalloc(xmul(total ? total : 1, sizeof(size_t)));
	struct vpa_strmap seen;
	vpa_strmap_init(&seen);
	for (size_t f = 0; f < n_files && !rc; f++) {
		const struct vpa_kaldi_trials *k = &kt[f];
		rc = vpa_embset_resolve_trials(k, &a->enroll, &a->trial, T->e + T->n, T->t + T->n,
					       err);
		for (size_t i = 0; i < k->n && !rc; i++) {
			size_t j = T->n + i;
			char *key = keys + j * SLOT;
			uint32_t j0;
			snprintf(key, SLOT, "%u %u", T->e[j], T->t[j]);
			file_of[j] = f;
			row_of[j] = i;
			if (vpa_strmap_put(&seen, key, (uint32_t)j, &j0)) {
				struct vpa_loc loc = {k->name, k->line[i], 0};
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "the trial '%s %s' is also at %s:%ld (a trial counted twice "
					      "would weigh twice in every metric)", k->enroll[i],
					      k->test[i], kt[file_of[j0]].name,
					      kt[file_of[j0]].line[row_of[j0]]);
			}
		}
		if (!rc) {
			memcpy(T->tar + T->n, k->target, k->n);
			T->n += k->n;
		}
	}
	vpa_strmap_release(&seen);
	free(keys);
	free(file_of);
	free(row_of);
	for (size_t f = 0; f < n_files; f++)
		vpa_kaldi_trials_release(&kt[f]);
	free(kt);
	return rc;
}

void vpa_anon_set_info(struct vpa_json *info, const char *name, const struct vpa_embset *es)
{
	if (!es->n)
		return;
	struct vpa_json *o = vpa_json_obj();
	vpa_json_set_num(o, "utterances", (double)es->n);
	vpa_json_set_num(o, "speakers", (double)es->n_spk);
	if (es->gender) { /* speakers by gender, where spk2gender gave it (the report's column) */
		size_t nf = 0, nm = 0;
		for (size_t s = 0; s < es->n_spk; s++) {
			nf += es->gender[s] == 'f';
			nm += es->gender[s] == 'm';
		}
		vpa_json_set_num(o, "female", (double)nf);
		vpa_json_set_num(o, "male", (double)nm);
	}
	vpa_json_set_num(o, "dim", (double)es->d);
	vpa_json_set(info, name, o);
}

void vpa_anon_cfg_read(const struct vpa_anon_anonymiser_opts *an, struct vpa_anon_cfg *c)
{
	vpa_anon_cfg_init(c);
	c->distance = vpa_anon_parse("distance", an->distance);
	c->proximity = vpa_anon_parse("proximity", an->proximity);
	c->gender = vpa_anon_parse("gender", an->gender);
	c->assignment = vpa_anon_parse("assignment", an->assignment);
	c->n = (size_t)an->n;
	c->n_star = (size_t)an->n_star;
	c->ap.damping = an->ap_damping;
	c->ap.max_iter = (int)an->ap_max_iter;
	c->ap.conv_iter = (int)an->ap_conv_iter;
}

void vpa_anon_cfg_info(struct vpa_json *info, const struct vpa_anon_cfg *c)
{
	struct vpa_json *o = vpa_json_obj();
	vpa_json_set_str(o, "distance", vpa_anon_name("distance", c->distance));
	vpa_json_set_str(o, "proximity", vpa_anon_name("proximity", c->proximity));
	vpa_json_set_str(o, "gender", vpa_anon_name("gender", c->gender));
	vpa_json_set_str(o, "assignment", vpa_anon_name("assignment", c->assignment));
	vpa_json_set_num(o, "n", (double)c->n);
	vpa_json_set_num(o, "n_star", (double)c->n_star);
	vpa_json_set(info, "anonymiser", o);
}

uint64_t vpa_anon_target_seed(uint64_t seed, const char *id)
{
	char name[300];
	struct vpa_rng r;
	snprintf(name, sizeof(name), "target/%s", id);
	vpa_rng_split(&r, seed, name);
	return vpa_rng_u64(&r);
}
