/*
 * audio/xvector.h - a speaker-embedding extractor trained by vpaudit in C
 * (the ASV_eval / ASV_eval^anon of the VoicePrivacy evaluation, issue 17) on
 * the frames of the audio front-end (fbank/MFCC after CMVN/VAD), one of two
 * architectures (vpa_xvec_opts.arch):
 *
 * VPA_XVEC_TDNN: an x-vector network (Snyder et al., ICASSP 2018, table 1,
 * scaled down):
 *
 *   tdnn H {-2..2}, relu, batchnorm
 *   tdnn H {-2,0,2}, relu, batchnorm
 *   tdnn H {-3,0,3}, relu, batchnorm
 *   tdnn H {0}, relu, batchnorm
 *   tdnn 2H {0}, relu, batchnorm
 *   statspool                         -> (1, 4H) per utterance
 *   dense E "embedding"               <- the x-vector (the embedding layer "a")
 *
 * VPA_XVEC_ECAPA: a small ECAPA-TDNN of C channels and Res2Net scale s
 * (Desplanques et al., Interspeech 2020; audio/ecapa.h has the network and
 * where it differs from the paper), the embedding its last dense layer.
 *
 * trained as a speaker classifier on random chunks of the training
 * utterances with either
 *   softmax: relu, batchnorm, dense K on the embedding, softmax cross-entropy;
 *   aam:     AAM-softmax (learn/nn.h vpa_nn_aam_softmax) with margin m and
 *            scale s on the embedding against K class centres.
 * Adam, mini-batches of whole chunks.
 *
 * Training is data-parallel and deterministic (audio/xvector_train.c): each
 * mini-batch of b chunks is cut into n = min(shards, max(1, b / 8)) shards
 * of consecutive chunks (shard i: chunks i b / n .. (i+1) b / n - 1), a
 * number that depends on the options and the batch only, never on the
 * thread count (8 chunks at least: batch norm, below); each shard's
 * trunk forward and backward runs on whichever of `threads` threads takes it,
 * on the shard's own copy of the trunk (every BLAS product on one thread);
 * the classifier head (AAM or softmax) runs once on the whole batch's
 * embeddings; the shard gradients are added in shard order into the
 * trunk's gradient and one Adam step follows.  So the trained weights are
 * byte-identical for any number of threads.  Batch norm in the trunk
 * normalises over each shard's frames (its running statistics become the
 * mean of the shards' updates), as PyTorch's DistributedDataParallel without
 * SyncBatchNorm does; shards 1 is the whole-batch statistics.  Extraction
 * shares utterances out to threads, each with its own copy of the network
 * (EVAL mode, full utterances), so embeddings do not depend on the thread
 * count either.
 */
#ifndef VPA_XVECTOR_H
#define VPA_XVECTOR_H

#include "audio/audio.h"
#include "audio/ecapa.h"
#include "base/base.h"
#include "formats/embset.h"
#include "learn/nn.h"

enum vpa_xvec_loss { VPA_XVEC_SOFTMAX = 0, VPA_XVEC_AAM = 1 };
enum vpa_xvec_arch { VPA_XVEC_TDNN = 0, VPA_XVEC_ECAPA = 1 };

struct vpa_xvec_opts {
	int arch;         /* enum vpa_xvec_arch: TDNN (x-vector) */
	size_t hidden;    /* x-vector: H: 128 */
	size_t channels;  /* ECAPA: C: 64 */
	size_t res2_scale; /* ECAPA: Res2Net scale s (divides C): 4 */
	size_t emb_dim;   /* E: 64 */
	int loss;         /* enum vpa_xvec_loss: AAM */
	double margin;    /* AAM margin m (radians): 0.2 */
	double scale;     /* AAM scale s: 30 */
	int epochs;       /* passes over the training utterances: 30 */
	size_t batch;     /* chunks per step: 32 */
	size_t chunk;     /* frames per training chunk (shorter utterances whole): 200 */
	double lr;        /* Adam learning rate: 2e-3 (decayed linearly to lr/10) */
	uint64_t seed;    /* initialisation and chunk draws: 1 */
	int verbose;      /* progress line per epoch on stderr */
	size_t shards;    /* shards per mini-batch (at most batch / 8 used):
			     VPA_XVEC_SHARDS; part of the result, unlike threads */
	int threads;      /* threads computing the shards: 1 (the weights are
			     the same for any value) */
};
/* 4 keeps 2 or 4 threads evenly loaded, and with the default batch of 32
 * leaves 8 chunks per shard: the ECAPA's batch norm over pooled vectors
 * then still sees 8 rows (more shards would feed more cores, with noisier
 * batch statistics) */
#define VPA_XVEC_SHARDS 4
/* the fewest chunks a shard gets (xvector_train.c says why) */
#define VPA_XVEC_SHARD_MIN 8
void vpa_xvec_opts_init(struct vpa_xvec_opts *o);

/* A trained extractor (owned parts). */
struct vpa_xvec {
	int arch;                 /* enum vpa_xvec_arch */
	struct vpa_nn *net;       /* x-vector: trunk up to the embedding layer, else NULL */
	struct vpa_ecapa *ecapa;  /* ECAPA-TDNN (audio/ecapa.h), else NULL */
	size_t emb_dim;
	double final_loss;   /* mean training loss of the last epoch */
};
void vpa_xvec_init(struct vpa_xvec *x);
void vpa_xvec_release(struct vpa_xvec *x);
/* Whether x holds a trained network; its input dimension; "xvector" / "ecapa". */
int vpa_xvec_trained(const struct vpa_xvec *x);
size_t vpa_xvec_input_dim(const struct vpa_xvec *x);
const char *vpa_xvec_arch_name(int arch);
/* The x-vector TDNN trunk above (parameters zero): the one recipe for training
 * and for rebuilding a saved extractor (audio/xvector_io.h). */
struct vpa_nn *vpa_xvec_tdnn_new(size_t dim, size_t hidden, size_t emb_dim);
/* The trunk of either architecture: forward to the (in->n_seq, emb_dim)
 * embeddings *emb (borrowed until the next forward); its parameter holders
 * (the x-vector's one network or the ECAPA's parts), in a fixed order. */
int vpa_xvec_forward(struct vpa_xvec *x, const struct vpa_nn_batch *in, enum vpa_nn_mode mode,
		     const float **emb /* OUT */, struct vpa_err *err);
size_t vpa_xvec_n_nets(const struct vpa_xvec *x);
struct vpa_nn *vpa_xvec_net(struct vpa_xvec *x, size_t i);

/*
 * Train on n utterances' features (feats[i] rows x dim, the same dim for
 * all) with speaker labels[i] < n_class.  init non-NULL: fine-tune from that
 * extractor's trunk (same dim, embedding size and architecture: its own sizes
 * are kept, o->hidden/channels/res2_scale are not used) with a new classifier head.
 * Errors (VPA_EINPUT): fewer than 2 classes, a label out of range, mixed
 * feature dimensions, no utterance with a frame.
 */
int vpa_xvec_train(const struct vpa_fmat *feats, const uint32_t *labels, size_t n,
		   size_t n_class, const struct vpa_xvec_opts *o, const struct vpa_xvec *init,
		   struct vpa_xvec *out /* OUT, release with vpa_xvec_release */,
		   struct vpa_err *err);

/*
 * Embeddings of n utterances (whole) into out (n, emb_dim), on `threads`
 * threads.  An utterance without a frame is an error naming ids[i] (ids may
 * be NULL: "utterance I").
 */
int vpa_xvec_embed(const struct vpa_xvec *x, const struct vpa_fmat *feats,
		   const char *const *ids, size_t n, int threads, float *out,
		   struct vpa_err *err);

/* ------------------------------------------------ Kaldi data directories */

/*
 * The features of every utterance of a Kaldi data directory (wav.scp,
 * utt2spk required; spk2gender optional), computed by the front-end f on
 * `threads` threads.  Utterances keep the directory's order.
 */
struct vpa_xvec_set {
	char *dir;              /* owned copy of the path */
	size_t n;
	char **utt, **spk;      /* (n) owned */
	char *gender;           /* (n) 'm', 'f' or 0 per utterance, owned */
	struct vpa_fmat *feats; /* (n) owned */
};
void vpa_xvec_set_init(struct vpa_xvec_set *s);
void vpa_xvec_set_release(struct vpa_xvec_set *s);

/*
 * Errors: those of the data directory and the audio ("DIR/wav.scp:3: cannot
 * open ..."), audio at another rate than the front-end's ("DIR: utterance
 * 'u1': sample rate 8000 Hz differs from --sample-frequency=16000"), no
 * utt2spk ("DIR: utt2spk is required (the speaker of every utterance)").
 */
int vpa_xvec_set_load(const char *dir, const struct vpa_feat *f, int threads,
		      struct vpa_xvec_set *out, struct vpa_err *err);

/*
 * An anonymised set must hold exactly the utterances of its original, with
 * the same speakers: error "ANON: utterance 'u3' of ORIG is missing" (or
 * "... is not in ORIG", "... has speaker 'b' in ANON but 'a' in ORIG").
 */
int vpa_xvec_set_match(const struct vpa_xvec_set *orig, const struct vpa_xvec_set *anon,
		       struct vpa_err *err);

/* Speaker labels 0 .. *n_class-1 in order of first appearance (labels: (n)). */
void vpa_xvec_set_labels(const struct vpa_xvec_set *s, uint32_t *labels, size_t *n_class);

/* Embed every utterance of s with x into out (an initialised, empty set). */
int vpa_xvec_set_embed(const struct vpa_xvec *x, const struct vpa_xvec_set *s, int threads,
		       struct vpa_embset *out, struct vpa_err *err);

/*
 * The built-in corpus and anonymisers for `source: audio` (thin wrappers over
 * audio/anon.h, whose names clash with targets/anon.h's):
 * vpa_xvec_synth = vpa_synth_corpus with those sizes; vpa_xvec_anonymise =
 * vpa_anonymise_datadir with the anonymiser `kind` (enum vpa_anon_kind: McAdams,
 * bilinear warping or pitch shifting), a coefficient (alpha, or semitones)
 * drawn from [lo, hi) per speaker (utt_level 0) or utterance.
 * vpa_xvec_join: "a/b" (caller frees); vpa_xvec_rm_tree removes a folder.
 */
int vpa_xvec_synth(int speakers, int utts, const char *brown, uint64_t seed, const char *out,
		   int threads, struct vpa_err *err);
int vpa_xvec_anonymise(const char *in, const char *out, int kind, int utt_level, double lo,
		       double hi, uint64_t seed, int threads, struct vpa_err *err);
char *vpa_xvec_join(const char *a, const char *b);

/* Utility (issue 17 item 4), wrappers over audio/anon.h as well. */
struct vpa_xvec_wer {
	double wer; /* percent */
	size_t ref_words, ins, del, sub, n_utt;
	size_t n_absent; /* REF utterances not in HYP (scored as deletions) */
};
/* vpa_wer_files_opts (audio/anon.h): REF and HYP Kaldi text files, words
 * normalised as `norm` says (vpc|upper|punct|none); a REF utterance missing
 * from HYP scored as deletions (n_absent), or an error when strict. */
int vpa_xvec_wer(const char *ref, const char *hyp, const char *norm, int strict,
		 struct vpa_xvec_wer *out, struct vpa_err *err);
/*
 * rho_F0 (VPC 2022) of every utterance of the original directory against the
 * same utterance of the anonymised one (YIN pitch, audio/anon.h defaults):
 * *mean gets the mean over the utterances where it is defined (at least 2
 * frames voiced in both, F0 not constant), *n_used their number (0: *mean is
 * NaN and the caller reports none).  Errors: unreadable audio, a missing
 * utterance.
 */
int vpa_xvec_rho_f0(const char *orig, const char *anon, int threads, double *mean,
		    size_t *n_used, struct vpa_err *err);
/* The same and *std, their population standard deviation (VPC 2022's
 * "Pitch correlation for DATA: mean=M std=S"). */
int vpa_xvec_rho_f0_std(const char *orig, const char *anon, int threads, double *mean,
			double *std, size_t *n_used, struct vpa_err *err);
void vpa_xvec_rm_tree(const char *path);

#endif
