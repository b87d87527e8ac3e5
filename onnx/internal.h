/*
 * onnx/internal.h - what the files of onnx/ share (not a public header).
 *
 * The model: values (graph inputs, initializers, node outputs) by index;
 * nodes in topological order with their attributes copied out of the
 * protobuf; the protobuf itself is freed after loading.
 */
#ifndef VPA_ONNX_INTERNAL_H
#define VPA_ONNX_INTERNAL_H

#include "formats/embset.h"
#include "onnx/onnx.h"

/* Opsets 11-17 for every operator; older models when each operator's
 * definition there is the one implemented (ox_op_since). */
#define OX_OPSET_MIN 11
#define OX_OPSET_MAX 17

enum ox_attr_type { OX_A_FLOAT = 1, OX_A_INT = 2, OX_A_STRING = 3, OX_A_TENSOR = 4,
		    OX_A_FLOATS = 6, OX_A_INTS = 7, OX_A_STRINGS = 8 };

struct ox_attr {
	char *name;            /* owned */
	int type;              /* enum ox_attr_type (others refused at load) */
	float f;
	int64_t i;
	char *s;               /* owned, NUL-terminated */
	size_t n;              /* count of ints / floats / strings */
	int64_t *ints;         /* owned */
	float *floats;         /* owned */
	char **strings;        /* owned */
	struct vpa_onnx_tensor t; /* owned (OX_A_TENSOR) */
};

struct ox_node;
struct ox_ctx;

/*
 * An operator.  check() runs at load time: every attribute name must be in
 * attrs (NULL-terminated) or the load fails; check may refuse values too
 * (NULL: no check beyond names).  run() computes the outputs from in[]
 * (NULL for an absent optional input); out[j] are zeroed tensors to fill
 * (ox_alloc); errors through vpa_fail naming the node (ox_fail).
 */
struct ox_op {
	const char *name;
	const char *const *attrs;
	int (*check)(const char *file, const struct ox_node *n, int64_t opset,
		     struct vpa_err *err);
	int (*run)(struct ox_ctx *c, const struct ox_node *n, const struct vpa_onnx_tensor **in,
		   struct vpa_onnx_tensor *out);
	int min_in, max_in, min_out, max_out;
};

/* A fused epilogue (fuse.c): bias along the last axis (MatMul) and an activation. */
struct ox_epi {
	int act;          /* fuse.c's ACT_* (0: none) */
	float alpha;      /* LeakyRelu */
	float lo, hi;     /* Clip bounds (+-inf when absent) */
	int bias;         /* initializer value id of a MatMul bias row, -1: none */
	float gdiv, gadd, gmul; /* GELU: ((erf(x / gdiv) + gadd) x) gmul */
};

struct ox_node {
	char *name;              /* owned ("" when the graph gives none) */
	char *op_type;           /* owned */
	const struct ox_op *op;  /* NULL when unsupported (lenient loads) */
	char *unsupported;       /* owned reason or NULL */
	size_t n_in, n_out;
	int *in, *out;           /* value ids (-1: absent optional), owned */
	size_t n_attr;
	struct ox_attr *attrs;   /* owned (borrowed in the fused list) */
	struct ox_epi *epi;      /* owned, fused list only: NULL or the epilogue */
};

enum ox_value_kind { OX_V_INPUT, OX_V_INIT, OX_V_NODE };

struct ox_value {
	char *name;                 /* owned */
	int kind;
	struct vpa_onnx_tensor init; /* OX_V_INIT: owned data */
	int last_use;               /* last node index reading it (-1: none) */
	int last_data;              /* last node reading its data, Shape and Size (dims
				       only) aside: it may take the buffer (run.c) */
	int is_output;              /* a graph output: never freed early */
};

struct vpa_onnx_model {
	char *name;                 /* owned: file name for messages */
	int64_t opset;
	char *producer;             /* owned */
	size_t n_values;
	struct ox_value *values;    /* owned */
	size_t n_nodes;
	struct ox_node *nodes;      /* owned, topological order */
	size_t n_inputs, n_outputs;
	int *input_ids, *output_ids; /* owned */
	struct vpa_onnx_value_info *input_info, *output_info; /* owned (strings owned below) */
	char **strings;             /* owned strings of the infos */
	size_t n_strings;
	uint64_t n_params;
	int runnable;               /* 0 when a node is unsupported (lenient) */
	char *unsupported;          /* owned model-level reason (opset) or NULL */
	struct vpa_strmap names;    /* value name -> id (keys borrowed from values) */
	struct ox_pool_cache *cache; /* owned: pools kept between runs (mutable, own mutex) */
	struct ox_plan_cache *plans; /* owned: memory plans per input-shape key and their
					arenas (mutable, own mutex); NULL: planning off */
	struct ox_wino_cache *wino; /* owned: Winograd transforms of constant Conv weights
				       (conv_wino.c; mutable, atomic slots) */
	size_t n_fused;             /* nodes folded or fused away at load time (fuse.c) */
	size_t n_bn_folded;         /* of which BatchNormalization folded into Conv/Gemm */
	size_t n_fnodes;
	struct ox_node *fnodes;     /* owned: the fused node list (NULL: none); in/out/epi
				       owned, names/attrs borrowed from nodes */
	unsigned char *gone;        /* owned: values the fused list no longer computes */
	int *f_last_use;            /* owned: each value's last reader in the fused list */
	int *f_last_data;           /* owned: its last data reader there (as last_data) */
};

/* Whether node n reads its inputs' data, not only their dims (Shape, Size). */
int ox_reads_data(const struct ox_node *n);

/* Load-time fusions (fuse.c): builds m->fnodes when anything fuses. */
void ox_fuse(struct vpa_onnx_model *m);
void ox_fuse_free(struct ox_node *f, size_t n);
/* After a fused Gemm/MatMul ran: its bias row and activation (no-op otherwise). */
void ox_epilogue(const struct vpa_onnx_model *m, const struct ox_node *n,
		 struct vpa_onnx_tensor *out);

/* One run: the values' current tensors and the error. */
struct ox_ctx {
	const struct vpa_onnx_model *m;
	const struct ox_node *node; /* the node being run (for messages) */
	int64_t opset;
	struct vpa_err *err;
	/* Input 0's value when this node reads it for the last time and owns it
	 * (run.c): a shape operator may take its buffer over instead of copying
	 * it (ops_shape.c reshaped), and says so in taken. */
	const struct vpa_onnx_tensor *give;
	int taken;
};

/*
 * Buffer reuse within one run: vpa_onnx_run keeps the buffers of dead values
 * in a pool (per thread: runs never share one) and ox_alloc takes the
 * best-fitting one before asking malloc, so a run touches fresh pages only
 * for its peak working set.
 */
struct ox_pool {
	size_t n, cap;
	void **ptr;    /* owned blocks */
	size_t *bytes; /* their usable sizes */
	unsigned char *put; /* 1: given to the pool during this run (0: left by an earlier run) */
};
void ox_pool_begin(struct ox_pool *p); /* becomes this thread's pool */
void ox_pool_end(struct ox_pool *p);   /* frees the blocks, no pool any more */
/* Give t's data to the current pool (free() when there is none); zeroes t. */
void ox_pool_put(struct vpa_onnx_tensor *t);
/* Scratch of at least `bytes` (not zeroed) from the current pool or malloc;
 * ox_scratch_put gives it back to the pool (free() when there is none). */
void *ox_scratch(size_t bytes);
void ox_scratch_put(void *ptr, size_t bytes);

/*
 * Pools kept between runs: a run starts from a pool a finished run left on
 * the model (so repeated runs of one input shape reuse the same blocks and
 * touch no fresh pages), and leaves its pool there when it ends. At most
 * OX_POOL_CACHE pools are kept (one per concurrent run); vpa_onnx_free frees
 * them. Guarded by a mutex: the model is otherwise never written by a run.
 */
#define OX_POOL_CACHE 8
struct ox_pool_cache;
struct ox_pool_cache *ox_pool_cache_new(void);
void ox_pool_cache_free(struct ox_pool_cache *pc);
/* Begin p as this thread's pool, reusing a cached pool's blocks when there is one. */
void ox_pool_begin_cached(struct ox_pool_cache *pc, struct ox_pool *p);
/* End this thread's pool p, leaving its blocks to the cache (or freeing them);
 * blocks an earlier run left that this run never took are freed, so what is
 * kept is bounded by what the last run allocated. */
void ox_pool_end_cached(struct ox_pool_cache *pc, struct ox_pool *p);

/*
 * The static memory plan (plan.c): per input-shape key, offsets of every
 * value and scratch buffer in one arena, computed from a recorded first run.
 * A run: ox_plan_run_begin (key NULL: dynamic only), the graph, then
 * ox_plan_run_finish (ok: publish a recorded plan; afterwards allocations
 * are dynamic), copying requested values out of the arena, ox_plan_run_end
 * (gives the arena back).  tensor.c calls the three hooks.
 */
struct ox_plan;
struct ox_plan_cache;
struct ox_plan_run {
	struct ox_plan_cache *pc;
	struct ox_plan *plan;    /* referenced: replaying it */
	char *base;              /* owned arena (replay) */
	size_t arena_bytes;
	size_t clock;            /* events replayed */
	int left;                /* an event differed: dynamic from then on */
	int recording, stopped;
	int first;               /* a first sighting (bucketed key: its events are kept) */
	double t, edge;          /* bucketed key: the bucketed lengths' product and its
				    edge (0: an exact key) */
	unsigned char *key;      /* owned (recording) */
	size_t key_len;
	size_t n_ev, cap_ev, n_blk, cap_blk;
	int *ev;                 /* owned recorded events */
	void **blk_ptr;          /* owned: live pointer of each recorded block (NULL: dead) */
	size_t *blk_bytes;       /* owned */
};
struct ox_plan_cache *ox_plan_cache_new(void);
void ox_plan_cache_free(struct ox_plan_cache *pc);
/* t, edge: for a key whose time axes are bucketed (run.c), the product of
 * the actual lengths and of the bucket edges; 0, 0 for an exact key. */
void ox_plan_run_begin(struct ox_plan_cache *pc, const unsigned char *key, size_t key_len,
		       double t, double edge, struct ox_plan_run *r);
void ox_plan_run_finish(struct ox_plan_run *r, int ok);
void ox_plan_run_end(struct ox_plan_run *r);
/* Memory for a block of `bytes` from the plan being replayed, or NULL (dynamic). */
void *ox_plan_alloc(size_t bytes);
/* A dynamic block was allocated (recorded when recording). */
void ox_plan_note_alloc(void *ptr, size_t bytes);
/* A block is released: 1 when it lies in the arena (the caller must not free it). */
int ox_plan_note_free(void *ptr);
/* 1 when ptr lies in the current thread's arena. */
int ox_plan_in_arena(const void *ptr);
/* Overlapping pairs of blocks alive at the same event (0 for a valid plan);
 * the peak of live bytes, the sum of all blocks and the arena size. */
size_t ox_plan_check(const struct ox_plan *p, size_t *peak, size_t *sum, size_t *arena);

/*
 * Shape recording (introspect.c, `onnx info --values`): while a thread's
 * recorder is set, vpa_onnx_run runs every node of the unfused list and
 * calls rec->fn with each node output it computes.
 */
struct ox_shape_rec {
	void (*fn)(void *arg, const struct ox_node *n, int value, const struct vpa_onnx_tensor *t);
	void *arg;
};
extern _Thread_local struct ox_shape_rec *ox_shape_rec;

/* ---- helpers (tensor.c) */
/* Allocate t's data for dtype and shape (zeroed). */
void ox_alloc(struct vpa_onnx_tensor *t, int dtype, size_t ndim, const int64_t *dims);
/* The same, not zeroed: for an operator that writes every element. */
void ox_alloc_raw(struct vpa_onnx_tensor *t, int dtype, size_t ndim, const int64_t *dims);
/* Deep copy. */
void ox_copy(struct vpa_onnx_tensor *dst, const struct vpa_onnx_tensor *src);
/* Decode a protobuf TensorProto (the generated type, passed as void *). */
int ox_tensor_from_proto(const char *file, const char *what, const void *proto,
			 const char *dir, struct vpa_onnx_tensor *out, struct vpa_err *err);
/* A float32/float64 tensor with a NaN or inf: VPA_EINPUT "FILE: WHAT: element
 * (0, 3) (0-based) is not finite (nan)"; other dtypes and finite data: 0. */
int ox_tensor_check_finite(const char *file, const char *what, const struct vpa_onnx_tensor *t,
			   struct vpa_err *err);
/* Element i of an int64/int32 tensor as int64 (others: VPA_BUG). */
int64_t ox_geti(const struct vpa_onnx_tensor *t, size_t i);
/* Element i of any numeric tensor as double. */
double ox_getd(const struct vpa_onnx_tensor *t, size_t i);
void ox_setd(struct vpa_onnx_tensor *t, size_t i, double v);

/* ---- node helpers (node.c): the operators' floor (it calls only tensor.c) */
/* Load-time check that fails naming the node and opset. */
int ox_check_fail(const char *file, const struct ox_node *n, int64_t opset,
		  struct vpa_err *err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Fail the current run naming the node: "m.onnx: node 'x' (Conv): ..." */
int ox_fail(struct ox_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const struct ox_attr *ox_attr(const struct ox_node *n, const char *name);
int64_t ox_attr_i(const struct ox_node *n, const char *name, int64_t def);
float ox_attr_f(const struct ox_node *n, const char *name, float def);
const char *ox_attr_s(const struct ox_node *n, const char *name, const char *def);
/* ints attribute: count into *cnt, pointer or NULL when absent. */
const int64_t *ox_attr_ints(const struct ox_node *n, const char *name, size_t *cnt);
/* Normalise axis into [0, rank) ; -1 on error (ox_fail called). */
int ox_axis(struct ox_ctx *c, int64_t axis, size_t rank);
/* Numpy broadcasting of two shapes into out (ox_fail when incompatible). */
int ox_broadcast(struct ox_ctx *c, size_t na, const int64_t *a, size_t nb, const int64_t *b,
		 size_t *nout, int64_t *out);

/* ---- the operator table: ops.c, the registry, is the only caller of the
 * ops_*.c tables (load.c finds operators through ox_find_op/ox_op_since) */
const struct ox_op *ox_find_op(const char *name);
/* First opset whose definition of the operator is the one implemented. */
int ox_op_since(const char *name);
extern const struct ox_op ox_ops_math[], ox_ops_nn[], ox_ops_shape[], ox_ops_reduce[],
	ox_ops_rnn[];
extern const struct ox_op ox_ops_signal[]; /* DFT, STFT, windows, MelWeightMatrix */

#endif
