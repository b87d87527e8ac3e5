/*
 * scenarios/scenario_int.h - what the files of a scenario's checks share
 * (scenario.c on top; sweep.c, gates.c and writes.c below it; kinds.c at the
 * bottom).  Not for use outside scenarios/.
 */
#ifndef VPA_SCENARIO_INT_H
#define VPA_SCENARIO_INT_H

#include "scenarios/scenario.h"

struct vpa_target_kind;
struct vpa_attack_kind;

/* The top-level keys a scenario keeps (typed options of vpa_scn_top_schema;
   targets, attacks, gates, tolerances and sweep are walked as nodes by the
   checks of their own files). */
struct vpa_scn_top_opts {
	const char *name, *description, *output;
	long long seed;
	struct vpa_strs report;
	double tolerance;
	int portable;
	struct vpa_mark name_at, tolerance_at;
};

/* The schemas of the top-level keys (data). */
extern const struct vpa_schema vpa_scn_top_schema;       /* keys.c */
extern const struct vpa_schema vpa_scn_gate_schema;      /* gates.c */
extern const struct vpa_schema vpa_scn_tolerances_schema; /* gates.c */
extern const struct vpa_schema vpa_scn_sweep_schema;     /* sweep.c */

/* ---- kinds.c ---- */
/* The `id` of a target/attack mapping, NULL when absent or not a scalar. */
const char *vpa_scn_id_of(const struct vpa_ynode *map);
/* Check `kind` of a list item; *kind_out gets its target or attack kind. */
int vpa_scn_check_kind(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *map,
		       int is_attack, const void **kind_out, struct vpa_err *err);
/* Item upto of list has the id of an earlier item: "duplicate WHAT id ...". */
int vpa_scn_dup_id(const struct vpa_kind_ctx *ctx, const char *what,
		   const struct vpa_ynode *list, size_t upto, struct vpa_err *err);
/* A kind's own checks on cfg, through the options its schema fills. */
int vpa_scn_target_validate(const struct vpa_kind_ctx *ctx, const struct vpa_target_kind *k,
			    const struct vpa_ynode *cfg, struct vpa_err *err);
int vpa_scn_attack_validate(const struct vpa_kind_ctx *ctx, const struct vpa_attack_kind *k,
			    const struct vpa_ynode *cfg, const struct vpa_target_kind *tk,
			    const struct vpa_ynode *tcfg, struct vpa_err *err);
/* The subs attack a will produce (names borrowed; caller frees the array). */
size_t vpa_scn_attack_subs(const struct vpa_scenario *s, const struct vpa_scn_attack *a,
			   const char ***names);
/* Index of a target / of one of the first n attacks by id; (size_t)-1 when absent. */
size_t vpa_scn_find_target(const struct vpa_scenario *s, const char *id);
size_t vpa_scn_find_attack(const struct vpa_scenario *s, const char *id, size_t n);
/* " (did you mean 'x'?)" or " (KNOWN: a, b)" appended to b. */
void vpa_scn_suggest(struct vpa_buf *b, const char *word, const char *const *names, size_t n,
		     const char *known);

/* ---- sweep.c, gates.c, writes.c: the checks after targets and attacks ---- */
int vpa_scn_check_sweep(struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
			struct vpa_err *err);
int vpa_scn_check_gates(struct vpa_scenario *s, const struct vpa_kind_ctx *ctx,
			struct vpa_err *err);
void vpa_scn_collect_writes(struct vpa_scenario *s);

#endif
