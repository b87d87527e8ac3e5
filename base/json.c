/*
 * base/json.c - the JSON DOM: builders, writer, strict RFC 8259 parser.
 * See json.h.
 *
 * Objects are arrays of (key, value) pairs in insertion order; lookups are
 * linear, which is right for results.json (tens of keys per object).  The
 * parser keeps the line and column of every value so that `vpaudit gate` can
 * blame the right place in a hand-edited file.
 */
#include "base/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 256

/* ------------------------------------------------------------ builders */

static struct vpa_json *jnew(enum vpa_json_type type)
{
	struct vpa_json *v = xcalloc(1, sizeof(*v));
	v->type = type;
	return v;
}

struct vpa_json *vpa_json_null(void)
{
	return jnew(VPA_JSON_NULL);
}

struct vpa_json *vpa_json_bool(int b)
{
	struct vpa_json *v = jnew(VPA_JSON_BOOL);
	v->boolean = !!b;
	return v;
}

struct vpa_json *vpa_json_num(double x)
{
	if (!isfinite(x))
		return jnew(VPA_JSON_NULL);
	struct vpa_json *v = jnew(VPA_JSON_NUM);
	v->num = x;
	return v;
}

struct vpa_json *vpa_json_str(const char *s)
{
	if (!s)
		return jnew(VPA_JSON_NULL);
	struct vpa_json *v = jnew(VPA_JSON_STR);
	v->str = xstrdup(s);
	return v;
}

struct vpa_json *vpa_json_arr(void)
{
	return jnew(VPA_JSON_ARR);
}

struct vpa_json *vpa_json_obj(void)
{
	return jnew(VPA_JSON_OBJ);
}

static void grow(struct vpa_json *c)
{
	if (c->n < c->cap)
		return;
	c->cap = c->cap ? 2 * c->cap : 4;
	c->items = xrealloc(c->items, xmul(c->cap, sizeof(*c->items)));
	if (c->type == VPA_JSON_OBJ)
		c->keys = xrealloc(c->keys, xmul(c->cap, sizeof(*c->keys)));
}

static long find_key(const struct vpa_json *obj, const char *key)
{
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return (long)i;
	return -1;
}

void vpa_json_set(struct vpa_json *obj, const char *key, struct vpa_json *v)
{
	if (!obj || obj->type != VPA_JSON_OBJ || !key || !v)
		VPA_BUG("vpa_json_set on a non-object or with a NULL key/value");
	long i = find_key(obj, key);
	if (i >= 0) {
		vpa_json_free(obj->items[i]);
		obj->items[i] = v;
		return;
	}
	grow(obj);
	obj->keys[obj->n] = xstrdup(key);
	obj->items[obj->n++] = v;
}

void vpa_json_push(struct vpa_json *arr, struct vpa_json *v)
{
	if (!arr || arr->type != VPA_JSON_ARR || !v)
		VPA_BUG("vpa_json_push on a non-array or with a NULL value");
	grow(arr);
	arr->items[arr->n++] = v;
}

void vpa_json_set_num(struct vpa_json *obj, const char *key, double x)
{
	vpa_json_set(obj, key, vpa_json_num(x));
}

void vpa_json_set_str(struct vpa_json *obj, const char *key, const char *s)
{
	vpa_json_set(obj, key, vpa_json_str(s));
}

struct vpa_json *vpa_json_get(const struct vpa_json *obj, const char *key)
{
	if (!obj || obj->type != VPA_JSON_OBJ || !key)
		return NULL;
	long i = find_key(obj, key);
	return i < 0 ? NULL : obj->items[i];
}

double vpa_json_get_num(const struct vpa_json *obj, const char *key, double dflt)
{
	const struct vpa_json *v = vpa_json_get(obj, key);
	return v && v->type == VPA_JSON_NUM ? v->num : dflt;
}

const char *vpa_json_get_str(const struct vpa_json *obj, const char *key)
{
	const struct vpa_json *v = vpa_json_get(obj, key);
	return v && v->type == VPA_JSON_STR ? v->str : NULL;
}

struct vpa_json *vpa_json_clone(const struct vpa_json *v)
{
	if (!v)
		return NULL;
	struct vpa_json *c = jnew(v->type);
	c->boolean = v->boolean;
	c->num = v->num;
	c->line = v->line;
	c->col = v->col;
	if (v->str)
		c->str = xstrdup(v->str);
	if (v->type == VPA_JSON_ARR || v->type == VPA_JSON_OBJ) {
		c->cap = v->n;
		c->n = v->n;
		if (v->n) {
			c->items = xmalloc(xmul(v->n, sizeof(*c->items)));
			if (v->type == VPA_JSON_OBJ)
				c->keys = xmalloc(xmul(v->n, sizeof(*c->keys)));
		}
		for (size_t i = 0; i < v->n; i++) {
			c->items[i] = vpa_json_clone(v->items[i]);
			if (v->type == VPA_JSON_OBJ)
				c->keys[i] = xstrdup(v->keys[i]);
		}
	}
	return c;
}

void vpa_json_free(struct vpa_json *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		vpa_json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	free(v);
}

/* ------------------------------------------------------------ writer */

/*
 * Shortest of %.15g, %.16g, %.17g that reads back exactly; integers below
 * 1e15 in magnitude without exponent ("123", "-0").
 */
static void write_num(struct vpa_buf *out, double x)
{
	char tmp[40];
	if (!isfinite(x)) {
		vpa_buf_puts(out, "null");
		return;
	}
	if (x == floor(x) && fabs(x) < 1e15) {
		snprintf(tmp, sizeof(tmp), "%.0f", x);
		vpa_buf_puts(out, tmp);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, x);
		if (prec == 17 || strtod(tmp, NULL) == x)
			break;
	}
	vpa_buf_puts(out, tmp);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static int utf8_len(const unsigned char *s, size_t avail)
{
	unsigned c = s[0];
	int n;
	unsigned min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	if (avail < (size_t)n)
		return 0;
	unsigned cp = c & (0x3f >> (n - 1));
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Escaped string; invalid UTF-8 bytes become U+FFFD so the output is valid. */
static void write_str(struct vpa_buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);
	vpa_buf_add(out, "\"", 1);
	while (left) {
		const unsigned char *run = p;
		/* copy plain ASCII in one go */
		while (left && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') {
			p++;
			left--;
		}
		if (p > run)
			vpa_buf_add(out, run, (size_t)(p - run));
		if (!left)
			break;
		unsigned c = *p;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			vpa_buf_add(out, e, 2);
			p++;
			left--;
		} else if (c < 0x20) {
			switch (c) {
			case '\b': vpa_buf_puts(out, "\\b"); break;
			case '\f': vpa_buf_puts(out, "\\f"); break;
			case '\n': vpa_buf_puts(out, "\\n"); break;
			case '\r': vpa_buf_puts(out, "\\r"); break;
			case '\t': vpa_buf_puts(out, "\\t"); break;
			default: vpa_buf_printf(out, "\\u%04x", c); break;
			}
			p++;
			left--;
		} else {
			int n = utf8_len(p, left);
			if (n) {
				vpa_buf_add(out, p, (size_t)n);
			} else {
				vpa_buf_puts(out, "\xef\xbf\xbd");
				n = 1;
			}
			p += n;
			left -= (size_t)n;
		}
	}
	vpa_buf_add(out, "\"", 1);
}

static void newline(struct vpa_buf *out, int indent, int depth)
{
	vpa_buf_add(out, "\n", 1);
	for (int i = 0; i < indent * depth; i++)
		vpa_buf_add(out, " ", 1);
}

static void write_val(struct vpa_buf *out, const struct vpa_json *v, int indent, int depth)
{
	switch (v->type) {
	case VPA_JSON_NULL:
		vpa_buf_puts(out, "null");
		break;
	case VPA_JSON_BOOL:
		vpa_buf_puts(out, v->boolean ? "true" : "false");
		break;
	case VPA_JSON_NUM:
		write_num(out, v->num);
		break;
	case VPA_JSON_STR:
		write_str(out, v->str ? v->str : "");
		break;
	case VPA_JSON_ARR:
	case VPA_JSON_OBJ: {
		int obj = v->type == VPA_JSON_OBJ;
		vpa_buf_add(out, obj ? "{" : "[", 1);
		for (size_t i = 0; i < v->n; i++) {
			if (i)
				vpa_buf_add(out, ",", 1);
			if (indent > 0)
				newline(out, indent, depth + 1);
			if (obj) {
				write_str(out, v->keys[i]);
				vpa_buf_add(out, indent > 0 ? ": " : ":", indent > 0 ? 2 : 1);
			}
			write_val(out, v->items[i], indent, depth + 1);
		}
		if (indent > 0 && v->n)
			newline(out, indent, depth);
		vpa_buf_add(out, obj ? "}" : "]", 1);
		break;
	}
	}
}

void vpa_json_write(struct vpa_buf *out, const struct vpa_json *v, int indent)
{
	if (!v) {
		vpa_buf_puts(out, "null");
		return;
	}
	write_val(out, v, indent, 0);
}

/* ------------------------------------------------------------ parser */

struct jp {
	const char *name;
	const char *s, *p, *end;
	long line;
	const char *ls; /* start of the current line */
	struct vpa_err *err;
};

static long jcol(const struct jp *j, const char *at)
{
	return (long)(at - j->ls) + 1;
}

static int jfail_at(struct jp *j, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int jfail_at(struct jp *j, const char *at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct vpa_loc loc = {j->name, j->line, jcol(j, at)};
	return vpa_fail(j->err, VPA_EINPUT, &loc, "%s", msg);
}

static void jskip(struct jp *j)
{
	while (j->p < j->end) {
		char c = *j->p;
		if (c == '\n') {
			j->line++;
			j->ls = j->p + 1;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			break;
		}
		j->p++;
	}
}

/* Describe the byte at p for a message: 'x', end of input, byte 0xNN. */
static const char *what_at(const struct jp *j, const char *p, char *buf, size_t cap)
{
	if (p >= j->end)
		return "end of input";
	unsigned char c = (unsigned char)*p;
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, cap, "'%c'", c);
	else
		snprintf(buf, cap, "byte 0x%02x", c);
	return buf;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static void put_utf8(struct vpa_buf *b, unsigned cp)
{
	unsigned char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xc0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xe0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (unsigned char)(0xf0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	vpa_buf_add(b, u, n);
}

/* A string at j->p (which is '"'); *out is owned by the caller. */
static int parse_string(struct jp *j, char **out)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	const char *start = j->p++;
	for (;;) {
		const char *run = j->p;
		while (j->p < j->end && *j->p != '"' && *j->p != '\\' &&
		       (unsigned char)*j->p >= 0x20 && (unsigned char)*j->p < 0x80)
			j->p++;
		vpa_buf_add(&b, run, (size_t)(j->p - run));
		if (j->p >= j->end) {
			jfail_at(j, start, "unterminated string");
			goto fail;
		}
		unsigned char c = (unsigned char)*j->p;
		if (c == '"') {
			j->p++;
			break;
		}
		if (c < 0x20) {
			jfail_at(j, j->p, "control character U+%04X in a string (escape it)", c);
			goto fail;
		}
		if (c >= 0x80) {
			int n = utf8_len((const unsigned char *)j->p, (size_t)(j->end - j->p));
			if (!n) {
				jfail_at(j, j->p, "invalid UTF-8 in a string");
				goto fail;
			}
			vpa_buf_add(&b, j->p, (size_t)n);
			j->p += n;
			continue;
		}
		/* an escape */
		const char *esc = j->p++;
		if (j->p >= j->end) {
			jfail_at(j, start, "unterminated string");
			goto fail;
		}
		char e = *j->p++;
		switch (e) {
		case '"': vpa_buf_add(&b, "\"", 1); break;
		case '\\': vpa_buf_add(&b, "\\", 1); break;
		case '/': vpa_buf_add(&b, "/", 1); break;
		case 'b': vpa_buf_add(&b, "\b", 1); break;
		case 'f': vpa_buf_add(&b, "\f", 1); break;
		case 'n': vpa_buf_add(&b, "\n", 1); break;
		case 'r': vpa_buf_add(&b, "\r", 1); break;
		case 't': vpa_buf_add(&b, "\t", 1); break;
		case 'u': {
			unsigned cp, lo;
			if (j->end - j->p < 4 || hex4(j->p, &cp)) {
				jfail_at(j, esc, "invalid \\u escape: expected 4 hex digits");
				goto fail;
			}
			j->p += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				jfail_at(j, esc, "unpaired surrogate \\u%04x", cp);
				goto fail;
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' ||
				    hex4(j->p + 2, &lo) || lo < 0xdc00 || lo > 0xdfff) {
					jfail_at(j, esc, "unpaired surrogate \\u%04x", cp);
					goto fail;
				}
				j->p += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			if (cp == 0) {
				jfail_at(j, esc, "\\u0000 is not allowed in strings");
				goto fail;
			}
			put_utf8(&b, cp);
			break;
		}
		default: {
			char w[16];
			jfail_at(j, esc, "invalid escape '\\%s'",
				 (unsigned char)e >= 0x20 && (unsigned char)e < 0x7f
					 ? (snprintf(w, sizeof(w), "%c", e), w)
					 : (snprintf(w, sizeof(w), "x%02x", (unsigned char)e), w));
			goto fail;
		}
		}
	}
	*out = xstrdup(vpa_buf_str(&b));
	vpa_buf_release(&b);
	return 0;
fail:
	vpa_buf_release(&b);
	return VPA_EINPUT;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int parse_number(struct jp *j, double *out)
{
	const char *s = j->p, *p = s;
	if (p < j->end && *p == '-')
		p++;
	if (p >= j->end || !is_digit(*p))
		return jfail_at(j, s, "invalid number: expected a digit");
	if (*p == '0') {
		p++;
		if (p < j->end && is_digit(*p))
			return jfail_at(j, s, "invalid number: leading zero");
	} else {
		while (p < j->end && is_digit(*p))
			p++;
	}
	if (p < j->end && *p == '.') {
		p++;
		if (p >= j->end || !is_digit(*p))
			return jfail_at(j, s, "invalid number: expected a digit after '.'");
		while (p < j->end && is_digit(*p))
			p++;
	}
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < j->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= j->end || !is_digit(*p))
			return jfail_at(j, s, "invalid number: expected a digit in the exponent");
		while (p < j->end && is_digit(*p))
			p++;
	}
	size_t n = (size_t)(p - s);
	char small[64];
	char *tmp = n < sizeof(small) ? small : xmalloc(n + 1);
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	double x = strtod(tmp, NULL);
	if (tmp != small)
		free(tmp);
	if (!isfinite(x))
		return jfail_at(j, s, "number out of range");
	*out = x;
	j->p = p;
	return 0;
}

static int lit(struct jp *j, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return 0;
	/* "truex" is not "true" */
	if ((size_t)(j->end - j->p) > n) {
		char c = j->p[n];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_')
			return 0;
	}
	j->p += n;
	return 1;
}

static struct vpa_json *parse_value(struct jp *j, int depth);

static struct vpa_json *parse_container(struct jp *j, int depth)
{
	int obj = *j->p == '{';
	char close = obj ? '}' : ']';
	struct vpa_json *v = jnew(obj ? VPA_JSON_OBJ : VPA_JSON_ARR);
	v->line = j->line;
	v->col = jcol(j, j->p);
	if (depth >= MAX_DEPTH) {
		jfail_at(j, j->p, "nesting deeper than %d levels", MAX_DEPTH);
		goto fail;
	}
	j->p++;
	jskip(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return v;
	}
	for (;;) {
		char w[16];
		char *key = NULL;
		const char *kat = j->p;
		long kline = j->line;
		if (obj) {
			if (j->p >= j->end || *j->p != '"') {
				if (v->n && j->p < j->end && *j->p == '}')
					jfail_at(j, j->p, "trailing comma before '}'");
				else
					jfail_at(j, j->p, "expected a string key, got %s",
						 what_at(j, j->p, w, sizeof(w)));
				goto fail;
			}
			if (parse_string(j, &key))
				goto fail;
			long i = find_key(v, key);
			if (i >= 0) {
				struct vpa_loc loc = {j->name, kline, jcol(j, kat)};
				/* kat is on line kline (a key has no newline) */
				vpa_fail(j->err, VPA_EINPUT, &loc,
					 "duplicate key \"%.60s\" (first at line %ld)", key,
					 v->items[i]->line);
				free(key);
				goto fail;
			}
			jskip(j);
			if (j->p >= j->end || *j->p != ':') {
				jfail_at(j, j->p, "expected ':' after a key, got %s",
					 what_at(j, j->p, w, sizeof(w)));
				free(key);
				goto fail;
			}
			j->p++;
			jskip(j);
		} else if (j->p < j->end && *j->p == ']' && v->n) {
			jfail_at(j, j->p, "trailing comma before ']'");
			goto fail;
		}
		struct vpa_json *item = parse_value(j, depth + 1);
		if (!item) {
			free(key);
			goto fail;
		}
		grow(v);
		if (obj)
			v->keys[v->n] = key;
		v->items[v->n++] = item;
		jskip(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			jskip(j);
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return v;
		}
		jfail_at(j, j->p, "expected ',' or '%c', got %s", close,
			 what_at(j, j->p, w, sizeof(w)));
		goto fail;
	}
fail:
	vpa_json_free(v);
	return NULL;
}

static struct vpa_json *parse_value(struct jp *j, int depth)
{
	char w[16];
	if (j->p >= j->end) {
		jfail_at(j, j->p, "expected a value, got end of input");
		return NULL;
	}
	long line = j->line, col = jcol(j, j->p);
	struct vpa_json *v = NULL;
	char c = *j->p;
	if (c == '{' || c == '[') {
		return parse_container(j, depth);
	} else if (c == '"') {
		char *s;
		if (parse_string(j, &s))
			return NULL;
		v = jnew(VPA_JSON_STR);
		v->str = s;
	} else if (c == '-' || is_digit(c)) {
		double x = 0;
		if (parse_number(j, &x))
			return NULL;
		v = jnew(VPA_JSON_NUM);
		v->num = x;
	} else if (lit(j, "true")) {
		v = vpa_json_bool(1);
	} else if (lit(j, "false")) {
		v = vpa_json_bool(0);
	} else if (lit(j, "null")) {
		v = jnew(VPA_JSON_NULL);
	} else {
		if (c == '/')
			jfail_at(j, j->p, "comments are not allowed in JSON");
		else if (c == 'N' || c == 'I')
			jfail_at(j, j->p, "expected a value, got %s (NaN and Infinity are "
				 "not JSON: use null)", what_at(j, j->p, w, sizeof(w)));
		else
			jfail_at(j, j->p, "expected a value, got %s", what_at(j, j->p, w, sizeof(w)));
		return NULL;
	}
	v->line = line;
	v->col = col;
	return v;
}

struct vpa_json *vpa_json_parse(const char *name, const char *text, size_t len,
				struct vpa_err *err)
{
	if (!text) /* (NULL, 0) is an empty document */
		text = "";
	struct jp j = {name, text, text, text + len, 1, text, err};
	/* RFC 8259 section 8.1: a parser may ignore a UTF-8 byte order mark. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) {
		j.p += 3;
		j.ls = j.p;
	}
	jskip(&j);
	if (j.p >= j.end) {
		jfail_at(&j, j.p, "empty input: expected a JSON value");
		return NULL;
	}
	struct vpa_json *v = parse_value(&j, 0);
	if (!v)
		return NULL;
	jskip(&j);
	if (j.p < j.end) {
		char w[16];
		jfail_at(&j, j.p, "unexpected %s after the JSON value",
			 what_at(&j, j.p, w, sizeof(w)));
		vpa_json_free(v);
		return NULL;
	}
	return v;
}
