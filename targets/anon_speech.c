/*
 * targets/anon_speech.c - target kind `anonymised_speech`: utterance
 * embeddings (x-vectors) of original and anonymised speech in the roles the
 * attacks need (train, pool, enroll, trial, their anonymised versions), either
 * simulated (targets/sim_speech.c + targets/anonymiser.c; documented in
 * targets/README.md), imported from Kaldi archives / .npy files, or made from
 * audio.  This file holds the kind: its keys, their checks, the target's
 * build (which calls the build of its source) and release; the builds are
 * the files of targets/anon_build.h (anon_simulate.c, anon_import.c,
 * anon_audio.c), which never call back here.
 */
#include "targets/anon_build.h"
#include "embed/embed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- schema ----------------------------------------------------------------- */

#define INF INFINITY
static const struct vpa_key anon_keys[] = {
	{"distance", VPA_K_ENUM, 0, "plda", -INF, INF, 0, "cosine|plda", NULL, "cosine",
	 "distance between the source and pool x-vectors: 1 - cosine, or minus the PLDA LLR "
	 "(PLDA trained on the pool)",
	 VPA_AT(struct vpa_anon_anonymiser_opts, distance), VPA_MARK(struct vpa_anon_anonymiser_opts, distance_at)},
	{"proximity", VPA_K_ENUM, 0, "far", -INF, INF, 0, "random|near|far|dense|sparse", NULL,
	 "near", "which pool speakers are averaged: N* at random of the whole pool, of the N "
	 "nearest, of the N farthest, or half of a dense / sparse Affinity Propagation cluster",
	 VPA_AT(struct vpa_anon_anonymiser_opts, proximity), VPA_MARK(struct vpa_anon_anonymiser_opts, proximity_at)},
	{"gender", VPA_K_ENUM, 0, "same", -INF, INF, 0, "same|opposite|random", NULL, "same",
	 "pool gender: the source's, the other one, or a coin flip per source",
	 VPA_AT(struct vpa_anon_anonymiser_opts, gender), VPA_MARK(struct vpa_anon_anonymiser_opts, gender_at)},
	{"assignment", VPA_K_ENUM, 0, "speaker", -INF, INF, 0, "speaker|utterance", NULL,
	 "utterance", "one pseudo-speaker per source speaker (its mean x-vector) or per utterance",
	 VPA_AT(struct vpa_anon_anonymiser_opts, assignment), VPA_MARK(struct vpa_anon_anonymiser_opts, assignment_at)},
	{"n", VPA_K_INT, 0, "200", 1, 1e9, 0, NULL, NULL, "200",
	 "N: candidates kept by near / far",
	 VPA_AT(struct vpa_anon_anonymiser_opts, n), VPA_MARK(struct vpa_anon_anonymiser_opts, n_at)},
	{"n_star", VPA_K_INT, 0, "100", 1, 1e9, 0, NULL, NULL, "100",
	 "N*: pool x-vectors averaged into a pseudo-speaker (at most n)",
	 VPA_AT(struct vpa_anon_anonymiser_opts, n_star), VPA_MARK(struct vpa_anon_anonymiser_opts, n_star_at)},
	{"ap_damping", VPA_K_NUM, 0, "0.5", 0.5, 1, VPA_KF_OPEN_HI, NULL, NULL, "0.7",
	 "Affinity Propagation damping (dense / sparse); the preference is the median similarity",
	 VPA_AT(struct vpa_anon_anonymiser_opts, ap_damping), VPA_MARK(struct vpa_anon_anonymiser_opts, ap_damping_at)},
	{"ap_max_iter", VPA_K_INT, 0, "200", 1, 100000, 0, NULL, NULL, "500",
	 "Affinity Propagation iteration limit",
	 VPA_AT(struct vpa_anon_anonymiser_opts, ap_max_iter), VPA_MARK(struct vpa_anon_anonymiser_opts, ap_max_iter_at)},
	{"ap_conv_iter", VPA_K_INT, 0, "15", 1, 100000, 0, NULL, NULL, "15",
	 "stop when the exemplars are unchanged for this many iterations",
	 VPA_AT(struct vpa_anon_anonymiser_opts, ap_conv_iter), VPA_MARK(struct vpa_anon_anonymiser_opts, ap_conv_iter_at)},
	{"pseudo_out", VPA_K_STR, 0, NULL, -INF, INF, VPA_KF_WRITE, NULL, NULL, "out/pseudo.ark",
	 "write the trial speakers' pseudo-speaker x-vectors here as a Kaldi text archive (relative "
	 "to the current directory; inside the output folder unless the run has "
	 "`--allow-writes-outside`), to feed your own synthesiser",
	 VPA_AT(struct vpa_anon_anonymiser_opts, pseudo_out), VPA_MARK(struct vpa_anon_anonymiser_opts, pseudo_out_at)},
	{NULL},
};
static const struct vpa_schema anon_schema = {"anonymiser", anon_keys, sizeof(struct vpa_anon_anonymiser_opts)};

static const struct vpa_key backend_keys[] = {
	{"lda_dim", VPA_K_INT, 0, "200", 0, 100000, 0, NULL, NULL, "150",
	 "LDA output dimension (0 = no LDA); must be below the embedding dimension",
	 VPA_AT(struct vpa_anon_backend_opts, lda_dim), VPA_MARK(struct vpa_anon_backend_opts, lda_dim_at)},
	{"scoring", VPA_K_ENUM, 0, "plda", -INF, INF, 0, "plda|cosine", NULL, "cosine",
	 "the attacker's scoring after LDA and length normalisation",
	 VPA_AT(struct vpa_anon_backend_opts, scoring), VPA_MARK(struct vpa_anon_backend_opts, scoring_at)},
	{"length_norm", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "false",
	 "length normalisation after LDA (Kaldi's ivector-normalize-length step before PLDA; "
	 "default on)",
	 VPA_AT(struct vpa_anon_backend_opts, length_norm), VPA_MARK(struct vpa_anon_backend_opts, length_norm_at)},
	{"plda_normalize_length", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "false",
	 "the length normalisation inside PLDA scoring (ivector-plda-scoring --normalize-length, "
	 "Kaldi's default on): the transformed vector is scaled so y^T (psi + I/n)^-1 y = dim; "
	 "with length_norm, plda_normalize_length and LDA off the score is the two-covariance "
	 "LLR of the trained model",
	 VPA_AT(struct vpa_anon_backend_opts, plda_normalize_length), VPA_MARK(struct vpa_anon_backend_opts, plda_normalize_length_at)},
	{"em_iters", VPA_K_INT, 0, "10", 1, 1000, 0, NULL, NULL, "10", "PLDA EM iterations",
	 VPA_AT(struct vpa_anon_backend_opts, em_iters), VPA_MARK(struct vpa_anon_backend_opts, em_iters_at)},
	{NULL},
};
static const struct vpa_schema backend_schema = {"back-end", backend_keys, sizeof(struct vpa_anon_backend_opts)};

static const struct vpa_key sim_keys[] = {
	{"dim", VPA_K_INT, 0, "256", 2, 4096, 0, NULL, NULL, "256", "embedding dimension d",
	 VPA_AT(struct vpa_anon_sim_opts, dim), VPA_MARK(struct vpa_anon_sim_opts, dim_at)},
	{"spk_rank", VPA_K_INT, 0, "150", 1, 4096, 0, NULL, NULL, "150",
	 "rank of the speaker subspace V (at most dim - 1)",
	 VPA_AT(struct vpa_anon_sim_opts, spk_rank), VPA_MARK(struct vpa_anon_sim_opts, spk_rank_at)},
	{"utt_rank", VPA_K_INT, 0, "100", 0, 4096, 0, NULL, NULL, "100",
	 "rank of the session subspace U",
	 VPA_AT(struct vpa_anon_sim_opts, utt_rank), VPA_MARK(struct vpa_anon_sim_opts, utt_rank_at)},
	{"synth_rank", VPA_K_INT, 0, "8", 0, 4096, 0, NULL, NULL, "8",
	 "rank of the synthesiser channel C (inside the leading speaker directions)",
	 VPA_AT(struct vpa_anon_sim_opts, synth_rank), VPA_MARK(struct vpa_anon_sim_opts, synth_rank_at)},
	{"spk_scale", VPA_K_NUM, 0, "0.35", 0, INF, VPA_KF_OPEN_LO, NULL, NULL, "0.35",
	 "speaker standard deviation along the leading direction of V",
	 VPA_AT(struct vpa_anon_sim_opts, spk_scale), VPA_MARK(struct vpa_anon_sim_opts, spk_scale_at)},
	{"spk_decay", VPA_K_NUM, 0, "0.3", 0, 1, VPA_KF_OPEN_LO, NULL, NULL, "0.3",
	 "scale of V's last direction relative to its first (geometric decay)",
	 VPA_AT(struct vpa_anon_sim_opts, spk_decay), VPA_MARK(struct vpa_anon_sim_opts, spk_decay_at)},
	{"utt_scale", VPA_K_NUM, 0, "0.6", 0, INF, 0, NULL, NULL, "0.6",
	 "session variability: std of U's entries times sqrt(dim)",
	 VPA_AT(struct vpa_anon_sim_opts, utt_scale), VPA_MARK(struct vpa_anon_sim_opts, utt_scale_at)},
	{"noise", VPA_K_NUM, 0, "0.25", 0, INF, 0, NULL, NULL, "0.25",
	 "isotropic residual standard deviation sigma_e",
	 VPA_AT(struct vpa_anon_sim_opts, noise), VPA_MARK(struct vpa_anon_sim_opts, noise_at)},
	{"gender_sep", VPA_K_NUM, 0, "4", 0, INF, 0, NULL, NULL, "4",
	 "distance between the male and female means",
	 VPA_AT(struct vpa_anon_sim_opts, gender_sep), VPA_MARK(struct vpa_anon_sim_opts, gender_sep_at)},
	{"tau", VPA_K_NUM, 0, "4", 0, INF, 0, NULL, NULL, "4",
	 "duration constant (s): session noise is scaled by sqrt(1 + tau / duration)",
	 VPA_AT(struct vpa_anon_sim_opts, tau), VPA_MARK(struct vpa_anon_sim_opts, tau_at)},
	{"dur_mean", VPA_K_NUM, 0, "8", 1, 30, 0, NULL, NULL, "8",
	 "median utterance duration in seconds (log-normal, clipped to [1, 30])",
	 VPA_AT(struct vpa_anon_sim_opts, dur_mean), VPA_MARK(struct vpa_anon_sim_opts, dur_mean_at)},
	{"dur_sigma", VPA_K_NUM, 0, "0.5", 0, 5, 0, NULL, NULL, "0.5",
	 "log-normal sigma of the durations",
	 VPA_AT(struct vpa_anon_sim_opts, dur_sigma), VPA_MARK(struct vpa_anon_sim_opts, dur_sigma_at)},
	{"leakage", VPA_K_NUM, 0, "0.1", 0, 1, 0, NULL, NULL, "0.3",
	 "fraction of the original speaker's factor left in anonymised speech",
	 VPA_AT(struct vpa_anon_sim_opts, leakage), VPA_MARK(struct vpa_anon_sim_opts, leakage_at)},
	{"synth_noise", VPA_K_NUM, 0, "2", 0, INF, 0, NULL, NULL, "2",
	 "std of the synthesiser channel C w added to anonymised embeddings",
	 VPA_AT(struct vpa_anon_sim_opts, synth_noise), VPA_MARK(struct vpa_anon_sim_opts, synth_noise_at)},
	{"synth_gain", VPA_K_NUM, 0, "12", 0, INF, 0, NULL, NULL, "12",
	 "the synthesised voice's deviation from its gender's mean voice, relative to the "
	 "pseudo-speaker's (an average of N* voices is much less distinct than one voice)",
	 VPA_AT(struct vpa_anon_sim_opts, synth_gain), VPA_MARK(struct vpa_anon_sim_opts, synth_gain_at)},
	{"train_speakers", VPA_K_INT, 0, "400", 2, 1000000, 0, NULL, NULL, "400",
	 "speakers of the attacker's training set (back-end)",
	 VPA_AT(struct vpa_anon_sim_opts, train_speakers), VPA_MARK(struct vpa_anon_sim_opts, train_speakers_at)},
	{"train_utts", VPA_K_INT, 0, "10", 2, 10000, 0, NULL, NULL, "10",
	 "utterances per training speaker",
	 VPA_AT(struct vpa_anon_sim_opts, train_utts), VPA_MARK(struct vpa_anon_sim_opts, train_utts_at)},
	{"pool_speakers", VPA_K_INT, 0, "600", 2, 1000000, 0, NULL, NULL, "600",
	 "speakers of the anonymisation pool (half of each gender)",
	 VPA_AT(struct vpa_anon_sim_opts, pool_speakers), VPA_MARK(struct vpa_anon_sim_opts, pool_speakers_at)},
	{"pool_utts", VPA_K_INT, 0, "4", 2, 10000, 0, NULL, NULL, "4",
	 "utterances per pool speaker",
	 VPA_AT(struct vpa_anon_sim_opts, pool_utts), VPA_MARK(struct vpa_anon_sim_opts, pool_utts_at)},
	{"test_speakers", VPA_K_INT, 0, "40", 2, 1000000, 0, NULL, NULL, "40",
	 "test speakers (enrolment and trials), half of each gender",
	 VPA_AT(struct vpa_anon_sim_opts, test_speakers), VPA_MARK(struct vpa_anon_sim_opts, test_speakers_at)},
	{"enroll_utts", VPA_K_INT, 0, "5", 1, 10000, 0, NULL, NULL, "5",
	 "enrolment utterances per test speaker",
	 VPA_AT(struct vpa_anon_sim_opts, enroll_utts), VPA_MARK(struct vpa_anon_sim_opts, enroll_utts_at)},
	{"trial_utts", VPA_K_INT, 0, "20", 1, 10000, 0, NULL, NULL, "20",
	 "trial utterances per test speaker",
	 VPA_AT(struct vpa_anon_sim_opts, trial_utts), VPA_MARK(struct vpa_anon_sim_opts, trial_utts_at)},
	{"population", VPA_K_INT, 0, "0", 0, 10000000, 0, NULL, NULL, "2000",
	 "extra enrolment speakers for the identification attack (0 = none)",
	 VPA_AT(struct vpa_anon_sim_opts, population), VPA_MARK(struct vpa_anon_sim_opts, population_at)},
	{NULL},
};
static const struct vpa_schema sim_schema = {"simulation", sim_keys, sizeof(struct vpa_anon_sim_opts)};

static const struct vpa_key set_keys[] = {
	{"vectors", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "xvector.ark",
	 "Kaldi archive (text or binary) or .npy (n, d) float32/float64 (this or `audio`)",
	 VPA_AT(struct vpa_anon_set_opts, vectors), VPA_MARK(struct vpa_anon_set_opts, vectors_at)},
	{"audio", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/test",
	 "a Kaldi data directory of audio (wav.scp, utt2spk, optional segments and "
	 "spk2gender) embedded with `import.extractor` instead of `vectors`; speakers, "
	 "genders and durations then come from the folder and the audio, so no other key "
	 "of the set is allowed",
	 VPA_AT(struct vpa_anon_set_opts, audio), VPA_MARK(struct vpa_anon_set_opts, audio_at)},
	{"ids", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "ids.txt",
	 ".npy only: one utterance id per row, or `utt spk` lines",
	 VPA_AT(struct vpa_anon_set_opts, ids), VPA_MARK(struct vpa_anon_set_opts, ids_at)},
	{"utt2spk", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "utt2spk",
	 "`utt spk` lines (required unless `ids` has two columns)",
	 VPA_AT(struct vpa_anon_set_opts, utt2spk), VPA_MARK(struct vpa_anon_set_opts, utt2spk_at)},
	{"spk2gender", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "spk2gender",
	 "`spk m|f` lines",
	 VPA_AT(struct vpa_anon_set_opts, spk2gender), VPA_MARK(struct vpa_anon_set_opts, spk2gender_at)},
	{"utt2dur", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "utt2dur",
	 "`utt seconds` lines",
	 VPA_AT(struct vpa_anon_set_opts, utt2dur), VPA_MARK(struct vpa_anon_set_opts, utt2dur_at)},
	{NULL},
};
static const struct vpa_schema set_schema = {"embedding set", set_keys, sizeof(struct vpa_anon_set_opts)};

#define SETKEY(name, req, doc)                                                            \
	{#name, VPA_K_MAP, req, NULL, -INF, INF, 0, NULL, &set_schema,                    \
	 "{vectors: " #name "/xvector.ark, utt2spk: " #name "/utt2spk}", doc,               \
	 VPA_AT(struct vpa_anon_import_opts, name), VPA_MARK(struct vpa_anon_import_opts, name##_at)}
static const struct vpa_key import_keys[] = {
	SETKEY(train, 1, "original training data of the attacker's back-end"),
	SETKEY(train_anon, 0, "anonymised training data (semi-informed and informed attackers)"),
	SETKEY(pool, 0, "anonymisation pool (with spk2gender): vpaudit then writes the pseudo-"
			  "speakers of the trial speakers (`anonymiser.pseudo_out`)"),
	SETKEY(enroll, 1, "original enrolment utterances"),
	SETKEY(enroll_anon, 0, "enrolment anonymised by the attacker with the same method and its "
				 "own draws (lazy- and semi-informed)"),
	SETKEY(enroll_informed, 0, "enrolment anonymised with the trial speakers' own "
				     "pseudo-speakers (informed)"),
	SETKEY(trial, 1, "original trial utterances"),
	SETKEY(trial_anon, 0, "anonymised trial utterances (same utterance ids); every attacker "
				"but the baseline needs it"),
	SETKEY(population, 0, "extra original enrolment speakers for identification"),
	SETKEY(population_anon, 0, "the same anonymised by the attacker"),
	SETKEY(population_informed, 0, "the same anonymised with their own pseudo-speakers"),
	{"extractor", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &vpa_anon_onnx_schema,
	 "{model: ecapa.onnx, options: [--num-mel-bins=80]}",
	 "the ONNX speaker extractor and front-end that embed the sets given as `audio` "
	 "(as `vpaudit embed`)",
	 VPA_AT(struct vpa_anon_import_opts, extractor), VPA_MARK(struct vpa_anon_import_opts, extractor_at)},
	{"enrolls", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "enrolls",
	 "VoicePrivacy `enrolls`: the enrolment utterances to use (default: all)",
	 VPA_AT(struct vpa_anon_import_opts, enrolls), VPA_MARK(struct vpa_anon_import_opts, enrolls_at)},
	{"trials", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "trials",
	 "VoicePrivacy `trials`: `enroll_spk test_utt target|nontarget` (default: every "
	 "same-gender pair, which needs spk2gender)",
	 VPA_AT(struct vpa_anon_import_opts, trials), VPA_MARK(struct vpa_anon_import_opts, trials_at)},
	{NULL},
};
static const struct vpa_schema import_schema = {"import", import_keys, sizeof(struct vpa_anon_import_opts)};

static const struct vpa_key keys[] = {
	{"source", VPA_K_ENUM, 0, "simulate", -INF, INF, 0, "simulate|import|audio", NULL,
	 "simulate",
	 "`simulate`: the generative model of targets/README.md; `import`: your embeddings; "
	 "`audio`: Kaldi data directories of original and anonymised audio, embedded by "
	 "extractors trained in C or your ONNX extractor (targets/anon_audio.c)",
	 VPA_AT(struct vpa_anon_opts, source), VPA_MARK(struct vpa_anon_opts, source_at)},
	{"anonymiser", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &anon_schema,
	 "{distance: plda, proximity: far, gender: same, assignment: speaker}",
	 "the x-vector anonymiser's design choices (simulate; import with a pool)",
	 VPA_AT(struct vpa_anon_opts, anonymiser), VPA_MARK(struct vpa_anon_opts, anonymiser_at)},
	{"backend", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &backend_schema,
	 "{lda_dim: 200, scoring: plda}", "the attacker's speaker-verification back-end",
	 VPA_AT(struct vpa_anon_opts, backend), VPA_MARK(struct vpa_anon_opts, backend_at)},
	{"simulate", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &sim_schema,
	 "{leakage: 0.1, test_speakers: 40}", "the simulation model and sizes",
	 VPA_AT(struct vpa_anon_opts, simulate), VPA_MARK(struct vpa_anon_opts, simulate_at)},
	{"import", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &import_schema,
	 "{train: {...}, enroll: {...}, trial: {...}, trial_anon: {...}}",
	 "the embedding sets (source: import)",
	 VPA_AT(struct vpa_anon_opts, import), VPA_MARK(struct vpa_anon_opts, import_at)},
	{"audio", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &vpa_anon_audio_schema,
	 "{train: data/train, train_anon: data/train_anon, enroll: ..., trial: ...}",
	 "the data directories and the extractor (source: audio)",
	 VPA_AT(struct vpa_anon_opts, audio), VPA_MARK(struct vpa_anon_opts, audio_at)},
	{NULL},
};
static const struct vpa_schema schema = {"target anonymised_speech", keys, sizeof(struct vpa_anon_opts)};

/* ---- validation -------------------------------------------------------------- */

/*
 * Where a check about a key itself ("`x` is only for source ...", "`x` cannot
 * go with `y`") blames it: the key, as the checks on the nodes did.
 */
static struct vpa_loc key_loc(const struct vpa_kind_ctx *ctx, struct vpa_mark m)
{
	return vpa_mark_key_loc(ctx->file, m);
}

/* Key marks in the order they were written (line, then column). */
static int key_order(struct vpa_mark a, struct vpa_mark b)
{
	if (a.kline != b.kline)
		return a.kline < b.kline ? -1 : 1;
	return a.kcol < b.kcol ? -1 : a.kcol > b.kcol;
}

/* A key of `import:` as written: a set, the extractor or a file (enrolls, trials). */
struct imp_key {
	const char *name;
	const struct vpa_anon_set_opts *set; /* a set, else NULL */
	const char *path;                    /* enrolls / trials */
	struct vpa_mark at;
};

static int imp_key_cmp(const void *x, const void *y)
{
	return key_order(((const struct imp_key *)x)->at, ((const struct imp_key *)y)->at);
}

/*
 * One set of `import:` (m, written at m_at): `vectors` or `audio`, `audio`
 * alone, an extractor for audio, its files and folder there.  The keys are
 * checked in the order they were written (the first error written is the one
 * reported).
 */
static int validate_set(const struct vpa_kind_ctx *ctx, const struct vpa_anon_import_opts *imp,
			const char *name, const struct vpa_anon_set_opts *m, struct vpa_mark m_at,
			struct vpa_err *err)
{
	struct imp_key k[] = {
		{"vectors", NULL, m->vectors, m->vectors_at},
		{"audio", NULL, m->audio, m->audio_at},
		{"ids", NULL, m->ids, m->ids_at},
		{"utt2spk", NULL, m->utt2spk, m->utt2spk_at},
		{"spk2gender", NULL, m->spk2gender, m->spk2gender_at},
		{"utt2dur", NULL, m->utt2dur, m->utt2dur_at},
	};
	size_t n = 0;
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (k[i].at.line)
			k[n++] = k[i];
	qsort(k, n, sizeof(k[0]), imp_key_cmp);
	int au = m->audio_at.line != 0;
	struct vpa_loc l2 = vpa_mark_loc(ctx->file, m_at);
	if (!au && !m->vectors_at.line)
		return vpa_fail(err, VPA_EINPUT, &l2,
				"set '%s' needs `vectors` (embeddings) or `audio` "
				"(a data directory)", name);
	if (au && n > 1) {
		size_t j = strcmp(k[0].name, "audio") ? 0 : 1;
		struct vpa_loc l3 = key_loc(ctx, k[j].at);
		return vpa_fail(err, VPA_EINPUT, &l3,
				"`%s` cannot go with `audio` (speakers, genders "
				"and durations come from the data directory)", k[j].name);
	}
	if (au && !imp->extractor_at.line)
		return vpa_fail(err, VPA_EINPUT, &l2,
				"set '%s' is audio: `import:` needs an `extractor:` "
				"(an ONNX model and its front-end)", name);
	for (size_t j = 0; j < n; j++)
		if (vpa_check_path_at(ctx, k[j].path, k[j].at,
				      !strcmp(k[j].name, "audio") ? VPA_PATH_DIR : VPA_PATH_FILE, err))
			return err->status;
	return 0;
}

/* source: import; its keys in the order written, then the extractor loaded. */
static int validate_import(const struct vpa_kind_ctx *ctx, const struct vpa_anon_opts *o,
			   struct vpa_err *err)
{
	const struct vpa_anon_import_opts *imp = &o->import;
	if (!o->import_at.line) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, ctx->self);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"source 'import' needs an `import:` mapping with the embedding sets");
	}
	if (o->simulate_at.line) {
		struct vpa_loc l2 = key_loc(ctx, o->simulate_at);
		return vpa_fail(err, VPA_EINPUT, &l2, "`simulate:` is only for source 'simulate'");
	}
#define SET(s) {#s, &imp->s, NULL, imp->s##_at}
	struct imp_key k[] = {
		SET(train), SET(train_anon), SET(pool), SET(enroll), SET(enroll_anon),
		SET(enroll_informed), SET(trial), SET(trial_anon), SET(population),
		SET(population_anon), SET(population_informed),
		{"extractor", NULL, NULL, imp->extractor_at},
		{"enrolls", NULL, imp->enrolls, imp->enrolls_at},
		{"trials", NULL, imp->trials, imp->trials_at},
	};
#undef SET
	size_t n = 0;
	int any_audio = 0;
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (k[i].at.line)
			k[n++] = k[i];
	qsort(k, n, sizeof(k[0]), imp_key_cmp);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(k[i].name, "extractor")) {
			if (vpa_check_path_at(ctx, imp->extractor.model, imp->extractor.model_at,
					      VPA_PATH_FILE, err))
				return err->status;
		} else if (k[i].set) {
			if (validate_set(ctx, imp, k[i].name, k[i].set, k[i].at, err))
				return err->status;
			any_audio |= k[i].set->audio_at.line != 0;
		} else if (vpa_check_path_at(ctx, k[i].path, k[i].at, VPA_PATH_FILE, err)) {
			return err->status;
		}
	}
	if (imp->extractor_at.line) {
		/* load it: unsupported operators, the input against the front-end, ... */
		struct vpa_embed_opts eo;
		struct vpa_embedder *e;
		if (vpa_anon_onnx_new(ctx->file, ctx->dir, &imp->extractor, 1, &eo, &e, err))
			return err->status;
		vpa_embedder_free(e);
		/* every audio set's recordings at their headers (audio/audio.h,
		 * vpa_datadir_probe): a run must not fail at once on them */
		for (size_t i = 0; i < n; i++) {
			if (!k[i].set || !k[i].set->audio_at.line)
				continue;
			char *p = vpa_path_join(ctx->dir, k[i].set->audio);
			int rc = vpa_datadir_check_audio(p, eo.feat.sample_frequency, err);
			free(p);
			if (rc)
				return rc;
		}
		if (!any_audio) {
			struct vpa_loc l2 = key_loc(ctx, imp->extractor_at);
			return vpa_fail(err, VPA_EINPUT, &l2,
					"`extractor:` embeds sets given as `audio`, and no set is");
		}
	}
	return 0;
}

/* A PATH or PATHS key's paths checked against want. */
static int check_paths(const struct vpa_kind_ctx *ctx, const struct vpa_strs *l, int want,
		       struct vpa_err *err)
{
	for (size_t j = 0; j < l->n; j++)
		if (vpa_check_path_at(ctx, l->v[j], l->marks[j], want, err))
			return err->status;
	return 0;
}

/* source: audio: the folders and files, the combinations of keys. */
static int validate_audio(const struct vpa_kind_ctx *ctx, const struct vpa_anon_opts *o,
			  struct vpa_err *err)
{
	const struct vpa_anon_audio_opts *au = &o->audio;
	int rc;
	if (!o->audio_at.line) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, ctx->self);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"source 'audio' needs an `audio:` mapping with the data directories");
	}
	if (o->simulate_at.line) {
		struct vpa_loc l2 = key_loc(ctx, o->simulate_at);
		return vpa_fail(err, VPA_EINPUT, &l2, "`simulate:` is only for source 'simulate'");
	}
	static const char *const dirs[] = {"train", "train_anon", "enroll", "enroll_anon",
					   "trial", "trial_anon"};
	/* the single folders as one-item lists (their mark the item's) */
	const char *one[4] = {au->train, au->train_anon, au->enroll, au->enroll_anon};
	struct vpa_mark one_at[4] = {au->train_at, au->train_anon_at, au->enroll_at,
				     au->enroll_anon_at};
	struct vpa_strs l[6];
	struct vpa_mark at[6];
	for (size_t i = 0; i < 4; i++) {
		memset(&l[i], 0, sizeof(l[i]));
		l[i].v = &one[i];
		l[i].marks = &one_at[i];
		l[i].n = one_at[i].line != 0;
		at[i] = one_at[i];
	}
	l[4] = au->trial;
	l[5] = au->trial_anon;
	at[4] = au->trial_at;
	at[5] = au->trial_anon_at;
	for (size_t i = 0; i < 6; i++)
		if ((rc = check_paths(ctx, &l[i], VPA_PATH_DIR, err)))
			return rc;
	if ((rc = vpa_anon_audio_validate_lists(ctx, au, err)))
		return rc;
	int synth = au->synthetic_at.line != 0;
	int builtin = au->anonymise_at.line != 0;
	for (size_t i = 0; i < 6; i++) {
		int anon = i % 2;
		if (at[i].line && ((synth && !anon) || (builtin && anon))) {
			struct vpa_loc l2 = key_loc(ctx, at[i]);
			return vpa_fail(err, VPA_EINPUT, &l2, "`%s` cannot be given with `%s`",
					dirs[i], anon ? "anonymise" : "synthetic");
		}
		if (!at[i].line && !anon && !synth) {
			struct vpa_loc l2 = vpa_mark_loc(ctx->file, o->audio_at);
			return vpa_fail(err, VPA_EINPUT, &l2,
					"source 'audio' needs `%s` (a data directory) or `synthetic`",
					dirs[i]);
		}
	}
	if (au->enroll_informed_at.line) {
		struct vpa_loc l2 = key_loc(ctx, au->enroll_informed_at);
		if (builtin)
			return vpa_fail(err, VPA_EINPUT, &l2,
					"`enroll_informed` cannot be given with `anonymise`");
		if (vpa_check_path_at(ctx, au->enroll_informed, au->enroll_informed_at,
				      VPA_PATH_DIR, err))
			return err->status;
	}
	if ((rc = vpa_anon_audio_validate(ctx, au, err)))
		return rc;
	if ((rc = check_paths(ctx, &au->trials, VPA_PATH_FILE, err)) ||
	    (rc = vpa_check_path_at(ctx, au->enrolls, au->enrolls_at, VPA_PATH_FILE, err)) ||
	    (rc = check_paths(ctx, &au->hyp, VPA_PATH_FILE, err)) ||
	    (rc = check_paths(ctx, &au->hyp_anon, VPA_PATH_FILE, err)))
		return rc;
	return 0;
}

static int validate(const struct vpa_kind_ctx *ctx, const void *opts, struct vpa_err *err)
{
	const struct vpa_anon_opts *o = opts;
	const char *source = o->source;
	int rc;
	if (!strcmp(source, "import")) {
		if ((rc = validate_import(ctx, o, err)))
			return rc;
	} else if (o->import_at.line) {
		struct vpa_loc l2 = key_loc(ctx, o->import_at);
		return vpa_fail(err, VPA_EINPUT, &l2, "`import:` is only for source 'import'");
	}
	if (!strcmp(source, "audio")) {
		if ((rc = validate_audio(ctx, o, err)))
			return rc;
	} else if (o->audio_at.line) {
		struct vpa_loc l2 = key_loc(ctx, o->audio_at);
		return vpa_fail(err, VPA_EINPUT, &l2, "`audio:` is only for source 'audio'");
	}
	const struct vpa_anon_anonymiser_opts *an = &o->anonymiser;
	if (o->anonymiser_at.line && an->n_star > an->n) {
		struct vpa_loc l2 = an->n_star_at.line ? key_loc(ctx, an->n_star_at)
						       : vpa_mark_loc(ctx->file, o->anonymiser_at);
		return vpa_fail(err, VPA_EINPUT, &l2, "n_star (%lld) must not exceed n (%lld)",
				an->n_star, an->n);
	}
	const struct vpa_anon_sim_opts *sim = &o->simulate;
	if (o->simulate_at.line && sim->spk_rank >= sim->dim) {
		struct vpa_loc l2 = sim->spk_rank_at.line ? key_loc(ctx, sim->spk_rank_at)
							  : vpa_mark_loc(ctx->file, o->simulate_at);
		return vpa_fail(err, VPA_EINPUT, &l2, "spk_rank (%lld) must be below dim (%lld)",
				sim->spk_rank, sim->dim);
	}
	if (!strcmp(source, "simulate") && o->backend.lda_dim >= sim->dim) {
		/* the key, else the target's mapping */
		struct vpa_loc l2 = o->backend.lda_dim_at.line
					    ? key_loc(ctx, o->backend.lda_dim_at)
					    : vpa_mark_loc(ctx->file, ctx->self);
		return vpa_fail(err, VPA_EINPUT, &l2,
				"backend lda_dim (%lld) must be below the embedding dimension (%lld)",
				o->backend.lda_dim, sim->dim);
	}
	return 0;
}

/* ---- the target -------------------------------------------------------------- */

static void anon_free(struct vpa_target *t)
{
	struct vpa_anon_target *a = t->data;
	if (!a)
		return;
	struct vpa_embset *sets[] = {&a->train, &a->train_anon, &a->enroll, &a->enroll_anon,
				     &a->enroll_informed, &a->trial, &a->trial_anon, &a->pop,
				     &a->pop_anon, &a->pop_informed, &a->enroll_semi,
				     &a->trial_semi};
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		vpa_embset_release(sets[i]);
	vpa_anon_trials_release(&a->trials);
	free(a->trials_name);
	vpa_sim_free(a->sim);
	vpa_anon_result_release(&a->trial_pseudo);
	vpa_embedder_free(a->extractor);
	free(a);
	t->data = NULL;
}

static void init_sets(struct vpa_anon_target *a)
{
	struct vpa_embset *sets[] = {&a->train, &a->train_anon, &a->enroll, &a->enroll_anon,
				     &a->enroll_informed, &a->trial, &a->trial_anon, &a->pop,
				     &a->pop_anon, &a->pop_informed, &a->enroll_semi,
				     &a->trial_semi};
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		vpa_embset_init(sets[i]);
}

static void read_backend_cfg(const struct vpa_anon_backend_opts *be, struct vpa_backend_cfg *b)
{
	vpa_backend_cfg_init(b);
	b->lda_dim = (size_t)be->lda_dim;
	b->scoring = !strcmp(be->scoring, "cosine") ? VPA_SCORE_COSINE : VPA_SCORE_PLDA;
	b->length_norm = be->length_norm;
	b->plda_norm = be->plda_normalize_length ? VPA_PLDA_NORM_KALDI : VPA_PLDA_NORM_NONE;
	b->em_iters = (int)be->em_iters;
}

static int build(struct vpa_run_ctx *ctx, const void *opts, struct vpa_target *out,
		 struct vpa_err *err)
{
	const struct vpa_anon_opts *o = opts;
	struct vpa_anon_target *a = xcalloc(1, sizeof(*a));
	init_sets(a);
	out->data = a;
	out->info = vpa_json_obj();
	int sim = !strcmp(o->source, "simulate");
	out->simulated = a->simulated = sim;
	read_backend_cfg(&o->backend, &a->backend);
	a->trials_name = vpa_anon_trials_name(o);
	int audio = !strcmp(o->source, "audio");
	int rc = sim     ? vpa_anon_build_sim(ctx, o, out, a, err)
		 : audio ? vpa_anon_build_audio(ctx, &o->audio, out, a, err)
			 : vpa_anon_build_import(ctx, o, out, a, err);
	if (!rc && audio) {
		rc = vpa_anon_audio_sets(ctx, &o->audio, a, err);
		/* a synthetic corpus is labelled like a simulation in every report */
		if (o->audio.synthetic_at.line)
			out->simulated = 1;
	}
	if (rc)
		return rc;
	const char *pout = o->anonymiser.pseudo_out;
	if (pout) {
		if (!a->trial_pseudo.n_pseudo)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"anonymiser pseudo_out needs the anonymisation pool (import: pool)");
		if ((rc = vpa_anon_write_ark(&a->trial_pseudo, pout, err)))
			return rc;
		vpa_json_set_str(out->info, "pseudo_out", pout);
	}
	static const char *const names[] = {"train", "train_anon", "enroll", "enroll_anon",
					    "enroll_informed", "trial", "trial_anon", "population"};
	const struct vpa_embset *const sets[] = {&a->train, &a->train_anon, &a->enroll,
						 &a->enroll_anon, &a->enroll_informed, &a->trial,
						 &a->trial_anon, &a->pop};
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		vpa_anon_set_info(out->info, names[i], sets[i]);
	size_t nt = 0;
	for (size_t i = 0; i < a->trials.n; i++)
		nt += a->trials.tar[i];
	vpa_json_set_num(out->info, "n_target", (double)nt);
	vpa_json_set_num(out->info, "n_nontarget", (double)(a->trials.n - nt));
	return 0;
}

const struct vpa_target_kind vpa_target_anonymised_speech = {
	.name = "anonymised_speech",
	.schema = &schema,
	.doc = "Utterance embeddings (x-vectors) of original and anonymised speech in the roles "
	       "the `linkage`, `identification` and `slicing` attacks need: the attacker's "
	       "training data (original and anonymised), the anonymisation pool, enrolment and "
	       "trials (original, anonymised by the user, anonymised by the attacker).  "
	       "`source: simulate` draws them from the generative model of targets/README.md and "
	       "anonymises them with the x-vector anonymiser (VoicePrivacy baseline with the "
	       "COMPRISE design choices); reports mark it simulated.  `source: import` reads "
	       "Kaldi archives or .npy files with utt2spk, spk2gender, utt2dur, enrolls and "
	       "trials, or embeds Kaldi data directories of audio with an ONNX extractor "
	       "(`import.extractor`, as `vpaudit embed`).",
	.validate = validate,
	.build = build,
	.free = anon_free,
};
