/*
 * audio/synth_ali.h - phone alignments of the synthetic corpus from the
 * synthesisers' own timing (issue 32 item 2; audio/synth_ali.c).  Internal
 * to audio/ and tools/espeak_phones.c (vpaudit-espeak-phones).
 */
#ifndef VPA_SYNTH_ALI_H
#define VPA_SYNTH_ALI_H

#include <stddef.h>

#include "base/base.h"

/* Longest phone name kept (espeak-ng mnemonics are at most 8 bytes). */
#define VPA_PHONE_MAX 16

/*
 * The inventory rule (audio/README.md): a synthesiser's phone name as the
 * corpus writes it.  flite: "pau" is SIL, every other name as flite prints it.
 * espeak-ng: names starting with '_' (pauses) are SIL; otherwise the mnemonic
 * with the stress marks ' , % = and the length mark : removed (espeak-ng -x
 * prints stress marks before the vowels; the phoneme events never do).
 * Writes "" for a name that is empty after that (a bare mark of -x).
 */
void vpa_synth_phone_name(const char *raw, int flite, char out[VPA_PHONE_MAX]);

/* The espeak-ng program's trailing samples that tools/espeak_phones.c
 * (vpaudit-espeak-phones) allows after libespeak-ng's: at most
 * VPA_ESPEAK_TAIL_S seconds, no sample beyond +-VPA_ESPEAK_TAIL_PEAK. */
#define VPA_ESPEAK_TAIL_S 0.5
#define VPA_ESPEAK_TAIL_PEAK 3277 /* -20 dBFS */

/*
 * One utterance's phones on the output samples, from the raw timing:
 *   espeak (flite 0): the lines of vpaudit-espeak-phones (starts in ms);
 *   flite (flite 1): flite's -psdur text ("pau:0.184 dh:0.236 ...", each
 *     segment's end in seconds).
 * Raw times are of the synthesiser's file at raw_rate; the corpus reads that
 * file as if recorded at raw_rate x scale and resamples to out_rate, so a
 * raw time t lands at output sample round(t x out_rate / scale).  n is the
 * utterance's output length in samples.  Appends "PHONE B0 B1\n" lines
 * (mapped names, output sample boundaries) to seg: contiguous from 0 to n,
 * SIL before the first phone, after the last and for every pause, adjacent
 * SILs merged.  Errors: no phone, times going backwards, a phone (not a
 * pause) that starts after the audio ends.
 */
int vpa_synth_segments(const char *raw, int flite, double scale, double out_rate, size_t n,
		       struct vpa_buf *seg, struct vpa_err *err);

#endif
