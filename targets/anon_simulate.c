/*
 * targets/anon_simulate.c - `source: simulate` of the target kind
 * `anonymised_speech`: every set drawn from the generative model
 * (targets/sim_speech.c) and anonymised with the x-vector anonymiser
 * (targets/anonymiser.c); documented in targets/README.md.
 */
#include "targets/anon_build.h"

#include <stdlib.h>
#include <string.h>

/*
 * The informed attacker's pseudo-speaker map for `set`: each utterance gets
 * the user's pseudo-speaker of its speaker (speaker level), or of the
 * speaker's trial utterance number (j mod count) (utterance level).
 */
static int informed_map(const struct vpa_anon_result *user, const struct vpa_embset *trial,
			const struct vpa_embset *set, int spk_level, struct vpa_anon_result *out,
			struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	out->n_pseudo = user->n_pseudo;
	out->d = user->d;
	out->pseudo = user->pseudo; /* borrowed: only pseudo and of_utt are used */
	out->of_utt = xmalloc(xmul(set->n ? set->n : 1, sizeof(uint32_t)));
	uint32_t *seen = xcalloc(set->n_spk ? set->n_spk : 1, sizeof(uint32_t));
	for (size_t i = 0; i < set->n; i++) {
		const char *spk = set->spk_id[set->spk[i]];
		long ts = vpa_embset_find_spk(trial, spk);
		if (ts < 0) {
			free(seen);
			free(out->of_utt);
			out->of_utt = NULL;
			return vpa_fail(err, VPA_EINPUT, NULL,
					"speaker '%s' has no trial utterance: no pseudo-speaker to inform "
					"the attacker of", spk);
		}
		if (spk_level) {
			out->of_utt[i] = (uint32_t)ts;
		} else {
			size_t cnt = 0, want = seen[set->spk[i]]++, pick = 0;
			for (size_t r = 0; r < trial->n; r++)
				if (trial->spk[r] == (uint32_t)ts)
					cnt++;
			want %= cnt;
			for (size_t r = 0; r < trial->n; r++)
				if (trial->spk[r] == (uint32_t)ts && want-- == 0) {
					pick = r;
					break;
				}
			out->of_utt[i] = user->of_utt[pick];
		}
	}
	free(seen);
	return 0;
}

int vpa_anon_build_sim(struct vpa_run_ctx *ctx, const struct vpa_anon_opts *o,
		       struct vpa_target *t, struct vpa_anon_target *a, struct vpa_err *err)
{
	const struct vpa_anon_sim_opts *sm = &o->simulate;
	struct vpa_sim_cfg sc;
	struct vpa_anon_cfg ac;
	struct vpa_anonymiser *an = NULL;
	struct vpa_embset pool, test;
	struct vpa_anon_result r;
	int rc = 0;
	vpa_embset_init(&pool);
	vpa_embset_init(&test);
	memset(&r, 0, sizeof(r));
	vpa_sim_cfg_init(&sc);
	sc.dim = (size_t)sm->dim;
	sc.spk_rank = (size_t)sm->spk_rank;
	sc.utt_rank = (size_t)sm->utt_rank;
	sc.synth_rank = (size_t)sm->synth_rank;
	sc.spk_scale = sm->spk_scale;
	sc.spk_decay = sm->spk_decay;
	sc.utt_scale = sm->utt_scale;
	sc.noise = sm->noise;
	sc.gender_sep = sm->gender_sep;
	sc.tau = sm->tau;
	sc.dur_mean = sm->dur_mean;
	sc.dur_sigma = sm->dur_sigma;
	sc.leakage = sm->leakage;
	sc.synth_noise = sm->synth_noise;
	sc.synth_gain = sm->synth_gain;
	size_t n_train = (size_t)sm->train_speakers;
	size_t u_train = (size_t)sm->train_utts;
	size_t n_pool = (size_t)sm->pool_speakers;
	size_t u_pool = (size_t)sm->pool_utts;
	size_t n_test = (size_t)sm->test_speakers;
	size_t u_enr = (size_t)sm->enroll_utts;
	size_t u_tri = (size_t)sm->trial_utts;
	size_t n_pop = (size_t)sm->population;
	vpa_anon_cfg_read(&o->anonymiser, &ac);
	uint64_t seed = vpa_anon_target_seed(ctx->seed, t->id);

	a->sim = vpa_sim_new(&sc, seed);
	vpa_sim_make_set(a->sim, "train", n_train, u_train, &a->train);
	vpa_sim_make_set(a->sim, "pool", n_pool, u_pool, &pool);
	vpa_sim_make_set(a->sim, "test", n_test, u_enr + u_tri, &test);
	/* the first enroll_utts utterances of each test speaker enrol, the rest are trials */
	size_t *ei = xmalloc(xmul(test.n, sizeof(size_t))), *ti = xmalloc(xmul(test.n, sizeof(size_t)));
	size_t ne = 0, nt = 0;
	for (size_t i = 0; i < test.n; i++) {
		if (i % (u_enr + u_tri) < u_enr)
			ei[ne++] = i;
		else
			ti[nt++] = i;
	}
	vpa_embset_subset_rows(&test, ei, ne, &a->enroll);
	vpa_embset_subset_rows(&test, ti, nt, &a->trial);
	free(ei);
	free(ti);

	if (!(an = vpa_anonymiser_new(&pool, &ac, err))) {
		rc = err->status;
		goto out;
	}
	/* the user's anonymisation of the published trials */
	if ((rc = vpa_anonymise(an, &a->trial, seed, "user", &a->trial_pseudo, err)))
		goto out;
	vpa_sim_anon_set(a->sim, &a->trial, &a->trial_pseudo, 0, "user", &a->trial_anon);
	/* the attacker's own anonymisation of enrolment and training data */
	if ((rc = vpa_anonymise(an, &a->enroll, seed, "attacker", &r, err)))
		goto out;
	vpa_sim_anon_set(a->sim, &a->enroll, &r, 0, "attacker", &a->enroll_anon);
	vpa_anon_result_release(&r);
	if ((rc = vpa_anonymise(an, &a->train, seed, "attacker", &r, err)))
		goto out;
	vpa_sim_anon_set(a->sim, &a->train, &r, 0, "attacker", &a->train_anon);
	vpa_anon_result_release(&r);
	/* informed: the enrolment re-synthesised with the trial speakers' pseudo-speakers */
	if ((rc = informed_map(&a->trial_pseudo, &a->trial, &a->enroll,
			       ac.assignment == VPA_ANON_SPEAKER, &r, err)))
		goto out;
	vpa_sim_anon_set(a->sim, &a->enroll, &r, 0, "informed", &a->enroll_informed);
	free(r.of_utt);
	memset(&r, 0, sizeof(r));
	if (n_pop) {
		vpa_sim_make_set(a->sim, "pop", n_pop, u_enr, &a->pop);
		if ((rc = vpa_anonymise(an, &a->pop, seed, "attacker", &r, err)))
			goto out;
		vpa_sim_anon_set(a->sim, &a->pop, &r, 0, "attacker", &a->pop_anon);
		vpa_anon_result_release(&r);
		if ((rc = vpa_anonymise(an, &a->pop, seed, "user", &r, err)))
			goto out;
		vpa_sim_anon_set(a->sim, &a->pop, &r, 0, "informed", &a->pop_informed);
		vpa_anon_result_release(&r);
	}
	vpa_anon_make_trials(&a->enroll, &a->trial, &a->trials);

	struct vpa_json *si = vpa_json_obj();
	vpa_json_set_num(si, "dim", (double)sc.dim);
	vpa_json_set_num(si, "leakage", sc.leakage);
	vpa_json_set_num(si, "synth_noise", sc.synth_noise);
	vpa_json_set(t->info, "simulation", si);
	vpa_anon_set_info(t->info, "pool", &pool);
out:
	vpa_anon_result_release(&r);
	vpa_anonymiser_free(an);
	vpa_embset_release(&pool);
	vpa_embset_release(&test);
	if (!rc)
		vpa_anon_cfg_info(t->info, &ac);
	return rc;
}
