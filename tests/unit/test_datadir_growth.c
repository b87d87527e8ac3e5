/*
 * tests/unit/test_datadir_growth.c - wav.scp and segments of many lines grow
 * their arrays geometrically (issue 26 item 8: one element at a time, a
 * 1M-line segments file cost a realloc of nine arrays per line).
 *
 * Time is no test on a loaded machine, so this counts calls: the binary
 * interposes realloc (forwarding to the next definition, libc's or the
 * sanitizer's) and the parse of N lines must make O(log N) of them, not
 * O(N).  Where the interposition does not take (valgrind replaces realloc
 * itself), the test says so with a '# skip' line and checks the result only.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "audio/audio.h"
#include "harness.h"

static size_t n_realloc;

void *realloc(void *p, size_t n)
{
	static void *(*next)(void *, size_t);
	if (!next)
		*(void **)&next = dlsym(RTLD_NEXT, "realloc");
	n_realloc++;
	return next(p, n);
}

enum { N = 100000 };

/* Reallocations made by parsing wav.scp (and segments when seg is set). */
static size_t parse_count(const struct vpa_buf *scp, const struct vpa_buf *seg, size_t *n_utt)
{
	struct vpa_datadir d;
	struct vpa_err err;
	vpa_datadir_init(&d);
	vpa_err_init(&err);
	size_t before = n_realloc;
	int rc = vpa_datadir_parse(&d, "wav.scp", scp->data, scp->len, seg ? "segments" : NULL,
				   seg ? seg->data : NULL, seg ? seg->len : 0, &err);
	size_t count = n_realloc - before;
	if (rc)
		printf("#   %s\n", err.msg);
	*n_utt = rc ? 0 : d.n_utt;
	vpa_datadir_release(&d);
	return count;
}

static void test_growth(void)
{
	struct vpa_buf scp, seg, one;
	size_t n_utt, c;
	vpa_buf_init(&scp), vpa_buf_init(&seg), vpa_buf_init(&one);
	vpa_buf_puts(&one, "rec0 a.wav\n");
	for (int i = 0; i < N; i++) {
		vpa_buf_printf(&scp, "rec%d r%d.wav\n", i, i);
		vpa_buf_printf(&seg, "u%07d rec0 %d.0 %d.5\n", i, i, i);
	}
	void *probe = realloc(NULL, 1); /* is the interposition in effect? */
	int live = n_realloc > 0;
	free(probe);
	c = parse_count(&scp, NULL, &n_utt);
	CHECK(n_utt == N);
	if (live) {
		printf("# wav.scp of %d lines: %zu reallocations\n", N, c);
		CHECK(c < N / 100);
	}
	c = parse_count(&one, &seg, &n_utt);
	CHECK(n_utt == N);
	if (live) {
		printf("# segments of %d lines: %zu reallocations\n", N, c);
		CHECK(c < N / 100);
	} else {
		printf("# skip: realloc is not interposed here (valgrind?): results checked only\n");
	}
	vpa_buf_release(&scp), vpa_buf_release(&seg), vpa_buf_release(&one);
}

int main(void)
{
	RUN(test_growth);
	return DONE();
}
