/*
 * formats/trials_pack.c - a trial collection packed into bytes and read back
 * (for a sweep point's score sets sent between MPI ranks; base/dist.c moves
 * the bytes).  Moved from base/dist.c so that base/ knows no file format.
 */
#include "formats/io.h"
#include "base/dist.h"

#include <stdlib.h>
#include <string.h>

static void pack_u32s(struct vpa_buf *b, const uint32_t *x, size_t n)
{
	vpa_pack_u64(b, x != NULL);
	if (x && n)
		vpa_buf_add(b, x, xmul(n, sizeof(uint32_t)));
}

static int unpack_u32s(const unsigned char **p, const unsigned char *end, uint32_t **x, size_t n)
{
	uint64_t has;
	if (vpa_unpack_u64(p, end, &has))
		return -1;
	if (!has)
		return 0;
	*x = xmalloc(xmul(n ? n : 1, sizeof(uint32_t)));
	return vpa_unpack_bytes(p, end, *x, xmul(n, sizeof(uint32_t)));
}

static void pack_ids(struct vpa_buf *b, char **ids, size_t n)
{
	vpa_pack_u64(b, ids != NULL);
	for (size_t i = 0; ids && i < n; i++) {
		size_t l = ids[i] ? strlen(ids[i]) + 1 : 0;
		vpa_pack_u64(b, l);
		if (l)
			vpa_buf_add(b, ids[i], l);
	}
}

static int unpack_ids(const unsigned char **p, const unsigned char *end, char ***ids, size_t n)
{
	uint64_t has, l;
	if (vpa_unpack_u64(p, end, &has))
		return -1;
	if (!has)
		return n ? -1 : 0; /* ids without their list: vpa_trials_release walks them */
	*ids = xcalloc(n ? n : 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		if (vpa_unpack_u64(p, end, &l) || (uint64_t)(end - *p) < l ||
		    (l && (*p)[l - 1] != 0)) {
			for (size_t k = 0; k < i; k++)
				free((*ids)[k]);
			free(*ids);
			*ids = NULL;
			return -1;
		}
		if (l) {
			(*ids)[i] = xstrdup((const char *)*p);
			*p += l;
		}
	}
	return 0;
}

void vpa_pack_trials(struct vpa_buf *b, const struct vpa_trials *t)
{
	vpa_pack_u64(b, t->n_tar);
	vpa_pack_u64(b, t->n_non);
	vpa_pack_u64(b, t->n_ids_e);
	vpa_pack_u64(b, t->n_ids_t);
	vpa_pack_f64s(b, t->tar, t->n_tar);
	vpa_pack_f64s(b, t->non, t->n_non);
	pack_u32s(b, t->tar_e, t->n_tar);
	pack_u32s(b, t->tar_t, t->n_tar);
	pack_u32s(b, t->non_e, t->n_non);
	pack_u32s(b, t->non_t, t->n_non);
	pack_ids(b, t->ids_e, t->n_ids_e);
	pack_ids(b, t->ids_t, t->n_ids_t);
}

int vpa_unpack_trials(const unsigned char **p, const unsigned char *end, struct vpa_trials *t)
{
	uint64_t v[4];
	for (int k = 0; k < 4; k++)
		if (vpa_unpack_u64(p, end, &v[k]) || v[k] > (uint64_t)(end - *p))
			return -1; /* a count cannot exceed the bytes left */
	t->n_tar = v[0];
	t->n_non = v[1];
	/* n_ids_* are set with their arrays: vpa_trials_release walks them */
	t->tar = xmalloc(xmul(t->n_tar ? t->n_tar : 1, sizeof(double)));
	t->non = xmalloc(xmul(t->n_non ? t->n_non : 1, sizeof(double)));
	int rc = vpa_unpack_f64s(p, end, t->tar, t->n_tar) ||
		 vpa_unpack_f64s(p, end, t->non, t->n_non) ||
		 unpack_u32s(p, end, &t->tar_e, t->n_tar) ||
		 unpack_u32s(p, end, &t->tar_t, t->n_tar) ||
		 unpack_u32s(p, end, &t->non_e, t->n_non) ||
		 unpack_u32s(p, end, &t->non_t, t->n_non) ||
		 unpack_ids(p, end, &t->ids_e, v[2]) || (t->n_ids_e = v[2], 0) ||
		 unpack_ids(p, end, &t->ids_t, v[3]) || (t->n_ids_t = v[3], 0);
	if (rc) {
		vpa_trials_release(t);
		return -1;
	}
	return 0;
}

