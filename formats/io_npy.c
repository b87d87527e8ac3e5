/*
 * formats/io_npy.c - NumPy .npy arrays, float32/float64, little-endian, C order.
 *
 * The format (numpy/lib/format.py): "\x93NUMPY", major, minor, a header length
 * (uint16 LE in 1.0, uint32 LE in 2.0 and 3.0), then a Python dict literal
 * such as {'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }
 * padded with spaces and ended by '\n', then the raw data.  We parse the dict
 * properly (keys in any order, either quote style, trailing commas) instead
 * of searching for substrings, and reject anything we cannot represent.
 *
 * Memory: vpa_npy_read() reads float64 data straight into the output array
 * and converts float32 through a 1 MiB buffer (one per thread), so a
 * 115M-element float32 file needs the 925 MB output array and nothing else
 * of its size.
 */
#include "formats/io.h"
#include "base/inputs.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"

struct npy_hdr {
	size_t off;      /* offset of the data */
	int itemsize;    /* 4 or 8 (N-D mode: 1, 2, 4 or 8) */
	char kind;       /* 'f' (N-D mode: 'i', 'u', 'b' too) */
	size_t ndim;
	size_t shape[2];
	size_t dims[VPA_NPY_MAX_DIMS]; /* every dimension */
	size_t count;    /* number of elements */
	size_t nbytes;   /* count * itemsize */
};

/* ------------------------------------------------------ the header dict */

struct hscan {
	const char *p, *end;
	const char *name;
	struct vpa_err *err;
};

static int hfail(struct hscan *h, const char *what)
{
	struct vpa_loc loc = {h->name, 0, 0};
	return vpa_fail(h->err, VPA_EINPUT, &loc, "bad .npy header: %s", what);
}

static void hskip(struct hscan *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
		h->p++;
}

/* A quoted string without escapes; *s / *n point into the header. */
static int hstring(struct hscan *h, const char **s, size_t *n)
{
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return -1;
	char q = *h->p++;
	const char *b = h->p;
	while (h->p < h->end && *h->p != q) {
		if (*h->p == '\\' || *h->p == '\n')
			return -1;
		h->p++;
	}
	if (h->p >= h->end)
		return -1;
	*s = b;
	*n = (size_t)(h->p - b);
	h->p++;
	return 0;
}

/* A tuple of non-negative integers: (), (3,), (3, 2), (3, 2,).  Python 2
 * numpy wrote longs as 3L; accept that too. */
static int htuple(struct hscan *h, size_t *dims, size_t *ndim)
{
	size_t n = 0;
	int comma = 0;
	if (h->p >= h->end || *h->p != '(')
		return hfail(h, "'shape' must be a tuple of integers such as (3,) or (3, 2)");
	h->p++;
	hskip(h);
	while (h->p < h->end && *h->p != ')') {
		if ((unsigned)(*h->p - '0') >= 10)
			return hfail(h, "'shape' must be a tuple of non-negative integers");
		size_t v = 0;
		while (h->p < h->end && (unsigned)(*h->p - '0') < 10) {
			size_t d = (size_t)(*h->p - '0');
			if (v > (SIZE_MAX - d) / 10)
				return hfail(h, "a dimension in 'shape' is too large");
			v = v * 10 + d;
			h->p++;
		}
		if (h->p < h->end && (*h->p == 'L' || *h->p == 'l'))
			h->p++;
		if (n < VPA_NPY_MAX_DIMS)
			dims[n] = v;
		n++;
		hskip(h);
		comma = 0;
		if (h->p < h->end && *h->p == ',') {
			comma = 1;
			h->p++;
			hskip(h);
		} else if (h->p < h->end && *h->p != ')') {
			return hfail(h, "expected ',' or ')' in 'shape'");
		}
	}
	if (h->p >= h->end)
		return hfail(h, "unterminated 'shape' tuple");
	h->p++;
	if (n == 1 && !comma)
		return hfail(h, "'shape' must be a tuple: write (n,) not (n)");
	*ndim = n;
	return 0;
}

static void shape_str(char *buf, size_t cap, const size_t *dims, size_t ndim)
{
	size_t off = (size_t)snprintf(buf, cap, "(");
	for (size_t i = 0; i < ndim && i < 3 && off < cap; i++)
		off += (size_t)snprintf(buf + off, cap - off, "%s%zu", i ? ", " : "", dims[i]);
	if (ndim > 3 && off < cap)
		off += (size_t)snprintf(buf + off, cap - off, ", ...");
	if (off < cap)
		snprintf(buf + off, cap - off, "%s)", ndim == 1 ? "," : "");
}

/* Parse the header at buf (the whole file or at least its header). */
static int parse_header(const char *name, const unsigned char *buf, size_t len,
			struct npy_hdr *hd, int nd_mode, struct vpa_err *err)
{
	struct vpa_loc loc = {name, 0, 0};
	memset(hd, 0, sizeof(*hd));
	if (len < 6 || memcmp(buf, NPY_MAGIC, 6) != 0)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"not a .npy file (expected the \\x93NUMPY magic)");
	if (len < 8)
		return vpa_fail(err, VPA_EINPUT, &loc, "truncated .npy header");
	int major = buf[6], minor = buf[7];
	if ((major != 1 && major != 2 && major != 3) || minor != 0)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"unsupported .npy version %d.%d (expected 1.0, 2.0 or 3.0)",
				major, minor);
	size_t pre = major == 1 ? 10 : 12, hlen;
	if (len < pre)
		return vpa_fail(err, VPA_EINPUT, &loc, "truncated .npy header");
	if (major == 1)
		hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
	else
		hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 |
		       (size_t)buf[11] << 24;
	if (len - pre < hlen)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"truncated .npy header: expected %zu bytes, found %zu", hlen,
				len - pre);
	hd->off = pre + hlen;

	struct hscan h = {(const char *)buf + pre, (const char *)buf + pre + hlen, name, err};
	int seen_descr = 0, seen_fo = 0, seen_shape = 0;
	hskip(&h);
	if (h.p >= h.end || *h.p != '{')
		return hfail(&h, "expected a dict starting with '{'");
	h.p++;
	for (;;) {
		hskip(&h);
		if (h.p < h.end && *h.p == '}') {
			h.p++;
			break;
		}
		const char *k;
		size_t kn;
		if (hstring(&h, &k, &kn))
			return hfail(&h, "expected a quoted key or '}'");
		hskip(&h);
		if (h.p >= h.end || *h.p != ':')
			return hfail(&h, "expected ':' after a key");
		h.p++;
		hskip(&h);
		if (kn == 5 && !memcmp(k, "descr", 5)) {
			const char *d;
			size_t dn;
			if (seen_descr++)
				return hfail(&h, "duplicate key 'descr'");
			if (hstring(&h, &d, &dn))
				return hfail(&h, "'descr' must be a string such as '<f8'");
			if (dn == 3 && d[0] == '<' && d[1] == 'f' && (d[2] == '4' || d[2] == '8')) {
				hd->itemsize = d[2] - '0';
				hd->kind = 'f';
			} else if (nd_mode && dn == 3 && d[0] == '<' && d[1] == 'i' &&
				   (d[2] == '4' || d[2] == '8')) {
				hd->itemsize = d[2] - '0';
				hd->kind = 'i';
			} else if (nd_mode && dn == 3 && d[0] == '|' && d[2] == '1' &&
				   (d[1] == 'b' || d[1] == 'u' || d[1] == 'i')) {
				hd->itemsize = 1;
				hd->kind = d[1];
			} else if (nd_mode) {
				return vpa_fail(err, VPA_EINPUT, &loc,
						"unsupported dtype '%.*s': expected '<f4', '<f8', '<i4', "
						"'<i8', '|b1', '|u1' or '|i1' (little-endian)",
						(int)(dn > 40 ? 40 : dn), d);
			} else if (dn == 3 && d[0] == '>' && d[1] == 'f') {
				return vpa_fail(err, VPA_EINPUT, &loc,
						"big-endian dtype '%.*s' is not supported: expected "
						"'<f4' or '<f8' (use arr.astype('<f8'))",
						(int)dn, d);
			} else {
				return vpa_fail(err, VPA_EINPUT, &loc,
						"unsupported dtype '%.*s': expected '<f4' or '<f8' "
						"(float32 or float64, little-endian)",
						(int)(dn > 40 ? 40 : dn), d);
			}
		} else if (kn == 13 && !memcmp(k, "fortran_order", 13)) {
			if (seen_fo++)
				return hfail(&h, "duplicate key 'fortran_order'");
			if (h.end - h.p >= 5 && !memcmp(h.p, "False", 5)) {
				h.p += 5;
			} else if (h.end - h.p >= 4 && !memcmp(h.p, "True", 4)) {
				return vpa_fail(err, VPA_EINPUT, &loc,
						"Fortran-order arrays are not supported: save a "
						"C-order array (np.ascontiguousarray)");
			} else {
				return hfail(&h, "'fortran_order' must be True or False");
			}
		} else if (kn == 5 && !memcmp(k, "shape", 5)) {
			size_t dims[VPA_NPY_MAX_DIMS] = {0}, nd = 0;
			if (seen_shape++)
				return hfail(&h, "duplicate key 'shape'");
			int r = htuple(&h, dims, &nd);
			if (r)
				return r;
			if (nd_mode && nd > VPA_NPY_MAX_DIMS)
				return vpa_fail(err, VPA_EINPUT, &loc,
						"%zu dimensions (at most %d)", nd, VPA_NPY_MAX_DIMS);
			if (nd_mode) {
				memcpy(hd->dims, dims, sizeof(hd->dims));
				hd->ndim = nd;
			} else if (nd != 1 && nd != 2) {
				char s[96];
				shape_str(s, sizeof(s), dims, nd);
				return vpa_fail(err, VPA_EINPUT, &loc,
						"expected a 1-D or 2-D array, got shape %s", s);
			}
			if (!nd_mode) {
				hd->ndim = nd;
				hd->shape[0] = dims[0];
				hd->shape[1] = nd == 2 ? dims[1] : 1;
				hd->dims[0] = dims[0];
				hd->dims[1] = dims[1];
			}
		} else {
			return vpa_fail(err, VPA_EINPUT, &loc,
					"bad .npy header: unexpected key '%.*s' (expected 'descr', "
					"'fortran_order', 'shape')",
					(int)(kn > 40 ? 40 : kn), k);
		}
		hskip(&h);
		if (h.p < h.end && *h.p == ',') {
			h.p++;
			continue;
		}
		hskip(&h);
		if (h.p < h.end && *h.p == '}') {
			h.p++;
			break;
		}
		return hfail(&h, "expected ',' or '}' after a value");
	}
	/* Padding: spaces, ending with '\n' (numpy); tolerate any whitespace. */
	hskip(&h);
	if (h.p != h.end)
		return hfail(&h, "unexpected text after the dict");
	if (!seen_descr)
		return hfail(&h, "missing key 'descr'");
	if (!seen_fo)
		return hfail(&h, "missing key 'fortran_order'");
	if (!seen_shape)
		return hfail(&h, "missing key 'shape'");
	if (nd_mode) {
		size_t c = 1;
		for (size_t i = 0; i < hd->ndim; i++) {
			if (hd->dims[i] && c > SIZE_MAX / 8 / hd->dims[i])
				return vpa_fail(err, VPA_EINPUT, &loc, "array too large");
			c *= hd->dims[i];
		}
		hd->count = c;
		hd->nbytes = c * (size_t)hd->itemsize;
		return 0;
	}
	size_t cnt = hd->shape[0];
	if (hd->ndim == 2) {
		if (hd->shape[1] && cnt > SIZE_MAX / 8 / hd->shape[1])
			return vpa_fail(err, VPA_EINPUT, &loc, "array too large: shape (%zu, %zu)",
					hd->shape[0], hd->shape[1]);
		cnt *= hd->shape[1];
	}
	if (cnt > SIZE_MAX / 8)
		return vpa_fail(err, VPA_EINPUT, &loc, "array too large: %zu elements", cnt);
	hd->count = cnt;
	hd->nbytes = cnt * (size_t)hd->itemsize;
	return 0;
}

/* ------------------------------------------------------------ data */

static int host_is_le(void)
{
	const uint16_t one = 1;
	unsigned char b;
	memcpy(&b, &one, 1);
	return b == 1;
}

static double le_f8(const unsigned char *p)
{
	uint64_t u = 0;
	for (int i = 7; i >= 0; i--)
		u = u << 8 | p[i];
	double d;
	memcpy(&d, &u, 8);
	return d;
}

static double le_f4(const unsigned char *p)
{
	uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* Convert n little-endian items at src into dst. */
static void convert(double *dst, const unsigned char *src, size_t n, int itemsize)
{
	if (itemsize == 8) {
		if (host_is_le())
			memcpy(dst, src, n * 8);
		else
			for (size_t i = 0; i < n; i++)
				dst[i] = le_f8(src + 8 * i);
	} else if (host_is_le()) {
		for (size_t i = 0; i < n; i++) {
			float f;
			memcpy(&f, src + 4 * i, 4);
			dst[i] = f;
		}
	} else {
		for (size_t i = 0; i < n; i++)
			dst[i] = le_f4(src + 4 * i);
	}
}

static void fill_out(const struct npy_hdr *hd, struct vpa_npy *out)
{
	out->ndim = hd->ndim;
	out->shape[0] = hd->shape[0];
	out->shape[1] = hd->ndim == 2 ? hd->shape[1] : 0;
}

static int size_check(const char *name, const struct npy_hdr *hd, size_t avail,
		      struct vpa_err *err)
{
	struct vpa_loc loc = {name, 0, 0};
	if (avail < hd->nbytes)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"truncated: expected %zu bytes of data, found %zu", hd->nbytes,
				avail);
	if (avail > hd->nbytes)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"%zu unexpected bytes after the %zu bytes of data", avail - hd->nbytes,
				hd->nbytes);
	return 0;
}

int vpa_npy_check_finite(const char *name, const struct vpa_npy *a, int as_float32,
			 struct vpa_err *err)
{
	struct vpa_loc loc = {name, 0, 0};
	size_t cols = a->ndim == 2 ? a->shape[1] : 1, n = a->shape[0] * cols;
	for (size_t i = 0; i < n; i++) {
		double v = a->data[i];
		const char *why = isnan(v) ? "is not finite (nan)"
				  : isinf(v) ? "is not finite (inf)"
				  : as_float32 && fabs(v) > FLT_MAX ? "is outside the float32 range"
				  : NULL;
		if (!why)
			continue;
		if (a->ndim == 2)
			return vpa_fail(err, VPA_EINPUT, &loc, "element (%zu, %zu) (0-based) %s",
					i / cols, i % cols, why);
		return vpa_fail(err, VPA_EINPUT, &loc, "element %zu (0-based) %s", i, why);
	}
	return 0;
}

static int check_nd(const char *name, const char *what, const void *data, int itemsize,
		    size_t ndim, const size_t *shape, int allow_inf, struct vpa_err *err);

int vpa_check_finite_nd(const char *name, const char *what, const void *data, int itemsize,
			size_t ndim, const size_t *shape, struct vpa_err *err)
{
	return check_nd(name, what, data, itemsize, ndim, shape, 0, err);
}

int vpa_check_nan_nd(const char *name, const char *what, const void *data, int itemsize,
		     size_t ndim, const size_t *shape, struct vpa_err *err)
{
	return check_nd(name, what, data, itemsize, ndim, shape, 1, err);
}

static int check_nd(const char *name, const char *what, const void *data, int itemsize,
		    size_t ndim, const size_t *shape, int allow_inf, struct vpa_err *err)
{
	struct vpa_loc loc = {name, 0, 0};
	size_t n = 1;
	if (ndim > 8 || (itemsize != 4 && itemsize != 8))
		VPA_BUG("vpa_check_finite_nd: ndim %zu itemsize %d", ndim, itemsize);
	for (size_t k = 0; k < ndim; k++)
		n = xmul(n, shape[k]);
	for (size_t i = 0; i < n; i++) {
		double v = itemsize == 4 ? ((const float *)data)[i] : ((const double *)data)[i];
		if (isfinite(v) || (allow_inf && !isnan(v)))
			continue;
		/* the index, last axis fastest */
		char idx[8 * 22 + 8];
		size_t off = sizeof(idx), rest = i;
		idx[--off] = '\0';
		for (size_t k = ndim; k-- > 0;) {
			char d[24];
			int len = snprintf(d, sizeof(d), "%s%zu", k ? ", " : "", rest % shape[k]);
			rest /= shape[k];
			off -= (size_t)len;
			memcpy(idx + off, d, (size_t)len);
		}
		const char *why = isnan(v) ? "nan" : "inf";
		if (ndim == 0)
			return vpa_fail(err, VPA_EINPUT, &loc, "%s%sthe value is not finite (%s)",
					what ? what : "", what ? ": " : "", why);
		return vpa_fail(err, VPA_EINPUT, &loc, "%s%selement %s%s%s (0-based) is not finite (%s)",
				what ? what : "", what ? ": " : "", ndim > 1 ? "(" : "", idx + off,
				ndim > 1 ? ")" : "", why);
	}
	return 0;
}

void vpa_npy_release(struct vpa_npy *a)
{
	free(a->data);
	memset(a, 0, sizeof(*a));
}

int vpa_npy_parse(const char *name, const unsigned char *buf, size_t len,
		  struct vpa_npy *out, struct vpa_err *err)
{
	struct npy_hdr hd;
	memset(out, 0, sizeof(*out));
	int rc = parse_header(name, buf, len, &hd, 0, err);
	if (rc)
		return rc;
	if ((rc = size_check(name, &hd, len - hd.off, err)))
		return rc;
	out->data = xmalloc(xmul(hd.count, sizeof(double)));
	convert(out->data, buf + hd.off, hd.count, hd.itemsize);
	fill_out(&hd, out);
	return 0;
}

/* read() all of n bytes; returns bytes read (short only at end of file) or -1. */
static ssize_t read_full(int fd, void *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		size_t want = n - got > ((size_t)1 << 30) ? (size_t)1 << 30 : n - got;
		ssize_t r = read(fd, (char *)p + got, want);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/*
 * The data of a regular file read in `parts` element ranges, one job each
 * (pread: no shared file offset), so that on several threads the reading,
 * the float32 conversion and the page faults of the 925 MB output array of
 * 115M scores are shared out (bench/run.sh: the metrics of COMPRISE).
 */
#define READ_PARTS_MAX 64

struct read_job {
	int fd;
	size_t off;
	int itemsize;
	size_t count, parts;
	double *data;
	int fail[READ_PARTS_MAX];   /* -1 read error, 1 file shrank */
	int err_no[READ_PARTS_MAX];
};

static ssize_t pread_full(int fd, void *p, size_t n, off_t at)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)p + got, n - got, at + (off_t)got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static int read_part(void *arg, size_t p)
{
	struct read_job *j = arg;
	size_t lo = j->count * p / j->parts, hi = j->count * (p + 1) / j->parts;
	size_t isz = (size_t)j->itemsize;
	if (isz == 8 && host_is_le()) {
		ssize_t got = pread_full(j->fd, j->data + lo, (hi - lo) * 8, (off_t)(j->off + lo * 8));
		if (got < 0 || (size_t)got != (hi - lo) * 8) {
			j->fail[p] = got < 0 ? -1 : 1;
			j->err_no[p] = errno;
		}
		return 0;
	}
	size_t per = ((size_t)1 << 20) / isz;
	unsigned char *chunk = xmalloc((size_t)1 << 20);
	for (size_t i = lo; i < hi; i += per) {
		size_t k = hi - i < per ? hi - i : per;
		ssize_t got = pread_full(j->fd, chunk, k * isz, (off_t)(j->off + i * isz));
		if (got < 0 || (size_t)got != k * isz) {
			j->fail[p] = got < 0 ? -1 : 1;
			j->err_no[p] = errno;
			break;
		}
		convert(j->data + i, chunk, k, j->itemsize);
	}
	free(chunk);
	return 0;
}

int vpa_npy_read(const char *path, struct vpa_npy *out, struct vpa_err *err)
{
	return vpa_npy_read_threads(path, out, 1, err);
}

int vpa_npy_read_threads(const char *path, struct vpa_npy *out, int threads,
			 struct vpa_err *err)
{
	struct vpa_loc loc = {path, 0, 0};
	unsigned char *hbuf = NULL;
	struct npy_hdr hd;
	struct stat st;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return vpa_fail(err, VPA_EIO, &loc, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		/* A pipe or a device: read it all, then parse from memory. */
		close(fd);
		fd = -1;
		char *d;
		size_t n;
		if ((rc = vpa_read_file(path, &d, &n, err)))
			goto out;
		rc = vpa_npy_parse(path, (const unsigned char *)d, n, out, err);
		free(d);
		goto out;
	}
	/* The header: the 12-byte prefix, then the dict. */
	unsigned char pre[12];
	ssize_t got = read_full(fd, pre, sizeof(pre));
	if (got < 0) {
		rc = vpa_fail(err, VPA_EIO, &loc, "read error: %s", strerror(errno));
		goto out;
	}
	size_t hl = (size_t)got;
	if (hl >= 10 && !memcmp(pre, NPY_MAGIC, 6) && pre[6] >= 1 && pre[6] <= 3) {
		size_t p0 = pre[6] == 1 ? 10 : 12;
		size_t hlen = pre[6] == 1 ? ((size_t)pre[8] | (size_t)pre[9] << 8)
					  : ((size_t)pre[8] | (size_t)pre[9] << 8 |
					     (size_t)pre[10] << 16 | (size_t)pre[11] << 24);
		size_t want = p0 + hlen; /* the prefix and the dict */
		if (want > (size_t)st.st_size)
			want = (size_t)st.st_size; /* truncated: parse_header says so */
		if (want > hl) {
			hbuf = xmalloc(want);
			memcpy(hbuf, pre, hl);
			got = read_full(fd, hbuf + hl, want - hl);
			if (got < 0) {
				rc = vpa_fail(err, VPA_EIO, &loc, "read error: %s",
					      strerror(errno));
				goto out;
			}
			hl += (size_t)got;
		}
	}
	if ((rc = parse_header(path, hbuf ? hbuf : pre, hl, &hd, 0, err)))
		goto out;
	size_t avail = (size_t)st.st_size >= hd.off ? (size_t)st.st_size - hd.off : 0;
	if ((rc = size_check(path, &hd, avail, err)))
		goto out;
	out->data = xmalloc(xmul(hd.count, sizeof(double)));
	struct read_job rj = {fd, hd.off, hd.itemsize, hd.count, 1, out->data, {0}, {0}};
	rj.parts = threads > 1 && hd.count >= ((size_t)1 << 20) ? (size_t)threads : 1;
	if (rj.parts > READ_PARTS_MAX)
		rj.parts = READ_PARTS_MAX;
	vpa_par_jobs(rj.parts, threads, read_part, &rj, NULL, NULL);
	for (size_t p = 0; p < rj.parts; p++)
		if (rj.fail[p]) { /* the first failing part in file order is reported */
			got = rj.fail[p] < 0 ? -1 : 0;
			errno = rj.err_no[p];
			goto read_error;
		}
	fill_out(&hd, out);
	rc = 0;
	goto out;
read_error:
	if (got < 0)
		rc = vpa_fail(err, VPA_EIO, &loc, "read error: %s", strerror(errno));
	else
		rc = vpa_fail(err, VPA_EIO, &loc, "file shrank while reading");
	vpa_npy_release(out);
out:
	if (fd >= 0)
		close(fd);
	free(hbuf);
	if (!rc)
		vpa_input_note(path, NULL, 0); /* hashed by reading it again */
	return rc;
}

/* ------------------------------------------------------------ writing */

int vpa_npy_write(const char *path, const double *data, size_t ndim, const size_t *shape,
		  struct vpa_err *err)
{
	if (ndim != 1 && ndim != 2)
		VPA_BUG("vpa_npy_write: ndim %zu", ndim);
	struct vpa_buf h;
	vpa_buf_init(&h);
	if (ndim == 1)
		vpa_buf_printf(&h, "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu,), }",
			       shape[0]);
	else
		vpa_buf_printf(&h,
			       "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu, %zu), }",
			       shape[0], shape[1]);
	/* Pad with spaces so that the data starts on a multiple of 64; end '\n'. */
	size_t total = 10 + h.len + 1;
	size_t pad = (64 - total % 64) % 64;
	for (size_t i = 0; i < pad; i++)
		vpa_buf_add(&h, " ", 1);
	vpa_buf_add(&h, "\n", 1);
	size_t count = ndim == 1 ? shape[0] : xmul(shape[0], shape[1]);
	struct vpa_atomic a;
	FILE *f = vpa_atomic_open(path, &a, err);
	if (!f) {
		vpa_buf_release(&h);
		return VPA_EIO;
	}
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
				 (unsigned char)(h.len & 0xff), (unsigned char)(h.len >> 8)};
	fwrite(pre, 1, sizeof(pre), f);
	fwrite(h.data, 1, h.len, f);
	if (host_is_le()) {
		fwrite(data, sizeof(double), count, f);
	} else {
		for (size_t i = 0; i < count; i++) {
			uint64_t u;
			unsigned char b[8];
			memcpy(&u, &data[i], 8);
			for (int j = 0; j < 8; j++)
				b[j] = (unsigned char)(u >> (8 * j));
			fwrite(b, 1, 8, f);
		}
	}
	vpa_buf_release(&h);
	return vpa_atomic_commit(&a, err);
}

/* ------------------------------------------------------------ N-D arrays */

void vpa_npy_nd_release(struct vpa_npy_nd *a)
{
	free(a->data);
	memset(a, 0, sizeof(*a));
}

int vpa_npy_parse_nd(const char *name, const unsigned char *buf, size_t len,
		     struct vpa_npy_nd *out, struct vpa_err *err)
{
	struct npy_hdr hd;
	memset(out, 0, sizeof(*out));
	if (!host_is_le())
		VPA_BUG("vpa_npy_parse_nd: big-endian host");
	int rc = parse_header(name, buf, len, &hd, 1, err);
	if (rc)
		return rc;
	if ((rc = size_check(name, &hd, len - hd.off, err)))
		return rc;
	out->kind = hd.kind;
	out->itemsize = hd.itemsize;
	out->ndim = hd.ndim;
	memcpy(out->shape, hd.dims, sizeof(out->shape));
	out->data = xmalloc(hd.nbytes ? hd.nbytes : 1);
	if (hd.nbytes)
		memcpy(out->data, buf + hd.off, hd.nbytes);
	if (hd.kind == 'b')
		for (size_t i = 0; i < hd.count; i++)
			((unsigned char *)out->data)[i] = ((unsigned char *)out->data)[i] != 0;
	return 0;
}

int vpa_npy_read_nd(const char *path, struct vpa_npy_nd *out, struct vpa_err *err)
{
	char *d;
	size_t n;
	memset(out, 0, sizeof(*out));
	int rc = vpa_read_file(path, &d, &n, err);
	if (rc)
		return rc;
	rc = vpa_npy_parse_nd(path, (const unsigned char *)d, n, out, err);
	free(d);
	return rc;
}

int vpa_npy_write_nd(const char *path, char kind, int itemsize, const void *data, size_t ndim,
		     const size_t *shape, struct vpa_err *err)
{
	if (ndim > VPA_NPY_MAX_DIMS || !host_is_le())
		VPA_BUG("vpa_npy_write_nd: ndim %zu", ndim);
	struct vpa_buf h;
	vpa_buf_init(&h);
	vpa_buf_printf(&h, "{'descr': '%c%c%d', 'fortran_order': False, 'shape': (",
		       itemsize == 1 ? '|' : '<', kind, itemsize);
	size_t count = 1;
	for (size_t i = 0; i < ndim; i++) {
		vpa_buf_printf(&h, "%s%zu", i ? ", " : "", shape[i]);
		count = xmul(count, shape[i]);
	}
	vpa_buf_printf(&h, "%s), }", ndim == 1 ? "," : "");
	size_t total = 10 + h.len + 1;
	size_t pad = (64 - total % 64) % 64;
	for (size_t i = 0; i < pad; i++)
		vpa_buf_add(&h, " ", 1);
	vpa_buf_add(&h, "\n", 1);
	struct vpa_atomic a;
	FILE *f = vpa_atomic_open(path, &a, err);
	if (!f) {
		vpa_buf_release(&h);
		return VPA_EIO;
	}
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
				 (unsigned char)(h.len & 0xff), (unsigned char)(h.len >> 8)};
	fwrite(pre, 1, sizeof(pre), f);
	fwrite(h.data, 1, h.len, f);
	if (count)
		fwrite(data, (size_t)itemsize, count, f);
	vpa_buf_release(&h);
	return vpa_atomic_commit(&a, err);
}
