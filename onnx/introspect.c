/*
 * onnx/introspect.c - looking into a model without Python: every value's
 * shape for given inputs (a recorded run, run.c's shape recorder).  The
 * values nearest to a mistyped name are in names.c, below run.c, which
 * appends them to its "no value" error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/internal.h"

struct shapes {
	struct vpa_onnx_value_shape *v;
	size_t n, cap;
	const struct vpa_onnx_model *m;
};

static void record(void *arg, const struct ox_node *n, int value, const struct vpa_onnx_tensor *t)
{
	struct shapes *s = arg;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = xrealloc(s->v, xmul(s->cap, sizeof(*s->v)));
	}
	struct vpa_onnx_value_shape *e = &s->v[s->n++];
	memset(e, 0, sizeof(*e));
	e->name = s->m->values[value].name;
	e->op = n->op_type;
	e->node = n->name;
	e->dtype = t->dtype;
	e->ndim = t->ndim;
	memcpy(e->dims, t->dims, t->ndim * sizeof(int64_t));
}

int vpa_onnx_value_shapes(const struct vpa_onnx_model *m, size_t n_in,
			  const char *const *in_names, const struct vpa_onnx_tensor *inputs,
			  struct vpa_onnx_value_shape **out, size_t *n, struct vpa_err *err)
{
	*out = NULL;
	*n = 0;
	struct shapes s = {NULL, 0, 0, m};
	struct ox_shape_rec rec = {record, &s};
	/* the run must compute something: the graph outputs (every node runs anyway) */
	size_t no = m->n_outputs;
	const char **names = xcalloc(no + 1, sizeof(char *));
	struct vpa_onnx_tensor *outs = xcalloc(no + 1, sizeof(*outs));
	for (size_t j = 0; j < no; j++)
		names[j] = m->output_info[j].name;
	ox_shape_rec = &rec;
	int rc = vpa_onnx_run(m, n_in, in_names, inputs, no, names, outs, err);
	ox_shape_rec = NULL;
	for (size_t j = 0; j < no; j++)
		vpa_onnx_tensor_release(&outs[j]);
	free(outs);
	free(names);
	if (rc) {
		free(s.v);
		return rc;
	}
	*out = s.v;
	*n = s.n;
	return 0;
}
