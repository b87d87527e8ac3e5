/*
 * cli/audio_in.h - the audio-input options every audio command shares
 * (issue 31): --allow-downsample, --allow-upsample (Kaldi's), --raw-format,
 * and opening DATA (a data directory, a wav.scp, or audio files) with them.
 */
#ifndef VPA_CLI_AUDIO_IN_H
#define VPA_CLI_AUDIO_IN_H

#include "audio/audio.h"

struct cli_audio_in {
	int allow;              /* VPA_ALLOW_DOWN | VPA_ALLOW_UP */
	struct vpa_rawfmt raw;  /* --raw-format (sf_format 0: none) */
};

/* Lines for a command's --help (each starts with two blanks, ends with \n). */
#define CLI_AUDIO_IN_HELP                                                                   \
	"  --allow-downsample     resample files at a higher rate than the features' to it\n"  \
	"                         (libsoxr, sox's `rate -h`); without it they are an error\n" \
	"  --allow-upsample       the same for files at a lower rate\n"                          \
	"  --raw-format=ENC:RATE[:CHANNELS]  audio files given directly are headerless PCM;\n" \
	"                         ENC s8 u8 s16le s16be s24le s24be s32le s32be f32le f32be\n" \
	"                         f64le f64be (in wav.scp: 'sox -t raw -r R -e signed -b 16\n" \
	"                         -c 1 F -t wav - |')\n"

/* Is name one of ours (it then takes a value: raw-format)? */
int cli_audio_takes_value(const char *name);
/*
 * Handle --name[=val] if it is ours: 0 handled, 1 not ours, 2 usage error
 * printed (for cmd).  val: the value ("true" for a bare boolean).
 */
int cli_audio_opt(const char *cmd, const char *name, const char *val, struct cli_audio_in *a);
/*
 * Open DATA: one directory or *.scp -> vpa_datadir_open, else the files;
 * then every utterance is to be at rate (0: any), resampled as a->allow
 * permits, otherwise an error naming the option.  Prints the error (and the
 * bad line) and returns 1 on failure.
 */
int cli_audio_open(char *const *inputs, size_t n, int channel, const struct cli_audio_in *a,
		   double rate, struct vpa_datadir *d);

#endif
