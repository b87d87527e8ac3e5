/*
 * targets/anon_extractor_io.h - `audio.extractor: {from, from_anon, save}` of
 * the target kind anonymised_speech (issue 31 item 9): ASV_eval and
 * ASV_eval^anon trained in C saved to a folder of the run's output, and
 * loaded from such a folder by a later scenario instead of being trained
 * again (audio/xvector_io.h holds the folder format).
 *
 * The front-end and the network's sizes travel with a saved extractor: a key
 * of `extractor` that is not written takes the saved extractor's value; a
 * written one that differs is an error at the key naming both values.
 */
#ifndef VPA_ANON_EXTRACTOR_IO_H
#define VPA_ANON_EXTRACTOR_IO_H

#include "audio/xvector_io.h"
#include "targets/anon.h"

/*
 * The extractor options in effect (out: a copy of *ex with the keys not
 * written taken from the saved extractors), and the saved extractors'
 * metadata (meta[0] ASV_eval from `from`, meta[1] ASV_eval^anon from
 * `from_anon`; have[k] 1 when given).  file/dir: the scenario and its folder.
 * onnx_given[k]: `onnx` / `onnx_anon` written (then `from` / `from_anon` is
 * an error: both would give the same extractor).  Errors (VPA_EINPUT), one
 * line at the value: "x.yaml:9:20: `from`: DIR: expected a folder of an
 * extractor saved by vpaudit ...", "x.yaml:9:40: `num_mel_bins: 40` differs
 * from the saved ASV_eval's 30 (DIR/extractor.yaml): ...".
 */
int vpa_anon_extractor_resolve(const char *file, const char *dir,
			       const struct vpa_anon_extractor_opts *ex, const int onnx_given[2],
			       struct vpa_anon_extractor_opts *out, struct vpa_xvec_meta meta[2],
			       int have[2], struct vpa_err *err);

/*
 * Load the saved extractor k (0 ASV_eval, 1 ASV_eval^anon) of ex into *x,
 * checking that its input dimension is feat_dim (the front-end's).  Errors
 * blame the `from` / `from_anon` value.
 */
int vpa_anon_extractor_load(const char *file, const char *dir,
			    const struct vpa_anon_extractor_opts *ex, int k, size_t feat_dim,
			    struct vpa_xvec *x, struct vpa_xvec_meta *m, struct vpa_err *err);

/*
 * Write every extractor of x[0..1] that holds a network to ex->save/asv_eval
 * and ex->save/asv_eval_anon (relative to the current directory, as every
 * VPA_KF_WRITE key), with meta[k] (front-end and training).  Rank 0 only.
 */
int vpa_anon_extractor_save(const struct vpa_anon_extractor_opts *ex, struct vpa_xvec x[2],
			    const struct vpa_xvec_meta meta[2], struct vpa_err *err);

/*
 * The extractor x (x-vector TDNN or ECAPA-TDNN) written as an ONNX model
 * (opset 13) at path (targets/anon_extractor_onnx.c has the graphs), its
 * front-end as the `vpaudit embed` options in metadata_props
 * (vpaudit.embed_options, the text vpa_anon_extractor_embed_options makes).
 * VPA_EINPUT for a network with a layer it cannot express (none of vpaudit's).
 */
int vpa_anon_extractor_onnx(struct vpa_xvec *x, const struct vpa_xvec_meta *m, const char *path,
			    struct vpa_err *err);
void vpa_anon_extractor_embed_options(const struct vpa_xvec_meta *m, char *buf, size_t sz);

#endif
