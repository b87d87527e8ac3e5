/*
 * formats/io_scores_lex.c - the fast decimal parser, file access and the line
 * tokenizer of the score-file readers (split from formats/io_scores.c; what the
 * parts share is in formats/io_scores_int.h).  See io.h for the formats.
 *
 * Speed: a file is mapped (mmap) and parsed in place, one memchr per line to
 * find its end, a hand-written tokenizer and vpa_parse_double (Clinger's exact
 * fast path, strtod otherwise).
 */
#include "formats/io_scores_int.h"
#include "formats/kaldi.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINE ((size_t)1 << 20) /* 1 MiB */

/* ---------------------------------------------------------------- numbers */

/* 10^0 .. 10^22 are exact in binary64. */
static const double pow10_exact[23] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* Bytes that may not touch the end of a number (they would make it a
 * malformed token such as "1.2.3", "1e", "1.5abc" or "2+3"). */
static int is_token_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '.' || c == '_' || c == '+' || c == '-';
}

/*
 * The grammar is [+-]? (D+ ('.' D*)? | '.' D+) ([eE] [+-]? D+)?.
 * Returns the end of the number or NULL; *overflow is set when the text is a
 * well-formed decimal whose value is out of the double range ("1e999").
 */
static const char *parse_num(const char *p, const char *end, double *out, int *overflow)
{
	const char *s = p;
	int neg = 0;
	*overflow = 0;
	if (s < end && (*s == '+' || *s == '-')) {
		neg = *s == '-';
		s++;
	}
	uint64_t w = 0;       /* the first 19 significant digits */
	int nd = 0;           /* significant digits in w */
	int truncated = 0;    /* a nonzero digit did not fit in w */
	long e10 = 0;         /* value = w * 10^e10 (when not truncated) */
	int ndigits = 0;      /* all mantissa digits, significant or not */
	while (s < end && (unsigned)(*s - '0') < 10) {
		unsigned d = (unsigned)(*s - '0');
		if (nd < 19) {
			if (w || d) {
				w = w * 10 + d;
				nd++;
			}
		} else {
			if (e10 < 100000)
				e10++;
			truncated |= d != 0;
		}
		ndigits++;
		s++;
	}
	if (s < end && *s == '.') {
		s++;
		while (s < end && (unsigned)(*s - '0') < 10) {
			unsigned d = (unsigned)(*s - '0');
			if (nd < 19) {
				if (w || d) {
					w = w * 10 + d;
					nd++;
				}
				if (e10 > -100000)
					e10--;
			} else {
				truncated |= d != 0;
			}
			ndigits++;
			s++;
		}
	}
	if (ndigits == 0)
		return NULL;
	if (s < end && (*s == 'e' || *s == 'E')) {
		s++;
		int eneg = 0;
		if (s < end && (*s == '+' || *s == '-')) {
			eneg = *s == '-';
			s++;
		}
		if (s >= end || (unsigned)(*s - '0') >= 10)
			return NULL; /* "1e", "1e+" */
		long x = 0;
		while (s < end && (unsigned)(*s - '0') < 10) {
			if (x < 1000000)
				x = x * 10 + (*s - '0');
			s++;
		}
		e10 += eneg ? -x : x;
	}
	if (s < end && is_token_char((unsigned char)*s))
		return NULL;

	double v;
	if (!truncated && w == 0) {
		v = 0.0;
	} else if (!truncated && w <= ((uint64_t)1 << 53) && e10 >= -22 && e10 <= 22) {
		/* Clinger: w and 10^|e10| are exact, so one operation rounds correctly. */
		v = (double)w;
		v = e10 < 0 ? v / pow10_exact[-e10] : v * pow10_exact[e10];
	} else {
		size_t n = (size_t)(s - p);
		char small[128];
		char *tmp = n < sizeof(small) ? small : xmalloc(n + 1);
		memcpy(tmp, p, n);
		tmp[n] = '\0';
		v = strtod(tmp, NULL);
		if (tmp != small)
			free(tmp);
		if (!isfinite(v)) {
			*overflow = 1;
			return NULL;
		}
		*out = v;
		return s;
	}
	*out = neg ? -v : v;
	return s;
}

const char *vpa_parse_double(const char *p, const char *end, double *out)
{
	int overflow;
	return parse_num(p, end, out, &overflow);
}

/* ------------------------------------------------------------ file access */

int vpa_scores_map_file(const char *path, struct mapped *m, struct vpa_err *err)
{
	struct vpa_loc loc = {path, 0, 0};
	memset(m, 0, sizeof(*m));
	m->data = "";
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return vpa_fail(err, VPA_EIO, &loc, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return vpa_fail(err, VPA_EIO, &loc, "cannot stat: %s", strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return vpa_fail(err, VPA_EIO, &loc, "is a folder, expected a file");
	}
	/* the cap of every file read whole (vpa_read_file), mapped or not */
	if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > VPA_READ_MAX) {
		close(fd);
		return vpa_fail(err, VPA_EIO, &loc, "larger than %d GiB (%lld bytes)",
				VPA_READ_MAX >> 30, (long long)st.st_size);
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			close(fd);
			madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
			m->map = p;
			m->data = p;
			m->len = (size_t)st.st_size;
			vpa_input_note(path, p, m->len);
			return 0;
		}
	}
	close(fd);
	if (S_ISREG(st.st_mode) && st.st_size == 0) {
		vpa_input_note(path, "", 0);
		return 0;
	}
	/* Pipes, character devices, or mmap refused: read it all. */
	char *d;
	size_t n;
	int rc = vpa_read_file(path, &d, &n, err);
	if (rc)
		return rc;
	m->heap = d;
	m->data = d;
	m->len = n;
	return 0;
}

void vpa_scores_unmap_file(struct mapped *m)
{
	if (m->map)
		munmap(m->map, m->len);
	free(m->heap);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ lines */

void vpa_scores_lines_init(struct lines *L, const char *name, const char *buf, size_t len)
{
	if (!buf) /* (NULL, 0) is an empty file */
		buf = "";
	L->p = buf;
	L->end = buf + len;
	L->name = name;
	L->line = 0;
	L->nt = 0;
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Quote at most 40 bytes of a token for a message, e.g. 'abc' or 'abcd...'.
 * Returns buf.
 */
const char *vpa_scores_quote(char *buf, size_t cap, const char *s, size_t n)
{
	size_t k = n > 40 ? 40 : n;
	snprintf(buf, cap, "'%.*s%s'", (int)k, s, n > k ? "..." : "");
	return buf;
}

static long col_of(const struct lines *L, const char *at)
{
	return (long)(at - L->ls) + 1;
}

/*
 * Advance to the next data line and split it into tokens.  Returns 1 with a
 * line, 0 at the end, or a negative status.
 */
int vpa_scores_lines_next(struct lines *L, struct vpa_err *err)
{
	while (L->p < L->end) {
		const char *p = L->p;
		const char *nl = memchr(p, '\n', (size_t)(L->end - p));
		const char *le = nl ? nl : L->end;
		L->p = nl ? nl + 1 : L->end;
		L->line++;
		L->ls = p;
		int bom = L->line == 1 ? vpa_kaldi_check_bom(L->name, p, (size_t)(le - p), err) : 0;
		if (bom)
			return bom;
		if ((size_t)(le - p) > MAX_LINE) {
			struct vpa_loc loc = {L->name, L->line, 0};
			return vpa_fail(err, VPA_EINPUT, &loc,
					"line too long (over 1 MiB): is this a text file?");
		}
		if (le > p && le[-1] == '\r')
			le--;
		const char *q = p;
		int nt = 0;
		for (;;) {
			while (q < le && is_ws(*q))
				q++;
			if (q == le)
				break;
			if (nt == 0 && *q == '#')
				break;
			const char *s = q;
			while (q < le && !is_ws(*q))
				q++;
			if (nt < MAX_TOK) {
				L->t[nt].s = s;
				L->t[nt].n = (size_t)(q - s);
			}
			nt++;
		}
		if (nt == 0)
			continue;
		L->nt = nt;
		return 1;
	}
	return 0;
}

/* A NUL byte anywhere is an error (binary file); report its line and column. */
int vpa_scores_check_nul(const char *name, const char *buf, size_t len, struct vpa_err *err)
{
	const char *z = len ? memchr(buf, '\0', len) : NULL;
	if (!z)
		return 0;
	long line = 1;
	const char *ls = buf;
	for (const char *q = buf; q < z; q++)
		if (*q == '\n') {
			line++;
			ls = q + 1;
		}
	struct vpa_loc loc = {name, line, (long)(z - ls) + 1};
	return vpa_fail(err, VPA_EINPUT, &loc, "NUL byte in a text file (binary file?)");
}

/* Parse token k of the current line as a finite number. */
int vpa_scores_tok_number(const struct lines *L, int k, const char *what, double *out,
			  struct vpa_err *err)
{
	const struct tok *t = &L->t[k];
	int overflow;
	if (parse_num(t->s, t->s + t->n, out, &overflow) == t->s + t->n)
		return 0;
	struct vpa_loc loc = {L->name, L->line, col_of(L, t->s)};
	char q[64];
	vpa_scores_quote(q, sizeof(q), t->s, t->n);
	if (overflow)
		return vpa_fail(err, VPA_EINPUT, &loc, "%s is not finite: %s", what, q);
	/* nan, inf, infinity with an optional sign and any case */
	const char *s = t->s;
	size_t n = t->n;
	if (n && (*s == '+' || *s == '-')) {
		s++;
		n--;
	}
	if ((n == 3 && (!strncasecmp(s, "nan", 3) || !strncasecmp(s, "inf", 3))) ||
	    (n == 8 && !strncasecmp(s, "infinity", 8)))
		return vpa_fail(err, VPA_EINPUT, &loc, "%s is not finite: %s", what, q);
	return vpa_fail(err, VPA_EINPUT, &loc, "expected a number, got %s", q);
}

/* Labels: target|tar|1 -> 1, nontarget|non|0 -> 0. */
int vpa_scores_tok_label(const struct lines *L, int k, int *is_tar, struct vpa_err *err)
{
	const struct tok *t = &L->t[k];
	const char *s = t->s;
	switch (t->n) {
	case 1:
		if (*s == '1' || *s == '0') {
			*is_tar = *s == '1';
			return 0;
		}
		break;
	case 3:
		if (!memcmp(s, "tar", 3) || !memcmp(s, "non", 3)) {
			*is_tar = s[0] == 't';
			return 0;
		}
		break;
	case 6:
		if (!memcmp(s, "target", 6)) {
			*is_tar = 1;
			return 0;
		}
		break;
	case 9:
		if (!memcmp(s, "nontarget", 9)) {
			*is_tar = 0;
			return 0;
		}
		break;
	}
	struct vpa_loc loc = {L->name, L->line, col_of(L, s)};
	char q[64];
	return vpa_fail(err, VPA_EINPUT, &loc,
			"unknown label %s: expected target, nontarget, tar, non, 1 or 0",
			vpa_scores_quote(q, sizeof(q), s, t->n));
}

/* Declared in formats/kaldi.h; here, below io_kaldi.c, because the score
   readers refuse a byte order mark too. */
int vpa_kaldi_check_bom(const char *name, const char *buf, size_t len, struct vpa_err *err)
{
	if (len < 3 || memcmp(buf, "\xEF\xBB\xBF", 3))
		return 0;
	struct vpa_loc loc = {name, 1, 0};
	return vpa_fail(err, VPA_EINPUT, &loc,
			"the file starts with a UTF-8 byte order mark (bytes EF BB BF), which would "
			"become part of the first id: save it without the mark");
}
