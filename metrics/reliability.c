/*
 * metrics/reliability.c - which metrics of a score set cannot be trusted
 * (metrics/README.md "Reliability"): a number that cannot show a leak is not
 * evidence of privacy, so every metric computed from too few trials, or
 * otherwise unable to show a leak, is named with its reason.
 *
 * Rules (the constants are in metrics.h):
 *  - every score-set metric: fewer than VPA_MIN_TARGET (100) target or
 *    VPA_MIN_NONTARGET (100) non-target trials.  With 100 targets one
 *    trial moves the EER by up to 0.5 point and the binomial standard error
 *    of a 10% error rate is 3 points: the value is a coarse guess below that;
 *  - an undefined (NaN) value;
 *  - min DCF: one miss or one false alarm moves the normalised cost by more
 *    than VPA_DCF_MAX_STEP (0.1): at p_target 0.01 a false alarm costs
 *    99 / N_non, so fewer than 990 non-targets cannot resolve it;
 *  - linkability (the VoicePrivacy value): fewer than VPA_LINK_MIN_MATED
 *    (100) mated scores (10..19 give one bin and D<->sys = 0 at EER 0), the
 *    mated scores in fewer than VPA_LINK_MIN_BINS (5) bins (then the
 *    integral over bin centres reads about 0.5 or 0 on a perfect attack),
 *    all scores equal (no histogram), and linkability_hist - linkability >
 *    VPA_LINK_MAX_LOSS (0.1): the integral over bin centres drops half of
 *    the first and last bins, so mated scores crowding an end bin make it
 *    miss part of what its own histogram shows;
 *  - linkability_hist: the count rules and an undefined value.
 */
#include "sv_metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct why {
	char s[256];
};

static void add(struct why *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct why *w, const char *fmt, ...)
{
	size_t n = strlen(w->s);
	if (n && n + 2 < sizeof w->s) {
		memcpy(w->s + n, "; ", 3);
		n += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->s + n, sizeof w->s - n, fmt, ap);
	va_end(ap);
}

/* The count rule shared by every metric. */
static void counts(struct why *w, size_t nt, size_t nn, const char *tar, const char *non)
{
	if (nt < VPA_MIN_TARGET && nn < VPA_MIN_NONTARGET)
		add(w, "%zu %s and %zu %s (fewer than %d each)", nt, tar, nn, non, VPA_MIN_TARGET);
	else if (nt < VPA_MIN_TARGET)
		add(w, "%zu %s (fewer than %d)", nt, tar, VPA_MIN_TARGET);
	else if (nn < VPA_MIN_NONTARGET)
		add(w, "%zu %s (fewer than %d)", nn, non, VPA_MIN_NONTARGET);
}

static void emit_if(vpa_unreliable_emit emit, void *ctx, const char *path, const struct why *w)
{
	if (emit && w->s[0])
		emit(ctx, path, w->s);
}

static void plain(vpa_unreliable_emit emit, void *ctx, const char *path, double v,
		  const struct vpa_metrics *m)
{
	struct why w = {""};
	if (!isfinite(v))
		add(&w, "undefined value");
	counts(&w, m->n_tar, m->n_non, "target trials", "non-target trials");
	emit_if(emit, ctx, path, &w);
}

void vpa_metrics_reliability(struct vpa_metrics *m, const struct vpa_metrics_opts *o,
			     vpa_unreliable_emit emit, void *ctx)
{
	struct vpa_metrics_opts def;
	if (!o) {
		vpa_metrics_opts_init(&def);
		o = &def;
	}
	plain(emit, ctx, "eer", m->eer, m);
	plain(emit, ctx, "eer_sweep", m->eer_sweep, m);
	plain(emit, ctx, "cllr", m->cllr, m);
	plain(emit, ctx, "cllr_min", m->cllr_min, m);

	/* min DCF: the cost one trial can move */
	struct why w = {""};
	if (!isfinite(m->min_dcf))
		add(&w, "undefined value");
	counts(&w, m->n_tar, m->n_non, "target trials", "non-target trials");
	double pm = o->p_target * o->c_miss, pf = (1 - o->p_target) * o->c_fa;
	double norm = pm < pf ? pm : pf;
	if (m->n_non && pf / norm / (double)m->n_non > VPA_DCF_MAX_STEP)
		add(&w, "one false alarm moves min DCF by %.2g (%zu non-target trials; %.0f needed "
			"at p_target %g)", pf / norm / (double)m->n_non, m->n_non,
		    ceil(pf / norm / VPA_DCF_MAX_STEP), o->p_target);
	if (m->n_tar && pm / norm / (double)m->n_tar > VPA_DCF_MAX_STEP)
		add(&w, "one miss moves min DCF by %.2g (%zu target trials; %.0f needed at "
			"p_target %g)", pm / norm / (double)m->n_tar, m->n_tar,
		    ceil(pm / norm / VPA_DCF_MAX_STEP), o->p_target);
	emit_if(emit, ctx, "min_dcf", &w);
	struct why w_dcf = w; /* min_dcf_flipped: the same counts */

	w.s[0] = 0;
	if (!isfinite(m->zebra.dece) || !isfinite(m->zebra.log10_lr_worst))
		add(&w, "undefined value");
	counts(&w, m->n_tar, m->n_non, "target trials", "non-target trials");
	emit_if(emit, ctx, "zebra", &w);

	/* linkability (VoicePrivacy) */
	w.s[0] = 0;
	if (!m->linkability_defined || !isfinite(m->linkability))
		add(&w, "undefined value (fewer than 10 mated scores)");
	counts(&w, m->n_tar, m->n_non, "mated scores", "non-mated scores");
	if (m->linkability_defined && isfinite(m->linkability)) {
		if (m->linkability_bins == 0)
			add(&w, "all scores are equal (no histogram)");
		else if (m->linkability_bins_mated < VPA_LINK_MIN_BINS)
			add(&w, "mated scores occupy %zu of %zu bins (fewer than %d)",
			    m->linkability_bins_mated, m->linkability_bins, VPA_LINK_MIN_BINS);
		if (isfinite(m->linkability_hist) &&
		    m->linkability_hist - m->linkability > VPA_LINK_MAX_LOSS)
			add(&w, "the integral over bin centres misses %.2f of the histogram's %.2f "
				"(see linkability_hist)", m->linkability_hist - m->linkability,
			    m->linkability_hist);
	}
	m->linkability_reliable = w.s[0] == 0;
	memcpy(m->linkability_why, w.s, sizeof m->linkability_why);
	emit_if(emit, ctx, "linkability", &w);

	w.s[0] = 0;
	if (!isfinite(m->linkability_hist))
		add(&w, "undefined value");
	counts(&w, m->n_tar, m->n_non, "mated scores", "non-mated scores");
	emit_if(emit, ctx, "linkability_hist", &w);

	/* the metrics of the reversed scores, once vpa_metrics_flipped has computed them */
	if (isfinite(m->eer_flipped)) {
		plain(emit, ctx, "eer_flipped", m->eer_flipped, m);
		plain(emit, ctx, "cllr_min_flipped", m->cllr_min_flipped, m);
		emit_if(emit, ctx, "min_dcf_flipped", &w_dcf);
	}
}
