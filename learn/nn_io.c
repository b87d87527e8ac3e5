/*
 * learn/nn_io.c - model folders: model.yaml (topology, parsed with libyaml)
 * and one .npy per tensor.  The format is documented in learn/NN.md.
 *
 * model.yaml is a small, strict subset: a mapping with `input_dim` (omitted
 * when the first layer is an embedding) and `layers`, a list of flat
 * mappings, each with a `kind` and that kind's keys.  Anything else is an
 * error located at the offending node (libyaml marks are 0-based: add 1).
 */
#include "learn/nn.h"
#include "learn/nn_internal.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "formats/io.h"

/* The keys each kind accepts besides kind and name (NULL-terminated). */
static const char *const kind_keys[VPA_NN_N_KINDS][4] = {
	[VPA_NN_DENSE] = {"out", NULL},
	[VPA_NN_TDNN] = {"out", "context", NULL},
	[VPA_NN_RELU] = {NULL},
	[VPA_NN_SIGMOID] = {NULL},
	[VPA_NN_TANH] = {NULL},
	[VPA_NN_BATCHNORM] = {"eps", "momentum", NULL},
	[VPA_NN_DROPOUT] = {"p", NULL},
	[VPA_NN_STATSPOOL] = {"variance_floor", NULL},
	[VPA_NN_EMBEDDING] = {"vocab", "dim", NULL},
	[VPA_NN_LSTM] = {"hidden", "reverse", NULL},
	[VPA_NN_BILSTM] = {"hidden", NULL},
};

struct yp {
	const char *name;
	yaml_document_t *doc;
	struct vpa_err *err;
};

static struct vpa_loc mark(const struct yp *y, const yaml_node_t *n)
{
	struct vpa_loc l = {y->name, (long)n->start_mark.line + 1, (long)n->start_mark.column + 1};
	return l;
}

static int yfail(const struct yp *y, const yaml_node_t *n, const char *fmt, const char *a,
		 const char *b)
{
	struct vpa_loc l = mark(y, n);
	char msg[512];
	snprintf(msg, sizeof(msg), fmt, a, b);
	return vpa_fail(y->err, VPA_EINPUT, &l, "%s", msg);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Quote a scalar for a message, shortened. */
static const char *shown(const yaml_node_t *n, char *buf, size_t sz)
{
	const char *s = scalar(n);
	if (!s)
		return n && n->type == YAML_SEQUENCE_NODE ? "a list" : "a mapping";
	snprintf(buf, sz, "'%.60s%s'", s, strlen(s) > 60 ? "..." : "");
	return buf;
}

static int get_size(const struct yp *y, const yaml_node_t *n, const char *key, size_t *out)
{
	const char *s = scalar(n);
	char b[80];
	if (s && *s >= '0' && *s <= '9') {
		char *e;
		errno = 0;
		unsigned long long v = strtoull(s, &e, 10);
		if (!*e && errno == 0 && v > 0 && v <= VPA_NN_MAX_DIM) {
			*out = (size_t)v;
			return 0;
		}
	}
	char what[64];
	snprintf(what, sizeof(what), "'%s'", key);
	return yfail(y, n, "%s must be an integer from 1 to 16777216, got %s", what,
		     shown(n, b, sizeof(b)));
}

static int get_int(const struct yp *y, const yaml_node_t *n, const char *key, int *out)
{
	const char *s = scalar(n);
	char b[80];
	if (s && *s) {
		char *e;
		errno = 0;
		long v = strtol(s, &e, 10);
		if (!*e && errno == 0 && v >= -1000 && v <= 1000) {
			*out = (int)v;
			return 0;
		}
	}
	char what[64];
	snprintf(what, sizeof(what), "'%s'", key);
	return yfail(y, n, "%s offsets must be integers from -1000 to 1000, got %s", what,
		     shown(n, b, sizeof(b)));
}

static int get_float(const struct yp *y, const yaml_node_t *n, const char *key, float *out)
{
	const char *s = scalar(n);
	char b[80];
	if (s && *s) {
		char *e;
		double v = strtod(s, &e);
		if (!*e && isfinite(v) && fabs(v) < 1e30) {
			*out = (float)v;
			return 0;
		}
	}
	char what[64];
	snprintf(what, sizeof(what), "'%s'", key);
	return yfail(y, n, "%s must be a number, got %s", what, shown(n, b, sizeof(b)));
}

static int get_bool(const struct yp *y, const yaml_node_t *n, const char *key, int *out)
{
	const char *s = scalar(n);
	char b[80];
	if (s && (!strcmp(s, "true") || !strcmp(s, "false"))) {
		*out = s[0] == 't';
		return 0;
	}
	char what[64];
	snprintf(what, sizeof(what), "'%s'", key);
	return yfail(y, n, "%s must be true or false, got %s", what, shown(n, b, sizeof(b)));
}

static void list_kinds(char *buf, size_t sz)
{
	size_t o = 0;
	buf[0] = 0;
	for (int k = 0; k < VPA_NN_N_KINDS && o < sz; k++)
		o += (size_t)snprintf(buf + o, sz - o, "%s%s", k ? ", " : "",
				      vpa_nn_kind_name((enum vpa_nn_kind)k));
}

static int parse_layer(const struct yp *y, const yaml_node_t *m, struct vpa_nn_layer_spec *s)
{
	char b[80], lst[256];
	if (m->type != YAML_MAPPING_NODE)
		return yfail(y, m, "expected a layer as a mapping such as {kind: dense, out: 512}, "
			     "got %s%s", shown(m, b, sizeof(b)), "");
	const yaml_node_t *kn = NULL;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *k = scalar(yaml_document_get_node(y->doc, p->key));
		if (k && !strcmp(k, "kind"))
			kn = yaml_document_get_node(y->doc, p->value);
	}
	if (!kn)
		return yfail(y, m, "layer has no 'kind'%s%s", "", "");
	const char *ks = scalar(kn);
	int kind = -1;
	for (int k = 0; ks && k < VPA_NN_N_KINDS; k++)
		if (!strcmp(ks, vpa_nn_kind_name((enum vpa_nn_kind)k)))
			kind = k;
	if (kind < 0) {
		list_kinds(lst, sizeof(lst));
		return yfail(y, kn, "unknown layer kind %s: expected one of %s",
			     shown(kn, b, sizeof(b)), lst);
	}
	vpa_nn_layer_spec_init(s, (enum vpa_nn_kind)kind);
	s->loc = mark(y, m);
	const char *const *keys = kind_keys[kind];
	int have_out = 0, have_ctx = 0, have_vocab = 0;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *kn2 = yaml_document_get_node(y->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
		const char *k = scalar(kn2);
		if (!k)
			return yfail(y, kn2, "expected a key, got %s%s", shown(kn2, b, sizeof(b)), "");
		for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++)
			if (!strcmp(scalar(yaml_document_get_node(y->doc, q->key)), k))
				return yfail(y, kn2, "duplicate key '%s'%s", k, "");
		int rc = 0;
		if (!strcmp(k, "kind")) {
			continue;
		} else if (!strcmp(k, "name")) {
			const char *nm = scalar(v);
			if (!nm || !*nm || strlen(nm) >= VPA_NN_NAME_MAX)
				return yfail(y, v, "'name' must be a short text, got %s%s",
					     shown(v, b, sizeof(b)), "");
			snprintf(s->name, sizeof(s->name), "%s", nm);
			continue;
		}
		size_t j = 0;
		while (keys[j] && strcmp(keys[j], k))
			j++;
		if (!keys[j]) {
			size_t o = (size_t)snprintf(lst, sizeof(lst), "kind, name");
			for (size_t q = 0; keys[q]; q++)
				o += (size_t)snprintf(lst + o, sizeof(lst) - o, ", %s", keys[q]);
			char what[160];
			snprintf(what, sizeof(what), "unknown key '%.60s' in a %s layer", k,
				 vpa_nn_kind_name((enum vpa_nn_kind)kind));
			return yfail(y, kn2, "%s: expected %s", what, lst);
		}
		if (!strcmp(k, "out") || !strcmp(k, "hidden") || !strcmp(k, "dim")) {
			rc = get_size(y, v, k, &s->out);
			have_out = 1;
		} else if (!strcmp(k, "vocab")) {
			rc = get_size(y, v, k, &s->vocab);
			have_vocab = 1;
		} else if (!strcmp(k, "context")) {
			if (v->type != YAML_SEQUENCE_NODE)
				return yfail(y, v, "'context' must be a list of offsets such as "
					     "[-1, 0, 1], got %s%s", shown(v, b, sizeof(b)), "");
			size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
			if (n == 0 || n > VPA_NN_MAX_CONTEXT)
				return yfail(y, v, "'context' must list 1 to 32 offsets%s%s", "", "");
			for (size_t q = 0; q < n && !rc; q++)
				rc = get_int(y, yaml_document_get_node(y->doc,
								       v->data.sequence.items.start[q]),
					     k, &s->context[q]);
			s->n_context = n;
			for (size_t q = 1; q < n && !rc; q++)
				if (s->context[q] <= s->context[q - 1])
					return yfail(y, v, "'context' must be strictly increasing%s%s",
						     "", "");
			have_ctx = 1;
		} else if (!strcmp(k, "p")) {
			rc = get_float(y, v, k, &s->p);
		} else if (!strcmp(k, "eps")) {
			rc = get_float(y, v, k, &s->eps);
		} else if (!strcmp(k, "momentum")) {
			rc = get_float(y, v, k, &s->momentum);
		} else if (!strcmp(k, "variance_floor")) {
			rc = get_float(y, v, k, &s->var_floor);
		} else if (!strcmp(k, "reverse")) {
			rc = get_bool(y, v, k, &s->reverse);
		}
		if (rc)
			return rc;
	}
	const char *kname = vpa_nn_kind_name((enum vpa_nn_kind)kind);
	if ((kind == VPA_NN_DENSE || kind == VPA_NN_TDNN) && !have_out)
		return yfail(y, m, "%s layer needs 'out'%s", kname, "");
	if ((kind == VPA_NN_LSTM || kind == VPA_NN_BILSTM) && !have_out)
		return yfail(y, m, "%s layer needs 'hidden'%s", kname, "");
	if (kind == VPA_NN_TDNN && !have_ctx)
		return yfail(y, m, "tdnn layer needs 'context'%s%s", "", "");
	if (kind == VPA_NN_EMBEDDING && (!have_out || !have_vocab))
		return yfail(y, m, "embedding layer needs 'vocab' and 'dim'%s%s", "", "");
	return 0;
}

int vpa_nn_parse_yaml(const char *name, const char *buf, size_t len, struct vpa_nn **out,
		      struct vpa_err *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct vpa_nn *net = NULL;
	int rc = 0, have_doc = 0;
	struct yp y = {name, &doc, err};
	*out = NULL;
	if (!yaml_parser_initialize(&parser))
		return vpa_fail(err, VPA_ENOMEM, NULL, "%s: out of memory (YAML parser)", name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		struct vpa_loc l = {name, (long)parser.problem_mark.line + 1,
				    (long)parser.problem_mark.column + 1};
		rc = vpa_fail(err, VPA_EINPUT, &l, "invalid YAML: %s%s%s",
			      parser.problem ? parser.problem : "parse error",
			      parser.context ? " " : "", parser.context ? parser.context : "");
		goto out;
	}
	have_doc = 1;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root) {
		struct vpa_loc l = {name, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &l, "empty model file: expected 'layers'");
		goto out;
	}
	if (root->type != YAML_MAPPING_NODE) {
		rc = yfail(&y, root, "expected a mapping with 'input_dim' and 'layers'%s%s", "", "");
		goto out;
	}
	size_t in_dim = 0;
	yaml_node_t *layers = NULL, *in_node = NULL;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *kn = yaml_document_get_node(&doc, p->key);
		yaml_node_t *v = yaml_document_get_node(&doc, p->value);
		const char *k = scalar(kn);
		char b[80];
		if (!k) {
			rc = yfail(&y, kn, "expected a key, got %s%s", shown(kn, b, sizeof(b)), "");
			goto out;
		}
		if (!strcmp(k, "input_dim")) {
			if (in_node) {
				rc = yfail(&y, kn, "duplicate key '%s'%s", k, "");
				goto out;
			}
			in_node = v;
			if ((rc = get_size(&y, v, k, &in_dim)))
				goto out;
		} else if (!strcmp(k, "layers")) {
			if (layers) {
				rc = yfail(&y, kn, "duplicate key '%s'%s", k, "");
				goto out;
			}
			layers = v;
			if (v->type != YAML_SEQUENCE_NODE ||
			    v->data.sequence.items.top == v->data.sequence.items.start) {
				rc = yfail(&y, v, "'layers' must be a non-empty list of layers%s%s", "",
					   "");
				goto out;
			}
		} else {
			rc = yfail(&y, kn, "unknown key '%.60s': expected input_dim, layers%s", k, "");
			goto out;
		}
	}
	if (!layers) {
		rc = yfail(&y, root, "missing key 'layers'%s%s", "", "");
		goto out;
	}
	net = vpa_nn_new(in_dim);
	for (yaml_node_item_t *it = layers->data.sequence.items.start;
	     it < layers->data.sequence.items.top; it++) {
		yaml_node_t *m = yaml_document_get_node(&doc, *it);
		struct vpa_nn_layer_spec s;
		if ((rc = parse_layer(&y, m, &s)))
			goto out;
		if (it == layers->data.sequence.items.start) {
			if (s.kind == VPA_NN_EMBEDDING && in_node) {
				rc = yfail(&y, in_node, "no 'input_dim' with an embedding as the first "
					   "layer (its input is token ids)%s%s", "", "");
				goto out;
			}
			if (s.kind != VPA_NN_EMBEDDING && !in_node) {
				rc = yfail(&y, root, "missing key 'input_dim'%s%s", "", "");
				goto out;
			}
		}
		if ((rc = vpa_nn_add(net, &s, err)))
			goto out;
	}
	/* the marks' file name is borrowed from the caller: keep line/col only */
	for (size_t i = 0; i < net->n; i++)
		net->L[i].s.loc.file = NULL;
	*out = net;
	net = NULL;
out:
	vpa_nn_free(net);
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

static void shape_str(char *b, size_t sz, size_t ndim, const size_t *shape)
{
	if (ndim == 1)
		snprintf(b, sz, "(%zu,)", shape[0]);
	else
		snprintf(b, sz, "(%zu, %zu)", shape[0], shape[1]);
}

/* Bytes in the .npy files of dir (regular files only). */
static unsigned long long npy_bytes(const char *dir)
{
	unsigned long long total = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l <= 4 || strcmp(e->d_name + l - 4, ".npy"))
			continue;
		struct vpa_buf p;
		vpa_buf_init(&p);
		vpa_buf_printf(&p, "%s/%s", dir, e->d_name);
		struct stat st;
		if (stat(vpa_buf_str(&p), &st) == 0 && S_ISREG(st.st_mode))
			total += (unsigned long long)st.st_size;
		vpa_buf_release(&p);
	}
	if (d)
		closedir(d);
	return total;
}

int vpa_nn_load(const char *dir, struct vpa_nn **out, struct vpa_err *err)
{
	struct vpa_buf path;
	char *text = NULL;
	size_t len;
	struct vpa_nn *net = NULL;
	int rc;
	vpa_buf_init(&path);
	*out = NULL;
	vpa_buf_printf(&path, "%s/model.yaml", dir);
	char *ypath = xstrdup(vpa_buf_str(&path));
	if ((rc = vpa_read_file(ypath, &text, &len, err)))
		goto out;
	if ((rc = vpa_nn_parse_yaml(ypath, text, len, &net, err)))
		goto out;
	/* The sizes in model.yaml are the user's (up to 2^24 per dimension): the
	 * parameters are allocated only when the tensor files can hold them (at
	 * least 4 bytes each), so a hostile or mistyped size is an error, not an
	 * allocation of terabytes. */
	unsigned long long have = npy_bytes(dir);
	if ((unsigned long long)net->np > have / 4) {
		struct vpa_loc yl = {ypath, 0, 0};
		rc = vpa_fail(err, VPA_EINPUT, &yl,
			      "the layers need %zu parameters but the tensor files (*.npy) of the "
			      "folder hold %llu bytes: missing or truncated tensor files, or a "
			      "wrong size in model.yaml", net->np, have);
		goto out;
	}
	nn_ensure(net);
	for (size_t i = 0; i < net->n; i++) {
		const struct vpa_nn_layer_spec *s = &net->L[i].s;
		for (size_t k = 0; k < vpa_nn_n_tensors(net, i); k++) {
			struct vpa_nn_tensor t;
			vpa_nn_tensor(net, i, k, &t);
			path.len = 0;
			vpa_buf_printf(&path, "%s/%s.%s.npy", dir, s->name, t.name);
			const char *p = vpa_buf_str(&path);
			struct vpa_loc fl = {p, 0, 0};
			char want[64], got[64];
			shape_str(want, sizeof(want), t.ndim, t.shape);
			struct stat st;
			if (stat(p, &st) != 0) {
				rc = vpa_fail(err, VPA_EINPUT, &fl,
					      "missing tensor file: expected '%s' of layer '%s' "
					      "(%s:%ld:%ld), shape %s",
					      t.name, s->name, ypath, s->loc.line, s->loc.col, want);
				goto out;
			}
			struct vpa_npy a;
			memset(&a, 0, sizeof(a));
			if ((rc = vpa_npy_read(p, &a, err)))
				goto out;
			shape_str(got, sizeof(got), a.ndim, a.shape);
			if (strcmp(want, got) != 0) {
				vpa_npy_release(&a);
				rc = vpa_fail(err, VPA_EINPUT, &fl,
					      "expected shape %s for tensor '%s' of layer '%s' "
					      "(%s:%ld:%ld), found %s",
					      want, t.name, s->name, ypath, s->loc.line, s->loc.col, got);
				goto out;
			}
			size_t n = t.shape[0] * (t.ndim == 2 ? t.shape[1] : 1);
			for (size_t j = 0; j < n; j++) {
				if (!isfinite(a.data[j]) || fabs(a.data[j]) > 3.4e38) {
					vpa_npy_release(&a);
					rc = vpa_fail(err, VPA_EINPUT, &fl,
						      "element %zu is not a finite float32 value", j);
					goto out;
				}
				t.data[j] = (float)a.data[j];
			}
			vpa_npy_release(&a);
		}
	}
	*out = net;
	net = NULL;
out:
	vpa_nn_free(net);
	free(text);
	free(ypath);
	vpa_buf_release(&path);
	return rc;
}

void vpa_nn_yaml(const struct vpa_nn *net, struct vpa_buf *b)
{
	vpa_buf_puts(b, "# vpaudit neural network: topology (tensors in <name>.<tensor>.npy); "
			"see learn/NN.md\n");
	if (net->n == 0 || net->L[0].s.kind != VPA_NN_EMBEDDING)
		vpa_buf_printf(b, "input_dim: %zu\n", net->in_dim);
	vpa_buf_puts(b, "layers:\n");
	for (size_t i = 0; i < net->n; i++) {
		const struct vpa_nn_layer_spec *s = &net->L[i].s;
		vpa_buf_printf(b, "  - kind: %s\n    name: %s\n", vpa_nn_kind_name(s->kind), s->name);
		switch (s->kind) {
		case VPA_NN_TDNN:
			vpa_buf_printf(b, "    out: %zu\n    context: [", s->out);
			for (size_t j = 0; j < s->n_context; j++)
				vpa_buf_printf(b, "%s%d", j ? ", " : "", s->context[j]);
			vpa_buf_puts(b, "]\n");
			break;
		case VPA_NN_DENSE:
			vpa_buf_printf(b, "    out: %zu\n", s->out);
			break;
		case VPA_NN_BATCHNORM:
			vpa_buf_printf(b, "    eps: %.9g\n    momentum: %.9g\n", (double)s->eps,
				       (double)s->momentum);
			break;
		case VPA_NN_DROPOUT:
			vpa_buf_printf(b, "    p: %.9g\n", (double)s->p);
			break;
		case VPA_NN_STATSPOOL:
			vpa_buf_printf(b, "    variance_floor: %.9g\n", (double)s->var_floor);
			break;
		case VPA_NN_EMBEDDING:
			vpa_buf_printf(b, "    vocab: %zu\n    dim: %zu\n", s->vocab, s->out);
			break;
		case VPA_NN_LSTM:
			vpa_buf_printf(b, "    hidden: %zu\n    reverse: %s\n", s->out,
				       s->reverse ? "true" : "false");
			break;
		case VPA_NN_BILSTM:
			vpa_buf_printf(b, "    hidden: %zu\n", s->out);
			break;
		default:
			break;
		}
	}
}

int vpa_nn_save(struct vpa_nn *net, const char *dir, struct vpa_err *err)
{
	struct vpa_buf path, y;
	struct vpa_atomic a;
	double *tmp = NULL;
	int rc;
	vpa_buf_init(&path);
	vpa_buf_init(&y);
	nn_ensure(net);
	if ((rc = vpa_mkdirs(dir, err)))
		goto out;
	for (size_t i = 0; i < net->n; i++) {
		for (size_t k = 0; k < vpa_nn_n_tensors(net, i); k++) {
			struct vpa_nn_tensor t;
			vpa_nn_tensor(net, i, k, &t);
			size_t n = t.shape[0] * (t.ndim == 2 ? t.shape[1] : 1);
			tmp = xrealloc(tmp, xmul(n + 1, sizeof(double)));
			for (size_t j = 0; j < n; j++)
				tmp[j] = t.data[j];
			path.len = 0;
			vpa_buf_printf(&path, "%s/%s.%s.npy", dir, net->L[i].s.name, t.name);
			if ((rc = vpa_npy_write(vpa_buf_str(&path), tmp, t.ndim, t.shape, err)))
				goto out;
		}
	}
	path.len = 0;
	vpa_buf_printf(&path, "%s/model.yaml", dir);
	vpa_nn_yaml(net, &y);
	FILE *f = vpa_atomic_open(vpa_buf_str(&path), &a, err);
	if (!f) {
		rc = err && err->status ? err->status : VPA_EIO;
		goto out;
	}
	if (fwrite(y.data, 1, y.len, f) != y.len) {
		vpa_atomic_abort(&a);
		struct vpa_loc l = {vpa_buf_str(&path), 0, 0};
		rc = vpa_fail(err, VPA_EIO, &l, "write error");
		goto out;
	}
	rc = vpa_atomic_commit(&a, err);
out:
	free(tmp);
	vpa_buf_release(&path);
	vpa_buf_release(&y);
	return rc;
}
