/*
 * audio/datadir_probe.c - the recordings of a data directory checked at their
 * headers (audio/audio.h, vpa_datadir_probe): what `vpaudit validate` needs so
 * that a run does not fail at once on a file validate passed.  Only headers
 * are read (libsndfile's header parse), so 1,000 files take milliseconds, not
 * a decoding of the corpus (bench/bench_probe.c).  The checks mirror
 * vpa_datadir_load's, in the same words.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio.h"

static int rec_fail(const struct vpa_datadir *d, size_t r, struct vpa_err *err, int status,
		    const char *msg)
{
	if (d->rec_line[r]) {
		struct vpa_loc loc = {d->scp, d->rec_line[r], 0};
		return vpa_fail(err, status, &loc, "%s", msg);
	}
	return vpa_fail(err, status, NULL, "%s", msg);
}

int vpa_datadir_probe(const struct vpa_datadir *d, double want, struct vpa_err *err)
{
	double *dur = xcalloc(d->n_rec ? d->n_rec : 1, sizeof(double));
	int rc = 0;
	char msg[1024];
	for (size_t r = 0; r < d->n_rec && !rc; r++) {
		struct vpa_audio_info ai;
		struct vpa_err e1;
		vpa_err_init(&e1);
		if (vpa_audio_probe(d->rec_path[r], &ai, &e1)) {
			rc = rec_fail(d, r, err, e1.status, e1.msg);
			break;
		}
		dur[r] = ai.frames < 0 ? -1 : (double)ai.frames / ai.rate;
		double rate = ai.rate;
		if (d->rec_rate[r] > 0) /* a `sox ... -r N |` line: resampled to N when read */
			rate = d->rec_rate[r];
		if (!vpa_audio_rate_ok(rate, want)) {
			snprintf(msg, sizeof(msg), "'%s' is at %g Hz, the front-end reads %g Hz",
				 d->rec_path[r], rate, want);
			rc = rec_fail(d, r, err, VPA_EINPUT, msg);
			break;
		}
		/* the channel each utterance of this recording reads: as vpa_datadir_load */
		int ch = d->rec_channel[r] >= 0 ? d->rec_channel[r] : d->channel;
		if (!d->seg_channel && ch < 0 && ai.channels != 1) {
			snprintf(msg, sizeof(msg), "%s: %d channels: pick one with --channel N (0-based)",
				 d->rec_path[r], ai.channels);
			rc = rec_fail(d, r, err, VPA_EINPUT, msg);
		} else if (!d->seg_channel && ch >= ai.channels) {
			snprintf(msg, sizeof(msg), "%s: has %d channel%s, no channel %d (0-based)",
				 d->rec_path[r], ai.channels, ai.channels == 1 ? "" : "s", ch);
			rc = rec_fail(d, r, err, VPA_EINPUT, msg);
		}
	}
	for (size_t i = 0; i < d->n_utt && !rc && d->seg_start; i++) {
		size_t r = d->utt_rec[i];
		struct vpa_loc loc = {d->seg_file, d->utt_line[i], 0};
		int ch = d->seg_channel[i] >= 0 ? d->seg_channel[i]
			 : d->rec_channel[r] >= 0 ? d->rec_channel[r]
						   : d->channel;
		struct vpa_audio_info ai;
		struct vpa_err e1;
		vpa_err_init(&e1);
		/* the channel count again: a header read is cheap, and segments are few per recording */
		if (vpa_audio_probe(d->rec_path[r], &ai, &e1)) {
			rc = rec_fail(d, r, err, e1.status, e1.msg);
			break;
		}
		if (ch < 0 && ai.channels != 1)
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "%s: %d channels: pick one with --channel N (0-based)",
				      d->rec_path[r], ai.channels);
		else if (ch >= ai.channels)
			rc = vpa_fail(err, VPA_EINPUT, &loc, "%s: has %d channel%s, no channel %d (0-based)",
				      d->rec_path[r], ai.channels, ai.channels == 1 ? "" : "s", ch);
		if (rc || dur[r] < 0) /* unknown length (FLAC): the run checks it */
			continue;
		double s0 = d->seg_start[i], e0 = d->seg_end[i];
		const char *what = s0 >= dur[r] ? "starts" : e0 - dur[r] > 0.5 ? "ends" : NULL;
		if (what)
			rc = vpa_fail(err, VPA_EINPUT, &loc,
				      "segment '%s' %s at %g s, past the end of recording '%s' (%g s)",
				      d->utt[i], what, !strcmp(what, "starts") ? s0 : e0, d->rec[r], dur[r]);
	}
	free(dur);
	return rc;
}

int vpa_datadir_check_audio(const char *path, double want, struct vpa_err *err)
{
	struct vpa_datadir d;
	vpa_datadir_init(&d);
	int rc = vpa_datadir_open(&d, path, -1, err);
	if (!rc)
		rc = vpa_datadir_probe(&d, want, err);
	vpa_datadir_release(&d);
	return rc;
}
