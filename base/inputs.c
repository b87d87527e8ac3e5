/*
 * base/inputs.c - SHA-256 (FIPS 180-4, section 6.2) and the list of the
 * input files of a run (base/inputs.h).
 */
#include "base/inputs.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/dist.h"
#include "formats/embset.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static void block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64];
	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
		       (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
		w[t] = w[t - 16] + s0 + w[t - 7] + s1;
	}
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
	for (int t = 0; t < 64; t++) {
		uint32_t t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		k = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void vpa_sha256_init(struct vpa_sha256_ctx *c)
{
	static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
				       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	memcpy(c->h, h0, sizeof(h0));
	c->n = 0;
	c->len = 0;
}

void vpa_sha256_update(struct vpa_sha256_ctx *c, const void *data, size_t len)
{
	const unsigned char *p = data;
	c->len += len;
	if (c->n) { /* complete the block held back by the last call */
		size_t k = 64 - c->n < len ? 64 - c->n : len;
		memcpy(c->buf + c->n, p, k);
		c->n += k, p += k, len -= k;
		if (c->n < 64)
			return;
		block(c->h, c->buf);
		c->n = 0;
	}
	for (; len >= 64; len -= 64, p += 64)
		block(c->h, p);
	if (len)
		memcpy(c->buf, p, len);
	c->n = len;
}

void vpa_sha256_final(struct vpa_sha256_ctx *c, unsigned char out[32])
{
	unsigned char last[128];
	size_t n = c->n;
	memset(last, 0, sizeof(last));
	if (n)
		memcpy(last, c->buf, n);
	last[n] = 0x80;
	size_t tail = n + 9 <= 64 ? 64 : 128;
	uint64_t bits = c->len * 8;
	for (int i = 0; i < 8; i++)
		last[tail - 1 - i] = (unsigned char)(bits >> (8 * i));
	block(c->h, last);
	if (tail == 128)
		block(c->h, last + 64);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(c->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)c->h[i];
	}
}

void vpa_sha256_hex_of(const unsigned char d[32], char hex[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

void vpa_sha256(const void *data, size_t len, unsigned char out[32])
{
	struct vpa_sha256_ctx c;
	vpa_sha256_init(&c);
	vpa_sha256_update(&c, data, len);
	vpa_sha256_final(&c, out);
}

void vpa_sha256_hex(const void *data, size_t len, char hex[65])
{
	unsigned char d[32];
	vpa_sha256(data, len, d);
	vpa_sha256_hex_of(d, hex);
}

struct note {
	char *path;
	size_t bytes;
	char hex[65];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int on;
static struct note *notes;
static _Thread_local int busy; /* re-reading a file to hash it */
static size_t n_notes, cap_notes;

static struct vpa_strmap by_name; /* path -> note (keys: the notes' own paths) */
static char **ignored; /* folder prefixes whose files are not inputs */
static size_t n_ignored;

static void forget(void)
{
	for (size_t i = 0; i < n_notes; i++)
		free(notes[i].path);
	free(notes);
	notes = NULL;
	n_notes = cap_notes = 0;
	vpa_strmap_release(&by_name);
	vpa_strmap_init(&by_name);
	for (size_t i = 0; i < n_ignored; i++)
		free(ignored[i]);
	free(ignored);
	ignored = NULL;
	n_ignored = 0;
}

void vpa_inputs_ignore(const char *dir)
{
	pthread_mutex_lock(&mu);
	if (on) {
		ignored = xrealloc(ignored, (n_ignored + 1) * sizeof(*ignored));
		ignored[n_ignored++] = xstrdup(dir);
	}
	pthread_mutex_unlock(&mu);
}

static int is_ignored(const char *path)
{
	for (size_t i = 0; i < n_ignored; i++) {
		size_t l = strlen(ignored[i]);
		if (!strncmp(path, ignored[i], l) && path[l] == '/')
			return 1;
	}
	return 0;
}

void vpa_inputs_begin(void)
{
	pthread_mutex_lock(&mu);
	forget();
	on = 1;
	pthread_mutex_unlock(&mu);
	vpa_set_read_hook(vpa_input_note);
}

void vpa_inputs_end(void)
{
	pthread_mutex_lock(&mu);
	forget();
	on = 0;
	pthread_mutex_unlock(&mu);
	vpa_set_read_hook(NULL);
}

static int known(const char *path)
{
	return vpa_strmap_get(&by_name, path, NULL);
}

void vpa_input_note(const char *path, const void *data, size_t len)
{
	pthread_mutex_lock(&mu);
	int skip = busy || !on || !path || known(path) || is_ignored(path);
	pthread_mutex_unlock(&mu);
	if (skip)
		return;
	char *own = NULL;
	if (!data) {
		struct vpa_err e;
		vpa_err_init(&e);
		busy = 1; /* this reading is not an input of its own */
		int rc = vpa_read_file(path, &own, &len, &e);
		busy = 0;
		if (rc)
			return;
		data = own;
	}
	struct note n;
	n.path = xstrdup(path);
	n.bytes = len;
	vpa_sha256_hex(data, len, n.hex);
	free(own);
	pthread_mutex_lock(&mu);
	if (on && !known(path)) {
		if (n_notes == cap_notes) {
			cap_notes = cap_notes ? 2 * cap_notes : 16;
			notes = xrealloc(notes, cap_notes * sizeof(*notes));
		}
		notes[n_notes++] = n;
		vpa_strmap_put(&by_name, n.path, (uint32_t)(n_notes - 1), NULL);
		n.path = NULL;
	}
	pthread_mutex_unlock(&mu);
	free(n.path);
}

int vpa_input_wanted(const char *path)
{
	pthread_mutex_lock(&mu);
	int want = !busy && on && path && !known(path) && !is_ignored(path);
	pthread_mutex_unlock(&mu);
	return want;
}

void vpa_input_note_hash(const char *path, size_t bytes, const char hex[65])
{
	pthread_mutex_lock(&mu);
	/* a second thread that hashed the same file meanwhile: the first note stays */
	if (on && path && !known(path) && !is_ignored(path)) {
		if (n_notes == cap_notes) {
			cap_notes = cap_notes ? 2 * cap_notes : 16;
			notes = xrealloc(notes, cap_notes * sizeof(*notes));
		}
		struct note *n = &notes[n_notes++];
		n->path = xstrdup(path);
		n->bytes = bytes;
		memcpy(n->hex, hex, 64);
		n->hex[64] = 0;
		vpa_strmap_put(&by_name, n->path, (uint32_t)(n_notes - 1), NULL);
	}
	pthread_mutex_unlock(&mu);
}

/* Sharing the notes over MPI ranks: job r (on rank r) packs rank r's notes,
 * every other rank adds those it lacks. */
static int share_job(void *arg, size_t i, struct vpa_err *err)
{
	(void)arg;
	(void)i;
	(void)err;
	return 0;
}

static void share_pack(void *arg, size_t i, struct vpa_buf *b)
{
	(void)arg;
	(void)i;
	pthread_mutex_lock(&mu);
	vpa_pack_u64(b, n_notes);
	for (size_t k = 0; k < n_notes; k++) {
		size_t l = strlen(notes[k].path);
		vpa_pack_u64(b, l);
		vpa_buf_add(b, notes[k].path, l);
		vpa_pack_u64(b, notes[k].bytes);
		vpa_buf_add(b, notes[k].hex, 64);
	}
	pthread_mutex_unlock(&mu);
}

static int share_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	(void)arg;
	(void)i;
	const unsigned char *end = p + len;
	uint64_t n, l, bytes;
	if (vpa_unpack_u64(&p, end, &n))
		return -1;
	for (uint64_t k = 0; k < n; k++) {
		if (vpa_unpack_u64(&p, end, &l) || (uint64_t)(end - p) < l)
			return -1;
		char *path = xmalloc(l + 1);
		memcpy(path, p, l);
		path[l] = 0;
		p += l;
		if (vpa_unpack_u64(&p, end, &bytes) || end - p < 64) {
			free(path);
			return -1;
		}
		struct note nt;
		nt.path = path;
		nt.bytes = (size_t)bytes;
		memcpy(nt.hex, p, 64);
		nt.hex[64] = 0;
		p += 64;
		pthread_mutex_lock(&mu);
		if (on && !known(path)) {
			if (n_notes == cap_notes) {
				cap_notes = cap_notes ? 2 * cap_notes : 16;
				notes = xrealloc(notes, cap_notes * sizeof(*notes));
			}
			notes[n_notes++] = nt;
			vpa_strmap_put(&by_name, nt.path, (uint32_t)(n_notes - 1), NULL);
			nt.path = NULL;
		}
		pthread_mutex_unlock(&mu);
		free(nt.path);
	}
	return p != end;
}

int vpa_inputs_share(struct vpa_err *err)
{
	size_t n = (size_t)vpa_dist_size();
	if (n < 2)
		return 0;
	return vpa_dist_jobs(n, 1, share_job, share_pack, share_unpack, NULL, NULL, NULL, err);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct note *)a)->path, ((const struct note *)b)->path);
}

struct vpa_json *vpa_inputs_json(void)
{
	struct vpa_json *a = vpa_json_arr();
	pthread_mutex_lock(&mu);
	/* by path: the order of reading depends on the threads */
	if (n_notes > 1)
		qsort(notes, n_notes, sizeof(*notes), by_path);
	for (size_t i = 0; i < n_notes; i++) {
		struct vpa_json *o = vpa_json_obj();
		vpa_json_set_str(o, "path", notes[i].path);
		vpa_json_set_num(o, "bytes", (double)notes[i].bytes);
		vpa_json_set_str(o, "sha256", notes[i].hex);
		vpa_json_push(a, o);
	}
	pthread_mutex_unlock(&mu);
	return a;
}
