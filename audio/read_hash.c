/*
 * audio/read_hash.c - audio files hashed while libsndfile reads them, for the
 * provenance of a run (base/inputs.h; audio/read_int.h).
 *
 * The file is opened through libsndfile's virtual I/O; the bytes libsndfile
 * reads go to a streamed SHA-256 in file order.  Bytes it skips (a segment's
 * seek, a chunk it does not need) are hashed when it skips past them and the
 * rest of the file when it is closed, so each byte is read from disk once
 * (bytes libsndfile reads twice, a header re-read, are hashed once) and the
 * hash is of the whole file whatever part the run needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/read_int.h"
#include "base/base.h"
#include "base/inputs.h"

/* libsndfile's virtual I/O over a file, hashing its bytes in order. */
struct vpa_hashio {
	FILE *f;
	char *path;
	sf_count_t len, pos; /* the file's size, libsndfile's position */
	sf_count_t done;     /* bytes [0, done) hashed */
	int bad;             /* a read failed: no note */
	struct vpa_sha256_ctx c;
};
static sf_count_t h_len(void *u)
{
	return ((struct vpa_hashio *)u)->len;
}
static sf_count_t h_seek(sf_count_t off, int whence, void *u)
{
	struct vpa_hashio *h = u;
	sf_count_t p = whence == SEEK_SET ? off : whence == SEEK_CUR ? h->pos + off : h->len + off;
	if (p < 0)
		return -1;
	h->pos = p;
	return p;
}
/* n bytes at offset at into dst; the count read. */
static sf_count_t h_raw(struct vpa_hashio *h, void *dst, sf_count_t at, sf_count_t n)
{
	if (at >= h->len || n <= 0)
		return 0;
	if (fseeko(h->f, (off_t)at, SEEK_SET))
		return 0;
	return (sf_count_t)fread(dst, 1, (size_t)n, h->f);
}
/* Hash [done, upto): bytes libsndfile skipped, or the rest at the close. */
static void h_catch_up(struct vpa_hashio *h, sf_count_t upto)
{
	unsigned char b[65536];
	if (upto > h->len)
		upto = h->len;
	while (!h->bad && h->done < upto) {
		sf_count_t k = upto - h->done < (sf_count_t)sizeof(b) ? upto - h->done : (sf_count_t)sizeof(b);
		sf_count_t got = h_raw(h, b, h->done, k);
		if (got <= 0) {
			h->bad = 1;
			break;
		}
		vpa_sha256_update(&h->c, b, (size_t)got);
		h->done += got;
	}
}
static sf_count_t h_read(void *dst, sf_count_t n, void *u)
{
	struct vpa_hashio *h = u;
	if (h->pos > h->done)
		h_catch_up(h, h->pos);
	sf_count_t got = h_raw(h, dst, h->pos, n);
	if (got > 0 && !h->bad && h->pos <= h->done && h->pos + got > h->done) {
		vpa_sha256_update(&h->c, (unsigned char *)dst + (h->done - h->pos),
				  (size_t)(h->pos + got - h->done));
		h->done = h->pos + got;
	}
	if (got > 0)
		h->pos += got;
	return got;
}
static sf_count_t h_write(const void *src, sf_count_t n, void *u)
{
	(void)src, (void)n, (void)u;
	return 0;
}
static sf_count_t h_tell(void *u)
{
	return ((struct vpa_hashio *)u)->pos;
}

void vpa_hashio_close(struct vpa_hashio *h)
{
	if (!h)
		return;
	h_catch_up(h, h->len);
	if (!h->bad && h->done == h->len) {
		unsigned char d[32];
		char hex[65];
		vpa_sha256_final(&h->c, d);
		vpa_sha256_hex_of(d, hex);
		vpa_input_note_hash(h->path, (size_t)h->len, hex);
	}
	fclose(h->f);
	free(h->path);
	free(h);
}

SNDFILE *vpa_hashio_open(const char *path, FILE *f, SF_INFO *info, struct vpa_hashio **out)
{
	static SF_VIRTUAL_IO io = {h_len, h_seek, h_read, h_write, h_tell};
	*out = NULL;
	if (fseeko(f, 0, SEEK_END) || ftello(f) < 0) { /* not seekable (a FIFO): plain reading */
		fclose(f);
		return sf_open(path, SFM_READ, info);
	}
	struct vpa_hashio *h = xcalloc(1, sizeof(*h));
	h->f = f;
	h->path = xstrdup(path);
	h->len = (sf_count_t)ftello(f);
	vpa_sha256_init(&h->c);
	SNDFILE *s = sf_open_virtual(&io, SFM_READ, info, h);
	if (!s) {
		fclose(h->f);
		free(h->path);
		free(h);
		return NULL;
	}
	*out = h;
	return s;
}
