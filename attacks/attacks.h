/*
 * attacks/attacks.h - attack kinds: what a scenario's `attacks:` entries can
 * be.  An attack turns a built target into score sets and those into records
 * (reports/README.md "records") and figures.
 *
 * A kind is one file (attacks/<kind>.c) exporting one `struct
 * vpa_attack_kind` and one line in the table of attacks/registry.c.
 *
 * Every attack that ends in a score set calls vpa_record_from_scores(), so
 * that all records carry the same metrics, intervals, warnings and figures.
 */
#ifndef VPA_ATTACKS_H
#define VPA_ATTACKS_H

#include "base/base.h"
#include "base/json.h"
#include "formats/io.h"
#include "metrics/metrics.h"
#include "targets/targets.h"

/* What one run of an attack produces (the pipeline adds "sweep"). */
struct vpa_attack_out {
	struct vpa_json *records; /* array of records, owned by the caller */
	struct vpa_json *figures; /* array of figures, owned by the caller */
};

struct vpa_attack_kind {
	const char *name;
	const struct vpa_schema *schema;    /* its own keys (not id/kind/target) */
	const char *const *target_kinds;    /* NULL-terminated: kinds it can attack */
	const char *const *metrics;         /* NULL-terminated: gateable metric names
					       ("eer", "zebra.dece", ...) */
	int has_layers;                     /* records carry "layer" */
	const char *doc;
	/* The hooks receive the attack's options struct (opts) and its target's
	 * (target_opts: the target kind's struct), filled once by validation
	 * (config/schema.h "Typed options"), never a YAML node. */
	/* Cross-key checks (ctx->self: the attack's entry); may be NULL. */
	int (*validate)(const struct vpa_kind_ctx *ctx, const void *opts, const void *target_opts,
			struct vpa_err *err);
	/*
	 * The sub names (attackers/conditions) the attack will produce for this
	 * target, known before running, so that gates can be checked: returns
	 * the count and sets *names (caller frees the array; strings borrowed
	 * from the options).  NULL hook: no subs (records have "sub": null).
	 */
	size_t (*subs)(const void *opts, const void *target_opts, const char ***names /* OUT */);
	/* Run on a built target (t->opts: its options); append records and figures to out. */
	int (*run)(struct vpa_run_ctx *ctx, const char *id, const void *opts,
		   const struct vpa_target *t, struct vpa_attack_out *out, struct vpa_err *err);
	/* Title for the report section ("Score sets of 'vpc'"); caller frees. */
	char *(*title)(const char *id, const void *opts, const char *target_id);
	/*
	 * When this attack, with these options on this target, can never record
	 * `metric` (a gate on it could only fail closed): the reason ("its target
	 * 'lm' has no 'audit_canaries'", written into buf), else NULL.  NULL hook:
	 * decided at run time.  scenarios/gates.c asks it for every gate.
	 */
	const char *(*never_records)(const char *metric, const void *opts, const char *target_id,
				     const void *target_opts, char *buf, size_t cap);
};

const struct vpa_attack_kind *vpa_attack_kind_find(const char *name);
size_t vpa_attack_kinds(const struct vpa_attack_kind *const **kinds /* OUT */);
/* 1 when kind k can attack a target of kind `target_kind`. */
int vpa_attack_can_target(const struct vpa_attack_kind *k, const char *target_kind);

/* The common keys of every attack: id, kind, target. */
extern const struct vpa_schema vpa_attack_common_schema;

/* ---- score set -> record + figures (shared by every attack) -------------- */

struct vpa_eval_opts {
	struct vpa_metrics_opts m; /* omega, bins, p_target, c_miss, c_fa */
	double ci_level;           /* 0 = no interval, else in (0, 1) */
	size_t ci_reps;            /* bootstrap replicates */
	uint64_t seed;             /* the scenario seed; split per attack/sub/layer */
	size_t det_points;         /* at most this many DET points per series (300) */
	int chance_expected;       /* 1: the attacker is expected at chance (ignorant):
				      no "scores may be reversed" hint (an
				      anti-correlated record is still said) */
};
void vpa_eval_opts_init(struct vpa_eval_opts *o);

/*
 * The sanity warnings of a score set (never silent): scores anti-correlated
 * with identity (m->anti_correlated, vpa_metrics_judge_reversal: "the scores
 * are anti-correlated with identity (...): an attacker who reverses them
 * reaches EER X%", for every attacker), else a sweep EER above 50% ("scores
 * may be reversed"; not when chance_expected: for an attacker expected at
 * chance, the ignorant attacker, a sweep EER whose interval reaches 50% is
 * chance), fewer
 * than 100 trials of a class, more than 10% tied scores, undefined or
 * unreliable linkability, Cllr above 1 bit (not calibrated: read Cllr_min).
 * emit(ctx, msg) is called once per warning; msg starts with label.  Used by
 * `vpaudit metrics`, and by records built outside a run (ctx->warn_groups
 * NULL).
 */
void vpa_sanity_warnings(const char *label, const struct vpa_metrics *m, int chance_expected,
			 void (*emit)(void *ctx, const char *msg), void *ctx);

/*
 * Grouped warnings of a run: with ctx->warn_groups = vpa_warn_groups_new(),
 * vpa_record_from_scores collects its warnings there, and
 * vpa_warn_groups_flush(ctx) gives one line per attack and condition ("a1:
 * fewer than 100 target trials in 12 records (40 to 60): ...", or the line
 * of the record when it is alone), in the order first met, through
 * vpa_ctx_warn, and frees the groups (ctx->warn_groups = NULL).
 */
struct vpa_warn_groups *vpa_warn_groups_new(void);
void vpa_warn_groups_flush(struct vpa_run_ctx *ctx);
/* For a sweep point run on another MPI rank (scenarios/run.c): src's items
 * appended to dst; the items packed into b / read back and appended to g
 * (non-zero when the bytes do not read); free without flushing. */
void vpa_warn_groups_append(struct vpa_warn_groups *dst, const struct vpa_warn_groups *src);
void vpa_warn_groups_pack(const struct vpa_warn_groups *g, struct vpa_buf *b);
int vpa_warn_groups_unpack(struct vpa_warn_groups *g, const unsigned char **p,
			   const unsigned char *end);
void vpa_warn_groups_free(struct vpa_warn_groups *g);

/*
 * Adds "PATH": "undefined value" to rec's "unreliable" object (made when
 * missing) for every null or non-finite leaf of rec's "metrics" that the
 * object does not name yet, by itself or by a prefix.
 */
void vpa_record_mark_undefined(struct vpa_json *rec);

/*
 * One score set in, one record out:
 *   {"attack": attack, "sub": sub|null, "layer": layer|null, "sweep": null,
 *    "metrics": {n_target, n_nontarget, eer, eer_threshold, eer_sweep, cllr,
 *                cllr_min, linkability, min_dcf, zebra: {dece, log10_lr_worst,
 *                category}, tied_fraction, linkability_hist,
 *                linkability_reliable, eer_flipped, cllr_min_flipped,
 *                min_dcf_flipped},
 *    "anti_correlated": bool (vpa_metrics_judge_reversal),
 *    "anti_correlation": {eer_sweep_ci: [lo, hi] | null, level, method, reps}
 *                (null members when the sweep EER is at most 0.5: no interval
 *                is drawn; else a VPA_REVERSAL_LEVEL bootstrap with
 *                vpa_reversal_reps(ci_reps, N) replicates, on the record's
 *                bootstrap stream, or the record's own interval when ci_level
 *                is that level),
 *    "unreliable": {PATH: REASON, ...} (vpa_metrics_reliability, and
 *                "undefined value" for every null metric; {} when all hold),
 *    "ci": {level, method, reps, reps_used, interval: "BCa", extended, eer,
 *           cllr_min, eer_sweep, linkability} (when ci_level > 0)}
 * appended to out->records; its linkability figure (when defined) appended to
 * out->figures; its DET series {"name", "p_miss", "p_fa", "eer"} appended to
 * det_series (an array, may be NULL).  Sanity warnings (vpa_sanity_warnings)
 * go to ctx->warn_groups when set, else to ctx->warnings and stderr.  The
 * bootstrap stream is vpa_rng_split(seed, "ci/ATTACK/SUB/LAYER"): results do
 * not depend on order or threads.  t is borrowed and not modified (a sorted
 * copy is made).  layer < 0: no layer.
 */
int vpa_record_from_scores(struct vpa_run_ctx *ctx, const char *attack, const char *sub,
			   long layer, const struct vpa_trials *t,
			   const struct vpa_eval_opts *o, struct vpa_attack_out *out,
			   struct vpa_json *det_series, struct vpa_err *err);

/* The "extended" of a ci object: the metrics whose BCa interval was widened
 * to its estimate, "eer, linkability", or null. */
struct vpa_json *vpa_ci_extended_json(const struct vpa_ci *ci);

/* {"type":"det","id":ID,"title":TITLE,"series":series} (takes series). */
struct vpa_json *vpa_det_figure(const char *id, const char *title, struct vpa_json *series);

/* ---- the privacy-utility figure (attacks/privacy_utility.c, issue 30) ---- */
#define VPA_PRIVACY_UTILITY_FIG "privacy-utility"
/* Append to figures a "lines" figure (id VPA_PRIVACY_UTILITY_FIG): one point
 * per linkage attack and sweep value whose records carry wer_increase, x the
 * WER increase in points, y the lowest EER (%) of its pooled attackers but
 * the baseline.  1 when added, 0 when no record has a WER cost. */
int vpa_privacy_utility_figure(const struct vpa_json *records, const char *sweep_param,
			       struct vpa_json *figures);

/* ---- kind `evaluate` ----------------------------------------------------- */
extern const struct vpa_attack_kind vpa_attack_evaluate;

#endif
