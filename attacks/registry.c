/*
 * attacks/registry.c - the table of attack kinds.  Adding a kind: one file
 * exporting `const struct vpa_attack_kind vpa_attack_X` (declared in
 * attacks.h) and one line in `kinds` below.
 */
#include "attacks/attacks.h"

#include <math.h>
#include <string.h>

extern const struct vpa_attack_kind vpa_attack_linkage; /* attacks/linkage.c */
extern const struct vpa_attack_kind vpa_attack_identification; /* attacks/identify.c */
extern const struct vpa_attack_kind vpa_attack_slicing; /* attacks/slicing.c */
extern const struct vpa_attack_kind vpa_attack_a1_footprint, vpa_attack_a2_footprint;
extern const struct vpa_attack_kind vpa_attack_d_exposure; /* attacks/dexposure.c */
extern const struct vpa_attack_kind vpa_attack_fl_training, vpa_attack_update_linkage, vpa_attack_attribute_inference; /* attacks/update_attacks.c */
extern const struct vpa_attack_kind vpa_attack_exposure, vpa_attack_text_linkage; /* attacks/exposure.c, text_linkage.c */
static const struct vpa_attack_kind *const kinds[] = {
	&vpa_attack_evaluate,
	&vpa_attack_linkage,
	&vpa_attack_identification,
	&vpa_attack_slicing,
	&vpa_attack_a1_footprint, &vpa_attack_a2_footprint, /* attacks/a1.c, a2.c */
	&vpa_attack_d_exposure,
	&vpa_attack_fl_training, &vpa_attack_update_linkage, &vpa_attack_attribute_inference,
	&vpa_attack_exposure, &vpa_attack_text_linkage,
};

static const struct vpa_key common_keys[] = {
	{"id", VPA_K_ID, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "eval",
	 "unique among attacks; gates name it (`eval` or `eval.SUB`)"},
	{"kind", VPA_K_STR, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "evaluate",
	 "one of the attack kinds below"},
	{"target", VPA_K_ID, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "vpc",
	 "the id of the target to attack; its kind must be one the attack kind accepts"},
	{NULL},
};
const struct vpa_schema vpa_attack_common_schema = {"attack", common_keys};

const struct vpa_attack_kind *vpa_attack_kind_find(const char *name)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i]->name, name))
			return kinds[i];
	return NULL;
}

size_t vpa_attack_kinds(const struct vpa_attack_kind *const **out)
{
	*out = kinds;
	return sizeof(kinds) / sizeof(kinds[0]);
}

int vpa_attack_can_target(const struct vpa_attack_kind *k, const char *target_kind)
{
	for (const char *const *t = k->target_kinds; *t; t++)
		if (!strcmp(*t, target_kind))
			return 1;
	return 0;
}
