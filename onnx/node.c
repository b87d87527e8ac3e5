/*
 * onnx/node.c - what an operator reads of its node and how it fails: the
 * attribute accessors, the messages naming the node (ox_check_fail at load
 * time, ox_fail during a run), axis normalisation, broadcasting of shapes,
 * and which nodes read their inputs' data, not only dims.  They lived in
 * load.c and run.c, which made every ops_*.c call back up into the loader
 * and the runner (and fuse.c into run.c); here they
 * sit below all of them: load.c, fuse.c and every ops_*.c call this file,
 * and it calls only tensor.c (shape strings).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx/internal.h"

int ox_check_fail(const char *file, const struct ox_node *n, int64_t opset, struct vpa_err *err,
		  const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct vpa_loc loc = {file, 0, 0};
	return vpa_fail(err, VPA_EINPUT, &loc, "node '%.100s' (%.60s, opset %lld): %s", n->name,
			n->op_type, (long long)opset, msg);
}

int ox_fail(struct ox_ctx *c, const char *fmt, ...)
{
	char msg[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct vpa_loc loc = {c->m->name, 0, 0};
	return vpa_fail(c->err, VPA_EINPUT, &loc, "node '%s' (%s): %s", c->node->name,
			c->node->op_type, msg);
}

const struct ox_attr *ox_attr(const struct ox_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_attr; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

int64_t ox_attr_i(const struct ox_node *n, const char *name, int64_t def)
{
	const struct ox_attr *a = ox_attr(n, name);
	return a && a->type == OX_A_INT ? a->i : def;
}

float ox_attr_f(const struct ox_node *n, const char *name, float def)
{
	const struct ox_attr *a = ox_attr(n, name);
	return a && a->type == OX_A_FLOAT ? a->f : def;
}

const char *ox_attr_s(const struct ox_node *n, const char *name, const char *def)
{
	const struct ox_attr *a = ox_attr(n, name);
	return a && a->type == OX_A_STRING ? a->s : def;
}

const int64_t *ox_attr_ints(const struct ox_node *n, const char *name, size_t *cnt)
{
	const struct ox_attr *a = ox_attr(n, name);
	if (!a || a->type != OX_A_INTS) {
		*cnt = 0;
		return NULL;
	}
	*cnt = a->n;
	return a->ints;
}

int ox_axis(struct ox_ctx *c, int64_t axis, size_t rank)
{
	int64_t r = (int64_t)rank;
	if (axis < -r || axis >= r) {
		ox_fail(c, "axis %lld out of range for rank %zu", (long long)axis, rank);
		return -1;
	}
	return (int)(axis < 0 ? axis + r : axis);
}

int ox_broadcast(struct ox_ctx *c, size_t na, const int64_t *a, size_t nb, const int64_t *b,
		 size_t *nout, int64_t *out)
{
	size_t n = na > nb ? na : nb;
	for (size_t i = 0; i < n; i++) {
		int64_t da = i < n - na ? 1 : a[i - (n - na)];
		int64_t db = i < n - nb ? 1 : b[i - (n - nb)];
		if (da != db && da != 1 && db != 1) {
			char sa[128], sb[128];
			vpa_onnx_shape_str(sa, sizeof(sa), na, a);
			vpa_onnx_shape_str(sb, sizeof(sb), nb, b);
			return ox_fail(c, "shapes %s and %s cannot be broadcast", sa, sb);
		}
		out[i] = da == 1 ? db : da;
	}
	*nout = n;
	return 0;
}

int ox_reads_data(const struct ox_node *n)
{
	return strcmp(n->op_type, "Shape") && strcmp(n->op_type, "Size");
}
