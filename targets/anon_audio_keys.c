/*
 * targets/anon_audio_keys.c - the keys of `source: audio` of the target kind
 * `anonymised_speech` (`audio:`, and its `extractor:`, `synthetic:`,
 * `anonymise:` mappings): the schema tables bound to the options structs of
 * targets/anon.h.  Their cross-key checks and the build are in anon_audio.c.
 */
#include "audio/asr.h"
#include "targets/anon.h"

#include <math.h>

#define INF INFINITY

static const struct vpa_key ext_keys[] = {
	{"features", VPA_K_ENUM, 0, "fbank", -INF, INF, 0, "fbank|mfcc", NULL, "mfcc",
	 "front-end: Kaldi fbank or MFCC (audio/README.md), then `cmvn` and energy VAD",
	 VPA_AT(struct vpa_anon_extractor_opts, features), VPA_MARK(struct vpa_anon_extractor_opts, features_at)},
	{"num_mel_bins", VPA_K_INT, 0, "30", 3, 1024, 0, NULL, NULL, "40", "mel bands",
	 VPA_AT(struct vpa_anon_extractor_opts, num_mel_bins), VPA_MARK(struct vpa_anon_extractor_opts, num_mel_bins_at)},
	{"cmvn", VPA_K_ENUM, 0, "utt", -INF, INF, 0, "utt|none", NULL, "none",
	 "per-utterance mean normalisation of the features (removes a channel; on synthetic "
	 "speech without channel it also removes the long-term spectrum that tells voices "
	 "apart: scenarios/vpc-audio.yaml uses none)",
	 VPA_AT(struct vpa_anon_extractor_opts, cmvn), VPA_MARK(struct vpa_anon_extractor_opts, cmvn_at)},
	{"vad", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "false",
	 "keep only the frames Kaldi's energy VAD marks voiced",
	 VPA_AT(struct vpa_anon_extractor_opts, vad), VPA_MARK(struct vpa_anon_extractor_opts, vad_at)},
	{"architecture", VPA_K_ENUM, 0, "xvector", -INF, INF, 0, "xvector|ecapa", NULL, "ecapa",
	 "the network: an x-vector TDNN (Snyder et al. 2018, scaled down) or a small "
	 "ECAPA-TDNN (Desplanques et al. 2020: SE-Res2Blocks, multi-layer feature aggregation, "
	 "attentive statistics pooling); sizes and choices in audio/README.md",
	 VPA_AT(struct vpa_anon_extractor_opts, architecture), VPA_MARK(struct vpa_anon_extractor_opts, architecture_at)},
	{"hidden", VPA_K_INT, 0, "128", 4, 4096, 0, NULL, NULL, "256", "x-vector TDNN width H",
	 VPA_AT(struct vpa_anon_extractor_opts, hidden), VPA_MARK(struct vpa_anon_extractor_opts, hidden_at)},
	{"channels", VPA_K_INT, 0, "64", 4, 4096, 0, NULL, NULL, "96",
	 "ECAPA-TDNN channels C (a multiple of `res2_scale`); C = 64 trains in about the time "
	 "of the x-vector with H = 128",
	 VPA_AT(struct vpa_anon_extractor_opts, channels), VPA_MARK(struct vpa_anon_extractor_opts, channels_at)},
	{"res2_scale", VPA_K_INT, 0, "4", 1, 16, 0, NULL, NULL, "8",
	 "ECAPA-TDNN Res2Net scale s: each block's C channels split into s groups, dilated "
	 "convolutions in cascade over s - 1 of them",
	 VPA_AT(struct vpa_anon_extractor_opts, res2_scale), VPA_MARK(struct vpa_anon_extractor_opts, res2_scale_at)},
	{"emb_dim", VPA_K_INT, 0, "64", 2, 4096, 0, NULL, NULL, "128", "embedding dimension",
	 VPA_AT(struct vpa_anon_extractor_opts, emb_dim), VPA_MARK(struct vpa_anon_extractor_opts, emb_dim_at)},
	{"loss", VPA_K_ENUM, 0, "aam", -INF, INF, 0, "aam|softmax", NULL, "softmax",
	 "additive angular margin softmax or plain softmax",
	 VPA_AT(struct vpa_anon_extractor_opts, loss), VPA_MARK(struct vpa_anon_extractor_opts, loss_at)},
	{"margin", VPA_K_NUM, 0, "0.2", 0, 1.5, 0, NULL, NULL, "0.3", "AAM margin (radians)",
	 VPA_AT(struct vpa_anon_extractor_opts, margin), VPA_MARK(struct vpa_anon_extractor_opts, margin_at)},
	{"scale", VPA_K_NUM, 0, "30", 0, INF, VPA_KF_OPEN_LO, NULL, NULL, "30", "AAM scale",
	 VPA_AT(struct vpa_anon_extractor_opts, scale), VPA_MARK(struct vpa_anon_extractor_opts, scale_at)},
	{"epochs", VPA_K_INT, 0, "30", 1, 100000, 0, NULL, NULL, "20", "training epochs",
	 VPA_AT(struct vpa_anon_extractor_opts, epochs), VPA_MARK(struct vpa_anon_extractor_opts, epochs_at)},
	{"batch", VPA_K_INT, 0, "32", 2, 100000, 0, NULL, NULL, "64", "chunks per step",
	 VPA_AT(struct vpa_anon_extractor_opts, batch), VPA_MARK(struct vpa_anon_extractor_opts, batch_at)},
	{"shards", VPA_K_INT, 0, "4", 1, 4096, 0, NULL, NULL, "16",
	 "shards each step's chunks are cut into (at least 8 chunks each: at most batch / 8 "
	 "are used), one forward and backward each, their gradients summed in shard order: "
	 "the threads and MPI ranks that can work on a step at once, and part of the result "
	 "(batch norm normalises over a shard), unlike the thread and rank counts; a machine "
	 "with 16 cores needs shards 16 and batch >= 128 to use them all",
	 VPA_AT(struct vpa_anon_extractor_opts, shards), VPA_MARK(struct vpa_anon_extractor_opts, shards_at)},
	{"chunk", VPA_K_INT, 0, "200", 10, 100000, 0, NULL, NULL, "300",
	 "frames per training chunk",
	 VPA_AT(struct vpa_anon_extractor_opts, chunk), VPA_MARK(struct vpa_anon_extractor_opts, chunk_at)},
	{"lr", VPA_K_NUM, 0, "0.002", 0, 1, VPA_KF_OPEN_LO, NULL, NULL, "0.001",
	 "Adam learning rate (linear decay to a tenth)",
	 VPA_AT(struct vpa_anon_extractor_opts, lr), VPA_MARK(struct vpa_anon_extractor_opts, lr_at)},
	{"semi_informed", VPA_K_ENUM, 0, "retrain", -INF, INF, 0, "retrain|finetune", NULL,
	 "finetune", "ASV_eval^anon: trained from scratch on train_anon, or fine-tuned from "
	 "ASV_eval",
	 VPA_AT(struct vpa_anon_extractor_opts, semi_informed), VPA_MARK(struct vpa_anon_extractor_opts, semi_informed_at)},
	/* saved and reused extractors (issue 31.9): targets/anon_extractor_io.c */
	{"from", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "out/vpc-audio/extractors/asv_eval",
	 "reuse ASV_eval saved by an earlier run (`save`) instead of training it: the folder "
	 "(extractor.yaml and net*/, audio/xvector_io.h); its front-end and sizes apply (a key "
	 "written here that differs from them is an error)",
	 VPA_AT(struct vpa_anon_extractor_opts, from), VPA_MARK(struct vpa_anon_extractor_opts, from_at)},
	{"from_anon", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL,
	 "out/vpc-audio/extractors/asv_eval_anon",
	 "reuse ASV_eval^anon saved by an earlier run instead of training it on train_anon",
	 VPA_AT(struct vpa_anon_extractor_opts, from_anon), VPA_MARK(struct vpa_anon_extractor_opts, from_anon_at)},
	{"save", VPA_K_STR, 0, NULL, -INF, INF, VPA_KF_WRITE, NULL, NULL, "out/vpc-audio/extractors",
	 "write the extractors of this run (trained or reused) to SAVE/asv_eval and "
	 "SAVE/asv_eval_anon, for `from`/`from_anon`, each also as SAVE/*/model.onnx "
	 "for `vpaudit embed` (relative to the current directory; inside the output folder "
	 "unless the run has `--allow-writes-outside`)",
	 VPA_AT(struct vpa_anon_extractor_opts, save), VPA_MARK(struct vpa_anon_extractor_opts, save_at)},
	{"autosave", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "false",
	 "without `save`: write the extractors this run trains to OUT/extractors/asv_eval and "
	 "OUT/extractors/asv_eval_anon in the run's output folder (listed in results.json with "
	 "their SHA-256), so a re-run can reuse them with `from`/`from_anon`; false: not (a "
	 "large net takes room)",
	 VPA_AT(struct vpa_anon_extractor_opts, autosave), VPA_MARK(struct vpa_anon_extractor_opts, autosave_at)},
	{NULL},
};
const struct vpa_schema vpa_anon_extractor_schema = {"extractor", ext_keys, sizeof(struct vpa_anon_extractor_opts)};

static const struct vpa_key synth_keys[] = {
	{"speakers", VPA_K_INT, 0, "60", 6, 100000, 0, NULL, NULL, "60",
	 "speakers of both genders (half train, half enrolment/trials)",
	 VPA_AT(struct vpa_anon_synth_opts, speakers), VPA_MARK(struct vpa_anon_synth_opts, speakers_at)},
	{"utts", VPA_K_INT, 0, "8", 3, 10000, 0, NULL, NULL, "8", "utterances per speaker",
	 VPA_AT(struct vpa_anon_synth_opts, utts), VPA_MARK(struct vpa_anon_synth_opts, utts_at)},
	{"brown", VPA_K_STR, 0, "data/brown", -INF, INF, 0, NULL, NULL, "data/brown",
	 "the Brown corpus folder the sentences come from (relative to the current directory)",
	 VPA_AT(struct vpa_anon_synth_opts, brown), VPA_MARK(struct vpa_anon_synth_opts, brown_at)},
	{NULL},
};
const struct vpa_schema vpa_anon_synth_schema = {"synthetic", synth_keys, sizeof(struct vpa_anon_synth_opts)};

static const struct vpa_key anonymise_keys[] = {
	{"method", VPA_K_ENUM, 0, "mcadams", -INF, INF, 0, "mcadams|warp|pitch", NULL, "mcadams",
	 "McAdams coefficient (VPC B2), bilinear frequency warping, or TD-PSOLA pitch shifting "
	 "with COMPRISE's log-F0 mapping (audio/anon.h)",
	 VPA_AT(struct vpa_anon_anonymise_opts, method), VPA_MARK(struct vpa_anon_anonymise_opts, method_at)},
	{"low", VPA_K_NUM, 0, "0.5", -24, 24, 0, NULL, NULL, "0.5",
	 "lower end of the coefficient range (drawn per speaker or utterance, by `level`): "
	 "mcadams the McAdams alpha in (0, 2], warp the warping alpha in (-1, 1), pitch the "
	 "shift of the mean log F0 in semitones, [-24, 24] (pitch needs low and high)",
	 VPA_AT(struct vpa_anon_anonymise_opts, low), VPA_MARK(struct vpa_anon_anonymise_opts, low_at)},
	{"high", VPA_K_NUM, 0, "0.9", -24, 24, 0, NULL, NULL, "0.9",
	 "upper end of that range (same unit as `low`, at least `low`)",
	 VPA_AT(struct vpa_anon_anonymise_opts, high), VPA_MARK(struct vpa_anon_anonymise_opts, high_at)},
	{"train_level", VPA_K_ENUM, 0, "anon_level_utt", -INF, INF, 0,
	 "anon_level_utt|anon_level_spk", NULL, "anon_level_spk",
	 "how the attacker anonymises its training audio (train_anon) for ASV_eval^anon: per "
	 "utterance whatever `level` is, as the VoicePrivacy 2022 evaluation does "
	 "(`train_anon_level=utt`: every training speaker heard with many coefficients)",
	 VPA_AT(struct vpa_anon_anonymise_opts, train_level), VPA_MARK(struct vpa_anon_anonymise_opts, train_level_at)},
	{NULL},
};
const struct vpa_schema vpa_anon_anonymise_schema = {"anonymise", anonymise_keys, sizeof(struct vpa_anon_anonymise_opts)};

static const struct vpa_key audio_keys[] = {
	{"synthetic", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &vpa_anon_synth_schema,
	 "{speakers: 60, utts: 8}",
	 "make a SYNTHETIC corpus at run time (`vpaudit synth-corpus`: espeak-ng and flite "
	 "voices reading Brown sentences) instead of train/enroll/trial; reports label it "
	 "simulated",
	 VPA_AT(struct vpa_anon_audio_opts, synthetic), VPA_MARK(struct vpa_anon_audio_opts, synthetic_at)},
	{"anonymise", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &vpa_anon_anonymise_schema,
	 "{method: mcadams, low: 0.5, high: 0.9}",
	 "make the anonymised sets with a built-in signal anonymiser (instead of *_anon "
	 "directories), a coefficient per speaker (anon_level_spk) or utterance (anon_level_utt)",
	 VPA_AT(struct vpa_anon_audio_opts, anonymise), VPA_MARK(struct vpa_anon_audio_opts, anonymise_at)},
	{"train", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/train",
	 "Kaldi data directory (wav.scp, utt2spk): the attacker's original training audio",
	 VPA_AT(struct vpa_anon_audio_opts, train), VPA_MARK(struct vpa_anon_audio_opts, train_at)},
	{"train_anon", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/train_anon",
	 "the same utterances anonymised (semi-informed attacker)",
	 VPA_AT(struct vpa_anon_audio_opts, train_anon), VPA_MARK(struct vpa_anon_audio_opts, train_anon_at)},
	{"enroll", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/enroll",
	 "original enrolment audio (spk2gender)",
	 VPA_AT(struct vpa_anon_audio_opts, enroll), VPA_MARK(struct vpa_anon_audio_opts, enroll_at)},
	{"enroll_anon", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/enroll_anon",
	 "enrolment anonymised (lazy- and semi-informed)",
	 VPA_AT(struct vpa_anon_audio_opts, enroll_anon), VPA_MARK(struct vpa_anon_audio_opts, enroll_anon_at)},
	{"trial", VPA_K_PATHS, 0, NULL, -INF, INF, 0, NULL, NULL,
	 "[libri_dev_trials_f, libri_dev_trials_m]",
	 "original trial audio (spk2gender): a data directory, or a list of them used as one "
	 "set (VoicePrivacy's trials_f and trials_m directories; each directory's own `trials` "
	 "file is then the trials list unless `trials` is given)",
	 VPA_AT(struct vpa_anon_audio_opts, trial), VPA_MARK(struct vpa_anon_audio_opts, trial_at)},
	{"trial_anon", VPA_K_PATHS, 0, NULL, -INF, INF, 0, NULL, NULL,
	 "[libri_dev_trials_f_anon, libri_dev_trials_m_anon]",
	 "trial audio anonymised (every attacker but the baseline): one directory per `trial` "
	 "directory, in the same order",
	 VPA_AT(struct vpa_anon_audio_opts, trial_anon), VPA_MARK(struct vpa_anon_audio_opts, trial_anon_at)},
	{"enroll_informed", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL,
	 "data/enroll_informed",
	 "enrolment anonymised with the trial speakers' own pseudo-speakers or coefficients "
	 "(informed attacker; made by `anonymise` when built in)",
	 VPA_AT(struct vpa_anon_audio_opts, enroll_informed), VPA_MARK(struct vpa_anon_audio_opts, enroll_informed_at)},
	{"enrolls", VPA_K_PATH, 0, NULL, -INF, INF, 0, NULL, NULL, "data/enroll/enrolls",
	 "VoicePrivacy `enrolls`: the enrolment utterances to use (default: all)",
	 VPA_AT(struct vpa_anon_audio_opts, enrolls), VPA_MARK(struct vpa_anon_audio_opts, enrolls_at)},
	{"trials", VPA_K_PATHS, 0, NULL, -INF, INF, 0, NULL, NULL, "data/trial/trials_f",
	 "VoicePrivacy trials list `enroll_spk test_utt target|nontarget`, or a list of such "
	 "files used together (a trial named twice is an error); default: the `trials` files "
	 "of the `trial` directories when `trial` is a list, else every same-gender pair "
	 "(which needs spk2gender).  Per-gender records are named after it (`per_gender`)",
	 VPA_AT(struct vpa_anon_audio_opts, trials), VPA_MARK(struct vpa_anon_audio_opts, trials_at)},
	{"hyp", VPA_K_PATHS, 0, NULL, -INF, INF, 0, NULL, NULL, "asr/trial.hyp",
	 "your ASR's hypotheses on the original trials (Kaldi `text`): WER against the trial "
	 "directory's `text`; with a list of `trial` directories, one file per directory in "
	 "the same order (the counts add up)",
	 VPA_AT(struct vpa_anon_audio_opts, hyp), VPA_MARK(struct vpa_anon_audio_opts, hyp_at)},
	{"hyp_anon", VPA_K_PATHS, 0, NULL, -INF, INF, 0, NULL, NULL, "asr/trial_anon.hyp",
	 "your ASR's hypotheses on the anonymised trials: WER against the same reference(s)",
	 VPA_AT(struct vpa_anon_audio_opts, hyp_anon), VPA_MARK(struct vpa_anon_audio_opts, hyp_anon_at)},
	{"asr", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &vpa_anon_asr_schema,
	 "{recogniser: pocketsphinx}",
	 "vpaudit's own speech recogniser on the original and the anonymised trials instead "
	 "of `hyp`/`hyp_anon` files: WER against the trial directory's `text` as for them, the "
	 "records naming the recogniser, its version and model (targets/anon_asr.c)",
	 VPA_AT(struct vpa_anon_audio_opts, asr), VPA_MARK(struct vpa_anon_audio_opts, asr_at)},
	{"wer_normalise", VPA_K_ENUM, 0, "vpc", -INF, INF, 0, "vpc|upper|punct|none", NULL, "none",
	 "the words of `text` and `hyp`/`hyp_anon` before the WER (audio/anon.h): vpc = upper "
	 "case and punctuation as word breaks (an apostrophe inside a word kept), as the "
	 "VoicePrivacy Challenge scores; upper or punct alone; none = as written (compute-wer)",
	 VPA_AT(struct vpa_anon_audio_opts, wer_normalise), VPA_MARK(struct vpa_anon_audio_opts, wer_normalise_at)},
	{"wer_strict", VPA_K_BOOL, 0, "false", -INF, INF, 0, NULL, NULL, "true",
	 "a trial utterance without a hypothesis is an error; by default it is scored as all "
	 "deletions with a warning (compute-wer --mode=all; the count is in results.json)",
	 VPA_AT(struct vpa_anon_audio_opts, wer_strict), VPA_MARK(struct vpa_anon_audio_opts, wer_strict_at)},
	{"rho_f0", VPA_K_BOOL, 0, "true", -INF, INF, 0, NULL, NULL, "false",
	 "pitch correlation rho_F0 (VPC 2022) of every trial utterance with its anonymised "
	 "version (YIN pitch tracker, audio/anon.h), mean over the utterances",
	 VPA_AT(struct vpa_anon_audio_opts, rho_f0), VPA_MARK(struct vpa_anon_audio_opts, rho_f0_at)},
	{"level", VPA_K_ENUM, 0, "anon_level_spk", -INF, INF, 0,
	 "anon_level_spk|anon_level_utt", NULL, "anon_level_utt",
	 "how the enrolment/trial sets were anonymised (VoicePrivacy protocol switch); "
	 "recorded in the report",
	 VPA_AT(struct vpa_anon_audio_opts, level), VPA_MARK(struct vpa_anon_audio_opts, level_at)},
	{"extractor", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &vpa_anon_extractor_schema,
	 "{loss: aam, epochs: 20}", "the x-vector extractor trained in C (audio/xvector.h)",
	 VPA_AT(struct vpa_anon_audio_opts, extractor), VPA_MARK(struct vpa_anon_audio_opts, extractor_at)},
	{"onnx", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &vpa_anon_onnx_schema,
	 "{model: ecapa.onnx, options: [--num-mel-bins=80]}",
	 "ASV_eval: your ONNX speaker extractor and its front-end (the keys of "
	 "`import.extractor`, as `vpaudit embed`) instead of the one trained in C; "
	 "ASV_eval^anon is then trained in C from scratch on train_anon (`extractor:`), "
	 "unless `onnx_anon` gives it",
	 VPA_AT(struct vpa_anon_audio_opts, onnx), VPA_MARK(struct vpa_anon_audio_opts, onnx_at)},
	{"ser", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &vpa_anon_ser_schema,
	 "{model: ser.onnx, labels: emotions.txt, data: iemocap_dev, data_anon: iemocap_dev_b2}",
	 "utility: an utterance classifier (the VPC's speech emotion recogniser, ONNX) on a "
	 "labelled data set and its anonymised copy: UAR (gateable as uar_anon), accuracy, "
	 "per-class recall, confusion matrix (as `vpaudit classify`)",
	 VPA_AT(struct vpa_anon_audio_opts, ser), VPA_MARK(struct vpa_anon_audio_opts, ser_at)},
	{"onnx_anon", VPA_K_MAP, 0, NULL, -INF, INF, 0, NULL, &vpa_anon_onnx_schema,
	 "{model: ecapa_anon.onnx, options: [--num-mel-bins=80]}",
	 "ASV_eval^anon: your ONNX extractor trained on anonymised speech instead of the one "
	 "vpaudit trains in C on train_anon (semi-informed and informed attackers)",
	 VPA_AT(struct vpa_anon_audio_opts, onnx_anon), VPA_MARK(struct vpa_anon_audio_opts, onnx_anon_at)},
	{NULL},
};
const struct vpa_schema vpa_anon_audio_schema = {"audio", audio_keys, sizeof(struct vpa_anon_audio_opts)};
