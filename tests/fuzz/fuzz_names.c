/*
 * tests/fuzz/fuzz_names.c - the `names` file of a target `lm`
 * (vpa_lm_parse_names, targets/lm_canary.c) on arbitrary bytes, then what
 * consumes the names: the gazetteer (every name must come back as a PERSON,
 * in any case) and the {name} slot of a canary template (every name an
 * alternative).  An error is one line naming names.txt; a name is one
 * non-empty word without blanks, upper case, a leading '#' or a reserved
 * word.  Replayed over tests/fuzz/corpus/names/ by `make test`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "targets/lm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every word gets an id (ids 0.. in order of first lookup, at most 4096; copies). */
struct ids {
	char *w[4096];
	uint32_t n;
};

static uint32_t lookup(void *ctx, const char *w)
{
	struct ids *v = ctx;
	for (uint32_t i = 0; i < v->n; i++)
		if (!strcmp(v->w[i], w))
			return i;
	if (v->n == 4096)
		return UINT32_MAX;
	v->w[v->n] = strdup(w); /* the template's words are freed when it is parsed */
	return v->n++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char **names = NULL;
	size_t n = 0;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_lm_parse_names("names.txt", (const char *)data, size, &names, &n, &err)) {
		if (strncmp(err.msg, "names.txt", 9) || strchr(err.msg, '\n') || names)
			abort();
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const char *w = names[i];
		if (!*w || *w == '#' || strpbrk(w, " \t\r\n\v\f") || !strcmp(w, "<unk>") ||
		    !strcmp(w, "<s>") || !strcmp(w, "</s>"))
			abort();
		for (const char *q = w; *q; q++)
			if (*q >= 'A' && *q <= 'Z')
				abort();
	}
	/* the gazetteer finds each name, whatever its case in the text */
	struct vpa_gazetteer *g = vpa_gazetteer_new(NULL, (const char *const *)names, n);
	for (size_t i = 0; i < n; i++) {
		char *up = strdup(names[i]);
		for (char *q = up; *q; q++)
			if (*q >= 'a' && *q <= 'z')
				*q = (char)(*q - 'a' + 'A');
		if (vpa_gazetteer_type(g, names[i], NULL) != VPA_ENT_PERSON &&
		    vpa_gazetteer_type(g, names[i], NULL) != VPA_ENT_NUMBER)
			abort();
		if (vpa_gazetteer_type(g, up, NULL) != vpa_gazetteer_type(g, names[i], NULL))
			abort();
		free(up);
	}
	vpa_gazetteer_free(g);
	/* the {name} slot: one alternative per distinct name (two at least) */
	static struct ids v;
	v.n = 0;
	struct vpa_lm_canary c;
	memset(&c, 0, sizeof(c));
	vpa_err_init(&err);
	int rc = vpa_lm_parse_template("x", "my name is {name}", lookup, &v,
				       (const char *const *)names, n, NULL, 0, &c, &err);
	if (rc == 0) {
		if (c.L != 4 || c.pos[3].n_alt < 2 || c.pos[3].n_alt > n)
			abort();
		vpa_lm_canary_release(&c);
	} else if (strncmp(err.msg, "canary 'x': ", 12) || strchr(err.msg, '\n')) {
		abort();
	}
	for (uint32_t i = 0; i < v.n; i++)
		free(v.w[i]);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return 0;
}
