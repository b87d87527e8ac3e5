/*
 * tests/fuzz/fuzz_scenario.c - the scenario loader and validator on arbitrary
 * bytes (relative paths resolve against scenarios/, so replays from the top
 * of the repository reach the shipped score files).  Properties: no crash, no
 * leak; an error is one non-empty line that blames "fuzz.yaml:LINE:COL: "; a
 * valid scenario echoes to JSON, lists its gates and applies every sweep value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vpa_err err;
	struct vpa_scenario *s = NULL;
	vpa_err_init(&err);
	if (vpa_scenario_parse("fuzz.yaml", "scenarios", (const char *)data, size, &s, &err)) {
		if (s || !err.msg[0] || strchr(err.msg, '\n') || strncmp(err.msg, "fuzz.yaml:", 10))
			abort();
		return 0;
	}
	struct vpa_json *e = vpa_scenario_echo(s);
	struct vpa_json *g = vpa_scenario_gates(s);
	if (!e || e->type != VPA_JSON_OBJ || !g || g->type != VPA_JSON_ARR)
		abort();
	if (s->has_sweep) {
		const struct vpa_ynode *cfg = s->sweep_is_attack ? s->attacks[s->sweep_index].cfg
								 : s->targets[s->sweep_index].cfg;
		for (size_t i = 0; i < s->sweep_values->n; i++)
			vpa_ynode_free(vpa_scenario_swept_cfg(s, cfg, s->sweep_values->items[i]));
	}
	vpa_json_free(e);
	vpa_json_free(g);
	vpa_scenario_free(s);
	return 0;
}
