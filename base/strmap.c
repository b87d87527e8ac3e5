/*
 * base/strmap.c - the string map: open addressing, string keys borrowed,
 * uint32 values (contract in base/strmap.h).  The one hash table of the
 * program (moved here from formats/embset.c so that base/ needs nothing above it).
 */
#include "base/strmap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
	uint64_t h = vpa_fnv1a(s);
	return h ^ (h >> 29);
}

void vpa_strmap_init(struct vpa_strmap *m)
{
	memset(m, 0, sizeof(*m));
}

void vpa_strmap_release(struct vpa_strmap *m)
{
	free(m->keys);
	free(m->vals);
	vpa_strmap_init(m);
}

int vpa_strmap_get(const struct vpa_strmap *m, const char *key, uint32_t *val)
{
	if (m->cap == 0)
		return 0;
	size_t mask = m->cap - 1;
	for (size_t i = hash_str(key) & mask;; i = (i + 1) & mask) {
		if (!m->keys[i])
			return 0;
		if (!strcmp(m->keys[i], key)) {
			if (val)
				*val = m->vals[i];
			return 1;
		}
	}
}

static void strmap_grow(struct vpa_strmap *m)
{
	size_t ncap = m->cap ? 2 * m->cap : 64;
	const char **nk = xcalloc(ncap, sizeof(char *));
	uint32_t *nv = xmalloc(xmul(ncap, sizeof(uint32_t)));
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = hash_str(m->keys[i]) & (ncap - 1);
		while (nk[j])
			j = (j + 1) & (ncap - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
}

int vpa_strmap_put(struct vpa_strmap *m, const char *key, uint32_t val, uint32_t *old)
{
	if (2 * (m->n + 1) > m->cap)
		strmap_grow(m);
	size_t mask = m->cap - 1;
	size_t i = hash_str(key) & mask;
	for (; m->keys[i]; i = (i + 1) & mask) {
		if (!strcmp(m->keys[i], key)) {
			if (old)
				*old = m->vals[i];
			return 1;
		}
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

