/*
 * targets/fl_am.c - target kind `fl_acoustic_models`: a global acoustic
 * model W_g and personalised models W_s (each W_g fine-tuned on one
 * speaker's data, as a device does in federated learning), with an
 * Indicator data set, for the footprint attacks A1 and A2 of Tomashenko et
 * al., ICASSP 2022.  Built by the simulator (targets/sim_am.c), trained from
 * audio (targets/fl_am_audio.c) or imported:
 * model folders (learn/NN.md) plus Indicator features, or precomputed
 * activations.  targets/README.md documents the layouts.
 *
 * This file holds the kind: its keys, their cross-checks and the build,
 * which hands the options to the simulator or to the import and dumps
 * (targets/fl_am_files.c); the built target and its activations are in
 * targets/fl_am_acts.c.
 */
#include "base/dist.h"
#include "targets/fl_am.h"
#include "audio/audio.h"
#include "formats/kaldi.h"
#include "asr/ctc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- schema ----------------------------------------------------------------- */

#define INF INFINITY
static const struct vpa_key sim_keys[] = {
	{"feat_dim", VPA_K_INT, 0, "40", 2, 4096, 0, NULL, NULL, "40", "acoustic feature dimension",
	 VPA_AT(struct vpa_flam_sim_opts, feat_dim), VPA_MARK(struct vpa_flam_sim_opts, feat_dim_at)},
	{"states", VPA_K_INT, 0, "32", 2, 100000, 0, NULL, NULL, "48",
	 "phone states: the acoustic model's output classes",
	 VPA_AT(struct vpa_flam_sim_opts, states), VPA_MARK(struct vpa_flam_sim_opts, states_at)},
	{"spk_vec_dim", VPA_K_INT, 0, "0", 0, 4096, 0, NULL, NULL, "10",
	 "dimension of a speaker vector appended to every input frame (an i-vector stand-in; 0 = "
	 "none)",
	 VPA_AT(struct vpa_flam_sim_opts, spk_vec_dim), VPA_MARK(struct vpa_flam_sim_opts, spk_vec_dim_at)},
	{"spk_affine", VPA_K_NUM, 0, "0.7", 0, INF, 0, NULL, NULL, "0.5",
	 "speaker affine map A_s = I + spk_affine G / sqrt(feat_dim), G standard normal",
	 VPA_AT(struct vpa_flam_sim_opts, spk_affine), VPA_MARK(struct vpa_flam_sim_opts, spk_affine_at)},
	{"spk_bias", VPA_K_NUM, 0, "1", 0, INF, 0, NULL, NULL, "1",
	 "standard deviation of the speaker bias b_s",
	 VPA_AT(struct vpa_flam_sim_opts, spk_bias), VPA_MARK(struct vpa_flam_sim_opts, spk_bias_at)},
	{"noise", VPA_K_NUM, 0, "1", 0, INF, 0, NULL, NULL, "1", "frame noise standard deviation",
	 VPA_AT(struct vpa_flam_sim_opts, noise), VPA_MARK(struct vpa_flam_sim_opts, noise_at)},
	{"spk_vec_noise", VPA_K_NUM, 0, "0.1", 0, INF, 0, NULL, NULL, "0.1",
	 "per-utterance noise of the speaker vector",
	 VPA_AT(struct vpa_flam_sim_opts, spk_vec_noise), VPA_MARK(struct vpa_flam_sim_opts, spk_vec_noise_at)},
	{"utt_frames", VPA_K_INT, 0, "100", 2, 100000, 0, NULL, NULL, "300",
	 "mean frames per utterance (uniform between half and 1.5 times)",
	 VPA_AT(struct vpa_flam_sim_opts, utt_frames), VPA_MARK(struct vpa_flam_sim_opts, utt_frames_at)},
	{"train_speakers", VPA_K_INT, 0, "100", 1, 1000000, 0, NULL, NULL, "880",
	 "Train-G speakers (the global model's training data)",
	 VPA_AT(struct vpa_flam_sim_opts, train_speakers), VPA_MARK(struct vpa_flam_sim_opts, train_speakers_at)},
	{"train_utts", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "20",
	 "utterances per Train-G speaker",
	 VPA_AT(struct vpa_flam_sim_opts, train_utts), VPA_MARK(struct vpa_flam_sim_opts, train_utts_at)},
	{"part1_speakers", VPA_K_INT, 0, "24", 2, 1000000, 0, NULL, NULL, "736",
	 "Part-1 speakers (personalised models the A2 attacker trains on)",
	 VPA_AT(struct vpa_flam_sim_opts, part1_speakers), VPA_MARK(struct vpa_flam_sim_opts, part1_speakers_at)},
	{"part2_speakers", VPA_K_INT, 0, "24", 2, 1000000, 0, NULL, NULL, "300",
	 "Part-2 speakers (personalised models attacked)",
	 VPA_AT(struct vpa_flam_sim_opts, part2_speakers), VPA_MARK(struct vpa_flam_sim_opts, part2_speakers_at)},
	{"two_models", VPA_K_NUM, 0, "0.8", 0, 1, 0, NULL, NULL, "0.8",
	 "fraction of Part-1/Part-2 speakers with two personalised models on disjoint data",
	 VPA_AT(struct vpa_flam_sim_opts, two_models), VPA_MARK(struct vpa_flam_sim_opts, two_models_at)},
	{"adapt_utts", VPA_K_INT, 0, "30", 1, 100000, 0, NULL, NULL, "10",
	 "adaptation utterances per personalised model",
	 VPA_AT(struct vpa_flam_sim_opts, adapt_utts), VPA_MARK(struct vpa_flam_sim_opts, adapt_utts_at)},
	{"heldout_utts", VPA_K_INT, 0, "3", 1, 100000, 0, NULL, NULL, "5",
	 "held-out utterances per speaker for the utility (frame accuracy)",
	 VPA_AT(struct vpa_flam_sim_opts, heldout_utts), VPA_MARK(struct vpa_flam_sim_opts, heldout_utts_at)},
	{"indicator_speakers", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "32",
	 "speakers of the Indicator set (none of them in Train-G, Part-1 or Part-2)",
	 VPA_AT(struct vpa_flam_sim_opts, indicator_speakers), VPA_MARK(struct vpa_flam_sim_opts, indicator_speakers_at)},
	{"indicator_utts", VPA_K_INT, 0, "4", 1, 100000, 0, NULL, NULL, "10",
	 "utterances per Indicator speaker",
	 VPA_AT(struct vpa_flam_sim_opts, indicator_utts), VPA_MARK(struct vpa_flam_sim_opts, indicator_utts_at)},
	{"hidden_layers", VPA_K_INT, 0, "4", 1, 64, 0, NULL, NULL, "6",
	 "TDNN hidden layers (contexts {-2..2}, {-1,0,1}, {-1,0,1}, {-3,0,3}, {-3,0,3}, {0}, "
	 "then {0}), each followed by a ReLU",
	 VPA_AT(struct vpa_flam_sim_opts, hidden_layers), VPA_MARK(struct vpa_flam_sim_opts, hidden_layers_at)},
	{"hidden_dim", VPA_K_INT, 0, "64", 1, 16384, 0, NULL, NULL, "512", "width of every hidden layer",
	 VPA_AT(struct vpa_flam_sim_opts, hidden_dim), VPA_MARK(struct vpa_flam_sim_opts, hidden_dim_at)},
	{"global_epochs", VPA_K_INT, 0, "6", 1, 10000, 0, NULL, NULL, "10",
	 "epochs of Adam over Train-G for W_g",
	 VPA_AT(struct vpa_flam_sim_opts, global_epochs), VPA_MARK(struct vpa_flam_sim_opts, global_epochs_at)},
	{"global_lr", VPA_K_NUM, 0, "0.002", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.001",
	 "Adam learning rate of W_g",
	 VPA_AT(struct vpa_flam_sim_opts, global_lr), VPA_MARK(struct vpa_flam_sim_opts, global_lr_at)},
	{"batch", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "8", "utterances per mini-batch",
	 VPA_AT(struct vpa_flam_sim_opts, batch), VPA_MARK(struct vpa_flam_sim_opts, batch_at)},
	{"adapt_epochs", VPA_K_INT, 0, "2", 1, 10000, 0, NULL, NULL, "4",
	 "epochs of SGD over a personalised model's adaptation data (all parameters fine-tuned)",
	 VPA_AT(struct vpa_flam_sim_opts, adapt_epochs), VPA_MARK(struct vpa_flam_sim_opts, adapt_epochs_at)},
	{"adapt_lr", VPA_K_NUM, 0, "0.02", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.02",
	 "SGD learning rate of the personalisation",
	 VPA_AT(struct vpa_flam_sim_opts, adapt_lr), VPA_MARK(struct vpa_flam_sim_opts, adapt_lr_at)},
	{NULL},
};
static const struct vpa_schema sim_schema = {"simulation", sim_keys, sizeof(struct vpa_flam_sim_opts)};

#define G(f) VPA_AT(struct vpa_flam_aligner_opts, f), VPA_MARK(struct vpa_flam_aligner_opts, f##_at)
static const struct vpa_key aligner_keys[] = {
	{"model", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "wav2vec2_ctc.onnx",
	 "an ONNX CTC acoustic model (as `vpaudit asr --onnx` takes: wav2vec2, HuBERT, "
	 "Conformer-CTC exports); its output tokens become the frame labels", G(model)},
	{"tokens", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "tokens.txt",
	 "its tokens file: line k is output index k", G(tokens)},
	{"text", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "corpus/all/text",
	 "the transcripts, a Kaldi `text` (`UTT WORD WORD ...`; default DATA/text): each is "
	 "spelled with the tokens (greedy longest match, normalised as the VPC: upper case, "
	 "punctuation removed) and force-aligned to the model's frames", G(text)},
	{"blank", VPA_K_INT, 0, "0", 0, 1000000, 0, NULL, NULL, "0", "the CTC blank's index",
	 G(blank)},
	{"delimiter", VPA_K_STR, 0, "|", -INF, 64, 0, NULL, NULL, "sentencepiece",
	 "the word delimiter token (`|`: one before, between and after the words, labelling "
	 "silence; `sentencepiece` for U+2581 starting each word; `none`)", G(delimiter)},
	{"input", VPA_K_ENUM, 0, "waveform", -INF, INF, 0, "waveform|features", NULL, "features",
	 "what the model takes: the waveform [1, samples] at 16 kHz scaled to [-1, 1], or "
	 "vpaudit's fbank (the defaults of `vpaudit features`)", G(input)},
	{"layout", VPA_K_ENUM, 0, "btf", -INF, INF, 0, "btf|bft", NULL, "bft",
	 "features input: [1, T, F] or [1, F, T]", G(layout)},
	{"wave_norm", VPA_K_BOOL, 0, "false", -INF, INF, 0, NULL, NULL, "true",
	 "waveform input: zero mean and unit variance per utterance (Hugging Face's "
	 "do_normalize)", G(wave_norm)},
	{NULL},
};
#undef G
static const struct vpa_schema aligner_schema = {"aligner", aligner_keys,
						 sizeof(struct vpa_flam_aligner_opts)};

#define A(f) VPA_AT(struct vpa_flam_audio_opts, f), VPA_MARK(struct vpa_flam_audio_opts, f##_at)
static const struct vpa_key audio_keys[] = {
	{"data", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "corpus/all",
	 "a Kaldi data directory of audio: wav.scp (with segments if any) and utt2spk; every "
	 "speaker is dealt to one set (Indicator, Part-1, Part-2, Train-G).  Without it: the "
	 "built-in SYNTHETIC corpus (`vpaudit synth-corpus`: espeak-ng / flite voices reading "
	 "Brown sentences) of `speakers` x `utts`, labelled from the synthesisers' own phone "
	 "timing", A(data)},
	{"ali", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "corpus/all/ali.txt",
	 "frame labels of every utterance, one phone (or state) id per feature frame, as "
	 "`ali-to-phones --per-frame=true final.mdl ark:ali.1 ark,t:-` writes them (default "
	 "DATA/ali.txt); the ids found are the model's output classes", A(ali)},
	{"aligner", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &aligner_schema,
	 "{model: w2v_ctc.onnx, tokens: tokens.txt}",
	 "instead of `ali`: frame labels from a CTC model by forced alignment of each "
	 "utterance's transcript (DATA/text); the model's tokens (characters for wav2vec2) are "
	 "the output classes, a blank frame labelled with the token before it",
	 VPA_AT(struct vpa_flam_audio_opts, aligner), VPA_MARK(struct vpa_flam_audio_opts, aligner_at)},
	{"speakers", VPA_K_INT, 0, "96", 8, 100000, 0, NULL, NULL, "120",
	 "the built-in corpus (no `data`): speakers of both genders", A(speakers)},
	{"utts", VPA_K_INT, 0, "10", 3, 10000, 0, NULL, NULL, "12",
	 "the built-in corpus: utterances per speaker", A(utts)},
	{"brown", VPA_K_STR, 0, "data/brown", -INF, INF, 0, NULL, NULL, "data/brown",
	 "the built-in corpus: the Brown corpus folder its sentences come from (relative to "
	 "the current directory)", A(brown)},
	{"features", VPA_K_ENUM, 0, "fbank", -INF, INF, 0, "fbank|mfcc", NULL, "mfcc",
	 "the acoustic features", A(features)},
	{"feature_options", VPA_K_LIST, 0, NULL, -INF, INF, 0, NULL, NULL,
	 "[--num-mel-bins=40, --cmvn=utt]",
	 "front-end options (`vpaudit features` names, `--name=value`) over the default 40 "
	 "mel bins with per-utterance mean normalisation (--cmvn=utt)", A(feature_options)},
	{"spk_vec_dim", VPA_K_INT, 0, "0", 0, 4096, 0, NULL, NULL, "32",
	 "dimension of a per-utterance vector appended to every frame, a STAND-IN for the "
	 "paper's i-vectors (not an i-vector: a fixed random projection of the utterance's "
	 "feature mean and log standard deviation before mean normalisation); 0 = none",
	 A(spk_vec_dim)},
	{"train_speakers", VPA_K_INT, 0, "0", 0, 1000000, 0, NULL, NULL, "100",
	 "Train-G speakers (the global model's training data); 0 = every speaker not in "
	 "another set", A(train_speakers)},
	{"part1_speakers", VPA_K_INT, 0, "24", 2, 1000000, 0, NULL, NULL, "40",
	 "Part-1 speakers (personalised models the A2 attacker trains on)", A(part1_speakers)},
	{"part2_speakers", VPA_K_INT, 0, "24", 2, 1000000, 0, NULL, NULL, "40",
	 "Part-2 speakers (personalised models attacked)", A(part2_speakers)},
	{"indicator_speakers", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "8",
	 "speakers of the Indicator set", A(indicator_speakers)},
	{"two_models", VPA_K_NUM, 0, "0.8", 0, 1, 0, NULL, NULL, "0.8",
	 "fraction of Part-1/Part-2 speakers with two personalised models (their adaptation "
	 "utterances split in two disjoint halves)", A(two_models)},
	{"heldout_utts", VPA_K_INT, 0, "2", 1, 100000, 0, NULL, NULL, "3",
	 "held-out utterances per Part-1/Part-2 speaker for the utility (frame accuracy); the "
	 "rest adapt its model(s)", A(heldout_utts)},
	{"indicator_utts", VPA_K_INT, 0, "4", 1, 100000, 0, NULL, NULL, "10",
	 "utterances per Indicator speaker (its first by id)", A(indicator_utts)},
	{"hidden_layers", VPA_K_INT, 0, "4", 1, 64, 0, NULL, NULL, "6",
	 "TDNN hidden layers (contexts {-2..2}, {-1,0,1}, {-1,0,1}, {-3,0,3}, {-3,0,3}, {0}, "
	 "then {0}), each followed by a ReLU", A(hidden_layers)},
	{"hidden_dim", VPA_K_INT, 0, "128", 1, 16384, 0, NULL, NULL, "512",
	 "width of every hidden layer", A(hidden_dim)},
	{"global_epochs", VPA_K_INT, 0, "8", 1, 10000, 0, NULL, NULL, "10",
	 "epochs of Adam over Train-G for W_g", A(global_epochs)},
	{"global_lr", VPA_K_NUM, 0, "0.002", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.001",
	 "Adam learning rate of W_g", A(global_lr)},
	{"batch", VPA_K_INT, 0, "8", 1, 100000, 0, NULL, NULL, "8", "utterances per mini-batch",
	 A(batch)},
	{"adapt_epochs", VPA_K_INT, 0, "10", 1, 10000, 0, NULL, NULL, "4",
	 "epochs of SGD over a personalised model's adaptation data (all parameters "
	 "fine-tuned; a speaker has a few utterances, so an epoch is one or two steps: at 3 "
	 "epochs the models hardly left W_g on the synthetic corpus, at 10 each fits its own "
	 "speaker better than others, tests/e2e/test_fl_am_synth.sh)", A(adapt_epochs)},
	{"adapt_lr", VPA_K_NUM, 0, "0.02", 0, 10, VPA_KF_OPEN_LO, NULL, NULL, "0.02",
	 "SGD learning rate of the personalisation", A(adapt_lr)},
	{NULL},
};
#undef A
static const struct vpa_schema audio_schema = {"audio", audio_keys,
					       sizeof(struct vpa_flam_audio_opts)};

static const struct vpa_key dp_keys[] = {
	{"clip", VPA_K_NUM, 0, "0", 0, INF, 0, NULL, NULL, "1",
	 "C: every released update W_s - W_g is clipped to L2 norm C (0 = no local DP)",
	 VPA_AT(struct vpa_flam_dp_opts, clip), VPA_MARK(struct vpa_flam_dp_opts, clip_at)},
	{"noise", VPA_K_NUM, 0, "0", 0, INF, 0, NULL, NULL, "0.1",
	 "noise multiplier sigma: N(0, (sigma C)^2) is added to every coordinate of the update",
	 VPA_AT(struct vpa_flam_dp_opts, noise), VPA_MARK(struct vpa_flam_dp_opts, noise_at)},
	{"delta", VPA_K_NUM, 0, "1e-5", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "1e-5",
	 "delta of the (epsilon, delta) reported per release (analytic Gaussian mechanism, "
	 "sensitivity C)",
	 VPA_AT(struct vpa_flam_dp_opts, delta), VPA_MARK(struct vpa_flam_dp_opts, delta_at)},
	{NULL},
};
static const struct vpa_schema dp_schema = {"local DP", dp_keys, sizeof(struct vpa_flam_dp_opts)};

static const struct vpa_key dpinfo_keys[] = {
	{"mechanism", VPA_K_ENUM, 1, NULL, -INF, INF, 0, "local|dp_sgd", NULL, "local",
	 "`local`: every released update W_s - W_g was clipped to L2 norm `clip` and noised with "
	 "N(0, (noise clip)^2) per coordinate (local DP per release, user-level; audited by "
	 "`a1_footprint`); `dp_sgd`: the personalisation ran DP-SGD (per-example clipping to "
	 "`clip`, Poisson sampling rate `q`, `steps` steps, noise multiplier `noise`: "
	 "example-level central DP)",
	 VPA_AT(struct vpa_flam_dpinfo_opts, mechanism), VPA_MARK(struct vpa_flam_dpinfo_opts, mechanism_at)},
	{"clip", VPA_K_NUM, 1, NULL, 0, INF, VPA_KF_OPEN_LO, NULL, NULL, "0.15",
	 "the clipping norm C (of each update, or of each example's gradient for dp_sgd)",
	 VPA_AT(struct vpa_flam_dpinfo_opts, clip), VPA_MARK(struct vpa_flam_dpinfo_opts, clip_at)},
	{"noise", VPA_K_NUM, 1, NULL, 0, INF, VPA_KF_OPEN_LO, NULL, NULL, "1.1",
	 "the noise multiplier sigma (noise std / C)",
	 VPA_AT(struct vpa_flam_dpinfo_opts, noise), VPA_MARK(struct vpa_flam_dpinfo_opts, noise_at)},
	{"delta", VPA_K_NUM, 0, "1e-5", 0, 1, VPA_KF_OPEN_LO | VPA_KF_OPEN_HI, NULL, NULL, "1e-5",
	 "the delta of the reported (epsilon, delta)",
	 VPA_AT(struct vpa_flam_dpinfo_opts, delta), VPA_MARK(struct vpa_flam_dpinfo_opts, delta_at)},
	{"steps", VPA_K_INT, 0, NULL, 1, 1000000000, 0, NULL, NULL, "1000",
	 "dp_sgd only (required there): the number of DP-SGD steps",
	 VPA_AT(struct vpa_flam_dpinfo_opts, steps), VPA_MARK(struct vpa_flam_dpinfo_opts, steps_at)},
	{"q", VPA_K_NUM, 0, NULL, 0, 1, VPA_KF_OPEN_LO, NULL, NULL, "0.01",
	 "dp_sgd only (required there): the Poisson sampling rate of each step",
	 VPA_AT(struct vpa_flam_dpinfo_opts, q), VPA_MARK(struct vpa_flam_dpinfo_opts, q_at)},
	{NULL},
};
static const struct vpa_schema dpinfo_schema = {"dp_info", dpinfo_keys,
						sizeof(struct vpa_flam_dpinfo_opts)};

static const struct vpa_key heldout_keys[] = {
	{"features", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "heldout/feats.ark",
	 "held-out features as the models take them: a folder of UTT.npy (T x input_dim) or a "
	 "Kaldi feature archive",
	 VPA_AT(struct vpa_flam_heldout_opts, features), VPA_MARK(struct vpa_flam_heldout_opts, features_at)},
	{"labels", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "heldout/labels.ark",
	 "a Kaldi vector archive of frame labels, one class id (the model's output index) per "
	 "feature frame: `UTT [ 3 3 17 ... ]` (text) or binary vectors; from a Kaldi alignment: "
	 "`ali-to-pdf final.mdl ark:ali.1 ark,t:- | sed 's/ / [ /; s/$/ ]/'`",
	 VPA_AT(struct vpa_flam_heldout_opts, labels), VPA_MARK(struct vpa_flam_heldout_opts, labels_at)},
	{"utt2spk", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "heldout/utt2spk",
	 "`UTT SPEAKER` lines: the speaker (of models.txt) of every held-out utterance",
	 VPA_AT(struct vpa_flam_heldout_opts, utt2spk), VPA_MARK(struct vpa_flam_heldout_opts, utt2spk_at)},
	{NULL},
};
static const struct vpa_schema heldout_schema = {"heldout", heldout_keys,
						 sizeof(struct vpa_flam_heldout_opts)};

static const struct vpa_key import_keys[] = {
	{"models", VPA_K_PATH, 1, NULL, -INF, INF, 0, NULL, NULL, "models.txt",
	 "`MODEL SPEAKER PART` lines, PART one of global (exactly one line, speaker `-`), part1, "
	 "part2",
	 VPA_AT(struct vpa_flam_import_opts, models), VPA_MARK(struct vpa_flam_import_opts, models_at)},
	{"model_dir", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "models",
	 "folder holding one model folder (model.yaml + .npy, learn/NN.md) per MODEL",
	 VPA_AT(struct vpa_flam_import_opts, model_dir), VPA_MARK(struct vpa_flam_import_opts, model_dir_at)},
	{"indicator", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "indicator",
	 "the Indicator features: a folder of UTT.npy (T x input_dim), a Kaldi feature "
	 "archive (text or binary matrices), or a Kaldi data directory of audio (a folder "
	 "with wav.scp; features by `features` and `feature_options`)",
	 VPA_AT(struct vpa_flam_import_opts, indicator), VPA_MARK(struct vpa_flam_import_opts, indicator_at)},
	{"onnx_layers", VPA_K_LIST, 0, NULL, -INF, INF, VPA_KF_NONEMPTY, NULL, NULL,
	 "[/tdnn2/Relu_output_0, hidden5]",
	 "ONNX models instead of model folders: MODEL_DIR/MODEL.onnx per MODEL, the hidden "
	 "layers being these graph values (any intermediate value; per-frame outputs "
	 "(1, T, D), (1, D, T) or (T, D)); `vpaudit onnx info` lists the outputs, `onnx run "
	 "--outputs` shows any value",
	 VPA_AT(struct vpa_flam_import_opts, onnx_layers), VPA_MARK(struct vpa_flam_import_opts, onnx_layers_at)},
	{"onnx_layout", VPA_K_ENUM, 0, "btf", -INF, INF, 0, "btf|bft", NULL, "bft",
	 "the ONNX models' input: (1, time, features) or (1, features, time)",
	 VPA_AT(struct vpa_flam_import_opts, onnx_layout), VPA_MARK(struct vpa_flam_import_opts, onnx_layout_at)},
	{"features", VPA_K_ENUM, 0, "fbank", -INF, INF, 0, "fbank|mfcc", NULL, "mfcc",
	 "an Indicator set given as audio: the features the models take",
	 VPA_AT(struct vpa_flam_import_opts, features), VPA_MARK(struct vpa_flam_import_opts, features_at)},
	{"feature_options", VPA_K_LIST, 0, NULL, -INF, INF, 0, NULL, NULL,
	 "[--num-mel-bins=40, --cmvn=utt]",
	 "an Indicator set given as audio: the front-end options the models were trained "
	 "with (`vpaudit features` names, `--name=value`)",
	 VPA_AT(struct vpa_flam_import_opts, feature_options), VPA_MARK(struct vpa_flam_import_opts, feature_options_at)},
	{"activations", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "acts",
	 "instead of models: ACTS/MODEL/layerH/UTT.npy (T x D), hidden layers H = 1, 2, ...; "
	 "utterances are those of the global model's layer1 folder",
	 VPA_AT(struct vpa_flam_import_opts, activations), VPA_MARK(struct vpa_flam_import_opts, activations_at)},
	{"heldout", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &heldout_schema,
	 "{features: heldout/feats.ark, labels: heldout/labels.ark, utt2spk: heldout/utt2spk}",
	 "a labelled held-out set (models, not activations): every personalised model's frame "
	 "accuracy on its speaker's utterances and the global model's on the same ones, in the "
	 "records as `utility_acc` and `utility_acc_global`",
	 VPA_AT(struct vpa_flam_import_opts, heldout), VPA_MARK(struct vpa_flam_import_opts, heldout_at)},
	{NULL},
};
static const struct vpa_schema import_schema = {"import", import_keys, sizeof(struct vpa_flam_import_opts)};

static const struct vpa_key keys[] = {
	{"source", VPA_K_ENUM, 0, "simulate", -INF, INF, 0, "simulate|audio|import", NULL,
	 "audio",
	 "`simulate`: the simulator of targets/README.md; `audio`: models trained here from "
	 "audio and its frame alignments (`audio:`); `import`: your models or activations",
	 VPA_AT(struct vpa_flam_opts, source), VPA_MARK(struct vpa_flam_opts, source_at)},
	{"simulate", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &sim_schema,
	 "{part1_speakers: 100, hidden_layers: 6}", "the simulation model and sizes",
	 VPA_AT(struct vpa_flam_opts, simulate), VPA_MARK(struct vpa_flam_opts, simulate_at)},
	{"audio", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &audio_schema,
	 "{data: corpus/all, part1_speakers: 40}",
	 "source: audio: the data, the speaker sets, the TDNN and its training",
	 VPA_AT(struct vpa_flam_opts, audio), VPA_MARK(struct vpa_flam_opts, audio_at)},
	{"dp", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &dp_schema, "{clip: 1, noise: 0.1}",
	 "local differential privacy on each released update (source: simulate)",
	 VPA_AT(struct vpa_flam_opts, dp), VPA_MARK(struct vpa_flam_opts, dp_at)},
	{"import", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &import_schema,
	 "{models: models.txt, activations: acts}", "the files (source: import)",
	 VPA_AT(struct vpa_flam_opts, import), VPA_MARK(struct vpa_flam_opts, import_at)},
	{"dp_info", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &dpinfo_schema,
	 "{mechanism: local, clip: 0.15, noise: 1, delta: 1e-5}",
	 "source: import: the DP the imported models were trained with, so that records carry "
	 "its epsilon (accountant named) and `a1_footprint` audits a local-DP claim",
	 VPA_AT(struct vpa_flam_opts, dp_info), VPA_MARK(struct vpa_flam_opts, dp_info_at)},
	{"dp_fault", VPA_K_ENUM, 0, "none", -INF, INF, 0, "none|skip_noise", NULL, "skip_noise",
	 "a documented fault for testing the DP audit (source: simulate, with `dp:`): "
	 "`skip_noise` clips every released update but adds no noise, while every record still "
	 "claims the epsilon of `dp.noise` (a broken implementation the audit of `a1_footprint` "
	 "must catch); never use it for a real audit",
	 VPA_AT(struct vpa_flam_opts, dp_fault), VPA_MARK(struct vpa_flam_opts, dp_fault_at)},
	{"dump_models", VPA_K_STR, 0, NULL, -INF, INF, VPA_KF_WRITE, NULL, NULL, "out/am-models",
	 "write models.txt, every model folder and the Indicator features (indicator/UTT.npy) "
	 "here (relative to the current directory; inside the output folder unless the run has "
	 "`--allow-writes-outside`), to be imported again",
	 VPA_AT(struct vpa_flam_opts, dump_models), VPA_MARK(struct vpa_flam_opts, dump_models_at)},
	{"dump_activations", VPA_K_STR, 0, NULL, -INF, INF, VPA_KF_WRITE, NULL, NULL, "out/am-acts",
	 "write models.txt and every model's hidden-layer activations (MODEL/layerH/UTT.npy) here "
	 "(relative to the current directory; inside the output folder unless the run has "
	 "`--allow-writes-outside`)",
	 VPA_AT(struct vpa_flam_opts, dump_activations), VPA_MARK(struct vpa_flam_opts, dump_activations_at)},
	{NULL},
};
static const struct vpa_schema schema = {"target fl_acoustic_models", keys, sizeof(struct vpa_flam_opts)};

/* ---- the kind ------------------------------------------------------------------------- */

/*
 * ONNX import: the global model loads (an unsupported operator is one line
 * naming the operator, node and opset) and has every named layer.  (The
 * items of `onnx_layers` are values: the key check made sure.)
 */
static int validate_onnx(const struct vpa_kind_ctx *ctx, const struct vpa_flam_import_opts *imp,
			 struct vpa_err *err)
{
	const struct vpa_strs *ol = &imp->onnx_layers;
	char *mp = vpa_path_join(ctx->dir, imp->models);
	char *mdp = vpa_path_join(ctx->dir, imp->model_dir);
	struct vpa_kaldi_list l;
	struct vpa_onnx_model *m = NULL;
	struct vpa_err e2;
	vpa_kaldi_list_init(&l);
	vpa_err_init(&e2);
	int rc = vpa_kaldi_read_list(mp, 3, &l, err);
	const char *gid = NULL;
	for (size_t i = 0; !rc && i < l.n; i++)
		if (!strcmp(l.f[i * 3 + 2], "global") && !gid)
			gid = l.f[i * 3];
	if (!rc && gid) { /* no global line: the build says so */
		char *p = NULL;
		if (asprintf(&p, "%s/%s.onnx", mdp, gid) < 0)
			VPA_BUG("asprintf");
		if (vpa_onnx_load(p, NULL, &m, &e2)) {
			struct vpa_loc l2 = vpa_mark_loc(ctx->file, imp->model_dir_at);
			rc = vpa_fail(err, e2.status, &l2, "%s", e2.msg);
		}
		for (size_t h = 0; !rc && h < ol->n; h++)
			if (!vpa_onnx_has_value(m, ol->v[h])) {
				struct vpa_loc l2 = vpa_mark_loc(ctx->file, ol->marks[h]);
				char near[600];
				rc = vpa_fail(err, VPA_EINPUT, &l2, "%s: no value named '%s'%s", p,
					      ol->v[h],
					      vpa_onnx_nearest_values(m, ol->v[h], near, sizeof(near)));
			}
		free(p);
	}
	vpa_onnx_free(m);
	vpa_kaldi_list_release(&l);
	free(mp);
	free(mdp);
	return rc;
}

/*
 * The front end of `source: audio`: 40 mel bins and per-utterance mean
 * normalisation, then the user's `feature_options`.  Frame selection (VAD)
 * is refused: the alignments label every frame.
 */
static int audio_frontend(const char *file, const struct vpa_flam_audio_opts *a,
			  struct vpa_mark audio_at, struct vpa_feat_opts *fo, struct vpa_err *err)
{
	int mfcc = a->features && !strcmp(a->features, "mfcc");
	vpa_feat_opts_init(fo, mfcc ? VPA_FEAT_MFCC : VPA_FEAT_FBANK);
	fo->num_mel_bins = 40;
	fo->cmvn = VPA_CMVN_UTT;
	const struct vpa_strs *l = &a->feature_options;
	int rc = vpa_target_frontend_strs(file, l, "--num-mel-bins=40", NULL, fo, err);
	if (rc)
		return rc;
	struct vpa_loc loc = vpa_mark_loc(file, l->given ? a->feature_options_at : audio_at);
	if (fo->vad)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"--vad drops frames, but the alignments label every frame of an "
				"utterance: leave it off");
	struct vpa_feat *fe = vpa_feat_new(fo, err); /* the options together */
	if (!fe) {
		char m[sizeof(err->msg)];
		memcpy(m, err->msg, sizeof(m));
		int st = err->status;
		vpa_err_init(err);
		return vpa_fail(err, st, &loc, "%s", m);
	}
	vpa_feat_free(fe);
	return 0;
}

/* The CTC request of an `aligner:` mapping (paths joined to dir: the caller
 * frees o->model, o->tokens). */
static void aligner_req(const struct vpa_flam_aligner_opts *g, const char *dir,
			struct vpa_ctc_opts *o)
{
	vpa_ctc_opts_init(o);
	o->model = vpa_path_join(dir, g->model);
	o->tokens = vpa_path_join(dir, g->tokens);
	o->blank = (long)g->blank;
	struct vpa_err e;
	vpa_err_init(&e);
	/* names (sentencepiece, none) as `vpaudit asr --delimiter`; cannot fail */
	vpa_ctc_opts_set(o, "delimiter", g->delimiter ? g->delimiter : "|", &e);
	o->input = g->input && !strcmp(g->input, "features") ? VPA_CTC_FEATURES : VPA_CTC_WAVEFORM;
	o->layout = g->layout && !strcmp(g->layout, "bft") ? VPA_CTC_BFT : VPA_CTC_BTF;
	o->wave_norm = g->wave_norm;
	o->resample = 1;
}

/* aligner: the model and tokens load (a wrong file, an unsupported operator or
 * a tokens file of the wrong size is an error at its key), the transcripts
 * exist. */
static int validate_aligner(const struct vpa_kind_ctx *ctx, const struct vpa_flam_aligner_opts *g,
			    const char *dp, struct vpa_err *err)
{
	int rc = vpa_check_path_at(ctx, g->model, g->model_at, VPA_PATH_FILE, err);
	if (!rc)
		rc = vpa_check_path_at(ctx, g->tokens, g->tokens_at, VPA_PATH_FILE, err);
	if (!rc && g->text)
		rc = vpa_check_path_at(ctx, g->text, g->text_at, VPA_PATH_FILE, err);
	if (rc)
		return rc;
	if (!g->text) {
		char *tp = vpa_path_join(dp, "text");
		if (access(tp, F_OK)) {
			struct vpa_loc loc = vpa_mark_key_loc(ctx->file, g->model_at);
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "no %s: the aligner needs every utterance's transcript (a Kaldi "
				      "`text`; or name it with `text:`)", tp);
		}
		free(tp);
		if (rc)
			return rc;
	}
	struct vpa_ctc_opts o;
	aligner_req(g, ctx->dir, &o);
	struct vpa_err e2;
	vpa_err_init(&e2);
	struct vpa_ctc *c = NULL;
	rc = vpa_ctc_new(&o, &c, &e2);
	vpa_ctc_free(c);
	if (rc) {
		struct vpa_loc loc = vpa_mark_loc(ctx->file, strstr(e2.msg, o.tokens) ? g->tokens_at
										: g->model_at);
		rc = vpa_fail(err, rc, &loc, "%s", e2.msg);
	}
	free((char *)o.model);
	free((char *)o.tokens);
	return rc;
}

/* source: audio: the mapping, the data directory (audio readable, utt2spk),
 * the alignments file and the front end. */
static int validate_audio(const struct vpa_kind_ctx *ctx, const struct vpa_flam_opts *o,
			  struct vpa_err *err)
{
	const struct vpa_flam_audio_opts *a = &o->audio;
	struct vpa_loc loc;
	if (!a->data) { /* the built-in corpus */
		if (a->ali_at.line || a->aligner_at.line) {
			loc = vpa_mark_key_loc(ctx->file, a->ali_at.line ? a->ali_at : a->aligner_at);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`%s` labels the frames of your `data`; the built-in corpus "
					"(no `data`) is labelled from the synthesisers' own timing",
					a->ali_at.line ? "ali" : "aligner");
		}
		struct vpa_feat_opts fo;
		return audio_frontend(ctx->file, a, o->audio_at, &fo, err);
	}
	if (a->speakers_at.line || a->utts_at.line || a->brown_at.line) {
		loc = vpa_mark_key_loc(ctx->file, a->speakers_at.line ? a->speakers_at
						  : a->utts_at.line ? a->utts_at : a->brown_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"`speakers`, `utts` and `brown` size the built-in corpus; with your "
				"`data` they do not apply");
	}
	int rc = vpa_check_path_at(ctx, a->data, a->data_at, VPA_PATH_DIR, err);
	if (rc)
		return rc;
	char *dp = vpa_path_join(ctx->dir, a->data), *u2s = vpa_path_join(dp, "utt2spk");
	if (access(u2s, F_OK)) {
		loc = vpa_mark_loc(ctx->file, a->data_at);
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "%s has no utt2spk: the speaker of every utterance decides its set", dp);
	}
	if (!rc && a->ali && a->aligner_at.line) {
		loc = vpa_mark_key_loc(ctx->file, a->aligner_at);
		rc = vpa_fail(err, VPA_EINPUT, &loc,
			      "`ali` and `aligner` are two sources of the frame labels: give one");
	} else if (!rc && a->aligner_at.line) {
		rc = validate_aligner(ctx, &a->aligner, dp, err);
	} else if (!rc && a->ali) {
		rc = vpa_check_path_at(ctx, a->ali, a->ali_at, VPA_PATH_FILE, err);
	} else if (!rc) {
		char *ap = vpa_path_join(dp, "ali.txt");
		if (access(ap, F_OK)) {
			loc = vpa_mark_loc(ctx->file, a->data_at);
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "no %s: give the frame alignments with `ali:` (Kaldi "
				      "`ali-to-phones --per-frame=true ... ark,t:-` text)", ap);
		}
		free(ap);
	}
	struct vpa_feat_opts fo;
	if (!rc)
		rc = audio_frontend(ctx->file, a, o->audio_at, &fo, err);
	if (!rc)
		rc = vpa_datadir_check_audio(dp, fo.sample_frequency, err);
	free(u2s);
	free(dp);
	return rc;
}

/*
 * Errors about a key written where it does not apply (`import:` with source
 * simulate, `dump_models:` ...) blame the key; a missing `import:` blames the
 * target's entry (ctx->self).
 */
static int validate(const struct vpa_kind_ctx *ctx, const void *opts, struct vpa_err *err)
{
	const struct vpa_flam_opts *o = opts;
	const struct vpa_flam_import_opts *imp = &o->import;
	int has_imp = o->import_at.line != 0;
	struct vpa_loc loc;
	if (strcmp(o->source, "audio") && o->audio_at.line) {
		loc = vpa_mark_key_loc(ctx->file, o->audio_at);
		return vpa_fail(err, VPA_EINPUT, &loc, "`audio:` needs `source: audio` (the source is "
				"'%s')", o->source);
	}
	if (!strcmp(o->source, "simulate") || !strcmp(o->source, "audio")) {
		int audio = !strcmp(o->source, "audio");
		if (audio && o->simulate_at.line) {
			loc = vpa_mark_key_loc(ctx->file, o->simulate_at);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`simulate:` applies to source 'simulate' only (the source is "
					"'audio': its sizes are in `audio:`)");
		}
		if (has_imp) {
			loc = vpa_mark_key_loc(ctx->file, o->import_at);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`import:` needs `source: import` (the source is '%s')", o->source);
		}
		if (o->dp_info_at.line) {
			loc = vpa_mark_key_loc(ctx->file, o->dp_info_at);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`dp_info:` describes imported models (source: import); models "
					"trained here take `dp:`");
		}
		if (o->dp_at.line && o->dp.noise > 0 && o->dp.clip == 0) {
			loc = vpa_mark_loc(ctx->file, o->dp_at);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"dp: noise needs a clipping bound `clip` > 0 (the noise is "
					"sigma * clip)");
		}
		if (strcmp(o->dp_fault, "none") && o->dp.clip == 0) {
			loc = vpa_mark_loc(ctx->file, o->dp_fault_at);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"dp_fault '%s' needs local DP on (`dp: {clip: C > 0, noise: "
					"...}`)", o->dp_fault);
		}
		return audio ? validate_audio(ctx, o, err) : 0;
	}
	loc = vpa_mark_loc(ctx->file, ctx->self);
	if (!has_imp)
		return vpa_fail(err, VPA_EINPUT, &loc,
				"source 'import' needs an `import:` mapping (models and activations, "
				"or models, model_dir and indicator)");
	if (o->dp_at.line) {
		loc = vpa_mark_key_loc(ctx->file, o->dp_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"`dp:` applies to source 'simulate' only (it adds noise); describe the "
				"DP your imported models were trained with in `dp_info:` "
				"({mechanism: local|dp_sgd, clip, noise, delta[, steps, q]})");
	}
	const char *bad[] = {"simulate", "dump_models", "dp_fault"};
	const struct vpa_mark bad_at[] = {o->simulate_at, o->dump_models_at, o->dp_fault_at};
	for (size_t i = 0; i < 3; i++)
		if (bad_at[i].line) {
			loc = vpa_mark_key_loc(ctx->file, bad_at[i]);
			if (i == 0)
				return vpa_fail(err, VPA_EINPUT, &loc,
						"`simulate:` applies to source 'simulate' only");
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`%s:` applies to the models trained here (source 'simulate' "
					"or 'audio')", bad[i]);
		}
	if (o->dp_info_at.line) {
		const struct vpa_flam_dpinfo_opts *di = &o->dp_info;
		int sgd = !strcmp(di->mechanism, "dp_sgd");
		if (!sgd && (di->steps_at.line || di->q_at.line)) {
			loc = vpa_mark_key_loc(ctx->file, di->steps_at.line ? di->steps_at : di->q_at);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"`%s` applies to `mechanism: dp_sgd` only (local DP is one "
					"release per model)", di->steps_at.line ? "steps" : "q");
		}
		if (sgd && (!di->steps_at.line || !di->q_at.line)) {
			loc = vpa_mark_loc(ctx->file, o->dp_info_at);
			return vpa_fail(err, VPA_EINPUT, &loc,
					"dp_info: `mechanism: dp_sgd` needs `%s` (the accountant "
					"composes `steps` steps of sampling rate `q`)",
					!di->steps_at.line ? "steps" : "q");
		}
	}
	const char *acts = imp->activations, *md = imp->model_dir, *ind = imp->indicator;
	loc = vpa_mark_loc(ctx->file, o->import_at);
	if (acts && (md || ind))
		return vpa_fail(err, VPA_EINPUT, &loc,
				"give either `activations` or `model_dir` and `indicator`, not both");
	if (!acts && !(md && ind))
		return vpa_fail(err, VPA_EINPUT, &loc,
				"import needs `activations`, or both `model_dir` and `indicator`");
	if (acts && o->dump_activations) {
		loc = vpa_mark_key_loc(ctx->file, o->dump_activations_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"`dump_activations:` with imported activations would only copy them");
	}
	int ol = imp->onnx_layers.given;
	if (acts && ol) {
		loc = vpa_mark_key_loc(ctx->file, imp->onnx_layers_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"`onnx_layers` names the hidden layers of ONNX models (`model_dir`), "
				"not of imported activations");
	}
	if (acts && imp->heldout_at.line) {
		loc = vpa_mark_key_loc(ctx->file, imp->heldout_at);
		return vpa_fail(err, VPA_EINPUT, &loc,
				"`heldout` needs the models (`model_dir`) to run them: imported "
				"activations have no outputs");
	}
	int rc = vpa_check_path_at(ctx, imp->models, imp->models_at, VPA_PATH_FILE, err);
	if (!rc && imp->heldout_at.line) {
		const struct vpa_flam_heldout_opts *h = &imp->heldout;
		rc = vpa_check_path_at(ctx, h->features, h->features_at, VPA_PATH_ANY, err);
		if (!rc)
			rc = vpa_check_path_at(ctx, h->labels, h->labels_at, VPA_PATH_FILE, err);
		if (!rc)
			rc = vpa_check_path_at(ctx, h->utt2spk, h->utt2spk_at, VPA_PATH_FILE, err);
	}
	if (!rc && acts)
		rc = vpa_check_path_at(ctx, acts, imp->activations_at, VPA_PATH_DIR, err);
	if (!rc && md)
		rc = vpa_check_path_at(ctx, md, imp->model_dir_at, VPA_PATH_DIR, err);
	if (!rc && ind)
		rc = vpa_check_path_at(ctx, ind, imp->indicator_at, VPA_PATH_ANY, err);
	if (!rc && ind) {
		struct vpa_feat_opts fo;
		rc = vpa_flam_frontend(ctx->file, imp, o->import_at, &fo, err);
		/* an Indicator given as audio (a data directory): its recordings at
		 * their headers, at the front-end's rate (audio/audio.h) */
		char *p = vpa_path_join(ctx->dir, ind), *scp = vpa_path_join(p, "wav.scp");
		struct stat st;
		if (!rc && !stat(p, &st) && S_ISDIR(st.st_mode) && !access(scp, F_OK))
			rc = vpa_datadir_check_audio(p, fo.sample_frequency, err);
		free(scp);
		free(p);
	}
	if (!rc && ol)
		rc = validate_onnx(ctx, imp, err);
	return rc;
}

/* The simulator's settings from the options (the table holds every default). */
static void sim_cfg(const struct vpa_flam_opts *o, struct vpa_flam_sim_cfg *c)
{
	const struct vpa_flam_sim_opts *s = &o->simulate;
#define I(k) c->k = (size_t)s->k
#define N(k) c->k = s->k
	I(feat_dim); I(states); I(spk_vec_dim); N(spk_affine); N(spk_bias); N(noise);
	N(spk_vec_noise); I(utt_frames); I(train_speakers); I(train_utts); I(part1_speakers);
	I(part2_speakers); N(two_models); I(adapt_utts); I(heldout_utts);
	I(indicator_speakers); I(indicator_utts); I(hidden_layers); I(hidden_dim);
	I(global_epochs); N(global_lr); I(batch); I(adapt_epochs); N(adapt_lr);
#undef I
#undef N
	c->dp_clip = o->dp.clip;
	c->dp_noise = o->dp.noise;
	c->dp_delta = o->dp.delta;
	c->dp_skip_noise = !strcmp(o->dp_fault, "skip_noise");
}

static void flam_free(struct vpa_target *t)
{
	struct vpa_flam *f = t->data;
	if (!f)
		return;
	vpa_flam_release(f);
	free(f);
	t->data = NULL;
}

static int build(struct vpa_run_ctx *ctx, const void *opts, struct vpa_target *out,
		 struct vpa_err *err)
{
	const struct vpa_flam_opts *o = opts;
	struct vpa_flam *t = xcalloc(1, sizeof(*t));
	struct vpa_json *info = vpa_json_obj();
	const char *source = o->source;
	int rc = 0;
	vpa_flam_init(t);
	out->data = t;
	out->info = info;
	vpa_json_set_str(info, "source", source);
	if (!strcmp(source, "simulate")) {
		struct vpa_flam_sim_cfg c;
		vpa_flam_sim_cfg_init(&c);
		sim_cfg(o, &c);
		struct vpa_rng r;
		vpa_rng_split(&r, ctx->seed, out->id ? out->id : "fl_am");
		c.seed = vpa_rng_u64(&r);
		c.threads = ctx->threads;
		out->simulated = 1;
		rc = vpa_flam_simulate(&c, t, info, err);
		if (!rc && c.part1_speakers + c.part2_speakers > 0 && t->n_models == 0)
			VPA_BUG("no models");
	} else if (!strcmp(source, "audio")) {
		const struct vpa_flam_audio_opts *a = &o->audio;
		struct vpa_flam_audio_cfg c;
		vpa_flam_audio_cfg_init(&c);
		struct vpa_rng r;
		vpa_rng_split(&r, ctx->seed, out->id ? out->id : "fl_am");
		c.seed = vpa_rng_u64(&r);
		char *tmp = NULL, *dp = NULL, *ap = NULL, *tx = NULL;
		if (a->data) {
			dp = vpa_path_join(ctx->dir, a->data);
			ap = a->ali ? vpa_path_join(ctx->dir, a->ali) : vpa_path_join(dp, "ali.txt");
		} else {
			vpa_progress_note("%s: synthesising a corpus of %lld speakers x %lld utterances",
					  out->id, a->speakers, a->utts);
			rc = vpa_flam_synth_corpus((int)a->speakers, (int)a->utts, a->brown,
						   vpa_rng_u64(&r), ctx->threads, &tmp, &dp, err);
			if (!rc)
				ap = vpa_path_join(dp, "ali.txt");
			vpa_json_set_str(info, "synthetic",
					 "SYNTHETIC speech (espeak-ng / flite voices reading Brown "
					 "sentences), not recordings of people; frame labels from the "
					 "synthesisers' own phone timing");
		}
		c.data = dp;
		c.ali = ap;
		struct vpa_ctc_opts co;
		vpa_ctc_opts_init(&co);
		if (a->aligner_at.line) {
			const struct vpa_flam_aligner_opts *g = &a->aligner;
			free(ap);
			c.ali = ap = NULL;
			aligner_req(g, ctx->dir, &co);
			c.ctc = &co;
			c.text = tx = g->text ? vpa_path_join(ctx->dir, g->text) : vpa_path_join(dp, "text");
		}
		if (!rc)
			rc = audio_frontend(ctx->file, a, o->audio_at, &c.fo, err);
#define I(k) c.k = (size_t)a->k
		I(train_speakers); I(part1_speakers); I(part2_speakers); I(indicator_speakers);
		I(heldout_utts); I(indicator_utts); I(hidden_layers); I(hidden_dim);
		I(global_epochs); I(batch); I(adapt_epochs); I(spk_vec_dim);
#undef I
		c.two_models = a->two_models;
		c.global_lr = a->global_lr;
		c.adapt_lr = a->adapt_lr;
		c.dp_clip = o->dp.clip;
		c.dp_noise = o->dp.noise;
		c.dp_delta = o->dp.delta;
		c.dp_skip_noise = !strcmp(o->dp_fault, "skip_noise");
		c.threads = ctx->threads;
		out->simulated = 0;
		vpa_json_set_str(info, "trained_on", a->data ? "audio" : "synthetic speech");
		vpa_json_set(info, "speaker_vector",
			     a->spk_vec_dim ? vpa_json_str("an i-vector stand-in (a random projection "
							   "of each utterance's feature mean and log "
							   "std before normalisation), appended to "
							   "every frame")
					    : vpa_json_str("none"));
		if (!rc)
			rc = vpa_flam_from_audio(&c, t, info, err);
		if (tmp) { /* the built-in corpus: its features are in the target now */
			vpa_json_set_num(info, "corpus_speakers", (double)a->speakers);
			vpa_json_set_num(info, "corpus_utterances_per_speaker", (double)a->utts);
			vpa_json_set_str(info, "data", "built-in synthetic corpus");
			vpa_json_set_str(info, "alignments", "synthesiser phone timing");
			vpa_flam_synth_remove(tmp);
		}
		free(ap);
		free(dp);
		free((char *)co.model);
		free((char *)co.tokens);
		free(tx);
	} else {
		out->simulated = 0;
		rc = vpa_flam_import(ctx, &o->import, o->import_at, t, err);
		if (!rc) {
			struct vpa_json *sz = vpa_json_obj();
			size_t n1 = 0;
			for (size_t i = 0; i < t->n_models; i++)
				n1 += t->models[i].part == VPA_FLAM_PART1;
			vpa_json_set_num(sz, "part1_models", (double)n1);
			vpa_json_set_num(sz, "part2_models", (double)(t->n_models - n1));
			vpa_json_set_num(sz, "speakers", (double)t->n_spk);
			vpa_json_set_num(sz, "indicator_utterances", (double)t->n_utt);
			vpa_json_set_num(sz, "indicator_frames", (double)t->off[t->n_utt]);
			vpa_json_set_num(sz, "hidden_layers", (double)t->n_layers);
			vpa_json_set(info, "sizes", sz);
			vpa_json_set_str(info, "models", o->import.models);
		}
		if (!rc && o->import.heldout_at.line)
			rc = vpa_flam_heldout(ctx, &o->import.heldout, t, info, err);
		if (!rc && o->dp_info_at.line) {
			const struct vpa_flam_dpinfo_opts *di = &o->dp_info;
			int sgd = !strcmp(di->mechanism, "dp_sgd");
			t->dp_mech = sgd ? VPA_FLAM_DP_DPSGD : VPA_FLAM_DP_LOCAL;
			t->dp_clip = di->clip;
			t->dp_noise = di->noise;
			t->dp_delta = di->delta;
			t->dp_steps = sgd ? (double)di->steps : 1;
			t->dp_q = sgd ? di->q : 1;
			/* a speaker's releases: its models in models.txt */
			size_t *cnt = xcalloc(t->n_spk ? t->n_spk : 1, sizeof(size_t));
			t->dp_releases_max = 1;
			for (size_t i = 0; i < t->n_models; i++)
				if (++cnt[t->models[i].spk] > t->dp_releases_max)
					t->dp_releases_max = cnt[t->models[i].spk];
			free(cnt);
			rc = vpa_flam_dp_account(t, info, err);
		}
	}
	const char *dm = o->dump_models, *da = o->dump_activations;
	/* under MPI only rank 0 writes (base/dist.c) */
	if (!rc && dm && vpa_dist_rank() == 0)
		rc = vpa_flam_dump_models(dm, t, err);
	if (!rc && da && vpa_dist_rank() == 0)
		rc = vpa_flam_dump_acts(da, t, err);
	if (!rc) {
		struct vpa_json *dims = vpa_json_arr();
		for (size_t h = 0; h < t->n_layers; h++)
			vpa_json_push(dims, vpa_json_num((double)t->dim[h]));
		vpa_json_set(info, "hidden_layer_dims", dims);
	}
	if (!rc && t->n_utt == 0)
		rc = vpa_fail(err, VPA_EINPUT, NULL, "target '%s': the Indicator set is empty",
			      out->id);
	return rc;
}

const struct vpa_target_kind vpa_target_fl_acoustic_models = {
	.name = "fl_acoustic_models",
	.schema = &schema,
	.doc = "Federated-learning speaker-adapted acoustic models (Tomashenko et al., ICASSP "
	       "2022): a global model W_g and personalised models W_s (W_g fine-tuned on one "
	       "speaker's data), split into Part-1 (the A2 attacker's training models) and Part-2 "
	       "(the attacked models), with an Indicator data set of other speakers.  Simulated "
	       "(phone-state frame features with per-speaker affine maps, a TDNN trained on "
	       "Train-G, optional local DP on the released updates; targets/README.md), trained "
	       "here from audio and its frame alignments (the same TDNN on fbank/MFCC features; "
	       "by default on the built-in synthetic corpus labelled from the synthesisers' "
	       "phone timing), or imported as model folders plus Indicator features, or as "
	       "precomputed activations.  Attack it with `a1_footprint` and `a2_footprint`.",
	.validate = validate,
	.build = build,
	.free = flam_free,
};
