/*
 * tests/fuzz/fuzz_datadir.c - the cross-checks of a Kaldi data directory
 * (vpa_datadir_open, audio/datadir.c): wav.scp and segments, then utt2spk,
 * spk2utt, spk2gender, text, utt2dur, enrolls, trials and trials_f against
 * them, on files made of arbitrary bytes (format in tests/fuzz/dirfiles.h).
 * Success means a consistent directory: every utterance on a recording, a
 * speaker for each when utt2spk exists; an error is one line that names a
 * file of the directory, and the kept offending line has no newline.  Then
 * every utterance is loaded (the two WAV files of the scratch folder, or an
 * error naming wav.scp or segments).  Replayed over tests/fuzz/corpus/datadir/.
 */
#include "dirfiles.h"

#include "audio/audio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[] = {"wav.scp", "segments", "utt2spk", "spk2utt", "spk2gender",
				    "text", "utt2dur", "enrolls", "trials", "trials_f", NULL};

static void check_err(const char *dir, const struct vpa_err *err)
{
	if (err->status == 0 || !err->msg[0] || strchr(err->msg, '\n'))
		abort();
	if (strncmp(err->msg, dir, strlen(dir))) /* names a file of the directory */
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	df_write(data, size, files);
	const char *dir = df_dir();
	char p[512];
	struct stat st;
	snprintf(p, sizeof(p), "%s/utt2spk", dir);
	int has_u2s = stat(p, &st) == 0;
	snprintf(p, sizeof(p), "%s/segments", dir);
	int has_seg = stat(p, &st) == 0;
	struct vpa_datadir d;
	struct vpa_err err;
	vpa_datadir_init(&d);
	vpa_err_init(&err);
	if (vpa_datadir_open(&d, dir, -1, &err)) {
		check_err(dir, &err);
		if (d.bad_line && strchr(d.bad_line, '\n'))
			abort();
		vpa_datadir_release(&d);
		return 0;
	}
	if (d.n_rec == 0 || d.n_utt == 0 || (has_seg != (d.seg_start != NULL)))
		abort();
	for (size_t i = 0; i < d.n_utt; i++) {
		if (d.utt_rec[i] >= d.n_rec || !d.utt[i][0])
			abort();
		if (has_u2s && (!d.utt_spk || !d.utt_spk[i] || !d.utt_spk[i][0]))
			abort();
	}
	for (size_t i = 0; i < d.n_utt && i < 8; i++) {
		struct vpa_wave w;
		const char *line = NULL;
		vpa_wave_init(&w);
		vpa_err_init(&err);
		if (vpa_datadir_load(&d, i, &w, &line, &err)) {
			if (!err.msg[0] || strchr(err.msg, '\n') || (line && strchr(line, '\n')))
				abort();
		} else if (w.n == 0 || w.rate <= 0) {
			abort();
		}
		vpa_wave_release(&w);
	}
	vpa_datadir_release(&d);
	return 0;
}
