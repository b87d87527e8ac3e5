/*
 * attacks/linkage_gender.c - the per-gender records of the `linkage` attack
 * (`per_gender: true`, issue 17): every attacker's trials split by the
 * enrolment speaker's gender, as the VoicePrivacy trials_f / trials_m lists,
 * each a record named ATTACKER/LIST_f or ATTACKER/LIST_m beside the pooled
 * record ATTACKER, with every metric of the pooled one (G_VD on the trial
 * utterances of that gender).
 */
#include "attacks/linkage_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double ddiag_gender(const struct vpa_backend *b, const struct vpa_embset *es, char g)
{
	size_t *idx = xmalloc(xmul(es->n ? es->n : 1, sizeof(size_t))), k = 0;
	for (size_t i = 0; i < es->n; i++)
		if (vpa_embset_utt_gender(es, i) == g)
			idx[k++] = i;
	struct vpa_embset sub;
	vpa_embset_init(&sub);
	vpa_embset_subset_rows(es, idx, k, &sub);
	double d = k ? vpa_linkage_ddiag(b, &sub) : NAN;
	vpa_embset_release(&sub);
	free(idx);
	return d;
}

int vpa_linkage_gender_records(struct vpa_run_ctx *ctx, const char *id, const char *attacker,
			       const char *list, const struct vpa_anon_trials *tr, const double *S,
			       const struct vpa_embset *e, const struct vpa_embset *te,
			       const struct vpa_linkage_gvd *gv, const struct vpa_eval_opts *o,
			       struct vpa_attack_out *out, struct vpa_err *err)
{
	static const char G[2] = {'f', 'm'};
	if (!e->gender) {
		vpa_ctx_warn(ctx, "%s.%s: no per-gender records: the enrolment speakers have no gender "
				  "(spk2gender)", id, attacker);
		return 0;
	}
	int rc = 0;
	struct vpa_anon_trials sub;
	sub.e = xmalloc(xmul(tr->n ? tr->n : 1, sizeof(uint32_t)));
	sub.t = xmalloc(xmul(tr->n ? tr->n : 1, sizeof(uint32_t)));
	sub.tar = xmalloc(tr->n ? tr->n : 1);
	for (int gi = 0; gi < 2 && !rc; gi++) {
		sub.n = 0;
		for (size_t i = 0; i < tr->n; i++)
			if (e->gender[tr->e[i]] == G[gi]) {
				sub.e[sub.n] = tr->e[i];
				sub.t[sub.n] = tr->t[i];
				sub.tar[sub.n++] = tr->tar[i];
			}
		if (!sub.n)
			continue;
		struct vpa_trials t;
		vpa_linkage_make_trials(&sub, S, te->n, e, te, &t);
		char name[512], lname[300];
		snprintf(lname, sizeof(lname), "%s_%c", list, G[gi]);
		snprintf(name, sizeof(name), "%s/%s", attacker, lname);
		if (!t.n_tar || !t.n_non) {
			vpa_ctx_warn(ctx, "%s.%s: no record: the %s trials have no %s trial", id, name,
				     G[gi] == 'f' ? "female" : "male",
				     t.n_tar ? "non-target" : "target");
			vpa_trials_release(&t);
			continue;
		}
		/* the pooled record carries the figures */
		struct vpa_json *figs = out->figures;
		out->figures = NULL;
		size_t before = out->records->n;
		rc = vpa_record_from_scores(ctx, id, name, -1, &t, o, out, NULL, err);
		out->figures = figs;
		vpa_trials_release(&t);
		if (rc)
			break;
		struct vpa_json *rec = out->records->items[before];
		vpa_json_set_str(rec, "trials", lname);
		char gs[2] = {G[gi], 0};
		vpa_json_set_str(rec, "gender", gs);
		if (gv) {
			double oo = ddiag_gender(gv->b_orig, gv->trial, G[gi]);
			double aa = gv->baseline ? oo : ddiag_gender(gv->b, te, G[gi]);
			vpa_json_set_num(vpa_json_get(rec, "metrics"), "gvd", 10 * log10(aa / oo));
			vpa_record_mark_undefined(rec);
		}
	}
	free(sub.e);
	free(sub.t);
	free(sub.tar);
	return rc;
}
