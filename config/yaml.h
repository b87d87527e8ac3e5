/*
 * config/yaml.h - scenario files as read: the YAML node tree (config/yaml.c,
 * the only user of libyaml besides learn/nn_io.c) and the checks of a node
 * against the key schemas of config/schema.h (config/schema.c): types,
 * "did you mean", defaults, typed options filled once (the one way a
 * value leaves the node tree: there are no getters by key).  Used by scenarios/
 * only; targets/ and attacks/ see config/schema.h.  Knows none of them.
 *
 * Every node keeps its mark (1-based line and column), so that any failure,
 * even at run time, blames the right line: `FILE:LINE:COL: message`.
 */
#ifndef VPA_YAML_H
#define VPA_YAML_H

#include "base/base.h"
#include "base/json.h"
#include "config/schema.h"

/* ---- the YAML node tree -------------------------------------------------- */

enum vpa_ytype {
	VPA_YSCALAR,
	VPA_YSEQ,
	VPA_YMAP,
};

struct vpa_ynode {
	enum vpa_ytype type;
	char *str;                /* SCALAR: the text, owned (never NULL) */
	int plain;                /* SCALAR: 1 when unquoted (only plain scalars are numbers) */
	size_t n, cap;
	struct vpa_ynode **items; /* SEQ: items; MAP: values; (n), owned */
	struct vpa_ynode **keys;  /* MAP: key scalars, (n), owned */
	long line, col;           /* start of the node, 1-based */
};

/*
 * Parse one YAML document held in memory into a node tree.  name is used in
 * messages ("name:line:col: ...").  Accepted: block and flow style, comments,
 * anchors (ignored).  Rejected with the offending mark: libyaml syntax errors
 * (a tab in the indentation gets a hint), aliases ('*x': repeat the value
 * instead), duplicate mapping keys, non-scalar mapping keys, more than one
 * document, an empty stream, nesting deeper than 64.
 * *out: caller frees with vpa_ynode_free.
 */
int vpa_yaml_parse(const char *name, const char *buf, size_t len,
		   struct vpa_ynode **out /* OUT */, struct vpa_err *err);
void vpa_ynode_free(struct vpa_ynode *n);
struct vpa_ynode *vpa_ynode_clone(const struct vpa_ynode *n); /* caller frees */
/* Set key in a mapping to v (takes ownership of v; replaces an existing value). */
void vpa_ymap_set(struct vpa_ynode *map, const char *key, struct vpa_ynode *v);

/* Value at key in a mapping (borrowed), NULL when absent or not a mapping. */
const struct vpa_ynode *vpa_ymap_get(const struct vpa_ynode *map, const char *key);
/* Key node of key in a mapping (for its mark), NULL when absent. */
const struct vpa_ynode *vpa_ymap_key(const struct vpa_ynode *map, const char *key);
/* "a mapping", "a sequence", "a string" ... for messages. */
const char *vpa_ynode_what(const struct vpa_ynode *n);
/* 1 when n is a plain empty, ~ or null scalar. */
int vpa_ynode_is_null(const struct vpa_ynode *n);

/*
 * Fill opts (s->size bytes, zeroed here) from the validated mapping map
 * (NULL: every key absent, defaults only): every bound key of s.  Cannot
 * fail on a mapping vpa_schema_check passed (a mismatch is a VPA_BUG).
 * Strings are borrowed from map's nodes, which must outlive opts.
 * Release with vpa_opts_release (lists, list items).
 */
void vpa_opts_fill(const struct vpa_schema *s, const struct vpa_ynode *map, void *opts);
/* The options struct of a schema, allocated and filled; NULL for s->size 0.
   Free with vpa_opts_free. */
void *vpa_opts_new(const struct vpa_schema *s, const struct vpa_ynode *map);
/* The mark of a node. */
struct vpa_mark vpa_node_mark(const struct vpa_ynode *n);
/*
 * Check that the path in scalar node v (relative to the scenario's folder)
 * exists and is what the key wants: VPA_PATH_FILE, VPA_PATH_DIR or
 * VPA_PATH_ANY.  Errors (VPA_EINPUT) blame the node: "cannot open 'x': No such
 * file or directory", "'x' is a folder, expected a file", "'x' is not a
 * folder".  A NULL node is fine (an optional key left out).
 */
int vpa_check_path(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *v, int want,
		   struct vpa_err *err);
/*
 * Check a mapping against one or more schemas (their keys are merged: e.g.
 * the common target keys and a kind's keys).  what names the mapping in
 * messages ("target 'vpc'").  Errors (first one wins, VPA_EINPUT):
 *   x.yaml:4:3: unknown key 'omgea' in attack 'eval' (did you mean 'omega'?)
 *   x.yaml:4:10: 'omega' must be a number > 0, got '-1'
 *   x.yaml:3:3: attack 'eval' is missing required key 'target'
 * KINDLIST keys are type-checked as sequences of mappings only.
 */
int vpa_schema_check(const struct vpa_kind_ctx *ctx, const struct vpa_schema *const *schemas,
		     size_t n_schemas, const struct vpa_ynode *map, const char *what,
		     struct vpa_err *err);
/* Check one scalar against a key's type and range (sweep values use it). */
int vpa_key_check(const struct vpa_kind_ctx *ctx, const struct vpa_key *k,
		  const struct vpa_ynode *v, struct vpa_err *err);
/* A location for a node (file from ctx). */
struct vpa_loc vpa_node_loc(const char *file, const struct vpa_ynode *n);
/* A scalar as JSON typed by its key (numbers, booleans, strings): the
   scenario echo of results.json. */
struct vpa_json *vpa_scalar_json(const struct vpa_ynode *v, const struct vpa_key *k);
#endif
