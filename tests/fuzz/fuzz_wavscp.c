/*
 * tests/fuzz/fuzz_wavscp.c - the wav.scp parser (with its pipe-command
 * recogniser) and the segments parser on arbitrary bytes.  They must return 0
 * or a one-line error, keep the offending line without a newline, and never
 * crash or leak.  Replayed over tests/fuzz/corpus/wavscp/ by `make test`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio.h"

static void check(const struct vpa_datadir *d, const struct vpa_err *err, int rc)
{
	if (rc == 0) {
		/* every utterance points at a recording */
		for (size_t i = 0; i < d->n_utt; i++)
			if (d->utt_rec[i] >= d->n_rec)
				abort();
		return;
	}
	if (err->status == 0 || err->msg[0] == 0 || strchr(err->msg, '\n'))
		abort();
	if (d->bad_line && strchr(d->bad_line, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char scp[] = "r1 a.wav\nr2 flac -c -d -s b.flac |\n";
	struct vpa_datadir d;
	struct vpa_err err;

	vpa_datadir_init(&d);
	vpa_err_init(&err);
	check(&d, &err, vpa_datadir_parse(&d, "wav.scp", (const char *)data, size, NULL, NULL, 0, &err));
	vpa_datadir_release(&d);

	vpa_datadir_init(&d);
	vpa_err_init(&err);
	check(&d, &err, vpa_datadir_parse(&d, "wav.scp", scp, sizeof(scp) - 1, "segments",
					  (const char *)data, size, &err));
	vpa_datadir_release(&d);
	return 0;
}
