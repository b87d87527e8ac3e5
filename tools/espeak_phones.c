/*
 * tools/espeak_phones.c - `vpaudit-espeak-phones VOICE PITCH SPEED WAVFILE`
 * (the text on stdin): libespeak-ng's phoneme timing for one espeak-ng
 * utterance of synth-corpus, in a process of its own (issue 32).
 *
 * Why a program of its own: the library keeps state between syntheses (only
 * the first synthesis of a process gives the espeak-ng program's samples), so
 * audio/synth.c runs this once per utterance; and libespeak-ng is GPL-3+:
 * linked here and nowhere else, it leaves the licence of vpaudit (which runs
 * this with fork/exec, as it runs the espeak-ng program) as it was.  The
 * program is built next to vpaudit by `make` and found there
 * (audio/synth.c; VPAUDIT_ESPEAK_PHONES names another path).
 *
 * Output on stdout: "NAME START_MS" per phoneme event (the library's raw
 * mnemonics, starts in ms of the library's output), then "END SAMPLES RATE";
 * or one line "error: MESSAGE" and exit status 1 (stdout is the only pipe
 * the caller reads).
 */
#include <espeak-ng/speak_lib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio.h"
#include "audio/synth_ali.h"

/* ------------------------------------------------------- libespeak-ng */

struct es_run {
	struct vpa_buf *out;
	const float *x; /* the program's samples (int16 scale) */
	size_t n_prog;
	size_t n_lib;
	long mismatch; /* first differing sample + 1, 0 none */
};

static int es_cb(short *wav, int n, espeak_EVENT *e)
{
	struct es_run *r = e->user_data;
	for (int i = 0; wav && i < n; i++) {
		size_t k = r->n_lib + (size_t)i;
		if (!r->mismatch && (k >= r->n_prog || lrintf(r->x[k]) != wav[i]))
			r->mismatch = (long)k + 1;
	}
	if (wav && n > 0)
		r->n_lib += (size_t)n;
	for (; e->type != espeakEVENT_LIST_TERMINATED; e++)
		if (e->type == espeakEVENT_PHONEME)
			/* id.string: up to 8 bytes, not terminated when all 8 are used */
			vpa_buf_printf(r->out, "%.8s %d\n", e->id.string, e->audio_position);
	return 0;
}

static int espeak_lib_phones(const char *voice, int pitch, int speed, const char *text,
			  const char *wav, struct vpa_buf *out, struct vpa_err *err)
{
	struct vpa_wave w;
	vpa_wave_init(&w);
	if (vpa_audio_read(wav, -1, &w, err))
		return -1;
	struct vpa_buf ev;
	vpa_buf_init(&ev);
	struct es_run r = {&ev, w.x, w.n, 0, 0};
	int rc = 0;
	int rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, NULL,
				     espeakINITIALIZE_PHONEME_EVENTS | espeakINITIALIZE_DONT_EXIT);
	if (rate <= 0)
		rc = vpa_fail(err, VPA_EIO, NULL, "libespeak-ng: cannot initialise");
	else if (rate != (int)w.rate)
		rc = vpa_fail(err, VPA_EIO, NULL, "libespeak-ng gives %d Hz, espeak-ng's file %g Hz",
			      rate, w.rate);
	if (!rc) {
		espeak_SetSynthCallback(es_cb);
		/* as the espeak-ng program (1.51) does: the voice by name, else as a language */
		espeak_VOICE vs;
		memset(&vs, 0, sizeof vs);
		vs.languages = voice;
		if (espeak_SetVoiceByName(voice) != EE_OK && espeak_SetVoiceByProperties(&vs) != EE_OK)
			rc = vpa_fail(err, VPA_EIO, NULL, "libespeak-ng: no voice '%s'", voice);
		else if (espeak_SetParameter(espeakPITCH, pitch, 0) != EE_OK ||
			 espeak_SetParameter(espeakRATE, speed, 0) != EE_OK ||
			 espeak_Synth(text, strlen(text) + 1, 0, POS_CHARACTER, 0, espeakCHARS_UTF8, NULL,
				      &r) != EE_OK ||
			 espeak_Synchronize() != EE_OK)
			rc = vpa_fail(err, VPA_EIO, NULL, "libespeak-ng: synthesis failed (voice %s)",
				      voice);
		espeak_Terminate();
	}
	if (!rc && r.mismatch)
		rc = vpa_fail(err, VPA_EIO, NULL,
			      "libespeak-ng's samples differ from espeak-ng's file at sample %ld (of "
			      "%zu): its phone timing would not be the audio's",
			      r.mismatch - 1, w.n);
	if (!rc && (double)(w.n - r.n_lib) > VPA_ESPEAK_TAIL_S * w.rate)
		rc = vpa_fail(err, VPA_EIO, NULL,
			      "espeak-ng's file goes on %zu samples after libespeak-ng's %zu (at most "
			      "%g s allowed)", w.n - r.n_lib, r.n_lib, VPA_ESPEAK_TAIL_S);
	for (size_t k = r.n_lib; !rc && k < w.n; k++)
		if (fabsf(w.x[k]) > VPA_ESPEAK_TAIL_PEAK)
			rc = vpa_fail(err, VPA_EIO, NULL,
				      "espeak-ng's file after libespeak-ng's end is not near-silence: "
				      "sample %zu is %g (at most %d allowed)", k, (double)w.x[k],
				      VPA_ESPEAK_TAIL_PEAK);
	if (!rc) {
		vpa_buf_add(out, ev.data, ev.len);
		vpa_buf_printf(out, "END %zu %d\n", r.n_lib, rate);
	}
	vpa_buf_release(&ev);
	vpa_wave_release(&w);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		printf("error: usage: vpaudit-espeak-phones VOICE PITCH SPEED WAVFILE < TEXT\n");
		return 1;
	}
	char *end1, *end2;
	long pitch = strtol(argv[2], &end1, 10), speed = strtol(argv[3], &end2, 10);
	if (*end1 || *end2 || end1 == argv[2] || end2 == argv[3] || pitch < 0 || pitch > 99 ||
	    speed < 80 || speed > 500) {
		printf("error: vpaudit-espeak-phones: bad pitch '%s' or speed '%s'\n", argv[2], argv[3]);
		return 1;
	}
	/* the sentence: one line of at most 64 KiB (synth-corpus's are 5..16 words) */
	struct vpa_buf t;
	vpa_buf_init(&t);
	char chunk[4096];
	size_t got;
	while ((got = fread(chunk, 1, sizeof chunk, stdin)) > 0 && t.len <= 65536)
		vpa_buf_add(&t, chunk, got);
	if (t.len > 65536) {
		printf("error: vpaudit-espeak-phones: text longer than 64 KiB\n");
		vpa_buf_release(&t);
		return 1;
	}
	struct vpa_buf out;
	vpa_buf_init(&out);
	struct vpa_err err;
	vpa_err_init(&err);
	int rc = espeak_lib_phones(argv[1], (int)pitch, (int)speed, vpa_buf_str(&t), argv[4], &out,
				       &err);
	if (rc)
		printf("error: %s\n", err.msg);
	else
		fwrite(out.data, 1, out.len, stdout);
	vpa_buf_release(&out);
	vpa_buf_release(&t);
	return rc ? 1 : 0;
}
