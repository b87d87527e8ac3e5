/*
 * tests/unit/test_opts.c - typed options (config/schema.h): a validated
 * mapping filled into a struct once, with the defaults of the table, the
 * marks of what was written, lists, nested maps and lists of maps; and the
 * check of a bound path by its mark.
 */
#include "harness.h"
#include "config/yaml.h"

#include <math.h>
#include <stdlib.h>

struct item_opts {
	const char *name;
	long long n;
	struct vpa_mark name_at, n_at;
};

struct sub_opts {
	double lr;
	int on;
	struct vpa_mark lr_at, on_at;
};

struct top_opts {
	const char *label, *path, *mode;
	long long count;
	double omega;
	int flag;
	struct vpa_strs layers, reps, files, kinds;
	struct sub_opts dp;
	struct vpa_optlist items;
	struct vpa_mark label_at, count_at, omega_at, layers_at, dp_at, items_at, path_at;
};

static const struct vpa_key item_keys[] = {
	{"name", VPA_K_NAME, 1, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "a", "its name",
	 VPA_AT(struct item_opts, name), VPA_MARK(struct item_opts, name_at)},
	{"n", VPA_K_INT, 0, "7", 0, 100, 0, NULL, NULL, "3", "a count",
	 VPA_AT(struct item_opts, n), VPA_MARK(struct item_opts, n_at)},
	{NULL},
};
static const struct vpa_schema item_schema = {"item", item_keys, sizeof(struct item_opts)};

static const struct vpa_key sub_keys[] = {
	{"lr", VPA_K_NUM, 0, "0.5", 0, INFINITY, 0, NULL, NULL, "0.1", "a rate",
	 VPA_AT(struct sub_opts, lr), VPA_MARK(struct sub_opts, lr_at)},
	{"on", VPA_K_BOOL, 0, "false", -INFINITY, INFINITY, 0, NULL, NULL, "true", "a flag",
	 VPA_AT(struct sub_opts, on), VPA_MARK(struct sub_opts, on_at)},
	{NULL},
};
static const struct vpa_schema sub_schema = {"sub", sub_keys, sizeof(struct sub_opts)};

static const struct vpa_key top_keys[] = {
	{"label", VPA_K_STR, 0, "none", -INFINITY, INFINITY, 0, NULL, NULL, "x", "a label",
	 VPA_AT(struct top_opts, label), VPA_MARK(struct top_opts, label_at)},
	{"path", VPA_K_PATH, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "f", "a path",
	 VPA_AT(struct top_opts, path), VPA_MARK(struct top_opts, path_at)},
	{"mode", VPA_K_ENUM, 0, "fast", -INFINITY, INFINITY, 0, "fast|slow", NULL, "slow", "a mode",
	 VPA_AT(struct top_opts, mode)},
	{"count", VPA_K_INT, 0, NULL, 1, 10, 0, NULL, NULL, "3", "no default",
	 VPA_AT(struct top_opts, count), VPA_MARK(struct top_opts, count_at)},
	{"omega", VPA_K_NUM, 0, "1.5", 0, INFINITY, VPA_KF_OPEN_LO, NULL, NULL, "2", "a number",
	 VPA_AT(struct top_opts, omega), VPA_MARK(struct top_opts, omega_at)},
	{"flag", VPA_K_BOOL, 0, "true", -INFINITY, INFINITY, 0, NULL, NULL, "false", "a flag",
	 VPA_AT(struct top_opts, flag)},
	{"layers", VPA_K_LIST, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "[1, 3]", "layers",
	 VPA_AT(struct top_opts, layers), VPA_MARK(struct top_opts, layers_at)},
	{"reps", VPA_K_LIST, 0, "[0, 4, 16]", -INFINITY, INFINITY, 0, NULL, NULL, "[1]", "reps",
	 VPA_AT(struct top_opts, reps)},
	{"files", VPA_K_PATHS, 0, NULL, -INFINITY, INFINITY, 0, NULL, NULL, "a", "paths",
	 VPA_AT(struct top_opts, files)},
	{"kinds", VPA_K_ENUMLIST, 0, "[a, b]", -INFINITY, INFINITY, 0, "a|b|c", NULL, "[c]", "kinds",
	 VPA_AT(struct top_opts, kinds)},
	{"dp", VPA_K_MAP, 0, NULL, -INFINITY, INFINITY, 0, NULL, &sub_schema, "{lr: 1}", "a map",
	 VPA_AT(struct top_opts, dp), VPA_MARK(struct top_opts, dp_at)},
	{"items", VPA_K_MAPLIST, 0, NULL, -INFINITY, INFINITY, 0, NULL, &item_schema, "[{name: a}]",
	 "a list of maps", VPA_AT(struct top_opts, items), VPA_MARK(struct top_opts, items_at)},
	{"unbound", VPA_K_INT, 0, "3", 0, 9, 0, NULL, NULL, "1", "not bound (scenarios/ reads it)"},
	{NULL},
};
static const struct vpa_schema top_schema = {"top", top_keys, sizeof(struct top_opts)};

/* Parse and check text; the struct filled from it (NULL on a check error). */
static struct top_opts *fill(const char *text, struct vpa_ynode **root)
{
	struct vpa_err err;
	struct vpa_kind_ctx ctx = {"t.yaml", "."};
	const struct vpa_schema *s[1] = {&top_schema};
	vpa_err_init(&err);
	*root = NULL;
	if (vpa_yaml_parse("t.yaml", text, strlen(text), root, &err) ||
	    vpa_schema_check(&ctx, s, 1, *root, "top", &err)) {
		printf("# %s\n", err.msg);
		return NULL;
	}
	return vpa_opts_new(&top_schema, *root);
}

static void test_defaults(void)
{
	struct vpa_ynode *root;
	struct top_opts *o = fill("label: x\n", &root);
	CHECK(o != NULL);
	if (!o)
		return;
	CHECK_STR(o->label, "x");
	CHECK(o->label_at.line == 1 && o->label_at.col == 8);
	CHECK(o->path == NULL && o->path_at.line == 0); /* absent, no default */
	CHECK_STR(o->mode, "fast");
	CHECK(o->count == 0 && o->count_at.line == 0);
	CHECK(o->omega == 1.5 && o->omega_at.line == 0);
	CHECK(o->flag == 1);
	CHECK(o->layers.n == 0 && !o->layers.given);
	/* a list default comes from the table's text, cut into items */
	CHECK(o->reps.n == 3 && !o->reps.given);
	if (o->reps.n == 3) {
		CHECK_STR(o->reps.v[0], "0");
		CHECK_STR(o->reps.v[2], "16");
	}
	CHECK(o->kinds.n == 2);
	if (o->kinds.n == 2)
		CHECK_STR(o->kinds.v[1], "b");
	/* an absent map: its own defaults, not written */
	CHECK(o->dp.lr == 0.5 && o->dp.on == 0 && o->dp_at.line == 0);
	CHECK(o->items.n == 0);
	vpa_opts_free(&top_schema, o);
	vpa_ynode_free(root);
}

static void test_written(void)
{
	struct vpa_ynode *root;
	struct top_opts *o = fill("count: 4\n"
				  "omega: 2e-1\n"
				  "flag: false\n"
				  "mode: slow\n"
				  "layers: [1, 3, 5]\n"
				  "reps: [\"2\", 8]\n"
				  "files: one.txt\n"
				  "kinds: [c]\n"
				  "dp: {on: true}\n"
				  "items:\n"
				  "  - {name: a}\n"
				  "  - {name: b, n: 9}\n",
				  &root);
	CHECK(o != NULL);
	if (!o)
		return;
	CHECK(o->count == 4 && o->count_at.line == 1 && o->count_at.col == 8);
	/* and its key's position, for messages about the key itself */
	CHECK(o->count_at.kline == 1 && o->count_at.kcol == 1);
	struct vpa_loc kl = vpa_mark_key_loc("t.yaml", o->omega_at);
	CHECK(kl.line == 2 && kl.col == 1);
	CHECK(o->omega == 0.2 && o->omega_at.line == 2);
	CHECK(o->flag == 0);
	CHECK_STR(o->mode, "slow");
	CHECK(o->layers.n == 3 && o->layers.given && o->layers.seq);
	if (o->layers.n == 3) {
		CHECK_STR(o->layers.v[2], "5");
		CHECK(o->layers.marks[2].line == 5 && o->layers.marks[2].col == 16);
		CHECK(o->layers.plain[2] == 1);
	}
	/* a quoted item is not plain (only plain scalars are numbers) */
	CHECK(o->reps.n == 2 && o->reps.plain[0] == 0 && o->reps.plain[1] == 1);
	/* a PATHS key written as one scalar */
	CHECK(o->files.n == 1 && !o->files.seq);
	if (o->files.n == 1)
		CHECK_STR(o->files.v[0], "one.txt");
	CHECK(o->kinds.n == 1 && o->kinds.given);
	/* a written map: its key written, the other key's default */
	CHECK(o->dp.on == 1 && o->dp.lr == 0.5 && o->dp_at.line == 9);
	CHECK(o->dp.on_at.line == 9 && o->dp.lr_at.line == 0);
	CHECK(o->dp.on_at.kline == 9 && o->dp.on_at.kcol == 6 && o->dp.on_at.col == 10);
	/* a mark is the value's (as vpa_node_loc of the value node): the list starts on line 11 */
	CHECK(o->items.n == 2 && o->items_at.line == 11);
	if (o->items.n == 2) {
		const struct item_opts *a = VPA_OPTLIST_AT(struct item_opts, o->items, 0);
		const struct item_opts *b = VPA_OPTLIST_AT(struct item_opts, o->items, 1);
		CHECK_STR(a->name, "a");
		CHECK(a->n == 7 && a->n_at.line == 0);
		CHECK_STR(b->name, "b");
		CHECK(b->n == 9 && b->n_at.line == 12 && b->name_at.line == 12);
	}
	vpa_opts_free(&top_schema, o);
	vpa_ynode_free(root);
}

/* The options and the scenario echo (results.json) read the same values,
   and a key is found by name through its binding. */
static void test_same_as_echo(void)
{
	struct vpa_ynode *root;
	struct top_opts *o = fill("omega: 0.1\ncount: 10\nflag: false\n", &root);
	CHECK(o != NULL);
	if (!o)
		return;
	const struct vpa_schema *s[1] = {&top_schema};
	struct vpa_json *j = vpa_scalar_json(vpa_ymap_get(root, "omega"),
					     vpa_schema_find(s, 1, "omega"));
	CHECK(j && j->type == VPA_JSON_NUM && j->num == o->omega);
	vpa_json_free(j);
	j = vpa_scalar_json(vpa_ymap_get(root, "flag"), vpa_schema_find(s, 1, "flag"));
	CHECK(j && j->type == VPA_JSON_BOOL && j->boolean == o->flag);
	vpa_json_free(j);
	CHECK(vpa_opts_field(&top_schema, o, "count") == &o->count);
	CHECK(vpa_opts_field(&top_schema, o, "unbound") == NULL);
	CHECK(vpa_opts_field(&top_schema, o, "nope") == NULL);
	vpa_opts_free(&top_schema, o);
	vpa_ynode_free(root);
}

static void test_path_at(void)
{
	struct vpa_err err;
	struct vpa_kind_ctx ctx = {"t.yaml", "."};
	struct vpa_mark m = {3, 9};
	vpa_err_init(&err);
	CHECK(vpa_check_path_at(&ctx, NULL, m, VPA_PATH_FILE, &err) == 0);
	CHECK(vpa_check_path_at(&ctx, "no-such-file.txt", m, VPA_PATH_FILE, &err) != 0);
	CHECK_STR(err.msg, "t.yaml:3:9: cannot open 'no-such-file.txt': No such file or directory");
	vpa_err_init(&err);
	CHECK(vpa_check_path_at(&ctx, ".", m, VPA_PATH_FILE, &err) != 0);
	CHECK_STR(err.msg, "t.yaml:3:9: '.' is a folder, expected a file");
	vpa_err_init(&err);
	CHECK(vpa_check_path_at(&ctx, ".", m, VPA_PATH_DIR, &err) == 0);
	struct vpa_loc l = vpa_mark_loc("f", m);
	CHECK(l.line == 3 && l.col == 9 && !strcmp(l.file, "f"));
}

int main(void)
{
	RUN(test_defaults);
	RUN(test_written);
	RUN(test_same_as_echo);
	RUN(test_path_at);
	return DONE();
}
