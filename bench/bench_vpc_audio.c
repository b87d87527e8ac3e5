/*
 * bench/bench_vpc_audio.c - issue 17 "Performance", second bullet: the time of
 * each stage of the whole VoicePrivacy evaluation of the embedded default
 * (scenarios/vpc-audio.yaml, run by bench/vpc_audio.sh), and each stage
 * extrapolated linearly to the VoicePrivacy 2024 data sizes.
 *
 *   bench_vpc_audio RESULTS.json [EPOCHS_VPC]
 *
 * reads the per-stage times the run recorded (targets[].info.audio.timing:
 * wall and process CPU seconds) and the sizes each stage scales with
 * (info.audio.sizes), sums them over the scenario's targets, and prints one
 * row per stage: measured wall/CPU, the scaling variable, its value here and
 * at VPC 2024 size, and the extrapolated CPU time (CPU seconds, so the figure
 * holds for any core count: divide by the cores you have).
 *
 * VPC 2024 sizes (the attacker's data of the LibriSpeech part):
 *   train-clean-360: 363.6 h, 921 speakers, 104,014 utterances (LibriSpeech,
 *     Panayotov et al. ICASSP 2015, table 1; utterance count from the
 *     openslr/librispeech_asr dataset card), anonymised for the
 *     semi-informed attacker (VPC 2024 evaluation plan, arXiv:2404.02677,
 *     section 3: ASV_eval^anon trained on anonymised train-clean-360);
 *   LibriSpeech dev + test enrolment and trials (VPC 2022 evaluation plan,
 *     arXiv:2203.12468, table 2, used unchanged by VPC 2024): dev enrolment
 *     29 speakers / 343 utterances, dev trials 40 / 1,978; test enrolment 29
 *     / 438, test trials 40 / 1,496; trials (same-speaker + different-speaker,
 *     f and m): dev 704 + 10,348 + 644 + 9,027, test 548 + 11,196 + 449 +
 *     9,457.  Hours of the enrolment/trial sets: utterances x the mean
 *     utterance length of dev-clean (7.18 s) and test-clean (7.42 s).
 *     The enrolment/trial counts are the VoicePrivacy plans' data table as
 *     the authors know it; the table itself could not be opened where this
 *     was written (no internet), so check them against arXiv:2203.12468
 *     before quoting the extrapolation.  Only the enrolment/trial rows
 *     depend on them; the train-clean-360 rows do not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"

#define VPC_TRAIN_H 363.6
#define VPC_TRAIN_UTT 104014.0
#define VPC_ENR_UTT (343.0 + 438.0)
#define VPC_TRI_UTT (1978.0 + 1496.0)
#define VPC_ENR_H ((343.0 * 7.18 + 438.0 * 7.42) / 3600)
#define VPC_TRI_H ((1978.0 * 7.18 + 1496.0 * 7.42) / 3600)
#define VPC_TRIALS (704.0 + 10348 + 644 + 9027 + 548 + 11196 + 449 + 9457)

struct acc {
	double wall, cpu;
};

static double num_at(const struct vpa_json *o, const char *a, const char *b)
{
	const struct vpa_json *x = vpa_json_get(o, a);
	return x ? vpa_json_get_num(x, b, 0) : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_vpc_audio RESULTS.json [EPOCHS_VPC]\n");
		return 2;
	}
	struct vpa_err err;
	vpa_err_init(&err);
	char *text;
	size_t len;
	if (vpa_read_file(argv[1], &text, &len, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	struct vpa_json *r = vpa_json_parse(argv[1], text, len, &err);
	free(text);
	if (!r) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	static const char *const st[] = {"synthesis",      "anonymisation",       "features",
					 "rho_f0",         "train_asv_eval",      "embed_asv_eval",
					 "train_asv_eval_anon", "embed_asv_eval_anon"};
	enum { NS = sizeof st / sizeof st[0] };
	struct acc a[NS] = {{0, 0}};
	/* sizes summed over targets */
	double train_s = 0, enr_s = 0, tri_s = 0, train_fr = 0, enr_fr = 0, tri_fr = 0;
	double train_chunk = 0, train_utt = 0, epochs = 0;
	int n_t = 0;
	const struct vpa_json *tg = vpa_json_get(r, "targets");
	for (size_t i = 0; tg && i < tg->n; i++) {
		const struct vpa_json *info = vpa_json_get(tg->items[i], "info");
		const struct vpa_json *au = info ? vpa_json_get(info, "audio") : NULL;
		const struct vpa_json *sg = au ? vpa_json_get(au, "timing") : NULL;
		const struct vpa_json *sz = au ? vpa_json_get(au, "sizes") : NULL;
		if (!sg || !sz)
			continue;
		n_t++;
		for (int s = 0; s < NS; s++) {
			a[s].wall += num_at(sg, st[s], "wall_secs");
			a[s].cpu += num_at(sg, st[s], "cpu_secs");
		}
		train_s += num_at(sz, "train", "audio_seconds");
		enr_s += num_at(sz, "enroll", "audio_seconds");
		tri_s += num_at(sz, "trial", "audio_seconds");
		train_fr += num_at(sz, "train", "frames");
		enr_fr += num_at(sz, "enroll", "frames");
		tri_fr += num_at(sz, "trial", "frames");
		train_chunk += num_at(sz, "train", "chunk_frames");
		train_utt += num_at(sz, "train", "utterances");
		epochs = vpa_json_get_num(au, "epochs", 0);
	}
	if (!n_t || train_s <= 0 || train_fr <= 0 || train_utt <= 0 || epochs <= 0) {
		fprintf(stderr, "%s: no source: audio target with per-stage times and sizes "
			"(info.audio.timing/sizes)\n", argv[1]);
		vpa_json_free(r);
		return 1;
	}
	double ep_vpc = argc > 2 ? atof(argv[2]) : epochs;
	/* trials scored by the attacks of the run (every record's trials) */
	double trials = 0;
	const struct vpa_json *recs = vpa_json_get(r, "records");
	for (size_t i = 0; recs && i < recs->n; i++) {
		const struct vpa_json *m = vpa_json_get(recs->items[i], "metrics");
		if (m)
			trials += vpa_json_get_num(m, "n_target", 0) + vpa_json_get_num(m, "n_nontarget", 0);
	}
	const struct vpa_json *wt = vpa_json_get(r, "wall_time");
	const struct vpa_json *wst = wt ? vpa_json_get(wt, "stages") : NULL;
	double attacks_wall = wst ? vpa_json_get_num(wst, "attacks", 0) : 0;
	double total_wall = wt ? vpa_json_get_num(wt, "total", 0) : 0;
	int n_rec = recs ? (int)recs->n : 0;

	/* voiced fraction of the frames (VAD) and frames per hour here */
	double audio_s = train_s + enr_s + tri_s;
	double fr_per_h = (train_fr + enr_fr + tri_fr) / (audio_s / 3600);
	double chunk_per_utt = train_chunk / train_utt;
	double vpc_h = VPC_TRAIN_H + VPC_ENR_H + VPC_TRI_H;
	/* per stage: scaling variable here and at VPC size */
	struct {
		const char *var;
		double here, vpc;
	} sc[NS] = {
		{"(synthetic corpus: none at VPC)", 1, 0},
		{"hours of audio anonymised", audio_s / 3600, vpc_h},
		{"hours of audio (orig + anon)", 2 * audio_s / 3600, 2 * vpc_h},
		{"hours of trial audio", tri_s / 3600, VPC_TRI_H},
		{"chunk frames x epochs", train_chunk * epochs,
		 VPC_TRAIN_UTT * chunk_per_utt * ep_vpc},
		{"frames embedded", 2 * (train_fr + enr_fr + tri_fr) - train_fr,
		 (2 * vpc_h - VPC_TRAIN_H) * fr_per_h},
		{"chunk frames x epochs", train_chunk * epochs,
		 VPC_TRAIN_UTT * chunk_per_utt * ep_vpc},
		{"frames embedded", train_fr + enr_fr + tri_fr, vpc_h * fr_per_h},
	};
	printf("%d targets of the run; audio here %.2f min (train %.2f, enrolment %.2f, trials %.2f);"
	       " %.0f feature frames per hour after VAD; %.1f chunk frames per training utterance;"
	       " %g epochs here, %g assumed at VPC size\n",
	       n_t, audio_s / 60, train_s / 60, enr_s / 60, tri_s / 60, fr_per_h, chunk_per_utt,
	       epochs, ep_vpc);
	printf("VPC 2024 (LibriSpeech part): train-clean-360 %.1f h / %.0f utterances, enrolment"
	       " %.2f h, trials %.2f h, %.0f trials\n",
	       VPC_TRAIN_H, VPC_TRAIN_UTT, VPC_ENR_H, VPC_TRI_H, VPC_TRIALS);
	printf("%-20s %9s %9s  %-32s %12s %14s %12s\n", "stage", "wall s", "CPU s", "scales with",
	       "here", "VPC 2024", "VPC CPU h");
	double sum_w = 0, sum_c = 0, sum_v = 0;
	for (int s = 0; s < NS; s++) {
		double v = sc[s].vpc > 0 ? a[s].cpu * sc[s].vpc / sc[s].here / 3600 : 0;
		printf("%-20s %9.2f %9.2f  %-32s %12.4g %14.4g %12.2f\n", st[s], a[s].wall, a[s].cpu,
		       sc[s].var, sc[s].here, sc[s].vpc, v);
		sum_w += a[s].wall;
		sum_c += a[s].cpu;
		sum_v += v;
	}
	/* the attacks (scoring, metrics): wall time only, as the run records it */
	double va = trials > 0 ? attacks_wall * VPC_TRIALS * 4 / trials / 3600 : 0;
	printf("%-20s %9.2f %9s  %-32s %12.4g %14.4g %12.4f\n", "scoring+metrics", attacks_wall, "-",
	       "trials (4 attackers at VPC)", trials, VPC_TRIALS * 4, va);
	printf("%-20s %9.2f %9.2f  %-32s %12s %14s %12.2f\n", "sum of stages", sum_w + attacks_wall,
	       sum_c, "", "", "", sum_v + va);
	printf("whole run: %.2f s wall (%.2f min; %d records)\n", total_wall, total_wall / 60, n_rec);
	/*
	 * Wall time on P cores.  Every stage but training shares its utterances
	 * out over threads and ranks: CPU / (P e_rest).  Training shares each
	 * step's shards: at most `shards` workers (4 by default; the extractor's
	 * `shards` key), CPU / (min(P, shards) e_train), plus, across nodes, each
	 * step's gradient to rank 0 and the sum back (gather + broadcast,
	 * base/dist.c).  e_rest and e_train are this run's parallel efficiencies
	 * on its 2 threads (CPU s / (2 x wall s) of those stages), assumed to
	 * hold at 16 and 128 workers: an assumption (memory bandwidth, the
	 * serial parts and load balance can only lower them).  The network
	 * model: 10 GB/s, 2 us per message hop, log2(ranks) hops; gradient
	 * bytes: GRAD_BYTES (the default extractor, H = 64: its saved folder
	 * holds 548 KB of .npy tensors; 1 MB, rounded up).  Steps: training utterances x epochs /
	 * batch (32), two extractors.
	 */
	double train_h = (a[4].cpu * sc[4].vpc / sc[4].here + a[6].cpu * sc[6].vpc / sc[6].here) / 3600;
	double all_h = sum_v + va, rest_h = all_h - train_h;
	double tw = a[4].wall + a[6].wall, tc = a[4].cpu + a[6].cpu;
	double rw = 0, rc = 0;
	for (int k = 1; k < NS; k++)
		if (k != 4 && k != 6) {
			rw += a[k].wall;
			rc += a[k].cpu;
		}
	double e_train = tw > 0 ? tc / (2 * tw) : 1, e_rest = rw > 0 ? rc / (2 * rw) : 1;
	if (e_train > 1)
		e_train = 1;
	if (e_rest > 1)
		e_rest = 1;
	const double GRAD_BYTES = 1e6, BW = 10e9, LAT = 2e-6;
	double steps = 2 * VPC_TRAIN_UTT * ep_vpc / 32;
	printf("at VPC 2024 size: about %.1f CPU hours (training %.1f, the rest %.1f); parallel "
	       "efficiency on this run's 2 threads: training %.2f, the rest %.2f\n",
	       all_h, train_h, rest_h, e_train, e_rest);
	static const int cores[3] = {2, 16, 128};
	static const char *const where[3] = {"this machine, 2 cores", "one 16-core node",
					     "8 nodes x 16 cores (MPI)"};
	for (int c = 0; c < 3; c++)
		for (int sh = 4; sh <= 16; sh *= 4) {
			if (c == 0 && sh > 4)
				continue;
			int w = cores[c] < sh ? cores[c] : sh;
			double comm = c == 2 ? steps * (2 * GRAD_BYTES / BW + 2 * 7 * LAT) / 3600 : 0;
			double t = train_h / (w * e_train) + comm, o = rest_h / (cores[c] * e_rest);
			printf("  %-26s shards %2d: training %.2f h (%d workers%s) + the rest %.2f h = "
			       "%.2f h\n", where[c], sh, t, w,
			       c == 2 ? ", network included" : "", o, t + o);
		}
	printf("  (shards 16 needs batch >= 128, a different training; the rank and thread "
	       "counts beyond the shards do not shorten training)\n");
	printf("ratio: whole run wall / its audio duration = %.2f (real-time factor of the whole "
	       "evaluation here, %.2f min of audio x 2 versions)\n",
	       total_wall / audio_s, audio_s / 60);
	vpa_json_free(r);
	return 0;
}
