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

#include <string.h>

typedef uint64_t __attribute__((may_alias)) u64a;

#define SIGN_BIT 0x8000000000000000ull
#define INS_MAX 48

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
 * Sort a[0..n) whose keys agree on every bit above `shift + 8`, by the byte at
 * `shift` and then recursively by the lower bytes.
 */
static void flag_sort(u64a *a, uint32_t *p, size_t n, int shift)
{
	size_t cnt[256], head[256], end[256];

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
			shift -= 8;
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
	/*
	 * Permutation in sweeps (Skarupke's ska_sort variant of the American
	 * flag loop): each sweep walks the unplaced part of every bucket and swaps
	 * each key into the head of its own bucket.  Unlike the cycle-leader loop
	 * the loads are sequential and independent, so the CPU overlaps them; a
	 * key swapped into the walked slot waits for the next sweep.
	 */
	int rem[256], nrem = 0;
	for (int b = 0; b < 256; b++)
		if (head[b] < end[b])
			rem[nrem++] = b;
	while (nrem > 0) {
		for (int r = 0; r < nrem; r++) {
			int b = rem[r];
			size_t e = end[b];
			if (p) {
				for (size_t i = head[b]; i < e; i++) {
					uint64_t v = a[i];
					size_t h = head[(v >> shift) & 255]++;
					a[i] = a[h];
					a[h] = v;
					uint32_t pv = p[i];
					p[i] = p[h];
					p[h] = pv;
				}
			} else {
				size_t i = head[b];
				for (; i + 4 <= e; i += 4) {
					uint64_t v0 = a[i], v1 = a[i + 1], v2 = a[i + 2], v3 = a[i + 3];
					size_t h0 = head[(v0 >> shift) & 255]++;
					a[i] = a[h0];
					a[h0] = v0;
					size_t h1 = head[(v1 >> shift) & 255]++;
					a[i + 1] = a[h1];
					a[h1] = v1;
					size_t h2 = head[(v2 >> shift) & 255]++;
					a[i + 2] = a[h2];
					a[h2] = v2;
					size_t h3 = head[(v3 >> shift) & 255]++;
					a[i + 3] = a[h3];
					a[h3] = v3;
				}
				for (; i < e; i++) {
					uint64_t v = a[i];
					size_t h = head[(v >> shift) & 255]++;
					a[i] = a[h];
					a[h] = v;
				}
			}
		}
		int k = 0;
		for (int r = 0; r < nrem; r++)
			if (head[rem[r]] < end[rem[r]])
				rem[k++] = rem[r];
		nrem = k;
	}
	if (shift == 0)
		return;
	size_t lo = 0;
	for (int b = 0; b < 256; b++) {
		size_t m = cnt[b];
		if (m > 1)
			flag_sort(a + lo, p ? p + lo : NULL, m, shift - 8);
		lo += m;
	}
}

void vpa_sort_scores(double *x, uint32_t *perm, size_t n)
{
	if (n < 2)
		return;
	u64a *a = (u64a *)(void *)x;
	uint64_t diff = 0, k0;

	a[0] = k0 = to_key(a[0]);
	for (size_t i = 1; i < n; i++) {
		uint64_t k = to_key(a[i]);
		a[i] = k;
		diff |= k ^ k0;
	}
	if (diff) {
		/* start at the byte holding the highest bit where keys differ */
		int msb = 63 - __builtin_clzll(diff);
		flag_sort(a, perm, n, (msb / 8) * 8);
	}
	for (size_t i = 0; i < n; i++)
		a[i] = from_key(a[i]);
}
