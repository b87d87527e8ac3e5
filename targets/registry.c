/*
 * targets/registry.c - the table of target kinds.  Adding a kind: one file
 * exporting `const struct vpa_target_kind vpa_target_X` (declared in
 * targets.h) and one line in `kinds` below.
 */
#include "targets/targets.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

extern const struct vpa_target_kind vpa_target_anonymised_speech; /* targets/anon.h */
extern const struct vpa_target_kind vpa_target_fl_acoustic_models; /* targets/fl_am.h */
extern const struct vpa_target_kind vpa_target_tagger; /* targets/tagger.h */
extern const struct vpa_target_kind vpa_target_fl_speaker; /* targets/fl_speaker.h */
extern const struct vpa_target_kind vpa_target_language_model; /* targets/lm.h */
static const struct vpa_target_kind *const kinds[] = {
	&vpa_target_scores,
	&vpa_target_anonymised_speech,
	&vpa_target_fl_speaker,
	&vpa_target_fl_acoustic_models, /* targets/fl_am.c */
	&vpa_target_tagger,
	&vpa_target_language_model, /* targets/lm.c */
};

static const struct vpa_key common_keys[] = {
	{"id", VPA_K_ID, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "vpc",
	 "unique among targets; attacks name it in `target:`"},
	{"kind", VPA_K_STR, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "scores",
	 "one of the target kinds below"},
	{NULL},
};
const struct vpa_schema vpa_target_common_schema = {"target", common_keys};

const struct vpa_target_kind *vpa_target_kind_find(const char *name)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i]->name, name))
			return kinds[i];
	return NULL;
}

size_t vpa_target_kinds(const struct vpa_target_kind *const **out)
{
	*out = kinds;
	return sizeof(kinds) / sizeof(kinds[0]);
}

void vpa_target_release(struct vpa_target *t)
{
	if (t->kind && t->kind->free)
		t->kind->free(t);
	vpa_json_free(t->info);
	if (t->kind)
		vpa_opts_free(t->kind->schema, t->opts);
	t->info = NULL;
	t->data = NULL;
	t->opts = NULL;
}

static int g_mute = 0;

void vpa_ctx_warn_mute(int on)
{
	g_mute = on;
}

void vpa_ctx_warn(struct vpa_run_ctx *ctx, const char *fmt, ...)
{
	char s[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	/* once per run: a sweep repeats the same attack on the same data */
	for (size_t i = 0; ctx && ctx->warnings && i < ctx->warnings->n; i++)
		if (!strcmp(ctx->warnings->items[i]->str, s))
			return;
	if (!g_mute)
		vpa_warn("%s", s);
	if (ctx && ctx->warnings)
		vpa_json_push(ctx->warnings, vpa_json_str(s));
}
