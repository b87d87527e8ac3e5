/*
 * tests/fuzz/fuzz_merge.c - vpa_datadir_merge (audio/datadir_merge.c), the
 * merge of VoicePrivacy's trials_f / trials_m directories into one set, on
 * two directories 1/ and 2/ made of arbitrary bytes (format in
 * tests/fuzz/dirfiles.h: "--- 1/wav.scp", "--- 2/utt2spk", ...).  Success
 * means a merged folder that opens as a data directory with every recording
 * and utterance of both; an error is one line that names a file or folder of
 * the user's (never the merged copy), and the merged folder is not left
 * behind.  Replayed over tests/fuzz/corpus/merge/.
 */
#include "dirfiles.h"

#include "audio/audio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[] = {
	"1/wav.scp",   "1/segments", "1/utt2spk", "1/spk2utt", "1/spk2gender", "1/text",
	"1/utt2dur",   "2/wav.scp",  "2/segments", "2/utt2spk", "2/spk2utt", "2/spk2gender",
	"2/text",      "2/utt2dur",  NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	df_write(data, size, files);
	const char *root = df_dir();
	char d1[512], d2[512], out[512];
	snprintf(d1, sizeof(d1), "%s/1", root);
	snprintf(d2, sizeof(d2), "%s/2", root);
	snprintf(out, sizeof(out), "%s/merged", root);
	mkdir(d2, 0777); /* the input may name only 1/ */
	const char *dirs[2] = {d1, d2};
	struct vpa_err err;
	double rate = 0;
	vpa_err_init(&err);
	if (vpa_datadir_merge(dirs, 2, out, &rate, &err)) {
		if (err.status == 0 || !err.msg[0] || strchr(err.msg, '\n'))
			abort();
		if (!strncmp(err.msg, out, strlen(out))) /* the user's files are blamed, not the copy */
			abort();
		if (!strstr(err.msg, root))
			abort();
		struct stat st;
		if (stat(out, &st) == 0) /* no partial copy */
			abort();
		return 0;
	}
	if (rate != 16000 && rate != 8000)
		abort();
	/* the merged folder opens, with everything of both */
	struct vpa_datadir a, b, m;
	vpa_datadir_init(&a), vpa_datadir_init(&b), vpa_datadir_init(&m);
	vpa_err_init(&err);
	if (vpa_datadir_open(&a, d1, -1, &err) || vpa_datadir_open(&b, d2, -1, &err) ||
	    vpa_datadir_open(&m, out, -1, &err))
		abort();
	if (m.n_rec != a.n_rec + b.n_rec || m.n_utt != a.n_utt + b.n_utt)
		abort();
	if ((a.utt_spk != NULL) != (m.utt_spk != NULL))
		abort();
	for (size_t i = 0; i < a.n_utt; i++)
		if (strcmp(m.utt[i], a.utt[i]) || (a.utt_spk && strcmp(m.utt_spk[i], a.utt_spk[i])))
			abort();
	for (size_t i = 0; i < b.n_utt; i++)
		if (strcmp(m.utt[a.n_utt + i], b.utt[i]))
			abort();
	vpa_datadir_release(&a), vpa_datadir_release(&b), vpa_datadir_release(&m);
	return 0;
}
