/*
 * audio/synth_ali.c - phone timing of the built-in synthetic corpus
 * (issue 32 item 2): frame targets for acoustic models come from the
 * synthesiser's own phoneme timing, not from a recogniser or a simulator.
 *
 *   espeak-ng: the audio is made by the espeak-ng program (audio/synth.c:
 *     the corpus audio stays what it was); the timing comes from
 *     libespeak-ng run with the same voice, pitch and rate and
 *     espeakINITIALIZE_PHONEME_EVENTS, each espeakEVENT_PHONEME giving its
 *     phoneme's start (audio_position, ms of the output).  The library keeps
 *     state between syntheses (a second utterance in one process gives other
 *     samples than the program), so audio/synth.c runs it in a fresh process
 *     per utterance: the program vpaudit-espeak-phones (tools/espeak_phones.c,
 *     the only one linked to libespeak-ng, GPL-3+: vpaudit itself is not), and
 *     the library's samples are checked against the program's file: they
 *     must be its first samples exactly.  The program's file goes on after
 *     them: measured on the 448 espeak-ng utterances of `synth-corpus
 *     --speakers 60 --utts 8 --seed 1` (espeak-ng 1.51), never a differing
 *     sample, then 4503..9265 more samples at 22050 Hz (0.20..0.42 s), all
 *     zero for the +f1, +m1 and +m3..+m7 variants, a decaying ring-out of
 *     the last phone for +f2..+f5 and +m2, peak |sample| 1231 (-28.5 dBFS).
 *     The rule allows at most VPA_ESPEAK_TAIL_S seconds of samples within
 *     +-VPA_ESPEAK_TAIL_PEAK (-20 dBFS, 2.7x the largest seen): anything
 *     else means the timing would not be the audio's, and the utterance
 *     fails.  Those samples are labelled SIL (after the last pause event).
 *   flite: the program's own -psdur output (its Segment relation, each
 *     segment's end time), printed by the same call that writes the audio.
 *     Measured on the 32 flite utterances of the 60 x 8 corpus (seed 1): the
 *     last segment ("pau") ends 0..5 ms after the file's end for slt, rms
 *     and awb; for kal16 (diphone) the file stops 92..103 ms (output time)
 *     before that end, inside the final pau (its speech ends on time: one
 *     utterance checked by its energy).  So the final SIL is cut at the audio's end;
 *     a phone other than a pause starting after the end is an error.
 */
#include "audio/synth_ali.h"
#include "audio/audio.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vpa_synth_phone_name(const char *raw, int flite, char out[VPA_PHONE_MAX])
{
	if (flite ? !strcmp(raw, "pau") : raw[0] == '_') {
		snprintf(out, VPA_PHONE_MAX, "SIL");
		return;
	}
	size_t k = 0;
	for (const char *p = raw; *p && k + 1 < VPA_PHONE_MAX; p++)
		if (flite || !strchr("',%=:", *p))
			out[k++] = *p;
	out[k] = 0;
}


/* ------------------------------------------------------------ segments */

struct segs {
	char (*name)[VPA_PHONE_MAX];
	double *t; /* raw start, s */
	size_t n, cap;
};

static void segs_add(struct segs *s, const char *name, double t)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->name = xrealloc(s->name, xmul(s->cap, sizeof(*s->name)));
		s->t = xrealloc(s->t, xmul(s->cap, sizeof(double)));
	}
	snprintf(s->name[s->n], VPA_PHONE_MAX, "%s", name);
	s->t[s->n++] = t;
}

int vpa_synth_segments(const char *raw, int flite, double scale, double out_rate, size_t n,
		       struct vpa_buf *seg, struct vpa_err *err)
{
	struct segs s = {NULL, NULL, 0, 0};
	const char *p = raw;
	char nm[64], mapped[VPA_PHONE_MAX];
	int used, rc = 0;
	if (flite) {
		double prev = 0, end;
		while (sscanf(p, " %63[^: \n]:%lf%n", nm, &end, &used) == 2) {
			if (!(end >= prev)) {
				rc = vpa_fail(err, VPA_EIO, NULL,
					      "flite -psdur: segment '%s' ends at %g, before %g", nm, end,
					      prev);
				break;
			}
			vpa_synth_phone_name(nm, 1, mapped);
			segs_add(&s, mapped, prev); /* a segment starts where the one before ends */
			prev = end;
			p += used;
		}
	} else {
		int ms;
		double prev = 0;
		while (sscanf(p, "%63s %d\n%n", nm, &ms, &used) == 2 && strcmp(nm, "END")) {
			if (ms / 1000.0 < prev) {
				rc = vpa_fail(err, VPA_EIO, NULL,
					      "libespeak-ng: phoneme '%s' starts at %d ms, before %g s", nm,
					      ms, prev);
				break;
			}
			vpa_synth_phone_name(nm, 0, mapped);
			if (mapped[0])
				segs_add(&s, mapped, prev = ms / 1000.0);
			p += used;
		}
	}
	if (!rc && !s.n)
		rc = vpa_fail(err, VPA_EIO, NULL, "%s gave no phone timing", flite ? "flite -psdur" :
			      "libespeak-ng");
	if (!rc) {
		/* boundaries on the output samples; SIL from 0 to the first phone's start */
		const char *cur = "SIL";
		size_t b0 = 0;
		for (size_t i = 0; i <= s.n && !rc; i++) {
			size_t b = n;
			if (i < s.n) {
				double x = floor(s.t[i] * out_rate / scale + 0.5);
				b = x < (double)n ? (size_t)x : n;
				if (b >= n && strcmp(s.name[i], "SIL")) {
					rc = vpa_fail(err, VPA_EIO, NULL,
						      "%s: phone '%s' starts at %g s, after the audio's end "
						      "(%g s)", flite ? "flite -psdur" : "libespeak-ng",
						      s.name[i], s.t[i] / scale, (double)n / out_rate);
					break;
				}
				if (!strcmp(s.name[i], "SIL") && !strcmp(cur, "SIL"))
					continue; /* one SIL for adjacent pauses */
			}
			if (b > b0 || strcmp(cur, "SIL")) /* zero-length SIL says nothing */
				vpa_buf_printf(seg, "%s %zu %zu\n", cur, b0, b);
			if (i < s.n) {
				cur = s.name[i];
				b0 = b;
			}
		}
	}
	free(s.name);
	free(s.t);
	return rc;
}
