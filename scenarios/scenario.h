/*
 * scenarios/scenario.h - scenario files: the YAML node tree (load.c, the only
 * user of libyaml), key schemas kept as data (validate.c), the scenario
 * itself (validated completely before any work starts) and the run pipeline
 * (run.c) that turns a scenario into the results DOM of reports/README.md.
 *
 * The first two sections (node tree, schemas) are the vocabulary the target
 * and attack kinds speak: targets/ and attacks/ include this header for those
 * types and their getters only (they never call the loader or the pipeline).
 *
 * Every node keeps its mark (1-based line and column), so that any failure,
 * even at run time, blames the right line: `FILE:LINE:COL: message`.
 */
#ifndef VPA_SCENARIO_H
#define VPA_SCENARIO_H

#include "core/base.h"
#include "core/json.h"

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
	VPA_K_PATHS,    /* a VPA_K_PATH, or a non-empty sequence of them (vpa_cfg_paths) */
};

enum {
	VPA_KF_OPEN_LO = 1,  /* x > lo instead of x >= lo */
	VPA_KF_OPEN_HI = 2,  /* x < hi */
	VPA_KF_NONEMPTY = 4, /* sequences: at least one item */
	VPA_KF_WRITE = 8,    /* a path the run writes (checked by vpa_scenario_check_writes) */
};

struct vpa_schema;

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
};

struct vpa_schema {
	const char *name;          /* "scenario", "target scores", "gate" ... */
	const struct vpa_key *keys; /* terminated by {NULL} */
};

/* Where a schema check reports: the file of the nodes. */
struct vpa_kind_ctx {
	const char *file; /* scenario path as given, borrowed */
	const char *dir;  /* its folder ("." when none), borrowed */
};

/*
 * Check that the path in scalar node v (relative to the scenario's folder)
 * exists and is what the key wants: VPA_PATH_FILE, VPA_PATH_DIR or
 * VPA_PATH_ANY.  Errors (VPA_EINPUT) blame the node: "cannot open 'x': No such
 * file or directory", "'x' is a folder, expected a file", "'x' is not a
 * folder".  A NULL node is fine (an optional key left out).
 */
enum { VPA_PATH_FILE, VPA_PATH_DIR, VPA_PATH_ANY };
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
/* Find a key in merged schemas; NULL when absent. */
const struct vpa_key *vpa_schema_find(const struct vpa_schema *const *schemas, size_t n,
				      const char *name);
/*
 * Closest of `cands` to `word` by edit distance (optimal string alignment,
 * case-insensitive), or NULL when none is close enough (distance <= 1 for
 * words under 4 letters, <= 2 otherwise, and less than the word's length).
 */
const char *vpa_did_you_mean(const char *word, const char *const *cands, size_t n);

/*
 * Typed getters over a validated mapping: the value at key, or the schema's
 * default when the key is absent.  Asking for a key the schema lacks, or an
 * absent key without default, is a bug (VPA_BUG).
 */
double vpa_cfg_num(const struct vpa_ynode *map, const struct vpa_schema *s, const char *key);
long long vpa_cfg_int(const struct vpa_ynode *map, const struct vpa_schema *s, const char *key);
int vpa_cfg_bool(const struct vpa_ynode *map, const struct vpa_schema *s, const char *key);
/* Borrowed from the node or the schema; NULL when absent without default
 * (and for a VPA_K_PATHS key given as a sequence: use vpa_cfg_paths). */
const char *vpa_cfg_str(const struct vpa_ynode *map, const struct vpa_schema *s, const char *key);
/*
 * A VPA_K_PATHS key: its paths in order (one for a scalar), borrowed from the
 * nodes; *n gets their number; NULL and 0 when the key is absent (these keys
 * have no default).  Caller frees the array (not the strings).  *seq (may be
 * NULL) gets 1 when the value was written as a sequence.
 */
const char **vpa_cfg_paths(const struct vpa_ynode *map, const struct vpa_schema *s,
			   const char *key, size_t *n, int *seq);
/* A location for a node (file from ctx). */
struct vpa_loc vpa_node_loc(const char *file, const struct vpa_ynode *n);
/* Resolve a path relative to dir (absolute paths unchanged). Caller frees. */
char *vpa_path_join(const char *dir, const char *path);

/* The reference of every key of every schema, as Markdown (scenarios/README.md). */
void vpa_schema_reference(struct vpa_buf *out);

/* ---- the scenario ---------------------------------------------------------- */

struct vpa_target_kind;
struct vpa_attack_kind;

struct vpa_scn_target {
	const char *id;                    /* borrowed from root */
	const struct vpa_target_kind *kind;
	const struct vpa_ynode *cfg;       /* its mapping, borrowed from root */
};

struct vpa_scn_attack {
	const char *id;
	const struct vpa_attack_kind *kind;
	const struct vpa_ynode *cfg;
	size_t target;                     /* index into targets */
};

struct vpa_scenario {
	char *file;             /* path as given, owned */
	char *dir;              /* its folder, owned ("." when none) */
	struct vpa_ynode *root; /* owned */
	const char *name;       /* borrowed from root */
	const char *description; /* or NULL */
	uint64_t seed;
	const char *output;     /* `output:` or NULL (relative to the current directory) */
	unsigned formats;       /* VPA_REPORT_* bits (reports/report.h values) */
	double tolerance;       /* NAN when absent */
	int portable;           /* `portable: true`: cli/cmd_run.c enters portable mode (core/cpu.h) */
	struct vpa_scn_target *targets; /* (n_targets), owned */
	size_t n_targets;
	struct vpa_scn_attack *attacks; /* (n_attacks), owned */
	size_t n_attacks;
	const struct vpa_ynode *gates;  /* sequence or NULL */
	/* sweep: param split as "targets"|"attacks", index, key path */
	int has_sweep;
	int sweep_is_attack;    /* 0: targets.ID.key, 1: attacks.ID.key */
	size_t sweep_index;     /* into targets or attacks */
	const char *sweep_param; /* the whole param text, borrowed */
	const char *sweep_path;  /* the key path inside the item, borrowed (points into param) */
	const struct vpa_ynode *sweep_values; /* sequence of scalars */
	int sweep_numeric;      /* 1: values are numbers; 0: categorical (choices, names, flags) */
	const struct vpa_key *sweep_key; /* the swept key (static schema data) */
	/* every value of a VPA_KF_WRITE key (sweep values included) */
	struct vpa_scn_write {
		const char *key;              /* the key's name, static */
		const struct vpa_ynode *node; /* its scalar, borrowed from root */
	} *writes;                    /* (n_writes), owned */
	size_t n_writes;
};

/*
 * A scenario is code: its `output:`, `dump_*` and `pseudo_out` keys (every
 * key flagged VPA_KF_WRITE) could write anywhere its user can.  Checks that
 * every such path lies inside the output folder (outdir, the `-o` folder;
 * NULL: the scenario's `output:`, else out/NAME), and that `output:` itself
 * (when -o does not override it) is a folder below the current folder.  Paths are compared
 * as text after making them absolute against the current folder and removing
 * "." and ".." (symbolic links are not followed).  Error (VPA_EINPUT, at the
 * value): "x.yaml:12:18: 'dump_models: /tmp/m' is outside the output folder
 * 'out/x': a scenario writes only there unless you run it with
 * --allow-writes-outside".
 */
int vpa_scenario_check_writes(const struct vpa_scenario *s, const char *outdir,
			      struct vpa_err *err);

/* Same flags as reports/report.h (kept equal; checked in the unit test). */
enum {
	VPA_SCN_JSON = 1,
	VPA_SCN_HTML = 2,
	VPA_SCN_PDF = 4,
	VPA_SCN_JUNIT = 8,
	VPA_SCN_VPC = 16,
};

/*
 * Read, parse and validate a scenario file completely: schema of every
 * mapping, ids, kinds, attack->target links, import files (relative to the
 * scenario's folder), gates (attack, sub, metric, layer), sweep (param and
 * each value, with the kind's checks re-run on each value).
 * *out: caller frees with vpa_scenario_free.
 */
int vpa_scenario_load(const char *path, struct vpa_scenario **out /* OUT */,
		      struct vpa_err *err);
/* The same on a buffer (fuzz entry point); dir resolves relative paths. */
int vpa_scenario_parse(const char *name, const char *dir, const char *buf, size_t len,
		       struct vpa_scenario **out /* OUT */, struct vpa_err *err);
void vpa_scenario_free(struct vpa_scenario *s);

/*
 * The config of the swept item (cfg: its target or attack mapping) with the
 * sweep's key path set to the value node v (keeps v's mark).  Caller frees
 * with vpa_ynode_free.
 */
struct vpa_ynode *vpa_scenario_swept_cfg(const struct vpa_scenario *s,
					 const struct vpa_ynode *cfg, const struct vpa_ynode *v);

/* The scenario as JSON, scalars typed by the schema.  Caller frees. */
struct vpa_json *vpa_scenario_echo(const struct vpa_scenario *s);
/*
 * The gates as the JSON array vpa_gates_evaluate takes:
 * [{"attack","metric","min","max","layer",["sweep"],["subs"],["exclude"],["on"],
 *   ["allow_unreliable"],"file","line","col"}].  Caller frees.
 */
struct vpa_json *vpa_scenario_gates(const struct vpa_scenario *s);

/* The scenario's `tolerances:` as {"eer": 0.02, ...}, or NULL when absent.  Caller frees. */
struct vpa_json *vpa_scenario_tolerances(const struct vpa_scenario *s);
/* The i-th metric name `tolerances:` accepts (i from 0), NULL past the end. */
const char *vpa_scenario_tolerance_key(size_t i);

/*
 * After an error whose message starts with "FILE:LINE[:COL]: ", write the
 * offending line of FILE and a caret under COL into out (like a compiler):
 *     12 |     omgea: 2
 *        |     ^
 * Writes nothing when the message has no location or the file is unreadable.
 */
void vpa_error_context(const char *msg, struct vpa_buf *out);

/* ---- the run pipeline (run.c) ---------------------------------------------- */

struct vpa_run_opts {
	uint64_t seed;   /* used when seed_set, else the scenario's */
	int seed_set;
	int threads;     /* >= 1 */
	int no_plots;    /* figures are still computed and stored */
};

/*
 * Build the targets, run the attacks (once per sweep value, rebuilding only
 * what the swept key touches) and return the results DOM (reports/README.md)
 * with "gates": [] and "status": "pass" (the caller evaluates the gates and
 * writes the report).  Nothing is written to disk.  *results: caller frees.
 */
int vpa_scenario_run(const struct vpa_scenario *s, const struct vpa_run_opts *o,
		     struct vpa_json **results /* OUT */, struct vpa_err *err);

#endif
