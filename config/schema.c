/*
 * config/schema.c - key schemas as data: checking a mapping against
 * them, "did you mean", typed getters with defaults, and the Markdown
 * reference generated from the same tables (so docs and checks agree).
 */
#include "config/yaml.h"
#include "config/schema.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *vpa_path_join(const char *dir, const char *path)
{
	if (path[0] == '/' || !dir || !*dir || !strcmp(dir, "."))
		return xstrdup(path);
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s/%s", dir, path);
	return b.data;
}

/* ---- did you mean ---------------------------------------------------------- */

/* Optimal string alignment distance, case-insensitive, capped at 100 chars. */
static size_t osa(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 100 || m > 100)
		return 1000;
	size_t d[101][101];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t c = d[i - 1][j - 1] + (ca != cb);
			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	return d[n][m];
}

const char *vpa_did_you_mean(const char *word, const char *const *cands, size_t n)
{
	size_t len = strlen(word), best = (size_t)-1;
	const char *pick = NULL;
	size_t limit = len < 4 ? 1 : 2;
	for (size_t i = 0; i < n; i++) {
		size_t d = osa(word, cands[i]);
		if (d < best) {
			best = d;
			pick = cands[i];
		}
	}
	if (!pick || best > limit || best >= len)
		return NULL;
	return pick;
}

/* ---- schema lookups -------------------------------------------------------- */

const struct vpa_key *vpa_schema_find(const struct vpa_schema *const *schemas, size_t n,
				      const char *name)
{
	for (size_t s = 0; s < n; s++)
		for (const struct vpa_key *k = schemas[s]->keys; k->name; k++)
			if (!strcmp(k->name, name))
				return k;
	return NULL;
}

/* "a, b or c" of the choices "a|b|c" */
static void choices_text(struct vpa_buf *b, const char *choices)
{
	const char *p = choices;
	int first = 1;
	while (*p) {
		const char *e = strchr(p, '|');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (!first)
			vpa_buf_puts(b, e ? ", " : " or ");
		vpa_buf_printf(b, "'%.*s'", (int)l, p);
		first = 0;
		p += l + (e ? 1 : 0);
	}
}

static int choice_ok(const char *choices, const char *s)
{
	size_t sl = strlen(s);
	const char *p = choices;
	while (*p) {
		const char *e = strchr(p, '|');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == sl && !memcmp(p, s, l))
			return 1;
		p += l + (e ? 1 : 0);
	}
	return 0;
}

static const char *choice_near(const char *choices, const char *s, char *store, size_t cap)
{
	const char *cands[64];
	char tmp[1024];
	size_t n = 0;
	snprintf(tmp, sizeof(tmp), "%s", choices);
	char *save = NULL;
	for (char *t = strtok_r(tmp, "|", &save); t && n < 64; t = strtok_r(NULL, "|", &save))
		cands[n++] = t;
	const char *m = vpa_did_you_mean(s, cands, n);
	if (!m)
		return NULL;
	snprintf(store, cap, "%s", m);
	return store;
}

static void fmt_num(struct vpa_buf *b, double x, int integer)
{
	if (integer)
		vpa_buf_printf(b, "%.0f", x);
	else
		vpa_buf_printf(b, "%g", x);
}

/* "an integer >= 0", "a number in (0, 1)", ... */
static void range_text(struct vpa_buf *b, const struct vpa_key *k)
{
	vpa_buf_puts(b, k->type == VPA_K_INT ? "an integer" : "a number");
	int has_lo = isfinite(k->lo), has_hi = isfinite(k->hi);
	if (has_lo && has_hi) {
		vpa_buf_puts(b, (k->flags & VPA_KF_OPEN_LO) ? " in (" : " in [");
		fmt_num(b, k->lo, k->type == VPA_K_INT);
		vpa_buf_puts(b, ", ");
		fmt_num(b, k->hi, k->type == VPA_K_INT);
		vpa_buf_puts(b, (k->flags & VPA_KF_OPEN_HI) ? ")" : "]");
	} else if (has_lo) {
		vpa_buf_puts(b, (k->flags & VPA_KF_OPEN_LO) ? " > " : " >= ");
		fmt_num(b, k->lo, k->type == VPA_K_INT);
	} else if (has_hi) {
		vpa_buf_puts(b, (k->flags & VPA_KF_OPEN_HI) ? " < " : " <= ");
		fmt_num(b, k->hi, k->type == VPA_K_INT);
	}
}

static int in_range(const struct vpa_key *k, double x)
{
	if (isfinite(k->lo) && (x < k->lo || ((k->flags & VPA_KF_OPEN_LO) && x <= k->lo)))
		return 0;
	if (isfinite(k->hi) && (x > k->hi || ((k->flags & VPA_KF_OPEN_HI) && x >= k->hi)))
		return 0;
	return 1;
}

static int parse_num(const char *s, double *x)
{
	char *end;
	if (!*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(v))
		return -1;
	/* refuse hex floats and "infinity"-like words strtod accepts */
	for (const char *p = s; *p; p++)
		if (*p == 'x' || *p == 'X' || *p == 'n' || *p == 'N' || *p == 'i' || *p == 'I')
			return -1;
	*x = v;
	return 0;
}

static int parse_int(const char *s, long long *x)
{
	char *end;
	if (!*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end || errno == ERANGE)
		return -1;
	*x = v;
	return 0;
}

static int parse_bool(const char *s, int *x)
{
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
		*x = 1;
		return 0;
	}
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
		*x = 0;
		return 0;
	}
	return -1;
}

/*
 * Names and ids become folder and file names (out/NAME/), record keys and
 * report headings: a cap keeps them one line and within a file name's
 * 255 bytes (a 5,000-character name failed only when its folder was made).
 */
#define NAME_MAX_CHARS 100

static int name_ok(const char *s, int allow_dot)
{
	if (!*s)
		return 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (!isalnum(*p) && *p != '_' && *p != '-' && !(allow_dot && *p == '.'))
			return 0;
	return 1;
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The text of a scalar for messages: quoted and shortened. */
static const char *shown(const struct vpa_ynode *v, char *store, size_t cap)
{
	if (v->type != VPA_YSCALAR)
		return vpa_ynode_what(v);
	if (vpa_ynode_is_null(v))
		return "an empty value";
	size_t l = strlen(v->str);
	if (l > 40)
		snprintf(store, cap, "'%.37s...'", v->str);
	else
		snprintf(store, cap, "'%s'", v->str);
	return store;
}

int vpa_key_check(const struct vpa_kind_ctx *ctx, const struct vpa_key *k,
		  const struct vpa_ynode *v, struct vpa_err *err)
{
	struct vpa_loc loc = vpa_node_loc(ctx->file, v);
	struct vpa_buf b;
	char st[64];
	int rc = 0;
	vpa_buf_init(&b);
	switch (k->type) {
	case VPA_K_STR:
	case VPA_K_PATH:
	case VPA_K_NAME:
	case VPA_K_ID:
		if (v->type != VPA_YSCALAR || vpa_ynode_is_null(v) || !*v->str) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must be %s, got %s", k->name,
				      k->type == VPA_K_PATH ? "a file path" : "a string",
				      shown(v, st, sizeof(st)));
		} else if ((k->type == VPA_K_ID || k->type == VPA_K_NAME) &&
			   strlen(v->str) > NAME_MAX_CHARS) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "'%s' must be at most %d characters, got %zu", k->name,
				      NAME_MAX_CHARS, strlen(v->str));
		} else if (k->type == VPA_K_ID && !name_ok(v->str, 0)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "'%s' must use only letters, digits, '_' and '-', got %s",
				      k->name, shown(v, st, sizeof(st)));
		} else if (k->type == VPA_K_NAME && !name_ok(v->str, 1)) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "'%s' must use only letters, digits, '.', '_' and '-', got %s",
				      k->name, shown(v, st, sizeof(st)));
		} else if (k->type == VPA_K_STR && isfinite(k->hi) && utf8_chars(v->str) > k->hi) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "'%s' must be at most %.0f characters, got %zu", k->name, k->hi,
				      utf8_chars(v->str));
		}
		break;
	case VPA_K_PATHS:
		if (v->type == VPA_YSEQ) {
			if (v->n == 0) {
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "'%s' must be a path or a list of paths, got an empty list",
					      k->name);
				break;
			}
			for (size_t i = 0; i < v->n && !rc; i++) {
				const struct vpa_ynode *it = v->items[i];
				struct vpa_loc il = vpa_node_loc(ctx->file, it);
				if (it->type != VPA_YSCALAR || vpa_ynode_is_null(it) || !*it->str)
					rc = vpa_fail(err, VPA_EINPUT, &il,
						      "each item of '%s' must be a path, got %s",
						      k->name, shown(it, st, sizeof(st)));
			}
		} else if (v->type != VPA_YSCALAR || vpa_ynode_is_null(v) || !*v->str) {
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "'%s' must be a path or a list of paths, got %s", k->name,
				      shown(v, st, sizeof(st)));
		}
		break;
	case VPA_K_INT:
	case VPA_K_NUM: {
		double x = 0;
		long long i = 0;
		int bad = v->type != VPA_YSCALAR || !v->plain;
		if (!bad && k->type == VPA_K_INT) {
			bad = parse_int(v->str, &i) != 0;
			x = (double)i;
		} else if (!bad) {
			bad = parse_num(v->str, &x) != 0;
		}
		if (bad || !in_range(k, x)) {
			range_text(&b, k);
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must be %s, got %s", k->name,
				      vpa_buf_str(&b), shown(v, st, sizeof(st)));
		}
		break;
	}
	case VPA_K_BOOL: {
		int x;
		if (v->type != VPA_YSCALAR || !v->plain || parse_bool(v->str, &x))
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must be true or false, got %s",
				      k->name, shown(v, st, sizeof(st)));
		break;
	}
	case VPA_K_ENUM:
		if (v->type != VPA_YSCALAR || !choice_ok(k->choices, v->str)) {
			char near[128];
			choices_text(&b, k->choices);
			if (v->type == VPA_YSCALAR && choice_near(k->choices, v->str, near, sizeof(near)))
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "'%s' must be %s, got %s (did you mean '%s'?)", k->name,
					      vpa_buf_str(&b), shown(v, st, sizeof(st)), near);
			else
				rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must be %s, got %s",
					      k->name, vpa_buf_str(&b), shown(v, st, sizeof(st)));
		}
		break;
	case VPA_K_ENUMLIST:
		if (v->type != VPA_YSEQ) {
			choices_text(&b, k->choices);
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must be a list of %s, got %s",
				      k->name, vpa_buf_str(&b), shown(v, st, sizeof(st)));
			break;
		}
		if ((k->flags & VPA_KF_NONEMPTY) && v->n == 0) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must not be empty", k->name);
			break;
		}
		for (size_t i = 0; i < v->n && !rc; i++) {
			struct vpa_key item = *k;
			item.type = VPA_K_ENUM;
			rc = vpa_key_check(ctx, &item, v->items[i], err);
		}
		break;
	case VPA_K_MAP:
		if (v->type != VPA_YMAP) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must be a mapping, got %s",
				      k->name, shown(v, st, sizeof(st)));
			break;
		}
		if (k->sub) {
			const struct vpa_schema *s[1] = {k->sub};
			char what[128];
			snprintf(what, sizeof(what), "'%s'", k->name);
			rc = vpa_schema_check(ctx, s, 1, v, what, err);
		}
		break;
	case VPA_K_MAPLIST:
	case VPA_K_KINDLIST:
	case VPA_K_LIST:
		if (v->type != VPA_YSEQ) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must be a list, got %s", k->name,
				      shown(v, st, sizeof(st)));
			break;
		}
		if ((k->flags & VPA_KF_NONEMPTY) && v->n == 0) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' must not be empty", k->name);
			break;
		}
		for (size_t i = 0; i < v->n && !rc; i++) {
			const struct vpa_ynode *it = v->items[i];
			struct vpa_loc il = vpa_node_loc(ctx->file, it);
			if (k->type == VPA_K_LIST) {
				if (it->type != VPA_YSCALAR || vpa_ynode_is_null(it))
					rc = vpa_fail(err, VPA_EINPUT, &il,
						      "each item of '%s' must be a value, got %s",
						      k->name, shown(it, st, sizeof(st)));
				continue;
			}
			if (it->type != VPA_YMAP) {
				rc = vpa_fail(err, VPA_EINPUT, &il,
					      "each item of '%s' must be a mapping, got %s", k->name,
					      shown(it, st, sizeof(st)));
				continue;
			}
			if (k->type == VPA_K_MAPLIST && k->sub) {
				const struct vpa_schema *s[1] = {k->sub};
				char what[128];
				snprintf(what, sizeof(what), "an item of '%s'", k->name);
				rc = vpa_schema_check(ctx, s, 1, it, what, err);
			}
		}
		break;
	}
	vpa_buf_release(&b);
	return rc;
}

int vpa_schema_check(const struct vpa_kind_ctx *ctx, const struct vpa_schema *const *schemas,
		     size_t n_schemas, const struct vpa_ynode *map, const char *what,
		     struct vpa_err *err)
{
	struct vpa_loc loc = vpa_node_loc(ctx->file, map);
	char st[64];
	if (map->type != VPA_YMAP)
		return vpa_fail(err, VPA_EINPUT, &loc, "%s must be a mapping, got %s", what,
				shown(map, st, sizeof(st)));
	/* unknown keys first: a typo is the likeliest cause of everything else */
	for (size_t i = 0; i < map->n; i++) {
		const char *name = map->keys[i]->str;
		if (vpa_schema_find(schemas, n_schemas, name))
			continue;
		const char *cands[256] = {0};
		size_t n = 0;
		for (size_t s = 0; s < n_schemas; s++)
			for (const struct vpa_key *k = schemas[s]->keys; k->name && n < 256; k++)
				cands[n++] = k->name;
		struct vpa_loc kl = vpa_node_loc(ctx->file, map->keys[i]);
		const char *near = vpa_did_you_mean(name, cands, n);
		if (near)
			return vpa_fail(err, VPA_EINPUT, &kl,
					"unknown key '%s' in %s (did you mean '%s'?)", name, what,
					near);
		struct vpa_buf b;
		vpa_buf_init(&b);
		for (size_t j = 0; j < n; j++)
			vpa_buf_printf(&b, "%s%s", j ? ", " : "", cands[j]);
		int rc = vpa_fail(err, VPA_EINPUT, &kl, "unknown key '%s' in %s (expected one of: %s)",
				  name, what, vpa_buf_str(&b));
		vpa_buf_release(&b);
		return rc;
	}
	for (size_t s = 0; s < n_schemas; s++)
		for (const struct vpa_key *k = schemas[s]->keys; k->name; k++)
			if (k->required && !vpa_ymap_get(map, k->name))
				return vpa_fail(err, VPA_EINPUT, &loc,
						"%s is missing required key '%s'", what, k->name);
	for (size_t i = 0; i < map->n; i++) {
		const struct vpa_key *k = vpa_schema_find(schemas, n_schemas, map->keys[i]->str);
		int rc = vpa_key_check(ctx, k, map->items[i], err);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- echo typing (used by scenario.c) ------------------------------------ */

struct vpa_json *vpa_scalar_json(const struct vpa_ynode *v, const struct vpa_key *k)
{
	double x;
	long long i;
	int b;
	if (k && k->type == VPA_K_NUM && v->plain && !parse_num(v->str, &x))
		return vpa_json_num(x);
	if (k && k->type == VPA_K_INT && v->plain && !parse_int(v->str, &i))
		return vpa_json_num((double)i);
	if (k && k->type == VPA_K_BOOL && v->plain && !parse_bool(v->str, &b))
		return vpa_json_bool(b);
	if (!k && v->plain) { /* untyped (sweep values): guess like YAML does */
		if (vpa_ynode_is_null(v))
			return vpa_json_null();
		if (!parse_num(v->str, &x))
			return vpa_json_num(x);
		if (!parse_bool(v->str, &b))
			return vpa_json_bool(b);
	}
	return vpa_json_str(v->str);
}

/* ---- the reference --------------------------------------------------------- */

static const char *type_text(const struct vpa_key *k, struct vpa_buf *b)
{
	switch (k->type) {
	case VPA_K_STR:
		if (!isfinite(k->hi))
			return "string";
		vpa_buf_printf(b, "string (at most %.0f characters)", k->hi);
		return vpa_buf_str(b);
	case VPA_K_NAME: return "name ([A-Za-z0-9._-])";
	case VPA_K_ID: return "id ([A-Za-z0-9_-])";
	case VPA_K_INT:
	case VPA_K_NUM:
		range_text(b, k);
		return vpa_buf_str(b);
	case VPA_K_BOOL: return "true or false";
	case VPA_K_ENUM:
		vpa_buf_puts(b, "one of ");
		choices_text(b, k->choices);
		return vpa_buf_str(b);
	case VPA_K_PATH: return "file path (relative to the scenario's folder)";
	case VPA_K_PATHS: return "file path, or a list of them (relative to the scenario's folder)";
	case VPA_K_ENUMLIST:
		vpa_buf_puts(b, "list of ");
		choices_text(b, k->choices);
		return vpa_buf_str(b);
	case VPA_K_MAP: return "mapping";
	case VPA_K_MAPLIST: return "list of mappings";
	case VPA_K_LIST: return "list of values";
	case VPA_K_KINDLIST: return "list of mappings (by `kind`)";
	}
	return "?";
}

static void md_cell(struct vpa_buf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			vpa_buf_puts(out, "\\|");
		else if (*s == '\n')
			vpa_buf_puts(out, " ");
		else
			vpa_buf_add(out, s, 1);
	}
}

void vpa_schema_table(struct vpa_buf *out, const struct vpa_schema *s)
{
	vpa_buf_puts(out, "| key | type | required | default | example | meaning |\n"
			  "|---|---|---|---|---|---|\n");
	for (const struct vpa_key *k = s->keys; k->name; k++) {
		struct vpa_buf t;
		vpa_buf_init(&t);
		vpa_buf_printf(out, "| `%s` | ", k->name);
		md_cell(out, type_text(k, &t));
		vpa_buf_printf(out, " | %s | ", k->required ? "yes" : "no");
		if (k->dflt) {
			vpa_buf_puts(out, "`");
			md_cell(out, k->dflt);
			vpa_buf_puts(out, "`");
		} else {
			vpa_buf_puts(out, "-");
		}
		vpa_buf_puts(out, " | ");
		if (k->example) {
			vpa_buf_puts(out, "`");
			md_cell(out, k->example);
			vpa_buf_puts(out, "`");
		}
		vpa_buf_puts(out, " | ");
		md_cell(out, k->doc ? k->doc : "");
		vpa_buf_puts(out, " |\n");
		vpa_buf_release(&t);
	}
}

int vpa_check_path_at(const struct vpa_kind_ctx *ctx, const char *p, struct vpa_mark m,
		      int want, struct vpa_err *err)
{
	if (!p)
		return 0;
	char *path = vpa_path_join(ctx->dir, p);
	struct vpa_loc loc = vpa_mark_loc(ctx->file, m);
	struct stat st;
	int rc = 0;
	if (stat(path, &st) != 0)
		rc = vpa_fail(err, VPA_EINPUT, &loc, "cannot open '%s': %s", p, strerror(errno));
	else if (want == VPA_PATH_DIR && !S_ISDIR(st.st_mode))
		rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' is not a folder", p);
	else if (want == VPA_PATH_FILE && S_ISDIR(st.st_mode))
		rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' is a folder, expected a file", p);
	free(path);
	return rc;
}

int vpa_check_path(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *v, int want,
		   struct vpa_err *err)
{
	return v ? vpa_check_path_at(ctx, v->str, vpa_node_mark(v), want, err) : 0;
}

/* ---- typed options (config.h "Typed options") ------------------------------ */

struct vpa_loc vpa_mark_loc(const char *file, struct vpa_mark m)
{
	struct vpa_loc l = {file, m.line, m.col};
	return l;
}

struct vpa_loc vpa_mark_key_loc(const char *file, struct vpa_mark m)
{
	struct vpa_loc l = {file, m.kline, m.kcol};
	return l;
}

struct vpa_mark vpa_node_mark(const struct vpa_ynode *n)
{
	struct vpa_mark m = {0, 0, 0, 0};
	if (n) {
		m.line = m.kline = n->line;
		m.col = m.kcol = n->col;
	}
	return m;
}

/* A default list written as YAML flow text ("[0, 4, 16]", "a,b"): its items. */
static void strs_default(struct vpa_strs *l, const char *text, struct vpa_mark m)
{
	size_t len = strlen(text);
	l->store = xstrdup(text);
	char *s = l->store;
	if (len && s[0] == '[' && s[len - 1] == ']') {
		s[len - 1] = '\0';
		s++;
	}
	size_t cap = 1;
	for (const char *p = s; *p; p++)
		cap += *p == ',';
	l->v = xcalloc(cap, sizeof(char *));
	l->marks = xcalloc(cap, sizeof(*l->marks));
	l->plain = xcalloc(cap, 1);
	for (char *tok = s; tok;) {
		char *next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		while (*tok == ' ')
			tok++;
		char *e = tok + strlen(tok);
		while (e > tok && e[-1] == ' ')
			*--e = '\0';
		if (*tok) {
			l->v[l->n] = tok;
			l->plain[l->n] = 1;
			l->marks[l->n++] = m;
		}
		tok = next;
	}
}

static void strs_fill(struct vpa_strs *l, const struct vpa_key *k, const struct vpa_ynode *v)
{
	memset(l, 0, sizeof(*l));
	if (!v || vpa_ynode_is_null(v)) {
		if (k->dflt)
			strs_default(l, k->dflt, vpa_node_mark(NULL));
		return;
	}
	l->given = 1;
	l->seq = v->type == VPA_YSEQ;
	size_t n = v->type == VPA_YSEQ ? v->n : 1;
	l->v = xcalloc(n ? n : 1, sizeof(char *));
	l->marks = xcalloc(n ? n : 1, sizeof(*l->marks));
	l->plain = xcalloc(n ? n : 1, 1);
	for (size_t i = 0; i < n; i++) {
		const struct vpa_ynode *it = v->type == VPA_YSEQ ? v->items[i] : v;
		if (it->type != VPA_YSCALAR)
			VPA_BUG("an item of '%s' is not a scalar after validation", k->name);
		l->v[i] = it->str;
		l->plain[i] = (unsigned char)(it->plain != 0);
		l->marks[i] = vpa_node_mark(it);
	}
	l->n = n;
}

static void strs_release(struct vpa_strs *l)
{
	free(l->v);
	free(l->marks);
	free(l->plain);
	free(l->store);
	memset(l, 0, sizeof(*l));
}

void vpa_opts_fill(const struct vpa_schema *s, const struct vpa_ynode *map, void *opts)
{
	memset(opts, 0, s->size);
	for (const struct vpa_key *k = s->keys; k->name; k++) {
		const struct vpa_ynode *v = map ? vpa_ymap_get(map, k->name) : NULL;
		if (k->mark_at) {
			struct vpa_mark m = vpa_node_mark(v);
			const struct vpa_ynode *kn = v ? vpa_ymap_key(map, k->name) : NULL;
			if (kn) {
				m.kline = kn->line;
				m.kcol = kn->col;
			}
			*(struct vpa_mark *)((char *)opts + k->mark_at - 1) = m;
		}
		if (!k->at)
			continue;
		if (k->at - 1 >= s->size)
			VPA_BUG("key '%s' of '%s' is bound outside its struct", k->name, s->name);
		void *f = (char *)opts + k->at - 1;
		/* the scalar written, else the default (NULL: none) */
		const char *raw = v && v->type == VPA_YSCALAR ? v->str : k->dflt;
		switch (k->type) {
		case VPA_K_STR:
		case VPA_K_NAME:
		case VPA_K_ID:
		case VPA_K_ENUM:
		case VPA_K_PATH:
			*(const char **)f = raw;
			break;
		case VPA_K_INT:
			if (raw && parse_int(raw, (long long *)f))
				VPA_BUG("key '%s' is not an integer after validation", k->name);
			break;
		case VPA_K_NUM:
			if (raw && parse_num(raw, (double *)f))
				VPA_BUG("key '%s' is not a number after validation", k->name);
			break;
		case VPA_K_BOOL:
			if (raw && parse_bool(raw, (int *)f))
				VPA_BUG("key '%s' is not a boolean after validation", k->name);
			break;
		case VPA_K_ENUMLIST:
		case VPA_K_LIST:
		case VPA_K_PATHS:
			strs_fill(f, k, v);
			break;
		case VPA_K_MAP:
			if (!k->sub || !k->sub->size)
				VPA_BUG("key '%s' is bound but its sub schema has no struct", k->name);
			vpa_opts_fill(k->sub, v && v->type == VPA_YMAP ? v : NULL, f);
			break;
		case VPA_K_MAPLIST: {
			struct vpa_optlist *l = f;
			if (!k->sub || !k->sub->size)
				VPA_BUG("key '%s' is bound but its sub schema has no struct", k->name);
			l->n = v && v->type == VPA_YSEQ ? v->n : 0;
			l->v = xcalloc(l->n ? l->n : 1, k->sub->size);
			l->marks = xcalloc(l->n ? l->n : 1, sizeof(*l->marks));
			for (size_t i = 0; i < l->n; i++) {
				vpa_opts_fill(k->sub, v->items[i], (char *)l->v + i * k->sub->size);
				l->marks[i] = vpa_node_mark(v->items[i]);
			}
			break;
		}
		case VPA_K_KINDLIST:
			VPA_BUG("key '%s': a list of kinds is not bound", k->name);
		}
	}
}

void vpa_opts_release(const struct vpa_schema *s, void *opts)
{
	if (!opts)
		return;
	for (const struct vpa_key *k = s->keys; k->name; k++) {
		if (!k->at)
			continue;
		void *f = (char *)opts + k->at - 1;
		switch (k->type) {
		case VPA_K_ENUMLIST:
		case VPA_K_LIST:
		case VPA_K_PATHS:
			strs_release(f);
			break;
		case VPA_K_MAP:
			vpa_opts_release(k->sub, f);
			break;
		case VPA_K_MAPLIST: {
			struct vpa_optlist *l = f;
			for (size_t i = 0; i < l->n; i++)
				vpa_opts_release(k->sub, (char *)l->v + i * k->sub->size);
			free(l->v);
			free(l->marks);
			l->v = NULL;
			l->marks = NULL;
			l->n = 0;
			break;
		}
		default:
			break;
		}
	}
}

const void *vpa_opts_field(const struct vpa_schema *s, const void *opts, const char *key)
{
	if (!s || !opts)
		return NULL;
	for (const struct vpa_key *k = s->keys; k->name; k++)
		if (!strcmp(k->name, key))
			return k->at ? (const char *)opts + k->at - 1 : NULL;
	return NULL;
}

void *vpa_opts_new(const struct vpa_schema *s, const struct vpa_ynode *map)
{
	if (!s || !s->size)
		return NULL;
	void *o = xmalloc(s->size);
	vpa_opts_fill(s, map, o);
	return o;
}

void vpa_opts_free(const struct vpa_schema *s, void *opts)
{
	if (!opts)
		return;
	vpa_opts_release(s, opts);
	free(opts);
}
