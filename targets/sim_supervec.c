/*
 * targets/sim_supervec.c - the population of the federated vocal classifier:
 * users with trigger-phrase supervectors (26 MFCCs x 20 HMM-state means =
 * 520 dimensions, Granqvist et al. 2020 section 3), a speaker identity and a
 * private side-information class, simulated or imported.  The model is in
 * targets/fl_speaker.h; targets/README.md discusses what it shows.
 */
#include "targets/fl_speaker.h"
#include "formats/embset.h"
#include "formats/kaldi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void vpa_fls_pop_release(struct vpa_fls_pop *p)
{
	if (!p)
		return;
	free(p->x);
	free(p->off);
	free(p->cls);
	if (p->class_name)
		for (size_t i = 0; i < p->n_classes; i++)
			free(p->class_name[i]);
	free(p->class_name);
	if (p->user)
		for (size_t i = 0; i < p->n_users; i++)
			free(p->user[i]);
	free(p->user);
	memset(p, 0, sizeof(*p));
}

void vpa_fls_sim_opts_init(struct vpa_fls_sim_opts *o)
{
	o->n_users = 4000;
	o->n_utts = 8;
	o->n_classes = 6;
	o->spk_rank = 40;
	o->spk_scale = 0.3;
	o->class_shift = 0.12;
	o->noise = 1;
	o->seed = 1;
}

int vpa_fls_simulate(const struct vpa_fls_sim_opts *o, struct vpa_fls_pop *out,
		     struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	if (o->n_users < 1 || o->n_utts < 1 || o->n_classes < 2 || o->spk_rank < 1)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"simulation needs users >= 1, utterances >= 1, classes >= 2, rank >= 1");
	const size_t D = VPA_FLS_DIM, R = o->spk_rank, K = o->n_classes;
	struct vpa_rng rng;
	double *mean = xmalloc(xmul(D, sizeof(double)));
	double *V = xmalloc(xmul(xmul(D, R), sizeof(double)));
	double *B = xmalloc(xmul(xmul(D, K), sizeof(double)));
	double *y = xmalloc(xmul(R, sizeof(double)));
	/* the population's model: a mean supervector whose MFCC trajectories are
	   smooth across the HMM states, the speaker subspace, the class offsets */
	vpa_rng_split(&rng, o->seed, "fls/sim/model");
	for (size_t c = 0; c < VPA_FLS_MFCC; c++) {
		double base = vpa_rng_normal(&rng), amp = 0.5 * vpa_rng_normal(&rng);
		double freq = 1 + (double)(c % 3);
		for (size_t s = 0; s < VPA_FLS_STATES; s++)
			mean[s * VPA_FLS_MFCC + c] =
				base + amp * sin(M_PI * freq * (s + 0.5) / VPA_FLS_STATES);
	}
	double vs = o->spk_scale / sqrt((double)R);
	for (size_t i = 0; i < D * R; i++)
		V[i] = vs * vpa_rng_normal(&rng);
	for (size_t i = 0; i < D * K; i++)
		B[i] = vpa_rng_normal(&rng);

	out->n_users = o->n_users;
	out->d = D;
	out->n_classes = K;
	out->n_rows = xmul(o->n_users, o->n_utts);
	out->x = xmalloc(xmul(xmul(out->n_rows, D), sizeof(float)));
	out->off = xmalloc(xmul(o->n_users + 1, sizeof(size_t)));
	out->cls = xmalloc(xmul(o->n_users, sizeof(uint32_t)));
	out->class_name = xmalloc(xmul(K, sizeof(char *)));
	out->user = xmalloc(xmul(o->n_users, sizeof(char *)));
	for (size_t k = 0; k < K; k++) {
		char b[32];
		snprintf(b, sizeof(b), "c%zu", k);
		out->class_name[k] = xstrdup(b);
	}
	double *sv = xmalloc(xmul(D, sizeof(double)));
	for (size_t u = 0; u < o->n_users; u++) {
		char name[64];
		snprintf(name, sizeof(name), "u%05zu", u);
		out->user[u] = xstrdup(name);
		snprintf(name, sizeof(name), "fls/sim/user/%zu", u);
		vpa_rng_split(&rng, o->seed, name);
		uint32_t c = (uint32_t)vpa_rng_below(&rng, K);
		out->cls[u] = c;
		for (size_t r = 0; r < R; r++)
			y[r] = vpa_rng_normal(&rng);
		for (size_t i = 0; i < D; i++) {
			double s = mean[i] + o->class_shift * B[c * D + i];
			const double *v = V + i * R;
			for (size_t r = 0; r < R; r++)
				s += v[r] * y[r];
			sv[i] = s;
		}
		out->off[u] = u * o->n_utts;
		for (size_t j = 0; j < o->n_utts; j++) {
			float *x = out->x + (u * o->n_utts + j) * D;
			for (size_t i = 0; i < D; i++)
				x[i] = (float)(sv[i] + o->noise * vpa_rng_normal(&rng));
		}
	}
	out->off[o->n_users] = out->n_rows;
	free(sv);
	free(mean);
	free(V);
	free(B);
	free(y);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int vpa_fls_import(const char *vectors, const char *utt2user, const char *labels,
		   struct vpa_fls_pop *out, struct vpa_err *err)
{
	struct vpa_embset es;
	struct vpa_kaldi_list lab;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	vpa_embset_init(&es);
	vpa_kaldi_list_init(&lab);
	size_t n = strlen(vectors);
	int npy = n >= 4 && !strcmp(vectors + n - 4, ".npy");
	struct vpa_embset_src src = {vectors, npy ? utt2user : NULL, npy ? NULL : utt2user,
				     NULL, NULL, 0};
	char **cls_sorted = NULL;
	uint32_t *ucls = NULL;
	if ((rc = vpa_embset_import(&src, &es, err)))
		goto out;
	if (npy) {
		/* a one-column id list gives no user: every utterance is its own user */
		struct vpa_kaldi_list ids;
		vpa_kaldi_list_init(&ids);
		rc = vpa_kaldi_read_list(utt2user, 0, &ids, err);
		if (!rc && ids.ncols != 2)
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "%s: expected two columns `utterance user`, found one", utt2user);
		vpa_kaldi_list_release(&ids);
		if (rc)
			goto out;
	}
	if ((rc = vpa_kaldi_read_list(labels, 2, &lab, err)))
		goto out;
	ucls = xmalloc(xmul(es.n_spk, sizeof(uint32_t)));
	for (size_t s = 0; s < es.n_spk; s++)
		ucls[s] = UINT32_MAX;
	/* class names, sorted */
	cls_sorted = xmalloc(xmul(lab.n, sizeof(char *)));
	for (size_t i = 0; i < lab.n; i++)
		cls_sorted[i] = lab.f[i * 2 + 1];
	qsort(cls_sorted, lab.n, sizeof(char *), cmp_str);
	size_t K = 0;
	for (size_t i = 0; i < lab.n; i++)
		if (K == 0 || strcmp(cls_sorted[K - 1], cls_sorted[i]))
			cls_sorted[K++] = cls_sorted[i];
	if (K < 2) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "%s: the side information needs at least 2 classes, found %zu", labels, K);
		goto out;
	}
	for (size_t i = 0; i < lab.n; i++) {
		long s = vpa_embset_find_spk(&es, lab.f[i * 2]);
		if (s < 0)
			continue; /* a user without vectors is ignored (as Kaldi lists) */
		if (ucls[s] != UINT32_MAX) {
			struct vpa_loc loc = {labels, lab.line[i], 0};
			rc = vpa_fail(err, VPA_EINPUT, &loc, "duplicate user '%s'", lab.f[i * 2]);
			goto out;
		}
		const char *key = lab.f[i * 2 + 1];
		char **hit = bsearch(&key, cls_sorted, K, sizeof(char *), cmp_str);
		ucls[s] = (uint32_t)(hit - cls_sorted);
	}
	for (size_t s = 0; s < es.n_spk; s++)
		if (ucls[s] == UINT32_MAX) {
			rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no class for user '%s'", labels,
				      es.spk_id[s]);
			goto out;
		}
	/* group the rows by user, users in order of first appearance */
	out->n_users = es.n_spk;
	out->d = es.d;
	out->n_classes = K;
	out->n_rows = es.n;
	out->x = xmalloc(xmul(xmul(es.n, es.d), sizeof(float)));
	out->off = xcalloc(es.n_spk + 1, sizeof(size_t));
	out->cls = ucls;
	ucls = NULL;
	out->class_name = xmalloc(xmul(K, sizeof(char *)));
	for (size_t k = 0; k < K; k++)
		out->class_name[k] = xstrdup(cls_sorted[k]);
	out->user = xmalloc(xmul(es.n_spk, sizeof(char *)));
	for (size_t s = 0; s < es.n_spk; s++)
		out->user[s] = xstrdup(es.spk_id[s]);
	for (size_t i = 0; i < es.n; i++)
		out->off[es.spk[i] + 1]++;
	for (size_t s = 0; s < es.n_spk; s++)
		out->off[s + 1] += out->off[s];
	size_t *fill = xmalloc(xmul(es.n_spk, sizeof(size_t)));
	memcpy(fill, out->off, es.n_spk * sizeof(size_t));
	for (size_t i = 0; i < es.n && !rc; i++) {
		size_t r = fill[es.spk[i]]++;
		for (size_t j = 0; j < es.d; j++) {
			double v = es.x[i * es.d + j];
			if (fabs(v) > 1e30) {
				rc = vpa_fail(err, VPA_EINPUT, NULL,
					      "%s: utterance '%s' has a value out of range (%g): "
					      "expected |x| <= 1e30", vectors, es.utt[i], v);
				break;
			}
			out->x[r * es.d + j] = (float)v;
		}
	}
	free(fill);
out:
	if (rc)
		vpa_fls_pop_release(out);
	free(ucls);
	free(cls_sorted);
	vpa_kaldi_list_release(&lab);
	vpa_embset_release(&es);
	return rc;
}
