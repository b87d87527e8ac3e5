/*
 * onnx/tensor.c - tensors: element types, allocation, and decoding a
 * TensorProto (raw_data little-endian bytes or the typed repeated fields;
 * external data files) with every count checked against the shape.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "formats/io.h"
#include "onnx/internal.h"
#include "onnx/onnx.pb-c.h"

size_t vpa_onnx_dtype_size(int dtype)
{
	switch (dtype) {
	case VPA_ONNX_FLOAT: case VPA_ONNX_INT32: return 4;
	case VPA_ONNX_INT64: case VPA_ONNX_DOUBLE: return 8;
	case VPA_ONNX_UINT8: case VPA_ONNX_INT8: case VPA_ONNX_BOOL: return 1;
	default: return 0;
	}
}

const char *vpa_onnx_dtype_name(int dtype)
{
	static const char *names[] = {"undefined", "float32", "uint8", "int8", "uint16", "int16",
				      "int32", "int64", "string", "bool", "float16", "float64",
				      "uint32", "uint64", "complex64", "complex128", "bfloat16"};
	if (dtype >= 0 && dtype < (int)(sizeof(names) / sizeof(names[0])))
		return names[dtype];
	return "unknown";
}

size_t vpa_onnx_numel(const struct vpa_onnx_tensor *t)
{
	size_t n = 1;
	for (size_t i = 0; i < t->ndim; i++)
		n = xmul(n, (size_t)t->dims[i]);
	return n;
}

struct vpa_onnx_tensor vpa_onnx_tensor_f32(size_t ndim, const int64_t *dims, const float *data)
{
	struct vpa_onnx_tensor t;
	memset(&t, 0, sizeof(t));
	if (ndim > VPA_ONNX_MAX_DIMS)
		VPA_BUG("vpa_onnx_tensor_f32: %zu dims", ndim);
	t.dtype = VPA_ONNX_FLOAT;
	t.ndim = ndim;
	if (ndim)
		memcpy(t.dims, dims, ndim * sizeof(int64_t));
	t.data = (void *)data;
	return t;
}

void vpa_onnx_tensor_release(struct vpa_onnx_tensor *t)
{
	if (!t)
		return;
	if (!ox_plan_note_free(t->data))
		free(t->data);
	memset(t, 0, sizeof(*t));
}

void vpa_onnx_shape_str(char *buf, size_t cap, size_t ndim, const int64_t *dims)
{
	size_t off = 0;
	if (cap == 0)
		return;
	buf[0] = '\0';
	off += (size_t)snprintf(buf + off, cap - off, "(");
	for (size_t i = 0; i < ndim && off < cap; i++)
		off += (size_t)snprintf(buf + off, cap - off, "%s%lld", i ? ", " : "",
					(long long)dims[i]);
	if (off < cap)
		snprintf(buf + off, cap - off, "%s)", ndim == 1 ? "," : "");
}

static _Thread_local struct ox_pool *tl_pool;

void ox_pool_begin(struct ox_pool *p)
{
	memset(p, 0, sizeof(*p));
	tl_pool = p;
}

void ox_pool_end(struct ox_pool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->ptr[i]);
	free(p->ptr);
	free(p->bytes);
	free(p->put);
	memset(p, 0, sizeof(*p));
	tl_pool = NULL;
}

static void pool_add(struct ox_pool *p, void *ptr, size_t n)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 32;
		p->ptr = xrealloc(p->ptr, p->cap * sizeof(void *));
		p->bytes = xrealloc(p->bytes, p->cap * sizeof(size_t));
		p->put = xrealloc(p->put, p->cap);
	}
	p->ptr[p->n] = ptr;
	p->put[p->n] = 1;
	p->bytes[p->n++] = n ? n : 1;
}

void ox_pool_put(struct vpa_onnx_tensor *t)
{
	struct ox_pool *p = tl_pool;
	if (!p || !t->data) {
		vpa_onnx_tensor_release(t);
		return;
	}
	if (ox_plan_note_free(t->data)) {
		memset(t, 0, sizeof(*t));
		return;
	}
	pool_add(p, t->data, vpa_onnx_numel(t) * vpa_onnx_dtype_size(t->dtype));
	memset(t, 0, sizeof(*t));
}

struct ox_pool_cache {
	pthread_mutex_t lock;
	size_t n;
	struct ox_pool pools[OX_POOL_CACHE];
};

struct ox_pool_cache *ox_pool_cache_new(void)
{
	struct ox_pool_cache *pc = xcalloc(1, sizeof(*pc));
	pthread_mutex_init(&pc->lock, NULL);
	return pc;
}

void ox_pool_cache_free(struct ox_pool_cache *pc)
{
	if (!pc)
		return;
	for (size_t i = 0; i < pc->n; i++) {
		struct ox_pool *p = &pc->pools[i];
		for (size_t j = 0; j < p->n; j++)
			free(p->ptr[j]);
		free(p->ptr);
		free(p->bytes);
		free(p->put);
	}
	pthread_mutex_destroy(&pc->lock);
	free(pc);
}

void ox_pool_begin_cached(struct ox_pool_cache *pc, struct ox_pool *p)
{
	ox_pool_begin(p);
	pthread_mutex_lock(&pc->lock);
	if (pc->n)
		*p = pc->pools[--pc->n];
	pthread_mutex_unlock(&pc->lock);
	if (p->n)
		memset(p->put, 0, p->n);
}

void ox_pool_end_cached(struct ox_pool_cache *pc, struct ox_pool *p)
{
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->put[i]) {
			p->ptr[k] = p->ptr[i];
			p->bytes[k] = p->bytes[i];
			p->put[k++] = 1;
		} else {
			free(p->ptr[i]);
		}
	p->n = k;
	pthread_mutex_lock(&pc->lock);
	int kept = pc->n < OX_POOL_CACHE;
	if (kept)
		pc->pools[pc->n++] = *p;
	pthread_mutex_unlock(&pc->lock);
	if (kept) {
		memset(p, 0, sizeof(*p));
		tl_pool = NULL;
	} else {
		ox_pool_end(p);
	}
}

/* The smallest pooled block of at least n bytes (and at most 2n + 64 KiB), or NULL. */
static void *pool_take(size_t n)
{
	struct ox_pool *p = tl_pool;
	size_t best = (size_t)-1;
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n; i++)
		if (p->bytes[i] >= n && p->bytes[i] <= 2 * n + 65536 &&
		    (best == (size_t)-1 || p->bytes[i] < p->bytes[best]))
			best = i;
	if (best == (size_t)-1)
		return NULL;
	void *d = p->ptr[best];
	p->ptr[best] = p->ptr[--p->n];
	p->bytes[best] = p->bytes[p->n];
	p->put[best] = p->put[p->n];
	return d;
}

static void alloc_tensor(struct vpa_onnx_tensor *t, int dtype, size_t ndim,
			 const int64_t *dims, int zero)
{
	size_t es = vpa_onnx_dtype_size(dtype);
	if (!es || ndim > VPA_ONNX_MAX_DIMS)
		VPA_BUG("ox_alloc: dtype %d ndim %zu", dtype, ndim);
	memset(t, 0, sizeof(*t));
	t->dtype = dtype;
	t->ndim = ndim;
	for (size_t i = 0; i < ndim; i++) {
		if (dims[i] < 0)
			VPA_BUG("ox_alloc: negative dimension");
		t->dims[i] = dims[i];
	}
	size_t n = vpa_onnx_numel(t), bytes = xmul(n ? n : 1, es);
	t->data = ox_plan_alloc(bytes);
	if (t->data) {
		if (zero)
			memset(t->data, 0, bytes);
		return;
	}
	t->data = pool_take(bytes);
	if (t->data && zero)
		memset(t->data, 0, bytes);
	else if (!t->data)
		t->data = zero ? xcalloc(n ? n : 1, es) : xmalloc(bytes);
	ox_plan_note_alloc(t->data, bytes);
}

void ox_alloc(struct vpa_onnx_tensor *t, int dtype, size_t ndim, const int64_t *dims)
{
	alloc_tensor(t, dtype, ndim, dims, 1);
}

void ox_alloc_raw(struct vpa_onnx_tensor *t, int dtype, size_t ndim, const int64_t *dims)
{
	alloc_tensor(t, dtype, ndim, dims, 0);
}

void *ox_scratch(size_t bytes)
{
	void *d = ox_plan_alloc(bytes ? bytes : 1);
	if (d)
		return d;
	d = pool_take(bytes ? bytes : 1);
	if (!d)
		d = xmalloc(bytes ? bytes : 1);
	ox_plan_note_alloc(d, bytes ? bytes : 1);
	return d;
}

void ox_scratch_put(void *ptr, size_t bytes)
{
	if (!ptr || ox_plan_note_free(ptr))
		return;
	if (tl_pool)
		pool_add(tl_pool, ptr, bytes);
	else
		free(ptr);
}

void ox_copy(struct vpa_onnx_tensor *dst, const struct vpa_onnx_tensor *src)
{
	ox_alloc(dst, src->dtype, src->ndim, src->dims);
	memcpy(dst->data, src->data, vpa_onnx_numel(src) * vpa_onnx_dtype_size(src->dtype));
}

int64_t ox_geti(const struct vpa_onnx_tensor *t, size_t i)
{
	switch (t->dtype) {
	case VPA_ONNX_INT64: return ((const int64_t *)t->data)[i];
	case VPA_ONNX_INT32: return ((const int32_t *)t->data)[i];
	case VPA_ONNX_INT8: return ((const int8_t *)t->data)[i];
	case VPA_ONNX_UINT8: case VPA_ONNX_BOOL: return ((const uint8_t *)t->data)[i];
	default: VPA_BUG("ox_geti on %s", vpa_onnx_dtype_name(t->dtype));
	}
}

double ox_getd(const struct vpa_onnx_tensor *t, size_t i)
{
	switch (t->dtype) {
	case VPA_ONNX_FLOAT: return ((const float *)t->data)[i];
	case VPA_ONNX_DOUBLE: return ((const double *)t->data)[i];
	case VPA_ONNX_INT64: return (double)((const int64_t *)t->data)[i];
	default: return (double)ox_geti(t, i);
	}
}

void ox_setd(struct vpa_onnx_tensor *t, size_t i, double v)
{
	switch (t->dtype) {
	case VPA_ONNX_FLOAT: ((float *)t->data)[i] = (float)v; break;
	case VPA_ONNX_DOUBLE: ((double *)t->data)[i] = v; break;
	case VPA_ONNX_INT64: ((int64_t *)t->data)[i] = (int64_t)v; break;
	case VPA_ONNX_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
	case VPA_ONNX_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
	case VPA_ONNX_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
	case VPA_ONNX_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
	default: VPA_BUG("ox_setd on %s", vpa_onnx_dtype_name(t->dtype));
	}
}

/* ------------------------------------------------------------ decoding */

/*
 * Open location (relative, '/'-separated) under dir for reading without
 * following a symbolic link at any component (openat + O_NOFOLLOW from the
 * model's folder; ".." refused with EACCES), so that a link planted in a
 * model archive (weights.bin -> /etc/passwd, sub -> /) cannot take the read
 * out of the folder; ELOOP when a component is a link.  O_NONBLOCK: a FIFO
 * opens at once (and is then refused as not a regular file) rather than
 * blocking until a writer comes.  Returns the fd or -1 with errno.
 */
static int open_beneath(const char *dir, const char *location)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *copy = xstrdup(location), *save = NULL;
	int fd = -1, e = 0;
	if (dfd < 0) {
		e = errno;
		goto out;
	}
	char *comp = strtok_r(copy, "/", &save);
	while (comp) {
		char *next = strtok_r(NULL, "/", &save);
		if (!strcmp(comp, "..")) {
			e = EACCES;
			goto out;
		}
		if (!next) {
			fd = openat(dfd, comp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			e = errno;
			goto out;
		}
		if (strcmp(comp, ".")) {
			int sub = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				/* a link to a folder gives ENOTDIR with O_DIRECTORY on some kernels */
				struct stat st;
				e = errno == ENOTDIR && fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
					    S_ISLNK(st.st_mode) ? ELOOP : errno;
				goto out;
			}
			close(dfd);
			dfd = sub;
		}
		comp = next;
	}
	e = ENOENT; /* only separators */
out:
	if (dfd >= 0)
		close(dfd);
	free(copy);
	errno = e;
	return fd;
}

/* pread() all of n bytes at off: 0, or -1 (error or end of file first). */
static int pread_full(int fd, void *p, size_t n, off_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)p + got, n - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* Read `length` bytes at `offset` of an external data file. */
static int read_external(const char *file, const char *what, const Onnx__TensorProto *tp,
			 const char *dir, void **dst, size_t nbytes, struct vpa_err *err)
{
	struct vpa_loc loc = {file, 0, 0};
	const char *location = NULL;
	long long offset = 0, length = -1;
	for (size_t i = 0; i < tp->n_external_data; i++) {
		const char *k = tp->external_data[i]->key, *v = tp->external_data[i]->value;
		if (!k || !v)
			continue;
		char *end;
		if (!strcmp(k, "location")) {
			location = v;
		} else if (!strcmp(k, "offset") || !strcmp(k, "length")) {
			errno = 0;
			long long x = strtoll(v, &end, 10);
			if (errno || end == v || *end || x < 0)
				return vpa_fail(err, VPA_EINPUT, &loc,
						"tensor '%s': external data %s '%.40s' is not a "
						"non-negative integer", what, k, v);
			if (!strcmp(k, "offset"))
				offset = x;
			else
				length = x;
		}
	}
	if (!location || !*location)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"tensor '%s': external data without a 'location'", what);
	if (!dir)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"tensor '%s': external data '%s' not allowed here", what, location);
	size_t ll = strlen(location);
	if (location[0] == '/' || !strncmp(location, "../", 3) || strstr(location, "/../") ||
	    !strcmp(location, "..") || (ll >= 3 && !strcmp(location + ll - 3, "/..")))
		return vpa_fail(err, VPA_EINPUT, &loc,
				"tensor '%s': external data location '%s' must be a path inside "
				"the model's folder", what, location);
	if (length >= 0 && (unsigned long long)length != nbytes)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"tensor '%s': external data length %lld does not match its shape "
				"(%zu bytes)", what, length, nbytes);
	struct vpa_buf path;
	vpa_buf_init(&path);
	vpa_buf_printf(&path, "%s/%s", dir, location);
	int rc = 0, fd = open_beneath(dir, location);
	struct stat st;
	if (fd < 0) {
		if (errno == ELOOP)
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "tensor '%s': external data '%s' goes through a symbolic link "
				      "(not followed: expected a regular file inside the model's folder)",
				      what, path.data);
		else
			rc = vpa_fail(err, VPA_EIO, &loc,
				      "tensor '%s': cannot open external data '%s': %s", what,
				      path.data, strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "tensor '%s': external data '%s' is not a regular file", what,
			      path.data);
	} else if ((unsigned long long)st.st_size < (unsigned long long)offset ||
		   (unsigned long long)st.st_size - (unsigned long long)offset < nbytes) {
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "tensor '%s': external data '%s' is shorter than offset %lld + %zu "
			      "bytes", what, path.data, offset, nbytes);
	} else if (!(*dst = malloc(nbytes ? nbytes : 1))) {
		rc = vpa_fail(err, VPA_ENOMEM, &loc, "tensor '%s': out of memory for %zu bytes",
			      what, nbytes);
	} else if (pread_full(fd, *dst, nbytes, (off_t)offset) != 0) {
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "tensor '%s': external data '%s' is shorter than offset %lld + %zu "
			      "bytes", what, path.data, offset, nbytes);
	}
	close(fd);
out:
	vpa_buf_release(&path);
	return rc;
}

int ox_tensor_from_proto(const char *file, const char *what, const void *proto,
			 const char *dir, struct vpa_onnx_tensor *out, struct vpa_err *err)
{
	const Onnx__TensorProto *tp = proto;
	struct vpa_loc loc = {file, 0, 0};
	memset(out, 0, sizeof(*out));
	int dt = tp->has_data_type ? tp->data_type : 0;
	size_t es = vpa_onnx_dtype_size(dt);
	if (!es)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"tensor '%s': unsupported element type %s (supported: float32, "
				"float64, int64, int32, int8, uint8, bool)", what,
				vpa_onnx_dtype_name(dt));
	if (tp->n_dims > VPA_ONNX_MAX_DIMS)
		return vpa_fail(err, VPA_EINPUT, &loc, "tensor '%s': %zu dimensions (at most %d)",
				what, tp->n_dims, VPA_ONNX_MAX_DIMS);
	if (tp->segment)
		return vpa_fail(err, VPA_EINPUT, &loc, "tensor '%s': segmented tensors are not "
				"supported", what);
	size_t n = 1;
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0 || (tp->dims[i] > 0 && n > ((size_t)1 << 40) / (size_t)tp->dims[i]))
			return vpa_fail(err, VPA_EINPUT, &loc,
					"tensor '%s': bad dimension %lld", what,
					(long long)tp->dims[i]);
		n *= (size_t)tp->dims[i];
	}
	size_t nbytes = n * es;
	size_t have;
	const char *field;
	int external = tp->has_data_location &&
		       tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	if (external) {
		have = n;
		field = "external data";
	} else if (tp->has_raw_data) {
		have = tp->raw_data.len / es;
		field = "raw_data";
		if (tp->raw_data.len % es)
			have = (size_t)-1;
	} else {
		switch (dt) {
		case VPA_ONNX_FLOAT: have = tp->n_float_data; field = "float_data"; break;
		case VPA_ONNX_DOUBLE: have = tp->n_double_data; field = "double_data"; break;
		case VPA_ONNX_INT64: have = tp->n_int64_data; field = "int64_data"; break;
		default: have = tp->n_int32_data; field = "int32_data"; break;
		}
	}
	if (have != n) {
		char s[128];
		int64_t d[VPA_ONNX_MAX_DIMS];
		for (size_t i = 0; i < tp->n_dims; i++)
			d[i] = tp->dims[i];
		vpa_onnx_shape_str(s, sizeof(s), tp->n_dims, d);
		if (have == (size_t)-1)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"tensor '%s': raw_data of %zu bytes is not a whole number of "
					"%s elements", what, tp->raw_data.len, vpa_onnx_dtype_name(dt));
		return vpa_fail(err, VPA_EINPUT, &loc,
				"tensor '%s': %s holds %zu values but the shape %s needs %zu", what,
				field, have, s, n);
	}
	out->dtype = dt;
	out->ndim = tp->n_dims;
	for (size_t i = 0; i < tp->n_dims; i++)
		out->dims[i] = tp->dims[i];
	if (external) {
		/* Allocated only once the file is known to hold the bytes. */
		int rc = read_external(file, what, tp, dir, &out->data, nbytes, err);
		if (rc) {
			vpa_onnx_tensor_release(out);
			return rc;
		}
		return 0;
	}
	out->data = xcalloc(n ? n : 1, es);
	if (tp->has_raw_data) {
		/* Little-endian on the wire; the hosts we build for are little-endian. */
		if (nbytes)
			memcpy(out->data, tp->raw_data.data, nbytes);
		if (dt == VPA_ONNX_BOOL)
			for (size_t i = 0; i < n; i++)
				((uint8_t *)out->data)[i] = ((uint8_t *)out->data)[i] != 0;
	} else {
		for (size_t i = 0; i < n; i++) {
			switch (dt) {
			case VPA_ONNX_FLOAT: ((float *)out->data)[i] = tp->float_data[i]; break;
			case VPA_ONNX_DOUBLE: ((double *)out->data)[i] = tp->double_data[i]; break;
			case VPA_ONNX_INT64: ((int64_t *)out->data)[i] = tp->int64_data[i]; break;
			case VPA_ONNX_INT32: ((int32_t *)out->data)[i] = tp->int32_data[i]; break;
			case VPA_ONNX_INT8: ((int8_t *)out->data)[i] = (int8_t)tp->int32_data[i]; break;
			case VPA_ONNX_UINT8: ((uint8_t *)out->data)[i] = (uint8_t)tp->int32_data[i]; break;
			case VPA_ONNX_BOOL: ((uint8_t *)out->data)[i] = tp->int32_data[i] != 0; break;
			}
		}
	}
	return 0;
}

int ox_tensor_check_finite(const char *file, const char *what, const struct vpa_onnx_tensor *t,
			   struct vpa_err *err)
{
	if (t->dtype != VPA_ONNX_FLOAT && t->dtype != VPA_ONNX_DOUBLE)
		return 0;
	size_t shape[VPA_ONNX_MAX_DIMS];
	for (size_t i = 0; i < t->ndim; i++)
		shape[i] = (size_t)t->dims[i];
	/*
	 * NaN is refused; +-inf is not (issue 30): exports of transformer models
	 * (NeMo's Conformer-CTC, torch masked_fill(-inf)) hold attention masks as
	 * -inf constants, whose softmax weight is exactly 0.  Issue 26 refused
	 * inf too; what it guarded against, NaN numbers printed with exit 0, is
	 * kept by refusing NaN in every output (`onnx run`, embed, classify and
	 * the CTC recogniser check what they read).
	 */
	return vpa_check_nan_nd(file, what, t->data, (int)vpa_onnx_dtype_size(t->dtype), t->ndim,
				shape, err);
}

int vpa_onnx_tensor_parse(const char *name, const void *buf, size_t len,
			  struct vpa_onnx_tensor *out, char **out_name, struct vpa_err *err)
{
	struct vpa_loc loc = {name, 0, 0};
	memset(out, 0, sizeof(*out));
	if (out_name)
		*out_name = NULL;
	Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);
	if (!tp)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"not a valid TensorProto (truncated or corrupt protobuf)");
	int rc = ox_tensor_from_proto(name, tp->name && *tp->name ? tp->name : "(unnamed)", tp,
				      NULL, out, err);
	if (!rc && out_name)
		*out_name = xstrdup(tp->name ? tp->name : "");
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return rc;
}
