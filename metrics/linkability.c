/*
 * metrics/linkability.c - global linkability D<->sys (Gomez-Barrero et al.,
 * "General framework to evaluate unlinkability in biometric template
 * protection systems", IEEE TIFS 2017), computed exactly as the VoicePrivacy
 * Challenge / INRIA anonymization_metrics `linkability(mated, nonmated,
 * omega)`:
 *
 *   n_bins  = min(floor(n_mated / 10), 100)
 *   edges   = numpy.linspace(min(both), max(both), n_bins + 1)
 *             (edge i = i * step + min with step = (max - min) / n_bins, the
 *             last edge = max)
 *   y1, y2  = numpy.histogram(mated / non-mated, edges, density=True):
 *             bin i holds edge_i <= s < edge_i+1, the LAST bin is closed;
 *             density = (count / bin width) / total count
 *   LR      = y1 / y2 where y2 != 0, else 1
 *   D       = 2 omega LR / (1 + omega LR) - 1, 0 where omega LR <= 1,
 *             1 where y2 == 0 and y1 != 0
 *   D<->sys = numpy.trapz(D * y1, bin centres)
 *
 * Consequences of the reference that we keep, so numbers compare:
 *  - the integral runs between the first and the last bin CENTRE, so even
 *    perfectly separated scores give a little less than 1;
 *  - with 10..19 mated scores there is one bin and the integral is 0;
 *  - bins are equal-width, so D<->sys is invariant under affine maps of the
 *    scores (a x + b, a > 0) but not under other monotone maps.
 * With fewer than 10 mated scores there is no bin: defined = 0, dsys = NAN
 * (never a silent 0).  If every score is the same value (no bin width), the
 * scores carry no information: defined = 1, dsys = 0, no bins (numpy would
 * divide by a zero width and return NaN).
 *
 * Beside D<->sys, dsys_hist = sum over bins of D(bin) P(mated in bin), the
 * exact integral of the same histogram estimate (D is constant on a bin and
 * P(mated in bin) = y1 * width): 1 for perfectly separated scores when no
 * bin holds both classes.  When the default rule gives fewer than
 * VPA_LINK_MIN_BINS bins (10..49 mated scores) and the caller did not fix
 * n_bins, dsys_hist uses VPA_LINK_MIN_BINS bins over the same range: one bin
 * holding both classes has D = 0 whatever the scores, so with 10..19 mated
 * scores no one-bin histogram could show a perfect attack.
 *
 * The bin of each score is found by comparing with the computed edges (as
 * numpy's searchsorted does), not by rounding (s - min) / step, so a score
 * that lands exactly on a computed edge goes where numpy puts it.  The sum
 * in trapz follows numpy's pairwise summation for <= 128 terms, so results
 * match numpy to the last bit in the cases tested.
 */
#include "sv_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* numpy pairwise_sum for n <= 128 (8 accumulators, then the tail) */
static double np_sum(const double *a, size_t n)
{
	if (n < 8) {
		double r = 0;
		for (size_t i = 0; i < n; i++)
			r += a[i];
		return r;
	}
	if (n > 128) { /* not reached (n_bins <= 100 by default); plain sum */
		double r = 0;
		for (size_t i = 0; i < n; i++)
			r += a[i];
		return r;
	}
	double r[8];
	size_t i;
	for (int k = 0; k < 8; k++)
		r[k] = a[k];
	for (i = 8; i < n - (n % 8); i += 8)
		for (int k = 0; k < 8; k++)
			r[k] += a[i + k];
	double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
	for (; i < n; i++)
		res += a[i];
	return res;
}

/* numpy.linspace(lo, hi, nb + 1) */
void vpa_linkability_edges(double lo, double hi, size_t nb, double *e)
{
	double delta = hi - lo, step = delta / (double)nb;
	if (!isfinite(delta)) {
		/* the range overflows a double: interpolate without forming it */
		for (size_t i = 0; i < nb; i++) {
			double f = (double)i / (double)nb;
			e[i] = lo * (1 - f) + hi * f;
		}
	} else if (step == 0) {
		for (size_t i = 0; i < nb; i++)
			e[i] = (double)i / (double)nb * delta + lo;
	} else {
		for (size_t i = 0; i < nb; i++)
			e[i] = (double)i * step + lo;
	}
	e[nb] = hi;
}

/* first index with a[i] >= v */
static size_t lower_bound(const double *a, size_t n, double v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (a[m] < v)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

static void count_bins(const double *a, const double *w, size_t n, int sorted,
		       const double *e, size_t nb, double *cnt)
{
	memset(cnt, 0, nb * sizeof *cnt);
	if (sorted && !w) {
		/* searchsorted on the edges: O(n_bins log n) */
		size_t prev = lower_bound(a, n, e[0]);
		for (size_t b = 0; b < nb; b++) {
			size_t next = b + 1 < nb ? lower_bound(a, n, e[b + 1]) : n;
			cnt[b] = (double)(next - prev);
			prev = next;
		}
		return;
	}
	if (sorted) {
		size_t b = 0;
		for (size_t i = 0; i < n; i++) {
			if (w[i] == 0)
				continue;
			while (b + 1 < nb && a[i] >= e[b + 1])
				b++;
			cnt[b] += w[i];
		}
		return;
	}
	double lo = e[0], step = (e[nb] - e[0]) / (double)nb;
	double inv = step > 0 && isfinite(step) ? 1 / step : 0; /* 0: start at bin 0 and walk */
	for (size_t i = 0; i < n; i++) {
		double wi = SV_W(w, i);
		if (wi == 0)
			continue;
		cnt[vpa_linkability_bin(a[i], e, nb, lo, inv)] += wi;
	}
}

/* min and max over trials of positive weight */
static void range_of(const double *a, const double *w, size_t n, int sorted, double *lo,
		     double *hi)
{
	if (sorted && !w) {
		if (n) {
			if (a[0] < *lo)
				*lo = a[0];
			if (a[n - 1] > *hi)
				*hi = a[n - 1];
		}
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (w && w[i] == 0)
			continue;
		if (a[i] < *lo)
			*lo = a[i];
		if (a[i] > *hi)
			*hi = a[i];
	}
}

void vpa_linkability_release(struct vpa_linkability *l)
{
	if (!l)
		return;
	free(l->centers);
	free(l->p_mated);
	free(l->p_non);
	free(l->d_local);
	l->centers = l->p_mated = l->p_non = l->d_local = NULL;
	l->n_bins = l->n_bins_mated = 0;
}

/* Local D of a bin from its two class densities (the VoicePrivacy rule). */
static double local_d(double y1, double y2, double omega)
{
	double lr = y2 != 0 ? y1 / y2 : 1;
	double d = 2 * (omega * lr / (1 + omega * lr)) - 1;
	if (omega * lr <= 1)
		d = 0;
	if (y2 == 0 && y1 != 0)
		d = 1;
	return d;
}

/* sum over nb bins on [lo, hi] of D(bin) * P(mated in bin); -1 when a bin is
 * empty in width (too narrow a range). */
static double hist_integral(const struct vpa_scores *s, int sorted, double lo, double hi,
			    size_t nb, double omega)
{
	double *e = xmalloc(xmul(nb + 1, sizeof *e));
	double *c1 = xmalloc(xmul(nb, sizeof *c1)), *c2 = xmalloc(xmul(nb, sizeof *c2));
	double *f = xmalloc(xmul(nb, sizeof *f));
	double r = -1;
	vpa_linkability_edges(lo, hi, nb, e);
	for (size_t b = 0; b < nb; b++)
		if (!(e[b + 1] > e[b]))
			goto out;
	count_bins(s->tar, s->w_tar, s->n_tar, sorted, e, nb, c1);
	count_bins(s->non, s->w_non, s->n_non, sorted, e, nb, c2);
	double S1 = np_sum(c1, nb), S2 = np_sum(c2, nb);
	for (size_t b = 0; b < nb; b++) {
		double db = e[b + 1] - e[b];
		f[b] = local_d(c1[b] / db / S1, c2[b] / db / S2, omega) * c1[b];
	}
	/* one division at the end: D = 1 on every bin gives exactly S1 / S1 = 1 */
	r = np_sum(f, nb) / S1;
out:
	free(f);
	free(c2);
	free(c1);
	free(e);
	return r;
}

static int link_core(const struct vpa_scores *s, double omega, size_t n_bins, int sorted,
		     struct vpa_linkability *out, struct vpa_err *err)
{
	memset(out, 0, sizeof *out);
	out->dsys = out->dsys_hist = NAN;
	if (!s || s->n_non == 0 || !s->non)
		return vpa_fail(err, VPA_EINPUT, NULL, "no non-target scores");
	if (!(omega > 0) || !isfinite(omega))
		return vpa_fail(err, VPA_EINPUT, NULL, "omega must be a positive number, got %g",
				omega);
	double W1 = s->tar ? sv_total(s->w_tar, s->n_tar) : 0;
	double W2 = sv_total(s->w_non, s->n_non);
	if (!(W2 > 0))
		return vpa_fail(err, VPA_EINPUT, NULL, "non-target weights sum to zero");
	if (!(W1 >= 10))
		return 0; /* fewer than 10 mated scores: undefined */

	size_t nb = n_bins;
	if (nb == 0) {
		double f = floor(W1 / 10);
		nb = f < 100 ? (size_t)f : 100;
	}
	double lo = INFINITY, hi = -INFINITY;
	range_of(s->tar, s->w_tar, s->n_tar, sorted, &lo, &hi);
	range_of(s->non, s->w_non, s->n_non, sorted, &lo, &hi);
	out->defined = 1;
	if (lo == hi) {
		out->dsys = out->dsys_hist = 0;
		return 0;
	}

	int rc = 0;
	double *e = xmalloc(xmul(nb + 1, sizeof *e));
	double *c1 = xmalloc(xmul(nb, sizeof *c1)), *c2 = xmalloc(xmul(nb, sizeof *c2));
	double *f = xmalloc(xmul(nb, sizeof *f));
	vpa_linkability_edges(lo, hi, nb, e);
	for (size_t b = 0; b < nb; b++) {
		if (!(e[b + 1] > e[b])) {
			out->defined = 0;
			rc = vpa_fail(err, VPA_ENUMERIC, NULL,
				      "linkability: score range %g..%g too narrow for %zu bins", lo,
				      hi, nb);
			goto out;
		}
	}
	count_bins(s->tar, s->w_tar, s->n_tar, sorted, e, nb, c1);
	count_bins(s->non, s->w_non, s->n_non, sorted, e, nb, c2);
	double S1 = np_sum(c1, nb), S2 = np_sum(c2, nb);

	out->n_bins = nb;
	out->centers = xmalloc(xmul(nb, sizeof(double)));
	out->p_mated = xmalloc(xmul(nb, sizeof(double)));
	out->p_non = xmalloc(xmul(nb, sizeof(double)));
	out->d_local = xmalloc(xmul(nb, sizeof(double)));
	for (size_t b = 0; b < nb; b++) {
		double db = e[b + 1] - e[b];
		double y1 = c1[b] / db / S1, y2 = c2[b] / db / S2;
		out->centers[b] = (e[b + 1] + e[b]) / 2;
		out->p_mated[b] = y1;
		out->p_non[b] = y2;
		out->d_local[b] = local_d(y1, y2, omega);
		out->n_bins_mated += c1[b] > 0;
		f[b] = out->d_local[b] * c1[b];
	}
	if (n_bins == 0 && nb < VPA_LINK_MIN_BINS) {
		out->dsys_hist = hist_integral(s, sorted, lo, hi, VPA_LINK_MIN_BINS, omega);
		if (out->dsys_hist < 0)
			out->dsys_hist = NAN; /* range too narrow for the finer bins */
	} else {
		out->dsys_hist = np_sum(f, nb) / S1; /* exactly 1 when D = 1 on every mated bin */
	}
	/* trapz(D * y1, centres) */
	for (size_t b = 0; b + 1 < nb; b++) {
		double dx = out->centers[b + 1] - out->centers[b];
		double ya = out->d_local[b] * out->p_mated[b];
		double yb = out->d_local[b + 1] * out->p_mated[b + 1];
		f[b] = dx * (yb + ya) / 2.0;
	}
	out->dsys = np_sum(f, nb - 1);
out:
	free(f);
	free(c2);
	free(c1);
	free(e);
	if (rc) {
		vpa_linkability_release(out);
		out->dsys = out->dsys_hist = NAN;
	}
	return rc;
}

int vpa_linkability(const struct vpa_scores *s, double omega, size_t n_bins,
		    struct vpa_linkability *out, struct vpa_err *err)
{
	return link_core(s, omega, n_bins, 0, out, err);
}

int sv_linkability_sorted(const struct vpa_scores *s, double omega, size_t n_bins,
			  struct vpa_linkability *out, struct vpa_err *err)
{
	return link_core(s, omega, n_bins, 1, out, err);
}
