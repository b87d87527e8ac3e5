/*
 * bench/bench_train.c - extractor training throughput (issue 33 item 1):
 * frames per second of the x-vector TDNN (H = 128) and the ECAPA-TDNN
 * (C = 64, s = 4), the defaults of the `extractor:` table, on 1 and 2
 * threads, on the same data: bench_ecapa's corpus (60 synthetic speakers x 8
 * utterances of 150-400 frames of 40 features), chunks of 200 frames,
 * batches of 32 in 4 shards, AAM-softmax, E = 64.  The ratio 2 threads / 1
 * thread is the figure (goal >= 1.7); the run also checks that both thread
 * counts trained the same bytes.  A frame is one chunk row through one
 * training step (forward and backward).  Usage: bench_train [EPOCHS] (3).
 *
 * bench_train torch DIR THREADS: the C side of the comparison with PyTorch
 * (bench/train_torch.sh, bench/train_torch.py): writes the corpus to
 * DIR/feats.npy (all frames, float32) and DIR/lens.txt (frames per utterance)
 * and prints "NAME THREADS FRAMES_PER_S" for the ECAPA-TDNN at C = 64 (all 480
 * utterances, one epoch) and C = 512 (the VPC's width; the first 160
 * utterances, one epoch), chunks of 150 frames (every utterance has 150 or
 * more, so every chunk is full and PyTorch needs no padding), batch 32, AAM;
 * on stderr the trained weights' checksums (the same for any thread count and
 * any change to the layer code that keeps the arithmetic).  bench_train kernel:
 * the name of the OpenBLAS kernel in use.
 *
 * Built a second time with mpicc into build-mpi/bench/ (`make bench`), for
 * the MPI figures of issue 33 item 2 (bench/run.sh):
 *   mpirun -n R bench_train mpi THREADS ARCH EPOCHS SHARDS
 *     training throughput at R ranks x THREADS threads (ARCH tdnn|ecapa,
 *     batch 32 in SHARDS shards); rank 0 prints "mpi R T FRAMES_PER_S
 *     CHECKSUM" (the checksum of the trained weights must not depend on R or
 *     T);
 *   mpirun -n R bench_train reduce FLOATS SHARDS ITERS
 *     the two deterministic reductions of SHARDS shard gradients of FLOATS
 *     floats (shard i on rank i mod R), per step: "allgather" (the first
 *     design: every shard's gradient to every rank through vpa_dist_jobs,
 *     each rank sums them in shard order) and "gather" (what training does
 *     since: MPI_Gatherv of the shard gradients to rank 0, which sums them in
 *     shard order, then MPI_Bcast of the sum); rank 0 prints "reduce R FLOATS SHARDS ALLGATHER_MS GATHER_MS
 *     SAME" (SAME: both sums bit-equal).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/xvector.h"
#include "base/base.h"
#include "base/dist.h"
#include "base/la.h"
#ifdef VPA_MPI
#include <mpi.h>
#endif
#include "formats/io.h"

enum { DIM = 40, PHONES = 10, SPK = 60, UTTS = 8, N = SPK * UTTS };

/* bench_ecapa.c's generator: phone prototypes scaled and shifted per speaker */
static void make_corpus(struct vpa_fmat *f, uint32_t *lab)
{
	struct vpa_rng r;
	vpa_rng_seed(&r, 7);
	float P[PHONES * DIM];
	for (int i = 0; i < PHONES * DIM; i++)
		P[i] = (float)(1.5 * vpa_rng_normal(&r));
	for (int s = 0; s < SPK; s++) {
		float gain[DIM], mu[DIM];
		for (int d = 0; d < DIM; d++) {
			gain[d] = (float)(0.3 + 1.4 * vpa_rng_uniform(&r));
			mu[d] = (float)(0.1 * vpa_rng_normal(&r));
		}
		for (int u = 0; u < UTTS; u++) {
			struct vpa_fmat *m = &f[s * UTTS + u];
			size_t T = 150 + (size_t)vpa_rng_below(&r, 251);
			vpa_fmat_init(m);
			m->rows = T;
			m->cols = DIM;
			m->x = xmalloc(T * DIM * sizeof(float));
			lab[s * UTTS + u] = (uint32_t)s;
			size_t t = 0;
			while (t < T) {
				size_t q = (size_t)vpa_rng_below(&r, PHONES);
				size_t len = 5 + (size_t)vpa_rng_below(&r, 11);
				for (size_t k = 0; k < len && t < T; k++, t++)
					for (int d = 0; d < DIM; d++)
						m->x[t * DIM + d] = gain[d] * P[q * DIM + d] + mu[d] +
								    (float)(0.3 * vpa_rng_normal(&r));
			}
		}
	}
}

/* every parameter and state value of two extractors bit-equal */
static int same_weights(struct vpa_xvec *a, struct vpa_xvec *b)
{
	size_t n = vpa_xvec_n_nets(a);
	if (n != vpa_xvec_n_nets(b))
		return 0;
	for (size_t i = 0; i < n; i++) {
		size_t pa, pb, sa, sb;
		float *p1 = vpa_nn_params(vpa_xvec_net(a, i), &pa);
		float *p2 = vpa_nn_params(vpa_xvec_net(b, i), &pb);
		float *s1 = vpa_nn_state(vpa_xvec_net(a, i), &sa);
		float *s2 = vpa_nn_state(vpa_xvec_net(b, i), &sb);
		if (pa != pb || sa != sb || memcmp(p1, p2, pa * sizeof(float)) ||
		    (sa && memcmp(s1, s2, sa * sizeof(float))))
			return 0;
	}
	return 1;
}

static double train(const struct vpa_fmat *f, const uint32_t *lab, int arch, int epochs,
		    int threads, struct vpa_xvec *x)
{
	struct vpa_xvec_opts o;
	vpa_xvec_opts_init(&o);
	o.arch = arch;
	o.epochs = epochs;
	o.threads = threads;
	struct vpa_err err;
	vpa_err_init(&err);
	double w0 = vpa_now();
	if (vpa_xvec_train(f, lab, N, SPK, &o, NULL, x, &err)) {
		fprintf(stderr, "bench_train: %s\n", err.msg);
		exit(1);
	}
	return vpa_now() - w0;
}

/* weights' FNV-1a hash */
static unsigned long long checksum(struct vpa_xvec *x)
{
	unsigned long long h = 1469598103934665603ull;
	for (size_t i = 0; i < vpa_xvec_n_nets(x); i++) {
		size_t np, ns;
		const unsigned char *p = (const unsigned char *)vpa_nn_params(vpa_xvec_net(x, i), &np);
		for (size_t k = 0; k < np * sizeof(float); k++)
			h = (h ^ p[k]) * 1099511628211ull;
		p = (const unsigned char *)vpa_nn_state(vpa_xvec_net(x, i), &ns);
		for (size_t k = 0; k < ns * sizeof(float); k++)
			h = (h ^ p[k]) * 1099511628211ull;
	}
	return h;
}

static int torch_side(const char *dir, int threads, struct vpa_fmat *f, const uint32_t *lab)
{
	char p[1024];
	size_t total = 0;
	for (int i = 0; i < N; i++)
		total += f[i].rows;
	float *all = xmalloc(xmul(total, DIM * sizeof(float)));
	snprintf(p, sizeof(p), "%s/lens.txt", dir);
	FILE *lf = fopen(p, "w");
	if (!lf) {
		fprintf(stderr, "bench_train: cannot write %s\n", p);
		return 1;
	}
	size_t at = 0;
	for (int i = 0; i < N; i++) {
		memcpy(all + at * DIM, f[i].x, f[i].rows * DIM * sizeof(float));
		at += f[i].rows;
		fprintf(lf, "%zu %u\n", f[i].rows, lab[i]);
	}
	fclose(lf);
	snprintf(p, sizeof(p), "%s/feats.npy", dir);
	struct vpa_err err;
	vpa_err_init(&err);
	size_t shape[2] = {total, DIM};
	if (vpa_npy_write_nd(p, 'f', 4, all, 2, shape, &err)) {
		fprintf(stderr, "bench_train: %s\n", err.msg);
		return 1;
	}
	free(all);
	static const size_t width[2] = {64, 512}, n_utt[2] = {N, 160};
	for (int k = 0; k < 2; k++) {
		struct vpa_xvec_opts o;
		vpa_xvec_opts_init(&o);
		o.arch = VPA_XVEC_ECAPA;
		o.channels = width[k];
		o.epochs = 1;
		o.chunk = 150;
		o.threads = threads;
		struct vpa_xvec x;
		double w0 = vpa_now();
		if (vpa_xvec_train(f, lab, n_utt[k], SPK, &o, NULL, &x, &err)) {
			fprintf(stderr, "bench_train: %s\n", err.msg);
			return 1;
		}
		double t = vpa_now() - w0;
		printf("ecapa%zu %d %.0f\n", width[k], threads, (double)n_utt[k] * 150 / t);
		fprintf(stderr, "ecapa%zu weights %016llx\n", width[k], checksum(&x));
		vpa_xvec_release(&x);
	}
	return 0;
}

static int mpi_train(int threads, const char *arch, int epochs, size_t shards)
{
	static struct vpa_fmat f[N];
	static uint32_t lab[N];
	make_corpus(f, lab);
	struct vpa_xvec_opts o;
	vpa_xvec_opts_init(&o);
	o.arch = !strcmp(arch, "ecapa") ? VPA_XVEC_ECAPA : VPA_XVEC_TDNN;
	o.epochs = epochs;
	o.threads = threads;
	o.shards = shards;
	double frames = 0;
	for (int i = 0; i < N; i++)
		frames += (double)(f[i].rows < o.chunk ? f[i].rows : o.chunk);
	frames *= epochs;
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_xvec x;
	vpa_dist_barrier();
	double w0 = vpa_now();
	if (vpa_xvec_train(f, lab, N, SPK, &o, NULL, &x, &err)) {
		fprintf(stderr, "bench_train: %s\n", err.msg);
		return 1;
	}
	vpa_dist_barrier();
	double t = vpa_now() - w0;
	if (vpa_dist_rank() == 0)
		printf("mpi %d %d %.0f %016llx\n", vpa_dist_size(), threads, frames / t, checksum(&x));
	vpa_xvec_release(&x);
	for (int i = 0; i < N; i++)
		vpa_fmat_release(&f[i]);
	return 0;
}

#ifdef VPA_MPI
struct red {
	size_t P;
	float **g; /* (S) shard gradients */
};

static int red_job(void *arg, size_t i, struct vpa_err *e)
{
	struct red *r = arg;
	(void)e;
	for (size_t k = 0; k < r->P; k++)
		r->g[i][k] = (float)((double)((i * 2654435761u + k * 40503u) % 1000) * 1e-3 - 0.5);
	return 0;
}

static void red_pack(void *arg, size_t i, struct vpa_buf *b)
{
	struct red *r = arg;
	vpa_buf_add(b, r->g[i], r->P * sizeof(float));
}

static int red_unpack(void *arg, size_t i, const unsigned char *p, size_t len)
{
	struct red *r = arg;
	if (len != r->P * sizeof(float))
		return -1;
	memcpy(r->g[i], p, len);
	return 0;
}

static void sum_in_order(struct red *r, size_t S, float *out)
{
	memcpy(out, r->g[0], r->P * sizeof(float));
	for (size_t s = 1; s < S; s++)
		for (size_t k = 0; k < r->P; k++)
			out[k] += r->g[s][k];
}

#endif

static int mpi_reduce(size_t P, size_t S, int iters)
{
#ifdef VPA_MPI
	int R = vpa_dist_size(), me = vpa_dist_rank();
	struct red r = {P, xmalloc(S * sizeof(float *))};
	for (size_t s = 0; s < S; s++)
		r.g[s] = xcalloc(P, sizeof(float));
	float *a = xmalloc(P * sizeof(float)), *b = xmalloc(P * sizeof(float));
	struct vpa_err err;
	vpa_err_init(&err);
	double ta = 0, tb = 0;
	int *cnt = xcalloc((size_t)R, sizeof(int)), *dsp = xcalloc((size_t)R, sizeof(int));
	for (int it = 0; it < iters; it++) {
		/* A: every shard to every rank, each sums in shard order */
		vpa_dist_barrier();
		double t0 = vpa_now();
		if (vpa_dist_jobs(S, 1, red_job, red_pack, red_unpack, &r, NULL, NULL, &err))
			return 1;
		sum_in_order(&r, S, a);
		vpa_dist_barrier();
		ta += vpa_now() - t0;
		/* B: the shards to rank 0, its sum to every rank */
		vpa_dist_barrier();
		t0 = vpa_now();
		size_t mine = 0;
		for (size_t s = (size_t)me; s < S; s += (size_t)R) {
			red_job(&r, s, &err);
			mine++;
		}
		float *send = xmalloc((mine ? mine : 1) * P * sizeof(float));
		size_t k = 0;
		for (size_t s = (size_t)me; s < S; s += (size_t)R, k++)
			memcpy(send + k * P, r.g[s], P * sizeof(float));
		float *all = NULL;
		if (me == 0) {
			int at = 0;
			for (int q = 0; q < R; q++) {
				size_t nq = (size_t)q < S ? (S - (size_t)q + (size_t)R - 1) / (size_t)R : 0;
				cnt[q] = (int)(nq * P);
				dsp[q] = at;
				at += cnt[q];
			}
			all = xmalloc(S * P * sizeof(float));
		}
		MPI_Gatherv(send, (int)(mine * P), MPI_FLOAT, all, cnt, dsp, MPI_FLOAT, 0,
			    MPI_COMM_WORLD);
		if (me == 0) {
			/* rank q's k-th block is shard q + k R */
			for (int q = 0; q < R; q++)
				for (size_t kk = 0; (size_t)q + kk * (size_t)R < S; kk++)
					memcpy(r.g[(size_t)q + kk * (size_t)R], all + dsp[q] + kk * P,
					       P * sizeof(float));
			sum_in_order(&r, S, b);
		}
		MPI_Bcast(b, (int)P, MPI_FLOAT, 0, MPI_COMM_WORLD);
		vpa_dist_barrier();
		tb += vpa_now() - t0;
		free(send);
		free(all);
	}
	int same = !memcmp(a, b, P * sizeof(float));
	if (me == 0)
		printf("reduce %d %zu %zu %.2f %.2f %s\n", R, P, S, 1e3 * ta / iters, 1e3 * tb / iters,
		       same ? "same" : "DIFFER");
	for (size_t s = 0; s < S; s++)
		free(r.g[s]);
	free(r.g);
	free(a);
	free(b);
	free(cnt);
	free(dsp);
	return !same;
#else
	(void)P;
	(void)S;
	(void)iters;
	fprintf(stderr, "bench_train reduce: built without MPI (make bench builds build-mpi/bench/bench_train)\n");
	return 2;
#endif
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "kernel")) { /* for bench/train_torch.sh */
		puts(vpa_la_blas_kernel());
		return 0;
	}
	vpa_dist_init(&argc, &argv);
	vpa_la_set_threads(1);
	if (argc == 6 && !strcmp(argv[1], "mpi")) {
		int rc = mpi_train(atoi(argv[2]), argv[3], atoi(argv[4]), (size_t)atol(argv[5]));
		vpa_dist_finalize();
		return rc;
	}
	if (argc == 5 && !strcmp(argv[1], "reduce")) {
		int rc = mpi_reduce((size_t)atol(argv[2]), (size_t)atol(argv[3]), atoi(argv[4]));
		vpa_dist_finalize();
		return rc;
	}
	if (argc == 4 && !strcmp(argv[1], "torch")) {
		static struct vpa_fmat tf[N];
		static uint32_t tl[N];
		make_corpus(tf, tl);
		int rc = torch_side(argv[2], atoi(argv[3]), tf, tl);
		for (int i = 0; i < N; i++)
			vpa_fmat_release(&tf[i]);
		return rc;
	}
	int epochs = argc > 1 ? atoi(argv[1]) : 3;
	if (epochs < 1)
		epochs = 1;
	static struct vpa_fmat f[N];
	static uint32_t lab[N];
	make_corpus(f, lab);
	/* frames per epoch: every utterance's chunk (N is a multiple of the
	 * batch, so no utterance is left out) */
	struct vpa_xvec_opts d;
	vpa_xvec_opts_init(&d);
	double frames = 0;
	for (int i = 0; i < N; i++)
		frames += (double)(f[i].rows < d.chunk ? f[i].rows : d.chunk);
	frames *= epochs;
	printf("== extractor training throughput (issue 33): %d utterances, %d epochs, %.0f frames,"
	       " batch %zu in %zu shards, BLAS on one thread per worker\n",
	       N, epochs, frames, d.batch, d.shards);
	static const char *names[2] = {"x-vector TDNN H = 128", "ECAPA-TDNN C = 64 s = 4"};
	for (int arch = VPA_XVEC_TDNN; arch <= VPA_XVEC_ECAPA; arch++) {
		struct vpa_xvec x1, x2;
		double t1 = train(f, lab, arch, epochs, 1, &x1);
		double t2 = train(f, lab, arch, epochs, 2, &x2);
		int same = same_weights(&x1, &x2);
		printf("%-26s 1 thread  %9.0f frames/s (%6.2f s)\n", names[arch], frames / t1, t1);
		printf("%-26s 2 threads %9.0f frames/s (%6.2f s)\n", names[arch], frames / t2, t2);
		printf("ratio: 2 threads / 1 thread = %.2fx (goal >= 1.7); weights identical: %s\n",
		       t1 / t2, same ? "yes" : "NO");
		vpa_xvec_release(&x1);
		vpa_xvec_release(&x2);
		if (!same)
			return 1;
	}
	for (int i = 0; i < N; i++)
		vpa_fmat_release(&f[i]);
	return 0;
}
