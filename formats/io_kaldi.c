/*
 * formats/io_kaldi.c - Kaldi archives (text and binary), lists and trials.
 * See kaldi.h for the formats and messages.
 *
 * The parser works on the whole file in memory.  Text positions are tracked
 * as line numbers (counted only while scanning text, so a line number after
 * a binary entry counts the text lines only); binary positions are byte
 * offsets.  Values are appended to one growing double buffer so that a
 * vector archive ends up as one contiguous (n, d) matrix without a copy.
 */
#include "formats/kaldi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats/embset.h"
#include "formats/io.h"

/* ---------------------------------------------------------------- parser */

struct parser {
	const char *name;
	const unsigned char *b;
	size_t len, pos;
	long line;        /* current line (text) */
	size_t line_start; /* offset of the current line's first byte */
	double *vals;     /* growing value buffer, owned by the caller */
	size_t nv, cap;
	struct vpa_err *err;
};

static void push_val(struct parser *p, double v)
{
	if (p->nv == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1024;
		p->vals = xrealloc(p->vals, xmul(p->cap, sizeof(double)));
	}
	p->vals[p->nv++] = v;
}

/* A printable, bounded copy of a token for messages. */
static const char *tokstr(char *buf, size_t cap, const unsigned char *s, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 4 < cap; i++)
		buf[k++] = (s[i] >= 0x20 && s[i] < 0x7f) ? (char)s[i] : '?';
	if (n > 0 && k + 4 >= cap) {
		buf[k++] = '.';
		buf[k++] = '.';
		buf[k++] = '.';
	}
	buf[k] = 0;
	return buf;
}

static int text_fail(struct parser *p, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int text_fail(struct parser *p, size_t at, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct vpa_loc loc = { p->name, p->line, at >= p->line_start ? (long)(at - p->line_start) + 1 : 0 };
	return vpa_fail(p->err, VPA_EINPUT, &loc, "%s", msg);
}

static int line_fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int line_fail(struct parser *p, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct vpa_loc loc = { p->name, p->line, 0 };
	return vpa_fail(p->err, VPA_EINPUT, &loc, "%s", msg);
}

static int bin_fail(struct parser *p, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bin_fail(struct parser *p, size_t at, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return vpa_fail(p->err, VPA_EINPUT, NULL, "%s: byte %zu: %s", p->name, at, msg);
}

static int is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Skip spaces and tabs (not newlines). */
static void skip_blank(struct parser *p)
{
	while (p->pos < p->len && is_space(p->b[p->pos]))
		p->pos++;
}

static void newline(struct parser *p)
{
	p->pos++;
	p->line++;
	p->line_start = p->pos;
}

/* Skip white space including newlines. */
static void skip_ws(struct parser *p)
{
	for (;;) {
		skip_blank(p);
		if (p->pos < p->len && p->b[p->pos] == '\n')
			newline(p);
		else
			return;
	}
}

/* Parse one number token at p->pos; the token ends at white space, ']' or EOF. */
static int text_number(struct parser *p, const char *key)
{
	size_t s = p->pos, e = s;
	while (e < p->len && !is_space(p->b[e]) && p->b[e] != '\n' && p->b[e] != ']')
		e++;
	double v;
	const char *q = vpa_parse_double((const char *)p->b + s, (const char *)p->b + e, &v);
	char tb[64];
	if (q != (const char *)p->b + e) {
		/* Distinguish nan/inf/overflow from garbage, for a precise message. */
		char tmp[64];
		size_t n = e - s < sizeof(tmp) - 1 ? e - s : sizeof(tmp) - 1;
		memcpy(tmp, p->b + s, n);
		tmp[n] = 0;
		char *end;
		double d = strtod(tmp, &end);
		if (n == e - s && n > 0 && *end == 0 && memchr(tmp, 0, n) == NULL && !isfinite(d))
			return text_fail(p, s, "value is not finite: '%s' (utterance '%s')",
					 tokstr(tb, sizeof(tb), p->b + s, e - s), key);
		return text_fail(p, s, "expected a number, got '%s' (utterance '%s')",
				 tokstr(tb, sizeof(tb), p->b + s, e - s), key);
	}
	push_val(p, v);
	p->pos = e;
	return 0;
}

/* After the closing ']' of a text entry: only blanks until the end of line. */
static int text_eol(struct parser *p, const char *key)
{
	skip_blank(p);
	if (p->pos < p->len && p->b[p->pos] == '\n') {
		newline(p);
		return 0;
	}
	if (p->pos >= p->len)
		return 0;
	char tb[64];
	size_t e = p->pos;
	while (e < p->len && !is_space(p->b[e]) && p->b[e] != '\n')
		e++;
	return text_fail(p, p->pos, "expected the end of the line after ']' of '%s', got '%s'", key,
			 tokstr(tb, sizeof(tb), p->b + p->pos, e - p->pos));
}

/*
 * A text object at p->pos (just after '[').  Appends its values; sets rows,
 * cols, is_matrix.
 */
static int text_object(struct parser *p, const char *key, size_t *rows, size_t *cols,
		       int *is_matrix)
{
	size_t first = p->nv;
	skip_blank(p);
	if (p->pos < p->len && p->b[p->pos] == '\n') {
		/* Matrix: one row per line, the last row ends with ']'. */
		*is_matrix = 1;
		newline(p);
		size_t r = 0, c = 0;
		long first_line = 0;
		for (;;) {
			skip_blank(p);
			if (p->pos >= p->len)
				return line_fail(p, "matrix '%s' is not closed: expected ']' before the end of the file", key);
			if (p->b[p->pos] == '\n') { /* blank line inside the matrix */
				newline(p);
				continue;
			}
			if (p->b[p->pos] == ']') {
				p->pos++;
				break;
			}
			size_t before = p->nv;
			int closed = 0;
			while (p->pos < p->len && p->b[p->pos] != '\n') {
				if (p->b[p->pos] == ']') {
					p->pos++;
					closed = 1;
					break;
				}
				if (text_number(p, key))
					return -1;
				skip_blank(p);
			}
			size_t k = p->nv - before;
			if (r == 0) {
				c = k;
				first_line = p->line;
			} else if (k != c) {
				return line_fail(p, "matrix '%s' has a row of %zu values, expected %zu as on line %ld",
						 key, k, c, first_line);
			}
			r++;
			if (closed)
				break;
			if (p->pos >= p->len)
				return line_fail(p, "matrix '%s' is not closed: expected ']' before the end of the file", key);
			newline(p);
		}
		*rows = r;
		*cols = r ? c : 0;
		return text_eol(p, key);
	}
	/* Vector: numbers until ']' (may span lines). */
	*is_matrix = 0;
	for (;;) {
		skip_ws(p);
		if (p->pos >= p->len)
			return line_fail(p, "vector '%s' is not closed: expected ']' before the end of the file", key);
		if (p->b[p->pos] == ']') {
			p->pos++;
			break;
		}
		if (text_number(p, key))
			return -1;
	}
	*rows = 1;
	*cols = p->nv - first;
	return text_eol(p, key);
}

static uint32_t rd_u32(const unsigned char *s)
{
	return (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
}

/* A marked int32 (size byte 4 then 4 bytes, little-endian). */
static int bin_int(struct parser *p, const char *key, const char *what, int32_t *out)
{
	size_t at = p->pos;
	if (p->len - p->pos < 5)
		return bin_fail(p, at, "truncated binary archive: %s of '%s' needs 5 bytes, %zu left", what,
				key, p->len - p->pos);
	if (p->b[p->pos] != 4)
		return bin_fail(p, at, "expected the int32 size marker 4 before the %s of '%s', got %u", what,
				key, p->b[p->pos]);
	*out = (int32_t)rd_u32(p->b + p->pos + 1);
	p->pos += 5;
	if (*out < 0)
		return bin_fail(p, at, "negative %s %d for '%s'", what, (int)*out, key);
	return 0;
}

static double rd_f4(const unsigned char *s)
{
	uint32_t u = rd_u32(s);
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static double rd_f8(const unsigned char *s)
{
	uint64_t u = (uint64_t)rd_u32(s) | (uint64_t)rd_u32(s + 4) << 32;
	double d;
	memcpy(&d, &u, 8);
	return d;
}

/* A binary object at p->pos (just after "\0B"). */
static int bin_object(struct parser *p, const char *key, size_t *rows, size_t *cols,
		      int *is_matrix)
{
	size_t at = p->pos, e = p->pos;
	while (e < p->len && e - at < 8 && p->b[e] != ' ')
		e++;
	char tb[64];
	if (e >= p->len)
		return bin_fail(p, at, "truncated binary archive: no type token for '%s'", key);
	size_t tl = e - at;
	const unsigned char *t = p->b + at;
	int isz = 0, mat = 0;
	if (tl == 2 && (t[0] == 'F' || t[0] == 'D') && (t[1] == 'V' || t[1] == 'M')) {
		isz = t[0] == 'F' ? 4 : 8;
		mat = t[1] == 'M';
	} else if ((tl == 2 && !memcmp(t, "CM", 2)) || (tl == 3 && (!memcmp(t, "CM2", 3) || !memcmp(t, "CM3", 3)))) {
		return bin_fail(p, at, "'%s': compressed matrices are not supported: write with --compress=false",
				key);
	} else {
		return bin_fail(p, at, "'%s': unknown binary object '%s': expected FV, DV, FM or DM", key,
				tokstr(tb, sizeof(tb), t, tl));
	}
	p->pos = e + 1;
	int32_t r = 1, c;
	if (mat && bin_int(p, key, "row count", &r))
		return -1;
	if (bin_int(p, key, mat ? "column count" : "length", &c))
		return -1;
	size_t nvals = (size_t)r * (size_t)c; /* both < 2^31: no overflow on 64-bit */
	size_t need = nvals * (size_t)isz;
	if (p->len - p->pos < need)
		return bin_fail(p, p->pos, "truncated binary archive: %s '%s' needs %zu bytes, %zu left",
				mat ? "matrix" : "vector", key, need, p->len - p->pos);
	for (size_t i = 0; i < nvals; i++) {
		const unsigned char *s = p->b + p->pos + i * (size_t)isz;
		double v = isz == 4 ? rd_f4(s) : rd_f8(s);
		if (!isfinite(v))
			return bin_fail(p, p->pos + i * (size_t)isz, "value is not finite (utterance '%s', index %zu)",
					key, i);
		push_val(p, v);
	}
	p->pos += need;
	*rows = (size_t)r;
	*cols = (size_t)c;
	*is_matrix = mat;
	if (!mat)
		*rows = 1;
	return 0;
}

void vpa_kaldi_ark_init(struct vpa_kaldi_ark *a)
{
	memset(a, 0, sizeof(*a));
}

void vpa_kaldi_ark_release(struct vpa_kaldi_ark *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->e[i].key);
	free(a->e);
	free(a->data);
	free(a->name);
	vpa_kaldi_ark_init(a);
}

void vpa_kaldi_where(const struct vpa_kaldi_ark *a, size_t i, char *buf, size_t cap)
{
	const struct vpa_kaldi_entry *e = &a->e[i];
	if (e->binary)
		snprintf(buf, cap, "%s: byte %zu", a->name, e->byte);
	else
		snprintf(buf, cap, "%s:%ld", a->name, e->line);
}

int vpa_kaldi_parse(const char *name, const unsigned char *buf, size_t len, int mode,
		    struct vpa_kaldi_ark *out, struct vpa_err *err)
{
	int rc0 = vpa_kaldi_check_bom(name, (const char *)buf, len, err);
	if (rc0)
		return rc0;
	struct parser p = { name, buf, len, 0, 1, 0, NULL, 0, 0, err };
	struct vpa_strmap keys;
	struct vpa_kaldi_entry *ents = NULL;
	size_t ne = 0, ecap = 0;
	int rc = 0;
	char tb[64];
	vpa_strmap_init(&keys);

	for (;;) {
		skip_ws(&p);
		if (p.pos >= p.len)
			break;
		/* The key: a run of bytes up to white space or NUL. */
		size_t ks = p.pos;
		while (p.pos < p.len && !is_space(p.b[p.pos]) && p.b[p.pos] != '\n' && p.b[p.pos] != 0)
			p.pos++;
		if (p.pos == ks) {
			rc = text_fail(&p, ks, "expected an utterance id, got a NUL byte");
			goto out;
		}
		char *key = xmalloc(p.pos - ks + 1);
		memcpy(key, p.b + ks, p.pos - ks);
		key[p.pos - ks] = 0;
		if (ecap == ne) {
			ecap = ecap ? 2 * ecap : 256;
			ents = xrealloc(ents, xmul(ecap, sizeof(*ents)));
		}
		struct vpa_kaldi_entry *e = &ents[ne++];
		memset(e, 0, sizeof(*e));
		e->key = key;
		e->byte = ks;
		e->line = p.line;
		e->off = p.nv;
		skip_blank(&p);
		if (p.len - p.pos >= 2 && p.b[p.pos] == 0 && p.b[p.pos + 1] == 'B') {
			e->binary = 1;
			e->line = 0;
			p.pos += 2;
			rc = bin_object(&p, key, &e->rows, &e->cols, &e->is_matrix);
		} else if (p.pos < p.len && p.b[p.pos] == '[') {
			p.pos++;
			rc = text_object(&p, key, &e->rows, &e->cols, &e->is_matrix);
		} else if (p.pos >= p.len || p.b[p.pos] == '\n') {
			rc = line_fail(&p, "expected '[' or a binary object after '%s'", tokstr(tb, sizeof(tb), p.b + ks, strlen(key)));
		} else {
			size_t s = p.pos, t = s;
			while (t < p.len && !is_space(p.b[t]) && p.b[t] != '\n')
				t++;
			rc = text_fail(&p, s, "expected '[' or a binary object after '%s', got '%s'",
				       tokstr(tb, sizeof(tb), p.b + ks, strlen(key)),
				       tokstr((char[64]){ 0 }, 64, p.b + s, t - s));
		}
		if (rc)
			goto out;
		/* Checks that need the entry's location. */
		char where[512];
		struct vpa_kaldi_ark tmp = { (char *)name, ents, ne, NULL, 0 };
		vpa_kaldi_where(&tmp, ne - 1, where, sizeof(where));
		uint32_t first;
		if (vpa_strmap_put(&keys, key, (uint32_t)(ne - 1), &first)) {
			char w0[512];
			if (ents[first].binary)
				snprintf(w0, sizeof(w0), "at byte %zu", ents[first].byte);
			else
				snprintf(w0, sizeof(w0), "on line %ld", ents[first].line);
			rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: duplicate utterance '%s' (first %s)", where,
				      tokstr(tb, sizeof(tb), (const unsigned char *)key, strlen(key)), w0);
			goto out;
		}
		if (mode == VPA_KALDI_VECTORS) {
			if (e->is_matrix) {
				rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: '%s' is a matrix, expected a vector", where,
					      tokstr(tb, sizeof(tb), (const unsigned char *)key, strlen(key)));
				goto out;
			}
			if (ne > 1 && e->cols != ents[0].cols) {
				rc = vpa_fail(err, VPA_EINPUT, NULL,
					      "%s: utterance '%s' has dimension %zu, expected %zu as '%s'", where,
					      tokstr(tb, sizeof(tb), (const unsigned char *)key, strlen(key)),
					      e->cols, ents[0].cols, ents[0].key);
				goto out;
			}
			if (ne == 1 && e->cols == 0) {
				rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: vector '%s' is empty", where,
					      tokstr(tb, sizeof(tb), (const unsigned char *)key, strlen(key)));
				goto out;
			}
		} else if (mode == VPA_KALDI_MATRICES) {
			if (!e->is_matrix) {
				rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: '%s' is a vector, expected a matrix", where,
					      tokstr(tb, sizeof(tb), (const unsigned char *)key, strlen(key)));
				goto out;
			}
			if (ne > 1 && e->cols != ents[0].cols && e->rows > 0) {
				rc = vpa_fail(err, VPA_EINPUT, NULL,
					      "%s: matrix '%s' has %zu columns, expected %zu as '%s'", where,
					      tokstr(tb, sizeof(tb), (const unsigned char *)key, strlen(key)),
					      e->cols, ents[0].cols, ents[0].key);
				goto out;
			}
		}
	}
	if (ne == 0) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no entries", name);
		goto out;
	}
	vpa_kaldi_ark_release(out);
	out->name = xstrdup(name);
	out->e = ents;
	out->n = ne;
	out->data = p.vals;
	out->n_data = p.nv;
	ents = NULL;
	ne = 0;
	p.vals = NULL;
out:
	for (size_t i = 0; i < ne; i++)
		free(ents[i].key);
	free(ents);
	free(p.vals);
	vpa_strmap_release(&keys);
	return rc;
}

int vpa_kaldi_read(const char *path, int mode, struct vpa_kaldi_ark *out, struct vpa_err *err)
{
	char *buf;
	size_t len;
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_kaldi_parse(path, (const unsigned char *)buf, len, mode, out, err);
	free(buf);
	return rc;
}

int vpa_kaldi_parse_object(const char *name, const unsigned char *buf, size_t len,
			   size_t *pos, int binary, const char *what, double **vals,
			   size_t *rows, size_t *cols, int *is_matrix, struct vpa_err *err)
{
	struct parser p = { name, buf, len, *pos, 1, 0, NULL, 0, 0, err };
	/* Line number of pos, for text messages (model files are small). */
	for (size_t i = 0; i < *pos && i < len; i++)
		if (buf[i] == '\n') {
			p.line++;
			p.line_start = i + 1;
		}
	int rc;
	*vals = NULL;
	if (binary) {
		rc = bin_object(&p, what, rows, cols, is_matrix);
	} else {
		skip_ws(&p);
		if (p.pos >= p.len || p.b[p.pos] != '[') {
			rc = line_fail(&p, "expected '[' to start the %s", what);
		} else {
			p.pos++;
			rc = text_object(&p, what, rows, cols, is_matrix);
		}
	}
	if (rc) {
		free(p.vals);
		return rc;
	}
	*vals = p.vals ? p.vals : xmalloc(sizeof(double));
	*pos = p.pos;
	return 0;
}

/* ---------------------------------------------------------------- writer */

void vpa_kaldi_fprint_vector(FILE *f, const double *v, size_t d, int digits)
{
	fputs(" [", f);
	for (size_t j = 0; j < d; j++)
		fprintf(f, " %.*g", digits, v[j]);
	fputs(" ]\n", f);
}

void vpa_kaldi_fprint_matrix(FILE *f, const double *m, size_t rows, size_t cols, int digits)
{
	if (rows == 0) {
		fputs(" [ ]\n", f);
		return;
	}
	fputs(" [\n", f);
	for (size_t i = 0; i < rows; i++) {
		fputs(" ", f);
		for (size_t j = 0; j < cols; j++)
			fprintf(f, " %.*g", digits, m[i * cols + j]);
		fputs(i + 1 == rows ? " ]\n" : "\n", f);
	}
}

int vpa_kaldi_write_vectors(const char *path, char *const *ids, const double *x, size_t n,
			    size_t d, struct vpa_err *err)
{
	struct vpa_atomic a;
	FILE *f = vpa_atomic_open(path, &a, err);
	if (!f)
		return err ? err->status : VPA_EIO;
	for (size_t i = 0; i < n; i++) {
		fputs(ids[i], f);
		fputc(' ', f);
		vpa_kaldi_fprint_vector(f, x + i * d, d, 9);
	}
	return vpa_atomic_commit(&a, err);
}

/* ----------------------------------------------------------------- lists */

void vpa_kaldi_list_init(struct vpa_kaldi_list *l)
{
	memset(l, 0, sizeof(*l));
}

void vpa_kaldi_list_release(struct vpa_kaldi_list *l)
{
	for (size_t i = 0; i < l->n * l->ncols; i++)
		free(l->f[i]);
	free(l->f);
	free(l->line);
	free(l->name);
	vpa_kaldi_list_init(l);
}

int vpa_kaldi_parse_list(const char *name, const char *buf, size_t len, size_t ncols,
			 struct vpa_kaldi_list *out, struct vpa_err *err)
{
	struct vpa_kaldi_list l;
	vpa_kaldi_list_init(&l);
	size_t cap = 0;
	int rc = vpa_kaldi_check_bom(name, buf, len, err);
	if (rc)
		return rc;
	long line = 0;
	const char *fs[8];
	size_t fl[8];
	for (size_t pos = 0; pos < len;) {
		line++;
		const char *s = buf + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - s) : len - pos;
		pos += ll + (nl != NULL);
		if (memchr(s, 0, ll)) {
			struct vpa_loc loc = { name, line, 0 };
			rc = vpa_fail(err, VPA_EINPUT, &loc, "unexpected NUL byte");
			goto out;
		}
		size_t k = 0, nf = 0;
		while (k < ll) {
			while (k < ll && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
				k++;
			if (k >= ll)
				break;
			if (nf == 0 && s[k] == '#')
				break;
			size_t b = k;
			while (k < ll && s[k] != ' ' && s[k] != '\t' && s[k] != '\r')
				k++;
			if (nf < 8) {
				fs[nf] = s + b;
				fl[nf] = k - b;
			}
			nf++;
		}
		if (nf == 0)
			continue;
		if (l.ncols == 0) {
			if (ncols == 0 && nf > 2) {
				struct vpa_loc loc = { name, line, 0 };
				rc = vpa_fail(err, VPA_EINPUT, &loc, "expected 1 or 2 columns, found %zu", nf);
				goto out;
			}
			l.ncols = ncols ? ncols : nf;
		}
		if (nf != l.ncols) {
			struct vpa_loc loc = { name, line, 0 };
			if (ncols == 0)
				rc = vpa_fail(err, VPA_EINPUT, &loc, "expected %zu columns as on line %ld, found %zu",
					      l.ncols, l.line[0], nf);
			else
				rc = vpa_fail(err, VPA_EINPUT, &loc, "expected %zu column%s, found %zu", l.ncols,
					      l.ncols == 1 ? "" : "s", nf);
			goto out;
		}
		if (l.n == cap) {
			cap = cap ? 2 * cap : 256;
			l.f = xrealloc(l.f, xmul(xmul(cap, l.ncols), sizeof(char *)));
			l.line = xrealloc(l.line, xmul(cap, sizeof(long)));
		}
		for (size_t j = 0; j < nf; j++) {
			char *f = xmalloc(fl[j] + 1);
			memcpy(f, fs[j], fl[j]);
			f[fl[j]] = 0;
			l.f[l.n * l.ncols + j] = f;
		}
		l.line[l.n++] = line;
	}
	if (l.n == 0) {
		rc = vpa_fail(err, VPA_EINPUT, NULL, "%s: no entries", name);
		goto out;
	}
	l.name = xstrdup(name);
	vpa_kaldi_list_release(out);
	*out = l;
	return 0;
out:
	vpa_kaldi_list_release(&l);
	return rc;
}

int vpa_kaldi_read_list(const char *path, size_t ncols, struct vpa_kaldi_list *out,
			struct vpa_err *err)
{
	char *buf;
	size_t len;
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_kaldi_parse_list(path, buf, len, ncols, out, err);
	free(buf);
	return rc;
}

void vpa_kaldi_trials_init(struct vpa_kaldi_trials *t)
{
	memset(t, 0, sizeof(*t));
}

void vpa_kaldi_trials_release(struct vpa_kaldi_trials *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->enroll[i]);
		free(t->test[i]);
	}
	free(t->enroll);
	free(t->test);
	free(t->target);
	free(t->line);
	free(t->name);
	vpa_kaldi_trials_init(t);
}

int vpa_kaldi_parse_trials(const char *name, const char *buf, size_t len,
			   struct vpa_kaldi_trials *out, struct vpa_err *err)
{
	struct vpa_kaldi_list l;
	struct vpa_kaldi_trials t;
	struct vpa_strmap pairs;
	char **pk = NULL;
	vpa_kaldi_list_init(&l);
	vpa_kaldi_trials_init(&t);
	vpa_strmap_init(&pairs);
	int rc = vpa_kaldi_parse_list(name, buf, len, 3, &l, err);
	if (rc)
		goto out;
	t.n = l.n;
	t.enroll = xcalloc(l.n, sizeof(char *));
	t.test = xcalloc(l.n, sizeof(char *));
	t.target = xmalloc(l.n);
	t.line = xmalloc(xmul(l.n, sizeof(long)));
	pk = xcalloc(l.n, sizeof(char *));
	for (size_t i = 0; i < l.n; i++) {
		const char *lab = l.f[3 * i + 2];
		struct vpa_loc loc = { name, l.line[i], 0 };
		if (!strcmp(lab, "target"))
			t.target[i] = 1;
		else if (!strcmp(lab, "nontarget"))
			t.target[i] = 0;
		else {
			char tb[64];
			rc = vpa_fail(err, VPA_EINPUT, &loc, "unknown label '%s': expected target or nontarget",
				      tokstr(tb, sizeof(tb), (const unsigned char *)lab, strlen(lab)));
			goto out;
		}
		size_t a = strlen(l.f[3 * i]), b = strlen(l.f[3 * i + 1]);
		pk[i] = xmalloc(a + b + 2);
		memcpy(pk[i], l.f[3 * i], a);
		pk[i][a] = ' ';
		memcpy(pk[i] + a + 1, l.f[3 * i + 1], b + 1);
		uint32_t first;
		if (vpa_strmap_put(&pairs, pk[i], (uint32_t)i, &first)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "duplicate trial '%s' '%s' (first on line %ld)",
				      l.f[3 * i], l.f[3 * i + 1], l.line[first]);
			goto out;
		}
		t.enroll[i] = l.f[3 * i];
		t.test[i] = l.f[3 * i + 1];
		l.f[3 * i] = l.f[3 * i + 1] = NULL;
		t.line[i] = l.line[i];
	}
	t.name = xstrdup(name);
	vpa_kaldi_trials_release(out);
	*out = t;
	vpa_kaldi_trials_init(&t);
out:
	if (pk)
		for (size_t i = 0; i < l.n; i++)
			free(pk[i]);
	free(pk);
	vpa_strmap_release(&pairs);
	vpa_kaldi_trials_release(&t);
	vpa_kaldi_list_release(&l);
	return rc;
}

int vpa_kaldi_read_trials(const char *path, struct vpa_kaldi_trials *out, struct vpa_err *err)
{
	char *buf;
	size_t len;
	int rc = vpa_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = vpa_kaldi_parse_trials(path, buf, len, out, err);
	free(buf);
	return rc;
}
