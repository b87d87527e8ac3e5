/*
 * metrics/sort.c - in-place radix sort of scores on their IEEE-754 bit pattern.
 *
 * Why radix: the biggest score sets (all-vs-all trials of a large population)
 * hold ~10^8 scores, and 2 GiB must hold them and everything else, so a second
 * 925 MB buffer is not affordable.  An MSD radix sort with in-place
 * permutation (American flag sort, McIlroy, Bostic & McIlroy 1993) sorts in
 * O(n) passes per byte with no temporary beyond a 256-entry count table per
 * recursion level, and buckets of at most INS_MAX keys finish with an
 * insertion sort.
 *
 * Key transform: the bit pattern of a non-negative double, read as an
 * unsigned integer, grows with the value; for a negative double it shrinks.
 * Flipping every bit of a negative and only the sign bit of a non-negative
 * gives a key whose unsigned order is the float order (-inf < ... < -0 < +0
 * < ... < +inf).  -0.0 is mapped to +0.0 first so that the two are one tie.
 * The keys are written over the doubles in place (through a may_alias type,
 * so the aliasing is defined for GCC/Clang) and mapped back at the end.
 */
#include "metrics.h"

#include <stdlib.h>
#include <string.h>

typedef uint64_t __attribute__((may_alias)) u64a;

#define SIGN_BIT 0x8000000000000000ull
#define INS_MAX 48
/* below this, the MSD sort's buckets fit in cache and it is as fast */
#define LSD_MIN (1u << 16)

static inline uint64_t to_key(uint64_t u)
{
	if (u == SIGN_BIT) /* -0.0 -> +0.0 */
		u = 0;
	return (u & SIGN_BIT) ? ~u : (u | SIGN_BIT);
}

static inline uint64_t from_key(uint64_t k)
{
	return (k & SIGN_BIT) ? (k & ~SIGN_BIT) : ~k;
}

static void insertion_sort(u64a *a, uint32_t *p, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t v = a[i];
		size_t j = i;
		if (p) {
			uint32_t pv = p[i];
			while (j > 0 && a[j - 1] > v) {
				a[j] = a[j - 1];
				p[j] = p[j - 1];
				j--;
			}
			a[j] = v;
			p[j] = pv;
		} else {
			while (j > 0 && a[j - 1] > v) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = v;
		}
	}
}

/*
 * Move every key of a[0..n) into its bucket (digit (key >> shift) & mask;
 * bucket b spans [head[b], end[b]) on entry).  Sweeps in the manner of
 * Skarupke's ska_sort: each sweep walks the unplaced part of every bucket
 * and swaps each key into the head of its own bucket.  Unlike the
 * cycle-leader loop of the American flag sort, the loads are sequential and
 * independent, so the CPU overlaps them; a key swapped into the walked slot
 * waits for the next sweep.
 */
static void permute(u64a *a, uint32_t *p, int shift, uint64_t mask, size_t *head,
		    const size_t *end, size_t nb, uint32_t *rem)
{
	size_t nrem = 0;
	for (size_t b = 0; b < nb; b++)
		if (head[b] < end[b])
			rem[nrem++] = (uint32_t)b;
	while (nrem > 0) {
		for (size_t r = 0; r < nrem; r++) {
			size_t b = rem[r], e = end[b], i = head[b];
			if (p) {
				for (; i < e; i++) {
					uint64_t v = a[i];
					size_t h = head[(v >> shift) & mask]++;
					a[i] = a[h];
					a[h] = v;
					uint32_t pv = p[i];
					p[i] = p[h];
					p[h] = pv;
				}
				continue;
			}
			for (; i + 4 <= e; i += 4) {
				uint64_t v0 = a[i], v1 = a[i + 1], v2 = a[i + 2], v3 = a[i + 3];
				size_t h0 = head[(v0 >> shift) & mask]++;
				a[i] = a[h0];
				a[h0] = v0;
				size_t h1 = head[(v1 >> shift) & mask]++;
				a[i + 1] = a[h1];
				a[h1] = v1;
				size_t h2 = head[(v2 >> shift) & mask]++;
				a[i + 2] = a[h2];
				a[h2] = v2;
				size_t h3 = head[(v3 >> shift) & mask]++;
				a[i + 3] = a[h3];
				a[h3] = v3;
			}
			for (; i < e; i++) {
				uint64_t v = a[i];
				size_t h = head[(v >> shift) & mask]++;
				a[i] = a[h];
				a[h] = v;
			}
		}
		size_t k = 0;
		for (size_t r = 0; r < nrem; r++)
			if (head[rem[r]] < end[rem[r]])
				rem[k++] = rem[r];
		nrem = k;
	}
}

/*
 * Sort a[0..n) whose keys agree on every bit above `shift + 8`, by the byte at
 * `shift` and then recursively by the lower bytes.  `shift` need not be a
 * multiple of 8: below 8 the last digit is taken at 0, overlapping bits
 * that are already equal inside the bucket.
 */
static void flag_sort(u64a *a, uint32_t *p, size_t n, int shift)
{
	size_t cnt[256], head[256], end[256];
	uint32_t rem[256];

	for (;;) {
		if (n <= INS_MAX) {
			insertion_sort(a, p, n);
			return;
		}
		memset(cnt, 0, sizeof cnt);
		for (size_t i = 0; i < n; i++)
			cnt[(a[i] >> shift) & 255]++;
		/* one bucket holds everything: go down a byte without moving anything */
		if (cnt[(a[0] >> shift) & 255] == n) {
			if (shift == 0)
				return;
			shift = shift > 8 ? shift - 8 : 0;
			continue;
		}
		break;
	}

	size_t s = 0;
	for (int b = 0; b < 256; b++) {
		head[b] = s;
		s += cnt[b];
		end[b] = s;
	}
	permute(a, p, shift, 255, head, end, 256, rem);
	if (shift == 0)
		return;
	int next = shift > 8 ? shift - 8 : 0;
	size_t lo = 0;
	for (int b = 0; b < 256; b++) {
		size_t m = cnt[b];
		if (m > 1)
			flag_sort(a + lo, p ? p + lo : NULL, m, next);
		lo += m;
	}
}

/*
 * The first level of a large sort takes a 16-bit digit at the highest bit
 * where the keys differ (keys are stored minus the smallest key, so that
 * this bit is as high as the spread of the data allows).  Real score sets
 * occupy few exponents: with byte digits the first passes would split them
 * into a handful of buckets (the sign and the top exponent bits); 16 bits
 * reach a sixteenth of an exponent, so ~10^8 normal scores fall into ~300
 * buckets of a few MB that finish in cache.  (Measured on 115M N(0,1)
 * scores: 11-bit first digit 6.4 s, 16-bit 4.9 s, byte digits 8.0 s, on a
 * loaded 2-core machine.)
 */
#define TOP_BITS 16
#define TOP_MIN (1u << 20)

static void flag_sort_top(u64a *a, uint32_t *p, size_t n, int msb)
{
	size_t nb = (size_t)1 << TOP_BITS;
	int shift = msb + 1 - TOP_BITS;
	if (shift < 0)
		shift = 0;
	size_t *cnt = xcalloc(nb, sizeof *cnt), *head = xmalloc(xmul(nb, sizeof *head));
	size_t *end = xmalloc(xmul(nb, sizeof *end));
	uint32_t *rem = xmalloc(xmul(nb, sizeof *rem));
	uint64_t mask = nb - 1;

	for (size_t i = 0; i < n; i++)
		cnt[(a[i] >> shift) & mask]++;
	size_t s = 0;
	for (size_t b = 0; b < nb; b++) {
		head[b] = s;
		s += cnt[b];
		end[b] = s;
	}
	permute(a, p, shift, mask, head, end, nb, rem);
	if (shift > 0) {
		int next = shift > 8 ? shift - 8 : 0;
		size_t lo = 0;
		for (size_t b = 0; b < nb; b++) {
			size_t m = cnt[b];
			if (m > 1)
				flag_sort(a + lo, p ? p + lo : NULL, m, next);
			lo += m;
		}
	}
	free(rem);
	free(end);
	free(head);
	free(cnt);
}

/*
 * Scores that are all float32 values (every .npy of float32 scores, the
 * common case for the largest sets) sort as 32-bit keys: half the bytes and
 * half the digits of the double keys.  The keys are packed into the first
 * half of the double buffer and an LSD radix sort (three 11-bit digits,
 * stable, a counting pass before each) ping-pongs between the two halves,
 * so no memory beyond 2048 counters per thread is needed; its passes are
 * shared out over threads (vpa_sort_scores_threads).  (Counting the next
 * digit inside the scatter instead of a pass of its own was tried: 0.2 s
 * slower on 115M keys, the scatter loop's extra counter traffic costing
 * more than a sequential read.)  Measured on
 * the 115,563,864 scores of bench_metrics (2-core AMD EPYC Zen 4 VM, Debian
 * 12): see bench/run.sh.  A double that is not exactly a float (or a NaN)
 * makes the packing undo itself and the MSD sort below run instead.
 */
typedef uint32_t __attribute__((may_alias)) u32a;

#define F32_SIGN 0x80000000u
#define LSD_BITS 11
#define LSD_NB (1u << LSD_BITS)

static inline uint32_t f32_key(uint32_t u)
{
	if (u == F32_SIGN) /* -0.0f -> +0.0f, as to_key does */
		u = 0;
	return (u & F32_SIGN) ? ~u : (u | F32_SIGN);
}

static inline double f32_unkey(uint32_t k)
{
	uint32_t u = (k & F32_SIGN) ? (k & ~F32_SIGN) : ~k;
	float f;
	memcpy(&f, &u, sizeof f);
	return (double)f;
}

/* write double(key k[i]) over slot i of a, i = n-1 .. 0 (k lies at or below a's slots) */
static void unpack_down(u64a *a, const u32a *k, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		double d = f32_unkey(k[i]);
		uint64_t u;
		memcpy(&u, &d, sizeof u);
		a[i] = u;
	}
}

/*
 * One LSD pass over src[0..n) cut into `parts` ranges (part p: n*p/parts ..
 * n*(p+1)/parts).  Job p counts its range's digits, then (after every count)
 * scatters its range; part p's keys of bucket b go after every part below
 * p's, so the pass is stable and the result the same for any thread count.
 */
struct lsd_pass {
	const u32a *src;
	u32a *dst;
	size_t n, parts, *cnt; /* cnt: parts x LSD_NB */
	int shift;
};

static int lsd_count(void *arg, size_t p)
{
	struct lsd_pass *q = arg;
	size_t lo = q->n * p / q->parts, hi = q->n * (p + 1) / q->parts, *c = q->cnt + p * LSD_NB;
	memset(c, 0, LSD_NB * sizeof *c);
	for (size_t i = lo; i < hi; i++)
		c[(q->src[i] >> q->shift) & (LSD_NB - 1)]++;
	return 0;
}

static int lsd_scatter(void *arg, size_t p)
{
	struct lsd_pass *q = arg;
	size_t lo = q->n * p / q->parts, hi = q->n * (p + 1) / q->parts, *c = q->cnt + p * LSD_NB;
	const u32a *src = q->src;
	u32a *dst = q->dst;
	int shift = q->shift;
	for (size_t i = lo; i < hi; i++) {
		uint32_t key = src[i];
		dst[c[(key >> shift) & (LSD_NB - 1)]++] = key;
	}
	return 0;
}

static int sort_f32(u64a *a, size_t n, int threads)
{
	u32a *k = (u32a *)(void *)a, *tmp = k + n;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t u = a[i];
		double d;
		memcpy(&d, &u, sizeof d);
		float f = (float)d;
		if ((double)f != d) /* not a float, or NaN */
			break;
		uint32_t fu;
		memcpy(&fu, &f, sizeof fu);
		k[i] = f32_key(fu); /* byte 4i < 8i: slot i's double is already read */
	}
	if (i < n) {
		unpack_down(a, k, i); /* doubles 0..i-1 back as they were (-0.0 becomes +0.0) */
		return 0;
	}
	struct lsd_pass q = {k, tmp, n, threads > 1 ? (size_t)threads : 1, NULL, 0};
	q.cnt = xmalloc(xmul(q.parts * LSD_NB, sizeof *q.cnt));
	for (int d = 0; d < 3; d++) {
		q.shift = d * LSD_BITS;
		vpa_par_jobs(q.parts, threads, lsd_count, &q, NULL, NULL);
		size_t s = 0, top = 0;
		for (size_t b = 0; b < LSD_NB; b++) {
			size_t tot = 0;
			for (size_t p = 0; p < q.parts; p++) {
				size_t c = q.cnt[p * LSD_NB + b];
				q.cnt[p * LSD_NB + b] = s + tot;
				tot += c;
			}
			s += tot;
			if (tot > top)
				top = tot;
		}
		if (top == n)
			continue; /* every key has this digit: the order stands */
		vpa_par_jobs(q.parts, threads, lsd_scatter, &q, NULL, NULL);
		const u32a *t = q.src;
		q.src = q.dst;
		q.dst = (u32a *)t;
	}
	free(q.cnt);
	if (q.src == k) {
		unpack_down(a, k, n);
	} else {
		/* keys in the upper half: slot i (bytes 8i..8i+8) ends at or below key i+1 */
		for (i = 0; i < n; i++) {
			double d = f32_unkey(q.src[i]);
			uint64_t u;
			memcpy(&u, &d, sizeof u);
			a[i] = u;
		}
	}
	return 1;
}

void vpa_sort_scores(double *x, uint32_t *perm, size_t n)
{
	vpa_sort_scores_threads(x, perm, n, 1);
}

void vpa_sort_scores_threads(double *x, uint32_t *perm, size_t n, int threads)
{
	if (n < 2)
		return;
	u64a *a = (u64a *)(void *)x;
	if (!perm && n >= LSD_MIN && sort_f32(a, n, threads))
		return;
	uint64_t kmin = UINT64_MAX, kmax = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t k = to_key(a[i]);
		a[i] = k;
		if (k < kmin)
			kmin = k;
		if (k > kmax)
			kmax = k;
	}
	if (kmin != kmax) {
		/* sort key - kmin: same order, and the top bit is the spread's */
		for (size_t i = 0; i < n; i++)
			a[i] -= kmin;
		int msb = 63 - __builtin_clzll(kmax - kmin);
		if (n >= TOP_MIN && msb >= TOP_BITS)
			flag_sort_top(a, perm, n, msb);
		else
			flag_sort(a, perm, n, msb >= 8 ? msb - 7 : 0);
		for (size_t i = 0; i < n; i++)
			a[i] += kmin;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = from_key(a[i]);
}
