/*
 * tests/unit/test_textanon.c - the gazetteer detector and the five text
 * anonymisation strategies on hand-made sentences (expected outputs written
 * out in full), per-document consistency, and the proper-noun list taken from
 * a tagged (Brown-format) corpus.
 */
#include "harness.h"
#include "targets/lm.h"

#include <stdlib.h>

/* Two documents: doc 0 = sentences 0, 1; doc 1 = sentence 2. */
static const char *const TOK[] = {
	"john", "smith", "paid", "25", "dollars", "to", "mary", ".",  /* 0..7 */
	"then", "john", "smith", "left", "atlanta", ".",                /* 8..13 */
	"john", "smith", "met", "mary", "on", "3", "1", "."};           /* 14..21 */
static const size_t OFF[] = {0, 8, 14, 22};
static const size_t DOC[] = {0, 0, 1};

static struct vpa_gazetteer *gz(void)
{
	/* a tagged corpus: "smith" and "atlanta" are proper nouns only there */
	static const char brown[] = "\tSmith/np went/vbd to/in Atlanta/np-tl ./.\n";
	struct vpa_corpus c;
	struct vpa_corpus_opts o;
	struct vpa_err err;
	vpa_corpus_init(&c);
	vpa_corpus_opts_init(&o);
	o.lower = 1;
	vpa_err_init(&err);
	if (vpa_corpus_add_brown(&c, "x/ca01", brown, strlen(brown), &o, &err))
		printf("#   %s\n", err.msg);
	const char *extra[] = {"Zoltan"};
	struct vpa_gazetteer *g = vpa_gazetteer_new(&c, extra, 1);
	vpa_corpus_release(&c);
	return g;
}

static char *joined(const struct vpa_textanon_out *o, size_t s)
{
	static char buf[512];
	buf[0] = 0;
	for (size_t i = o->off[s]; i < o->off[s + 1]; i++) {
		strcat(buf, i > o->off[s] ? " " : "");
		strcat(buf, o->tok[i]);
	}
	return buf;
}

static void test_detector(void)
{
	struct vpa_gazetteer *g = gz();
	CHECK(vpa_gazetteer_type(g, "john", NULL) == VPA_ENT_PERSON);
	CHECK(vpa_gazetteer_type(g, "John", NULL) == VPA_ENT_PERSON); /* case-insensitive */
	CHECK(vpa_gazetteer_type(g, "zoltan", NULL) == VPA_ENT_PERSON); /* extra list */
	CHECK(vpa_gazetteer_type(g, "smith", NULL) == VPA_ENT_PROPER);  /* from the np tag */
	CHECK(vpa_gazetteer_type(g, "atlanta", NULL) == VPA_ENT_PROPER);
	CHECK(vpa_gazetteer_type(g, "1,000.5", NULL) == VPA_ENT_NUMBER);
	CHECK(vpa_gazetteer_type(g, "seven", "cd") == VPA_ENT_NUMBER);
	CHECK(vpa_gazetteer_type(g, "paris", "np-tl") == VPA_ENT_PROPER);
	CHECK(vpa_gazetteer_type(g, "paid", "vbd") == VPA_ENT_NONE);
	CHECK(vpa_gazetteer_type(g, ".5", NULL) == VPA_ENT_NONE); /* '.' not inside digits */
	CHECK(vpa_gazetteer_type(g, "will", NULL) == VPA_ENT_NONE); /* not in the name list */
	vpa_gazetteer_free(g);
}

static void run(enum vpa_anon_strategy s, struct vpa_textanon_out *o, uint64_t seed)
{
	struct vpa_gazetteer *g = gz();
	struct vpa_rng r;
	struct vpa_err err;
	vpa_rng_seed(&r, seed);
	vpa_err_init(&err);
	CHECK(vpa_textanon(g, s, TOK, NULL, OFF, DOC, 3, &r, o, &err) == 0);
	vpa_gazetteer_free(g);
}

static void test_strategies(void)
{
	struct vpa_textanon_out o;
	run(VPA_ANON_NONE, &o, 1);
	CHECK_STR(joined(&o, 0), "john smith paid 25 dollars to mary .");
	CHECK(o.n_spans == 0);
	vpa_textanon_out_release(&o);

	run(VPA_ANON_REDACT, &o, 1);
	/* "john smith": PERSON then PROPER = two spans (types differ) */
	CHECK_STR(joined(&o, 0), "<redacted> <redacted> paid <redacted> dollars to <redacted> .");
	CHECK_STR(joined(&o, 2), "<redacted> <redacted> met <redacted> on <redacted> .");
	CHECK(o.n_spans == 4 + 3 + 4);
	vpa_textanon_out_release(&o);

	run(VPA_ANON_TYPED_PLACEHOLDER, &o, 1);
	CHECK_STR(joined(&o, 0), "<person> <proper> paid <number> dollars to <person> .");
	CHECK_STR(joined(&o, 1), "then <person> <proper> left <proper> .");
	CHECK_STR(joined(&o, 2), "<person> <proper> met <person> on <number> .");
	vpa_textanon_out_release(&o);

	run(VPA_ANON_NAMED_PLACEHOLDER, &o, 1);
	/* one index per distinct entity per document; doc 1 starts again at 1 */
	CHECK_STR(joined(&o, 0), "<person_1> <proper_1> paid <number_1> dollars to <person_2> .");
	CHECK_STR(joined(&o, 1), "then <person_1> <proper_1> left <proper_2> .");
	CHECK_STR(joined(&o, 2), "<person_1> <proper_1> met <person_2> on <number_1> .");
	vpa_textanon_out_release(&o);
}

static int is_name(const char *w)
{
	for (size_t i = 0; i < vpa_n_first_names; i++)
		if (!strcmp(vpa_first_names[i], w))
			return 1;
	return !strcmp(w, "zoltan");
}

static void test_surrogates(void)
{
	struct vpa_textanon_out o;
	int changed = 0;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		run(VPA_ANON_WORD_BY_WORD, &o, seed);
		/* same length, names replaced by names, numbers keep their digits count,
		 * proper nouns by proper nouns, other words untouched */
		CHECK(o.off[1] == 8 && o.off[3] == 22);
		CHECK(is_name(o.tok[0]) && is_name(o.tok[6]) && is_name(o.tok[14]));
		CHECK(strlen(o.tok[3]) == 2 && o.tok[3][0] >= '0' && o.tok[3][0] <= '9');
		CHECK(!strcmp(o.tok[1], "smith") || !strcmp(o.tok[1], "atlanta"));
		CHECK_STR(o.tok[2], "paid");
		CHECK(strlen(o.tok[19]) == 1 && strlen(o.tok[20]) == 1);
		changed += strcmp(o.tok[0], "john") != 0;
		vpa_textanon_out_release(&o);

		run(VPA_ANON_FULL_ENTITY, &o, seed);
		/* one surrogate per entity per document: "john" in sentences 0 and 1 (doc 0)
		 * gets the same name */
		CHECK_STR(o.tok[0], o.tok[9]);
		CHECK_STR(o.tok[1], o.tok[10]);
		CHECK(is_name(o.tok[0]) && is_name(o.tok[14]));
		CHECK(o.off[3] - o.off[2] == 8); /* "3 1" stays two number tokens */
		vpa_textanon_out_release(&o);
	}
	CHECK(changed >= 15); /* the surrogate is random, not the original */
}

int main(void)
{
	RUN(test_detector);
	RUN(test_strategies);
	RUN(test_surrogates);
	return DONE();
}
