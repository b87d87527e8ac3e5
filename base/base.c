/* base/base.c - errors, allocation, buffers, files, RNG.  See base.h. */
#include "base/base.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int vpa_quiet;
const char *vpa_cmd;

void vpa_err_init(struct vpa_err *err)
{
	err->status = 0;
	err->msg[0] = '\0';
}

int vpa_fail(struct vpa_err *err, int status, const struct vpa_loc *loc,
	     const char *fmt, ...)
{
	if (!err || err->status)
		return status;
	size_t off = 0;
	if (loc && loc->file) {
		if (loc->line > 0 && loc->col > 0)
			off = snprintf(err->msg, sizeof(err->msg), "%s:%ld:%ld: ",
				       loc->file, loc->line, loc->col);
		else if (loc->line > 0)
			off = snprintf(err->msg, sizeof(err->msg), "%s:%ld: ",
				       loc->file, loc->line);
		else
			off = snprintf(err->msg, sizeof(err->msg), "%s: ", loc->file);
		if (off >= sizeof(err->msg))
			off = sizeof(err->msg) - 1;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg + off, sizeof(err->msg) - off, fmt, ap);
	va_end(ap);
	/* One line, safe on a terminal: a message may have picked up text of a
	 * data file; its tabs and line feeds become spaces, other control
	 * characters \xHH (vpa_buf_add_shown: a CR or an ESC would rewrite
	 * the terminal), cut to the buffer. */
	int ctl = 0;
	for (char *p = err->msg; *p; p++) {
		if (*p == '\t' || *p == '\n')
			*p = ' ';
		unsigned char c = (unsigned char)*p;
		ctl |= c < 0x20 || c == 0x7f || (c == 0xc2 && (unsigned char)p[1] >= 0x80 &&
						 (unsigned char)p[1] <= 0x9f);
	}
	if (ctl) {
		struct vpa_buf b;
		vpa_buf_init(&b);
		vpa_buf_add_shown(&b, err->msg, strlen(err->msg));
		snprintf(err->msg, sizeof(err->msg), "%s", b.data);
		vpa_buf_release(&b);
	}
	err->status = status;
	return status;
}

int vpa_exit_code(int status)
{
	switch (status) {
	case VPA_OK: return 0;
	case VPA_EUSAGE: return 2;
	case VPA_EGATE: return 3;
	default: return 1;
	}
}

void vpa_warn(const char *fmt, ...)
{
	va_list ap;
	fputs("vpaudit: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

_Noreturn void vpa_bug(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "vpaudit: BUG at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static _Atomic(vpa_cleanup_fn) oom_cleanup; /* base/tmp.c's, once it holds a temporary */

void vpa_set_oom_cleanup(vpa_cleanup_fn fn)
{
	oom_cleanup = fn;
}

/*
 * Allocation failure: the one place outside main.c that ends the process.
 * Over 700 call sites allocate with x*alloc, so the failure cannot travel
 * back as a status; it is a user-facing error (a too large input or a too
 * small machine), not our bug: one error line and exit status 1 (no abort,
 * no core dump), after removing the temporaries of unfinished atomic writes.
 * _exit, not exit: other threads may be running, and buffered stdout (a
 * partial table) must not be flushed.
 */
static _Noreturn void oom_exit(size_t a, size_t b)
{
	char msg[200];
	const char *sp = vpa_cmd ? " " : "", *cmd = vpa_cmd ? vpa_cmd : "";
	int n = b ? snprintf(msg, sizeof(msg),
			     "vpaudit%s%s: error: out of memory (allocating %zu * %zu bytes)\n", sp,
			     cmd, a, b)
		  : snprintf(msg, sizeof(msg),
			     "vpaudit%s%s: error: out of memory (allocating %zu bytes)\n", sp, cmd, a);
	if (n > 0)
		(void)!write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	void (*cleanup)(void) = oom_cleanup;
	if (cleanup)
		cleanup();
	_exit(1);
}

static _Noreturn void oom(size_t n)
{
	oom_exit(n, 0);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom_exit(n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = xmalloc(n);
	memcpy(p, s, n);
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		oom(n + 1);
	return p;
}

size_t xmul(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		oom_exit(n, size);
	return n * size;
}

void vpa_buf_init(struct vpa_buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void vpa_buf_release(struct vpa_buf *b)
{
	free(b->data);
	vpa_buf_init(b);
}

static void buf_grow(struct vpa_buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void vpa_buf_add(struct vpa_buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void vpa_buf_puts(struct vpa_buf *b, const char *s)
{
	vpa_buf_add(b, s, strlen(s));
}

void vpa_buf_printf(struct vpa_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		VPA_BUG("vsnprintf failed");
	buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void vpa_buf_add_shown(struct vpa_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n; i++) {
		int c1 = p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f;
		if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f) {
			vpa_buf_printf(b, "\\x%02x", p[i]);
		} else if (c1) {
			vpa_buf_printf(b, "\\x%02x\\x%02x", p[i], p[i + 1]);
			i++;
		} else {
			vpa_buf_add(b, s + i, 1);
		}
	}
}

const char *vpa_buf_str(struct vpa_buf *b)
{
	buf_grow(b, 0);
	b->data[b->len] = '\0';
	return b->data;
}

static _Atomic(vpa_read_hook_fn) read_hook; /* atomic: read by any thread */

void vpa_set_read_hook(vpa_read_hook_fn fn)
{
	read_hook = fn;
}

int vpa_read_file(const char *path, char **data, size_t *len, struct vpa_err *err)
{
	struct vpa_loc loc = {path, 0, 0};
	*data = NULL;
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return vpa_fail(err, VPA_EIO, &loc, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) != 0) {
		int e = errno;
		fclose(f);
		return vpa_fail(err, VPA_EIO, &loc, "cannot stat: %s", strerror(e));
	}
	/* A folder, a device (/dev/zero never ends), a socket: refused, since
	 * the whole file is needed.  At most VPA_READ_MAX bytes are read. */
	if (S_ISDIR(st.st_mode)) {
		fclose(f);
		return vpa_fail(err, VPA_EIO, &loc, "is a folder, expected a file");
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		fclose(f);
		return vpa_fail(err, VPA_EIO, &loc, "not a regular file (a device or socket)");
	}
	if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > VPA_READ_MAX) {
		fclose(f);
		return vpa_fail(err, VPA_EIO, &loc, "larger than %d GiB (%lld bytes)",
				VPA_READ_MAX >> 30, (long long)st.st_size);
	}
	struct vpa_buf b;
	vpa_buf_init(&b);
	char chunk[1 << 16];
	size_t n;
	int too_big = 0;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		/* a pipe, or a file that grows while read */
		if (b.len + n > VPA_READ_MAX) {
			too_big = 1;
			break;
		}
		vpa_buf_add(&b, chunk, n);
	}
	int bad = ferror(f);
	fclose(f);
	if (too_big || bad) {
		vpa_buf_release(&b);
		if (too_big && S_ISFIFO(st.st_mode))
			return vpa_fail(err, VPA_EIO, &loc,
					"more than %d MiB from a pipe: write it to a file first",
					VPA_READ_MAX >> 20);
		if (too_big)
			return vpa_fail(err, VPA_EIO, &loc, "larger than %d GiB",
					VPA_READ_MAX >> 30);
		return vpa_fail(err, VPA_EIO, &loc, "read error");
	}
	vpa_buf_str(&b);
	*data = b.data;
	*len = b.len;
	vpa_read_hook_fn hook = read_hook;
	if (hook)
		hook(path, b.data, b.len);
	return 0;
}

int vpa_mkdirs(const char *path, struct vpa_err *err)
{
	char *p = xstrdup(path);
	int rc = 0;
	for (char *s = p + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0777) != 0 && errno != EEXIST) {
				struct vpa_loc loc = {path, 0, 0};
				rc = vpa_fail(err, VPA_EIO, &loc, "cannot create folder: %s",
					      strerror(errno));
				break;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	struct stat st;
	if (!rc && (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))) {
		struct vpa_loc loc = {path, 0, 0};
		rc = vpa_fail(err, VPA_EIO, &loc, "not a folder");
	}
	free(p);
	return rc;
}

double vpa_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

uint64_t vpa_fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ull; /* the FNV-64 offset basis */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

double vpa_lgamma(double x)
{
	int sign;
	return lgamma_r(x, &sign);
}

void vpa_run_workers(size_t n, void *(*fn)(void *), void *arg)
{
	if (n <= 1) {
		fn(arg);
		return;
	}
	pthread_t *th = xmalloc(xmul(n - 1, sizeof(*th)));
	size_t started = 0;
	for (; started < n - 1; started++)
		if (pthread_create(&th[started], NULL, fn, arg))
			break;
	fn(arg);
	for (size_t i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	free(th);
}

struct par_jobs {
	size_t n, next, done;
	int (*job)(void *, size_t);
	void *arg;
	const char *label;
	int failed;
	double t0;
	pthread_mutex_t mx;
};

static void *par_jobs_worker(void *arg)
{
	struct par_jobs *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mx);
		size_t i = p->next++;
		int stop = i >= p->n || p->failed;
		pthread_mutex_unlock(&p->mx);
		if (stop)
			return NULL;
		int rc = p->job(p->arg, i);
		pthread_mutex_lock(&p->mx);
		p->failed |= rc != 0;
		p->done++;
		if (p->label)
			vpa_progress(p->label, p->done, p->n, p->t0);
		pthread_mutex_unlock(&p->mx);
	}
}

void vpa_par_jobs(size_t n, int threads, int (*job)(void *arg, size_t i), void *arg,
		  const char *label, void (*run)(size_t, void *(*)(void *), void *))
{
	struct par_jobs p = {n, 0, 0, job, arg, label, 0, vpa_now(), PTHREAD_MUTEX_INITIALIZER};
	size_t nth = threads > 1 ? (size_t)threads : 1;
	if (nth > n)
		nth = n ? n : 1;
	if (label && n)
		vpa_progress(label, 0, n, p.t0);
	(run ? run : vpa_run_workers)(nth, par_jobs_worker, &p);
	pthread_mutex_destroy(&p.mx);
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void vpa_rng_seed(struct vpa_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

void vpa_rng_split(struct vpa_rng *child, uint64_t seed, const char *name)
{
	/* FNV-1a of the name, mixed with the seed. */
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ULL;
	}
	uint64_t x = seed ^ h;
	vpa_rng_seed(child, splitmix64(&x) ^ h);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t vpa_rng_u64(struct vpa_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double vpa_rng_uniform(struct vpa_rng *r)
{
	return (vpa_rng_u64(r) >> 11) * 0x1.0p-53;
}

uint64_t vpa_rng_below(struct vpa_rng *r, uint64_t n)
{
	if (n == 0)
		VPA_BUG("vpa_rng_below(0)");
	uint64_t lim = -n % n; /* 2^64 mod n */
	for (;;) {
		uint64_t x = vpa_rng_u64(r);
		if (x >= lim)
			return x % n;
	}
}

double vpa_rng_normal(struct vpa_rng *r)
{
	/* Box-Muller; one value per call keeps streams independent of call pairing. */
	double u1 = vpa_rng_uniform(r), u2 = vpa_rng_uniform(r);
	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

void vpa_progress_note(const char *fmt, ...)
{
	if (vpa_quiet || !isatty(2))
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("vpaudit: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	fflush(stderr);
}

void vpa_progress(const char *stage, size_t k, size_t n, double t0)
{
	if (vpa_quiet || !isatty(2))
		return;
	fprintf(stderr, "\r%s: %zu/%zu  %.1fs\033[K", stage, k, n, vpa_now() - t0);
	if (k == n)
		fputc('\n', stderr);
	fflush(stderr);
}
