/*
 * scenarios/scenario.h - scenario files: the scenario itself (read with
 * config/'s node tree, checked with its schemas, validated completely before
 * any work starts) and the run pipeline (run.c) that turns a scenario into
 * the results DOM of reports/README.md.  This folder sits above targets/ and
 * attacks/: they never include this header.
 *
 * Every node keeps its mark (1-based line and column), so that any failure,
 * even at run time, blames the right line: `FILE:LINE:COL: message`.
 */
#ifndef VPA_SCENARIO_H
#define VPA_SCENARIO_H

#include "base/base.h"
#include "base/json.h"
#include "config/yaml.h"

/* The reference of every key of every schema, as Markdown (scenarios/README.md). */
void vpa_schema_reference(struct vpa_buf *out);

/* ---- the scenario ---------------------------------------------------------- */

struct vpa_target_kind;
struct vpa_attack_kind;

struct vpa_scn_target {
	const char *id;                    /* borrowed from root */
	const struct vpa_target_kind *kind;
	const struct vpa_ynode *cfg;       /* its mapping, borrowed from root */
	void *opts;                        /* kind->schema's struct filled from cfg, owned */
};

struct vpa_scn_attack {
	const char *id;
	const struct vpa_attack_kind *kind;
	const struct vpa_ynode *cfg;
	void *opts;                        /* kind->schema's struct filled from cfg, owned */
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
	int portable;           /* `portable: true`: cli/cmd_run.c enters portable mode (base/cpu.h) */
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
	const char *outdir; /* the output folder, for what targets save there (NULL: none) */
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
