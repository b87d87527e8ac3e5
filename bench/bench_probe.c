/*
 * bench/bench_probe.c - what `vpaudit validate` costs on audio (issue 31
 * item 5) and what hashing audio while a run reads it costs (item 6), against
 * baselines measured in the same run:
 *   1. vpa_datadir_probe (libsndfile's header parse of every recording, no
 *      decoding) of a data directory of 1,000 WAV files (16 kHz, 16-bit, 2-8 s,
 *      76 min in all) against reading every file (vpa_datadir_load, the
 *      samples a run decodes);
 *   2. reading every file with the run's input recording on (each file
 *      SHA-256-hashed while read, base/inputs.h) against the same with it off.
 * Files are in the page cache for every timing (a first untimed pass reads
 * them): the figures are CPU work, not disk.  Each timing is the best of 3.
 * Usage: bench_probe [N_FILES]
 */
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audio/audio.h"
#include "base/base.h"
#include "base/inputs.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const struct vpa_err *e)
{
	fprintf(stderr, "bench_probe: %s\n", e->msg);
	exit(1);
}

static void read_all(const struct vpa_datadir *d)
{
	struct vpa_err e;
	vpa_err_init(&e);
	for (size_t i = 0; i < d->n_utt; i++) {
		struct vpa_wave w;
		vpa_wave_init(&w);
		if (vpa_datadir_load(d, i, &w, NULL, &e))
			die(&e);
		vpa_wave_release(&w);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	const char *td = getenv("TMPDIR");
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/vpa-bench-probe-XXXXXX", td && *td ? td : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	char scp[600];
	snprintf(scp, sizeof(scp), "%s/wav.scp", dir);
	FILE *f = fopen(scp, "w");
	short *x = malloc(sizeof(short) * 8 * 16000);
	double total = 0;
	struct vpa_rng r;
	vpa_rng_seed(&r, 7);
	for (int k = 0; k < n; k++) {
		int len = 16000 * 2 + (int)(vpa_rng_uniform(&r) * 6 * 16000);
		for (int i = 0; i < len; i++)
			x[i] = (short)(3000 * sin(0.05 * i * (1 + k % 7)) + 500 * vpa_rng_normal(&r));
		char p[700];
		snprintf(p, sizeof(p), "%s/u%04d.wav", dir, k);
		SF_INFO info = {0};
		info.samplerate = 16000;
		info.channels = 1;
		info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
		SNDFILE *s = sf_open(p, SFM_WRITE, &info);
		sf_writef_short(s, x, len);
		sf_close(s);
		fprintf(f, "u%04d %s\n", k, p);
		total += len / 16000.0;
	}
	fclose(f);
	free(x);
	struct vpa_datadir d;
	struct vpa_err e;
	vpa_datadir_init(&d);
	vpa_err_init(&e);
	if (vpa_datadir_open(&d, dir, -1, &e))
		die(&e);
	read_all(&d); /* into the page cache */
	double best_probe = 1e30, best_read = 1e30, best_hash = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		double t0 = now();
		if (vpa_datadir_probe(&d, 16000, &e))
			die(&e);
		double t1 = now();
		read_all(&d);
		double t2 = now();
		vpa_inputs_begin();
		read_all(&d);
		double t3 = now();
		vpa_inputs_end();
		best_probe = fmin(best_probe, t1 - t0);
		best_read = fmin(best_read, t2 - t1);
		best_hash = fmin(best_hash, t3 - t2);
	}
	printf("%d WAV files, %.1f min of 16 kHz audio\n", n, total / 60);
	printf("header probe (validate)                   %8.4f s  (%.1f us per file)\n", best_probe,
	       1e6 * best_probe / n);
	printf("baseline: decoding every file             %8.4f s\n", best_read);
	printf("ratio: probe / decoding = %.4f\n", best_probe / best_read);
	printf("decoding with SHA-256 while read (a run)  %8.4f s\n", best_hash);
	printf("ratio: hashed reading / plain reading = %.3f\n", best_hash / best_read);
	vpa_datadir_release(&d);
	vpa_rm_tree(dir);
	return 0;
}
