/*
 * base/json.h - a small JSON DOM: build, write, parse.
 *
 * results.json is built as a DOM by the run pipeline and rendered by the
 * report writers; `vpaudit report` and `vpaudit gate` parse it back.  Object
 * keys keep insertion order (the output is stable and diffable).
 *
 * Ownership: a value added to an object or array belongs to it;
 * vpa_json_free() frees a whole tree.  Non-finite numbers are written as null.
 */
#ifndef VPA_JSON_H
#define VPA_JSON_H

#include "base/base.h"

enum vpa_json_type {
	VPA_JSON_NULL,
	VPA_JSON_BOOL,
	VPA_JSON_NUM,
	VPA_JSON_STR,
	VPA_JSON_ARR,
	VPA_JSON_OBJ,
};

struct vpa_json {
	enum vpa_json_type type;
	int boolean;
	double num;
	char *str;               /* STR: owned, NUL-terminated (no embedded NUL) */
	size_t n, cap;           /* ARR/OBJ: item count */
	struct vpa_json **items; /* (n), owned */
	char **keys;             /* OBJ: (n), owned */
	long line, col;          /* where a parsed value started (1-based), else 0 */
};

struct vpa_json *vpa_json_null(void);
struct vpa_json *vpa_json_bool(int b);
struct vpa_json *vpa_json_num(double x);  /* non-finite -> null */
struct vpa_json *vpa_json_str(const char *s);   /* copies s; NULL -> null */
struct vpa_json *vpa_json_arr(void);
struct vpa_json *vpa_json_obj(void);

/* Takes ownership of v.  vpa_json_set replaces an existing key in place. */
void vpa_json_set(struct vpa_json *obj, const char *key, struct vpa_json *v);
void vpa_json_push(struct vpa_json *arr, struct vpa_json *v);
/* Shorthands. */
void vpa_json_set_num(struct vpa_json *obj, const char *key, double x);
void vpa_json_set_str(struct vpa_json *obj, const char *key, const char *s);

/* Borrowed; NULL when absent or obj is not an object. */
struct vpa_json *vpa_json_get(const struct vpa_json *obj, const char *key);
/* Number at key, or `dflt` when absent / not a number. */
double vpa_json_get_num(const struct vpa_json *obj, const char *key, double dflt);
/* String at key or NULL. */
const char *vpa_json_get_str(const struct vpa_json *obj, const char *key);

/* Deep copy. */
struct vpa_json *vpa_json_clone(const struct vpa_json *v);
void vpa_json_free(struct vpa_json *v);

/*
 * Write v.  indent = 0: one line; indent > 0: pretty-printed with that many
 * spaces.  Numbers are written in the shortest form that reads back exactly
 * (%.15g, %.16g or %.17g); integers below 1e15 in magnitude without exponent
 * ("123", "-0").  Strings are escaped (control chars as \u00XX); valid UTF-8
 * passes through and invalid bytes become U+FFFD.  No trailing newline.
 */
void vpa_json_write(struct vpa_buf *out, const struct vpa_json *v, int indent);

/*
 * Parse (RFC 8259; depth limit 256; duplicate keys are an error).
 * Errors: `name:line:col: message` (col counts bytes from 1).  Returns NULL on
 * error.  Strict: no comments, trailing commas, NaN/Infinity, leading zeros,
 * raw control characters or invalid UTF-8 in strings, lone surrogates or
 * \u0000 (strings are NUL-terminated); numbers beyond the double range are
 * errors.  A leading UTF-8 byte order mark is skipped (RFC 8259 section 8.1).
 * Every value records its line and col.
 */
struct vpa_json *vpa_json_parse(const char *name, const char *text, size_t len,
				struct vpa_err *err);

#endif
