/*
 * base/dist.c - the job loops shared out over MPI ranks.  See dist.h.
 *
 * Design (issue 19), the one place it is written down:
 *
 * - SPMD, replicated control flow.  Every rank runs the whole program on the
 *   same scenario: it reads and validates it, builds the same targets (the
 *   per-component RNG streams make them bit-identical) and walks the same
 *   loops in the same order.  Only the parallel job loops are shared out,
 *   each through vpa_dist_jobs: personalised models (simulated:
 *   targets/sim_am.c; imported and checked: targets/fl_am.c) and their A1
 *   footprints (attacks/a1.c), A2 layers (attacks/a2.c), identification
 *   blocks (attacks/identify.c), evaluation score sets (attacks/evaluate.c),
 *   d-exposure training runs (attacks/dexposure.c), the clients of an FL
 *   round (targets/fl_speaker.c), and the points of a sweep when there are at
 *   least as many points as ranks (scenarios/run.c; else the points run in
 *   turn, their loops shared out); imported ONNX acoustic models, checked one
 *   job per model (targets/fl_am_onnx.c); the utterances of the audio
 *   pipelines: features of a data directory (audio/xvector_data.c) and of an
 *   Indicator set given as audio (targets/fl_am_onnx.c), rho_F0
 *   (audio/xvector_data.c), x-vector embeddings (audio/xvector.c), ONNX
 *   embeddings of a data directory (embed/embed.c), the anonymisation of a
 *   data directory (audio/anon_dir.c: the 16-bit samples travel and every
 *   rank writes the whole directory into its own temporary folder; outputs
 *   stay rank 0's) and, the same way, the synthesis of a synthetic corpus
 *   (audio/synth.c); and the list of input files read (base/inputs.c, one job
 *   per rank); the shards of every mini-batch of the speaker extractors'
 *   training (audio/xvector_train.c: a fixed number of shards per batch, the
 *   shard gradients and batch-norm states travel and every rank sums them in
 *   shard order, so the weights are the same bits for any N and threads).  A
 *   loop inside a job runs inside its rank.
 *   Not shared out: other sequential training (a global model, a tagger
 *   target: deterministic, so every rank has the same network).
 *
 * - Dealing: job i runs on rank i mod N (fixed, documented, independent of
 *   timing), and inside a rank on `threads` threads that take that rank's jobs
 *   in increasing order.  Jobs of one loop cost about the same (models of one
 *   size, layers, runs), so round-robin balances them without a master.
 *
 * - Output contract: a loop's job writes its output into the caller's slot i
 *   (as in the one-process build).  After the loop each rank serialises the
 *   slots of its own jobs with pack() into one buffer of records
 *   (u64 job, u64 length, bytes); the buffers are exchanged by one broadcast
 *   per rank (in chunks of at most 1 GiB: MPI counts are int), and every other
 *   rank rebuilds the slots with unpack().  The loop then returns on every rank
 *   with every slot filled, exactly as a one-process run leaves them, so the
 *   code after the loop - and results.json - is the same for every N.  A job's
 *   input never travels: an imported model's network or activations are read
 *   by the rank that owns the job (the import keeps only the folder when there
 *   are several ranks); only outputs are sent (a footprint: 2 x 8 bytes per
 *   hidden unit of the chosen layers; a simulated model, small, whole).
 *
 * - Errors: a rank stops handing out its own jobs after a failure; jobs on a
 *   rank start in increasing order, so the lowest failed job index over all
 *   ranks (one MPI_Allreduce MIN) is the job a one-process run would have
 *   failed on.  Its rank broadcasts the message, every rank returns the same
 *   error with " (rank R, LABEL job I)" appended, and the callers unwind as
 *   they do without MPI.  Only rank 0 has stdout/stderr (cli/main.c) and
 *   writes files (cli/cmd_run.c), so the user reads one line and every rank
 *   exits 1; nothing is written.
 *
 * - Errors outside a loop (a file only one node cannot read, during setup):
 *   the failing rank unwinds to the next stage boundary of `run`
 *   (cli/cmd_run.c: after loading the scenario, after preparing the output
 *   folder, after the run, after writing the reports, and on every error
 *   path), which calls vpa_dist_agree with its error, while the other ranks go
 *   on to their next communicating call.  Every communicating call here
 *   (vpa_dist_jobs, vpa_dist_agree, vpa_dist_root_int, vpa_dist_barrier)
 *   starts with the same agreement: an MPI_Allreduce MIN of (failed ? rank :
 *   N, failed) and, when some rank failed, a broadcast of the lowest failed
 *   rank's error.  So the failing rank's agreement meets the others' next
 *   call whatever it is, every rank gets that error (" (rank R)" appended
 *   unless every rank failed, as a bad scenario does), and from then on no
 *   rank communicates: each call returns the error at once and every rank
 *   unwinds to cmd_run, where rank 0 prints the one line; every rank exits 1.
 *   A test hook makes such a failure happen on one rank (vpa_dist_test_fault,
 *   tests/e2e/test_mpi.sh).
 *
 * - MPI calls happen only on the thread that called vpa_dist_jobs (between
 *   thread pools), so MPI_THREAD_FUNNELED is enough.
 */
#include "base/dist.h"
#include "formats/io.h"

#include <pthread.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#ifdef VPA_MPI
#include <mpi.h>
#endif

static int g_rank = 0, g_size = 1;
static int g_local = 0; /* 1 while a vpa_dist_jobs loop runs its jobs */
#ifdef VPA_MPI
static int g_init = 0;
static int g_poison = 0;      /* a failure every rank knows: no more MPI calls */
static struct vpa_err g_perr; /* that failure */

/* The agreement every communicating call starts with (see the design above):
 * whether some rank failed (failed != 0 here, mine its error).  0 when none
 * did; else every rank gets the lowest failed rank's error in out, with
 * " (rank R)" unless every rank failed, and the ranks stop communicating. */
static int sync_status(int failed, const struct vpa_err *mine, struct vpa_err *out)
{
	if (g_poison) {
		if (out && !out->status)
			*out = g_perr;
		return g_perr.status;
	}
	int v[2] = {failed ? g_rank : g_size, failed ? 1 : 0}, r[2] = {g_size, 0};
	MPI_Allreduce(v, r, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (r[0] >= g_size)
		return 0;
	struct vpa_err e;
	vpa_err_init(&e);
	if (g_rank == r[0] && mine)
		e = *mine;
	MPI_Bcast(&e, (int)sizeof(e), MPI_BYTE, r[0], MPI_COMM_WORLD);
	e.msg[sizeof(e.msg) - 1] = 0;
	if (!e.status)
		e.status = VPA_EIO;
	if (!e.msg[0])
		snprintf(e.msg, sizeof(e.msg), "failed");
	if (!r[1]) {
		size_t l = strnlen(e.msg, sizeof(e.msg) - 1);
		snprintf(e.msg + l, sizeof(e.msg) - l, " (rank %d)", r[0]);
	}
	g_poison = 1;
	g_perr = e;
	if (out)
		*out = e;
	return e.status;
}
#endif
static uint64_t g_sent = 0;
static double g_comm = 0;

int vpa_dist_built(void)
{
#ifdef VPA_MPI
	return 1;
#else
	return 0;
#endif
}

void vpa_dist_init(int *argc, char ***argv)
{
#ifdef VPA_MPI
	if (g_init)
		return;
	int prov = 0, r = 0, s = 1;
	MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &prov);
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	MPI_Comm_size(MPI_COMM_WORLD, &s);
	g_rank = r;
	g_size = s;
	g_init = 1;
#else
	(void)argc;
	(void)argv;
#endif
}

void vpa_dist_finalize(void)
{
#ifdef VPA_MPI
	if (g_init)
		MPI_Finalize();
	g_init = 0;
#endif
}

int vpa_dist_rank(void)
{
	return g_rank;
}

int vpa_dist_size(void)
{
	return g_size;
}

int vpa_dist_root_int(int v)
{
#ifdef VPA_MPI
	if (g_init && g_size > 1 && !sync_status(0, NULL, NULL))
		MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
	return v;
}

int vpa_dist_agree(int rc, struct vpa_err *err)
{
#ifdef VPA_MPI
	if (g_init && g_size > 1) {
		if (rc && !err->status)
			err->status = rc;
		struct vpa_err e;
		vpa_err_init(&e);
		int grc = sync_status(rc != 0, err, &e);
		if (grc)
			*err = e;
		return grc;
	}
#else
	(void)err;
#endif
	return rc;
}

uint64_t vpa_dist_bytes_sent(void)
{
	return g_sent;
}

double vpa_dist_comm_seconds(void)
{
	return g_comm;
}

void vpa_dist_barrier(void)
{
#ifdef VPA_MPI
	if (g_init && g_size > 1 && !sync_status(0, NULL, NULL))
		MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void vpa_pack_u64(struct vpa_buf *b, uint64_t v)
{
	vpa_buf_add(b, &v, sizeof(v));
}

void vpa_pack_f64s(struct vpa_buf *b, const double *x, size_t n)
{
	if (n)
		vpa_buf_add(b, x, xmul(n, sizeof(double)));
}

void vpa_pack_f32s(struct vpa_buf *b, const float *x, size_t n)
{
	if (n)
		vpa_buf_add(b, x, xmul(n, sizeof(float)));
}

int vpa_unpack_bytes(const unsigned char **p, const unsigned char *end, void *x, size_t bytes)
{
	if ((size_t)(end - *p) < bytes)
		return -1;
	if (bytes)
		memcpy(x, *p, bytes);
	*p += bytes;
	return 0;
}

int vpa_unpack_u64(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	return vpa_unpack_bytes(p, end, v, sizeof(*v));
}

int vpa_unpack_f64s(const unsigned char **p, const unsigned char *end, double *x, size_t n)
{
	return vpa_unpack_bytes(p, end, x, xmul(n, sizeof(double)));
}

int vpa_unpack_f32s(const unsigned char **p, const unsigned char *end, float *x, size_t n)
{
	return vpa_unpack_bytes(p, end, x, xmul(n, sizeof(float)));
}

static _Thread_local size_t t_tid = 0;

size_t vpa_dist_thread(void)
{
	return t_tid;
}

struct dist_loop {
	size_t n_mine, next, done, n_all, tids;
	size_t first; /* rank's first job */
	size_t step;  /* number of ranks */
	int (*job)(void *, size_t, struct vpa_err *);
	void *arg;
	const char *label;
	double t0;
	int rc;        /* status of the lowest failed job, 0 if none */
	size_t fail_i; /* its index */
	struct vpa_err ferr;
	pthread_mutex_t mx;
};

static void *dist_worker(void *arg)
{
	struct dist_loop *p = arg;
	pthread_mutex_lock(&p->mx);
	size_t tid = p->tids++;
	pthread_mutex_unlock(&p->mx);
	size_t saved = t_tid; /* the caller's thread runs a worker too */
	t_tid = tid;
	for (;;) {
		pthread_mutex_lock(&p->mx);
		size_t k = p->next++;
		int stop = k >= p->n_mine || p->rc;
		pthread_mutex_unlock(&p->mx);
		if (stop) {
			t_tid = saved;
			return NULL;
		}
		size_t i = p->first + k * p->step;
		struct vpa_err e;
		vpa_err_init(&e);
		int rc = p->job(p->arg, i, &e);
		pthread_mutex_lock(&p->mx);
		if (rc && (!p->rc || i < p->fail_i)) {
			p->rc = rc;
			p->fail_i = i;
			p->ferr = e;
			if (!p->ferr.status)
				p->ferr.status = rc;
		}
		p->done++;
		if (p->label)
			vpa_progress(p->label, p->done, p->n_mine, p->t0);
		pthread_mutex_unlock(&p->mx);
	}
}

#ifdef VPA_MPI
/* Rank `root`'s buffer to every rank: length, then chunks of <= 1 GiB. */
static void bcast_buf(struct vpa_buf *b, int root)
{
	uint64_t len = b->len;
	MPI_Bcast(&len, 1, MPI_UINT64_T, root, MPI_COMM_WORLD);
	if (g_rank != root) {
		vpa_buf_release(b);
		vpa_buf_init(b);
		b->data = xmalloc(len ? len : 1);
		b->cap = b->len = len;
	}
	for (uint64_t o = 0; o < len;) {
		uint64_t c = len - o > (1u << 30) ? (1u << 30) : len - o;
		MPI_Bcast(b->data + o, (int)c, MPI_BYTE, root, MPI_COMM_WORLD);
		o += c;
	}
}

/* This rank's job outputs packed as records (index, length, bytes) into mine. */
static void pack_mine(size_t n, void (*pack)(void *, size_t, struct vpa_buf *), void *arg,
		      struct vpa_buf *mine)
{
	struct vpa_buf one;
	vpa_buf_init(&one);
	for (size_t i = (size_t)g_rank; i < n; i += (size_t)g_size) {
		one.len = 0;
		pack(arg, i, &one);
		vpa_pack_u64(mine, i);
		vpa_pack_u64(mine, one.len);
		if (one.len)
			vpa_buf_add(mine, one.data, one.len);
	}
	vpa_buf_release(&one);
}

/* Rank r's records [p, end) into their slots. */
static void unpack_records(const unsigned char *p, const unsigned char *end, size_t n,
			   int (*unpack)(void *, size_t, const unsigned char *, size_t), void *arg,
			   const char *label, int r)
{
	while (p < end) {
		uint64_t i, len;
		if (vpa_unpack_u64(&p, end, &i) || vpa_unpack_u64(&p, end, &len) ||
		    (uint64_t)(end - p) < len || i >= n || unpack(arg, (size_t)i, p, (size_t)len))
			VPA_BUG("%s: rank %d sent a job output that does not read back",
				label ? label : "jobs", r);
		p += len;
	}
}

/* Every rank's records (mine: this rank's) to every rank. */
static void exchange(size_t n, int (*unpack)(void *, size_t, const unsigned char *, size_t),
		     void *arg, const char *label, struct vpa_buf *mine)
{
	g_sent += mine->len;
	for (int r = 0; r < g_size; r++) {
		struct vpa_buf b;
		vpa_buf_init(&b);
		if (r == g_rank)
			b = *mine;
		bcast_buf(&b, r);
		if (r == g_rank)
			continue;
		unpack_records((const unsigned char *)b.data, (const unsigned char *)b.data + b.len,
			       n, unpack, arg, label, r);
		vpa_buf_release(&b);
	}
}

/*
 * Every rank's records (mine) to rank 0 only: one MPI_Gatherv.  Returns -1
 * without moving anything when a rank's bytes or their total do not fit an
 * int count (the caller then exchanges the same records), else 0.
 */
static int gather_root(size_t n, int (*unpack)(void *, size_t, const unsigned char *, size_t),
		       void *arg, const char *label, const struct vpa_buf *mine)
{
	unsigned long long len = mine->len, *lens = NULL;
	if (g_rank == 0)
		lens = xmalloc((size_t)g_size * sizeof(*lens));
	MPI_Gather(&len, 1, MPI_UNSIGNED_LONG_LONG, lens, 1, MPI_UNSIGNED_LONG_LONG, 0,
		   MPI_COMM_WORLD);
	int ok = 1;
	int *cnt = NULL, *dsp = NULL;
	if (g_rank == 0) {
		unsigned long long tot = 0;
		cnt = xmalloc((size_t)g_size * sizeof(int));
		dsp = xmalloc((size_t)g_size * sizeof(int));
		for (int r = 0; r < g_size; r++) {
			ok &= lens[r] < (unsigned long long)INT_MAX;
			cnt[r] = ok ? (int)lens[r] : 0;
			dsp[r] = ok && tot < (unsigned long long)INT_MAX ? (int)tot : 0;
			tot += lens[r];
		}
		ok &= tot < (unsigned long long)INT_MAX;
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	unsigned char *all = NULL;
	if (ok) {
		g_sent += mine->len;
		if (g_rank == 0)
			all = xmalloc((size_t)dsp[g_size - 1] + (size_t)cnt[g_size - 1] + 1);
		MPI_Gatherv(mine->data ? mine->data : "", (int)mine->len, MPI_BYTE, all, cnt, dsp,
			    MPI_BYTE, 0, MPI_COMM_WORLD);
		for (int r = 1; g_rank == 0 && r < g_size; r++)
			unpack_records(all + dsp[r], all + dsp[r] + cnt[r], n, unpack, arg, label, r);
	}
	free(all);
	free(lens);
	free(cnt);
	free(dsp);
	return ok ? 0 : -1;
}
#endif

int vpa_dist_spans_ranks(void)
{
	return !g_local && g_size > 1;
}

void vpa_dist_bcast(struct vpa_buf *b)
{
#ifdef VPA_MPI
	if (!g_local && g_size > 1) {
		double tc = vpa_now();
		bcast_buf(b, 0);
		g_comm += vpa_now() - tc;
	}
#else
	(void)b;
#endif
}

static int dist_jobs(size_t n, int threads, int (*job)(void *arg, size_t i, struct vpa_err *e),
		     void (*pack)(void *arg, size_t i, struct vpa_buf *b),
		     int (*unpack)(void *arg, size_t i, const unsigned char *p, size_t len),
		     void *arg, const char *label, void (*run)(size_t, void *(*)(void *), void *),
		     int to_root, struct vpa_err *err)
{
	/* a loop inside a job of a shared-out loop (a sweep point's loops) runs
	 * inside its rank: the other ranks are busy with their own jobs */
	int nested = g_local, ranks = nested ? 1 : g_size;
#ifdef VPA_MPI
	/* a rank that failed outside a loop meets this agreement in its own */
	if (ranks > 1) {
		int src = sync_status(0, NULL, err);
		if (src)
			return src;
	}
#endif
	if (!nested)
		g_local = 1; /* written only here, outside any job: jobs only read it */
	struct dist_loop p;
	memset(&p, 0, sizeof(p));
	p.n_all = n;
	p.first = nested ? 0 : (size_t)g_rank;
	p.step = (size_t)ranks;
	p.n_mine = p.first < n ? (n - p.first + p.step - 1) / p.step : 0;
	p.job = job;
	p.arg = arg;
	p.label = label;
	p.t0 = vpa_now();
	vpa_err_init(&p.ferr);
	pthread_mutex_init(&p.mx, NULL);
	size_t nth = threads > 1 ? (size_t)threads : 1;
	if (nth > p.n_mine)
		nth = p.n_mine ? p.n_mine : 1;
	if (label && p.n_mine)
		vpa_progress(label, 0, p.n_mine, p.t0);
	if (p.n_mine)
		(run ? run : vpa_run_workers)(nth, dist_worker, &p);
	pthread_mutex_destroy(&p.mx);
	if (!nested)
		g_local = 0;
#ifdef VPA_MPI
	if (ranks > 1) {
		double tc = vpa_now();
		unsigned long long lf = p.rc ? p.fail_i : n, gf = n;
		MPI_Allreduce(&lf, &gf, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
		if (gf < n) {
			int owner = (int)(gf % (unsigned long long)g_size);
			struct vpa_err e = p.ferr;
			MPI_Bcast(&e, (int)sizeof(e), MPI_BYTE, owner, MPI_COMM_WORLD);
			size_t l = strnlen(e.msg, sizeof(e.msg) - 1);
			snprintf(e.msg + l, sizeof(e.msg) - l, " (rank %d, %s%sjob %llu)", owner,
				 label ? label : "", label ? " " : "", gf);
			if (err && !err->status)
				*err = e;
			g_comm += vpa_now() - tc;
			return e.status ? e.status : VPA_EIO;
		}
		if (!pack || !unpack)
			VPA_BUG("%s: a distributed loop without pack/unpack", label ? label : "jobs");
		struct vpa_buf mine;
		vpa_buf_init(&mine);
		pack_mine(n, pack, arg, &mine);
		if (!to_root || gather_root(n, unpack, arg, label, &mine))
			exchange(n, unpack, arg, label, &mine);
		vpa_buf_release(&mine);
		g_comm += vpa_now() - tc;
		return 0;
	}
#else
	(void)pack;
	(void)unpack;
	(void)to_root;
#endif
	if (p.rc && err && !err->status)
		*err = p.ferr;
	return p.rc;
}

int vpa_dist_jobs(size_t n, int threads, int (*job)(void *arg, size_t i, struct vpa_err *e),
		  void (*pack)(void *arg, size_t i, struct vpa_buf *b),
		  int (*unpack)(void *arg, size_t i, const unsigned char *p, size_t len), void *arg,
		  const char *label, void (*run)(size_t, void *(*)(void *), void *),
		  struct vpa_err *err)
{
	return dist_jobs(n, threads, job, pack, unpack, arg, label, run, 0, err);
}

int vpa_dist_jobs_to_root(size_t n, int threads,
			  int (*job)(void *arg, size_t i, struct vpa_err *e),
			  void (*pack)(void *arg, size_t i, struct vpa_buf *b),
			  int (*unpack)(void *arg, size_t i, const unsigned char *p, size_t len),
			  void *arg, const char *label,
			  void (*run)(size_t, void *(*)(void *), void *), struct vpa_err *err)
{
	return dist_jobs(n, threads, job, pack, unpack, arg, label, run, 1, err);
}

int vpa_dist_test_fault(const char *stage, struct vpa_err *err)
{
	const char *v = getenv("VPAUDIT_TEST_FAULT");
	char *end = NULL;
	if (!v)
		return 0;
	long r = strtol(v, &end, 10);
	if (end == v || *end != ':' || r != g_rank || strcmp(end + 1, stage))
		return 0;
	return vpa_fail(err, VPA_EIO, NULL, "%s: fault injected (VPAUDIT_TEST_FAULT)", stage);
}
