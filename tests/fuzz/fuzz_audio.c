/*
 * tests/fuzz/fuzz_audio.c - the audio reader (libsndfile through our
 * checks: channels, truncation, non-finite samples) on arbitrary bytes, and
 * the fbank pipeline on what it accepts at 8 or 16 kHz.  Success means
 * finite samples and finite features; failure a one-line error.  Replayed
 * over tests/fuzz/corpus/audio/ by `make test`.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int ch = -1; ch <= 0; ch++) {
		struct vpa_wave w;
		struct vpa_err err;
		vpa_wave_init(&w);
		vpa_err_init(&err);
		int rc = vpa_audio_parse("fuzz.wav", data, size, ch, &w, &err);
		if (rc) {
			if (err.status == 0 || err.msg[0] == 0 || strchr(err.msg, '\n'))
				abort();
			continue;
		}
		if (w.n == 0 || !(w.rate > 0))
			abort();
		for (size_t i = 0; i < w.n; i++)
			if (!isfinite(w.x[i]))
				abort();
		if ((w.rate == 16000 || w.rate == 8000) && w.n < 1000000) {
			struct vpa_feat_opts o;
			vpa_feat_opts_init(&o, VPA_FEAT_MFCC);
			o.sample_frequency = w.rate;
			o.snip_edges = 0;
			struct vpa_feat *f = vpa_feat_new(&o, &err);
			struct vpa_fmat m;
			if (!f)
				abort();
			if (vpa_feat_apply(f, &w, "fuzz", &m, &err)) {
				if (!strstr(err.msg, "not finite"))
					abort();
				vpa_fmat_init(&m);
			}
			for (size_t i = 0; i < m.rows * m.cols; i++)
				if (!isfinite(m.x[i]))
					abort();
			vpa_fmat_release(&m);
			vpa_feat_free(f);
		}
		vpa_wave_release(&w);
	}
	return 0;
}
