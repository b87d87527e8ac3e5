/*
 * config/schema.h - the vocabulary target and attack kinds speak: key
 * schemas kept as data (types, ranges, defaults, docs), each key bound to a
 * field of its kind's options struct, and the marks that say where a value
 * was written.  No YAML node appears here: the node tree and the checks that
 * read it are config/yaml.h's, used by scenarios/ only.
 */
#ifndef VPA_SCHEMA_H
#define VPA_SCHEMA_H

#include "base/base.h"

#include <stddef.h>

/* ---- key schemas (data) --------------------------------------------------- */

enum vpa_ktype {
	VPA_K_STR,      /* any non-null scalar */
	VPA_K_NAME,     /* [A-Za-z0-9._-]+ */
	VPA_K_ID,       /* [A-Za-z0-9_-]+ (no dots: "ID.SUB" stays unambiguous) */
	VPA_K_INT,      /* integer in [lo, hi] */
	VPA_K_NUM,      /* finite number in [lo, hi] (open ends by flags) */
	VPA_K_BOOL,     /* true | false */
	VPA_K_ENUM,     /* one of `choices` ("a|b|c") */
	VPA_K_PATH,     /* non-empty string: a file relative to the scenario's folder */
	VPA_K_ENUMLIST, /* sequence of `choices` */
	VPA_K_MAP,      /* mapping checked with `sub` */
	VPA_K_MAPLIST,  /* sequence of mappings, each checked with `sub` */
	VPA_K_LIST,     /* sequence of scalars (checked by the owner) */
	VPA_K_KINDLIST, /* sequence of mappings dispatched on their `kind` (targets, attacks) */
	VPA_K_PATHS,    /* a VPA_K_PATH, or a non-empty sequence of them (a struct vpa_strs) */
};

enum {
	VPA_KF_OPEN_LO = 1,  /* x > lo instead of x >= lo */
	VPA_KF_OPEN_HI = 2,  /* x < hi */
	VPA_KF_NONEMPTY = 4, /* sequences: at least one item */
	VPA_KF_WRITE = 8,    /* a path the run writes (checked by vpa_scenario_check_writes) */
};

struct vpa_schema;

/*
 * Typed options, parsed once (issue 27).  A key may be bound to a field of
 * its kind's options struct, as git's parse-options binds an option to a
 * variable: `VPA_AT(struct my_opts, omega)` after the key's doc.  Validation
 * fills the struct (vpa_opts_fill: the value written, else the key's
 * default, converted once), and builders and attacks read the struct, never
 * a YAML node.  The field's C type follows the key's type:
 *   STR NAME ID ENUM PATH  const char *     (borrowed; NULL when absent without default)
 *   INT                    long long
 *   NUM                    double
 *   BOOL                   int
 *   ENUMLIST LIST PATHS    struct vpa_strs  (items and their marks)
 *   MAP                    the sub schema's struct, inline (defaults when absent)
 *   MAPLIST                struct vpa_optlist (items of the sub schema's struct)
 * `VPA_MARK(struct my_opts, omega_at)` also binds a struct vpa_mark: where the
 * value was written, for errors found at run time (line 0: not written).
 */
struct vpa_mark {
	long line, col;   /* the value, 1-based; line 0: the key was not written */
	long kline, kcol; /* its key (for messages about the key itself) */
};

struct vpa_strs {
	const char **v;         /* (n), borrowed from the nodes or from `store` */
	struct vpa_mark *marks; /* (n); a default's items carry the key's mark */
	unsigned char *plain;   /* (n) 1: written unquoted (only plain scalars are numbers) */
	size_t n;
	int given;              /* 1 when the key was written (else the default, or none) */
	int seq;                /* PATHS: written as a sequence */
	char *store;            /* owned: the default's text, cut into items */
};

struct vpa_optlist {
	void *v;                /* (n) items of the sub schema's struct (its `size`), owned */
	struct vpa_mark *marks; /* (n) where each item (a mapping) starts, owned */
	size_t n;
};

#define VPA_AT(T, f) .at = offsetof(T, f) + 1
#define VPA_MARK(T, f) .mark_at = offsetof(T, f) + 1

struct vpa_key {
	const char *name;
	enum vpa_ktype type;
	int required;
	const char *dflt;    /* default as YAML text ("1", "0.01", "html,pdf"), NULL = none */
	double lo, hi;       /* INT/NUM range, -INFINITY/INFINITY when unbounded;
			      * STR: hi = the most characters (UTF-8 code points) */
	unsigned flags;
	const char *choices; /* ENUM/ENUMLIST: "a|b|c" */
	const struct vpa_schema *sub; /* MAP/MAPLIST */
	const char *example; /* a YAML example for the reference */
	const char *doc;     /* one or two sentences for the reference */
	size_t at;           /* VPA_AT: 1 + the offset of the field it fills; 0: not bound */
	size_t mark_at;      /* VPA_MARK: 1 + the offset of its struct vpa_mark; 0: none */
};

struct vpa_schema {
	const char *name;          /* "scenario", "target scores", "gate" ... */
	const struct vpa_key *keys; /* terminated by {NULL} */
	size_t size;               /* sizeof its options struct (0: no struct) */
};

/* Release what vpa_opts_fill (config/yaml.h) allocated in opts (lists, list items). */
void vpa_opts_release(const struct vpa_schema *s, void *opts);
/* vpa_opts_release, then free(opts). */
void vpa_opts_free(const struct vpa_schema *s, void *opts);
/* The field key is bound to in opts (filled by vpa_opts_fill for schema s),
   NULL when s has no such key or does not bind it: for code that reads one
   key of any kind by name (scenarios/: an attack's `ci`, a target's
   `source`).  The caller knows the key's type ("Typed options" above). */
const void *vpa_opts_field(const struct vpa_schema *s, const void *opts, const char *key);
/* A location from a mark (file borrowed): the value's, or its key's. */
struct vpa_loc vpa_mark_loc(const char *file, struct vpa_mark m);
struct vpa_loc vpa_mark_key_loc(const char *file, struct vpa_mark m);
/* The item i of a MAPLIST field (its sub schema's struct). */
#define VPA_OPTLIST_AT(T, l, i) ((const T *)(l).v + (i))


/* Where a schema check reports: the file of the nodes. */
struct vpa_kind_ctx {
	const char *file; /* scenario path as given, borrowed */
	const char *dir;  /* its folder ("." when none), borrowed */
	struct vpa_mark self; /* a kind's validate: where its own mapping starts
				 (the target or attack entry); else line 0 */
};

enum { VPA_PATH_FILE, VPA_PATH_DIR, VPA_PATH_ANY };
/* Check that a path written at mark m (relative to ctx->dir; NULL is fine:
   an optional key left out) exists and is what the key wants: VPA_PATH_FILE,
   VPA_PATH_DIR or VPA_PATH_ANY.  Errors (VPA_EINPUT) blame the mark: "cannot
   open 'x': No such file or directory", "'x' is a folder, expected a file",
   "'x' is not a folder". */
int vpa_check_path_at(const struct vpa_kind_ctx *ctx, const char *path, struct vpa_mark m,
		      int want, struct vpa_err *err);
/* Find a key in merged schemas; NULL when absent. */
const struct vpa_key *vpa_schema_find(const struct vpa_schema *const *schemas, size_t n,
				      const char *name);
/*
 * Closest of `cands` to `word` by edit distance (optimal string alignment,
 * case-insensitive), or NULL when none is close enough (distance <= 1 for
 * words under 4 letters, <= 2 otherwise, and less than the word's length).
 */
const char *vpa_did_you_mean(const char *word, const char *const *cands, size_t n);

/* Resolve a path relative to dir (absolute paths unchanged). Caller frees. */
char *vpa_path_join(const char *dir, const char *path);

/* One schema's keys as a Markdown table (scenarios/README.md's reference). */
void vpa_schema_table(struct vpa_buf *out, const struct vpa_schema *s);

#endif
