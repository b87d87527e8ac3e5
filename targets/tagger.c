/*
 * targets/tagger.c - target kind `tagger` (contracts in targets/tagger.h):
 * the coarse Brown tag set, the confidence TSV of imported taggers, the data
 * split, a BiLSTM tagger trained with Adam/SGD or DP-SGD on learn/nn.h, its
 * evaluation, and the kind itself.
 *
 * Why a split by documents: sentences of one Brown document share names and
 * topics, so a sentence-level split would put near-copies on both sides and
 * flatter the held-out accuracy.
 */
#include "targets/tagger.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "metrics/metrics.h"

const char *const vpa_tag_names[VPA_TAG_N] = {"NOUN", "VERB", "ADJ", "PROPN", "OTHER"};

static int in_list(const char *t, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(t, *list))
			return 1;
	return 0;
}

int vpa_tag_coarse(const char *brown_tag)
{
	static const char *const noun[] = {"nn", "nns", "nn$", "nns$", "nr", "nrs", "nr$", NULL};
	static const char *const verb[] = {"vb",  "vbd", "vbg", "vbn", "vbz", "be",  "bed",
					   "bedz", "beg", "bem", "ben", "ber", "bez", "hv",
					   "hvd", "hvg", "hvn", "hvz", "do",  "dod", "doz",
					   "md",  NULL};
	static const char *const adj[] = {"jj", "jjr", "jjs", "jjt", "od", NULL};
	static const char *const propn[] = {"np", "nps", "np$", "nps$", NULL};
	char b[64];
	vpa_brown_tag_base(brown_tag, b, sizeof(b));
	if (in_list(b, noun))
		return VPA_TAG_NOUN;
	if (in_list(b, verb))
		return VPA_TAG_VERB;
	if (in_list(b, adj))
		return VPA_TAG_ADJ;
	if (in_list(b, propn))
		return VPA_TAG_PROPN;
	return VPA_TAG_OTHER;
}

int vpa_tag_find(const char *name)
{
	for (int i = 0; i < VPA_TAG_N; i++)
		if (!strcmp(name, vpa_tag_names[i]))
			return i;
	return -1;
}

/* ---- confidence TSV --------------------------------------------------------- */

void vpa_tagconf_release(struct vpa_tagconf *t)
{
	for (size_t i = 0; i < t->n_class; i++)
		free(t->class_name[i]);
	for (size_t i = 0; i < t->n_rows; i++)
		free(t->word[i]);
	free(t->class_name);
	free(t->word);
	free(t->cls);
	free(t->conf);
	free(t->line);
	memset(t, 0, sizeof(*t));
}

static int class_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '$' || c == '-';
}

/* A small hash of (class, word) -> row for the duplicate check. */
static uint64_t pair_hash(uint32_t cls, const char *w)
{
	uint64_t h = 14695981039346656037ull ^ cls;
	for (; *w; w++)
		h = (h ^ (unsigned char)*w) * 1099511628211ull;
	return h;
}

int vpa_tagconf_parse(const char *name, const char *buf, size_t len, struct vpa_tagconf *out,
		      struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	size_t cap = 0, n_slot = 0;
	size_t *slot = NULL; /* row + 1 */
	const char *end = buf + len, *p = buf;
	long line = 0;
	int rc = 0;
	while (p < end) {
		line++;
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *le = eol;
		if (le > p && le[-1] == '\r')
			le--;
		const char *q = p;
		p = eol + 1;
		struct vpa_loc loc = {name, line, 0};
		if (le > q && memchr(q, 0, (size_t)(le - q))) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "NUL byte");
			goto fail;
		}
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		if (q == le || *q == '#')
			continue;
		const char *f[4];
		size_t fl[4], nf = 0;
		while (q < le) {
			while (q < le && (*q == ' ' || *q == '\t'))
				q++;
			if (q == le)
				break;
			const char *s = q;
			while (q < le && *q != ' ' && *q != '\t')
				q++;
			if (nf < 4) {
				f[nf] = s;
				fl[nf] = (size_t)(q - s);
			}
			nf++;
		}
		if (nf != 3) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "expected 3 columns 'word class confidence', found %zu", nf);
			goto fail;
		}
		for (size_t i = 0; i < fl[1]; i++)
			if (!class_char(f[1][i])) {
				struct vpa_loc l2 = {name, line, 0};
				/* column of the class field */
				const char *ls = f[0];
				while (ls > buf && ls[-1] != '\n')
					ls--;
				l2.col = (long)(f[1] - ls) + 1;
				rc = vpa_fail(err, VPA_EINPUT, &l2, "invalid class name '%.*s'",
					      (int)(fl[1] > 60 ? 60 : fl[1]), f[1]);
				goto fail;
			}
		double v;
		const char *ne = vpa_parse_double(f[2], f[2] + fl[2], &v);
		if (!ne || ne != f[2] + fl[2] || !(v >= 0 && v <= 1)) {
			const char *ls = f[0];
			while (ls > buf && ls[-1] != '\n')
				ls--;
			struct vpa_loc l2 = {name, line, (long)(f[2] - ls) + 1};
			rc = vpa_fail(err, VPA_EINPUT, &l2,
				      "confidence must be a number in [0, 1], got '%.*s'",
				      (int)(fl[2] > 60 ? 60 : fl[2]), f[2]);
			goto fail;
		}
		/* class id */
		uint32_t c = 0;
		while (c < out->n_class &&
		       !(strlen(out->class_name[c]) == fl[1] &&
			 !memcmp(out->class_name[c], f[1], fl[1])))
			c++;
		if (c == out->n_class) {
			out->class_name = xrealloc(out->class_name,
						   xmul(out->n_class + 1, sizeof(char *)));
			out->class_name[out->n_class] = xmalloc(fl[1] + 1);
			memcpy(out->class_name[out->n_class], f[1], fl[1]);
			out->class_name[out->n_class][fl[1]] = 0;
			out->n_class++;
		}
		char *w = xmalloc(fl[0] + 1);
		memcpy(w, f[0], fl[0]);
		w[fl[0]] = 0;
		/* duplicate check */
		if (2 * (out->n_rows + 1) > n_slot) {
			size_t ns = n_slot ? 2 * n_slot : 1024;
			size_t *sl = xcalloc(ns, sizeof(*sl));
			for (size_t r = 0; r < out->n_rows; r++) {
				size_t j = pair_hash(out->cls[r], out->word[r]) & (ns - 1);
				while (sl[j])
					j = (j + 1) & (ns - 1);
				sl[j] = r + 1;
			}
			free(slot);
			slot = sl;
			n_slot = ns;
		}
		size_t j = pair_hash(c, w) & (n_slot - 1);
		while (slot[j]) {
			size_t r = slot[j] - 1;
			if (out->cls[r] == c && !strcmp(out->word[r], w)) {
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "duplicate word '%s' for class '%s' (first on line %ld)", w,
					      out->class_name[c], out->line[r]);
				free(w);
				goto fail;
			}
			j = (j + 1) & (n_slot - 1);
		}
		if (out->n_rows == cap) {
			cap = cap ? 2 * cap : 256;
			out->word = xrealloc(out->word, xmul(cap, sizeof(char *)));
			out->cls = xrealloc(out->cls, xmul(cap, sizeof(uint32_t)));
			out->conf = xrealloc(out->conf, xmul(cap, sizeof(double)));
			out->line = xrealloc(out->line, xmul(cap, sizeof(long)));
		}
		slot[j] = out->n_rows + 1;
		out->word[out->n_rows] = w;
		out->cls[out->n_rows] = c;
		out->conf[out->n_rows] = v;
		out->line[out->n_rows] = line;
		out->n_rows++;
	}
	if (out->n_rows == 0) {
		struct vpa_loc loc = {name, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &loc, "no confidence line");
		goto fail;
	}
	free(slot);
	return 0;
fail:
	free(slot);
	vpa_tagconf_release(out);
	return rc;
}

int vpa_tagconf_read(const char *path, struct vpa_tagconf *out, struct vpa_err *err)
{
	char *buf;
	size_t len;
	memset(out, 0, sizeof(*out));
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_tagconf_parse(path, buf, len, out, err);
	free(buf);
	return rc;
}

/* ---- data ------------------------------------------------------------------ */

void vpa_tagger_data_release(struct vpa_tagger_data *d)
{
	vpa_corpus_release(&d->corpus);
	free(d->cls);
	free(d->train);
	free(d->test);
	vpa_vocab_release(&d->vocab);
	memset(d, 0, sizeof(*d));
}

/* ---- the network ------------------------------------------------------------ */

static struct vpa_nn *make_net(const struct vpa_tagger_cfg *cfg, size_t vocab)
{
	struct vpa_nn *net = vpa_nn_new(0);
	vpa_nn_add_embedding(net, vocab, cfg->embedding);
	if (cfg->dropout > 0)
		vpa_nn_add_dropout(net, (float)cfg->dropout);
	vpa_nn_add_bilstm(net, cfg->hidden);
	if (cfg->dropout > 0)
		vpa_nn_add_dropout(net, (float)cfg->dropout);
	vpa_nn_add_dense(net, VPA_TAG_N);
	vpa_nn_init_params(net, cfg->seed);
	return net;
}

/* A batch under construction: ids and labels of the chosen examples. */
struct tbatch {
	size_t n_seq, cap_seq, n_row, cap_row;
	size_t *off;
	uint32_t *ids, *lab;
};

static void tb_clear(struct tbatch *b)
{
	b->n_seq = b->n_row = 0;
	if (!b->off) {
		b->cap_seq = 64;
		b->off = xmalloc(xmul(b->cap_seq + 1, sizeof(size_t)));
	}
	b->off[0] = 0;
}

static void tb_add(struct tbatch *b, const uint32_t *ids, const uint32_t *lab, size_t len)
{
	if (b->n_seq == b->cap_seq) {
		b->cap_seq *= 2;
		b->off = xrealloc(b->off, xmul(b->cap_seq + 1, sizeof(size_t)));
	}
	if (b->n_row + len > b->cap_row) {
		b->cap_row = 2 * (b->n_row + len) + 1024;
		b->ids = xrealloc(b->ids, xmul(b->cap_row, sizeof(uint32_t)));
		b->lab = xrealloc(b->lab, xmul(b->cap_row, sizeof(uint32_t)));
	}
	memcpy(b->ids + b->n_row, ids, len * sizeof(uint32_t));
	if (lab)
		memcpy(b->lab + b->n_row, lab, len * sizeof(uint32_t));
	b->n_row += len;
	b->off[++b->n_seq] = b->n_row;
}

static void tb_free(struct tbatch *b)
{
	free(b->off);
	free(b->ids);
	free(b->lab);
}

/* Token ids and labels of the whole corpus under d's vocabulary. */
static void corpus_ids(const struct vpa_tagger_data *d, uint32_t **ids, uint32_t **lab)
{
	size_t n = d->corpus.n_tok;
	*ids = xmalloc(xmul(n ? n : 1, sizeof(uint32_t)));
	*lab = xmalloc(xmul(n ? n : 1, sizeof(uint32_t)));
	for (size_t i = 0; i < n; i++) {
		(*ids)[i] = vpa_vocab_id(&d->vocab, d->corpus.word[i]);
		(*lab)[i] = d->cls[i];
	}
}

int vpa_tagger_train(const struct vpa_tagger_data *d, const struct vpa_tagger_cfg *cfg,
		     const size_t *sents, size_t n_sents, const struct vpa_tagger_extra *extra,
		     vpa_tagger_epoch_fn cb, void *arg, struct vpa_nn **out,
		     struct vpa_tagger_stats *st, struct vpa_err *err)
{
	size_t n_extra = extra ? extra->reps : 0, N = n_sents + n_extra;
	/* Privacy units: unit u holds examples uoff[u] .. uoff[u+1]-1 (indices
	 * into sents, then the extra copies); without dp_user one per example. */
	int by_user = cfg->dp && cfg->dp_user;
	size_t n_units = N, *uoff = NULL, *lot_off = NULL;
	if (by_user) {
		size_t m = cfg->user_sentences ? cfg->user_sentences : 1;
		uoff = xmalloc(xmul(N + 2, sizeof(size_t)));
		n_units = 0;
		for (size_t i = 0; i < n_sents; i++)
			if (i == 0 || i - uoff[n_units - 1] >= m ||
			    d->corpus.sent_doc[sents[i]] != d->corpus.sent_doc[sents[i - 1]])
				uoff[n_units++] = i;
		if (n_extra)
			uoff[n_units++] = n_sents;
		uoff[n_units] = N;
	}
	struct vpa_nn *net = make_net(cfg, d->vocab.n);
	struct vpa_optim o;
	size_t np;
	float *params = vpa_nn_params(net, &np);
	(void)params;
	if (cfg->adam)
		vpa_optim_init_adam(&o, np, cfg->lr, 0.9, 0.999, 1e-8, cfg->weight_decay);
	else
		vpa_optim_init_sgd(&o, np, cfg->lr, 0.9, cfg->weight_decay);
	uint32_t *ids, *lab;
	corpus_ids(d, &ids, &lab);
	struct tbatch b = {0};
	tb_clear(&b);
	size_t *order = xmalloc(xmul(N ? N : 1, sizeof(size_t)));
	struct vpa_rng rs, rdp;
	vpa_rng_split(&rs, cfg->seed, "tagger/order");
	vpa_rng_split(&rdp, cfg->seed, "tagger/dp-noise");
	vpa_nn_set_seed(net, cfg->seed ^ 0x5eedu);
	int rc = 0;
	memset(st, 0, sizeof(*st));
	st->epsilon = NAN;
	st->n_params = np;
	double q = n_units ? (double)cfg->batch / (double)n_units : 1;
	if (q > 1)
		q = 1;
	size_t steps_per_epoch = cfg->dp ? (size_t)llround(1.0 / q) : 0;
	if (cfg->dp && steps_per_epoch == 0)
		steps_per_epoch = 1;
	double sigma = cfg->noise_multiplier;
	if (cfg->dp) {
		double steps = (double)steps_per_epoch * (double)cfg->epochs;
		if (cfg->target_epsilon > 0 &&
		    (rc = vpa_dp_sigma(q, cfg->target_epsilon, steps, cfg->delta, &sigma, err)))
			goto out;
		if ((rc = vpa_dp_epsilon(q, sigma, steps, cfg->delta, &st->epsilon, NULL, err)))
			goto out;
		st->sigma = sigma;
		st->q = q;
		st->steps = steps;
		st->units = n_units;
	}
	if (by_user)
		lot_off = xmalloc(xmul(n_units + 1, sizeof(size_t)));
	double t0 = vpa_now(), tokens = 0;
	for (size_t ep = 1; ep <= cfg->epochs && !rc; ep++) {
		double lsum = 0, lw = 0;
		if (!cfg->dp) {
			for (size_t i = 0; i < N; i++)
				order[i] = i;
			for (size_t i = N; i > 1; i--) {
				size_t j = (size_t)vpa_rng_below(&rs, i);
				size_t t = order[i - 1];
				order[i - 1] = order[j];
				order[j] = t;
			}
		}
		size_t n_steps = cfg->dp ? steps_per_epoch : (N + cfg->batch - 1) / cfg->batch;
		for (size_t s = 0; s < n_steps && !rc; s++) {
			size_t n_lot_units = 0;
			tb_clear(&b);
			if (cfg->dp) {
				/* Poisson sampling: each unit independently with prob. q */
				size_t cnt = 0, n_lot = 0;
				for (size_t u = 0; u < n_units; u++) {
					if (!(vpa_rng_uniform(&rs) < q))
						continue;
					if (!by_user) {
						order[cnt++] = u;
						continue;
					}
					lot_off[n_lot++] = cnt;
					for (size_t i = uoff[u]; i < uoff[u + 1]; i++)
						order[cnt++] = i;
				}
				if (by_user)
					lot_off[n_lot] = cnt;
				n_lot_units = by_user ? n_lot : cnt;
				for (size_t k = 0; k < cnt; k++) {
					size_t e = order[k];
					if (e < n_sents) {
						size_t sn = sents[e], o0 = d->corpus.sent_off[sn];
						tb_add(&b, ids + o0, lab + o0,
						       d->corpus.sent_off[sn + 1] - o0);
					} else {
						tb_add(&b, extra->ids, extra->labels, extra->len);
					}
				}
			} else {
				size_t lo = s * cfg->batch, hi = lo + cfg->batch < N ? lo + cfg->batch : N;
				for (size_t k = lo; k < hi; k++) {
					size_t e = order[k];
					if (e < n_sents) {
						size_t sn = sents[e], o0 = d->corpus.sent_off[sn];
						tb_add(&b, ids + o0, lab + o0,
						       d->corpus.sent_off[sn + 1] - o0);
					} else {
						tb_add(&b, extra->ids, extra->labels, extra->len);
					}
				}
			}
			struct vpa_nn_batch in = {b.n_seq, b.off, NULL, b.ids};
			struct vpa_nn_targets t;
			vpa_nn_targets_init(&t);
			t.labels = b.lab;
			double loss = 0;
			if (cfg->dp) {
				rc = vpa_nn_dpsgd_step_units(net, &o, &in, &t, lot_off, n_lot_units,
							     cfg->clip, sigma, q * (double)n_units,
							     &rdp, &loss, NULL, err);
				lsum += loss * (double)b.n_seq;
				lw += (double)b.n_seq;
			} else if (b.n_seq) {
				rc = vpa_nn_train_step(net, &o, &in, &t, 0, &loss, err);
				lsum += loss * (double)b.n_row;
				lw += (double)b.n_row;
			}
			tokens += (double)b.n_row;
		}
		if (rc)
			break;
		st->train_loss = lw > 0 ? lsum / lw : NAN;
		if (cb)
			rc = cb(arg, ep, net, st->train_loss, err);
	}
	st->seconds = vpa_now() - t0;
	st->tokens_per_s = st->seconds > 0 ? tokens / st->seconds : 0;
out:
	tb_free(&b);
	free(uoff);
	free(lot_off);
	free(order);
	free(ids);
	free(lab);
	vpa_optim_release(&o);
	if (rc) {
		vpa_nn_free(net);
		net = NULL;
	}
	*out = net;
	return rc;
}

int vpa_tagger_eval(struct vpa_nn *net, const struct vpa_tagger_data *d, const size_t *sents,
		    size_t n, double *accuracy, double *loss, struct vpa_err *err)
{
	uint32_t *ids, *lab;
	corpus_ids(d, &ids, &lab);
	struct tbatch b = {0};
	size_t right = 0, total = 0;
	double lsum = 0;
	int rc = 0;
	for (size_t lo = 0; lo < n && !rc; lo += 256) {
		size_t hi = lo + 256 < n ? lo + 256 : n;
		tb_clear(&b);
		for (size_t k = lo; k < hi; k++) {
			size_t sn = sents[k], o0 = d->corpus.sent_off[sn];
			tb_add(&b, ids + o0, lab + o0, d->corpus.sent_off[sn + 1] - o0);
		}
		struct vpa_nn_batch in = {b.n_seq, b.off, NULL, b.ids};
		if ((rc = vpa_nn_forward(net, &in, VPA_NN_EVAL, err)))
			break;
		size_t R, K;
		const float *z = vpa_nn_output(net, &R, &K);
		for (size_t r = 0; r < R; r++) {
			const float *zr = z + r * K;
			size_t best = 0;
			double mx = zr[0];
			for (size_t k = 1; k < K; k++)
				if (zr[k] > zr[best])
					best = k;
			mx = zr[best];
			double se = 0;
			for (size_t k = 0; k < K; k++)
				se += exp((double)zr[k] - mx);
			lsum += mx + log(se) - (double)zr[b.lab[r]];
			right += best == b.lab[r];
			total++;
		}
	}
	tb_free(&b);
	free(ids);
	free(lab);
	if (!rc && total == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "no token to evaluate the tagger on");
	if (!rc) {
		*accuracy = (double)right / (double)total;
		if (loss)
			*loss = lsum / (double)total;
	}
	return rc;
}

int vpa_tagger_slot_probs(struct vpa_nn *net, const uint32_t *ctx, size_t len, size_t slot,
			  const uint32_t *words, size_t n, double *probs, struct vpa_err *err)
{
	if (slot >= len)
		VPA_BUG("slot %zu of %zu", slot, len);
	int rc = 0;
	uint32_t *seq = xmalloc(xmul(len, sizeof(uint32_t)));
	memcpy(seq, ctx, len * sizeof(uint32_t));
	struct tbatch b = {0};
	for (size_t lo = 0; lo < n && !rc; lo += 2048) {
		size_t hi = lo + 2048 < n ? lo + 2048 : n;
		tb_clear(&b);
		for (size_t i = lo; i < hi; i++) {
			seq[slot] = words[i];
			tb_add(&b, seq, NULL, len);
		}
		struct vpa_nn_batch in = {b.n_seq, b.off, NULL, b.ids};
		if ((rc = vpa_nn_forward(net, &in, VPA_NN_EVAL, err)))
			break;
		size_t R, K;
		const float *z = vpa_nn_output(net, &R, &K);
		for (size_t i = lo; i < hi; i++) {
			const float *zr = z + ((i - lo) * len + slot) * K;
			double mx = zr[0], se = 0;
			for (size_t k = 1; k < K; k++)
				if (zr[k] > mx)
					mx = zr[k];
			for (size_t k = 0; k < K; k++)
				se += exp((double)zr[k] - mx);
			for (size_t k = 0; k < K; k++)
				probs[i * K + k] = exp((double)zr[k] - mx) / se;
		}
	}
	tb_free(&b);
	free(seq);
	return rc;
}

/* ---- the target kind -------------------------------------------------------- */

static const struct vpa_key keys[] = {
	{"source", VPA_K_ENUM, 0, "train", -INFINITY, INFINITY, 0, "train|import", NULL, "train",
	 "`train`: train a BiLSTM tagger on a Brown-format corpus; `import`: read a user's "
	 "tagger confidences (`confidences`, `canary`)",
	 VPA_AT(struct vpa_tagger_opts, source), VPA_MARK(struct vpa_tagger_opts, source_at)},
	{"corpus", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "../data/brown",
	 "train: a folder of Brown files (ca01 .. cr09, as fetched by `sh .ci/deps`) or one file "
	 "in the Brown `word/tag` format",
	 VPA_AT(struct vpa_tagger_opts, corpus), VPA_MARK(struct vpa_tagger_opts, corpus_at)},
	{"max_docs", VPA_K_INT, 0, "0", 0, 100000, 0, NULL, NULL, "100",
	 "train: use the first N documents of the folder (0 = all)",
	 VPA_AT(struct vpa_tagger_opts, max_docs), VPA_MARK(struct vpa_tagger_opts, max_docs_at)},
	{"test_fraction", VPA_K_NUM, 0, "0.1", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL,
	 "0.1", "train: fraction of the documents held out (seeded draw) for the accuracy",
	 VPA_AT(struct vpa_tagger_opts, test_fraction), VPA_MARK(struct vpa_tagger_opts, test_fraction_at)},
	{"lower", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "train: lowercase the words",
	 VPA_AT(struct vpa_tagger_opts, lower), VPA_MARK(struct vpa_tagger_opts, lower_at)},
	{"vocab_size", VPA_K_INT, 0, "5000", 1, 1000000, 0, NULL, NULL, "5000",
	 "train: the most frequent training words kept; the others are <unk>",
	 VPA_AT(struct vpa_tagger_opts, vocab_size), VPA_MARK(struct vpa_tagger_opts, vocab_size_at)},
	{"embedding", VPA_K_INT, 0, "64", 1, 4096, 0, NULL, NULL, "64", "train: embedding size",
	 VPA_AT(struct vpa_tagger_opts, embedding), VPA_MARK(struct vpa_tagger_opts, embedding_at)},
	{"hidden", VPA_K_INT, 0, "64", 1, 4096, 0, NULL, NULL, "64",
	 "train: BiLSTM hidden size per direction",
	 VPA_AT(struct vpa_tagger_opts, hidden), VPA_MARK(struct vpa_tagger_opts, hidden_at)},
	{"dropout", VPA_K_NUM, 0, "0.2", 0, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.2",
	 "train: dropout after the embedding and after the BiLSTM",
	 VPA_AT(struct vpa_tagger_opts, dropout), VPA_MARK(struct vpa_tagger_opts, dropout_at)},
	{"weight_decay", VPA_K_NUM, 0, "0", 0, INFINITY, 0, NULL, NULL, "1e-6",
	 "train: L2 weight decay",
	 VPA_AT(struct vpa_tagger_opts, weight_decay), VPA_MARK(struct vpa_tagger_opts, weight_decay_at)},
	{"optimizer", VPA_K_ENUM, 0, "adam", -INFINITY, INFINITY, 0, "adam|sgd", NULL, "adam",
	 "train: Adam, or SGD with momentum 0.9",
	 VPA_AT(struct vpa_tagger_opts, optimizer), VPA_MARK(struct vpa_tagger_opts, optimizer_at)},
	{"lr", VPA_K_NUM, 0, "0.002", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.002",
	 "train: learning rate",
	 VPA_AT(struct vpa_tagger_opts, lr), VPA_MARK(struct vpa_tagger_opts, lr_at)},
	{"batch", VPA_K_INT, 0, "32", 1, 100000, 0, NULL, NULL, "32",
	 "train: sentences per step (with DP: the expected lot size, q = batch / N)",
	 VPA_AT(struct vpa_tagger_opts, batch), VPA_MARK(struct vpa_tagger_opts, batch_at)},
	{"epochs", VPA_K_INT, 0, "3", 1, 10000, 0, NULL, NULL, "3", "train: passes over the data",
	 VPA_AT(struct vpa_tagger_opts, epochs), VPA_MARK(struct vpa_tagger_opts, epochs_at)},
	{"dp", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "train: DP-SGD (Poisson sampling, per-example clipping, Gaussian noise)",
	 VPA_AT(struct vpa_tagger_opts, dp), VPA_MARK(struct vpa_tagger_opts, dp_at)},
	{"dp_unit", VPA_K_ENUM, 0, "sentence", -INFINITY, INFINITY, 0, "sentence|user", NULL,
	 "user", "DP-SGD: the privacy unit; `user`: users of `user_sentences` consecutive "
	 "sentences of one document, each user's gradient clipped as a whole and lots sampled "
	 "by user (q = batch / users)",
	 VPA_AT(struct vpa_tagger_opts, dp_unit), VPA_MARK(struct vpa_tagger_opts, dp_unit_at)},
	{"user_sentences", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "4",
	 "DP-SGD with dp_unit user: training sentences per user",
	 VPA_AT(struct vpa_tagger_opts, user_sentences), VPA_MARK(struct vpa_tagger_opts, user_sentences_at)},
	{"clip", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1",
	 "DP-SGD: per-unit (sentence or user) gradient L2 bound C",
	 VPA_AT(struct vpa_tagger_opts, clip), VPA_MARK(struct vpa_tagger_opts, clip_at)},
	{"noise_multiplier", VPA_K_NUM, 0, "1", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "1.1",
	 "DP-SGD: noise standard deviation / C (ignored when target_epsilon > 0)",
	 VPA_AT(struct vpa_tagger_opts, noise_multiplier), VPA_MARK(struct vpa_tagger_opts, noise_multiplier_at)},
	{"target_epsilon", VPA_K_NUM, 0, "0", 0, INFINITY, 0, NULL, NULL, "1",
	 "DP-SGD: choose the noise multiplier for this epsilon (0 = use noise_multiplier)",
	 VPA_AT(struct vpa_tagger_opts, target_epsilon), VPA_MARK(struct vpa_tagger_opts, target_epsilon_at)},
	{"delta", VPA_K_NUM, 0, "1e-5", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "1e-5",
	 "DP-SGD: delta of (epsilon, delta)",
	 VPA_AT(struct vpa_tagger_opts, delta), VPA_MARK(struct vpa_tagger_opts, delta_at)},
	{"confidences", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL,
	 "data/tagger-conf.tsv",
	 "import: TSV `word class confidence` for the canary (one line per class) and every "
	 "reference word of each class",
	 VPA_AT(struct vpa_tagger_opts, confidences), VPA_MARK(struct vpa_tagger_opts, confidences_at)},
	{"canary", VPA_K_STR, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "like",
	 "import: the canary word in `confidences`",
	 VPA_AT(struct vpa_tagger_opts, canary), VPA_MARK(struct vpa_tagger_opts, canary_at)},
	{NULL},
};
static const struct vpa_schema schema = {"target tagger", keys, sizeof(struct vpa_tagger_opts)};

static int want(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *cfg, const char *key,
		int present, const char *why, struct vpa_err *err)
{
	const struct vpa_ynode *k = vpa_ymap_key(cfg, key);
	if (present && !k) {
		struct vpa_loc loc = vpa_node_loc(ctx->file, cfg);
		return vpa_fail(err, VPA_EINPUT, &loc, "tagger target needs '%s' %s", key, why);
	}
	if (!present && k) {
		struct vpa_loc loc = vpa_node_loc(ctx->file, k);
		return vpa_fail(err, VPA_EINPUT, &loc, "'%s' is not used %s", key, why);
	}
	return 0;
}

static int path_ok(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *v, int dir_ok,
		   struct vpa_err *err)
{
	char *path = vpa_path_join(ctx->dir, v->str);
	struct vpa_loc loc = vpa_node_loc(ctx->file, v);
	struct stat st;
	int rc = 0;
	if (stat(path, &st) != 0)
		rc = vpa_fail(err, VPA_EINPUT, &loc, "cannot open '%s' (looked for '%s'): %s%s",
			      v->str, path, strerror(errno),
			      dir_ok ? " (the Brown corpus is fetched by `sh .ci/deps`)" : "");
	else if (S_ISDIR(st.st_mode) && !dir_ok)
		rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' is a folder, expected a file", v->str);
	free(path);
	return rc;
}

static int validate(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *cfg,
		    struct vpa_err *err)
{
	const char *src = vpa_cfg_str(cfg, &schema, "source");
	int imp = !strcmp(src, "import");
	int rc;
	if (imp) {
		if ((rc = want(ctx, cfg, "confidences", 1, "with source: import", err)) ||
		    (rc = want(ctx, cfg, "canary", 1, "with source: import", err)) ||
		    (rc = want(ctx, cfg, "corpus", 0, "with source: import", err)))
			return rc;
		return path_ok(ctx, vpa_ymap_get(cfg, "confidences"), 0, err);
	}
	if ((rc = want(ctx, cfg, "corpus", 1, "with source: train", err)) ||
	    (rc = want(ctx, cfg, "confidences", 0, "with source: train", err)) ||
	    (rc = want(ctx, cfg, "canary", 0, "with source: train (the d_exposure attack chooses "
				       "the canary)", err)))
		return rc;
	return path_ok(ctx, vpa_ymap_get(cfg, "corpus"), 1, err);
}

void vpa_tagger_cfg_from(const struct vpa_ynode *cfg, uint64_t seed, struct vpa_tagger_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->embedding = (size_t)vpa_cfg_int(cfg, &schema, "embedding");
	c->hidden = (size_t)vpa_cfg_int(cfg, &schema, "hidden");
	c->vocab_size = (size_t)vpa_cfg_int(cfg, &schema, "vocab_size");
	c->dropout = vpa_cfg_num(cfg, &schema, "dropout");
	c->weight_decay = vpa_cfg_num(cfg, &schema, "weight_decay");
	c->lr = vpa_cfg_num(cfg, &schema, "lr");
	c->adam = !strcmp(vpa_cfg_str(cfg, &schema, "optimizer"), "adam");
	c->batch = (size_t)vpa_cfg_int(cfg, &schema, "batch");
	c->epochs = (size_t)vpa_cfg_int(cfg, &schema, "epochs");
	c->dp = vpa_cfg_bool(cfg, &schema, "dp");
	c->dp_user = !strcmp(vpa_cfg_str(cfg, &schema, "dp_unit"), "user");
	c->user_sentences = (size_t)vpa_cfg_int(cfg, &schema, "user_sentences");
	c->clip = vpa_cfg_num(cfg, &schema, "clip");
	c->noise_multiplier = vpa_cfg_num(cfg, &schema, "noise_multiplier");
	c->target_epsilon = vpa_cfg_num(cfg, &schema, "target_epsilon");
	c->delta = vpa_cfg_num(cfg, &schema, "delta");
	c->seed = seed;
}

/* Load, label, split (by documents) and build the vocabulary. */
static int prepare(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg,
		   struct vpa_tagger_data *d, struct vpa_err *err)
{
	memset(d, 0, sizeof(*d));
	vpa_corpus_init(&d->corpus);
	vpa_vocab_init(&d->vocab);
	struct vpa_corpus_opts o;
	vpa_corpus_opts_init(&o);
	o.lower = vpa_cfg_bool(cfg, &schema, "lower");
	d->lower = o.lower;
	char *path = vpa_path_join(ctx->dir, vpa_cfg_str(cfg, &schema, "corpus"));
	struct stat st;
	int rc = 0;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		rc = vpa_corpus_load_brown(&d->corpus, path,
					   (size_t)vpa_cfg_int(cfg, &schema, "max_docs"), &o, err);
	} else {
		char *buf = NULL;
		size_t len = 0;
		if (!(rc = vpa_read_file(path, &buf, &len, err)))
			rc = vpa_corpus_add_brown(&d->corpus, path, buf, len, &o, err);
		free(buf);
	}
	free(path);
	if (rc)
		return rc;
	size_t nd = d->corpus.n_doc;
	if (nd < 2)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"the tagger needs at least 2 documents (training and held-out), "
				"the corpus has %zu", nd);
	d->cls = xmalloc(xmul(d->corpus.n_tok ? d->corpus.n_tok : 1, 1));
	for (size_t i = 0; i < d->corpus.n_tok; i++)
		d->cls[i] = (uint8_t)vpa_tag_coarse(d->corpus.tag[i]);
	/* seeded draw of the held-out documents */
	size_t *perm = xmalloc(xmul(nd, sizeof(size_t)));
	for (size_t i = 0; i < nd; i++)
		perm[i] = i;
	struct vpa_rng r;
	vpa_rng_split(&r, ctx->seed, "tagger/split");
	for (size_t i = nd; i > 1; i--) {
		size_t j = (size_t)vpa_rng_below(&r, i), t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	size_t n_test = (size_t)llround(vpa_cfg_num(cfg, &schema, "test_fraction") * (double)nd);
	if (n_test < 1)
		n_test = 1;
	if (n_test > nd - 1)
		n_test = nd - 1;
	char *is_test = xcalloc(nd, 1);
	for (size_t i = 0; i < n_test; i++)
		is_test[perm[i]] = 1;
	free(perm);
	d->train = xmalloc(xmul(d->corpus.n_sent + 1, sizeof(size_t)));
	d->test = xmalloc(xmul(d->corpus.n_sent + 1, sizeof(size_t)));
	for (size_t s = 0; s < d->corpus.n_sent; s++) {
		if (is_test[d->corpus.sent_doc[s]])
			d->test[d->n_test++] = s;
		else
			d->train[d->n_train++] = s;
	}
	d->n_test_docs = n_test;
	d->n_train_docs = nd - n_test;
	free(is_test);
	if (!d->n_train || !d->n_test)
		return vpa_fail(err, VPA_EINPUT, NULL,
				"the corpus split left no %s sentence (documents without sentences?)",
				d->n_train ? "held-out" : "training");
	vpa_vocab_build(&d->vocab, &d->corpus, d->train, d->n_train,
			(size_t)vpa_cfg_int(cfg, &schema, "vocab_size"), 1);
	return 0;
}

/* Accuracy of the most-frequent-class-per-word baseline (unknown words: the
 * most frequent class overall), for the report: what the tagger must beat. */
static double baseline_accuracy(const struct vpa_tagger_data *d)
{
	size_t V = d->vocab.n;
	uint32_t *cnt = xcalloc(xmul(V, VPA_TAG_N), sizeof(uint32_t));
	size_t all[VPA_TAG_N] = {0};
	for (size_t k = 0; k < d->n_train; k++) {
		size_t s = d->train[k];
		for (size_t i = d->corpus.sent_off[s]; i < d->corpus.sent_off[s + 1]; i++) {
			uint32_t id = vpa_vocab_id(&d->vocab, d->corpus.word[i]);
			cnt[(size_t)id * VPA_TAG_N + d->cls[i]]++;
			all[d->cls[i]]++;
		}
	}
	int top = 0;
	for (int c = 1; c < VPA_TAG_N; c++)
		if (all[c] > all[top])
			top = c;
	size_t right = 0, total = 0;
	for (size_t k = 0; k < d->n_test; k++) {
		size_t s = d->test[k];
		for (size_t i = d->corpus.sent_off[s]; i < d->corpus.sent_off[s + 1]; i++) {
			uint32_t id = vpa_vocab_id(&d->vocab, d->corpus.word[i]);
			const uint32_t *c = cnt + (size_t)id * VPA_TAG_N;
			int best = top;
			if (id != VPA_VOCAB_UNK)
				for (int j = 0; j < VPA_TAG_N; j++)
					if (c[j] > c[best])
						best = j;
			right += d->cls[i] == best;
			total++;
		}
	}
	free(cnt);
	return total ? (double)right / (double)total : NAN;
}

static void tagger_free(struct vpa_target *t)
{
	struct vpa_tagger_target *tt = t->data;
	if (!tt)
		return;
	vpa_tagger_data_release(&tt->data);
	vpa_nn_free(tt->net);
	vpa_tagconf_release(&tt->conf);
	free(tt->canary);
	free(tt->conf_path);
	free(tt);
	t->data = NULL;
}

static int build(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg, struct vpa_target *out,
		 struct vpa_err *err)
{
	struct vpa_tagger_target *tt = xcalloc(1, sizeof(*tt));
	struct vpa_json *info = vpa_json_obj();
	out->data = tt;
	out->info = info;
	out->simulated = 0;
	int rc = 0;
	if (!strcmp(vpa_cfg_str(cfg, &schema, "source"), "import")) {
		tt->imported = 1;
		tt->canary = xstrdup(vpa_cfg_str(cfg, &schema, "canary"));
		const char *rel = vpa_cfg_str(cfg, &schema, "confidences");
		tt->conf_path = vpa_path_join(ctx->dir, rel);
		if ((rc = vpa_tagconf_read(tt->conf_path, &tt->conf, err)))
			return rc;
		vpa_json_set_str(info, "source", "import");
		vpa_json_set_str(info, "confidences", rel);
		vpa_json_set_str(info, "canary", tt->canary);
		vpa_json_set_num(info, "n_rows", (double)tt->conf.n_rows);
		struct vpa_json *cl = vpa_json_arr();
		for (size_t i = 0; i < tt->conf.n_class; i++)
			vpa_json_push(cl, vpa_json_str(tt->conf.class_name[i]));
		vpa_json_set(info, "classes", cl);
		return 0;
	}
	vpa_tagger_cfg_from(cfg, ctx->seed, &tt->cfg);
	{
		struct vpa_rng r;
		vpa_rng_split(&r, ctx->seed, "tagger/model");
		tt->cfg.seed = vpa_rng_u64(&r);
	}
	if ((rc = prepare(ctx, cfg, &tt->data, err)))
		return rc;
	const struct vpa_tagger_data *d = &tt->data;
	struct vpa_tagger_stats st;
	if ((rc = vpa_tagger_train(d, &tt->cfg, d->train, d->n_train, NULL, NULL, NULL, &tt->net,
				   &st, err)))
		return rc;
	double loss;
	if ((rc = vpa_tagger_eval(tt->net, d, d->test, d->n_test, &tt->accuracy, &loss, err)))
		return rc;
	size_t tr_tok = 0, te_tok = 0;
	for (size_t k = 0; k < d->n_train; k++)
		tr_tok += d->corpus.sent_off[d->train[k] + 1] - d->corpus.sent_off[d->train[k]];
	for (size_t k = 0; k < d->n_test; k++)
		te_tok += d->corpus.sent_off[d->test[k] + 1] - d->corpus.sent_off[d->test[k]];
	vpa_json_set_str(info, "source", "train");
	vpa_json_set_str(info, "corpus", vpa_cfg_str(cfg, &schema, "corpus"));
	vpa_json_set_str(info, "tag_set", "NOUN VERB ADJ PROPN OTHER");
	vpa_json_set_num(info, "train_documents", (double)d->n_train_docs);
	vpa_json_set_num(info, "test_documents", (double)d->n_test_docs);
	vpa_json_set_num(info, "train_sentences", (double)d->n_train);
	vpa_json_set_num(info, "test_sentences", (double)d->n_test);
	vpa_json_set_num(info, "train_tokens", (double)tr_tok);
	vpa_json_set_num(info, "test_tokens", (double)te_tok);
	vpa_json_set_num(info, "vocabulary", (double)d->vocab.n);
	vpa_json_set_num(info, "parameters", (double)st.n_params);
	vpa_json_set_str(info, "model", "embedding, BiLSTM, dense, softmax");
	vpa_json_set_num(info, "accuracy", tt->accuracy);
	vpa_json_set_num(info, "test_loss", loss);
	vpa_json_set_num(info, "baseline_accuracy", baseline_accuracy(d));
	vpa_json_set_num(info, "train_loss", st.train_loss);
	vpa_json_set_num(info, "train_seconds", st.seconds);
	vpa_json_set_num(info, "tokens_per_s", st.tokens_per_s);
	vpa_json_set(info, "dp", vpa_json_bool(tt->cfg.dp));
	if (tt->cfg.dp) {
		vpa_json_set_num(info, "epsilon", st.epsilon);
		vpa_json_set_num(info, "delta", tt->cfg.delta);
		vpa_json_set_num(info, "noise_multiplier", st.sigma);
		vpa_json_set_num(info, "sampling_rate", st.q);
		vpa_json_set_num(info, "steps", st.steps);
		vpa_json_set(info, "dp_unit", vpa_json_str(tt->cfg.dp_user ? "user" : "sentence"));
		vpa_json_set_num(info, "dp_units", (double)st.units);
	}
	return 0;
}

const struct vpa_target_kind vpa_target_tagger = {
	.name = "tagger",
	.schema = &schema,
	.doc = "A BiLSTM part-of-speech tagger (embedding, BiLSTM, softmax over NOUN, VERB, ADJ, "
	       "PROPN, OTHER; the Brown-tag mapping is in targets/README.md) trained on a Brown-"
	       "format corpus split by documents, with Adam/SGD or DP-SGD (the privacy unit a "
	       "sentence or a user); its utility is the token accuracy on the held-out "
	       "documents.  Or (`source: import`) a user's tagger "
	       "confidences.  Attack it with `d_exposure`.",
	.validate = validate,
	.build = build,
	.free = tagger_free,
};
