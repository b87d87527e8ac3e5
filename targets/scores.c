/*
 * targets/scores.c - target kind `scores`: score sets imported from files,
 * one per attacker or condition, in any format `vpaudit metrics` reads:
 * `score label`, `enroll test score label`, or Kaldi `enroll test score`
 * joined with a trial key `enroll test target|nontarget`.
 */
#include "targets/targets.h"
#include "formats/embset.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct vpa_key set_keys[] = {
	{"name", VPA_K_NAME, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "ignorant",
	 "the attacker/condition; records and gates call it the sub (`eval.ignorant`)",
	 VPA_AT(struct vpa_scores_set_opts, name), VPA_MARK(struct vpa_scores_set_opts, name_at)},
	{"scores", VPA_K_PATH, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "data/ignorant.txt",
	 "`score label` or `enroll test score label` lines; with `key`, Kaldi "
	 "`enroll test score` lines",
	 VPA_AT(struct vpa_scores_set_opts, scores), VPA_MARK(struct vpa_scores_set_opts, scores_at)},
	{"key", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "data/trials",
	 "a Kaldi trial key `enroll test target|nontarget` joined with `scores` on the pair",
	 VPA_AT(struct vpa_scores_set_opts, key), VPA_MARK(struct vpa_scores_set_opts, key_at)},
	{NULL},
};
static const struct vpa_schema set_schema = {"score set", set_keys, sizeof(struct vpa_scores_set_opts)};

static const struct vpa_key keys[] = {
	{"source", VPA_K_ENUM, 0, "import", -INFINITY, INFINITY, 0, "import", NULL, "import",
	 "score sets can only be imported", VPA_AT(struct vpa_scores_opts, source)},
	{"sets", VPA_K_MAPLIST, 1, NULL, -INFINITY, INFINITY, VPA_KF_NONEMPTY, NULL, &set_schema,
	 "[{name: ignorant, scores: data/ignorant.txt}]",
	 "one score set per attacker or condition; names unique", VPA_AT(struct vpa_scores_opts, sets)},
	{NULL},
};
static const struct vpa_schema schema = {"target scores", keys, sizeof(struct vpa_scores_opts)};

static int file_ok(const struct vpa_kind_ctx *ctx, const char *file, struct vpa_mark at,
		   struct vpa_err *err)
{
	char *path = vpa_path_join(ctx->dir, file);
	struct vpa_loc loc = vpa_mark_loc(ctx->file, at);
	struct stat st;
	int rc = 0;
	if (stat(path, &st) != 0) {
		if (strcmp(path, file))
			rc = vpa_fail(err, VPA_EINPUT, &loc, "cannot open '%s' (looked for '%s'): %s",
				      file, path, strerror(errno));
		else
			rc = vpa_fail(err, VPA_EINPUT, &loc, "cannot open '%s': %s", file,
				      strerror(errno));
	}
	else if (S_ISDIR(st.st_mode))
		rc = vpa_fail(err, VPA_EINPUT, &loc, "'%s' is a folder, expected a score file",
			      file);
	free(path);
	return rc;
}

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, struct vpa_err *err)
{
	const struct vpa_scores_opts *o = opts;
	struct vpa_strmap seen; /* set name -> its index (keys borrowed from the YAML) */
	int rc = 0;
	vpa_strmap_init(&seen);
	for (size_t i = 0; i < o->sets.n && !rc; i++) {
		const struct vpa_scores_set_opts *set = VPA_OPTLIST_AT(struct vpa_scores_set_opts, o->sets, i);
		uint32_t j;
		if (vpa_strmap_put(&seen, set->name, (uint32_t)i, &j)) {
			const struct vpa_scores_set_opts *first = VPA_OPTLIST_AT(struct vpa_scores_set_opts, o->sets, j);
			struct vpa_loc loc = vpa_mark_loc(ctx->file, set->name_at);
			rc = vpa_fail(err, VPA_EINPUT, &loc, "duplicate set name '%s' (first at line %ld)",
				      set->name, first->name_at.line);
			break;
		}
		rc = file_ok(ctx, set->scores, set->scores_at, err);
		if (!rc && set->key)
			rc = file_ok(ctx, set->key, set->key_at, err);
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

static int build(struct vpa_run_ctx *ctx, const void *opts, struct vpa_target *out,
		 struct vpa_err *err)
{
	const struct vpa_scores_opts *o = opts;
	const struct vpa_optlist *sets = &o->sets;
	struct vpa_scores_target *st = xcalloc(1, sizeof(*st));
	struct vpa_json *info = vpa_json_obj(), *arr = vpa_json_arr();
	int rc = 0;
	st->sets = xcalloc(sets->n, sizeof(*st->sets));
	out->data = st;
	out->simulated = 0;
	vpa_json_set(info, "sets", arr);
	out->info = info;
	for (size_t i = 0; i < sets->n; i++) {
		const struct vpa_scores_set_opts *s = VPA_OPTLIST_AT(struct vpa_scores_set_opts, *sets, i);
		const char *name = s->name, *scores = s->scores, *key = s->key;
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
