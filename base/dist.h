/*
 * base/dist.h - the job loops shared out over MPI ranks (issue 19).
 *
 * One binary per build: `make` builds ./vpaudit without MPI (one rank, every
 * function here a no-op or a plain thread pool); `make mpi` builds
 * ./vpaudit-mpi with -DVPA_MPI, where `mpirun -n N ./vpaudit-mpi run S.yaml`
 * runs N copies of the same program.  The design is written down once, at the
 * top of base/dist.c.
 */
#ifndef VPA_DIST_H
#define VPA_DIST_H

#include "base/base.h"

/* 1 when this binary was built with MPI (-DVPA_MPI). */
int vpa_dist_built(void);

/*
 * Start / stop MPI (no-ops without it).  vpa_dist_init is called once at the
 * top of main; a second call does nothing.  After it, vpa_dist_rank() and
 * vpa_dist_size() are this process's rank and the number of ranks (0 and 1
 * without MPI or before init).
 */
void vpa_dist_init(int *argc, char ***argv);
void vpa_dist_finalize(void);
int vpa_dist_rank(void);
int vpa_dist_size(void);
/*
 * Agreement at a stage boundary (base/dist.c, "Errors outside a loop"): rc and
 * err are this rank's outcome.  Returns 0 when every rank succeeded; else, on
 * every rank, the status of the lowest failed rank, whose message err then
 * holds followed by " (rank R)" (unless every rank failed).  After a failure
 * every rank knows of, no call here communicates any more: each returns that
 * failure.  Without MPI (or with one rank) returns rc, err untouched.
 */
int vpa_dist_agree(int rc, struct vpa_err *err);

/*
 * Test hook (tests/e2e/test_mpi.sh only): with VPAUDIT_TEST_FAULT=R:STAGE in
 * the environment, rank R (any build: rank 0 without MPI) fails at the point
 * named STAGE with "STAGE: fault injected (VPAUDIT_TEST_FAULT)",
 * returned as VPA_EIO in err; elsewhere returns 0.  Points: "scenario" (after
 * loading it), "targets" (before building the targets), "attacks" (before the
 * attacks), "report" (rank R's report-writing step).
 */
int vpa_dist_test_fault(const char *stage, struct vpa_err *err);

/* Rank 0's v on every rank (v itself without MPI): the exit status, so that a
   failure only rank 0 can have (writing the report) ends every rank with 1. */
int vpa_dist_root_int(int v);

/*
 * Jobs 0 .. n-1 shared out over the ranks, `threads` threads each; every rank
 * calls it with the same n (the loops run in the same order on every rank).
 *   job(arg, i, e)   computes job i into the caller's slot i; on error
 *                    records it in e (vpa_fail) and returns non-zero.
 *   pack(arg, i, b)  appends slot i's output to b (called on the rank that ran
 *                    job i, after the loop);
 *   unpack(arg, i, p, len)  fills slot i from those bytes on every other rank;
 *                    returns non-zero when they cannot be read (our bug).
 * On return every rank holds every job's output, as after a one-process run.
 * On error (0 or the status of the lowest failed job), err holds that job's
 * message followed by " (rank R, LABEL job I)" when more than one rank runs,
 * on every rank, and the slots' contents are unspecified: callers free them.
 * label names the loop in progress lines and errors ("a1 footprints").
 * run starts the threads: NULL for vpa_run_workers, vpa_la_run_workers when
 * jobs call BLAS.  pack/unpack may be NULL when there is one rank.
 */
int vpa_dist_jobs(size_t n, int threads, int (*job)(void *arg, size_t i, struct vpa_err *e),
		  void (*pack)(void *arg, size_t i, struct vpa_buf *b),
		  int (*unpack)(void *arg, size_t i, const unsigned char *p, size_t len), void *arg,
		  const char *label, void (*run)(size_t, void *(*)(void *), void *),
		  struct vpa_err *err);

/*
 * vpa_dist_jobs whose outputs go to rank 0 only (one MPI_Gatherv, instead of
 * every rank's outputs to every rank): on return rank 0 holds every job's
 * output, another rank only its own.  For a reduction rank 0 computes alone
 * and broadcasts (vpa_dist_bcast): at 2-16 ranks on one machine this moves a
 * training step's shard gradients 1.3-5x faster than the all-to-all exchange
 * (bench/bench_train.c reduce).  Errors as vpa_dist_jobs (every rank).
 */
int vpa_dist_jobs_to_root(size_t n, int threads,
			  int (*job)(void *arg, size_t i, struct vpa_err *e),
			  void (*pack)(void *arg, size_t i, struct vpa_buf *b),
			  int (*unpack)(void *arg, size_t i, const unsigned char *p, size_t len),
			  void *arg, const char *label,
			  void (*run)(size_t, void *(*)(void *), void *), struct vpa_err *err);
/* 1 when a vpa_dist_jobs loop started now would span several ranks (MPI with
 * more than one rank, and not inside another loop's job). */
int vpa_dist_spans_ranks(void);
/* Rank 0's b to every rank (b replaced on the others) when loops span ranks;
 * nothing otherwise.  Every rank calls it. */
void vpa_dist_bcast(struct vpa_buf *b);

/* Inside a job: the index of the thread running it, in [0, threads); jobs
   keep per-thread scratch (a network's buffers) at that index. */
size_t vpa_dist_thread(void);

/* Bytes of job output this rank has packed and sent, and seconds this rank
   spent exchanging job outputs (the broadcasts, waits for slower ranks
   included), since start (bench/). */
uint64_t vpa_dist_bytes_sent(void);
double vpa_dist_comm_seconds(void);

/* Wait for every rank (bench/; nothing without MPI). */
void vpa_dist_barrier(void);

/*
 * Packing helpers: little host-order copies (every rank runs the same binary
 * on the same kind of machine, as mpirun requires).  vpa_unpack_* advance *p
 * and return -1 when fewer than the needed bytes are left before end.
 */
void vpa_pack_u64(struct vpa_buf *b, uint64_t v);
void vpa_pack_f64s(struct vpa_buf *b, const double *x, size_t n);
void vpa_pack_f32s(struct vpa_buf *b, const float *x, size_t n);
int vpa_unpack_u64(const unsigned char **p, const unsigned char *end, uint64_t *v);
/* bytes raw bytes into x (-1 when fewer are left) */
int vpa_unpack_bytes(const unsigned char **p, const unsigned char *end, void *x, size_t bytes);
int vpa_unpack_f64s(const unsigned char **p, const unsigned char *end, double *x, size_t n);
int vpa_unpack_f32s(const unsigned char **p, const unsigned char *end, float *x, size_t n);

#endif
