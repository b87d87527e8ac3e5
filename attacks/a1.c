/*
 * attacks/a1.c - attack kind `a1_footprint`: attack A1 of Tomashenko et al.,
 * "Privacy attacks for ASR acoustic models in a federated learning
 * framework", ICASSP 2022, section 3.2.1, as metrics/README.md defines it.
 *
 * For every hidden layer h and personalised model W_s, the footprint is
 * Delta = act_h(W_s) - act_h(W_g) on the Indicator set; its mean mu and
 * population standard deviation sigma over all frames of all Indicator
 * utterances summarise the model.  Two models i, k are compared with
 *   rho = a_mu |mu_i - mu_k| / (|mu_i| |mu_k|) + a_sigma |sigma_i - sigma_k| / (|sigma_i| |sigma_k|)
 * and score = -rho.  Target trials: every pair of different models of the
 * same speaker; non-target trials: a seeded random sample of pairs of models
 * of different speakers.  Records per layer for mu+sigma, mu only and sigma
 * only (the paper's Fig. 5 ablation), a figure of EER against layer.
 *
 * Also the footprint kernels declared in targets/fl_am.h (shared with A2).
 */
#include "attacks/attacks.h"
#include "attacks/flam_audit.h"
#include "targets/fl_am.h"
#include "metrics/metrics.h"

#include "base/dist.h"
#include "base/la.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- kernels ----------------------------------------------------------------- */

void vpa_footprint_stats(const float *a, const float *g, size_t N, size_t d, double *mu,
			 double *sd)
{
	for (size_t j = 0; j < d; j++)
		mu[j] = sd[j] = 0;
	if (N == 0)
		return;
	for (size_t i = 0; i < N; i++)
		for (size_t j = 0; j < d; j++)
			mu[j] += (double)a[i * d + j] - (double)g[i * d + j];
	for (size_t j = 0; j < d; j++)
		mu[j] /= (double)N;
	/* two passes: the variance of Delta about its mean, divided by N */
	for (size_t i = 0; i < N; i++)
		for (size_t j = 0; j < d; j++) {
			double e = (double)a[i * d + j] - (double)g[i * d + j] - mu[j];
			sd[j] += e * e;
		}
	for (size_t j = 0; j < d; j++)
		sd[j] = sqrt(sd[j] / (double)N);
}

static double term(const double *x, const double *y, size_t d)
{
	double nd = 0, nx = 0, ny = 0;
	for (size_t j = 0; j < d; j++) {
		nd += (x[j] - y[j]) * (x[j] - y[j]);
		nx += x[j] * x[j];
		ny += y[j] * y[j];
	}
	nd = sqrt(nd);
	double den = sqrt(nx) * sqrt(ny);
	if (nd == 0)
		return 0;
	if (den == 0)
		den = 2.2250738585072014e-308; /* an unchanged model: as far as it gets, finite */
	double r = nd / den;
	return isfinite(r) ? r : 1.7976931348623157e308;
}

double vpa_footprint_rho(const double *mu_i, const double *sd_i, const double *mu_k,
			 const double *sd_k, size_t d, double a_mu, double a_sigma)
{
	double r = 0;
	if (a_mu != 0)
		r += a_mu * term(mu_i, mu_k, d);
	if (a_sigma != 0)
		r += a_sigma * term(sd_i, sd_k, d);
	return isfinite(r) ? r : 1.7976931348623157e308;
}

void vpa_flam_pairs(const struct vpa_flam *t, int part, size_t n_non, uint64_t seed,
		    uint32_t **tar, size_t *n_tar, uint32_t **non, size_t *n_non_out)
{
	size_t L = 0;
	uint32_t *idx = xmalloc((t->n_models ? t->n_models : 1) * sizeof(uint32_t));
	for (size_t i = 0; i < t->n_models; i++)
		if (part == 0 || t->models[i].part == part)
			idx[L++] = (uint32_t)i;
	size_t nt = 0, cap = 16, M = 0;
	*tar = xmalloc(2 * cap * sizeof(uint32_t));
	for (size_t a = 0; a < L; a++)
		for (size_t b = a + 1; b < L; b++) {
			if (t->models[idx[a]].spk == t->models[idx[b]].spk) {
				if (nt == cap) {
					cap *= 2;
					*tar = xrealloc(*tar, 2 * cap * sizeof(uint32_t));
				}
				(*tar)[2 * nt] = idx[a];
				(*tar)[2 * nt + 1] = idx[b];
				nt++;
			} else {
				M++;
			}
		}
	*n_tar = nt;
	size_t k = M < n_non ? M : n_non;
	*non = xmalloc(2 * (k ? k : 1) * sizeof(uint32_t));
	size_t got = 0;
	if (k == M) {
		for (size_t a = 0; a < L; a++)
			for (size_t b = a + 1; b < L; b++)
				if (t->models[idx[a]].spk != t->models[idx[b]].spk) {
					(*non)[2 * got] = idx[a];
					(*non)[2 * got + 1] = idx[b];
					got++;
				}
	} else {
		/* rejection sampling of distinct unordered pairs (a < b) */
		struct vpa_rng r;
		vpa_rng_split(&r, seed, "a1/nontarget-pairs");
		unsigned char *used = xcalloc((L * L + 7) / 8, 1);
		while (got < k) {
			size_t a = vpa_rng_below(&r, L), b = vpa_rng_below(&r, L);
			if (a == b)
				continue;
			if (a > b) {
				size_t s = a;
				a = b;
				b = s;
			}
			if (t->models[idx[a]].spk == t->models[idx[b]].spk)
				continue;
			size_t bit = a * L + b;
			if (used[bit / 8] & (1u << (bit % 8)))
				continue;
			used[bit / 8] |= (unsigned char)(1u << (bit % 8));
			(*non)[2 * got] = idx[a];
			(*non)[2 * got + 1] = idx[b];
			got++;
		}
		free(used);
	}
	*n_non_out = got;
	free(idx);
}

/* ---- the attack ---------------------------------------------------------------- */

#define INF INFINITY
/* typed options (config/schema.h), filled by validation */
struct a1_opts {
	double alpha_mu;
	double alpha_sigma;
	long long n_nontarget;
	const char *models;
	struct vpa_strs layers;
	double ci;
	long long reps;
	double audit_alpha;
	struct vpa_mark alpha_mu_at, alpha_sigma_at, n_nontarget_at, models_at, layers_at,
		ci_at, reps_at, audit_alpha_at;
};

static const struct vpa_key keys[] = {
	{"alpha_mu", VPA_K_NUM, 0, "1", 0, INF, 0, NULL, NULL, "1",
	 "weight a_mu of the mean term of rho",
	 VPA_AT(struct a1_opts, alpha_mu), VPA_MARK(struct a1_opts, alpha_mu_at)},
	{"alpha_sigma", VPA_K_NUM, 0, "10", 0, INF, 0, NULL, NULL, "10",
	 "weight a_sigma of the standard-deviation term of rho",
	 VPA_AT(struct a1_opts, alpha_sigma), VPA_MARK(struct a1_opts, alpha_sigma_at)},
	{"n_nontarget", VPA_K_INT, 0, "10000", 1, 100000000, 0, NULL, NULL, "10000",
	 "non-target trials: a seeded random sample of pairs of models of different speakers "
	 "(all pairs when there are fewer)",
	 VPA_AT(struct a1_opts, n_nontarget), VPA_MARK(struct a1_opts, n_nontarget_at)},
	{"models", VPA_K_ENUM, 0, "part2", -INF, INF, 0, "part1|part2|all", NULL, "part2",
	 "which personalised models form the trials (A2 is evaluated on part2)",
	 VPA_AT(struct a1_opts, models), VPA_MARK(struct a1_opts, models_at)},
	{"layers", VPA_K_LIST, 0, NULL, -INF, INF, 0, NULL, NULL, "[1, 3, 5]",
	 "hidden layers to attack (1-based); default all",
	 VPA_AT(struct a1_opts, layers), VPA_MARK(struct a1_opts, layers_at)},
	{"ci", VPA_K_NUM, 0, "0", 0, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.95",
	 "bootstrap confidence level (identities = models are resampled); 0 = none",
	 VPA_AT(struct a1_opts, ci), VPA_MARK(struct a1_opts, ci_at)},
	{"reps", VPA_K_INT, 0, "1000", 10, 1000000, 0, NULL, NULL, "1000", "bootstrap replicates",
	 VPA_AT(struct a1_opts, reps), VPA_MARK(struct a1_opts, reps_at)},
	{"audit_alpha", VPA_K_NUM, 0, "0.05", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL,
	 "0.01",
	 "a target with local DP: the level of the DP audit's lower bound (Clopper-Pearson, "
	 "Bonferroni over the thresholds swept and the layers audited)",
	 VPA_AT(struct a1_opts, audit_alpha), VPA_MARK(struct a1_opts, audit_alpha_at)},
	{NULL},
};
static const struct vpa_schema schema = {"attack a1_footprint", keys, sizeof(struct a1_opts)};

static const char *const target_kinds[] = {"fl_acoustic_models", NULL};
static const char *const metrics[] = {
	"eer", "eer_sweep", "cllr", "cllr_min", "linkability", "min_dcf", "zebra.dece",
	"zebra.log10_lr_worst", "n_target", "n_nontarget", "eer_threshold", "tied_fraction",
	"linkability_hist", "eer_flipped", "cllr_min_flipped", "min_dcf_flipped",
	"epsilon", "epsilon_per_release", "utility_acc", "utility_acc_global", "epsilon_rdp",
	"epsilon_per_release_replace", "epsilon_lower_bound", NULL,
};
static const char *const variant[3] = {"mu_sigma", "mu", "sigma"};

/* "layer 2", or for an ONNX import "layer 2: NAME" (the value's name, its last
 * 40 characters after "..." when longer: names such as /blocks.2/Relu_output_0
 * differ at the end) */
static void layer_label(const struct vpa_flam *t, size_t h, char *buf, size_t cap)
{
	if (!t->layer_name) {
		snprintf(buf, cap, "layer %zu", h + 1);
		return;
	}
	const char *nm = t->layer_name[h];
	size_t n = strlen(nm);
	if (n > 40)
		snprintf(buf, cap, "layer %zu: ...%s", h + 1, nm + n - 40);
	else
		snprintf(buf, cap, "layer %zu: %s", h + 1, nm);
}

/*
 * The key check made every item of `layers` a value; a quoted one ("2") was
 * refused here when the check read nodes, the options do not say whether a
 * value was quoted: it is read as the number it holds.
 */
static int validate_layers(const struct vpa_kind_ctx *ctx, const struct a1_opts *o,
			   struct vpa_err *err)
{
	const struct vpa_strs *l = &o->layers;
	if (!l->given)
		return 0;
	if (l->n == 0) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, o->layers_at);
		return vpa_fail(err, VPA_EINPUT, &loc, "'layers' is empty: list hidden layers "
				"(1-based) or leave the key out for all");
	}
	for (size_t i = 0; i < l->n; i++) {
		const char *v = l->v[i];
		char *end;
		long x = strtol(v, &end, 10);
		if (!l->plain[i] || *end || end == v || x < 1 || x > 4096) {
			struct vpa_loc loc = vpa_mark_loc(ctx->file, l->marks[i]);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"a layer must be an integer in [1, 4096], got '%s'", v);
		}
	}
	return 0;
}

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, const void *target_opts,
		    struct vpa_err *err)
{
	const struct a1_opts *o = opts;
	(void)target_opts;
	if (o->alpha_mu == 0 && o->alpha_sigma == 0) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, ctx->self); /* the attack's entry */
		return vpa_fail(err, VPA_EINPUT, &loc, "alpha_mu and alpha_sigma are both 0: rho "
				"would be 0 for every pair");
	}
	return validate_layers(ctx, o, err);
}

/* Chosen layers (0-based) into *out; error when a layer is beyond the target's. */
static int chosen_layers(const struct vpa_run_ctx *ctx, const struct a1_opts *o,
			 size_t n_layers, size_t **out, size_t *n, struct vpa_err *err)
{
	const struct vpa_strs *l = o->layers.given ? &o->layers : NULL;
	*n = l ? l->n : n_layers;
	*out = xmalloc((*n ? *n : 1) * sizeof(size_t));
	for (size_t i = 0; i < *n; i++) {
		if (!l) {
			(*out)[i] = i;
			continue;
		}
		long x = strtol(l->v[i], NULL, 10);
		if ((size_t)x > n_layers) {
			struct vpa_loc loc = vpa_mark_loc(ctx->file, l->marks[i]);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"layer %ld: the target has %zu hidden layer%s", x, n_layers,
					n_layers == 1 ? "" : "s");
		}
		(*out)[i] = (size_t)(x - 1);
	}
	return 0;
}

/* Per-model footprint statistics of the chosen layers. */
struct fp {
	double **mu, **sd; /* [model][k] -> (dim) */
};

struct fp_pool {
	struct vpa_flam *t;
	const size_t *lay;
	size_t nl, tot, N;
	size_t *ms; /* (n_use) the models whose footprints are wanted, in order */
	float **g;
	double **mu, **sd;
};

/* Job k: the footprint of model ms[k] (base/dist.c: run by one rank, then
   sent as its 2 x tot doubles). */
static int fp_job(void *arg, size_t k, struct vpa_err *e)
{
	struct fp_pool *p = arg;
	size_t m = p->ms[k];
	float **a = NULL;
	int rc = vpa_flam_activations(p->t, m, &a, e);
	if (rc)
		return rc;
	double *mu = xmalloc(p->tot * sizeof(double)), *sd = xmalloc(p->tot * sizeof(double));
	size_t o = 0;
	for (size_t k2 = 0; k2 < p->nl; k2++) {
		size_t h = p->lay[k2], d = p->t->dim[h];
		vpa_footprint_stats(a[h], p->g[h], p->N, d, mu + o, sd + o);
		o += d;
	}
	p->mu[m] = mu;
	p->sd[m] = sd;
	vpa_flam_acts_free(a, p->t->n_layers);
	return 0;
}

static void fp_pack(void *arg, size_t k, struct vpa_buf *b)
{
	struct fp_pool *p = arg;
	vpa_pack_f64s(b, p->mu[p->ms[k]], p->tot);
	vpa_pack_f64s(b, p->sd[p->ms[k]], p->tot);
}

static int fp_unpack(void *arg, size_t k, const unsigned char *q, size_t len)
{
	struct fp_pool *p = arg;
	size_t m = p->ms[k];
	const unsigned char *end = q + len;
	if (len != 2 * p->tot * sizeof(double))
		return -1;
	p->mu[m] = xmalloc(p->tot * sizeof(double));
	p->sd[m] = xmalloc(p->tot * sizeof(double));
	return vpa_unpack_f64s(&q, end, p->mu[m], p->tot) || vpa_unpack_f64s(&q, end, p->sd[m], p->tot);
}

int vpa_a1_footprints(struct vpa_flam *t, const size_t *lay, size_t nl, const unsigned char *use,
		      int threads, const char *label, double ***mu, double ***sd,
		      struct vpa_err *err)
{
	struct fp_pool p;
	memset(&p, 0, sizeof(p));
	p.t = t;
	p.lay = lay;
	p.nl = nl;
	p.N = t->off[t->n_utt];
	for (size_t k = 0; k < nl; k++)
		p.tot += t->dim[lay[k]];
	p.mu = xcalloc(t->n_models ? t->n_models : 1, sizeof(double *));
	p.sd = xcalloc(t->n_models ? t->n_models : 1, sizeof(double *));
	p.ms = xcalloc(t->n_models ? t->n_models : 1, sizeof(size_t));
	size_t n_use = 0;
	for (size_t m = 0; m < t->n_models; m++)
		if (!use || use[m])
			p.ms[n_use++] = m;
	int rc = vpa_flam_activations(t, t->n_models, &p.g, err);
	if (!rc)
		rc = vpa_dist_jobs(n_use, threads, fp_job, fp_pack, fp_unpack, &p, label,
				   vpa_la_run_workers, err);
	vpa_flam_acts_free(p.g, t->n_layers);
	free(p.ms);
	if (rc) {
		for (size_t m = 0; m < t->n_models; m++) {
			free(p.mu[m]);
			free(p.sd[m]);
		}
		free(p.mu);
		free(p.sd);
		p.mu = p.sd = NULL;
	}
	*mu = p.mu;
	*sd = p.sd;
	return rc;
}

static int footprints(struct vpa_flam *t, const size_t *lay, size_t nl, const unsigned char *use,
		      int threads, struct fp *f, struct vpa_err *err)
{
	return vpa_a1_footprints(t, lay, nl, use, threads, "a1 footprints", &f->mu, &f->sd, err);
}

static void fp_free(struct fp *f, size_t n)
{
	for (size_t i = 0; f->mu && i < n; i++) {
		free(f->mu[i]);
		free(f->sd[i]);
	}
	free(f->mu);
	free(f->sd);
}

/* Trials of one variant and layer (ids: model ids). */
static void fill_trials(const struct vpa_flam *t, const struct fp *f, size_t o, size_t d,
			double a_mu, double a_sigma, const uint32_t *tp, size_t nt,
			const uint32_t *np, size_t nn, struct vpa_trials *tr)
{
	vpa_trials_init(tr);
	tr->n_tar = nt;
	tr->n_non = nn;
	tr->tar = xmalloc((nt ? nt : 1) * sizeof(double));
	tr->non = xmalloc((nn ? nn : 1) * sizeof(double));
	tr->tar_e = xmalloc((nt ? nt : 1) * sizeof(uint32_t));
	tr->tar_t = xmalloc((nt ? nt : 1) * sizeof(uint32_t));
	tr->non_e = xmalloc((nn ? nn : 1) * sizeof(uint32_t));
	tr->non_t = xmalloc((nn ? nn : 1) * sizeof(uint32_t));
	tr->n_ids_e = tr->n_ids_t = t->n_models;
	tr->ids_e = xcalloc(t->n_models ? t->n_models : 1, sizeof(char *));
	tr->ids_t = xcalloc(t->n_models ? t->n_models : 1, sizeof(char *));
	for (size_t i = 0; i < t->n_models; i++) {
		tr->ids_e[i] = xstrdup(t->models[i].id);
		tr->ids_t[i] = xstrdup(t->models[i].id);
	}
	for (int c = 0; c < 2; c++) {
		const uint32_t *p = c ? np : tp;
		size_t n = c ? nn : nt;
		double *s = c ? tr->non : tr->tar;
		uint32_t *e = c ? tr->non_e : tr->tar_e, *u = c ? tr->non_t : tr->tar_t;
		for (size_t i = 0; i < n; i++) {
			uint32_t a = p[2 * i], b = p[2 * i + 1];
			s[i] = -vpa_footprint_rho(f->mu[a] + o, f->sd[a] + o, f->mu[b] + o,
						  f->sd[b] + o, d, a_mu, a_sigma);
			e[i] = a;
			u[i] = b;
		}
	}
}

/* ---- the local-DP audit (issue 28 item 3) ------------------------------------------ */

/*
 * The audit's trials: the attack's target pairs ("in": a model of speaker S
 * scored against another model fine-tuned on S) and non-target pairs ("out":
 * against a model of another speaker), each set thinned greedily, in the
 * attack's order, so that no model appears twice in it.  Clopper-Pearson
 * needs independent trials: models are released with independent noise and
 * fine-tuned on disjoint data, so trials on disjoint models are independent
 * (given the speakers), while the attack's trials share models.  The two sets
 * may share models: each bound is on its own set, joined by a union bound.
 */
struct audit_pairs {
	uint32_t *in, *out; /* (2 n) model indices */
	size_t n_in, n_out;
};

static size_t disjoint(const uint32_t *p, size_t n, size_t n_models, uint32_t *dst)
{
	unsigned char *used = xcalloc(n_models ? n_models : 1, 1);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t a = p[2 * i], b = p[2 * i + 1];
		if (used[a] || used[b])
			continue;
		used[a] = used[b] = 1;
		dst[2 * k] = a;
		dst[2 * k + 1] = b;
		k++;
	}
	free(used);
	return k;
}

static void audit_pairs_make(const struct vpa_flam *t, const uint32_t *tp, size_t nt,
			     const uint32_t *np, size_t nn, struct audit_pairs *a)
{
	a->in = xmalloc(2 * (nt ? nt : 1) * sizeof(uint32_t));
	a->out = xmalloc(2 * (nn ? nn : 1) * sizeof(uint32_t));
	a->n_in = disjoint(tp, nt, t->n_models, a->in);
	a->n_out = disjoint(np, nn, t->n_models, a->out);
}

/*
 * The audit of one mu+sigma record (layer offset o, width d) into its
 * metrics mj, per the shared convention of issue 28: `epsilon_lower_bound`
 * and `dp_audit`.  Local DP: covered, CP over the threshold sweep of
 * vpa_dp_audit_scores at level `level_alpha` (alpha split over the layers'
 * records), against the per-release epsilon under replacement (the trials
 * replace the speaker's data by another speaker's).  DP-SGD (example-level):
 * outside its scope.  No DP, or no noise (epsilon infinite): no claim, no
 * audit.
 */
static void dp_audit(const struct vpa_flam *t, const struct fp *f, size_t o, size_t d, double am,
		     double as, const struct audit_pairs *a, double level_alpha, double alpha,
		     struct vpa_json *mj)
{
	if (t->dp_mech == VPA_FLAM_DP_DPSGD) {
		struct vpa_json *au = vpa_json_obj();
		vpa_json_set_str(au, "scope", "outside");
		vpa_json_set_str(au, "why",
				 "DP-SGD protects one adaptation example of a model; A1 tells whether "
				 "two models were fine-tuned on the same speaker's whole data, which "
				 "example-level DP does not bound");
		vpa_json_set(mj, "dp_audit", au);
		return;
	}
	if (t->dp_mech != VPA_FLAM_DP_LOCAL || !isfinite(t->dp_epsilon_replace))
		return;
	double *in = xmalloc(a->n_in * sizeof(double)), *out = xmalloc(a->n_out * sizeof(double));
	for (int c = 0; c < 2; c++) {
		const uint32_t *p = c ? a->out : a->in;
		size_t n = c ? a->n_out : a->n_in;
		double *s = c ? out : in;
		for (size_t i = 0; i < n; i++) {
			uint32_t x = p[2 * i], y = p[2 * i + 1];
			s[i] = -vpa_footprint_rho(f->mu[x] + o, f->sd[x] + o, f->mu[y] + o,
						  f->sd[y] + o, d, am, as);
		}
	}
	vpa_flam_audit_cp(t, in, a->n_in, out, a->n_out, level_alpha, alpha,
			  "in: a model scored against another model of its speaker, out: against "
			  "a model of another speaker, each model at most once per set so the "
			  "trials are independent; Clopper-Pearson bounds with Bonferroni over the "
			  "thresholds swept and the layers audited; a bound above the claim proves "
			  "a defect, one below it does not prove the claim",
			  mj);
	free(in);
	free(out);
}

static struct vpa_json *num_arr(const double *x, size_t n)
{
	struct vpa_json *a = vpa_json_arr();
	for (size_t i = 0; i < n; i++)
		vpa_json_push(a, vpa_json_num(x[i]));
	return a;
}

static int run(struct vpa_run_ctx *ctx, const char *id, const void *opts,
	       const struct vpa_target *tg, struct vpa_attack_out *out, struct vpa_err *err)
{
	const struct a1_opts *o = opts;
	struct vpa_flam *t = tg->data;
	double a_mu = o->alpha_mu;
	double a_sg = o->alpha_sigma;
	size_t n_non = (size_t)o->n_nontarget;
	double audit_alpha = o->audit_alpha;
	struct audit_pairs au = {0};
	const char *ms = o->models;
	int part = !strcmp(ms, "part1") ? VPA_FLAM_PART1 : !strcmp(ms, "part2") ? VPA_FLAM_PART2 : 0;
	struct vpa_eval_opts eo;
	vpa_eval_opts_init(&eo);
	eo.ci_level = o->ci;
	eo.ci_reps = (size_t)o->reps;
	eo.seed = ctx->seed;
	size_t *lay = NULL, nl = 0, nt = 0, nn = 0;
	uint32_t *tp = NULL, *np = NULL;
	struct fp f = {0};
	struct vpa_json *tmpfig = vpa_json_arr();
	double *eer = NULL;
	long *link_at = NULL;
	unsigned char *use = NULL;
	int rc = chosen_layers(ctx, o, t->n_layers, &lay, &nl, err);
	if (rc)
		goto out;
	vpa_flam_pairs(t, part, n_non, ctx->seed, &tp, &nt, &np, &nn);
	if (nt == 0 || nn == 0) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "target '%s': the %s models give no %s trial (a target trial needs a "
			      "speaker with two models, a non-target one two speakers)", tg->id, ms,
			      nt == 0 ? "target" : "non-target");
		goto out;
	}
	use = xcalloc(t->n_models, 1);
	for (size_t i = 0; i < nt; i++)
		use[tp[2 * i]] = use[tp[2 * i + 1]] = 1;
	for (size_t i = 0; i < nn; i++)
		use[np[2 * i]] = use[np[2 * i + 1]] = 1;
	if ((rc = footprints(t, lay, nl, use, ctx->threads, &f, err)))
		goto out;
	audit_pairs_make(t, tp, nt, np, nn, &au);

	/* utility beside the privacy numbers (simulated targets) */
	double ua = 0, ug = 0;
	size_t nu = 0;
	for (size_t i = 0; i < t->n_models; i++)
		if (isfinite(t->models[i].acc)) {
			ua += t->models[i].acc;
			ug += t->models[i].acc_global;
			nu++;
		}
	eer = xmalloc(3 * nl * sizeof(double));
	link_at = xmalloc(nl * sizeof(long));
	struct vpa_json *det = vpa_json_arr();
	struct vpa_attack_out tmp = {out->records, tmpfig};
	for (int v = 0; v < 3 && !rc; v++) {
		double am = v == 2 ? 0 : a_mu, as = v == 1 ? 0 : a_sg;
		if (am == 0 && as == 0) { /* this variant is switched off by the weights */
			for (size_t k = 0; k < nl; k++)
				eer[v * nl + k] = NAN;
			continue;
		}
		size_t o = 0;
		for (size_t k = 0; k < nl && !rc; k++) {
			size_t h = lay[k], d = t->dim[h];
			struct vpa_trials tr;
			fill_trials(t, &f, o, d, am, as, tp, nt, np, nn, &tr);
			size_t nf = tmpfig->n, nd = det->n, nr = out->records->n;
			rc = vpa_record_from_scores(ctx, id, variant[v], (long)(h + 1), &tr, &eo, &tmp,
						    v == 0 ? det : NULL, err);
			vpa_trials_release(&tr);
			o += d;
			if (rc)
				break;
			struct vpa_json *rec = out->records->items[nr];
			struct vpa_json *mj = vpa_json_get(rec, "metrics");
			if (t->layer_name) /* an ONNX import: the value the layer was read from */
				vpa_json_set_str(rec, "layer_name", t->layer_name[h]);
			eer[v * nl + k] = vpa_json_get_num(mj, "eer", NAN);
			vpa_json_set_num(mj, "layer_dim", (double)d);
			if (v == 0) {
				/* the run's: per speaker, over all its released models */
				vpa_json_set_num(mj, "epsilon",
						 t->dp_clip > 0 ? t->dp_epsilon_speaker : INFINITY);
				vpa_json_set_num(mj, "epsilon_per_release",
						 t->dp_clip > 0 ? t->dp_epsilon : INFINITY);
				if (t->dp_mech != VPA_FLAM_DP_NONE)
					vpa_flam_dp_metrics(t, rec, mj);
				dp_audit(t, &f, o - d, d, am, as, &au, audit_alpha / (double)nl,
					 audit_alpha, mj);
				vpa_json_set_num(mj, "utility_acc", nu ? ua / (double)nu : NAN);
				vpa_json_set_num(mj, "utility_acc_global", nu ? ug / (double)nu : NAN);
				link_at[k] = tmpfig->n > nf ? (long)nf : -1;
				if (det->n > nd) {
					char nm[96];
					layer_label(t, h, nm, sizeof(nm));
					vpa_json_set_str(det->items[nd], "name", nm);
				}
			}
		}
	}
	if (rc) {
		vpa_json_free(det);
		goto out;
	}
	/* figures: EER against layer (three variants), DET of mu+sigma per layer, and
	   the linkability of the best mu+sigma layer */
	{
		struct vpa_json *fig = vpa_json_obj(), *series = vpa_json_arr();
		double *x = xmalloc(nl * sizeof(double));
		for (size_t k = 0; k < nl; k++)
			x[k] = (double)(lay[k] + 1);
		char buf[512];
		snprintf(buf, sizeof(buf), "%s-eer-layer", id);
		/* bars: the layers named on the axis, EER on its 0-50% scale (50% = chance) */
		vpa_json_set_str(fig, "type", "bars");
		vpa_json_set_str(fig, "id", buf);
		snprintf(buf, sizeof(buf), "A1 EER against hidden layer (%s on %s; mu+sigma, mu only, "
			 "sigma only)", id, tg->id);
		vpa_json_set_str(fig, "title", buf);
		vpa_json_set_str(fig, "ylabel", "EER (0.5 = chance)");
		struct vpa_json *cats = vpa_json_arr(), *yr = vpa_json_arr();
		for (size_t k = 0; k < nl; k++) {
			layer_label(t, lay[k], buf, sizeof(buf));
			vpa_json_push(cats, vpa_json_str(buf));
		}
		vpa_json_set(fig, "categories", cats);
		vpa_json_push(yr, vpa_json_num(0));
		vpa_json_push(yr, vpa_json_num(0.5));
		vpa_json_set(fig, "yrange", yr);
		for (int v = 0; v < 3; v++) {
			struct vpa_json *s = vpa_json_obj();
			vpa_json_set_str(s, "name", variant[v]);
			vpa_json_set(s, "y", num_arr(eer + v * nl, nl));
			vpa_json_push(series, s);
		}
		vpa_json_set(fig, "series", series);
		vpa_json_push(out->figures, fig);
		free(x);
		snprintf(buf, sizeof(buf), "DET: %s (mu+sigma) on %s, per hidden layer", id, tg->id);
		char fid[256];
		snprintf(fid, sizeof(fid), "%s-det", id);
		vpa_json_push(out->figures, vpa_det_figure(fid, buf, det));
		size_t best = 0;
		for (size_t k = 1; k < nl; k++)
			if (eer[k] < eer[best])
				best = k;
		if (nl && link_at[best] >= 0)
			vpa_json_push(out->figures,
				      vpa_json_clone(tmpfig->items[link_at[best]]));
	}
out:
	vpa_json_free(tmpfig);
	free(au.in);
	free(au.out);
	fp_free(&f, t->n_models);
	free(use);
	free(eer);
	free(link_at);
	free(lay);
	free(tp);
	free(np);
	return rc;
}

static size_t subs(const void *opts, const void *target_opts, const char ***names)
{
	(void)opts;
	(void)target_opts;
	*names = xcalloc(3, sizeof(**names));
	for (int v = 0; v < 3; v++)
		(*names)[v] = variant[v];
	return 3;
}

static char *title(const char *id, const void *opts, const char *target_id)
{
	(void)opts;
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s: A1 footprint attack on the personalised models of '%s'", id,
		       target_id);
	return b.data;
}

const struct vpa_attack_kind vpa_attack_a1_footprint = {
	.name = "a1_footprint",
	.schema = &schema,
	.target_kinds = target_kinds,
	.metrics = metrics,
	.has_layers = 1,
	.doc = "Attack A1 of Tomashenko et al. (ICASSP 2022, 3.2.1): per hidden layer, the mean "
	       "and standard deviation over the Indicator frames of the personalised model's "
	       "activations minus the global model's, compared with rho = a_mu |mu_i - mu_k| / "
	       "(|mu_i| |mu_k|) + a_sigma |sigma_i - sigma_k| / (|sigma_i| |sigma_k|), score -rho.  "
	       "Target trials: pairs of models of the same speaker; non-target: a seeded sample of "
	       "pairs of different speakers.  Records per layer for subs mu_sigma, mu and sigma "
	       "(the paper's Fig. 5 ablation); mu_sigma records also carry the target's local-DP "
	       "`epsilon` of the run (per speaker, composed over its released models) and "
	       "`epsilon_per_release`, and mean frame accuracies (utility).  Under local DP with "
	       "noise they also carry `epsilon_lower_bound` and `dp_audit`: a Clopper-Pearson "
	       "audit of the per-release claim (replacement adjacency) from the scores of "
	       "disjoint same-speaker and different-speaker model pairs (targets/README.md).",
	.validate = validate,
	.subs = subs,
	.run = run,
	.title = title,
};
