/*
 * bench/bench_a1_onnx.c - A1's hidden-layer pass with an ONNX model against
 * the model.yaml path on the same TDNN, measured in the same run (issue 16:
 * "per-model time of the hidden-layer pass over the Indicator set within
 * 1.2x of the model.yaml path on the same TDNN").
 *
 *   bench_a1_onnx [SECONDS] [THREADS]   (default: 200 s of Indicator frames, 1 BLAS thread)
 *
 * The TDNN is bench_a1's: 6 TDNN layers of 512 (contexts [-2,2], [-1,1],
 * [-1,1], {-3,0,3}, {-3,0,3}, {0}) each followed by ReLU and batch norm, on
 * 40-dim features, and a 2,000-senone output layer; random weights and
 * batch-norm statistics.  The same network is written as ONNX from C (the
 * generated protobuf-c messages of onnx/): Transpose to (1, 40, T), per layer
 * Pad (mode edge: vpa_nn clamps frames outside the utterance) + Conv
 * (dilation 3 for {-3,0,3}; W (out, k*in) -> (out, in, k)) + Relu +
 * BatchNormalization, hidden layers named h1..h6, the output a 1x1 Conv.
 * The Indicator set: SECONDS x 100 frames of N(0, 1) in utterances of
 * 1.5-4.5 s.
 *
 * Timed (best of 3, alternating): vpa_flam_activations on the model.yaml
 * network (EVAL forward in chunks of utterances, the output layer included:
 * vpa_nn runs the whole network), vpa_flam_onnx_acts (one run per utterance,
 * h1..h6 requested: only the nodes they need run, so not the output layer),
 * and the ONNX pass requesting the output too (the same arithmetic as the
 * model.yaml path).  Both ratios are printed; the figure is the A1
 * path (the second), and the bench fails (exit 1) when it is above 1.2 or when
 * the two engines' activations differ (max |a - b| / max |b| > 1e-4).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "formats/io.h"
#include "base/la.h"
#include "learn/nn.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "targets/fl_am.h"

#define NL 6

/* ---- a small ONNX writer (protobuf-c messages; never freed: a benchmark, so
 * LeakSanitizer reports them under `make asan`-style builds) */
struct gw {
	Onnx__NodeProto *nodes[64];
	size_t n_nodes;
	Onnx__TensorProto *inits[64];
	size_t n_inits;
};

static Onnx__AttributeProto *attr_ints(const char *name, size_t n, const int64_t *v)
{
	Onnx__AttributeProto *a = xmalloc(sizeof(*a));
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a->n_ints = n;
	a->ints = xmalloc(n * sizeof(int64_t));
	memcpy(a->ints, v, n * sizeof(int64_t));
	return a;
}

static Onnx__AttributeProto *attr_float(const char *name, float v)
{
	Onnx__AttributeProto *a = xmalloc(sizeof(*a));
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
	a->has_f = 1;
	a->f = v;
	return a;
}

static Onnx__AttributeProto *attr_str(const char *name, const char *v)
{
	Onnx__AttributeProto *a = xmalloc(sizeof(*a));
	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
	a->has_s = 1;
	a->s.data = (uint8_t *)v;
	a->s.len = strlen(v);
	return a;
}

static Onnx__NodeProto *node(struct gw *g, const char *op, const char *name, size_t ni,
			     const char *const *in, const char *out)
{
	Onnx__NodeProto *n = xmalloc(sizeof(*n));
	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->name = xstrdup(name);
	n->n_input = ni;
	n->input = xmalloc(ni * sizeof(char *));
	for (size_t i = 0; i < ni; i++)
		n->input[i] = xstrdup(in[i]);
	n->n_output = 1;
	n->output = xmalloc(sizeof(char *));
	n->output[0] = xstrdup(out);
	n->attribute = xmalloc(8 * sizeof(*n->attribute));
	g->nodes[g->n_nodes++] = n;
	return n;
}

static void init_tensor(struct gw *g, const char *name, int dtype, size_t nd, const int64_t *dims,
			const void *data, size_t bytes)
{
	Onnx__TensorProto *t = xmalloc(sizeof(*t));
	onnx__tensor_proto__init(t);
	t->name = xstrdup(name);
	t->n_dims = nd;
	t->dims = xmalloc((nd + 1) * sizeof(int64_t));
	memcpy(t->dims, dims, nd * sizeof(int64_t));
	t->has_data_type = 1;
	t->data_type = dtype;
	t->has_raw_data = 1;
	t->raw_data.data = xmalloc(bytes + 1);
	memcpy(t->raw_data.data, data, bytes);
	t->raw_data.len = bytes;
	g->inits[g->n_inits++] = t;
}

static Onnx__ValueInfoProto *value_info(const char *name, size_t nd, const int64_t *dims,
					const char *const *params)
{
	Onnx__ValueInfoProto *v = xmalloc(sizeof(*v));
	onnx__value_info_proto__init(v);
	v->name = (char *)name;
	Onnx__TypeProto *tp = xmalloc(sizeof(*tp));
	onnx__type_proto__init(tp);
	Onnx__TypeProto__Tensor *tt = xmalloc(sizeof(*tt));
	onnx__type_proto__tensor__init(tt);
	tt->has_elem_type = 1;
	tt->elem_type = VPA_ONNX_FLOAT;
	Onnx__TensorShapeProto *sh = xmalloc(sizeof(*sh));
	onnx__tensor_shape_proto__init(sh);
	sh->n_dim = nd;
	sh->dim = xmalloc(nd * sizeof(*sh->dim));
	for (size_t i = 0; i < nd; i++) {
		Onnx__TensorShapeProto__Dimension *d = xmalloc(sizeof(*d));
		onnx__tensor_shape_proto__dimension__init(d);
		if (params[i]) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = (char *)params[i];
		} else {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = dims[i];
		}
		sh->dim[i] = d;
	}
	tt->shape = sh;
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	v->type = tp;
	return v;
}

/* Write net (tdnn/relu/batchnorm blocks + dense) as ONNX into memory. */
static void *export_onnx(struct vpa_nn *net, const int *const *ctx, const size_t *nctx,
			 size_t *len)
{
	struct gw g = {0};
	char prev[64] = "x0", name[64], wn[64], bn[64], cn[64], pn[64], rn[64], hn[64];
	const char *in1[1] = {"feats"};
	Onnx__NodeProto *tr = node(&g, "Transpose", "transpose", 1, in1, "x0");
	tr->attribute[tr->n_attribute++] = attr_ints("perm", 3, (int64_t[]){0, 2, 1});
	size_t li = 0, in = 40;
	for (int l = 0; l < NL; l++) {
		/* layer li: tdnn, li+1 relu, li+2 batchnorm */
		struct vpa_nn_tensor w, b;
		vpa_nn_tensor(net, li, 0, &w);
		vpa_nn_tensor(net, li, 1, &b);
		size_t out = w.shape[0], k = nctx[l];
		int p = -ctx[l][0], d = k > 1 ? ctx[l][1] - ctx[l][0] : 1;
		float *wo = xmalloc(out * in * k * sizeof(float));
		for (size_t o = 0; o < out; o++)
			for (size_t i = 0; i < in; i++)
				for (size_t j = 0; j < k; j++)
					wo[(o * in + i) * k + j] = w.data[o * k * in + j * in + i];
		snprintf(wn, sizeof(wn), "W%d", l + 1);
		snprintf(bn, sizeof(bn), "B%d", l + 1);
		init_tensor(&g, wn, VPA_ONNX_FLOAT, 3, (int64_t[]){(int64_t)out, (int64_t)in, (int64_t)k},
			    wo, out * in * k * sizeof(float));
		init_tensor(&g, bn, VPA_ONNX_FLOAT, 1, (int64_t[]){(int64_t)out}, b.data,
			    out * sizeof(float));
		free(wo);
		const char *cin = prev;
		if (p > 0) {
			snprintf(pn, sizeof(pn), "pads%d", l + 1);
			int64_t pads[6] = {0, 0, p, 0, 0, p};
			init_tensor(&g, pn, VPA_ONNX_INT64, 1, (int64_t[]){6}, pads, sizeof(pads));
			snprintf(name, sizeof(name), "padded%d", l + 1);
			snprintf(cn, sizeof(cn), "pad%d", l + 1);
			Onnx__NodeProto *pd = node(&g, "Pad", cn, 2, (const char *[]){prev, pn}, name);
			pd->attribute[pd->n_attribute++] = attr_str("mode", "edge");
			cin = name;
		}
		snprintf(cn, sizeof(cn), "c%d", l + 1);
		snprintf(rn, sizeof(rn), "conv%d", l + 1);
		Onnx__NodeProto *cv = node(&g, "Conv", rn, 3, (const char *[]){cin, wn, bn}, cn);
		cv->attribute[cv->n_attribute++] = attr_ints("kernel_shape", 1, (int64_t[]){(int64_t)k});
		cv->attribute[cv->n_attribute++] = attr_ints("dilations", 1, (int64_t[]){d});
		snprintf(rn, sizeof(rn), "r%d", l + 1);
		snprintf(name, sizeof(name), "relu%d", l + 1);
		node(&g, "Relu", name, 1, (const char *[]){cn}, rn);
		const char *bin[5];
		char bnames[4][32];
		bin[0] = rn;
		for (int q = 0; q < 4; q++) {
			struct vpa_nn_tensor s;
			vpa_nn_tensor(net, li + 2, (size_t)q, &s);
			snprintf(bnames[q], sizeof(bnames[q]), "bn%d_%s", l + 1, s.name);
			init_tensor(&g, bnames[q], VPA_ONNX_FLOAT, 1, (int64_t[]){(int64_t)out}, s.data,
				    out * sizeof(float));
			bin[1 + q] = bnames[q];
		}
		snprintf(hn, sizeof(hn), "h%d", l + 1);
		snprintf(name, sizeof(name), "bn%d", l + 1);
		Onnx__NodeProto *bnode = node(&g, "BatchNormalization", name, 5, bin, hn);
		bnode->attribute[bnode->n_attribute++] =
			attr_float("epsilon", vpa_nn_layer(net, li + 2)->eps);
		snprintf(prev, sizeof(prev), "%s", hn);
		in = out;
		li += 3;
	}
	struct vpa_nn_tensor w, b;
	vpa_nn_tensor(net, li, 0, &w);
	vpa_nn_tensor(net, li, 1, &b);
	init_tensor(&g, "Wout", VPA_ONNX_FLOAT, 3, (int64_t[]){(int64_t)w.shape[0], (int64_t)w.shape[1], 1},
		    w.data, w.shape[0] * w.shape[1] * sizeof(float));
	init_tensor(&g, "Bout", VPA_ONNX_FLOAT, 1, (int64_t[]){(int64_t)w.shape[0]}, b.data,
		    w.shape[0] * sizeof(float));
	Onnx__NodeProto *o = node(&g, "Conv", "output", 3, (const char *[]){prev, "Wout", "Bout"}, "out");
	o->attribute[o->n_attribute++] = attr_ints("kernel_shape", 1, (int64_t[]){1});

	Onnx__GraphProto gp;
	onnx__graph_proto__init(&gp);
	gp.name = "tdnn_am";
	gp.n_node = g.n_nodes;
	gp.node = g.nodes;
	gp.n_initializer = g.n_inits;
	gp.initializer = g.inits;
	Onnx__ValueInfoProto *vi_in = value_info("feats", 3, (int64_t[]){1, 0, 40},
						 (const char *[]){NULL, "time", NULL});
	Onnx__ValueInfoProto *vi_out = value_info("out", 3, (int64_t[]){1, (int64_t)w.shape[0], 0},
						  (const char *[]){NULL, NULL, "time"});
	gp.n_input = 1;
	gp.input = &vi_in;
	gp.n_output = 1;
	gp.output = &vi_out;
	Onnx__OperatorSetIdProto os;
	onnx__operator_set_id_proto__init(&os);
	os.domain = "";
	os.has_version = 1;
	os.version = 13;
	Onnx__OperatorSetIdProto *osp = &os;
	Onnx__ModelProto mp;
	onnx__model_proto__init(&mp);
	mp.has_ir_version = 1;
	mp.ir_version = 7;
	mp.n_opset_import = 1;
	mp.opset_import = &osp;
	mp.producer_name = "bench_a1_onnx";
	mp.graph = &gp;
	*len = onnx__model_proto__get_packed_size(&mp);
	void *buf = xmalloc(*len);
	onnx__model_proto__pack(&mp, buf);
	return buf;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 200;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	vpa_la_set_threads(threads);
	struct vpa_err err;
	vpa_err_init(&err);
	const int c5[] = {-2, -1, 0, 1, 2}, c3[] = {-1, 0, 1}, c3w[] = {-3, 0, 3}, c1[] = {0};
	const int *ctx[NL] = {c5, c3, c3, c3w, c3w, c1};
	const size_t nctx[NL] = {5, 3, 3, 3, 3, 1};
	struct vpa_nn *net = vpa_nn_new(40);
	for (int l = 0; l < NL; l++) {
		vpa_nn_add_tdnn(net, 512, ctx[l], nctx[l]);
		vpa_nn_add_simple(net, VPA_NN_RELU);
		vpa_nn_add_simple(net, VPA_NN_BATCHNORM);
	}
	vpa_nn_add_dense(net, 2000);
	vpa_nn_init_params(net, 1);
	struct vpa_rng r;
	vpa_rng_seed(&r, 2);
	for (size_t l = 0; l < vpa_nn_n_layers(net); l++)
		for (size_t q = 0; q < vpa_nn_n_tensors(net, l); q++) {
			struct vpa_nn_tensor s;
			vpa_nn_tensor(net, l, q, &s);
			size_t n = s.ndim == 2 ? s.shape[0] * s.shape[1] : s.shape[0];
			if (!strcmp(s.name, "running_mean") || !strcmp(s.name, "beta"))
				for (size_t i = 0; i < n; i++)
					s.data[i] = (float)(0.1 * vpa_rng_normal(&r));
			else if (!strcmp(s.name, "running_var") || !strcmp(s.name, "gamma"))
				for (size_t i = 0; i < n; i++)
					s.data[i] = (float)(0.5 + vpa_rng_uniform(&r));
		}
	size_t len;
	void *buf = export_onnx(net, ctx, nctx, &len);
	struct vpa_flam_model om = {0};
	if (vpa_onnx_load_mem("tdnn_am.onnx", buf, len, NULL, NULL, &om.onnx, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	free(buf);
	om.id = "onnx";

	/* the Indicator set */
	size_t T = (size_t)(seconds * 100);
	struct vpa_flam t;
	vpa_flam_init(&t);
	t.global.id = xstrdup("global");
	t.global.net = net;
	t.off = xmalloc((T / 150 + 3) * sizeof(size_t));
	t.off[0] = 0;
	while (t.off[t.n_utt] < T) {
		size_t l = 150 + vpa_rng_below(&r, 301);
		t.off[t.n_utt + 1] = t.off[t.n_utt] + l < T ? t.off[t.n_utt] + l : T;
		t.n_utt++;
	}
	t.utt_id = xcalloc(t.n_utt, sizeof(char *));
	for (size_t u = 0; u < t.n_utt; u++)
		t.utt_id[u] = xstrdup("u");
	t.in_dim = 40;
	t.x = xmalloc(T * 40 * sizeof(float));
	for (size_t i = 0; i < T * 40; i++)
		t.x[i] = (float)vpa_rng_normal(&r);
	if (vpa_flam_hidden_layers(net, &t.layer_at, &t.n_layers, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	t.dim = xmalloc((t.n_layers + 1) * sizeof(size_t));
	t.layer_name = xcalloc(t.n_layers + 1, sizeof(char *));
	for (size_t h = 0; h < t.n_layers; h++) {
		t.dim[h] = vpa_nn_layer_dim(net, t.layer_at[h]);
		t.layer_name[h] = xmalloc(32);
		snprintf(t.layer_name[h], 32, "h%zu", h + 1);
	}
	t.dim[t.n_layers] = 2000;
	t.layer_name[t.n_layers] = xstrdup("out");

	double best[3] = {1e30, 1e30, 1e30};
	float **ref = NULL, **a = xcalloc(t.n_layers + 1, sizeof(float *));
	for (size_t h = 0; h <= t.n_layers; h++)
		a[h] = xmalloc(T * t.dim[h] * sizeof(float));
	double worst = 0, scale = 0;
	size_t nl = t.n_layers;
	for (int rep = 0; rep < 3; rep++) {
		double t0 = vpa_now();
		float **y;
		if (vpa_flam_activations(&t, 0, &y, &err)) { /* n_models 0: the global model */
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		double t1 = vpa_now();
		if (ref)
			vpa_flam_acts_free(y, nl);
		else
			ref = y;
		t.n_layers = nl;
		if (vpa_flam_onnx_acts(&t, &om, a, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		double t2 = vpa_now();
		t.n_layers = nl + 1; /* and the output layer: the model.yaml path's arithmetic */
		if (vpa_flam_onnx_acts(&t, &om, a, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 1;
		}
		double t3 = vpa_now();
		t.n_layers = nl;
		best[0] = t1 - t0 < best[0] ? t1 - t0 : best[0];
		best[1] = t2 - t1 < best[1] ? t2 - t1 : best[1];
		best[2] = t3 - t2 < best[2] ? t3 - t2 : best[2];
	}
	for (size_t h = 0; h < nl; h++)
		for (size_t i = 0; i < T * t.dim[h]; i++) {
			double d = fabs((double)a[h][i] - ref[h][i]);
			worst = d > worst ? d : worst;
			scale = fabs(ref[h][i]) > scale ? fabs(ref[h][i]) : scale;
		}
	struct vpa_onnx_plan_stats st;
	vpa_onnx_plan_stats(om.onnx, 0, &st);
	printf("A1 hidden-layer pass, TDNN 6 x 512 (+ 2000 outputs), %zu frames (%.0f s) in %zu "
	       "utterances, %d BLAS thread(s), best of 3:\n", T, seconds, t.n_utt, threads);
	printf("  model.yaml (vpa_nn, whole network)          %8.3f s\n", best[0]);
	printf("  ONNX, h1..h6 requested (A1's pass)          %8.3f s\n", best[1]);
	printf("  ONNX, h1..h6 and the output layer           %8.3f s\n", best[2]);
	printf("  ONNX vs model.yaml activations: max |diff| %.3g (max |a| %.3g); %zu nodes fused; "
	       "runs: %llu replayed a memory plan, %llu recorded one, %llu first of their shape\n",
	       worst, scale, vpa_onnx_n_fused(om.onnx), (unsigned long long)st.planned_runs,
	       (unsigned long long)st.recorded_runs, (unsigned long long)st.first_runs);
	double r1 = best[1] / best[0], r2 = best[2] / best[0];
	printf("ratio: ONNX / model.yaml = %.3f (A1 pass), %.3f (same layers)   (budget: 1.2)\n", r1,
	       r2);
	vpa_flam_acts_free(ref, nl);
	for (size_t h = 0; h <= nl; h++)
		free(a[h]);
	free(a);
	vpa_onnx_free(om.onnx);
	t.n_layers = nl;
	free(t.layer_name[nl]);
	vpa_flam_release(&t);
	return worst > 1e-4 * scale || r1 > 1.2 ? 1 : 0;
}
