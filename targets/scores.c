/*
 * targets/scores.c - target kind `scores`: score sets imported from files,
 * one per attacker or condition, in any format `vpaudit metrics` reads:
 * `score label`, `enroll test score label`, or Kaldi `enroll test score`
 * joined with a trial key `enroll test target|nontarget`.
 */
#include "targets/targets.h"
#include "core/embset.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct vpa_key set_keys[] = {
	{"name", VPA_K_NAME, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "ignorant",
	 "the attacker/condition; records and gates call it the sub (`eval.ignorant`)"},
	{"scores", VPA_K_PATH, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "data/ignorant.txt",
	 "`score label` or `enroll test score label` lines; with `key`, Kaldi "
	 "`enroll test score` lines"},
	{"key", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "data/trials",
	 "a Kaldi trial key `enroll test target|nontarget` joined with `scores` on the pair"},
	{NULL},
};
static const struct vpa_schema set_schema = {"score set", set_keys};

static const struct vpa_key keys[] = {
	{"source", VPA_K_ENUM, 0, "import", -INFINITY, INFINITY, 0, "import", NULL, "import",
	 "score sets can only be imported"},
	{"sets", VPA_K_MAPLIST, 1, NULL, -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, &set_schema,
	 "[{name: ignorant, scores: data/ignorant.txt}]",
	 "one score set per attacker or condition; names unique"},
	{NULL},
};
static const struct vpa_schema schema = {"target scores", keys};

static int file_ok(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *v,
		   struct vpa_err *err)
{
	char *path = vpa_path_join(ctx->dir, v->str);
	struct vpa_loc loc = vpa_node_loc(ctx->file, v);
	struct stat st;
	int rc = 0;
	if (stat(path, &st) != 0) {
		if (strcmp(path, v->str))
			rc = vpa_fail(err, VPA_EINPUT, &loc, "cannot open '%s' (looked for '%s'): %s",
				      v->str, path, strerror(errno));
		else
			rc = vpa_fail(err, VPA_EINPUT, &loc, "cannot open '%s': %s", v->str,
				      strerror(errno));
	}
	else if (S_ISDIR(st.st_mode))
		rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' is a folder, expected a score file",
			      v->str);
	free(path);
	return rc;
}

static int validate(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *cfg,
		    struct vpa_err *err)
{
	const struct vpa_ynode *sets = vpa_ymap_get(cfg, "sets");
	struct vpa_strmap seen; /* set name -> its index (keys borrowed from the YAML) */
	int rc = 0;
	vpa_strmap_init(&seen);
	for (size_t i = 0; i < sets->n && !rc; i++) {
		const struct vpa_ynode *name = vpa_ymap_get(sets->items[i], "name");
		uint32_t j;
		if (vpa_strmap_put(&seen, name->str, (uint32_t)i, &j)) {
			const struct vpa_ynode *o = vpa_ymap_get(sets->items[j], "name");
			struct vpa_loc loc = vpa_node_loc(ctx->file, name);
			rc = vpa_fail(err, VPA_EINPUT, &loc, "duplicate set name '%s' (first at line %ld)",
				      name->str, o->line);
			break;
		}
		rc = file_ok(ctx, vpa_ymap_get(sets->items[i], "scores"), err);
		const struct vpa_ynode *key = vpa_ymap_get(sets->items[i], "key");
		if (!rc && key)
			rc = file_ok(ctx, key, err);
	}
	vpa_strmap_release(&seen);
	return rc;
}

/*
 * The provenance a score file declares in its first line: a comment that
 * mentions "synthetic" (any case), e.g. the shipped scenarios/data files'
 * "# SYNTHETIC scores: ...".  Returns the comment without "# " (malloc'd) or
 * NULL.  A file that cannot be read here was already read by the parser.
 */
static char *synthetic_note(const char *path)
{
	FILE *f = fopen(path, "rb");
	char line[512];
	if (!f)
		return NULL;
	char *l = fgets(line, sizeof(line), f);
	fclose(f);
	if (!l || line[0] != '#')
		return NULL;
	line[strcspn(line, "\r\n")] = '\0';
	if (!strcasestr(line, "synthetic"))
		return NULL;
	const char *s = line + 1;
	while (*s == ' ')
		s++;
	return xstrdup(s);
}

static void scores_free(struct vpa_target *t)
{
	struct vpa_scores_target *st = t->data;
	if (!st)
		return;
	for (size_t i = 0; i < st->n_sets; i++) {
		free(st->sets[i].name);
		vpa_trials_release(&st->sets[i].trials);
	}
	free(st->sets);
	free(st);
	t->data = NULL;
}

static int build(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg, struct vpa_target *out,
		 struct vpa_err *err)
{
	const struct vpa_ynode *sets = vpa_ymap_get(cfg, "sets");
	struct vpa_scores_target *st = xcalloc(1, sizeof(*st));
	struct vpa_json *info = vpa_json_obj(), *arr = vpa_json_arr();
	int rc = 0;
	st->sets = xcalloc(sets->n, sizeof(*st->sets));
	out->data = st;
	out->simulated = 0;
	vpa_json_set(info, "sets", arr);
	out->info = info;
	for (size_t i = 0; i < sets->n; i++) {
		const struct vpa_ynode *s = sets->items[i];
		const char *name = vpa_cfg_str(s, &set_schema, "name");
		const char *scores = vpa_cfg_str(s, &set_schema, "scores");
		const char *key = vpa_cfg_str(s, &set_schema, "key");
		char *sp = vpa_path_join(ctx->dir, scores);
		char *kp = key ? vpa_path_join(ctx->dir, key) : NULL;
		struct vpa_score_set *set = &st->sets[st->n_sets++];
		set->name = xstrdup(name);
		vpa_trials_init(&set->trials);
		rc = kp ? vpa_read_scores_key(sp, kp, &set->trials, err)
			: vpa_read_scores(sp, &set->trials, err);
		if (!rc) {
			struct vpa_json *o = vpa_json_obj();
			vpa_json_set_str(o, "name", name);
			vpa_json_set_str(o, "scores", scores);
			vpa_json_set(o, "key", key ? vpa_json_str(key) : vpa_json_null());
			vpa_json_set_num(o, "n_target", (double)set->trials.n_tar);
			vpa_json_set_num(o, "n_nontarget", (double)set->trials.n_non);
			vpa_json_set(o, "ids", vpa_json_bool(set->trials.ids_e != NULL));
			/* synthetic data says so wherever its numbers are shown */
			char *note = synthetic_note(sp);
			if (!note && kp)
				note = synthetic_note(kp);
			vpa_json_set(o, "synthetic", vpa_json_bool(note != NULL));
			if (note)
				vpa_json_set_str(o, "provenance", note);
			free(note);
			vpa_json_push(arr, o);
		}
		free(sp);
		free(kp);
		if (rc)
			break;
	}
	return rc;
}

const struct vpa_target_kind vpa_target_scores = {
	.name = "scores",
	.schema = &schema,
	.doc = "Score sets imported from files (for example the VoicePrivacy evaluation "
	       "recipes' ASV scores), one per attacker or condition.  Scores are \"higher = "
	       "more likely the same speaker\".  Attack them with `evaluate`.",
	.validate = validate,
	.build = build,
	.free = scores_free,
};
