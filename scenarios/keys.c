/*
 * scenarios/keys.c - the top-level keys of a scenario file (data): the
 * schema scenario.c checks the file with, writes.c walks for paths and
 * echo.c types the echo and the reference with.  Its `gates`, `tolerances`
 * and `sweep` keys point at the schemas of gates.c and sweep.c.
 */
#include "scenarios/scenario_int.h"

#include <math.h>

static const struct vpa_key top_keys[] = {
	{"name", VPA_K_NAME, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "vpc-b1",
	 "the scenario's name; the default output folder is `out/NAME/` (so `.` and `..` are "
	 "refused)",
	 VPA_AT(struct vpa_scn_top_opts, name), VPA_MARK(struct vpa_scn_top_opts, name_at)},
	{"description", VPA_K_STR, 0, NULL, -INFINITY, VPA_DESCRIPTION_MAX, 0, NULL, NULL,
	 "\"B1 anonymiser, 3 attackers\"", "free text shown at the top of the report",
	 VPA_AT(struct vpa_scn_top_opts, description)},
	{"seed", VPA_K_INT, 0, "1", 0, 9007199254740991.0, 0, NULL, NULL, "42",
	 "the seed every random stream is split from (`--seed` overrides)",
	 VPA_AT(struct vpa_scn_top_opts, seed)},
	{"output", VPA_K_STR, 0, NULL, -INFINITY, INFINITY, VPA_KF_WRITE, NULL, NULL, "out/b1",
	 "the output folder, relative to the CURRENT directory like `-o` (which overrides "
	 "it); default `out/NAME`; must be a folder below the current directory unless the run "
	 "has `--allow-writes-outside`",
	 VPA_AT(struct vpa_scn_top_opts, output)},
	{"report", VPA_K_ENUMLIST, 0, "[html, pdf, json, junit, vpc]", -INFINITY, INFINITY,
	 VPA_KF_NONEMPTY, "html|pdf|json|junit|vpc", NULL, "[html, json]",
	 "the report files to write; `vpc`: result_for_rank.txt and vpc2022_results.txt, the "
	 "VoicePrivacy text formats, when the run has a linkage attack on anonymised speech",
	 VPA_AT(struct vpa_scn_top_opts, report)},
	{"targets", VPA_K_KINDLIST, 1, NULL, -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[{id: vpc, kind: scores, sets: [...]}]", "the target systems (see Target kinds)"},
	{"attacks", VPA_K_KINDLIST, 1, NULL, -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, NULL,
	 "[{id: eval, kind: evaluate, target: vpc}]", "the attacks (see Attack kinds)"},
	{"gates", VPA_K_MAPLIST, 0, NULL, -INFINITY, INFINITY, 0, NULL, &vpa_scn_gate_schema,
	 "[{attack: eval.ignorant, metric: eer, min: 0.3}]",
	 "bounds checked after the run; a broken gate makes `run` and `gate` exit 3"},
	{"tolerance", VPA_K_NUM, 0, NULL, 0, INFINITY, 0, NULL, NULL, "0.02",
	 "for the baseline comparison (`run --baseline`, `gate --baseline`): the largest move "
	 "in the leaky direction that is not a regression, stated for fractions (EER, "
	 "linkability, minDCF, top-k); a metric of another unit gets it times the unit's factor "
	 "(bits x2, bits of exposure x10, log10 LR x10, ranks x100; reports/README.md, "
	 "\"Tolerances by unit\"); absent = 0.01",
	 VPA_AT(struct vpa_scn_top_opts, tolerance), VPA_MARK(struct vpa_scn_top_opts, tolerance_at)},
	{"tolerances", VPA_K_MAP, 0, NULL, -INFINITY, INFINITY, 0, NULL, &vpa_scn_tolerances_schema,
	 "{eer: 0.02, linkability: 0.05}",
	 "for the baseline comparison: a tolerance per metric (absolute, in the metric's own "
	 "unit, >= 0), overriding `tolerance` for that metric"},
	{"portable", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true",
	 "compute with one arithmetic on every x86-64 CPU with AVX2 and FMA, as `run --portable` "
	 "does: OpenBLAS's Haswell kernel, glibc's libm without its FMA variants, vpaudit's "
	 "generic paths; the same results.json on any such runner (see README, \"Reproducible "
	 "results\")",
	 VPA_AT(struct vpa_scn_top_opts, portable)},
	{"sweep", VPA_K_MAP, 0, NULL, -INFINITY, INFINITY, 0, NULL, &vpa_scn_sweep_schema,
	 "{param: attacks.eval.omega, values: [0.5, 1, 2]}",
	 "run once per value of one key and plot every metric against it"},
	{NULL},
};
const struct vpa_schema vpa_scn_top_schema = {"scenario", top_keys,
						    sizeof(struct vpa_scn_top_opts)};

