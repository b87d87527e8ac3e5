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
 * more, so every chunk is full and PyTorch needs no padding), batch 32, AAM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/xvector.h"
#include "base/base.h"
#include "base/la.h"
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
		vpa_xvec_release(&x);
	}
	return 0;
}

int main(int argc, char **argv)
{
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
