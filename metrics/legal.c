/*
 * metrics/legal.c - the Article 29 Working Party's criteria (Opinion 05/2014)
 * as measured by Vauquier, Srivastava, Hosseini and Vincent ("Legally
 * validated evaluation framework for voice anonymization", Interspeech 2025):
 *
 * pi_link, closed-set linkability: a test conversation of speaker i is linked
 * when its score against i's enrolment is above the scores of N'-1 other
 * enrolment speakers drawn without replacement.  The EXACT estimator: with
 * m_i the number of other enrolments scoring strictly higher (ties go to the
 * true speaker, as the paper's reference code), the success probability over
 * every draw of the N'-1 candidates is C(n-1-m_i, N'-1) / C(n-1, N'-1)
 * (the candidates must all come from the n-1-m_i that do not beat i); the
 * mean over test items is pi_link, chance 1/N'.  No sampling, so no seed.
 *
 * pi_sing, predicate singling out (Cohen and Nissim 2020): the predicate of
 * enrolment j fires on a test embedding whose score exceeds tau_j, calibrated
 * on held-out conversations of the same speakers to fire on 1/N of them; it
 * isolates when, in N test embeddings of N different speakers, it fires on
 * exactly one.  Exact over the random draws: with p_k the fraction of speaker
 * k's test conversations that fire, the probability over a uniform N-subset
 * of speakers (one uniform conversation each) that exactly one fires comes
 * from a dynamic programme over speakers (isolation() below), averaged over
 * the enrolments.  Baseline: a predicate firing with probability 1/N on
 * everyone isolates with N (1/N)(1 - 1/N)^(N-1) -> e^-1.
 *
 * Intervals, sampling-free (no bootstrap, so identical for any seed and
 * thread count): pi_link averages over test items, which are clustered by
 * speaker (a speaker's conversations share a voice), so its interval is the
 * cluster-robust (CR1) t interval of the item mean with the test speakers as
 * clusters: Var = k/(k-1) sum_s (T_s - n_s mean)^2 / n^2, T_s the sum over
 * speaker s, k speakers, t quantile with k-1 degrees of freedom.  pi_sing is
 * one exact value per enrolment speaker: the t interval of their mean.  Both
 * clipped to [0, 1].  The t quantile is the Cornish-Fisher expansion of
 * Abramowitz and Stegun 26.7.5 (error below 1e-3 from 3 degrees of freedom;
 * tests/unit/test_legal.c checks published values); fewer than 3 clusters
 * give no interval (NaN).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sv_metrics.h"

size_t vpa_pilink_beaten(const double *row, size_t n, size_t true_idx)
{
	double s = row[true_idx];
	size_t m = 0;
	for (size_t j = 0; j < n; j++)
		m += j != true_idx && row[j] > s;
	return m;
}

double vpa_pilink_prob(size_t n, size_t m, size_t np)
{
	if (np < 1 || np > n || m >= n)
		return NAN;
	size_t a = n - 1 - m, b = n - 1, k = np - 1;
	if (k == 0)
		return 1;
	if (a < k)
		return 0;
	/* log C(a, k) - log C(b, k) as a sum over the m impostors that beat:
	 * C(a - 1, k) / C(a, k) = 1 - k / a, so log P = sum_{j<m} log1p(-k /
	 * (b - j)): log space, no lgamma cancellation (lgamma(1e6) ~ 1.3e7 would
	 * cost 1e-9 relative), nothing overflows where C() does */
	double l = 0;
	for (size_t j = 0; j < m; j++)
		l += log1p(-(double)k / (double)(b - j));
	return exp(l);
}

double vpa_t_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	double z = sv_probit(p), z2 = z * z;
	double g1 = (z2 + 1) * z / 4;
	double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
	double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
	double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
	return z + g1 / df + g2 / (df * df) + g3 / (df * df * df) + g4 / (df * df * df * df);
}

/* Mean of v (n items) with the CR1 cluster-robust t interval, clusters
 * cl[i] < ncl (sample size k = clusters that have items). */
static void cluster_interval(const double *v, const uint32_t *cl, size_t n, size_t ncl,
			     double level, double *mean, double *lo, double *hi, size_t *k_out)
{
	double *T = xcalloc(ncl ? ncl : 1, sizeof(double));
	size_t *c = xcalloc(ncl ? ncl : 1, sizeof(size_t));
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		T[cl[i]] += v[i];
		c[cl[i]]++;
		sum += v[i];
	}
	double mu = sum / (double)n, ss = 0;
	size_t k = 0;
	for (size_t s = 0; s < ncl; s++)
		if (c[s]) {
			double d = T[s] - (double)c[s] * mu;
			ss += d * d;
			k++;
		}
	*mean = mu;
	*k_out = k;
	*lo = *hi = NAN;
	if (k >= 3 && level > 0 && level < 1) {
		double se = sqrt((double)k / (double)(k - 1) * ss) / (double)n;
		double t = vpa_t_quantile((1 + level) / 2, (double)(k - 1));
		*lo = fmax(0, mu - t * se);
		*hi = fmin(1, mu + t * se);
	}
	free(T);
	free(c);
}

int vpa_pilink(const size_t *m, const uint32_t *spk, size_t n_items, size_t n_spk, size_t n_cand,
	       size_t np, double level, struct vpa_legal_est *out, struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!n_items)
		return vpa_fail(err, VPA_EINPUT, NULL, "pi_link needs at least one test item");
	if (np < 1 || np > n_cand)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"pi_link: N' = %zu is outside 1..%zu (the enrolment speakers)", np,
				n_cand);
	/* P by m for every m: one pass of the same log-space recurrence */
	double *P = xmalloc(xmul(n_cand, sizeof(double)));
	double l = 0;
	size_t k = np - 1;
	for (size_t mm = 0; mm < n_cand; mm++) {
		P[mm] = n_cand - 1 - mm < k ? 0 : exp(l);
		if (n_cand - 1 - mm > k)
			l += log1p(-(double)k / (double)(n_cand - 1 - mm));
	}
	double *v = xmalloc(xmul(n_items, sizeof(double)));
	for (size_t i = 0; i < n_items; i++) {
		if (m[i] >= n_cand || spk[i] >= n_spk) {
			free(v);
			free(P);
			return vpa_fail(err, VPA_EINPUT, NULL, "pi_link: item %zu is out of range",
					i + 1);
		}
		v[i] = P[m[i]];
	}
	cluster_interval(v, spk, n_items, n_spk, level, &out->value, &out->lo, &out->hi,
			 &out->n_spk);
	out->chance = 1.0 / (double)np;
	out->n_items = n_items;
	out->n_set = np;
	free(v);
	free(P);
	return 0;
}

double vpa_pising_baseline(size_t N)
{
	if (N < 1)
		return NAN;
	if (N == 1)
		return 1;
	return pow(1 - 1.0 / (double)N, (double)(N - 1));
}

/* tau of vpa_pising_threshold on scores already sorted ascending */
static double tau_sorted(const double *c, size_t M, size_t N)
{
	/* fire on the k = round(M/N) highest (at least one): tau is the (k+1)-th
	 * highest, and "score > tau" fires on exactly k when the scores are
	 * distinct (ties at tau do not fire: the predicate is a strict one) */
	size_t k = (size_t)floor((double)M / (double)N + 0.5);
	if (k < 1)
		k = 1;
	if (k >= M)
		return -INFINITY;
	return c[M - 1 - k];
}

double vpa_pising_threshold(double *c, size_t M, size_t N)
{
	if (!M || !N)
		return NAN;
	vpa_sort_scores(c, NULL, M);
	return tau_sorted(c, M, N);
}

double vpa_pising_isolation(const double *p, size_t n, size_t N, double *work)
{
	if (N < 1 || N > n)
		return NAN;
	/* a[r], b[r]: over the uniform r-subsets of the speakers seen so far, the
	 * mean probability that none / exactly one fires.  Adding speaker l + 1
	 * (l seen): an r-subset of l + 1 leaves it out with probability
	 * (l + 1 - r) / (l + 1), takes it with r / (l + 1); averages, not sums of
	 * C(n, r) terms, so nothing overflows at n = 1e6 */
	double *a = work, *b = work + N + 1;
	for (size_t r = 0; r <= N; r++)
		a[r] = b[r] = 0;
	a[0] = 1;
	for (size_t l = 0; l < n; l++) {
		double pl = p[l], ql = 1 - pl, L1 = (double)(l + 1);
		size_t top = l + 1 < N ? l + 1 : N;
		for (size_t r = top; r >= 1; r--) {
			double keep = (double)(l + 1 - r) / L1, take = (double)r / L1;
			b[r] = b[r] * keep + (b[r - 1] * ql + a[r - 1] * pl) * take;
			a[r] = a[r] * keep + a[r - 1] * ql * take;
		}
	}
	return b[N];
}

int vpa_pising(const double *calib, const uint32_t *cal_spk, size_t n_cal, const double *test,
	       const uint32_t *test_spk, size_t n_test, size_t n_spk, size_t n_enr,
	       const size_t *Ns, size_t n_N, double level, struct vpa_legal_est *out,
	       struct vpa_err *err)
{
	if (!n_cal || !n_test || !n_enr)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"pi_sing needs calibration items, test items and enrolments");
	size_t *cnt = xcalloc(n_spk ? n_spk : 1, sizeof(size_t));
	size_t k_spk = 0, maxN = 0;
	for (size_t i = 0; i < n_test; i++) {
		if (test_spk[i] >= n_spk) {
			free(cnt);
			return vpa_fail(err, VPA_EINPUT, NULL, "pi_sing: test item %zu out of range",
					i + 1);
		}
		k_spk += !cnt[test_spk[i]]++;
	}
	for (size_t g = 0; g < n_N; g++) {
		if (Ns[g] < 1 || Ns[g] > k_spk) {
			free(cnt);
			return vpa_fail(err, VPA_EINPUT, NULL,
					"pi_sing: N = %zu is outside 1..%zu (the test speakers)", Ns[g],
					k_spk);
		}
		maxN = Ns[g] > maxN ? Ns[g] : maxN;
	}
	(void)cal_spk; /* the calibration set's speakers are the test's: only its scores count */
	double *c = xmalloc(xmul(n_cal, sizeof(double)));
	double *fire = xmalloc(xmul(n_spk ? n_spk : 1, sizeof(double)));
	double *p = xmalloc(xmul(k_spk, sizeof(double)));
	double *work = xmalloc(xmul(2 * (maxN + 1), sizeof(double)));
	double *per = xmalloc(xmul(xmul(n_N ? n_N : 1, n_enr), sizeof(double)));
	for (size_t j = 0; j < n_enr; j++) {
		const double *cr = calib + j * n_cal, *tr = test + j * n_test;
		memcpy(c, cr, n_cal * sizeof(double));
		vpa_sort_scores(c, NULL, n_cal); /* once per enrolment, for every N */
		for (size_t g = 0; g < n_N; g++) {
			size_t N = Ns[g];
			double tau = tau_sorted(c, n_cal, N);
			memset(fire, 0, n_spk * sizeof(double));
			for (size_t i = 0; i < n_test; i++)
				fire[test_spk[i]] += tr[i] > tau;
			size_t q = 0;
			for (size_t s = 0; s < n_spk; s++)
				if (cnt[s])
					p[q++] = fire[s] / (double)cnt[s];
			per[g * n_enr + j] = vpa_pising_isolation(p, k_spk, N, work);
		}
	}
	/* one exact value per enrolment: the t interval of their mean */
	uint32_t *id = xmalloc(xmul(n_enr, sizeof(uint32_t)));
	for (size_t j = 0; j < n_enr; j++)
		id[j] = (uint32_t)j;
	for (size_t g = 0; g < n_N; g++) {
		struct vpa_legal_est *o = &out[g];
		memset(o, 0, sizeof(*o));
		size_t kk;
		cluster_interval(per + g * n_enr, id, n_enr, n_enr, level, &o->value, &o->lo, &o->hi,
				 &kk);
		o->n_spk = k_spk;
		o->n_items = n_test;
		o->n_set = Ns[g];
		o->chance = vpa_pising_baseline(Ns[g]);
	}
	free(id);
	free(c);
	free(fire);
	free(p);
	free(work);
	free(per);
	free(cnt);
	return 0;
}
