/*
 * attacks/dexposure_train.c - the trained taggers of the attack kind
 * `d_exposure` (split from attacks/dexposure.c; contracts in
 * attacks/dexposure_int.h): the canary, its sentence, the reference and
 * control words; the measurement on a model; the per-epoch logs; one training
 * run as a job of vpa_dist_jobs with its pack and unpack.
 */
#include "attacks/dexposure_int.h"
#include "base/dist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- trained taggers -------------------------------------------------------------- */

static void scratch_alloc(struct scratch *sc, const struct setup *s)
{
	sc->probs = xmalloc(xmul((s->n_words + s->n_ctrl) * VPA_TAG_N, sizeof(double)));
	for (int j = 0; j < VPA_TAG_N; j++)
		sc->ref[j] = xmalloc(xmul(s->n_ref[j] + 1, sizeof(double)));
	sc->ctrl_label = xmalloc(xmul(s->n_ctrl + 1, sizeof(double)));
	sc->ctrl_mean = xmalloc(xmul(s->n_ctrl + 1, sizeof(double)));
}

static void scratch_free(struct scratch *sc)
{
	free(sc->probs);
	for (int j = 0; j < VPA_TAG_N; j++)
		free(sc->ref[j]);
	free(sc->ctrl_label);
	free(sc->ctrl_mean);
	memset(sc, 0, sizeof(*sc));
}

void vpa_dexp_setup_release(struct setup *s)
{
	free(s->ctx_ids);
	free(s->ctx_lab);
	free(s->words);
	free(s->word_cls);
}

struct cand {
	uint32_t w;
	double dist;
	const char *word;
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return strcmp(x->word, y->word);
}

int vpa_dexp_setup_make(const struct vpa_tagger_target *tt, const struct vpa_dexp_opts *o,
			struct setup *s, struct vpa_json *info, struct vpa_err *err)
{
	const struct vpa_tagger_data *d = &tt->data;
	size_t V = d->vocab.n;
	memset(s, 0, sizeof(*s));
	s->tt = tt;
	s->label = vpa_tag_find(o->label);
	/* class counts per vocabulary word over the training sentences */
	uint32_t *cnt = xcalloc(xmul(V, VPA_TAG_N), sizeof(uint32_t));
	for (size_t k = 0; k < d->n_train; k++) {
		size_t sn = d->train[k];
		for (size_t i = d->corpus.sent_off[sn]; i < d->corpus.sent_off[sn + 1]; i++)
			cnt[(size_t)vpa_vocab_id(&d->vocab, d->corpus.word[i]) * VPA_TAG_N +
			    d->cls[i]]++;
	}
	int rc = 0;
	/* the canary */
	const char *cw = o->canary;
	char lw[256];
	if (strcmp(cw, "auto")) {
		snprintf(lw, sizeof(lw), "%s", cw);
		if (d->lower)
			for (char *p = lw; *p; p++)
				if (*p >= 'A' && *p <= 'Z')
					*p = (char)(*p - 'A' + 'a');
		s->canary = vpa_vocab_id(&d->vocab, lw);
		if (s->canary == VPA_VOCAB_UNK) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "canary '%s' is not in the tagger's vocabulary (%zu words)", cw,
				      V - 1);
			goto out;
		}
		int nc = 0;
		for (int c = 0; c < VPA_TAG_N; c++)
			nc += cnt[(size_t)s->canary * VPA_TAG_N + c] > 0;
		if (nc < 2) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "canary '%s' is not ambiguous: the training data labels it only "
				      "with one class", cw);
			goto out;
		}
	} else {
		uint64_t minc = (uint64_t)o->canary_min_count;
		uint32_t best = 0;
		uint64_t best_n = 0;
		for (uint32_t w = 1; w < V; w++) {
			const uint32_t *c = cnt + (size_t)w * VPA_TAG_N;
			uint64_t tot = 0;
			int nc = 0, top = 0;
			for (int j = 0; j < VPA_TAG_N; j++) {
				tot += c[j];
				nc += c[j] > 0;
				if (c[j] > c[top])
					top = j;
			}
			if (tot < minc || nc < 2 || !c[s->label] || top == s->label)
				continue;
			if (!best || tot < best_n ||
			    (tot == best_n && strcmp(d->vocab.words[w], d->vocab.words[best]) < 0)) {
				best = w;
				best_n = tot;
			}
		}
		if (!best) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "no ambiguous vocabulary word labelled %s seen %llu times or "
				      "more: name a `canary` or lower `canary_min_count`",
				      vpa_tag_names[s->label], (unsigned long long)minc);
			goto out;
		}
		s->canary = best;
	}
	/* the canary sentence */
	const char *ctxs = o->context;
	struct vpa_buf b;
	vpa_buf_init(&b);
	s->len = vpa_tokenize(ctxs, strlen(ctxs), d->lower, &b);
	s->ctx_ids = xmalloc(xmul(s->len, sizeof(uint32_t)));
	s->ctx_lab = xmalloc(xmul(s->len, sizeof(uint32_t)));
	{
		char *save = NULL, *tok = strtok_r(b.data, " ", &save);
		for (size_t i = 0; tok; i++, tok = strtok_r(NULL, " ", &save)) {
			if (!strcmp(tok, "___")) {
				s->slot = i;
				s->ctx_ids[i] = s->canary;
				s->ctx_lab[i] = (uint32_t)s->label;
				continue;
			}
			uint32_t w = vpa_vocab_id(&d->vocab, tok);
			const uint32_t *c = cnt + (size_t)w * VPA_TAG_N;
			int top = VPA_TAG_OTHER;
			for (int j = 0; j < VPA_TAG_N; j++)
				if (c[j] > c[top])
					top = j;
			s->ctx_ids[i] = w;
			s->ctx_lab[i] = (uint32_t)top;
		}
	}
	vpa_buf_release(&b);
	/* reference words: labelled only with one class */
	s->words = xmalloc(xmul(V, sizeof(uint32_t)));
	s->word_cls = xmalloc(V);
	s->words[0] = s->canary;
	s->word_cls[0] = 0;
	s->n_words = 1;
	for (uint32_t w = 1; w < V; w++) {
		if (w == s->canary)
			continue;
		const uint32_t *c = cnt + (size_t)w * VPA_TAG_N;
		int nc = 0, only = -1;
		for (int j = 0; j < VPA_TAG_N; j++)
			if (c[j]) {
				nc++;
				only = j;
			}
		if (nc != 1)
			continue;
		s->words[s->n_words] = w;
		s->word_cls[s->n_words++] = (uint8_t)only;
		s->n_ref[only]++;
	}
	for (int j = 0; j < VPA_TAG_N; j++) {
		if (!s->n_ref[j]) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "no vocabulary word is labelled only %s in the training data: "
				      "the class has no reference set (a larger corpus or vocabulary?)",
				      vpa_tag_names[j]);
			goto out;
		}
	}
	/* control words: not inserted, of the canary's kind (ambiguous, labelled
	 * `label` at least once, the same most frequent training class, at least
	 * canary_min_count uses), the `controls` nearest to the canary in log
	 * frequency (ties by byte order) */
	{
		size_t want_n = (size_t)o->controls;
		uint64_t minc = (uint64_t)o->canary_min_count;
		const uint32_t *cc = cnt + (size_t)s->canary * VPA_TAG_N;
		int ctop = 0;
		double ctot = 0;
		for (int j = 0; j < VPA_TAG_N; j++) {
			ctot += cc[j];
			if (cc[j] > cc[ctop])
				ctop = j;
		}
		struct cand *cd = xmalloc(xmul(V, sizeof(*cd)));
		size_t nc_ = 0;
		for (uint32_t w = 1; w < V && want_n; w++) {
			const uint32_t *c = cnt + (size_t)w * VPA_TAG_N;
			uint64_t tot = 0;
			int ncl = 0, top = 0;
			for (int j = 0; j < VPA_TAG_N; j++) {
				tot += c[j];
				ncl += c[j] > 0;
				if (c[j] > c[top])
					top = j;
			}
			if (w == s->canary || ncl < 2 || !c[s->label] || top != ctop || tot < minc)
				continue;
			cd[nc_].w = w;
			cd[nc_].dist = fabs(log((double)tot) - log(ctot));
			cd[nc_].word = d->vocab.words[w];
			nc_++;
		}
		qsort(cd, nc_, sizeof(*cd), cmp_cand);
		s->n_ctrl = nc_ < want_n ? nc_ : want_n;
		for (size_t i = 0; i < s->n_ctrl; i++)
			s->words[s->n_words + i] = cd[i].w;
		free(cd);
	}
	if (info) {
		const uint32_t *c = cnt + (size_t)s->canary * VPA_TAG_N;
		vpa_json_set_str(info, "canary", d->vocab.words[s->canary]);
		vpa_json_set_str(info, "label", vpa_tag_names[s->label]);
		struct vpa_json *cc = vpa_json_obj();
		for (int j = 0; j < VPA_TAG_N; j++)
			vpa_json_set_num(cc, vpa_tag_names[j], c[j]);
		vpa_json_set(info, "canary_training_labels", cc);
		struct vpa_buf sb;
		vpa_buf_init(&sb);
		for (size_t i = 0; i < s->len; i++)
			vpa_buf_printf(&sb, "%s%s/%s", i ? " " : "", d->vocab.words[s->ctx_ids[i]],
				       vpa_tag_names[s->ctx_lab[i]]);
		vpa_json_set_str(info, "canary_sentence", vpa_buf_str(&sb));
		vpa_buf_release(&sb);
		struct vpa_json *nr = vpa_json_obj();
		for (int j = 0; j < VPA_TAG_N; j++)
			vpa_json_set_num(nr, vpa_tag_names[j], (double)s->n_ref[j]);
		vpa_json_set(info, "n_ref", nr);
		struct vpa_json *cl = vpa_json_arr();
		for (size_t i = 0; i < s->n_ctrl; i++)
			vpa_json_push(cl, vpa_json_str(d->vocab.words[s->words[s->n_words + i]]));
		vpa_json_set(info, "controls", cl);
	}
out:
	free(cnt);
	return rc;
}

static int measure(const struct setup *s, struct scratch *sc, struct vpa_nn *net,
		   struct dexp *out, struct vpa_err *err)
{
	int rc = vpa_tagger_slot_probs(net, s->ctx_ids, s->len, s->slot, s->words,
				       s->n_words + s->n_ctrl, sc->probs, err);
	if (rc)
		return rc;
	size_t fill[VPA_TAG_N] = {0};
	for (size_t i = 1; i < s->n_words; i++) {
		int c = s->word_cls[i];
		sc->ref[c][fill[c]++] = sc->probs[i * VPA_TAG_N + (size_t)c];
	}
	const double *const *ref = (const double *const *)sc->ref;
	if ((rc = vpa_dexp_compute(sc->probs, ref, s->n_ref, VPA_TAG_N, out, err)))
		return rc;
	/* the chance level: the same d-exposure of each control word */
	out->n_ctrl = s->n_ctrl;
	if (!s->n_ctrl)
		return 0;
	double sum[VPA_TAG_N] = {0};
	for (size_t j = 0; j < s->n_ctrl; j++) {
		struct dexp c;
		if ((rc = vpa_dexp_compute(sc->probs + (s->n_words + j) * VPA_TAG_N, ref, s->n_ref,
				       VPA_TAG_N, &c, err)))
			return rc;
		for (int i = 0; i < VPA_TAG_N; i++)
			sum[i] += c.per[i];
		sc->ctrl_label[j] = c.per[s->label];
		sc->ctrl_mean[j] = c.mean;
	}
	double m = 0;
	for (int i = 0; i < VPA_TAG_N; i++) {
		out->chance[i] = sum[i] / (double)s->n_ctrl;
		m += out->chance[i];
	}
	out->mean_chance = m / VPA_TAG_N;
	out->label_p90 = vpa_dexp_quantile(sc->ctrl_label, s->n_ctrl, 0.9);
	out->mean_p90 = vpa_dexp_quantile(sc->ctrl_mean, s->n_ctrl, 0.9);
	return 0;
}

static int on_epoch(void *arg, size_t epoch, struct vpa_nn *net, double train_loss,
		    struct vpa_err *err)
{
	struct run_log *l = arg;
	size_t e = epoch - 1;
	int rc = measure(l->s, &l->sc, net, &l->d[e], err);
	if (!rc)
		rc = vpa_tagger_eval(net, &l->s->tt->data, l->test, l->n_test, &l->acc[e],
				     &l->test_loss[e], err);
	l->train_loss[e] = train_loss;
	l->n_ep = epoch;
	return rc;
}

void vpa_dexp_log_alloc(struct run_log *l, struct setup *s, size_t epochs)
{
	memset(l, 0, sizeof(*l));
	l->s = s;
	l->d = xcalloc(epochs, sizeof(*l->d));
	l->acc = xcalloc(epochs, sizeof(double));
	l->test_loss = xcalloc(epochs, sizeof(double));
	l->train_loss = xcalloc(epochs, sizeof(double));
	l->test = s->tt->data.test;
	l->n_test = s->tt->data.n_test;
	scratch_alloc(&l->sc, s);
}

void vpa_dexp_log_free(struct run_log *l)
{
	scratch_free(&l->sc);
	free(l->d);
	free(l->acc);
	free(l->test_loss);
	free(l->train_loss);
}
int vpa_dexp_train_job(void *arg, size_t i, struct vpa_err *e)
{
	struct tshared *p = arg;
	struct tjob *j = &p->jobs[i];
	struct vpa_nn *net = NULL;
	j->rc = vpa_tagger_train(p->d, &j->c, j->sents, j->n_sents, &j->ex, on_epoch, j->l, &net,
				 j->st, e);
	vpa_nn_free(net);
	return j->rc;
}

/* A run's output travels as its per-epoch log and its stats (base/dist.c);
 * the receiving rank has the log's arrays (vpa_dexp_log_alloc) for j->c.epochs. */
void vpa_dexp_train_pack(void *arg, size_t i, struct vpa_buf *b)
{
	const struct tjob *j = &((struct tshared *)arg)->jobs[i];
	const struct run_log *l = j->l;
	vpa_pack_u64(b, l->n_ep);
	vpa_buf_add(b, l->d, xmul(l->n_ep, sizeof(*l->d)));
	vpa_pack_f64s(b, l->acc, l->n_ep);
	vpa_pack_f64s(b, l->test_loss, l->n_ep);
	vpa_pack_f64s(b, l->train_loss, l->n_ep);
	vpa_buf_add(b, j->st, sizeof(*j->st));
}

int vpa_dexp_train_unpack(void *arg, size_t i, const unsigned char *q, size_t len)
{
	struct tjob *j = &((struct tshared *)arg)->jobs[i];
	struct run_log *l = j->l;
	const unsigned char *end = q + len;
	uint64_t n;
	if (vpa_unpack_u64(&q, end, &n) || n > j->c.epochs ||
	    (size_t)(end - q) != n * (sizeof(*l->d) + 3 * sizeof(double)) + sizeof(*j->st))
		return -1;
	l->n_ep = (size_t)n;
	memcpy(l->d, q, n * sizeof(*l->d));
	q += n * sizeof(*l->d);
	vpa_unpack_f64s(&q, end, l->acc, n);
	vpa_unpack_f64s(&q, end, l->test_loss, n);
	vpa_unpack_f64s(&q, end, l->train_loss, n);
	memcpy(j->st, q, sizeof(*j->st));
	return 0;
}
