/*
 * targets/targets.h - target kinds: what a scenario's `targets:` entries can
 * be, and the built targets the attacks work on.
 *
 * A kind is one file (targets/<kind>.c) exporting one `struct
 * vpa_target_kind` and one line in the table of targets/registry.c.  Its keys
 * are data (a struct vpa_schema, see config/schema.h), so validation,
 * "did you mean", defaults and scenarios/README.md agree.
 *
 * Lifecycle: the scenario loader checks every entry with the schema (the
 * common keys `id` and `kind` plus the kind's keys), then calls validate()
 * (cross-key checks, files that must exist); the pipeline calls build() once
 * (or once per sweep value when a key of the target is swept) and free().
 */
#ifndef VPA_TARGETS_H
#define VPA_TARGETS_H

#include "base/base.h"
#include "base/json.h"
#include "formats/io.h"
#include "config/schema.h"

/* What the pipeline hands to kinds while it runs. */
struct vpa_run_ctx {
	const char *file;   /* the scenario path (for node locations), borrowed */
	const char *dir;    /* its folder: relative paths resolve against it */
	uint64_t seed;      /* the scenario seed (after --seed) */
	int threads;        /* >= 1: our own parallel loops use this many threads */
	struct vpa_json *warnings; /* array: vpa_ctx_warn appends here, borrowed */
	/* Score-set warnings waiting to be grouped per attack and condition
	 * (attacks/evaluate.c vpa_warn_group_*); NULL: each warning is given at
	 * once.  Owned by whoever set it (vpa_warn_groups_flush frees it). */
	struct vpa_warn_groups *warn_groups;
	/* The run's output folder (`vpaudit run -o`, else the scenario's `output:`,
	 * else out/NAME); NULL when nothing is to be written there (validate,
	 * tests).  Kinds that save what they trained (the anonymised_speech
	 * target's extractors, issue 31.9) write below it. */
	const char *out_dir;
};

/* A warning: appended to results "warnings" and printed on stderr. */
/* 1: vpa_ctx_warn records without printing (while a sweep point runs as a job
 * of base/dist.c on some rank; scenarios/run.c then prints its warnings in
 * order); 0: prints (the default).  Main thread only. */
void vpa_ctx_warn_mute(int on);
void vpa_ctx_warn(struct vpa_run_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A built target. */
struct vpa_target {
	const struct vpa_target_kind *kind;
	const char *id;         /* borrowed from the scenario */
	int simulated;          /* 1: made by a simulator (labelled in every report) */
	struct vpa_json *info;  /* kind-specific description for results, owned */
	void *data;             /* kind-specific, owned, released by kind->free */
	void *opts;             /* the options it was built with (kind->schema's struct),
				   owned; attacks may read them */
};

struct vpa_target_kind {
	const char *name;
	const struct vpa_schema *schema; /* its own keys (not id/kind) */
	const char *doc;                 /* a paragraph for the reference */
	/* The hooks receive the kind's options struct (schema's, filled once by
	 * validation: config/schema.h "Typed options"), never a YAML node. */
	/* Cross-key checks after the schema check (ctx->self: the entry); may be NULL. */
	int (*validate)(const struct vpa_kind_ctx *ctx, const void *opts, struct vpa_err *err);
	/* Build or import; fills out->data, out->info, out->simulated. */
	int (*build)(struct vpa_run_ctx *ctx, const void *opts, struct vpa_target *out,
		     struct vpa_err *err);
	void (*free)(struct vpa_target *t); /* releases data (not info) */
};

/* The table.  NULL when unknown. */
const struct vpa_target_kind *vpa_target_kind_find(const char *name);
size_t vpa_target_kinds(const struct vpa_target_kind *const **kinds /* OUT */);
/* Release a built target (kind->free, info); NULL-safe fields. */
void vpa_target_release(struct vpa_target *t);

/* A scenario's list l of Kaldi front-end options '--name=value' (an ONNX
 * extractor's `options:`, an audio Indicator set's `feature_options:`; l may
 * be NULL) applied to fo (targets/frontend.c).  `example` is shown in the
 * message for a malformed item; `reserved` (NULL-terminated, or NULL) names
 * keys of the extractor map that must not be given as options.  Errors
 * blame the offending item: "S.yaml:12:20: unknown option '--num-bins'". */
struct vpa_feat_opts;
int vpa_target_frontend_strs(const char *file, const struct vpa_strs *l, const char *example,
			     const char *const *reserved, struct vpa_feat_opts *fo,
			     struct vpa_err *err);

/* The common keys of every target: id, kind. */
extern const struct vpa_schema vpa_target_common_schema;

/* ---- kind `scores`: imported score sets ---------------------------------- */

struct vpa_score_set {
	char *name;              /* owned */
	struct vpa_trials trials; /* owned, file order */
};

struct vpa_scores_target {
	struct vpa_score_set *sets; /* (n_sets), owned */
	size_t n_sets;
};

/* Its options (config/schema.h "Typed options"; filled by validation). */
struct vpa_scores_set_opts {
	const char *name, *scores, *key;
	struct vpa_mark name_at, scores_at, key_at;
};

struct vpa_scores_opts {
	const char *source;
	struct vpa_optlist sets; /* of struct vpa_scores_set_opts */
};

extern const struct vpa_target_kind vpa_target_scores;

#endif
