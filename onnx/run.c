/*
 * onnx/run.c - running the graph: input checks, the nodes needed for the
 * requested values in topological order, each intermediate freed after its
 * last reader (liveness from load time), the per-operator profile.  The
 * helpers the operators share (attributes, messages naming the node, axes,
 * broadcasting) are in onnx/node.c, below this file and the operators.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/internal.h"

#include <pthread.h>

/* ---- the per-operator timer of vpa_onnx_profile */
#define PROF_MAX 128
static pthread_once_t prof_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;
static int prof_on;
static size_t prof_n;
static struct {
	const char *op; /* the operator table's name (static) */
	double sec, flops;
	unsigned long calls;
} prof[PROF_MAX];

static int prof_cmp(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	return prof[i].sec < prof[j].sec ? 1 : prof[i].sec > prof[j].sec ? -1 : 0;
}

/* VPA_ONNX_PROFILE=1: the table printed to stderr when the process exits. */
static void prof_print(void)
{
	size_t idx[PROF_MAX];
	double tot = 0;
	pthread_mutex_lock(&prof_lock);
	for (size_t i = 0; i < prof_n; i++) {
		idx[i] = i;
		tot += prof[i].sec;
	}
	qsort(idx, prof_n, sizeof(idx[0]), prof_cmp);
	fprintf(stderr, "vpa_onnx profile (VPA_ONNX_PROFILE=1): wall time per operator type, "
		"all runs and threads\n%-24s %10s %11s %6s %9s\n", "operator", "calls",
		"seconds", "share", "GFLOP/s");
	for (size_t k = 0; k < prof_n; k++) {
		size_t i = idx[k];
		fprintf(stderr, "%-24s %10lu %11.4f %5.1f%%", prof[i].op, prof[i].calls, prof[i].sec,
			tot > 0 ? 100 * prof[i].sec / tot : 0.0);
		if (prof[i].flops > 0 && prof[i].sec > 0)
			fprintf(stderr, " %9.1f", prof[i].flops / prof[i].sec / 1e9);
		fputc('\n', stderr);
	}
	fprintf(stderr, "%-24s %10s %11.4f\n", "total", "", tot);
	pthread_mutex_unlock(&prof_lock);
}

static void prof_init(void)
{
	const char *e = getenv("VPA_ONNX_PROFILE");
	prof_on = e && (!strcmp(e, "1") || !strcmp(e, "quiet"));
	if (prof_on && !strcmp(e, "1"))
		atexit(prof_print);
}

static void prof_add(const struct ox_node *n, const struct vpa_onnx_tensor *w, const struct vpa_onnx_tensor *out, double sec)
{
	double flops = 0;
	if (!strcmp(n->op_type, "Conv") && w && w->ndim >= 2 && w->dims[0] > 0 && out->data)
		flops = 2.0 * (double)vpa_onnx_numel(out) *
			((double)vpa_onnx_numel(w) / (double)w->dims[0]);
	pthread_mutex_lock(&prof_lock);
	size_t i = 0;
	while (i < prof_n && strcmp(prof[i].op, n->op_type))
		i++;
	if (i == prof_n && prof_n < PROF_MAX)
		prof[prof_n++].op = n->op->name;
	if (i < prof_n) {
		prof[i].sec += sec;
		prof[i].flops += flops;
		prof[i].calls++;
	}
	pthread_mutex_unlock(&prof_lock);
}

int vpa_onnx_profile(const char *op_type, double *seconds, double *flops)
{
	pthread_once(&prof_once, prof_init);
	*seconds = *flops = 0;
	pthread_mutex_lock(&prof_lock);
	for (size_t i = 0; i < prof_n; i++)
		if (!strcmp(prof[i].op, op_type)) {
			*seconds = prof[i].sec;
			*flops = prof[i].flops;
		}
	pthread_mutex_unlock(&prof_lock);
	return prof_on;
}

/* ------------------------------------------------------------ running */

/*
 * A length's bucket: the smallest edge 2^e x {1, 1.25, 1.5, 1.75, 2} that
 * holds it (4 edges per octave, at most 25% above the length), so 2-20 s of
 * 10 ms frames (200-2000) fall in 14 buckets.  An edge is its own bucket.
 */
static int64_t bucket_edge(int64_t v)
{
	int64_t p = 1;
	while (p * 2 <= v)
		p *= 2;
	for (int q = 4; q <= 8; q++)
		if (p / 4 * q >= v)
			return p / 4 * q;
	return 2 * p;
}

/* A float input's axis the model leaves free (a dim_param, as PyTorch's
 * dynamic_axes) of at least BUCKET_MIN: a time axis, keyed by its bucket.
 * Smaller free axes (the batch) stay exact: a plan per batch size is cheap. */
#define BUCKET_MIN 64
static int bucketed(const struct vpa_onnx_model *m, size_t k, const struct vpa_onnx_tensor *t,
		    size_t i)
{
	const struct vpa_onnx_value_info *vi = &m->input_info[k];
	return (t->dtype == VPA_ONNX_FLOAT || t->dtype == VPA_ONNX_DOUBLE) && vi->has_shape &&
	       vi->ndim == t->ndim && vi->dims[i] < 0 && t->dims[i] >= BUCKET_MIN;
}

/*
 * The plan key of a run: each graph input's dtype and shape (model order;
 * a free float axis of BUCKET_MIN or more by its bucket edge), the data of
 * non-float inputs (they may be shapes; over 256 bytes: no key, the run is
 * dynamic), and the requested values in order.  NULL: no plan.  *t and
 * *edge: the products of the bucketed lengths and of their edges (0, 0:
 * nothing bucketed, an exact key).
 */
static unsigned char *plan_key(const struct vpa_onnx_model *m,
			       const struct vpa_onnx_tensor *const *by_input, size_t n_out,
			       const int *want, size_t *len, double *tlen, double *edge)
{
	size_t cap = 64 + n_out * sizeof(int), off = 0;
	*tlen = *edge = 0;
	for (size_t k = 0; k < m->n_inputs; k++) {
		const struct vpa_onnx_tensor *t = by_input[k];
		cap += 16 + t->ndim * sizeof(int64_t);
		if (t->dtype != VPA_ONNX_FLOAT && t->dtype != VPA_ONNX_DOUBLE) {
			size_t b = vpa_onnx_numel(t) * vpa_onnx_dtype_size(t->dtype);
			if (b > 256)
				return NULL;
			cap += b;
		}
	}
	unsigned char *key = xmalloc(cap);
#define PUT(p, n) (memcpy(key + off, (p), (n)), off += (n))
	for (size_t k = 0; k < m->n_inputs; k++) {
		const struct vpa_onnx_tensor *t = by_input[k];
		int32_t dt = t->dtype, nd = (int32_t)t->ndim;
		PUT(&dt, sizeof(dt));
		PUT(&nd, sizeof(nd));
		for (size_t i = 0; i < t->ndim; i++) {
			int64_t d = t->dims[i];
			if (bucketed(m, k, t, i)) {
				d = bucket_edge(d);
				*tlen = (*tlen ? *tlen : 1) * (double)t->dims[i];
				*edge = (*edge ? *edge : 1) * (double)d;
			}
			PUT(&d, sizeof(d));
		}
		if (t->dtype != VPA_ONNX_FLOAT && t->dtype != VPA_ONNX_DOUBLE)
			PUT(t->data, vpa_onnx_numel(t) * vpa_onnx_dtype_size(t->dtype));
	}
	uint64_t no = n_out;
	PUT(&no, sizeof(no));
	PUT(want, n_out * sizeof(int));
#undef PUT
	*len = off;
	return key;
}

static int check_input(const struct vpa_onnx_model *m, size_t k,
		       const struct vpa_onnx_tensor *t, struct vpa_err *err)
{
	const struct vpa_onnx_value_info *vi = &m->input_info[k];
	struct vpa_loc loc = {m->name, 0, 0};
	if (!vpa_onnx_dtype_size(t->dtype) || (vi->dtype && t->dtype != vi->dtype))
		return vpa_fail(err, VPA_EINPUT, &loc, "input '%s' is %s, the model expects %s",
				vi->name, vpa_onnx_dtype_name(t->dtype),
				vpa_onnx_dtype_name(vi->dtype));
	if (!vi->has_shape)
		return 0;
	char want[256], got[256];
	vpa_onnx_shape_str(got, sizeof(got), t->ndim, t->dims);
	size_t off = (size_t)snprintf(want, sizeof(want), "(");
	for (size_t i = 0; i < vi->ndim && off < sizeof(want); i++)
		off += (size_t)snprintf(want + off, sizeof(want) - off, "%s", i ? ", " : ""),
			off += vi->dims[i] >= 0
				       ? (size_t)snprintf(want + off, sizeof(want) - off, "%lld",
							  (long long)vi->dims[i])
				       : (size_t)snprintf(want + off, sizeof(want) - off, "%s",
							  vi->dim_names[i] ? vi->dim_names[i] : "?");
	if (off < sizeof(want))
		snprintf(want + off, sizeof(want) - off, "%s)", vi->ndim == 1 ? "," : "");
	if (t->ndim != vi->ndim)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"input '%s' has rank %zu %s, the model expects rank %zu %s", vi->name,
				t->ndim, got, vi->ndim, want);
	for (size_t i = 0; i < vi->ndim; i++)
		if (vi->dims[i] >= 0 && vi->dims[i] != t->dims[i])
			return vpa_fail(err, VPA_EINPUT, &loc,
					"input '%s' has shape %s, the model expects %s", vi->name, got,
					want);
	return 0;
}

_Thread_local struct ox_shape_rec *ox_shape_rec;

int vpa_onnx_run(const struct vpa_onnx_model *m, size_t n_in, const char *const *in_names,
		 const struct vpa_onnx_tensor *inputs, size_t n_out,
		 const char *const *out_names, struct vpa_onnx_tensor *outputs,
		 struct vpa_err *err)
{
	struct vpa_loc loc = {m->name, 0, 0};
	size_t nv = m->n_values;
	struct vpa_onnx_tensor *vals = xcalloc(nv + 1, sizeof(*vals));
	unsigned char *owned = xcalloc(nv + 1, 1), *have = xcalloc(nv + 1, 1);
	unsigned char *keep = xcalloc(nv + 1, 1), *need = xcalloc(m->n_nodes + 1, 1);
	int *want = xcalloc(n_out + 1, sizeof(int));
	int *producer = xmalloc((nv + 1) * sizeof(int));
	const struct vpa_onnx_tensor **by_input = xcalloc(m->n_inputs + 1, sizeof(*by_input));
	unsigned char *key = NULL;
	size_t key_len = 0;
	int rc = 0, pool_active = 0, plan_active = 0, use_fused = m->fnodes != NULL;
	int *last_use = xmalloc((nv + 1) * sizeof(int)), *last_data = xmalloc((nv + 1) * sizeof(int));
	struct ox_pool pool;
	struct ox_plan_run plan;
	for (size_t j = 0; j < n_out; j++)
		memset(&outputs[j], 0, sizeof(outputs[j]));
	if (!m->runnable) {
		for (size_t i = 0; i < m->n_nodes && !rc; i++)
			if (m->nodes[i].unsupported)
				rc = vpa_fail(err, VPA_EINPUT, &loc, "node '%s' (%s, opset %lld): %s",
					      m->nodes[i].name, m->nodes[i].op_type,
					      (long long)m->opset, m->nodes[i].unsupported);
		if (!rc)
			rc = vpa_fail(err, VPA_EINPUT, &loc, "%s",
				      m->unsupported ? m->unsupported : "the model cannot run");
		goto out;
	}
	for (size_t v = 0; v < nv; v++) {
		producer[v] = -1;
		if (m->values[v].kind == OX_V_INIT) {
			vals[v] = m->values[v].init; /* borrowed */
			have[v] = 1;
		}
	}
	/* Inputs: each given once, each graph input given. */
	for (size_t i = 0; i < n_in; i++) {
		size_t k;
		for (k = 0; k < m->n_inputs; k++)
			if (!strcmp(m->input_info[k].name, in_names[i]))
				break;
		if (k == m->n_inputs) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "the model has no input '%s'", in_names[i]);
			goto out;
		}
		int id = m->input_ids[k];
		if (have[id]) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "input '%s' given twice", in_names[i]);
			goto out;
		}
		if ((rc = check_input(m, k, &inputs[i], err)))
			goto out;
		vals[id] = inputs[i]; /* borrowed */
		have[id] = 1;
		by_input[k] = &inputs[i];
	}
	for (size_t k = 0; k < m->n_inputs; k++)
		if (!have[m->input_ids[k]]) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "input '%s' is not given",
				      m->input_info[k].name);
			goto out;
		}
	/* Requested values and the nodes they need (backwards over the order). */
	for (size_t j = 0; j < n_out; j++) {
		uint32_t id;
		if (!vpa_strmap_get(&m->names, out_names[j], &id)) {
			char near[600];
			rc = vpa_fail(err, VPA_EINPUT, &loc, "the graph has no value '%s'%s",
				      out_names[j],
				      vpa_onnx_nearest_values(m, out_names[j], near, sizeof(near)));
			goto out;
		}
		want[j] = (int)id;
		keep[id] = 1;
		/* A value the fusions removed is requested: the original graph. */
		if (m->gone && m->gone[id])
			use_fused = 0;
	}
	struct ox_shape_rec *rec = ox_shape_rec;
	if (rec) /* every value, as the graph names it: the original nodes, all of them */
		use_fused = 0;
	const struct ox_node *nodes = use_fused ? m->fnodes : m->nodes;
	size_t n_nodes = use_fused ? m->n_fnodes : m->n_nodes;
	for (size_t i = 0; i < n_nodes; i++)
		for (size_t o = 0; o < nodes[i].n_out; o++)
			if (nodes[i].out[o] >= 0)
				producer[nodes[i].out[o]] = (int)i;
	for (size_t j = 0; j < n_out; j++)
		if (producer[want[j]] >= 0)
			need[producer[want[j]]] = 1;
	for (size_t i = 0; rec && i < n_nodes; i++)
		need[i] = 1;
	for (size_t i = n_nodes; i-- > 0;) {
		if (!need[i])
			continue;
		for (size_t j = 0; j < nodes[i].n_in; j++) {
			int v = nodes[i].in[j];
			if (v >= 0 && producer[v] >= 0)
				need[producer[v]] = 1;
		}
	}
	for (size_t v = 0; v < nv; v++) {
		last_use[v] = use_fused ? m->f_last_use[v] : m->values[v].last_use;
		last_data[v] = use_fused ? m->f_last_data[v] : m->values[v].last_data;
	}
	struct ox_ctx c = {m, NULL, m->opset, err};
	pthread_once(&prof_once, prof_init);
	if (m->plans && !rec) { /* a recording run takes another node list: no plan */
		double tlen, edge;
		key = plan_key(m, by_input, n_out, want, &key_len, &tlen, &edge);
		ox_plan_run_begin(m->plans, key, key_len, tlen, edge, &plan);
		plan_active = 1;
	}
	ox_pool_begin_cached(m->cache, &pool);
	pool_active = 1;
	for (size_t i = 0; i < n_nodes; i++) {
		const struct ox_node *n = &nodes[i];
		if (!need[i])
			continue;
		const struct vpa_onnx_tensor *in[64];
		struct vpa_onnx_tensor out[16];
		if (n->n_in > 64 || n->n_out > 16)
			VPA_BUG("node with %zu inputs, %zu outputs", n->n_in, n->n_out);
		for (size_t j = 0; j < n->n_in; j++) {
			int v = n->in[j];
			if (v >= 0 && !have[v])
				VPA_BUG("value '%s' read before it is computed", m->values[v].name);
			in[j] = v >= 0 ? &vals[v] : NULL;
		}
		memset(out, 0, sizeof(out));
		c.node = n;
		/* input 0's data read here for the last time, and owned: the node
		 * may take its buffer (a shape operator then copies nothing); later
		 * Shape or Size nodes still find its dims */
		int v0 = n->n_in ? n->in[0] : -1;
		c.give = NULL;
		c.taken = 0;
		if (v0 >= 0 && owned[v0] && !keep[v0] && last_data[v0] <= (int)i) {
			c.give = &vals[v0];
			for (size_t j = 1; j < n->n_in; j++)
				if (n->in[j] == v0)
					c.give = NULL;
		}
		double t0 = prof_on ? vpa_now() : 0;
		rc = n->op->run(&c, n, in, out);
		if (c.taken) { /* the buffer is the output's now */
			vals[v0].data = NULL;
			owned[v0] = 0;
			have[v0] = last_use[v0] > (int)i;
		}
		if (rc) {
			for (size_t o = 0; o < n->n_out; o++)
				vpa_onnx_tensor_release(&out[o]);
			goto out;
		}
		if (n->epi)
			ox_epilogue(m, n, &out[0]);
		if (prof_on)
			prof_add(n, n->n_in > 1 ? in[1] : NULL, &out[0], vpa_now() - t0);
		for (size_t o = 0; o < n->n_out; o++) {
			int v = n->out[o];
			if (v < 0 || !out[o].data) {
				vpa_onnx_tensor_release(&out[o]);
				continue;
			}
			vals[v] = out[o];
			owned[v] = have[v] = 1;
			if (rec)
				rec->fn(rec->arg, n, v, &vals[v]);
		}
		/* Free what this node read for the last time (and unread outputs). */
		for (size_t j = 0; j < n->n_in; j++) {
			int v = n->in[j];
			if (v >= 0 && owned[v] && !keep[v] && last_use[v] <= (int)i) {
				ox_pool_put(&vals[v]);
				owned[v] = have[v] = 0;
			}
		}
		for (size_t o = 0; o < n->n_out; o++) {
			int v = n->out[o];
			if (v >= 0 && owned[v] && !keep[v] && last_use[v] < 0) {
				ox_pool_put(&vals[v]);
				owned[v] = have[v] = 0;
			}
		}
	}
	if (plan_active)
		ox_plan_run_finish(&plan, 1);
	ox_pool_end_cached(m->cache, &pool);
	pool_active = 0;
	for (size_t j = 0; j < n_out; j++) {
		int v = want[j];
		if (!have[v]) {
			rc = vpa_fail(err, VPA_EINPUT, &loc, "value '%s' was not computed",
				      out_names[j]);
			goto out;
		}
		/* A value requested twice, an input or an initializer: copy. */
		int dup = 0;
		for (size_t k = 0; k < j; k++)
			dup |= want[k] == v;
		if (owned[v] && !dup && !ox_plan_in_arena(vals[v].data)) {
			outputs[j] = vals[v];
			owned[v] = 0;
		} else if (dup) {
			for (size_t k = 0; k < j; k++)
				if (want[k] == v) {
					ox_copy(&outputs[j], &outputs[k]);
					break;
				}
		} else {
			ox_copy(&outputs[j], &vals[v]);
		}
	}
out:
	if (plan_active)
		ox_plan_run_finish(&plan, 0); /* no-op after the successful finish */
	if (pool_active)
		ox_pool_end(&pool);
	if (rc)
		for (size_t j = 0; j < n_out; j++)
			vpa_onnx_tensor_release(&outputs[j]);
	for (size_t v = 0; v < nv; v++)
		if (owned[v])
			vpa_onnx_tensor_release(&vals[v]);
	if (plan_active)
		ox_plan_run_end(&plan);
	free(by_input);
	free(key);
	free(last_use);
	free(last_data);
	free(vals);
	free(owned);
	free(have);
	free(keep);
	free(need);
	free(want);
	free(producer);
	return rc;
}
