/*
 * config/yaml.c - YAML text -> node tree, with marks.  The only user of
 * libyaml.  libyaml marks are 0-based: every mark here is +1.
 *
 * The event API is used (not yaml_parser_load) so that aliases can be refused
 * before they are expanded (no "billion laughs"), and so that each node keeps
 * the mark of its first character.
 */
#include "config/yaml.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 64

static struct vpa_ynode *node_new(enum vpa_ytype type, long line, long col)
{
	struct vpa_ynode *n = xcalloc(1, sizeof(*n));
	n->type = type;
	n->line = line;
	n->col = col;
	return n;
}

void vpa_ynode_free(struct vpa_ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		vpa_ynode_free(n->items[i]);
		if (n->keys)
			vpa_ynode_free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free(n->str);
	free(n);
}

struct vpa_ynode *vpa_ynode_clone(const struct vpa_ynode *n)
{
	struct vpa_ynode *c = node_new(n->type, n->line, n->col);
	c->plain = n->plain;
	c->str = n->str ? xstrdup(n->str) : NULL;
	c->n = c->cap = n->n;
	if (n->n) {
		c->items = xmalloc(xmul(n->n, sizeof(*c->items)));
		if (n->type == VPA_YMAP)
			c->keys = xmalloc(xmul(n->n, sizeof(*c->keys)));
		for (size_t i = 0; i < n->n; i++) {
			c->items[i] = vpa_ynode_clone(n->items[i]);
			if (n->type == VPA_YMAP)
				c->keys[i] = vpa_ynode_clone(n->keys[i]);
		}
	}
	return c;
}

static void node_push(struct vpa_ynode *parent, struct vpa_ynode *key, struct vpa_ynode *v)
{
	if (parent->n == parent->cap) {
		parent->cap = parent->cap ? 2 * parent->cap : 4;
		parent->items = xrealloc(parent->items, xmul(parent->cap, sizeof(*parent->items)));
		if (parent->type == VPA_YMAP)
			parent->keys = xrealloc(parent->keys, xmul(parent->cap, sizeof(*parent->keys)));
	}
	if (parent->type == VPA_YMAP)
		parent->keys[parent->n] = key;
	parent->items[parent->n++] = v;
}

struct vpa_loc vpa_node_loc(const char *file, const struct vpa_ynode *n)
{
	struct vpa_loc loc = {file, n ? n->line : 0, n ? n->col : 0};
	return loc;
}

const struct vpa_ynode *vpa_ymap_get(const struct vpa_ynode *map, const char *key)
{
	if (!map || map->type != VPA_YMAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i]->str, key))
			return map->items[i];
	return NULL;
}

const struct vpa_ynode *vpa_ymap_key(const struct vpa_ynode *map, const char *key)
{
	if (!map || map->type != VPA_YMAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i]->str, key))
			return map->keys[i];
	return NULL;
}

int vpa_ynode_is_null(const struct vpa_ynode *n)
{
	if (!n || n->type != VPA_YSCALAR || !n->plain)
		return 0;
	const char *s = n->str;
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

const char *vpa_ynode_what(const struct vpa_ynode *n)
{
	if (!n)
		return "nothing";
	switch (n->type) {
	case VPA_YMAP: return "a mapping";
	case VPA_YSEQ: return "a sequence";
	default: return vpa_ynode_is_null(n) ? "an empty value" : "a scalar";
	}
}

/* 1-based line and column of a byte offset (reader errors carry only an offset). */
static void offset_mark(const char *buf, size_t len, size_t off, long *line, long *col)
{
	long l = 1, c = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

static int parser_error(const char *name, const char *buf, size_t len, yaml_parser_t *p,
			struct vpa_err *err)
{
	struct vpa_loc loc = {name, 1, 1};
	const char *problem = p->problem ? p->problem : "invalid YAML";
	if (p->error == YAML_READER_ERROR) {
		offset_mark(buf, len, p->problem_offset, &loc.line, &loc.col);
		return vpa_fail(err, VPA_EINPUT, &loc, "%s (the file must be UTF-8 text)", problem);
	}
	if (p->error == YAML_MEMORY_ERROR)
		return vpa_fail(err, VPA_ENOMEM, &loc, "out of memory while parsing YAML");
	loc.line = (long)p->problem_mark.line + 1;
	loc.col = (long)p->problem_mark.column + 1;
	size_t idx = p->problem_mark.index;
	if (idx < len && buf[idx] == '\t')
		return vpa_fail(err, VPA_EINPUT, &loc,
				"tab character: YAML indentation must use spaces");
	if (p->context)
		return vpa_fail(err, VPA_EINPUT, &loc, "%s %s", p->context, problem);
	return vpa_fail(err, VPA_EINPUT, &loc, "%s", problem);
}

static int keycmp(const void *a, const void *b)
{
	const struct vpa_ynode *x = *(struct vpa_ynode *const *)a;
	const struct vpa_ynode *y = *(struct vpa_ynode *const *)b;
	int c = strcmp(x->str, y->str);
	if (c)
		return c;
	return x->line != y->line ? (x->line < y->line ? -1 : 1)
				  : (x->col < y->col ? -1 : x->col > y->col);
}

/* Duplicate keys: sort a copy of the key list (n log n even for huge maps). */
static int check_duplicates(const char *name, const struct vpa_ynode *map, struct vpa_err *err)
{
	if (map->n < 2)
		return 0;
	struct vpa_ynode **k = xmalloc(xmul(map->n, sizeof(*k)));
	memcpy(k, map->keys, map->n * sizeof(*k));
	qsort(k, map->n, sizeof(*k), keycmp);
	int rc = 0;
	const struct vpa_ynode *dup = NULL, *first = NULL;
	for (size_t i = 1; i < map->n; i++)
		if (!strcmp(k[i]->str, k[i - 1]->str)) {
			/* report the earliest second occurrence in the file */
			if (!dup || k[i]->line < dup->line ||
			    (k[i]->line == dup->line && k[i]->col < dup->col)) {
				dup = k[i];
				first = k[i - 1];
			}
		}
	if (dup) {
		struct vpa_loc loc = vpa_node_loc(name, dup);
		rc = vpa_fail(err, VPA_EINPUT, &loc, "duplicate key '%s' (first at line %ld)",
			      dup->str, first->line);
	}
	free(k);
	return rc;
}

struct frame {
	struct vpa_ynode *node;
	struct vpa_ynode *pending_key; /* MAP: a key waiting for its value */
};

int vpa_yaml_parse(const char *name, const char *buf, size_t len, struct vpa_ynode **out,
		   struct vpa_err *err)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct frame stack[MAX_DEPTH + 1];
	size_t depth = 0;
	struct vpa_ynode *root = NULL;
	int rc = 0, docs = 0, done = 0;

	*out = NULL;
	if (!yaml_parser_initialize(&p))
		return vpa_fail(err, VPA_ENOMEM, NULL, "cannot initialise the YAML parser");
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	/* UTF-8 only; a UTF-8 byte order mark (Windows editors write one) is
	 * skipped by libyaml's own encoding detection, which forcing the encoding
	 * turns off ("did not find expected <document start>" before). */
	if (!(len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)))
		yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);

	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = parser_error(name, buf, len, &p, err);
			goto out;
		}
		struct vpa_loc loc = {name, (long)ev.start_mark.line + 1,
				      (long)ev.start_mark.column + 1};
		struct vpa_ynode *n = NULL;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "expected a single YAML document, found a second one");
				yaml_event_delete(&ev);
				goto out;
			}
			break;
		case YAML_ALIAS_EVENT:
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "aliases ('*%s') are not supported: repeat the value",
				      (const char *)ev.data.alias.anchor);
			yaml_event_delete(&ev);
			goto out;
		case YAML_SCALAR_EVENT:
			n = node_new(VPA_YSCALAR, loc.line, loc.col);
			n->str = xmalloc(ev.data.scalar.length + 1);
			memcpy(n->str, ev.data.scalar.value, ev.data.scalar.length);
			n->str[ev.data.scalar.length] = '\0';
			n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
				   !(ev.data.scalar.tag &&
				     !strcmp((const char *)ev.data.scalar.tag, YAML_STR_TAG));
			if (strlen(n->str) != ev.data.scalar.length) {
				vpa_ynode_free(n);
				rc = vpa_fail(err, VPA_EINPUT, &loc, "NUL character in a value");
				yaml_event_delete(&ev);
				goto out;
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
			n = node_new(VPA_YSEQ, loc.line, loc.col);
			break;
		case YAML_MAPPING_START_EVENT:
			n = node_new(VPA_YMAP, loc.line, loc.col);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth == 0)
				VPA_BUG("YAML end event without start");
			depth--;
			if (stack[depth].node->type == VPA_YMAP &&
			    (rc = check_duplicates(name, stack[depth].node, err))) {
				yaml_event_delete(&ev);
				goto out;
			}
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
		if (!n)
			continue;
		/* attach n */
		if (depth == 0) {
			root = n;
		} else {
			struct frame *f = &stack[depth - 1];
			if (f->node->type == VPA_YSEQ) {
				node_push(f->node, NULL, n);
			} else if (!f->pending_key) {
				if (n->type != VPA_YSCALAR) {
					rc = vpa_fail(err, VPA_EINPUT, &loc,
						      "expected a plain key, got %s",
						      vpa_ynode_what(n));
					vpa_ynode_free(n);
					goto out;
				}
				f->pending_key = n;
				continue;
			} else {
				node_push(f->node, f->pending_key, n);
				f->pending_key = NULL;
			}
		}
		if (n->type != VPA_YSCALAR) {
			if (depth == MAX_DEPTH) {
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "nesting deeper than %d levels", MAX_DEPTH);
				goto out;
			}
			stack[depth].node = n;
			stack[depth].pending_key = NULL;
			depth++;
		}
	}
	if (!root) {
		struct vpa_loc loc = {name, 1, 1};
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "empty scenario: expected a mapping with 'name', 'targets' and 'attacks'");
		goto out;
	}
	*out = root;
	root = NULL;
out:
	/* pending keys of unfinished mappings are not yet attached */
	if (rc)
		for (size_t i = 0; i < depth; i++)
			vpa_ynode_free(stack[i].pending_key);
	vpa_ynode_free(root);
	yaml_parser_delete(&p);
	return rc;
}

void vpa_ymap_set(struct vpa_ynode *map, const char *key, struct vpa_ynode *v)
{
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i]->str, key)) {
			vpa_ynode_free(map->items[i]);
			map->items[i] = v;
			return;
		}
	struct vpa_ynode *k = node_new(VPA_YSCALAR, v->line, v->col);
	k->str = xstrdup(key);
	k->plain = 1;
	node_push(map, k, v);
}
