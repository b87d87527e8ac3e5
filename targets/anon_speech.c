/*
 * targets/anon_speech.c - target kind `anonymised_speech`: utterance
 * embeddings (x-vectors) of original and anonymised speech in the roles the
 * attacks need (train, pool, enroll, trial, their anonymised versions), either
 * simulated (targets/sim_speech.c + targets/anonymiser.c; documented in
 * targets/README.md) or imported from Kaldi archives / .npy files.
 */
#include "targets/anon.h"
#include "formats/kaldi.h"
#include "embed/embed.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The ONNX extractor of `import.extractor` (embed/embed.h, as `vpaudit embed`). */
static const struct vpa_key extractor_keys[] = {
	{"model", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "ecapa.onnx",
	 "the ONNX model (external data files next to it); an unsupported operator is "
	 "reported by `vpaudit validate`",
	 VPA_AT(struct vpa_anon_onnx_opts, model), VPA_MARK(struct vpa_anon_onnx_opts, model_at)},
	{"features", VPA_K_ENUM, 0, "fbank", -INF, INF, 0, "fbank|mfcc", NULL, "fbank",
	 "the front-end's features (Kaldi's compute-fbank-feats / compute-mfcc-feats)",
	 VPA_AT(struct vpa_anon_onnx_opts, features), VPA_MARK(struct vpa_anon_onnx_opts, features_at)},
	{"options", VPA_K_LIST, 0, NULL, -INF, INF, 0, NULL, NULL,
	 "[--num-mel-bins=80, --frame-shift=10]",
	 "front-end options as on the command line of `vpaudit features` (Kaldi's names, "
	 "`--name=value`, CMVN and `--vad` included)",
	 VPA_AT(struct vpa_anon_onnx_opts, options), VPA_MARK(struct vpa_anon_onnx_opts, options_at)},
	{"cmn", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "true",
	 "subtract the mean of the frames fed to the model (per chunk with `chunk`)",
	 VPA_AT(struct vpa_anon_onnx_opts, cmn), VPA_MARK(struct vpa_anon_onnx_opts, cmn_at)},
	{"chunk", VPA_K_INT, 0, "0", 0, 100000000, 0, NULL, NULL, "198",
	 "frames per forward pass, chunk embeddings averaged as WeSpeaker's runtime (0: the "
	 "whole utterance)",
	 VPA_AT(struct vpa_anon_onnx_opts, chunk), VPA_MARK(struct vpa_anon_onnx_opts, chunk_at)},
	{"layout", VPA_K_ENUM, 0, "btf", -INF, INF, 0, "btf|bft", NULL, "btf",
	 "the model input (batch, time, features) or (batch, features, time)",
	 VPA_AT(struct vpa_anon_onnx_opts, layout), VPA_MARK(struct vpa_anon_onnx_opts, layout_at)},
	{"input", VPA_K_STR, 0, NULL, -INF, INF, 0, NULL, NULL, "feats",
	 "the graph input of the features (default: the only one)",
	 VPA_AT(struct vpa_anon_onnx_opts, input), VPA_MARK(struct vpa_anon_onnx_opts, input_at)},
	{"output", VPA_K_STR, 0, NULL, -INF, INF, 0, NULL, NULL, "embedding",
	 "the value read as the embedding: a graph output or any intermediate value "
	 "(default: the first graph output)",
	 VPA_AT(struct vpa_anon_onnx_opts, output), VPA_MARK(struct vpa_anon_onnx_opts, output_at)},
	{NULL},
};
const struct vpa_schema vpa_anon_onnx_schema = {"extractor", extractor_keys, sizeof(struct vpa_anon_onnx_opts)};

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

#define SETKEY(f, req, doc)                                                               \
	{#f, VPA_K_MAP, req, NULL, -INF, INF, 0, NULL, &set_schema,                       \
	 "{vectors: " #f "/xvector.ark, utt2spk: " #f "/utt2spk}", doc,                   \
	 VPA_AT(struct vpa_anon_import_opts, f), VPA_MARK(struct vpa_anon_import_opts, f##_at)}
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

/* ---- the ONNX extractor ------------------------------------------------------ */

/*
 * The extractor's options from its mapping (strings borrowed from the nodes).
 * Errors blame the offending node: "S.yaml:12:20: unknown option '--num-bins'".
 */
static int extractor_opts(const char *file, const struct vpa_ynode *ex, int threads,
			  struct vpa_embed_opts *o, struct vpa_err *err)
{
	const char *kind = vpa_cfg_str(ex, &vpa_anon_onnx_schema, "features");
	vpa_embed_opts_init(o, !strcmp(kind, "mfcc") ? VPA_FEAT_MFCC : VPA_FEAT_FBANK);
	o->cmn = vpa_cfg_bool(ex, &vpa_anon_onnx_schema, "cmn");
	o->chunk = (size_t)vpa_cfg_int(ex, &vpa_anon_onnx_schema, "chunk");
	o->layout = !strcmp(vpa_cfg_str(ex, &vpa_anon_onnx_schema, "layout"), "bft") ? VPA_EMBED_BFT
										  : VPA_EMBED_BTF;
	o->input = vpa_cfg_str(ex, &vpa_anon_onnx_schema, "input");
	o->output = vpa_cfg_str(ex, &vpa_anon_onnx_schema, "output");
	o->threads = threads > 0 ? threads : 1;
	static const char *const own[] = {"cmn", "chunk", "layout", "features", "input",
					  "output", NULL};
	return vpa_target_frontend_list(file, vpa_ymap_get(ex, "options"), "--num-mel-bins=80",
					own, &o->feat, err);
}

/* Load the extractor (model checks, operators, input shape against the front-end). */
int vpa_anon_onnx_new(const char *file, const char *dir, const struct vpa_ynode *ex,
		      int threads, struct vpa_embed_opts *o, struct vpa_embedder **out,
		      struct vpa_err *err)
{
	*out = NULL;
	int rc = extractor_opts(file, ex, threads, o, err);
	if (rc)
		return rc;
	char *p = vpa_path_join(dir, vpa_cfg_str(ex, &vpa_anon_onnx_schema, "model"));
	struct vpa_err e2;
	vpa_err_init(&e2);
	rc = vpa_embedder_new(p, o, out, &e2);
	free(p);
	if (rc) {
		struct vpa_loc loc = vpa_node_loc(file, vpa_ymap_get(ex, "model"));
		return vpa_fail(err, e2.status, &loc, "%s", e2.msg);
	}
	return 0;
}

/* ---- validation -------------------------------------------------------------- */

static int validate(const struct vpa_kind_ctx *ctx, const struct vpa_ynode *cfg,
		    struct vpa_err *err)
{
	const char *source = vpa_cfg_str(cfg, &schema, "source");
	int rc;
	const struct vpa_ynode *imp = vpa_ymap_get(cfg, "import");
	const struct vpa_ynode *sim = vpa_ymap_get(cfg, "simulate");
	const struct vpa_ynode *an = vpa_ymap_get(cfg, "anonymiser");
	struct vpa_loc loc = vpa_node_loc(ctx->file, cfg);
	if (!strcmp(source, "import")) {
		if (!imp)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"source 'import' needs an `import:` mapping with the embedding sets");
		if (sim) {
			struct vpa_loc l2 = vpa_node_loc(ctx->file, vpa_ymap_key(cfg, "simulate"));
			return vpa_fail(err, VPA_EINPUT, &l2, "`simulate:` is only for source 'simulate'");
		}
		const struct vpa_ynode *ex = vpa_ymap_get(imp, "extractor");
		int any_audio = 0;
		for (size_t i = 0; i < imp->n; i++) {
			const struct vpa_ynode *v = imp->items[i];
			if (!strcmp(imp->keys[i]->str, "extractor")) {
				if (vpa_check_path(ctx, vpa_ymap_get(v, "model"), VPA_PATH_FILE, err))
					return err->status;
			} else if (v->type == VPA_YMAP) {
				const struct vpa_ynode *au = vpa_ymap_get(v, "audio");
				struct vpa_loc l2 = vpa_node_loc(ctx->file, v);
				if (!au && !vpa_ymap_get(v, "vectors"))
					return vpa_fail(err, VPA_EINPUT, &l2,
							"set '%s' needs `vectors` (embeddings) or `audio` "
							"(a data directory)", imp->keys[i]->str);
				if (au && v->n > 1) {
					size_t j = strcmp(v->keys[0]->str, "audio") ? 0 : 1;
					struct vpa_loc l3 = vpa_node_loc(ctx->file, v->keys[j]);
					return vpa_fail(err, VPA_EINPUT, &l3,
							"`%s` cannot go with `audio` (speakers, genders "
							"and durations come from the data directory)",
							v->keys[j]->str);
				}
				if (au && !ex)
					return vpa_fail(err, VPA_EINPUT, &l2,
							"set '%s' is audio: `import:` needs an `extractor:` "
							"(an ONNX model and its front-end)", imp->keys[i]->str);
				any_audio |= au != NULL;
				for (size_t j = 0; j < v->n; j++)
					if (vpa_check_path(ctx, v->items[j],
							   v->items[j] == au ? VPA_PATH_DIR : VPA_PATH_FILE,
							   err))
						return err->status;
			} else if (vpa_check_path(ctx, v, VPA_PATH_FILE, err)) {
				return err->status;
			}
		}
		if (ex) {
			/* load it: unsupported operators, the input against the front-end, ... */
			struct vpa_embed_opts o;
			struct vpa_embedder *e;
			if (vpa_anon_onnx_new(ctx->file, ctx->dir, ex, 1, &o, &e, err))
				return err->status;
			vpa_embedder_free(e);
			if (!any_audio) {
				struct vpa_loc l2 = vpa_node_loc(ctx->file, vpa_ymap_key(imp, "extractor"));
				return vpa_fail(err, VPA_EINPUT, &l2,
						"`extractor:` embeds sets given as `audio`, and no set is");
			}
		}
	} else if (imp) {
		struct vpa_loc l2 = vpa_node_loc(ctx->file, vpa_ymap_key(cfg, "import"));
		return vpa_fail(err, VPA_EINPUT, &l2, "`import:` is only for source 'import'");
	}
	const struct vpa_ynode *au = vpa_ymap_get(cfg, "audio");
	if (!strcmp(source, "audio")) {
		if (!au)
			return vpa_fail(err, VPA_EINPUT, &loc,
					"source 'audio' needs an `audio:` mapping with the data directories");
		if (sim) {
			struct vpa_loc l2 = vpa_node_loc(ctx->file, vpa_ymap_key(cfg, "simulate"));
			return vpa_fail(err, VPA_EINPUT, &l2, "`simulate:` is only for source 'simulate'");
		}
		static const char *const dirs[] = {"train", "train_anon", "enroll", "enroll_anon",
						   "trial", "trial_anon"};
		for (size_t i = 0; i < 6; i++) {
			const struct vpa_ynode *v = vpa_ymap_get(au, dirs[i]);
			for (size_t j = 0; v && j < (v->type == VPA_YSEQ ? v->n : 1); j++)
				if (vpa_check_path(ctx, v->type == VPA_YSEQ ? v->items[j] : v,
						   VPA_PATH_DIR, err))
					return err->status;
		}
		if ((rc = vpa_anon_audio_validate_lists(ctx, au, err)))
			return rc;
		int synth = vpa_ymap_get(au, "synthetic") != NULL;
		int builtin = vpa_ymap_get(au, "anonymise") != NULL;
		for (size_t i = 0; i < 6; i++) {
			const struct vpa_ynode *k = vpa_ymap_key(au, dirs[i]);
			int anon = i % 2;
			if (k && ((synth && !anon) || (builtin && anon))) {
				struct vpa_loc l2 = vpa_node_loc(ctx->file, k);
				return vpa_fail(err, VPA_EINPUT, &l2, "`%s` cannot be given with `%s`",
						dirs[i], anon ? "anonymise" : "synthetic");
			}
			if (!k && !anon && !synth) {
				struct vpa_loc l2 = vpa_node_loc(ctx->file, au);
				return vpa_fail(err, VPA_EINPUT, &l2,
						"source 'audio' needs `%s` (a data directory) or `synthetic`",
						dirs[i]);
			}
		}
		const struct vpa_ynode *eik = vpa_ymap_key(au, "enroll_informed");
		if (eik) {
			struct vpa_loc l2 = vpa_node_loc(ctx->file, eik);
			if (builtin)
				return vpa_fail(err, VPA_EINPUT, &l2,
						"`enroll_informed` cannot be given with `anonymise`");
			if (vpa_check_path(ctx, vpa_ymap_get(au, "enroll_informed"), VPA_PATH_DIR,
					   err))
				return err->status;
		}
		if ((rc = vpa_anon_audio_validate(ctx, au, err)))
			return rc;
		static const char *const files[] = {"trials", "enrolls", "hyp", "hyp_anon"};
		for (size_t i = 0; i < 4; i++) {
			const struct vpa_ynode *v = vpa_ymap_get(au, files[i]);
			for (size_t j = 0; v && j < (v->type == VPA_YSEQ ? v->n : 1); j++)
				if (vpa_check_path(ctx, v->type == VPA_YSEQ ? v->items[j] : v,
						   VPA_PATH_FILE, err))
					return err->status;
		}
	} else if (au) {
		struct vpa_loc l2 = vpa_node_loc(ctx->file, vpa_ymap_key(cfg, "audio"));
		return vpa_fail(err, VPA_EINPUT, &l2, "`audio:` is only for source 'audio'");
	}
	if (an) {
		long long n = vpa_cfg_int(an, &anon_schema, "n");
		long long ns = vpa_cfg_int(an, &anon_schema, "n_star");
		if (ns > n) {
			const struct vpa_ynode *k = vpa_ymap_key(an, "n_star");
			struct vpa_loc l2 = vpa_node_loc(ctx->file, k ? k : an);
			return vpa_fail(err, VPA_EINPUT, &l2, "n_star (%lld) must not exceed n (%lld)", ns,
					n);
		}
	}
	if (sim) {
		long long d = vpa_cfg_int(sim, &sim_schema, "dim");
		long long rs = vpa_cfg_int(sim, &sim_schema, "spk_rank");
		if (rs >= d) {
			const struct vpa_ynode *k = vpa_ymap_key(sim, "spk_rank");
			struct vpa_loc l2 = vpa_node_loc(ctx->file, k ? k : sim);
			return vpa_fail(err, VPA_EINPUT, &l2,
					"spk_rank (%lld) must be below dim (%lld)", rs, d);
		}
	}
	const struct vpa_ynode *be = vpa_ymap_get(cfg, "backend");
	if (!strcmp(source, "simulate")) {
		long long d = vpa_cfg_int(sim, &sim_schema, "dim");
		long long ld = vpa_cfg_int(be, &backend_schema, "lda_dim");
		if (ld >= d) {
			const struct vpa_ynode *k = be ? vpa_ymap_key(be, "lda_dim") : NULL;
			struct vpa_loc l2 = vpa_node_loc(ctx->file, k ? k : cfg);
			return vpa_fail(err, VPA_EINPUT, &l2,
					"backend lda_dim (%lld) must be below the embedding dimension (%lld)",
					ld, d);
		}
	}
	return 0;
}

/* ---- helpers ----------------------------------------------------------------- */

void vpa_anon_trials_release(struct vpa_anon_trials *t)
{
	free(t->e);
	free(t->t);
	free(t->tar);
	memset(t, 0, sizeof(*t));
}

void vpa_anon_make_trials(const struct vpa_embset *enroll, const struct vpa_embset *trial,
			  struct vpa_anon_trials *out)
{
	size_t cap = 16, n = 0;
	memset(out, 0, sizeof(*out));
	out->e = xmalloc(cap * sizeof(uint32_t));
	out->t = xmalloc(cap * sizeof(uint32_t));
	out->tar = xmalloc(cap);
	for (size_t s = 0; s < enroll->n_spk; s++) {
		char ge = enroll->gender ? enroll->gender[s] : 0;
		for (size_t i = 0; i < trial->n; i++) {
			char gt = vpa_embset_utt_gender(trial, i);
			if (ge && gt && ge != gt)
				continue;
			if (n == cap) {
				cap *= 2;
				out->e = xrealloc(out->e, xmul(cap, sizeof(uint32_t)));
				out->t = xrealloc(out->t, xmul(cap, sizeof(uint32_t)));
				out->tar = xrealloc(out->tar, cap);
			}
			out->e[n] = (uint32_t)s;
			out->t[n] = (uint32_t)i;
			out->tar[n] = !strcmp(enroll->spk_id[s], trial->spk_id[trial->spk[i]]);
			n++;
		}
	}
	out->n = n;
}

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

static void read_anon_cfg(const struct vpa_ynode *an, struct vpa_anon_cfg *c)
{
	vpa_anon_cfg_init(c);
	c->distance = vpa_anon_parse("distance", vpa_cfg_str(an, &anon_schema, "distance"));
	c->proximity = vpa_anon_parse("proximity", vpa_cfg_str(an, &anon_schema, "proximity"));
	c->gender = vpa_anon_parse("gender", vpa_cfg_str(an, &anon_schema, "gender"));
	c->assignment = vpa_anon_parse("assignment", vpa_cfg_str(an, &anon_schema, "assignment"));
	c->n = (size_t)vpa_cfg_int(an, &anon_schema, "n");
	c->n_star = (size_t)vpa_cfg_int(an, &anon_schema, "n_star");
	c->ap.damping = vpa_cfg_num(an, &anon_schema, "ap_damping");
	c->ap.max_iter = (int)vpa_cfg_int(an, &anon_schema, "ap_max_iter");
	c->ap.conv_iter = (int)vpa_cfg_int(an, &anon_schema, "ap_conv_iter");
}

static void read_backend_cfg(const struct vpa_ynode *be, struct vpa_backend_cfg *b)
{
	vpa_backend_cfg_init(b);
	b->lda_dim = (size_t)vpa_cfg_int(be, &backend_schema, "lda_dim");
	b->scoring = !strcmp(vpa_cfg_str(be, &backend_schema, "scoring"), "cosine") ? VPA_SCORE_COSINE
										    : VPA_SCORE_PLDA;
	b->length_norm = vpa_cfg_bool(be, &backend_schema, "length_norm");
	b->plda_norm = vpa_cfg_bool(be, &backend_schema, "plda_normalize_length") ? VPA_PLDA_NORM_KALDI
										   : VPA_PLDA_NORM_NONE;
	b->em_iters = (int)vpa_cfg_int(be, &backend_schema, "em_iters");
}

/*
 * The informed attacker's pseudo-speaker map for `set`: each utterance gets
 * the user's pseudo-speaker of its speaker (speaker level), or of the
 * speaker's trial utterance number (j mod count) (utterance level).
 */
static int informed_map(const struct vpa_anon_result *user, const struct vpa_embset *trial,
			const struct vpa_embset *set, int spk_level, struct vpa_anon_result *out,
			struct vpa_err *err)
{
	memset(out, 0, sizeof(*out));
	out->n_pseudo = user->n_pseudo;
	out->d = user->d;
	out->pseudo = user->pseudo; /* borrowed: only pseudo and of_utt are used */
	out->of_utt = xmalloc(xmul(set->n ? set->n : 1, sizeof(uint32_t)));
	uint32_t *seen = xcalloc(set->n_spk ? set->n_spk : 1, sizeof(uint32_t));
	for (size_t i = 0; i < set->n; i++) {
		const char *spk = set->spk_id[set->spk[i]];
		long ts = vpa_embset_find_spk(trial, spk);
		if (ts < 0) {
			free(seen);
			free(out->of_utt);
			out->of_utt = NULL;
			return vpa_fail(err, VPA_EINPUT, NULL,
					"speaker '%s' has no trial utterance: no pseudo-speaker to inform "
					"the attacker of", spk);
		}
		if (spk_level) {
			out->of_utt[i] = (uint32_t)ts;
		} else {
			size_t cnt = 0, want = seen[set->spk[i]]++, pick = 0;
			for (size_t r = 0; r < trial->n; r++)
				if (trial->spk[r] == (uint32_t)ts)
					cnt++;
			want %= cnt;
			for (size_t r = 0; r < trial->n; r++)
				if (trial->spk[r] == (uint32_t)ts && want-- == 0) {
					pick = r;
					break;
				}
			out->of_utt[i] = user->of_utt[pick];
		}
	}
	free(seen);
	return 0;
}

static void set_info(struct vpa_json *info, const char *name, const struct vpa_embset *es)
{
	if (!es->n)
		return;
	struct vpa_json *o = vpa_json_obj();
	vpa_json_set_num(o, "utterances", (double)es->n);
	vpa_json_set_num(o, "speakers", (double)es->n_spk);
	if (es->gender) { /* speakers by gender, where spk2gender gave it (the report's column) */
		size_t nf = 0, nm = 0;
		for (size_t s = 0; s < es->n_spk; s++) {
			nf += es->gender[s] == 'f';
			nm += es->gender[s] == 'm';
		}
		vpa_json_set_num(o, "female", (double)nf);
		vpa_json_set_num(o, "male", (double)nm);
	}
	vpa_json_set_num(o, "dim", (double)es->d);
	vpa_json_set(info, name, o);
}

static void anon_info(struct vpa_json *info, const struct vpa_anon_cfg *c)
{
	struct vpa_json *o = vpa_json_obj();
	vpa_json_set_str(o, "distance", vpa_anon_name("distance", c->distance));
	vpa_json_set_str(o, "proximity", vpa_anon_name("proximity", c->proximity));
	vpa_json_set_str(o, "gender", vpa_anon_name("gender", c->gender));
	vpa_json_set_str(o, "assignment", vpa_anon_name("assignment", c->assignment));
	vpa_json_set_num(o, "n", (double)c->n);
	vpa_json_set_num(o, "n_star", (double)c->n_star);
	vpa_json_set(info, "anonymiser", o);
}

static uint64_t target_seed(uint64_t seed, const char *id)
{
	char name[300];
	struct vpa_rng r;
	snprintf(name, sizeof(name), "target/%s", id);
	vpa_rng_split(&r, seed, name);
	return vpa_rng_u64(&r);
}

/* ---- simulate ------------------------------------------------------------------ */

static int build_sim(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg, struct vpa_target *t,
		     struct vpa_anon_target *a, struct vpa_err *err)
{
	const struct vpa_ynode *sm = vpa_ymap_get(cfg, "simulate");
	struct vpa_sim_cfg sc;
	struct vpa_anon_cfg ac;
	struct vpa_anonymiser *an = NULL;
	struct vpa_embset pool, test;
	struct vpa_anon_result r;
	int rc = 0;
	vpa_embset_init(&pool);
	vpa_embset_init(&test);
	memset(&r, 0, sizeof(r));
	vpa_sim_cfg_init(&sc);
#define SN(k) sc.k = vpa_cfg_num(sm, &sim_schema, #k)
#define SI(k) sc.k = (size_t)vpa_cfg_int(sm, &sim_schema, #k)
	SI(dim);
	SI(spk_rank);
	SI(utt_rank);
	SI(synth_rank);
	SN(spk_scale);
	SN(spk_decay);
	SN(utt_scale);
	SN(noise);
	SN(gender_sep);
	SN(tau);
	SN(dur_mean);
	SN(dur_sigma);
	SN(leakage);
	SN(synth_noise);
	SN(synth_gain);
#undef SN
#undef SI
	size_t n_train = (size_t)vpa_cfg_int(sm, &sim_schema, "train_speakers");
	size_t u_train = (size_t)vpa_cfg_int(sm, &sim_schema, "train_utts");
	size_t n_pool = (size_t)vpa_cfg_int(sm, &sim_schema, "pool_speakers");
	size_t u_pool = (size_t)vpa_cfg_int(sm, &sim_schema, "pool_utts");
	size_t n_test = (size_t)vpa_cfg_int(sm, &sim_schema, "test_speakers");
	size_t u_enr = (size_t)vpa_cfg_int(sm, &sim_schema, "enroll_utts");
	size_t u_tri = (size_t)vpa_cfg_int(sm, &sim_schema, "trial_utts");
	size_t n_pop = (size_t)vpa_cfg_int(sm, &sim_schema, "population");
	read_anon_cfg(vpa_ymap_get(cfg, "anonymiser"), &ac);
	uint64_t seed = target_seed(ctx->seed, t->id);

	a->sim = vpa_sim_new(&sc, seed);
	vpa_sim_make_set(a->sim, "train", n_train, u_train, &a->train);
	vpa_sim_make_set(a->sim, "pool", n_pool, u_pool, &pool);
	vpa_sim_make_set(a->sim, "test", n_test, u_enr + u_tri, &test);
	/* the first enroll_utts utterances of each test speaker enrol, the rest are trials */
	size_t *ei = xmalloc(xmul(test.n, sizeof(size_t))), *ti = xmalloc(xmul(test.n, sizeof(size_t)));
	size_t ne = 0, nt = 0;
	for (size_t i = 0; i < test.n; i++) {
		if (i % (u_enr + u_tri) < u_enr)
			ei[ne++] = i;
		else
			ti[nt++] = i;
	}
	vpa_embset_subset_rows(&test, ei, ne, &a->enroll);
	vpa_embset_subset_rows(&test, ti, nt, &a->trial);
	free(ei);
	free(ti);

	if (!(an = vpa_anonymiser_new(&pool, &ac, err))) {
		rc = err->status;
		goto out;
	}
	/* the user's anonymisation of the published trials */
	if ((rc = vpa_anonymise(an, &a->trial, seed, "user", &a->trial_pseudo, err)))
		goto out;
	vpa_sim_anon_set(a->sim, &a->trial, &a->trial_pseudo, 0, "user", &a->trial_anon);
	/* the attacker's own anonymisation of enrolment and training data */
	if ((rc = vpa_anonymise(an, &a->enroll, seed, "attacker", &r, err)))
		goto out;
	vpa_sim_anon_set(a->sim, &a->enroll, &r, 0, "attacker", &a->enroll_anon);
	vpa_anon_result_release(&r);
	if ((rc = vpa_anonymise(an, &a->train, seed, "attacker", &r, err)))
		goto out;
	vpa_sim_anon_set(a->sim, &a->train, &r, 0, "attacker", &a->train_anon);
	vpa_anon_result_release(&r);
	/* informed: the enrolment re-synthesised with the trial speakers' pseudo-speakers */
	if ((rc = informed_map(&a->trial_pseudo, &a->trial, &a->enroll,
			       ac.assignment == VPA_ANON_SPEAKER, &r, err)))
		goto out;
	vpa_sim_anon_set(a->sim, &a->enroll, &r, 0, "informed", &a->enroll_informed);
	free(r.of_utt);
	memset(&r, 0, sizeof(r));
	if (n_pop) {
		vpa_sim_make_set(a->sim, "pop", n_pop, u_enr, &a->pop);
		if ((rc = vpa_anonymise(an, &a->pop, seed, "attacker", &r, err)))
			goto out;
		vpa_sim_anon_set(a->sim, &a->pop, &r, 0, "attacker", &a->pop_anon);
		vpa_anon_result_release(&r);
		if ((rc = vpa_anonymise(an, &a->pop, seed, "user", &r, err)))
			goto out;
		vpa_sim_anon_set(a->sim, &a->pop, &r, 0, "informed", &a->pop_informed);
		vpa_anon_result_release(&r);
	}
	vpa_anon_make_trials(&a->enroll, &a->trial, &a->trials);

	struct vpa_json *si = vpa_json_obj();
	vpa_json_set_num(si, "dim", (double)sc.dim);
	vpa_json_set_num(si, "leakage", sc.leakage);
	vpa_json_set_num(si, "synth_noise", sc.synth_noise);
	vpa_json_set(t->info, "simulation", si);
	set_info(t->info, "pool", &pool);
out:
	vpa_anon_result_release(&r);
	vpa_anonymiser_free(an);
	vpa_embset_release(&pool);
	vpa_embset_release(&test);
	if (!rc)
		anon_info(t->info, &ac);
	return rc;
}

/* ---- import -------------------------------------------------------------------- */

/* A set given as audio: embedded with the extractor. */
static int audio_set(struct vpa_run_ctx *ctx, const struct vpa_ynode *m, const char *role,
		     int need_gender, const struct vpa_embedder *e, const struct vpa_embed_opts *o,
		     struct vpa_embset *out, struct vpa_err *err)
{
	char *p = vpa_path_join(ctx->dir, vpa_cfg_str(m, &set_schema, "audio"));
	int rc = vpa_embset_from_audio_with(p, e, o, out, err);
	for (size_t s = 0; !rc && need_gender && s < out->n_spk; s++)
		if (!out->gender || !out->gender[s])
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "%s/spk2gender: no gender for speaker '%s' (needed for the "
				      "same-gender trials of set '%s')",
				      p, out->spk_id[s], role);
	if (rc) {
		vpa_embset_release(out);
		vpa_embset_init(out);
	}
	free(p);
	return rc;
}

static int import_set(struct vpa_run_ctx *ctx, const struct vpa_ynode *imp, const char *role,
		      int need_gender, const struct vpa_embedder *e, const struct vpa_embed_opts *o,
		      struct vpa_embset *out, struct vpa_err *err)
{
	const struct vpa_ynode *m = vpa_ymap_get(imp, role);
	if (!m)
		return 0;
	if (vpa_ymap_get(m, "audio"))
		return audio_set(ctx, m, role, need_gender, e, o, out, err);
	char *p[5] = {NULL};
	const char *k[5] = {"vectors", "ids", "utt2spk", "spk2gender", "utt2dur"};
	for (int i = 0; i < 5; i++) {
		const char *v = vpa_cfg_str(m, &set_schema, k[i]);
		p[i] = v ? vpa_path_join(ctx->dir, v) : NULL;
	}
	struct vpa_embset_src src = {p[0], p[1], p[2], p[3], p[4], need_gender};
	int rc = vpa_embset_import(&src, out, err);
	for (int i = 0; i < 5; i++)
		free(p[i]);
	if (rc) {
		char old[sizeof(err->msg)];
		memcpy(old, err->msg, sizeof(old));
		int st = err->status;
		vpa_err_init(err);
		struct vpa_loc loc = vpa_node_loc(ctx->file, m);
		/* messages of the readers already name the file and line */
		rc = vpa_fail(err, st, strchr(old, ':') ? NULL : &loc, "%s%s%s", old,
			      strchr(old, ':') ? "" : " in set ", strchr(old, ':') ? "" : role);
	}
	return rc;
}

/* Rows of `src` reordered to the utterances of `ref` (all must exist). */
static int align_rows(const struct vpa_embset *ref, const struct vpa_embset *src,
		      const char *what, struct vpa_embset *out, struct vpa_err *err)
{
	size_t *idx = xmalloc(xmul(ref->n ? ref->n : 1, sizeof(size_t)));
	for (size_t i = 0; i < ref->n; i++) {
		long r = vpa_embset_find_utt(src, ref->utt[i]);
		if (r < 0) {
			free(idx);
			return vpa_fail(err, VPA_EINPUT, NULL, "%s: no embedding for utterance '%s'", what,
					ref->utt[i]);
		}
		idx[i] = (size_t)r;
	}
	struct vpa_embset tmp;
	vpa_embset_init(&tmp);
	vpa_embset_subset_rows(src, idx, ref->n, &tmp);
	free(idx);
	vpa_embset_release(out);
	*out = tmp;
	return 0;
}

/* Speakers of `src` in the order of `ref`'s speakers (all must exist). */
static int align_spk(const struct vpa_embset *ref, struct vpa_embset *set, const char *what,
		     struct vpa_err *err)
{
	if (!set->n)
		return 0;
	uint32_t *idx = xmalloc(xmul(ref->n_spk ? ref->n_spk : 1, sizeof(uint32_t)));
	for (size_t s = 0; s < ref->n_spk; s++) {
		long k = vpa_embset_find_spk(set, ref->spk_id[s]);
		if (k < 0) {
			free(idx);
			return vpa_fail(err, VPA_EINPUT, NULL, "%s: no utterance of enrolment speaker '%s'",
					what, ref->spk_id[s]);
		}
		idx[s] = (uint32_t)k;
	}
	struct vpa_embset tmp;
	vpa_embset_init(&tmp);
	vpa_embset_subset_spk(set, idx, ref->n_spk, &tmp);
	free(idx);
	/* genders of the reference (the anonymised copies may lack spk2gender) */
	if (ref->gender)
		for (size_t s = 0; s < ref->n_spk; s++)
			if (ref->gender[s])
				vpa_embset_set_gender(&tmp, (uint32_t)s, ref->gender[s]);
	vpa_embset_release(set);
	*set = tmp;
	return 0;
}

/* The `enrolls` list (path relative to the scenario; NULL: keep all) applied
 * to each enrolment set of sets (the originals and their anonymised copies;
 * NULL-terminated, empty sets skipped). */
static int select_enrolls(struct vpa_run_ctx *ctx, const char *enrolls,
			  struct vpa_embset *const *sets, struct vpa_err *err)
{
	if (!enrolls)
		return 0;
	char *path = vpa_path_join(ctx->dir, enrolls);
	int rc = 0;
	for (size_t i = 0; sets[i] && !rc; i++) {
		if (!sets[i]->n)
			continue;
		struct vpa_embset tmp;
		vpa_embset_init(&tmp);
		if ((rc = vpa_embset_select_list(sets[i], path, &tmp, err))) {
			vpa_embset_release(&tmp);
			break;
		}
		vpa_embset_release(sets[i]);
		*sets[i] = tmp;
	}
	free(path);
	return rc;
}

/*
 * The VoicePrivacy trials lists (paths relative to the scenario; several are
 * used together, a trial named twice is an error naming both lines), or
 * every same-gender pair when there is none.
 */
static int read_trials(struct vpa_run_ctx *ctx, const char *const *trials, size_t n_files,
		       struct vpa_anon_target *a, struct vpa_err *err)
{
	if (!n_files) {
		vpa_anon_make_trials(&a->enroll, &a->trial, &a->trials);
		return 0;
	}
	struct vpa_kaldi_trials *kt = xcalloc(n_files, sizeof(*kt));
	size_t total = 0;
	int rc = 0;
	for (size_t f = 0; f < n_files; f++)
		vpa_kaldi_trials_init(&kt[f]);
	for (size_t f = 0; f < n_files && !rc; f++) {
		char *p = vpa_path_join(ctx->dir, trials[f]);
		rc = vpa_kaldi_read_trials(p, &kt[f], err);
		free(p);
		total += kt[f].n;
	}
	struct vpa_anon_trials *T = &a->trials;
	if (!rc) {
		T->e = xmalloc(xmul(total ? total : 1, sizeof(uint32_t)));
		T->t = xmalloc(xmul(total ? total : 1, sizeof(uint32_t)));
		T->tar = xmalloc(total ? total : 1);
		T->n = 0;
	}
	/* "ENROLL_INDEX TEST_ROW" -> the trial's index over all files (keys are
	 * borrowed by the map: one fixed-width slot each) */
	enum { SLOT = 24 };
	char *keys = xmalloc(xmul(total ? total : 1, SLOT));
	size_t *file_of = xmalloc(xmul(total ? total : 1, sizeof(size_t)));
	size_t *row_of = xmalloc(xmul(total ? total : 1, sizeof(size_t)));
	struct vpa_strmap seen;
	vpa_strmap_init(&seen);
	for (size_t f = 0; f < n_files && !rc; f++) {
		const struct vpa_kaldi_trials *k = &kt[f];
		rc = vpa_embset_resolve_trials(k, &a->enroll, &a->trial, T->e + T->n, T->t + T->n,
					       err);
		for (size_t i = 0; i < k->n && !rc; i++) {
			size_t j = T->n + i;
			char *key = keys + j * SLOT;
			uint32_t j0;
			snprintf(key, SLOT, "%u %u", T->e[j], T->t[j]);
			file_of[j] = f;
			row_of[j] = i;
			if (vpa_strmap_put(&seen, key, (uint32_t)j, &j0)) {
				struct vpa_loc loc = {k->name, k->line[i], 0};
				rc = vpa_fail(err, VPA_EINPUT, &loc,
					      "the trial '%s %s' is also at %s:%ld (a trial counted twice "
					      "would weigh twice in every metric)", k->enroll[i],
					      k->test[i], kt[file_of[j0]].name,
					      kt[file_of[j0]].line[row_of[j0]]);
			}
		}
		if (!rc) {
			memcpy(T->tar + T->n, k->target, k->n);
			T->n += k->n;
		}
	}
	vpa_strmap_release(&seen);
	free(keys);
	free(file_of);
	free(row_of);
	for (size_t f = 0; f < n_files; f++)
		vpa_kaldi_trials_release(&kt[f]);
	free(kt);
	return rc;
}

/*
 * source audio: the enrolment selection (enrolls), every anonymised set in
 * its original's order (speakers for enrolment, rows for trials), the trials.
 */
static int audio_sets(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg,
		      struct vpa_anon_target *a, struct vpa_err *err)
{
	const struct vpa_ynode *au = vpa_ymap_get(cfg, "audio");
	const char *enrolls = vpa_cfg_str(au, &vpa_anon_audio_schema, "enrolls");
	struct vpa_embset *const en[] = {&a->enroll, &a->enroll_anon, &a->enroll_semi,
					 &a->enroll_informed, NULL};
	int rc = select_enrolls(ctx, enrolls, en, err);
	if (rc)
		return rc;
	if ((rc = align_spk(&a->enroll, &a->enroll_anon, "enroll_anon", err)) ||
	    (rc = align_spk(&a->enroll, &a->enroll_semi, "enroll_anon", err)) ||
	    (rc = align_spk(&a->enroll, &a->enroll_informed, "enroll_informed", err)))
		return rc;
	if (a->trial_anon.n &&
	    (rc = align_rows(&a->trial, &a->trial_anon, "trial_anon", &a->trial_anon, err)))
		return rc;
	if (a->trial_semi.n &&
	    (rc = align_rows(&a->trial, &a->trial_semi, "trial_anon", &a->trial_semi, err)))
		return rc;
	size_t n;
	char **files = vpa_anon_audio_trials_files(ctx->dir, au, &n);
	rc = read_trials(ctx, (const char *const *)files, n, a, err);
	vpa_anon_audio_trials_files_free(files, n);
	return rc;
}

static int build_import(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg,
			struct vpa_target *t, struct vpa_anon_target *a, struct vpa_err *err)
{
	const struct vpa_ynode *imp = vpa_ymap_get(cfg, "import");
	const char *trials = vpa_cfg_str(imp, &import_schema, "trials");
	const char *enrolls = vpa_cfg_str(imp, &import_schema, "enrolls");
	struct vpa_embset pool;
	struct vpa_embedder *emb = NULL;
	struct vpa_embed_opts eo;
	int rc = 0;
	vpa_embed_opts_init(&eo, VPA_FEAT_FBANK);
	vpa_embset_init(&pool);
	struct {
		const char *role;
		struct vpa_embset *es;
		int need_gender;
	} roles[] = {
		{"train", &a->train, 0},
		{"train_anon", &a->train_anon, 0},
		{"pool", &pool, 1},
		{"enroll", &a->enroll, trials == NULL},
		{"enroll_anon", &a->enroll_anon, 0},
		{"enroll_informed", &a->enroll_informed, 0},
		{"trial", &a->trial, trials == NULL},
		{"trial_anon", &a->trial_anon, 0},
		{"population", &a->pop, 0},
		{"population_anon", &a->pop_anon, 0},
		{"population_informed", &a->pop_informed, 0},
	};
	size_t nr = sizeof(roles) / sizeof(roles[0]);
	const struct vpa_ynode *ex = vpa_ymap_get(imp, "extractor");
	if (ex && (rc = vpa_anon_onnx_new(ctx->file, ctx->dir, ex, ctx->threads, &eo, &emb, err)))
		goto out;
	for (size_t i = 0; i < nr; i++)
		if ((rc = import_set(ctx, imp, roles[i].role, roles[i].need_gender, emb, &eo,
				     roles[i].es, err)))
			goto out;
	/* one dimension for all */
	for (size_t i = 1; i < nr; i++)
		if (roles[i].es->n && roles[i].es->d != a->train.d) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "dimension mismatch: set '%s' has dimension %zu, 'train' has %zu",
				      roles[i].role, roles[i].es->d, a->train.d);
			goto out;
		}
	size_t lda = (size_t)vpa_cfg_int(vpa_ymap_get(cfg, "backend"), &backend_schema, "lda_dim");
	if (lda >= a->train.d) {
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "backend lda_dim (%zu) must be below the embedding dimension (%zu)", lda,
			      a->train.d);
		goto out;
	}
	{
		struct vpa_embset *const en[] = {&a->enroll, &a->enroll_anon, &a->enroll_informed,
						 NULL};
		if ((rc = select_enrolls(ctx, enrolls, en, err)))
			goto out;
	}
	if ((rc = align_spk(&a->enroll, &a->enroll_anon, "enroll_anon", err)) ||
	    (rc = align_spk(&a->enroll, &a->enroll_informed, "enroll_informed", err)) ||
	    (rc = align_spk(&a->pop, &a->pop_anon, "population_anon", err)) ||
	    (rc = align_spk(&a->pop, &a->pop_informed, "population_informed", err)))
		goto out;
	if (a->trial_anon.n &&
	    (rc = align_rows(&a->trial, &a->trial_anon, "trial_anon", &a->trial_anon, err)))
		goto out;
	if ((rc = read_trials(ctx, &trials, trials ? 1 : 0, a, err)))
		goto out;
	/* the anonymiser on the imported pool: pseudo-speakers for the user's synthesiser */
	const struct vpa_ynode *an = vpa_ymap_get(cfg, "anonymiser");
	if (pool.n) {
		struct vpa_anon_cfg ac;
		read_anon_cfg(an, &ac);
		struct vpa_anonymiser *A = vpa_anonymiser_new(&pool, &ac, err);
		if (!A) {
			rc = err->status;
			goto out;
		}
		rc = vpa_anonymise(A, &a->trial, target_seed(ctx->seed, t->id), "user",
				   &a->trial_pseudo, err);
		vpa_anonymiser_free(A);
		if (rc)
			goto out;
		anon_info(t->info, &ac);
		set_info(t->info, "pool", &pool);
	}
out:
	/* kept for sets given as audio in the attacks (slicing) */
	a->extractor = emb;
	a->extractor_opts = eo;
	vpa_embset_release(&pool);
	return rc;
}

static int build(struct vpa_run_ctx *ctx, const struct vpa_ynode *cfg, struct vpa_target *out,
		 struct vpa_err *err)
{
	struct vpa_anon_target *a = xcalloc(1, sizeof(*a));
	init_sets(a);
	out->data = a;
	out->info = vpa_json_obj();
	int sim = !strcmp(vpa_cfg_str(cfg, &schema, "source"), "simulate");
	out->simulated = a->simulated = sim;
	read_backend_cfg(vpa_ymap_get(cfg, "backend"), &a->backend);
	{ /* TRANSITION (issue 27): until build reads its options */
		struct vpa_anon_opts *o = vpa_opts_new(&schema, cfg);
		a->trials_name = vpa_anon_trials_name(o);
		vpa_opts_free(&schema, o);
	}
	int audio = !strcmp(vpa_cfg_str(cfg, &schema, "source"), "audio");
	int rc = sim     ? build_sim(ctx, cfg, out, a, err)
		 : audio ? vpa_anon_build_audio(ctx, cfg, out, a, err)
			 : build_import(ctx, cfg, out, a, err);
	if (!rc && audio) {
		rc = audio_sets(ctx, cfg, a, err);
		/* a synthetic corpus is labelled like a simulation in every report */
		if (vpa_ymap_get(vpa_ymap_get(cfg, "audio"), "synthetic"))
			out->simulated = 1;
	}
	if (rc)
		return rc;
	const char *pout = vpa_cfg_str(vpa_ymap_get(cfg, "anonymiser"), &anon_schema, "pseudo_out");
	if (pout) {
		if (!a->trial_pseudo.n_pseudo)
			return vpa_fail(err, VPA_EINPUT, NULL,
					"anonymiser pseudo_out needs the anonymisation pool (import: pool)");
		if ((rc = vpa_anon_write_ark(&a->trial_pseudo, pout, err)))
			return rc;
		vpa_json_set_str(out->info, "pseudo_out", pout);
	}
	set_info(out->info, "train", &a->train);
	set_info(out->info, "train_anon", &a->train_anon);
	set_info(out->info, "enroll", &a->enroll);
	set_info(out->info, "enroll_anon", &a->enroll_anon);
	set_info(out->info, "enroll_informed", &a->enroll_informed);
	set_info(out->info, "trial", &a->trial);
	set_info(out->info, "trial_anon", &a->trial_anon);
	set_info(out->info, "population", &a->pop);
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
