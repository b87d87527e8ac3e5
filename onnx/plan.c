/*
 * onnx/plan.c - the static memory plan: one arena per run, offsets computed
 * once per input-shape key; a key stands for a bucket of lengths.
 *
 * Keys (run.c): every graph input's dtype and shape, the data of non-float
 * inputs, the requested values.  A float input's axis that the model leaves
 * free (a dim_param: PyTorch's dynamic time axis) of 64 or more is keyed by
 * its bucket edge, the smallest 2^e x {1, 1.25, 1.5, 1.75, 2} that holds it,
 * so utterances of 2-20 s fall into 14 keys instead of one per length; t is
 * the product of a run's bucketed lengths, E that of their edges.
 *
 * How a plan is made (a first pass, not a symbolic shape inference): a plan
 * pays only when a key comes back, so the first run of a key only notes it
 * (a copy, among the last 64 seen; for a bucketed key also its events and
 * sizes); the second runs dynamically (the pools of tensor.c) and records
 * every allocation of a value or a scratch buffer and every release as an
 * event: block k is born at event t0 and dies at event t1 (values requested
 * by the caller, and anything alive when the graph has run, die at the end).
 * Shape operators on int64 are real, so this pass sees every shape as later
 * runs of the key will, up to the length.
 *
 * Sizes of a bucket's plan: when the first two runs of a bucketed key had
 * the same events at lengths ta != tb, each block's size at E comes from
 * its sizes sa, sb by the curve a + q t^2 through both (fit_size): for any
 * size a + b t + c t^2 with b, c >= 0 (activations, and a T x T attention
 * block) that curve is above it beyond tb, so the plan holds the bucket's
 * longest input; else the sizes are the second run's.  A block a replay
 * needs may be smaller than planned (the start of the block is used), never
 * larger: a larger one leaves the plan (below), and when that run had the
 * plan's events at another length its sizes and the plan's refit the plan
 * (never shrinking a block), which replaces it for later runs.
 *
 * Placement (greedy by size, best fit): blocks sorted by size (largest
 * first, then birth); each goes into the smallest gap, between the blocks
 * already placed whose lifetimes intersect its own, that holds it, else
 * after the highest of them.  Offsets are 64-byte aligned.  The arena is the
 * highest end; it is at least the peak of simultaneously live bytes and at
 * most the sum of all blocks (ox_plan_check verifies both and that no two
 * blocks alive at the same event overlap).
 *
 * A planned run takes an arena (kept on the model between runs, one per
 * concurrent run, like the pools) and replays the plan: the k-th event must
 * be the plan's k-th event (an allocation of at most the block's size, or
 * the release of the same block); it then gets base + offset and releases
 * are no-ops.  At the first event that differs (a longer input than the
 * plan's fit allowed for; a shape that depends on float data: a Cast to
 * int64 feeding Range/Reshape/ConstantOfShape/Tile/Expand/Pad/Slice with a
 * different value; there is no NonZero-like operator in the table) the run
 * leaves the plan: everything allocated after it is dynamic (pool or
 * malloc), so no live block can be overwritten.  Where a block lies never
 * changes what is computed in it, so planned, refitted and unplanned runs
 * give the same bits.  Plans are immutable once published and shared by
 * every thread (reference counted, under the cache's mutex; a refit
 * publishes a new plan in the old one's slot, runs replaying the old keep
 * their reference); at most OX_PLAN_MAX are kept per model (the oldest is
 * dropped).
 */
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "onnx/internal.h"

#define ALIGN 64
#define OX_PLAN_MAX 32
#define OX_SEEN 64

struct ox_plan {
	int refs;            /* under the cache mutex */
	unsigned char *key;  /* owned */
	size_t key_len;
	size_t n;            /* blocks */
	size_t *bytes, *off; /* owned: rounded size and offset of each block */
	size_t *t0, *t1;     /* owned: birth and death events */
	size_t n_ev;
	int *ev;             /* owned: k >= 0 birth of k, -(k+1) death of k */
	size_t arena;
	/* A bucketed key: the sizes recorded (rounded) at the product of lengths
	 * t_src, kept to fit a new plan when a longer run of the bucket leaves
	 * this one; NULL for an exact key. */
	size_t *raw;
	double t_src, edge;
};

struct ox_plan_cache {
	pthread_mutex_t lock;
	struct ox_plan *plans[OX_PLAN_MAX];
	size_t next; /* slot replaced when full */
	struct {
		void *ptr;
		size_t bytes;
	} arenas[OX_POOL_CACHE];
	size_t n_arenas;
	struct {
		unsigned char *key; /* owned copy of a key run once, without a plan */
		size_t len;
		/* a bucketed key: that run's events and rounded sizes at t (NULL: none) */
		int *ev;
		size_t *bytes, n_ev, n_blk;
		double t;
	} seen[OX_SEEN];
	size_t n_seen, seen_next;
	uint64_t planned, recorded, left, dynamic, first, refit; /* run counters */
};

/* The current thread's run (NULL outside vpa_onnx_run or when planning is off). */
static _Thread_local struct ox_plan_run *tl_run;

static size_t round_up(size_t b)
{
	b = b ? b : 1;
	return (b + ALIGN - 1) / ALIGN * ALIGN;
}

struct ox_plan_cache *ox_plan_cache_new(void)
{
	struct ox_plan_cache *pc = xcalloc(1, sizeof(*pc));
	pthread_mutex_init(&pc->lock, NULL);
	return pc;
}

static void plan_free(struct ox_plan *p)
{
	if (!p)
		return;
	free(p->key);
	free(p->bytes);
	free(p->off);
	free(p->t0);
	free(p->t1);
	free(p->ev);
	free(p->raw);
	free(p);
}

void ox_plan_cache_free(struct ox_plan_cache *pc)
{
	if (!pc)
		return;
	for (size_t i = 0; i < OX_PLAN_MAX; i++)
		plan_free(pc->plans[i]);
	for (size_t i = 0; i < pc->n_arenas; i++)
		free(pc->arenas[i].ptr);
	for (size_t i = 0; i < pc->n_seen; i++) {
		free(pc->seen[i].key);
		free(pc->seen[i].ev);
		free(pc->seen[i].bytes);
	}
	pthread_mutex_destroy(&pc->lock);
	free(pc);
}

static void unref(struct ox_plan *p)
{
	if (p && --p->refs == 0)
		plan_free(p);
}

/* ---- placement */

static const struct ox_plan *sort_plan;

static int by_size(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct ox_plan *p = sort_plan;
	if (p->bytes[i] != p->bytes[j])
		return p->bytes[i] > p->bytes[j] ? -1 : 1;
	if (p->t0[i] != p->t0[j])
		return p->t0[i] < p->t0[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

static const size_t *sort_off;

static int by_off(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	return sort_off[i] < sort_off[j] ? -1 : sort_off[i] > sort_off[j];
}

static int alive_together(const struct ox_plan *p, size_t a, size_t b)
{
	return p->t0[a] < p->t1[b] && p->t0[b] < p->t1[a];
}

static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER; /* qsort has no context argument in C11 */

static void place(struct ox_plan *p)
{
	size_t n = p->n;
	size_t *order = xmalloc((n + 1) * sizeof(size_t)), *conf = xmalloc((n + 1) * sizeof(size_t));
	unsigned char *placed = xcalloc(n + 1, 1);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	pthread_mutex_lock(&sort_lock);
	sort_plan = p;
	qsort(order, n, sizeof(size_t), by_size);
	p->arena = 0;
	for (size_t r = 0; r < n; r++) {
		size_t b = order[r], nc = 0;
		for (size_t q = 0; q < r; q++)
			if (alive_together(p, b, order[q]))
				conf[nc++] = order[q];
		sort_off = p->off;
		qsort(conf, nc, sizeof(size_t), by_off);
		size_t end = 0, best = (size_t)-1, best_gap = (size_t)-1;
		for (size_t q = 0; q < nc; q++) {
			size_t c = conf[q];
			if (p->off[c] >= end && p->off[c] - end >= p->bytes[b] &&
			    p->off[c] - end < best_gap) {
				best_gap = p->off[c] - end;
				best = end;
			}
			if (p->off[c] + p->bytes[c] > end)
				end = p->off[c] + p->bytes[c];
		}
		p->off[b] = best != (size_t)-1 ? best : end;
		placed[b] = 1;
		if (p->off[b] + p->bytes[b] > p->arena)
			p->arena = p->off[b] + p->bytes[b];
	}
	pthread_mutex_unlock(&sort_lock);
	free(order);
	free(conf);
	free(placed);
}

size_t ox_plan_check(const struct ox_plan *p, size_t *peak, size_t *sum, size_t *arena)
{
	size_t bad = 0, live = 0;
	*peak = *sum = 0;
	*arena = p->arena;
	for (size_t a = 0; a < p->n; a++) {
		*sum += p->bytes[a];
		if (p->off[a] + p->bytes[a] > p->arena || p->off[a] % ALIGN)
			bad++;
		for (size_t b = a + 1; b < p->n; b++)
			if (alive_together(p, a, b) && p->off[a] < p->off[b] + p->bytes[b] &&
			    p->off[b] < p->off[a] + p->bytes[a])
				bad++;
	}
	for (size_t t = 0; t < p->n_ev; t++) {
		int e = p->ev[t];
		if (e >= 0)
			live += p->bytes[e];
		else
			live -= p->bytes[-e - 1];
		if (live > *peak)
			*peak = live;
	}
	return bad;
}

/* ---- recording */

static void rec_event(struct ox_plan_run *r, int e)
{
	if (r->n_ev == r->cap_ev) {
		r->cap_ev = r->cap_ev ? 2 * r->cap_ev : 256;
		r->ev = xrealloc(r->ev, r->cap_ev * sizeof(int));
	}
	r->ev[r->n_ev++] = e;
}

static void rec_alloc(struct ox_plan_run *r, void *ptr, size_t bytes)
{
	if (r->n_blk == r->cap_blk) {
		r->cap_blk = r->cap_blk ? 2 * r->cap_blk : 128;
		r->blk_ptr = xrealloc(r->blk_ptr, r->cap_blk * sizeof(void *));
		r->blk_bytes = xrealloc(r->blk_bytes, r->cap_blk * sizeof(size_t));
	}
	r->blk_ptr[r->n_blk] = ptr;
	r->blk_bytes[r->n_blk] = bytes;
	rec_event(r, (int)r->n_blk++);
}

/* The latest live block at ptr dies (two live blocks never share an address). */
static void rec_free(struct ox_plan_run *r, void *ptr)
{
	for (size_t k = r->n_blk; k-- > 0;)
		if (r->blk_ptr[k] == ptr) {
			r->blk_ptr[k] = NULL;
			rec_event(r, -(int)k - 1);
			break;
		}
}

/* ---- the hooks of tensor.c */

void *ox_plan_alloc(size_t bytes)
{
	struct ox_plan_run *r = tl_run;
	if (!r || r->stopped || !r->plan || r->left)
		return NULL;
	const struct ox_plan *p = r->plan;
	int e = r->clock < p->n_ev ? p->ev[r->clock] : -1;
	/* At most the planned block: a bucket's plan holds the sizes of its
	 * longest input, shorter inputs use the start of each block. */
	if (e < 0 || round_up(bytes) > p->bytes[e]) {
		r->left = 1;
		return NULL;
	}
	r->clock++;
	void *ptr = r->base + p->off[e];
	if (r->recording) /* a bucketed replay notes its sizes: a refit needs them */
		rec_alloc(r, ptr, bytes);
	return ptr;
}

void ox_plan_note_alloc(void *ptr, size_t bytes)
{
	struct ox_plan_run *r = tl_run;
	if (r && !r->stopped && r->recording)
		rec_alloc(r, ptr, bytes);
}

int ox_plan_note_free(void *ptr)
{
	struct ox_plan_run *r = tl_run;
	if (!r || !ptr)
		return 0;
	if (!r->stopped && r->recording)
		rec_free(r, ptr);
	if (r->base && (char *)ptr >= r->base && (char *)ptr < r->base + r->arena_bytes) {
		if (!r->stopped && !r->left) {
			const struct ox_plan *p = r->plan;
			int e = r->clock < p->n_ev ? p->ev[r->clock] : 0;
			if (e < 0 && r->base + p->off[-e - 1] == (char *)ptr)
				r->clock++;
			else
				r->left = 1;
		}
		return 1;
	}
	return 0;
}

/* ---- fitting a bucket's sizes */

/*
 * The size of a block at the bucket's edge E from its sizes sa, sb at two
 * lengths ta < tb of the bucket.  Sizes in speech models are a + b t + c t^2
 * with b, c >= 0 (c: a T x T attention block); the curve a' + q t^2 through
 * the two points is an upper bound of any such size beyond tb (their
 * difference is a concave parabola that is 0 at ta and tb), exact for a
 * pure quadratic.  A stride's floor moves a size by less than one output
 * step: 8 input steps of slope are added.  A size that does not grow takes
 * the larger of the two; any size a later run exceeds leaves the plan
 * (ox_plan_alloc), so a wrong guess costs time, never memory safety.
 */
static size_t fit_size(double ta, size_t sa, double tb, size_t sb, double edge)
{
	if (ta > tb) {
		double t = ta;
		size_t s = sa;
		ta = tb, sa = sb, tb = t, sb = s;
	}
	size_t hi = sa > sb ? sa : sb;
	if (ta == tb || sb <= sa || edge <= tb)
		return hi;
	double d = (double)(sb - sa), q = d / (tb * tb - ta * ta), slope = d / (tb - ta);
	double g = (double)sb + q * (edge * edge - tb * tb) + 8 * slope;
	if (!(g < 1e18)) /* absurd: keep the measured size */
		return hi;
	size_t s = round_up((size_t)g + 1);
	return s > hi ? s : hi;
}

/*
 * A plan from recorded events ev (n_ev, taken) over n blocks of sizes now[]
 * at length t; with ref (sizes at t_ref, the same events) each block gets the
 * fitted size at edge; floor (NULL or the sizes of the plan replaced) is a
 * lower bound.  edge 0: an exact key, the sizes as recorded.
 */
static struct ox_plan *build(unsigned char *key, size_t key_len, int *ev, size_t n_ev, size_t n,
			     const size_t *now, double t, const size_t *ref, double t_ref,
			     const size_t *floor, double edge)
{
	struct ox_plan *p = xcalloc(1, sizeof(*p));
	p->refs = 1;
	p->key = key;
	p->key_len = key_len;
	p->n = n;
	p->bytes = xmalloc((n + 1) * sizeof(size_t));
	p->off = xcalloc(n + 1, sizeof(size_t));
	p->t0 = xmalloc((n + 1) * sizeof(size_t));
	p->t1 = xmalloc((n + 1) * sizeof(size_t));
	if (edge > 0) {
		p->raw = xmalloc((n + 1) * sizeof(size_t));
		p->t_src = t;
		p->edge = edge;
	}
	for (size_t k = 0; k < n; k++) {
		size_t s = round_up(now[k]);
		if (ref)
			s = fit_size(t_ref, round_up(ref[k]), t, s, edge);
		if (floor && floor[k] > s)
			s = floor[k];
		p->bytes[k] = s;
		if (p->raw)
			p->raw[k] = round_up(now[k]);
		p->t1[k] = n_ev + 1; /* alive at the end: requested values */
	}
	for (size_t i = 0; i < n_ev; i++) {
		int e = ev[i];
		if (e >= 0)
			p->t0[e] = i;
		else
			p->t1[-e - 1] = i;
	}
	/* The replayed events: births and deaths (deaths at the end are not events). */
	p->n_ev = n_ev;
	p->ev = ev;
	place(p);
	return p;
}

/* Publish p: in old's slot when old is still cached (a refit), else in a
 * new slot unless its key has a plan already (then p is dropped). */
static void publish(struct ox_plan_cache *pc, struct ox_plan *p, const struct ox_plan *old)
{
	int placed = 0, dup = 0;
	pthread_mutex_lock(&pc->lock);
	for (size_t i = 0; i < OX_PLAN_MAX && old && !placed; i++)
		if (pc->plans[i] == old) {
			unref(pc->plans[i]); /* the cache's reference; runs keep theirs */
			pc->plans[i] = p;
			placed = 1;
			pc->refit++;
		}
	for (size_t i = 0; i < OX_PLAN_MAX && !placed; i++)
		dup |= pc->plans[i] && pc->plans[i]->key_len == p->key_len &&
		       !memcmp(pc->plans[i]->key, p->key, p->key_len);
	if (!placed && !dup) {
		size_t s = pc->next;
		pc->next = (s + 1) % OX_PLAN_MAX;
		unref(pc->plans[s]);
		pc->plans[s] = p;
		placed = 1;
	}
	pthread_mutex_unlock(&pc->lock);
	if (!placed)
		plan_free(p);
}

static int same_events(const int *a, size_t na, const int *b, size_t nb)
{
	return na == nb && !memcmp(a, b, na * sizeof(int));
}

/* ---- a run */

void ox_plan_run_begin(struct ox_plan_cache *pc, const unsigned char *key, size_t key_len,
		       double t, double edge, struct ox_plan_run *r)
{
	memset(r, 0, sizeof(*r));
	r->pc = pc;
	if (!key) {
		pthread_mutex_lock(&pc->lock);
		pc->dynamic++;
		pthread_mutex_unlock(&pc->lock);
		return;
	}
	r->t = t;
	r->edge = edge;
	pthread_mutex_lock(&pc->lock);
	for (size_t i = 0; i < OX_PLAN_MAX && !r->plan; i++) {
		struct ox_plan *p = pc->plans[i];
		if (p && p->key_len == key_len && !memcmp(p->key, key, key_len)) {
			p->refs++;
			r->plan = p;
		}
	}
	int record = 0;
	if (!r->plan) {
		for (size_t i = 0; i < pc->n_seen && !record; i++)
			record = pc->seen[i].len == key_len && !memcmp(pc->seen[i].key, key, key_len);
		if (!record) {
			size_t s = pc->seen_next;
			if (s < pc->n_seen) {
				free(pc->seen[s].key);
				free(pc->seen[s].ev);
				free(pc->seen[s].bytes);
			} else {
				pc->n_seen++;
			}
			memset(&pc->seen[s], 0, sizeof(pc->seen[s]));
			pc->seen[s].key = xmalloc(key_len + 1);
			memcpy(pc->seen[s].key, key, key_len);
			pc->seen[s].len = key_len;
			pc->seen_next = (s + 1) % OX_SEEN;
			pc->first++;
		}
	}
	if (r->plan) {
		/* The largest cached arena; grown below when too small. */
		size_t best = (size_t)-1;
		for (size_t i = 0; i < pc->n_arenas; i++)
			if (best == (size_t)-1 || pc->arenas[i].bytes > pc->arenas[best].bytes)
				best = i;
		if (best != (size_t)-1) {
			r->base = pc->arenas[best].ptr;
			r->arena_bytes = pc->arenas[best].bytes;
			pc->arenas[best] = pc->arenas[--pc->n_arenas];
		}
		pc->planned++;
	} else if (record) {
		pc->recorded++;
	}
	pthread_mutex_unlock(&pc->lock);
	if (r->plan && (!r->base || r->arena_bytes < r->plan->arena)) {
		free(r->base);
		r->arena_bytes = r->plan->arena ? r->plan->arena : ALIGN; /* never 0 */
		r->base = aligned_alloc(ALIGN, r->arena_bytes);
		if (!r->base)
			VPA_BUG("out of memory (%zu bytes of arena)", r->arena_bytes);
	}
	/* A bucketed key records every run: a first sighting's sizes and the
	 * second's give the fit, a replay's sizes refit a plan it outgrew. */
	r->first = !r->plan && !record;
	if (r->first && edge <= 0)
		return; /* first sighting of an exact key: dynamic, nothing recorded */
	if (!r->plan || edge > 0) {
		r->recording = 1;
		r->key = xmalloc(key_len + 1);
		memcpy(r->key, key, key_len);
		r->key_len = key_len;
	}
	tl_run = r;
}

void ox_plan_run_finish(struct ox_plan_run *r, int ok)
{
	if (tl_run != r || r->stopped)
		return;
	struct ox_plan_cache *pc = r->pc;
	if (r->plan && r->left) {
		pthread_mutex_lock(&pc->lock);
		pc->left++;
		pthread_mutex_unlock(&pc->lock);
	}
	r->stopped = 1;
	if (!ok || !r->recording || r->n_blk > (size_t)1 << 30)
		return;
	if (r->first) {
		/* Keep the events with the key's sighting, for the fit of the second run. */
		pthread_mutex_lock(&pc->lock);
		for (size_t i = 0; i < pc->n_seen; i++)
			if (pc->seen[i].len == r->key_len && !pc->seen[i].ev &&
			    !memcmp(pc->seen[i].key, r->key, r->key_len)) {
				pc->seen[i].ev = r->ev;
				pc->seen[i].n_ev = r->n_ev;
				pc->seen[i].bytes = r->blk_bytes;
				pc->seen[i].n_blk = r->n_blk;
				pc->seen[i].t = r->t;
				r->ev = NULL;
				r->blk_bytes = NULL;
				break;
			}
		pthread_mutex_unlock(&pc->lock);
		return;
	}
	const struct ox_plan *old = r->plan;
	if (old) {
		/* A replay that outgrew its bucket's plan with the same events at
		 * another length: the plan refitted from its sizes and these. */
		if (!r->left || !old->raw || r->t == old->t_src ||
		    !same_events(r->ev, r->n_ev, old->ev, old->n_ev) || r->n_blk != old->n)
			return;
		struct ox_plan *p = build(r->key, r->key_len, r->ev, r->n_ev, r->n_blk, r->blk_bytes,
					  r->t, old->raw, old->t_src, old->bytes, r->edge);
		r->key = NULL;
		r->ev = NULL;
		publish(pc, p, old);
		return;
	}
	size_t *ref = NULL;
	double t_ref = 0;
	if (r->edge > 0) {
		pthread_mutex_lock(&pc->lock);
		for (size_t i = 0; i < pc->n_seen && !ref; i++)
			if (pc->seen[i].len == r->key_len && pc->seen[i].ev &&
			    !memcmp(pc->seen[i].key, r->key, r->key_len) &&
			    pc->seen[i].n_blk == r->n_blk &&
			    same_events(pc->seen[i].ev, pc->seen[i].n_ev, r->ev, r->n_ev)) {
				ref = xmalloc((r->n_blk + 1) * sizeof(size_t));
				memcpy(ref, pc->seen[i].bytes, r->n_blk * sizeof(size_t));
				t_ref = pc->seen[i].t;
			}
		pthread_mutex_unlock(&pc->lock);
	}
	struct ox_plan *p = build(r->key, r->key_len, r->ev, r->n_ev, r->n_blk, r->blk_bytes, r->t,
				  ref, t_ref, NULL, r->edge);
	free(ref);
	r->key = NULL;
	r->ev = NULL;
	publish(pc, p, NULL);
}

int ox_plan_in_arena(const void *ptr)
{
	struct ox_plan_run *r = tl_run;
	return r && r->base && (const char *)ptr >= r->base &&
	       (const char *)ptr < r->base + r->arena_bytes;
}

void ox_plan_run_end(struct ox_plan_run *r)
{
	if (tl_run == r)
		tl_run = NULL;
	struct ox_plan_cache *pc = r->pc;
	pthread_mutex_lock(&pc->lock);
	unref(r->plan);
	if (r->base && pc->n_arenas < OX_POOL_CACHE) {
		pc->arenas[pc->n_arenas].ptr = r->base;
		pc->arenas[pc->n_arenas++].bytes = r->arena_bytes;
		r->base = NULL;
	}
	pthread_mutex_unlock(&pc->lock);
	free(r->base);
	free(r->key);
	free(r->ev);
	free(r->blk_ptr);
	free(r->blk_bytes);
	memset(r, 0, sizeof(*r));
}

int vpa_onnx_plan_stats(const struct vpa_onnx_model *m, size_t i, struct vpa_onnx_plan_stats *st)
{
	struct ox_plan_cache *pc = m->plans;
	memset(st, 0, sizeof(*st));
	if (!pc)
		return 0;
	pthread_mutex_lock(&pc->lock);
	st->planned_runs = pc->planned;
	st->recorded_runs = pc->recorded;
	st->left_runs = pc->left;
	st->dynamic_runs = pc->dynamic;
	st->first_runs = pc->first;
	st->refit_runs = pc->refit;
	size_t k = 0, found = 0;
	for (size_t s = 0; s < OX_PLAN_MAX; s++) {
		if (!pc->plans[s])
			continue;
		st->n_plans++;
		if (k++ == i && !found) {
			const struct ox_plan *p = pc->plans[s];
			found = 1;
			st->n_blocks = p->n;
			st->overlaps = ox_plan_check(p, &st->peak_bytes, &st->sum_bytes,
						     &st->arena_bytes);
		}
	}
	pthread_mutex_unlock(&pc->lock);
	return (int)found;
}
