/*
 * tests/fuzz/fuzz_corpus.c - the corpus parsers (formats/corpus.h: Brown
 * `word/tag` documents, plain text, the tokeniser, Brown tag bases) and the
 * tagger's confidence TSV (targets/tagger.h) on arbitrary bytes: no crash,
 * no leak, every error one non-empty line, and on success the invariants
 * (offsets non-decreasing and in range, no empty word or tag, documents
 * covering every sentence, a rolled-back corpus unchanged).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/corpus.h"
#include "targets/tagger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_corpus(const struct vpa_corpus *c)
{
	if (c->sent_off[0] != 0 || c->sent_off[c->n_sent] != c->n_tok)
		abort();
	for (size_t s = 0; s < c->n_sent; s++) {
		if (c->sent_off[s + 1] <= c->sent_off[s]) /* no empty sentence */
			abort();
		if (c->sent_doc[s] >= c->n_doc)
			abort();
		if (s < c->doc_sent[c->sent_doc[s]] || s >= c->doc_sent[c->sent_doc[s] + 1])
			abort();
	}
	if (c->doc_sent[0] != 0 || c->doc_sent[c->n_doc] != c->n_sent)
		abort();
	for (size_t i = 0; i < c->n_tok; i++) {
		if (!c->word[i][0])
			abort();
		if (c->tagged == 1 && !c->tag[i][0])
			abort();
	}
}

static void check_err(const struct vpa_err *err)
{
	if (err->msg[0] == '\0' || strchr(err->msg, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	if (size)
		memcpy(buf, data, size);
	struct vpa_err err;
	struct vpa_corpus c;
	for (int kind = 0; kind < 2; kind++) {
		vpa_corpus_init(&c);
		vpa_err_init(&err);
		/* a first good document, so that a rollback has something to keep */
		int rc = kind ? vpa_corpus_add_brown(&c, "a", "x/nn y/vb\n", 10, NULL, &err)
			      : vpa_corpus_add_text(&c, "a", "x y\n", 4, NULL, &err);
		if (rc || c.n_tok != 2)
			abort();
		struct vpa_corpus_opts o;
		vpa_corpus_opts_init(&o);
		o.lower = size & 1;
		rc = kind ? vpa_corpus_add_brown(&c, "fuzz", buf, size, &o, &err)
			  : vpa_corpus_add_text(&c, "fuzz", buf, size, &o, &err);
		if (rc) {
			check_err(&err);
			if (c.n_tok != 2 || c.n_sent != 1 || c.n_doc != 1)
				abort();
		}
		check_corpus(&c);
		struct vpa_vocab v;
		vpa_vocab_init(&v);
		vpa_vocab_build(&v, &c, NULL, 0, 8, 1);
		for (size_t i = 1; i < v.n; i++)
			if (vpa_vocab_id(&v, v.words[i]) != i)
				abort();
		vpa_vocab_release(&v);
		vpa_corpus_release(&c);
	}
	struct vpa_buf b;
	vpa_buf_init(&b);
	size_t n = vpa_tokenize(buf, size, 1, &b);
	if ((n == 0) != (b.len == 0))
		abort();
	vpa_buf_release(&b);
	char tag[64], out[16];
	size_t tl = size < sizeof(tag) - 1 ? size : sizeof(tag) - 1;
	memcpy(tag, buf, tl);
	tag[tl] = 0;
	vpa_brown_tag_base(tag, out, sizeof(out));
	if (strlen(out) >= sizeof(out))
		abort();
	/* the tagger's confidence TSV */
	struct vpa_tagconf tc;
	vpa_err_init(&err);
	if (vpa_tagconf_parse("fuzz.tsv", buf, size, &tc, &err) == 0) {
		if (tc.n_class == 0 || tc.n_rows == 0)
			abort();
		for (size_t i = 0; i < tc.n_rows; i++)
			if (tc.cls[i] >= tc.n_class || !(tc.conf[i] >= 0 && tc.conf[i] <= 1))
				abort();
		vpa_tagconf_release(&tc);
	} else {
		check_err(&err);
	}
	free(buf);
	return 0;
}
