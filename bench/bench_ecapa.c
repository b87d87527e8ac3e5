/*
 * bench/bench_ecapa.c - training time of the ECAPA-TDNN extractor against the
 * x-vector TDNN (the baseline, measured in the same run) on the same data:
 * 60 synthetic "speakers" x 8 utterances of 150-400 frames of 40 features
 * (phone prototypes scaled per speaker, as tests/unit/test_xvector.c), 10
 * epochs of 200-frame chunks, batches of 32, AAM-softmax, E = 64.  Pairs: the
 * defaults of the `extractor:` table (x-vector H = 128 against ECAPA C = 64,
 * s = 4) and scenarios/vpc-audio.yaml's width (H = 64 against C = 32).  Each
 * timing is CPU time of the calling thread's process (training runs on one
 * thread) and wall time.  Usage: bench_ecapa [--quick] (3 epochs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audio/xvector.h"
#include "base/base.h"

enum { DIM = 40, PHONES = 10, SPK = 60, UTTS = 8 };

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

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

static void train(const struct vpa_fmat *f, const uint32_t *lab, int arch, size_t width,
		  int epochs, double *cpu, double *wall)
{
	struct vpa_xvec_opts o;
	vpa_xvec_opts_init(&o);
	o.arch = arch;
	o.hidden = width;
	o.channels = width;
	o.epochs = epochs;
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_xvec x;
	double c0 = cpu_now(), w0 = vpa_now();
	if (vpa_xvec_train(f, lab, SPK * UTTS, SPK, &o, NULL, &x, &err)) {
		fprintf(stderr, "bench_ecapa: %s\n", err.msg);
		exit(1);
	}
	*cpu = cpu_now() - c0;
	*wall = vpa_now() - w0;
	vpa_xvec_release(&x);
}

int main(int argc, char **argv)
{
	int epochs = argc > 1 && !strcmp(argv[1], "--quick") ? 3 : 10;
	static struct vpa_fmat f[SPK * UTTS];
	static uint32_t lab[SPK * UTTS];
	make_corpus(f, lab);
	static const size_t pairs[2][2] = {{128, 64}, {64, 32}};
	for (int p = 0; p < 2; p++) {
		double xc, xw, ec, ew;
		train(f, lab, VPA_XVEC_TDNN, pairs[p][0], epochs, &xc, &xw);
		train(f, lab, VPA_XVEC_ECAPA, pairs[p][1], epochs, &ec, &ew);
		printf("x-vector H = %-3zu (baseline), %d epochs          %8.2f s CPU %8.2f s wall\n",
		       pairs[p][0], epochs, xc, xw);
		printf("ECAPA-TDNN C = %-3zu s = 4, %d epochs            %8.2f s CPU %8.2f s wall\n",
		       pairs[p][1], epochs, ec, ew);
		printf("ratio: ECAPA / x-vector = %.2f (CPU), %.2f (wall)\n", ec / xc, ew / xw);
	}
	for (int i = 0; i < SPK * UTTS; i++)
		vpa_fmat_release(&f[i]);
	return 0;
}
