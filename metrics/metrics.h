/*
 * metrics/metrics.h - the metrics engine: pure functions over scores and
 * counts.  No I/O, no exit, no globals.  Includes only base/base.h.
 *
 * Definitions follow metrics/README.md "Definitions" to the letter (BOSARIS /
 * pyllr for PAV and ROCCH, the VoicePrivacy evaluation code for linkability and
 * ZEBRA, TF Privacy for exposure, Google dp_accounting for RDP).
 *
 * Scores are double, "higher = more likely same source".  A score set is two
 * arrays (target, non-target), each SORTED ASCENDING (vpa_sort_scores) and
 * free of NaN/inf (the readers reject those).  Sorting happens once; every
 * metric walks the two sorted arrays in one merge pass, so 115M trials cost
 * one sort and a few linear passes.
 *
 * Optional per-trial weights (w_tar, w_non, same order as the sorted scores)
 * let the bootstrap reuse the sorted order: a resample is a weight vector, not
 * a new array.  NULL weights mean 1 for every trial.
 */
#ifndef VPA_METRICS_H
#define VPA_METRICS_H

#include "../base/base.h"

/* ---- sorting ------------------------------------------------------------ */

/*
 * Sort x[0..n) ascending in place (LSD/MSD radix on the IEEE-754 bit pattern;
 * -0.0 and +0.0 compare equal afterwards only if the caller normalised them:
 * vpa_sort_scores maps -0.0 to +0.0 first).  If perm is not NULL it is
 * permuted alongside (perm[i] moves with x[i]).  No NaN allowed.
 */
void vpa_sort_scores(double *x, uint32_t *perm /* may be NULL */, size_t n);
/* The same on `threads` threads (the float32 path's passes); the same result. */
void vpa_sort_scores_threads(double *x, uint32_t *perm, size_t n, int threads);

/* ---- score sets --------------------------------------------------------- */

struct vpa_scores {
	const double *tar; /* (n_tar), sorted ascending, borrowed */
	size_t n_tar;
	const double *non; /* (n_non), sorted ascending, borrowed */
	size_t n_non;
	const double *w_tar; /* (n_tar) weights or NULL, borrowed */
	const double *w_non; /* (n_non) weights or NULL, borrowed */
};

/* ---- PAV (ties pooled, BOSARIS / pyllr convention) ---------------------- */

/*
 * One block of the pool-adjacent-violators fit of P(target | score) on the
 * merged sorted scores.  Tied scores are always in one block.  Blocks are in
 * ascending score order; their posteriors t/(t+n) are non-decreasing.
 */
struct vpa_pav_block {
	double lo, hi; /* smallest and largest score in the block */
	double t, n;   /* (weighted) target and non-target counts */
};

struct vpa_pav {
	struct vpa_pav_block *b; /* (n_blocks), owned */
	size_t n_blocks;
	double n_tar, n_non; /* totals (weighted), excluding laplace dummies */
};

/*
 * Fit PAV.  laplace = 1 adds the dummy trials of the VoicePrivacy
 * `optimal_llr(laplace=True)`: a target then a non-target below every score,
 * and a target then a non-target above every score (each a block of its own
 * before pooling); used by ZEBRA's worst-case strength of evidence.  The
 * dummies sit at scores -inf and +inf, so a block whose lo and hi are both
 * infinite holds dummies only.  Weights of 0 drop a trial.
 * Errors: an empty class (VPA_EINPUT, "no target scores"/"no non-target scores").
 * Caller releases *out with vpa_pav_release (also after an error: *out is
 * then empty).
 */
int vpa_pav_fit(const struct vpa_scores *s, int laplace, struct vpa_pav *out,
		struct vpa_err *err);
void vpa_pav_release(struct vpa_pav *p);

/* LLR of a block: log(t/n) - log(N_tar/N_non)  (+inf when n = 0, -inf when t = 0). */
double vpa_pav_llr(const struct vpa_pav *p, size_t i);

/* ---- individual metrics ------------------------------------------------- */

/*
 * ROC-convex-hull EER (BOSARIS rocch2eer) from a PAV fit without laplace.
 * *threshold: a score on the hull segment where the EER is met (the boundary
 * between the two blocks that make the segment's end points; midpoint of the
 * gap between them).
 */
double vpa_eer_rocch(const struct vpa_pav *p, double *threshold /* OUT, may be NULL */);

/*
 * Threshold-sweep EER (metrics/README.md): thresholds at every distinct score scanned
 * from the highest to the lowest, accept score >= threshold; the first index
 * minimising |P_miss - P_fa|; EER = (P_miss + P_fa) / 2 there.
 * NAN (and *threshold NAN) when a class is empty; min DCF too, and also for
 * p_target outside (0,1) or non-positive costs.
 */
double vpa_eer_sweep(const struct vpa_scores *s, double *threshold /* OUT, may be NULL */);

/*
 * Cllr in bits, scores read as natural-log LRs, computed with a stable softplus:
 * 1/2 [ mean_tar log2(1+e^-s) + mean_non log2(1+e^s) ].  Arrays need not be sorted.
 */
double vpa_cllr(const struct vpa_scores *s);

/* Cllr of the PAV-calibrated LLRs (no laplace); <= Cllr and <= 1. */
double vpa_cllr_min(const struct vpa_pav *p);

/*
 * Normalised minimum detection cost: min over thresholds of
 * (p_target C_miss P_miss + (1-p_target) C_fa P_fa) / min(p_target C_miss, (1-p_target) C_fa).
 */
double vpa_min_dcf(const struct vpa_scores *s, double p_target, double c_miss,
		   double c_fa, double *threshold /* OUT, may be NULL */);

/*
 * DET points: for every distinct score t (ascending) the operating point of
 * "accept score >= t", plus the point of accepting nothing (threshold +inf,
 * P_miss = 1, P_fa = 0).  emit returns non-zero to stop.
 */
typedef int (*vpa_det_emit)(void *ctx, double threshold, double p_miss, double p_fa);
void vpa_det_walk(const struct vpa_scores *s, vpa_det_emit emit, void *ctx);

/*
 * At most max_points DET points chosen for plotting (evenly in probit space,
 * always including the extremes and the EER point).  Returns the count.
 */
size_t vpa_det_sample(const struct vpa_scores *s, size_t max_points,
		      double *p_miss /* OUT (max_points) */, double *p_fa /* OUT (max_points) */);

/* ---- linkability (Gomez-Barrero et al. 2017, VoicePrivacy code) --------- */

/* The smallest histogram that can show anything: linkability with mated
 * scores in fewer bins is unreliable, and dsys_hist never uses fewer bins
 * than this unless the caller fixes n_bins. */
#define VPA_LINK_MIN_BINS 5

struct vpa_linkability {
	int defined;    /* 0 when fewer than 10 mated scores (no bins) */
	double dsys;    /* D<->sys in [0,1]; NAN when undefined */
	double dsys_hist; /* sum over bins of D(bin) P(mated in bin) in [0,1], the
			     exact integral of the histogram estimate (at least
			     VPA_LINK_MIN_BINS bins when n_bins was 0); NAN when
			     undefined; 0 when all scores are equal */
	size_t n_bins;
	size_t n_bins_mated; /* bins holding at least one mated score */
	double *centers; /* (n_bins) bin centres, owned */
	double *p_mated; /* (n_bins) histogram density p(s|H), owned */
	double *p_non;   /* (n_bins) density p(s|notH), owned */
	double *d_local; /* (n_bins) local D(s), owned */
};

/*
 * mated = target scores, non = non-target scores (sorted or not; weights as in
 * struct vpa_scores).  n_bins = 0 picks the default min(floor(n_mated/10), 100).
 * omega > 0.  Errors: empty non-mated set.
 */
/* fewer than 10 mated (sum of weights < 10) gives defined = 0 whatever
 * n_bins; all scores equal gives defined = 1, dsys = 0, n_bins = 0.
 * Caller releases *out with vpa_linkability_release (NULL-safe, idempotent). */
int vpa_linkability(const struct vpa_scores *s, double omega, size_t n_bins,
		    struct vpa_linkability *out, struct vpa_err *err);
void vpa_linkability_release(struct vpa_linkability *l);

/*
 * The linkability histogram's bins, shared with attacks that bin scores
 * themselves (identification): edges = numpy.linspace(lo, hi, nb + 1), and the
 * bin of x as numpy.histogram puts it (edge_b <= x < edge_b+1, the last bin
 * closed; x within [edges[0], edges[nb]]).  inv_step = nb / (hi - lo), or 0
 * when that is not finite and positive: it only seeds the search, the walk on
 * the edges makes the bin exact.
 */
void vpa_linkability_edges(double lo, double hi, size_t nb, double *edges /* OUT (nb + 1) */);
static inline size_t vpa_linkability_bin(double x, const double *e, size_t nb, double lo,
					 double inv_step)
{
	double f = (x - lo) * inv_step;
	size_t b = f > 0 ? (f < (double)nb ? (size_t)f : nb - 1) : 0;
	while (b > 0 && x < e[b])
		b--;
	while (b + 1 < nb && x >= e[b + 1])
		b++;
	return b;
}

/* ---- ZEBRA (Nautsch et al. 2020, VoicePrivacy code) --------------------- */

struct vpa_zebra {
	double dece;           /* D_ECE in bits */
	double log10_lr_worst; /* max |LLR| / ln 10 over laplace-smoothed PAV LLRs */
	char category;         /* '0', 'A'..'F' */
};

int vpa_zebra(const struct vpa_scores *s, struct vpa_zebra *out, struct vpa_err *err);

/* ---- everything at once ------------------------------------------------- */

struct vpa_metrics_opts {
	double omega;     /* linkability prior ratio, default 1 */
	size_t bins;      /* linkability bins, 0 = default */
	double p_target;  /* min DCF prior, default 0.01 */
	double c_miss, c_fa; /* default 1, 1 */
	/* threads for vpa_metrics_all / vpa_metrics_flipped (default 1): their
	 * independent parts (PAV, sweep, Cllr, linkability) run side by side;
	 * every value is the same for any count */
	int threads;
};
void vpa_metrics_opts_init(struct vpa_metrics_opts *o);

struct vpa_metrics {
	size_t n_tar, n_non;
	double eer, eer_threshold;             /* ROCCH */
	double eer_sweep, eer_sweep_threshold;
	double cllr, cllr_min;
	double min_dcf, min_dcf_threshold;
	double linkability;  /* NAN when undefined */
	int linkability_defined;
	double linkability_hist; /* vpa_linkability dsys_hist; NAN when undefined */
	size_t linkability_bins, linkability_bins_mated; /* VoicePrivacy bins, those with mated scores */
	int linkability_reliable; /* vpa_metrics_reliability (below) */
	char linkability_why[256]; /* why not reliable ("" when reliable) */
	struct vpa_zebra zebra;
	double tied_fraction; /* fraction of trials whose score equals another trial's */
	/* The same metrics of the negated scores (what an attacker who reverses
	 * them reaches; vpa_metrics_flipped), NAN until computed. */
	double eer_flipped, cllr_min_flipped, min_dcf_flipped;
	/* vpa_metrics_judge_reversal: 1 when the scores are anti-correlated with
	 * identity; the sweep EER interval it read (NAN: none was needed) */
	int anti_correlated;
	double eer_sweep_lo, eer_sweep_hi, eer_sweep_level;
};

/* All of the above on one sorted score set.  Errors: an empty class. */
int vpa_metrics_all(const struct vpa_scores *s, const struct vpa_metrics_opts *o,
		    struct vpa_metrics *m /* OUT */, struct vpa_err *err);

/* ---- reversed scores (metrics/reversal.c) -------------------------------- */

/*
 * ROCCH-EER cannot exceed 0.5 (the hull includes the chance line), so scores
 * where higher means a *different* source read EER 0.5, Cllr_min 1, min DCF 1
 * ("no leak"), while an attacker who reverses them links identities.
 *
 * vpa_metrics_flipped: m->eer_flipped, cllr_min_flipped, min_dcf_flipped, the
 * ROCCH-EER, Cllr_min and min DCF (o's prior and costs; NULL: defaults) of
 * the negated scores of the unweighted set tar (n_tar), non (n_non), each
 * sorted ascending.  No copy (a score set can be 1 GB): the arrays are
 * reversed and negated in place for the call and restored bit for bit
 * before it returns, so no other thread may read them meanwhile.  Errors:
 * an empty class.
 */
int vpa_metrics_flipped(double *tar, size_t n_tar, double *non, size_t n_non,
			const struct vpa_metrics_opts *o, struct vpa_metrics *m /* IN/OUT */,
			struct vpa_err *err);

/*
 * The rule: the scores are anti-correlated with identity when the lower end
 * of a VPA_REVERSAL_LEVEL bootstrap interval [lo, hi] of the sweep EER (BCa,
 * vpa_bootstrap_ci) lies above 0.5, i.e. lo > 0.5 (and so eer_sweep > 0.5:
 * every interval contains its estimate).  A sweep EER of at most 0.5 needs
 * no interval (pass NAN): not anti-correlated.  Sets m->anti_correlated and
 * m->eer_sweep_lo/hi/level.
 */
#define VPA_REVERSAL_LEVEL 0.95
void vpa_metrics_judge_reversal(struct vpa_metrics *m, double lo, double hi);

/*
 * The replicates (and jackknife groups) of the bootstrap drawn for the rule
 * on n trials when no interval at VPA_REVERSAL_LEVEL was asked for: reps,
 * but at most max(50, 2e8 / n), so that a reversed file of 10^8 trials
 * costs about 100 sweeps, not 2,000 (its interval is then a few 1e-4 wide,
 * and only a sweep EER that close to 0.5 could be judged otherwise).
 */
size_t vpa_reversal_reps(size_t reps, size_t n);

/* ---- reliability (metrics/reliability.c) --------------------------------- */

/*
 * The documented minimum trial counts (metrics/README.md "Reliability"):
 * below them a metric of the score set cannot be trusted, whatever its value.
 */
#define VPA_MIN_TARGET 100      /* target (mated) trials for every score-set metric */
#define VPA_MIN_NONTARGET 100   /* non-target trials for every score-set metric */
#define VPA_LINK_MIN_MATED 100  /* mated scores for linkability */
#define VPA_LINK_MAX_LOSS 0.1   /* largest linkability_hist - linkability */
#define VPA_DCF_MAX_STEP 0.1    /* largest change of min DCF one trial can make */

/*
 * Calls emit(ctx, path, reason) once for each metric of m that cannot be
 * trusted, in a fixed order: eer, eer_sweep, cllr, cllr_min, min_dcf, zebra,
 * linkability, linkability_hist, then (when vpa_metrics_flipped has filled
 * them) eer_flipped, cllr_min_flipped, min_dcf_flipped with the reasons of
 * eer, cllr_min and min_dcf.  path is the gate key (zebra covers
 * zebra.dece and zebra.log10_lr_worst); reason is a short plain phrase
 * ("12 mated scores (fewer than 100)"; several joined by "; "); an undefined
 * value gives "undefined value ...".  o gives p_target and the costs for
 * min DCF (NULL: defaults).  Also fills m->linkability_reliable and
 * m->linkability_why (vpa_metrics_all calls it with emit NULL).
 */
typedef void (*vpa_unreliable_emit)(void *ctx, const char *path, const char *reason);
void vpa_metrics_reliability(struct vpa_metrics *m, const struct vpa_metrics_opts *o,
			     vpa_unreliable_emit emit /* may be NULL */, void *ctx);

/* ---- bootstrap confidence intervals ------------------------------------- */

/*
 * Bootstrap intervals (BCa: bias-corrected and accelerated, metrics/ci.c)
 * for EER (ROCCH), Cllr_min, linkability and the sweep EER (the last one
 * decides vpa_metrics_judge_reversal; `sweep_only` computes it alone).
 * If ids are given (tar_e/tar_t/non_e/non_t: enrolment and test identity
 * index of each trial in the sorted order, in [0, n_e) and [0, n_t)), each
 * replicate resamples enrolment identities and test identities with
 * replacement and weights each trial by (count of its enrolment id) x (count
 * of its test id), and the jackknife leaves out one identity at a time;
 * otherwise it resamples trials (multinomial weights) and the jackknife
 * leaves out one trial.  The sorted order is reused: a replicate is a weight
 * vector.  Every finite interval contains its estimate (extended when BCa
 * alone does not: see ci.c).
 */
#define VPA_JACK_MAX_GROUPS 1000 /* jackknife units per sample; beyond: groups */
struct vpa_ci_opts {
	double level;     /* e.g. 0.95 */
	size_t reps;      /* default 1000 */
	uint64_t seed;
	const uint32_t *tar_e, *tar_t, *non_e, *non_t; /* all NULL or all set */
	size_t n_e, n_t;
	double omega;
	size_t bins;
	int sweep_only;   /* 1: only the sweep EER interval (the others stay NAN) */
	size_t jack_max;  /* jackknife units per sample at most (0: VPA_JACK_MAX_GROUPS) */
};
struct vpa_ci {
	int by_identity;  /* 1: identities resampled; 0: trials */
	size_t reps, reps_used; /* replicates drawn / with both classes present */
	double eer_lo, eer_hi, cllr_min_lo, cllr_min_hi, link_lo, link_hi;
	size_t link_reps_used; /* replicates with linkability defined (>= 10 mated
				  draws); link_lo/hi are NAN when 0 */
	double eer_sweep_lo, eer_sweep_hi;
	double estimate[4];    /* eer, cllr_min, linkability, eer_sweep on the full set (NAN: undefined) */
	double eer_a, cllr_min_a, link_a, eer_sweep_a;     /* jackknife acceleration */
	double eer_z0, cllr_min_z0, link_z0, eer_sweep_z0; /* bias; NAN when BCa was undefined
							      (every replicate on one side) */
	unsigned extended;     /* bit 0 eer, 1 cllr_min, 2 linkability, 3 eer_sweep: widened to the estimate */
	size_t jack_groups[2]; /* jackknife units (or groups) of each sample (1 used by trials) */
	int jack_grouped;      /* 1: a sample had more than VPA_JACK_MAX_GROUPS units */
};
int vpa_bootstrap_ci(const struct vpa_scores *s, const struct vpa_ci_opts *o,
		     struct vpa_ci *out, struct vpa_err *err);

/*
 * The reversal rule on one unweighted score set (tar, non sorted ascending,
 * as for vpa_metrics_flipped): the flipped metrics, then, when m->eer_sweep
 * > 0.5, the sweep EER's interval at VPA_REVERSAL_LEVEL -- `have` when it is
 * an interval at that level already drawn (an attack's own `ci:`; NULL:
 * none), else a sweep-only bootstrap with co's ids, seed, omega and bins and
 * vpa_reversal_reps(co->reps, n_tar + n_non) replicates -- and
 * vpa_metrics_judge_reversal.  *used (OUT, may be NULL) gets the interval
 * that decided; untouched when the sweep EER needed none.
 */
int vpa_metrics_reversal(double *tar, size_t n_tar, double *non, size_t n_non,
			 const struct vpa_metrics_opts *mo, const struct vpa_ci_opts *co,
			 const struct vpa_ci *have, struct vpa_metrics *m,
			 struct vpa_ci *used /* OUT */, struct vpa_err *err);

/* ---- closed-set identification ------------------------------------------ */

/*
 * Rank of the true candidate among n scores (1 = best).  Ties count half
 * (rank = 1 + #{higher} + #{tied others}/2), so chance rank is (n+1)/2.
 * NAN when true_idx >= n.
 */
double vpa_rank(const double *scores, size_t n, size_t true_idx);

struct vpa_ident {
	size_t n_probes, population;
	double mean_rank, mean_norm_rank; /* norm rank = rank / population */
	double chance_rank;               /* (population + 1) / 2 */
	double top1, top5, top10;         /* fraction of probes with rank <= k */
};
/* scores: (n_probes, population) row-major; truth: (n_probes) column index.
 * top-k counts rank <= k (a tie at rank 1.5 is not top-1).  Errors: no probes,
 * empty population, truth out of range, a NaN score. */
int vpa_identification(const double *scores, size_t n_probes, size_t population,
		       const size_t *truth, struct vpa_ident *out, struct vpa_err *err);

/* ---- exposure (Carlini et al. 2019, TF Privacy conventions) ------------- */

/* log2 N - log2(1 + #{candidates <= canary}); N = n candidates (n >= 1; NAN
 * for n = 0).  As TF Privacy, slightly negative (log2 N - log2(N+1)) for a
 * canary at or above every candidate. */
double vpa_exposure_exact(double canary, const double *cand, size_t n);

/*
 * How many candidates equal the canary exactly.  A candidate set that holds
 * the canary's own value (all 10^4 PINs scored, the secret among them) counts
 * it as a rival: the exact exposure loses a bit at the top (log2 N - 1 at
 * most instead of log2 N).  Callers warn when this is > 0.
 */
size_t vpa_exposure_ties(double canary, const double *cand, size_t n);
/* Remove one candidate equal to the canary (the first in order; the others keep
 * their order) and return the new count; n when none is equal. */
size_t vpa_exposure_drop_canary(double canary, double *cand /* IN/OUT */, size_t n);

struct vpa_skewnorm {
	double loc, scale, shape; /* xi, omega, alpha */
};
/*
 * Maximum-likelihood fit (n >= 3 finite values, not all equal): Nelder-Mead
 * from the method-of-moments and the normal start, then Newton with
 * Levenberg-Marquardt damping on all the data (above 20000 values the search
 * runs on a systematic subsample first).  |shape| is capped at 1e4: for
 * half-normal-like samples the likelihood grows without bound in the shape.
 * Errors: VPA_EINPUT for the conditions above, VPA_ENUMERIC if no finite
 * likelihood is found.
 */
int vpa_skewnorm_fit(const double *x, size_t n, struct vpa_skewnorm *out,
		     struct vpa_err *err);
/* log of the skew-normal CDF: 1e-13 relative (1e-15 absolute near 0) for
 * |shape| <= 1e4 and |z| <= 40, and in the far left tail beyond, where F
 * underflows (tests/golden/skewnorm/). */
double vpa_skewnorm_logcdf(const struct vpa_skewnorm *d, double x);
/* -log2 F(canary) with F the fitted skew-normal CDF; >= 0, finite even when
 * F underflows (the log CDF is integrated in log space in the far tail). */
double vpa_exposure_extrapolated(double canary, const struct vpa_skewnorm *d);

/* ---- d-exposure (Helali et al. 2020) ------------------------------------ */

struct vpa_dexp_class {
	double canary_conf;     /* conf of class C_i for the canary in context */
	const double *ref_conf; /* (n_ref) conf of C_i for each reference word, borrowed */
	size_t n_ref;           /* |C_i| */
};
/*
 * per_class[i] = -log2 Pr_{w in C_i}[conf(w) >= conf(s)], the probability
 * being max(#{w: conf(w) >= conf(s)}, 1) / |C_i| (ties count against the
 * canary; clamped at the set's resolution so it never exceeds log2 |C_i|).
 * max_class[i] = log2 |C_i|.  *mean = their average.  Errors: an empty class.
 */
int vpa_dexposure(const struct vpa_dexp_class *c, size_t k, double *per_class /* OUT (k) */,
		  double *max_class /* OUT (k) */, double *mean /* OUT */,
		  struct vpa_err *err);

/* ---- differential privacy ----------------------------------------------- */

/* The order grid of Google's dp_accounting: 1.1..10.9 step 0.1, 11..63, 128, 256, 512, 1024. */
#define VPA_RDP_N_ORDERS 156
size_t vpa_rdp_orders(double *orders /* OUT, at least VPA_RDP_N_ORDERS (156) */);

/*
 * The series of the fractional orders (metrics/DP.md "Rényi DP of one step"):
 * SIGNED keeps the alternating signs of the binomial coefficients, the exact
 * value (TF Privacy, Opacus, dp_accounting before its _log_comb rewrite);
 * UNSIGNED adds their absolute values, an upper bound (dp_accounting today).
 * Integer orders are the same under both.
 */
enum vpa_rdp_series { VPA_RDP_SIGNED = 0, VPA_RDP_UNSIGNED = 1 };

/*
 * RDP of one step of the Poisson-sampled Gaussian mechanism at order alpha
 * (Mironov, Talwar, Zhang 2019; integer and fractional orders).  q in [0,1],
 * sigma = noise multiplier > 0.  The _series form chooses the fractional
 * series; the plain form is VPA_RDP_SIGNED.
 */
double vpa_rdp_sampled_gaussian(double q, double sigma, double alpha);
double vpa_rdp_sampled_gaussian_series(double q, double sigma, double alpha,
				       enum vpa_rdp_series series);

/*
 * (epsilon, delta) after `steps` steps, minimised over the order grid with
 * eps = rdp + log1p(-1/a) - (log(delta) + log(a)) / (a - 1).
 */
int vpa_dp_epsilon(double q, double sigma, double steps, double delta,
		   double *eps /* OUT */, double *order /* OUT, may be NULL */,
		   struct vpa_err *err);
int vpa_dp_epsilon_series(double q, double sigma, double steps, double delta,
			  enum vpa_rdp_series series, double *eps /* OUT */,
			  double *order /* OUT, may be NULL */, struct vpa_err *err);

/*
 * The conversion alone (dp_accounting compute_epsilon): orders (n) >= 1 and
 * their accumulated RDP (n, may be +inf); the first minimising order wins;
 * negative results clamp to 0; orders <= 1.01 give +inf (unless the KL
 * shortcut delta^2 + expm1(-rdp) > 0 gives 0).  *eps may be +inf when every
 * order is infinite.  Errors: delta outside (0,1), an order < 1, NaN RDP.
 */
int vpa_rdp_to_epsilon(const double *orders, const double *rdp, size_t n, double delta,
		       double *eps /* OUT */, double *order /* OUT, may be NULL */,
		       struct vpa_err *err);

/*
 * The other way (dp_accounting compute_delta): the smallest delta over the
 * orders at epsilon eps >= 0, each order's bound the minimum of the KL bound
 * sqrt(1 - exp(-rdp)) and, for orders > 1.01, the inverse of the epsilon
 * conversion above, exp((a-1)(rdp - eps + log1p(-1/a)) - log a); capped at 1.
 * At eps = the epsilon of a delta, it gives that delta back (the same optimum).
 */
int vpa_rdp_to_delta(const double *orders, const double *rdp, size_t n, double eps,
		     double *delta /* OUT */, double *order /* OUT, may be NULL */,
		     struct vpa_err *err);
int vpa_dp_delta_series(double q, double sigma, double steps, double eps,
			enum vpa_rdp_series series, double *delta /* OUT */,
			double *order /* OUT, may be NULL */, struct vpa_err *err);

/*
 * Smallest noise multiplier with epsilon <= target (monotone search:
 * doubling, then bisection to 1e-12 relative).  q = 0 or steps = 0 give 0.
 */
int vpa_dp_sigma(double q, double eps, double steps, double delta,
		 double *sigma /* OUT */, struct vpa_err *err);
int vpa_dp_sigma_series(double q, double eps, double steps, double delta,
			enum vpa_rdp_series series, double *sigma /* OUT */, struct vpa_err *err);

/* Classical Gaussian mechanism: S sqrt(2 ln(1.25/delta)) / eps (valid for eps < 1). */
double vpa_gauss_classic_sigma(double eps, double delta, double sens);

/* Analytic Gaussian mechanism (Balle & Wang 2018): smallest sigma. */
int vpa_gauss_analytic_sigma(double eps, double delta, double sens,
			     double *sigma /* OUT */, struct vpa_err *err);
/* Inverse: the epsilon a release with noise sigma gives at delta. */
int vpa_gauss_analytic_epsilon(double sigma, double delta, double sens,
			       double *eps /* OUT */, struct vpa_err *err);

/* SNR of a noised update: ||update||_2 / ||noise||_2 (inf when noise is 0). */
double vpa_snr(const double *update, const double *noise, size_t n);

/* ---- special functions used above (exported for tests and attacks) ------ */

/* log Phi(z), standard normal CDF, accurate for every z (asymptotic series
 * below -20; never -inf for finite z). */
double vpa_log_ndtr(double z);

/*
 * Owen's T function T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1+x^2)/2) / (1+x^2) dx
 * to about 1e-15 relative (Gauss-Legendre on [0, min(a,1)], Owen's identity
 * T(h,a) + T(ah,1/a) = (Phi(h) + Phi(ah))/2 - Phi(h)Phi(ah) - [h<0]/2 for a > 1).
 */
double vpa_owens_t(double h, double a);

/* log of the skew-normal density at x. */
double vpa_skewnorm_logpdf(const struct vpa_skewnorm *d, double x);

/* ---- the Article 29 criteria (metrics/legal.c) -------------------------- */

/* One estimate of pi_link (at N' = n_set) or pi_sing (at N = n_set). */
struct vpa_legal_est {
	double value;        /* mean success / isolation probability */
	double lo, hi;       /* sampling-free t interval (NaN below 3 clusters) */
	double chance;       /* pi_link: 1/N'; pi_sing: (1 - 1/N)^(N-1) */
	size_t n_items;      /* test items */
	size_t n_spk;        /* pi_link: test speakers (clusters); pi_sing: test speakers */
	size_t n_set;        /* N' or N */
};

/* m_i: the other candidates scoring strictly above row[true_idx] (ties go
 * to the true one). */
size_t vpa_pilink_beaten(const double *row, size_t n, size_t true_idx);
/* C(n-1-m, np-1) / C(n-1, np-1) in log space: the probability that N' = np
 * candidates drawn from n (the true one and np-1 others without
 * replacement) leave the true one on top.  NaN when np is not in 1..n. */
double vpa_pilink_prob(size_t n, size_t m, size_t np);
/*
 * pi_link at N' = np over n_items test items, m[i] from vpa_pilink_beaten,
 * spk[i] < n_spk the item's test speaker (the interval's clusters), n_cand
 * enrolment speakers; level: interval level (0 = none).  Errors: no items,
 * np outside 1..n_cand.
 */
int vpa_pilink(const size_t *m, const uint32_t *spk, size_t n_items, size_t n_spk, size_t n_cand,
	       size_t np, double level, struct vpa_legal_est *out, struct vpa_err *err);

/* Student t quantile (Cornish-Fisher, A&S 26.7.5). */
double vpa_t_quantile(double p, double df);
/* (1 - 1/N)^(N-1) = N (1/N) (1 - 1/N)^(N-1): the isolation of a predicate
 * that fires on anyone with probability 1/N; -> e^-1. */
double vpa_pising_baseline(size_t N);
/* The threshold firing ("score > tau") on round(M/N) (at least 1) of the M
 * calibration scores c (sorted in place); -inf when that is all of them. */
double vpa_pising_threshold(double *c, size_t M, size_t N);
/* Exactly-one probability over a uniform N-subset of n speakers firing
 * independently with probabilities p[]; work: 2 (N + 1) doubles. */
double vpa_pising_isolation(const double *p, size_t n, size_t N, double *work);
/*
 * pi_sing for each N of Ns: calib (n_enr, n_cal) and test (n_enr, n_test)
 * score matrices of the enrolments against calibration and test items of
 * the same speakers (test_spk[i] < n_spk; speakers without test items do not
 * count), out[n_N].  Errors: an empty set, N outside 1..test speakers.
 */
int vpa_pising(const double *calib, const uint32_t *cal_spk, size_t n_cal, const double *test,
	       const uint32_t *test_spk, size_t n_test, size_t n_spk, size_t n_enr,
	       const size_t *Ns, size_t n_N, double level, struct vpa_legal_est *out,
	       struct vpa_err *err);

/* ---- attribute inference (metrics/inference.c, issue 29 item 4) ---------- */

/* Accuracy and balanced accuracy of attribute guesses with their chance
 * levels; intervals NaN when undefined (fewer than 3 speakers for acc, a
 * class with fewer than 2 speakers or a single class for bacc). */
struct vpa_infer_est {
	double acc, acc_lo, acc_hi;    /* fraction of items guessed right, CR1 t interval */
	double acc_chance;             /* the majority class's share of the items */
	double bacc, bacc_lo, bacc_hi; /* mean per-class recall, Satterthwaite t interval */
	double bacc_chance;            /* 1 / classes present */
	size_t n_items, n_spk, n_classes, majority;
};
/*
 * Items i < n with true label truth[i] < k, the guess pred[i] < k and the
 * speaker spk[i] < n_spk (a speaker's items share one label).  Errors: no
 * items, a value out of range, a speaker with two labels.
 */
int vpa_inference_acc(const uint32_t *truth, const uint32_t *pred, const uint32_t *spk,
		      size_t n, size_t n_spk, size_t k, double level, struct vpa_infer_est *out,
		      struct vpa_err *err);

/* ---- empirical epsilon lower bounds (metrics/dp_audit.c, issue 28) -------- */

/* Regularized incomplete beta I_x(a, b) (*complement = 1 - I, accurate when
 * small) and its inverse in x; Clopper-Pearson one-sided bounds at a level:
 * upper p with P[Bin(n, p) <= k] = level, lower p with P[Bin(n, p) >= k] = level. */
double vpa_ibeta(double a, double b, double x, double *complement /* may be NULL */);
double vpa_ibeta_inv(double a, double b, double p);
/* ln I_x(a, b), finite where I underflows (PrivUnit2 caps in high dimension). */
double vpa_log_ibeta(double a, double b, double x);
double vpa_cp_upper(double k, double n, double level);
double vpa_cp_lower(double k, double n, double level);
/* Phi^-1(p), full double precision (Halley-refined), +-inf at 0 and 1. */
double vpa_norm_quantile(double p);
/* mu-GDP (Dong, Roth, Su 2019, Cor. 2.13): ln delta(eps), and the eps at delta
 * (0 when delta(0) <= delta or mu <= 0; inf for delta = 0). */
double vpa_gdp_log_delta(double mu, double eps);
double vpa_gdp_epsilon(double mu, double delta);
/* Nasr et al. 2023: mu = Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi). */
double vpa_gdp_mu(double fpr_hi, double fnr_hi);
/* P[Bin(r, q) >= v]. */
double vpa_binom_sf(double v, double r, double q);
/* Steinke, Nasr, Jagielski 2023: p-value of v correct of r guesses on m
 * canaries under an (eps, delta)-DP null, and the largest eps (>= eps_lo) whose
 * p-value is at most alpha. */
double vpa_one_run_pvalue(double m, double r, double v, double eps, double delta);
double vpa_one_run_epsilon(double m, double r, double v, double alpha, double delta);
double vpa_one_run_epsilon_from(double m, double r, double v, double alpha, double delta,
				double eps_lo);

enum vpa_audit_method { VPA_AUDIT_CP, VPA_AUDIT_GDP };

struct vpa_dp_audit {
	double epsilon;                  /* the lower bound, >= 0 */
	double fp, negatives, fn, positives; /* counts at the chosen threshold */
	double fpr_hi, fnr_hi;           /* their Clopper-Pearson upper bounds */
	double mu;                       /* gdp only (NAN for cp) */
	int direction;                   /* 1: ln((1-d-FNR)/FPR), 2: ln((1-d-FPR)/FNR), 0: none */
	double n_thresholds, level;      /* thresholds swept; one-sided level of each bound */
	double threshold;                /* scores: "in" iff score >= threshold */
	double auroc, tpr_at_fpr_1e3, tpr_at_fpr_1e2; /* scores only (NAN for counts) */
};

void vpa_dp_audit_counts(double fp, double neg, double fn, double pos, double alpha,
			 double delta, enum vpa_audit_method method, struct vpa_dp_audit *out);
/* in (members / canaries included) and out, each sorted ascending, n >= 1. */
void vpa_dp_audit_scores(const double *in, size_t n_in, const double *out, size_t n_out,
			 double alpha, double delta, enum vpa_audit_method method,
			 struct vpa_dp_audit *res);

struct vpa_one_run {
	double epsilon, m, pairs, level; /* level = alpha / pairs (Bonferroni) */
	double guesses, correct, k_plus, k_minus; /* at the best pair */
};
int vpa_dp_audit_one_run_scores(const double *in, size_t n_in, const double *out, size_t n_out,
				double alpha, double delta, struct vpa_one_run *res);


/* ---- utterance classifiers: UAR, accuracy, confusion (metrics/classify.c, issue 30) ---- */

struct vpa_cls_metrics {
	size_t n_classes;   /* C */
	size_t n;           /* samples */
	size_t n_present;   /* classes with at least one true sample */
	size_t *confusion;  /* (C, C): row = true class, column = predicted class */
	size_t *support;    /* (C) true samples per class */
	double *recall;     /* (C) correct / support; NAN for a class with no true sample */
	double uar;         /* unweighted average recall over the present classes */
	double uar_macro;   /* sklearn recall_score(average="macro"): over the classes in
			       truth or answers, a class only answered counting 0 */
	double accuracy;    /* correct / n */
};
/*
 * truth[i], pred[i] in [0, C), n >= 1.  UAR is the mean of the per-class
 * recalls of the classes present in truth (a class only ever predicted has
 * no recall to average, as scikit-learn's balanced_accuracy_score leaves it
 * out).  Errors (VPA_EINPUT): n == 0, C == 0, a label out of range.
 */
int vpa_cls_metrics(const uint32_t *truth, const uint32_t *pred, size_t n, size_t C,
		    struct vpa_cls_metrics *out, struct vpa_err *err);
void vpa_cls_metrics_release(struct vpa_cls_metrics *m);

/*
 * The VoicePrivacy Challenge 2024's per-speaker-fold UAR (VoicePAT
 * evaluate_ser): each group (speaker) g is scored alone, UAR_g = recall_score
 * (average="macro") of its samples (uar_macro above); *uar is the mean of UAR_g
 * over the groups with a sample, class_mean[c] the mean over the groups with a
 * true sample of class c of their recall of c (the VPC's ACC_c; NAN when no
 * group has one).  group[i] in [0, G).  Errors as vpa_cls_metrics.
 */
int vpa_cls_fold_uar(const uint32_t *truth, const uint32_t *pred, const uint32_t *group,
		     size_t n, size_t C, size_t G, double *uar, double *class_mean /* (C) */,
		     size_t *n_groups /* OUT: groups with a sample */, struct vpa_err *err);

#endif
