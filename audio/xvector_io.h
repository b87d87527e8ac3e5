/*
 * audio/xvector_io.h - an extractor trained by audio/xvector.c (x-vector TDNN
 * or ECAPA-TDNN) saved to a folder and loaded again (issue 31 item 9), so that
 * a scenario reuses ASV_eval / ASV_eval^anon instead of training them again.
 *
 * The folder (format "vpaudit-extractor 1"):
 *
 *   extractor.yaml   one `key: value` per line: the architecture and its sizes,
 *                    the front-end the features were made with (features,
 *                    num_mel_bins, num_ceps, cmvn, vad, sample_frequency,
 *                    frame_length, frame_shift), how it was trained (loss,
 *                    epochs, final_loss, semi_informed), `nets: N`
 *   net0 .. netN-1   learn/nn model folders (model.yaml + one float64 .npy per
 *                    tensor, learn/NN.md): the x-vector's one trunk, or the
 *                    ECAPA-TDNN's parameter holders in vpa_ecapa_net order
 *
 * Why vpaudit's own model folders and not ONNX: a reloaded extractor runs the
 * very kernels it was trained with on the very float32 values (float64 .npy
 * holds every float32 exactly), so the records of a reuse are identical, not
 * equal to a tolerance; both architectures' parts (TDNN edges that replicate
 * the first/last frame, the Res2 cascade, attentive pooling with its variance
 * floor) are stored as the C code computes them.  The .npy tensors are
 * readable by any numpy; targets/anon_extractor_onnx.c writes an ONNX model
 * beside the folder for other tools (equal to a float tolerance, not bit-equal).
 *
 * Loading rebuilds the network from extractor.yaml by the training code's own
 * recipe (vpa_xvec_tdnn_new, vpa_ecapa_new) and checks each net folder's
 * topology against it, so a folder edited by hand cannot load as another net.
 */
#ifndef VPA_XVECTOR_IO_H
#define VPA_XVECTOR_IO_H

#include "audio/xvector.h"

struct vpa_xvec_meta {
	char role[32];        /* "asv_eval" or "asv_eval_anon" (informative) */
	int arch;             /* enum vpa_xvec_arch */
	size_t input_dim, emb_dim;
	size_t hidden;        /* x-vector H */
	struct vpa_ecapa_opts ecapa; /* ECAPA: resolved sizes (channels, scale, se_dim, att_dim, mfa_dim) */
	/* the front-end (the scenario's `extractor` keys, then what they imply) */
	char features[8];     /* fbank | mfcc */
	long num_mel_bins, num_ceps; /* num_ceps 0 for fbank */
	char cmvn[8];         /* utt | none */
	int vad;
	double sample_frequency, frame_length, frame_shift; /* Hz, ms, ms */
	/* how it was trained (a reuse reports these again) */
	char loss[16];        /* aam | softmax */
	long epochs;
	double final_loss;
	char semi_informed[16]; /* ASV_eval^anon: retrain | finetune; else "" */
};
void vpa_xvec_meta_init(struct vpa_xvec_meta *m);

/*
 * Write x into dir (created; an existing dir is replaced whole, after the new
 * one is complete: written as dir.tmp.PID and renamed).  m gives the fields
 * above; its arch and sizes must be x's (they are taken from x).
 */
int vpa_xvec_save(struct vpa_xvec *x, const struct vpa_xvec_meta *m, const char *dir,
		  struct vpa_err *err);

/*
 * Read dir/extractor.yaml only (validation: no tensor read).  Errors
 * (VPA_EINPUT/VPA_EIO) name the file and line: "DIR/extractor.yaml: cannot
 * open: No such file or directory", "DIR/extractor.yaml:4: 'channels' must be
 * an integer in [2, 65536], got 'x'", a missing key, an unknown key.
 */
int vpa_xvec_meta_read(const char *dir, struct vpa_xvec_meta *m, struct vpa_err *err);

/*
 * Load the extractor of dir: its metadata (m, may be NULL) and the network
 * into out (release with vpa_xvec_release).  Errors: those of
 * vpa_xvec_meta_read and learn/nn's vpa_nn_load, and "DIR/net2/model.yaml:
 * the layers differ from the ecapa network DIR/extractor.yaml describes".
 */
int vpa_xvec_load(const char *dir, struct vpa_xvec *out, struct vpa_xvec_meta *m,
		  struct vpa_err *err);

#endif
