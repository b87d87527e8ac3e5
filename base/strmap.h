/*
 * base/strmap.h - the string map (one hash table for the whole program).
 */
#ifndef VPA_STRMAP_H
#define VPA_STRMAP_H

#include "base/base.h"

/*
 * Open-addressing hash map from NUL-terminated strings to uint32 values.
 * Keys are BORROWED: the caller keeps them alive (and unchanged) as long as
 * the map is used.
 */
struct vpa_strmap {
	size_t cap, n;     /* cap is 0 or a power of two */
	const char **keys; /* (cap), borrowed strings, NULL = empty slot; array owned */
	uint32_t *vals;    /* (cap), owned */
};
void vpa_strmap_init(struct vpa_strmap *m);
void vpa_strmap_release(struct vpa_strmap *m);
/* 1 and *val set when key is present, else 0 (val may be NULL). */
int vpa_strmap_get(const struct vpa_strmap *m, const char *key, uint32_t *val /* OUT */);
/*
 * Insert key -> val.  Returns 0 when the key was new; 1 when it was already
 * present (the map is not changed and *old, when not NULL, gets its value).
 */
int vpa_strmap_put(struct vpa_strmap *m, const char *key, uint32_t val, uint32_t *old /* OUT */);

#endif
