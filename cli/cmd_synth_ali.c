/*
 * cli/cmd_synth_ali.c - the hidden `vpaudit __espeak-phones VOICE PITCH SPEED
 * WAVFILE` (text on stdin): libespeak-ng's phoneme timing for one utterance
 * in a process of its own.  audio/synth.c re-executes vpaudit (/proc/self/exe)
 * with it for every espeak-ng utterance of synth-corpus, because the library
 * keeps state between syntheses: only the first synthesis of a process gives
 * the espeak-ng program's samples (audio/synth_ali.c).  Not listed in help: a
 * helper of synth-corpus, not a command for users.
 *
 * Output on stdout: the lines of vpa_espeak_lib_phones ("NAME START_MS",
 * then "END SAMPLES RATE"), or one line "error: MESSAGE" and exit status 1
 * (stdout is the only pipe the caller reads).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/synth_ali.h"
#include "cli/cli.h"

int cmd_espeak_phones(int argc, char **argv)
{
	if (argc != 5) {
		printf("error: usage: vpaudit __espeak-phones VOICE PITCH SPEED WAVFILE < TEXT\n");
		return 1;
	}
	char *end1, *end2;
	long pitch = strtol(argv[2], &end1, 10), speed = strtol(argv[3], &end2, 10);
	if (*end1 || *end2 || end1 == argv[2] || end2 == argv[3] || pitch < 0 || pitch > 99 ||
	    speed < 80 || speed > 500) {
		printf("error: __espeak-phones: bad pitch '%s' or speed '%s'\n", argv[2], argv[3]);
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
		printf("error: __espeak-phones: text longer than 64 KiB\n");
		vpa_buf_release(&t);
		return 1;
	}
	struct vpa_buf out;
	vpa_buf_init(&out);
	struct vpa_err err;
	vpa_err_init(&err);
	int rc = vpa_espeak_lib_phones(argv[1], (int)pitch, (int)speed, vpa_buf_str(&t), argv[4], &out,
				       &err);
	if (rc)
		printf("error: %s\n", err.msg);
	else
		fwrite(out.data, 1, out.len, stdout);
	vpa_buf_release(&out);
	vpa_buf_release(&t);
	return rc ? 1 : 0;
}
