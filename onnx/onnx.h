/*
 * onnx/onnx.h - a native ONNX inference engine (the only public header of
 * onnx/; depends on base/ and formats/ only).
 *
 * Loads a ModelProto (protobuf, via libprotobuf-c and the official
 * onnx.proto; initializers may live in external data files next to the
 * model), checks every node against the operator table at load time
 * (operator, opset, every attribute), orders the graph topologically, and
 * runs it on float32 / int64 / int32 / int8 / uint8 / bool / double tensors
 * with Conv and MatMul/Gemm on SGEMM (base/la.c).
 *
 *   struct vpa_onnx_model *m;
 *   if (vpa_onnx_load("ecapa.onnx", NULL, &m, err)) return ...;
 *   struct vpa_onnx_tensor x = vpa_onnx_tensor_f32(3, (int64_t[]){1, 200, 80}, feats);
 *   const char *want[] = {"embedding"};
 *   struct vpa_onnx_tensor y;
 *   rc = vpa_onnx_run(m, 1, (const char *[]){"feats"}, &x, 1, want, &y, err);
 *   ... y.data is (1, 192) float ...  vpa_onnx_tensor_release(&y);
 *   vpa_onnx_free(m);
 *
 * Threads: a loaded model is immutable but for its caches (memory plans,
 * arenas, pools; each behind a mutex); vpa_onnx_run may be called from any
 * number of threads at once on the same model (each call has its own arena
 * or pool of value buffers and scratch, left on the model for a later call).
 * Memory: one static plan per input shape (onnx/plan.c); load-time fusions
 * (onnx/fuse.c) unless no_fuse.  SGEMM threading is
 * OpenBLAS's (vpa_la_run_workers makes it single-threaded inside workers).
 */
#ifndef VPA_ONNX_H
#define VPA_ONNX_H

#include "base/base.h"

/*
 * Opsets: 11-17 of the default domain for every operator; an older model
 * (opset 1-10) loads when each of its operators already has there the
 * definition implemented here (e.g. Conv from 1, Add from 7, Slice from 10,
 * Pad and Clip only from 11), else the node is named in the error.
 */
#define VPA_ONNX_MAX_DIMS 8
/*
 * Protobuf messages may nest at most this deep (ModelProto is level 1, its
 * graph 2, a node 3, an attribute 4, a subgraph 5, ...): a deeper model is
 * refused before unpacking, whose recursion would overflow the stack.
 */
#define VPA_ONNX_MAX_NESTING 64

/* Element types: the TensorProto.DataType codes of those we compute on. */
enum vpa_onnx_dtype {
	VPA_ONNX_FLOAT = 1,
	VPA_ONNX_UINT8 = 2,
	VPA_ONNX_INT8 = 3,
	VPA_ONNX_INT32 = 6,
	VPA_ONNX_INT64 = 7,
	VPA_ONNX_BOOL = 9, /* one byte, 0 or 1 */
	VPA_ONNX_DOUBLE = 11,
};

/* A dense row-major tensor.  ndim 0 is a scalar (one element). */
struct vpa_onnx_tensor {
	int dtype;                         /* enum vpa_onnx_dtype */
	size_t ndim;
	int64_t dims[VPA_ONNX_MAX_DIMS];   /* each >= 0 */
	void *data;                        /* owned unless stated otherwise */
};

/* Element size of a dtype (0 for a dtype we do not support). */
size_t vpa_onnx_dtype_size(int dtype);
/* "float32", "int64", ... ("unsupported(N)" names for others; static storage). */
const char *vpa_onnx_dtype_name(int dtype);
/* Number of elements (1 for a scalar). */
size_t vpa_onnx_numel(const struct vpa_onnx_tensor *t);
/* A borrowed view of float data (the caller keeps `data` alive; do not release). */
struct vpa_onnx_tensor vpa_onnx_tensor_f32(size_t ndim, const int64_t *dims, const float *data);
/* Free the data of an owned tensor and zero it; NULL-safe. */
void vpa_onnx_tensor_release(struct vpa_onnx_tensor *t);
/* "(1, 200, 80)" into buf. */
void vpa_onnx_shape_str(char *buf, size_t cap, size_t ndim, const int64_t *dims);

/*
 * Parse a serialized TensorProto (the backend test files input_0.pb ...).
 * out->data is owned (caller releases).  Errors (VPA_EINPUT, naming `name`):
 * corrupt protobuf, unsupported dtype, data that does not match the shape,
 * external data (not allowed here).  out_name (may be NULL) receives the
 * tensor's name (caller frees).
 */
int vpa_onnx_tensor_parse(const char *name, const void *buf, size_t len,
			  struct vpa_onnx_tensor *out /* OUT */, char **out_name /* OUT */,
			  struct vpa_err *err);

struct vpa_onnx_model;

struct vpa_onnx_load_opts {
	/*
	 * 0 (default): any unsupported operator, opset or attribute fails the
	 * load.  1: load anyway and record the reason per node
	 * (vpa_onnx_node_unsupported); vpa_onnx_run then refuses to run.  For
	 * `vpaudit onnx info`.
	 */
	int lenient;
	/* 1: no static memory plan (every run allocates dynamically, as the
	 * plan's first pass does); for tests and comparisons. */
	int no_plan;
	/* 1: no load-time fusions (BatchNormalization folding, epilogues). */
	int no_fuse;
};

/*
 * Load a model file.  External data locations are relative to the model's
 * folder (absolute paths and ".." are refused); each must name a regular file
 * reached without following a symbolic link (openat + O_NOFOLLOW at every
 * component; a link, a FIFO or a folder is an error).  Float initializers and
 * tensor attributes must be finite.  opts may be NULL.
 * *out: caller frees with vpa_onnx_free.
 * Errors: VPA_EIO (cannot read), VPA_EINPUT with one line naming the file
 * and, for graph problems, the node, its operator and the opset:
 *   "m.onnx: node 'Conv_3' (Foo, opset 13): unsupported operator (supported: Abs, ...)"
 */
int vpa_onnx_load(const char *path, const struct vpa_onnx_load_opts *opts,
		  struct vpa_onnx_model **out, struct vpa_err *err);
/* The same from memory; dir is the folder for external data (NULL: none allowed). */
int vpa_onnx_load_mem(const char *name, const void *buf, size_t len, const char *dir,
		      const struct vpa_onnx_load_opts *opts, struct vpa_onnx_model **out,
		      struct vpa_err *err);
void vpa_onnx_free(struct vpa_onnx_model *m);

/* Introspection (all strings borrowed, valid until vpa_onnx_free). */
struct vpa_onnx_value_info {
	const char *name;
	int dtype;                /* 0 when the graph does not say */
	int has_shape;            /* 0: rank unknown */
	size_t ndim;
	int64_t dims[VPA_ONNX_MAX_DIMS];          /* -1 where symbolic or unknown */
	const char *dim_names[VPA_ONNX_MAX_DIMS]; /* symbolic name or NULL */
};
/* The default domain's opset; -1 when the model imports none (lenient loads). */
int64_t vpa_onnx_opset(const struct vpa_onnx_model *m);
const char *vpa_onnx_producer(const struct vpa_onnx_model *m); /* "pytorch 1.13.1" or "" */
size_t vpa_onnx_n_inputs(const struct vpa_onnx_model *m);   /* without initializers */
size_t vpa_onnx_n_outputs(const struct vpa_onnx_model *m);
const struct vpa_onnx_value_info *vpa_onnx_input(const struct vpa_onnx_model *m, size_t i);
const struct vpa_onnx_value_info *vpa_onnx_output(const struct vpa_onnx_model *m, size_t i);
size_t vpa_onnx_n_nodes(const struct vpa_onnx_model *m);
/* Node i in execution (topological) order. */
const char *vpa_onnx_node_op(const struct vpa_onnx_model *m, size_t i);
const char *vpa_onnx_node_name(const struct vpa_onnx_model *m, size_t i);
/* NULL when supported, else the reason (lenient loads only). */
const char *vpa_onnx_node_unsupported(const struct vpa_onnx_model *m, size_t i);
/* Number of elements in all initializers (the parameter count). */
uint64_t vpa_onnx_n_params(const struct vpa_onnx_model *m);
/* 1 when name is a value of the graph (input, initializer or node output). */
int vpa_onnx_has_value(const struct vpa_onnx_model *m, const char *name);
/*
 * Every value a run computes (node outputs of the unfused graph, in
 * execution order) with its element type and shape, for the given inputs
 * (the graph run once on them: shapes as the engine computes them, for that
 * input length; `vpaudit onnx info --values`).  *out (caller frees the
 * array; strings borrowed from the model) gets *n entries.  Errors as
 * vpa_onnx_run (an unsupported operator, an input of the wrong shape).
 */
struct vpa_onnx_value_shape {
	const char *name, *op, *node; /* the value, its producer's operator and node name */
	int dtype;
	size_t ndim;
	int64_t dims[VPA_ONNX_MAX_DIMS];
};
int vpa_onnx_value_shapes(const struct vpa_onnx_model *m, size_t n_in,
			  const char *const *in_names, const struct vpa_onnx_tensor *inputs,
			  struct vpa_onnx_value_shape **out /* OUT */, size_t *n /* OUT */,
			  struct vpa_err *err);
/*
 * For a name that is not a value of the graph: " (nearest: 'a', 'b', 'c')",
 * the three values (inputs and node outputs) nearest by edit distance
 * (Levenshtein, ties in graph order), into buf (always NUL-terminated; ""
 * when the graph has no value); returns buf.  Appended to "no value" errors.
 */
const char *vpa_onnx_nearest_values(const struct vpa_onnx_model *m, const char *name, char *buf,
				    size_t cap);

/* The supported operators, sorted, "Abs,Add,..." (static storage). */
const char *vpa_onnx_supported_ops(void);
/* 1 when op_type is in the operator table. */
int vpa_onnx_op_supported(const char *op_type);

/*
 * Run the graph.  inputs[i] is the value named in_names[i] (borrowed); every
 * graph input without an initializer must be given; a given input must match
 * the declared dtype and rank and every fixed dimension.  Fills outputs[j]
 * (caller releases each) with the value named out_names[j]: a graph output or
 * any intermediate value (or an input/initializer, copied).
 * Thread-safe on a shared model.  Errors: VPA_EINPUT (a missing or
 * mismatched input, an unknown output name, shapes an operator rejects,
 * naming the node), never partial outputs (all released on error).
 */
int vpa_onnx_run(const struct vpa_onnx_model *m, size_t n_in, const char *const *in_names,
		 const struct vpa_onnx_tensor *inputs, size_t n_out,
		 const char *const *out_names, struct vpa_onnx_tensor *outputs /* OUT */,
		 struct vpa_err *err);

/*
 * The static memory plans of a model (diagnostics and tests): the number of
 * plans cached, and for plan i (in cache order) its blocks, arena size, peak
 * of simultaneously live bytes, the sum of all blocks and the number of
 * pairs of blocks alive at the same time whose memory overlaps (0 for a
 * valid plan); run counters since load.  Returns 1 when plan i exists.
 */
struct vpa_onnx_plan_stats {
	size_t n_plans, n_blocks, arena_bytes, peak_bytes, sum_bytes, overlaps;
	uint64_t planned_runs;  /* runs that replayed a plan */
	uint64_t first_runs;    /* first sightings of a key (dynamic, nothing recorded) */
	uint64_t recorded_runs; /* second sightings of a key (dynamic, recorded: the plan) */
	uint64_t left_runs;     /* replays that left their plan (data-dependent shapes) */
	uint64_t dynamic_runs;  /* runs without a key (planning off or unkeyable inputs) */
	uint64_t refit_runs;    /* replays that outgrew their bucket's plan and refitted it */
};
int vpa_onnx_plan_stats(const struct vpa_onnx_model *m, size_t i,
			struct vpa_onnx_plan_stats *st /* OUT */);
/* Nodes removed by load-time fusions (0 with no_fuse). */
size_t vpa_onnx_n_fused(const struct vpa_onnx_model *m);
/* Of those, BatchNormalization nodes folded into a Conv or Gemm. */
size_t vpa_onnx_n_bn_folded(const struct vpa_onnx_model *m);

/*
 * Per-operator timer (diagnostics, off by default): when the environment has
 * VPA_ONNX_PROFILE=1 (or =quiet) at the process's first run, every node's
 * wall time is added to its operator type's total (process-wide, under a
 * mutex), and a Conv's multiply-adds x 2 to its flops (2 x output elements x
 * input channels per group x kernel size). vpa_onnx_profile gives the totals
 * of op_type (0 and 0 when unseen or off); returns 1 when profiling is on.
 * With VPA_ONNX_PROFILE=1 a table (operator, calls, seconds, share of the
 * timed total, Conv GFLOP/s) is printed to stderr when the process exits;
 * =quiet collects without printing.
 */
int vpa_onnx_profile(const char *op_type, double *seconds, double *flops);

#endif
