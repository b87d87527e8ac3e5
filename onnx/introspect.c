/*
 * onnx/introspect.c - looking into a model without Python: every value's
 * shape for given inputs (a recorded run, run.c's shape recorder) and the
 * values nearest to a mistyped name.
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

/* Levenshtein distance (insertions, deletions, substitutions), two rows. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *prev = xmalloc((lb + 1) * sizeof(size_t)), *cur = xmalloc((lb + 1) * sizeof(size_t));
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		size_t *t = prev;
		prev = cur;
		cur = t;
	}
	size_t d = prev[lb];
	free(prev);
	free(cur);
	return d;
}

const char *vpa_onnx_nearest_values(const struct vpa_onnx_model *m, const char *name, char *buf,
				    size_t cap)
{
	enum { K = 3 };
	size_t best[K], bd[K], nb = 0;
	if (cap)
		buf[0] = '\0';
	for (size_t v = 0; v < m->n_values; v++) {
		if (m->values[v].kind == OX_V_INIT) /* parameters: not what a layer name means */
			continue;
		/* names up to 512 characters compared (a longer one is no typo of a short one) */
		if (strlen(m->values[v].name) > 512 || strlen(name) > 512)
			continue;
		size_t d = edit_distance(name, m->values[v].name), k = nb < K ? nb++ : K;
		/* insertion into the sorted top K; equal distances keep graph order */
		while (k > 0 && bd[k - 1] > d) {
			if (k < K) {
				best[k] = best[k - 1];
				bd[k] = bd[k - 1];
			}
			k--;
		}
		if (k < K) {
			best[k] = v;
			bd[k] = d;
		}
	}
	size_t off = 0;
	for (size_t i = 0; i < nb && off < cap; i++)
		off += (size_t)snprintf(buf + off, cap - off, "%s'%s'%s", i ? ", " : " (nearest: ",
					m->values[best[i]].name, i + 1 == nb ? ")" : "");
	return buf;
}
