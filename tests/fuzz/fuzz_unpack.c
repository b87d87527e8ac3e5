/*
 * tests/fuzz/fuzz_unpack.c - vpa_unpack_trials (base/dist.c: the score sets
 * MPI ranks exchange) on arbitrary bytes: no crash, no leak, a refused input
 * leaves the set empty; an accepted one packs to at most the bytes it
 * consumed (ids are C strings: bytes after an inner NUL are dropped), and
 * that packing reads back and packs to the very same bytes.  Corpus:
 * tests/fuzz/corpus/unpack/ (written by tests/fuzz/corpus/unpack/gen.sh).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/dist.h"
#include "formats/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *buf = malloc(size ? size : 1);
	if (size)
		memcpy(buf, data, size);
	const unsigned char *p = buf, *end = buf + size;
	struct vpa_trials t, u;
	vpa_trials_init(&t);
	vpa_trials_init(&u);
	if (vpa_unpack_trials(&p, end, &t) == 0) {
		struct vpa_buf b, b2;
		vpa_buf_init(&b);
		vpa_buf_init(&b2);
		vpa_pack_trials(&b, &t);
		if (p > end || b.len > (size_t)(p - buf))
			abort();
		const unsigned char *q = (const unsigned char *)b.data;
		if (vpa_unpack_trials(&q, q + b.len, &u) != 0 || q != (const unsigned char *)b.data + b.len)
			abort(); /* what we pack we must read */
		vpa_pack_trials(&b2, &u);
		if (b2.len != b.len || memcmp(b.data, b2.data, b.len) != 0)
			abort();
		vpa_buf_release(&b);
		vpa_buf_release(&b2);
		vpa_trials_release(&t);
		vpa_trials_release(&u);
	} else if (t.tar || t.non || t.ids_e || t.ids_t || t.n_tar || t.n_ids_e || t.n_ids_t) {
		abort(); /* a refused input leaves the set empty */
	}
	free(buf);
	return 0;
}
