/*
 * tests/fuzz/fuzz_canary.c - canary templates (`canaries: [{template: ...}]`)
 * through vpa_lm_parse_template on arbitrary text (up to its first NUL),
 * twice: against a vocabulary that knows every word (what validation uses)
 * and against a small one (most words unknown).  On error the message is one
 * line naming the canary; on success every position has at least one
 * alternative, every id is one the lookup gave, and the secret space is the
 * product of the alternatives.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "targets/lm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t every_word(void *ctx, const char *w)
{
	(void)w;
	uint32_t *next = ctx;
	return *next < 1000000 ? (*next)++ : 1000000;
}

static const char *const small[] = {"my", "pin", "number", "is", "0", "1", "2", "3", "4", "5",
				    "6", "7", "8", "9", "a", "b", "anna", "bob", "the"};
#define N_SMALL (sizeof(small) / sizeof(small[0]))

static uint32_t small_vocab(void *ctx, const char *w)
{
	(void)ctx;
	for (uint32_t i = 0; i < N_SMALL; i++)
		if (!strcmp(small[i], w))
			return i;
	return UINT32_MAX;
}

static void check(const char *tmpl, int all)
{
	uint32_t next = 100, ids[3] = {0, 1, 2};
	const char *names[2] = {"anna", "bob"};
	struct vpa_lm_canary c;
	struct vpa_err err;
	vpa_err_init(&err);
	memset(&c, 0, sizeof(c));
	int rc = vpa_lm_parse_template("x", tmpl, all ? every_word : small_vocab, &next, names, 2,
				       ids, 3, &c, &err);
	if (rc) {
		if (strncmp(err.msg, "canary 'x': ", 12) || strchr(err.msg, '\n'))
			abort();
		return;
	}
	double space = 1;
	for (size_t i = 0; i < c.L; i++) {
		if (c.pos[i].n_alt == 0)
			abort();
		for (size_t k = 0; k < c.pos[i].n_alt; k++) {
			uint32_t id = c.pos[i].alt[k];
			if (all ? id >= next || (id > 2 && id < 100) : id >= N_SMALL)
				abort();
		}
		space *= (double)c.pos[i].n_alt;
	}
	if (!(fabs(c.space - space) <= 1e-9 * space))
		abort();
	vpa_lm_canary_release(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *t = malloc(size + 1);
	memcpy(t, data, size);
	t[size] = '\0';
	check(t, 1);
	check(t, 0);
	free(t);
	return 0;
}
