/*
 * targets/anon_informed.c - the informed attacker's enrolment from audio
 * (contract in targets/anon_informed.h): the enrolment anonymised with the
 * trial speakers' own draws, through audio/anon.h's stream hook.
 */
#include "targets/anon_informed.h"

#include "audio/anon.h"
#include "audio/audio.h"
#include "formats/embset.h"

#include <stdlib.h>
#include <string.h>

struct informed_map {
	struct vpa_strmap to;   /* enrolment utterance -> trial utterance index */
	const struct vpa_datadir *trial;
};

static const char *informed_stream(void *ctx, const char *utt, const char *spk)
{
	const struct informed_map *m = ctx;
	uint32_t t;
	if (vpa_strmap_get(&m->to, utt, &t))
		return m->trial->utt[t];
	return spk; /* not reached: every enrolment utterance is mapped */
}

int vpa_anon_audio_kind(const char *method)
{
	if (!strcmp(method, "warp"))
		return VPA_ANON_WARP;
	return !strcmp(method, "pitch") ? VPA_ANON_PITCH : VPA_ANON_MCADAMS;
}

int vpa_anon_audio_informed(const char *enroll_dir, const char *trial_dir, const char *out_dir,
			    int kind, int utt_level, double lo, double hi, uint64_t user_seed,
			    int threads, struct vpa_err *err)
{
	struct vpa_datadir en, tr;
	struct informed_map m;
	struct vpa_strmap first; /* trial speaker -> its first trial utterance in `order` */
	vpa_datadir_init(&en);
	vpa_datadir_init(&tr);
	vpa_strmap_init(&m.to);
	vpa_strmap_init(&first);
	m.trial = &tr;
	size_t *order = NULL, *count = NULL, *seen = NULL;
	int rc = vpa_datadir_open(&en, enroll_dir, -1, err);
	if (!rc)
		rc = vpa_datadir_open(&tr, trial_dir, -1, err);
	if (!rc && (!en.utt_spk || !tr.utt_spk))
		rc = vpa_fail(err, VPA_EINPUT, NULL,
			      "%s: the informed attacker needs utt2spk (whose pseudo-speaker to use)",
			      !en.utt_spk ? enroll_dir : trial_dir);
	if (rc)
		goto out;
	/* trial utterances grouped by speaker, in data-directory order */
	order = xmalloc(xmul(tr.n_utt ? tr.n_utt : 1, sizeof(size_t)));
	count = xcalloc(tr.n_utt ? tr.n_utt : 1, sizeof(size_t));
	seen = xcalloc(tr.n_utt ? tr.n_utt : 1, sizeof(size_t));
	{
		struct vpa_strmap spk;
		vpa_strmap_init(&spk);
		uint32_t *sidx = xmalloc(xmul(tr.n_utt ? tr.n_utt : 1, sizeof(uint32_t)));
		size_t ns = 0;
		for (size_t i = 0; i < tr.n_utt; i++) {
			uint32_t s;
			if (!vpa_strmap_get(&spk, tr.utt_spk[i], &s)) {
				s = (uint32_t)ns++;
				vpa_strmap_put(&spk, tr.utt_spk[i], s, NULL);
			}
			sidx[i] = s;
			count[s]++;
		}
		size_t *start = xcalloc(ns + 1, sizeof(size_t));
		for (size_t s = 0; s < ns; s++)
			start[s + 1] = start[s] + count[s];
		size_t *fill = xcalloc(ns ? ns : 1, sizeof(size_t));
		for (size_t i = 0; i < tr.n_utt; i++)
			order[start[sidx[i]] + fill[sidx[i]]++] = i;
		for (size_t i = 0; i < tr.n_utt; i++)
			if (sidx[i] < ns && !vpa_strmap_get(&first, tr.utt_spk[i], NULL))
				vpa_strmap_put(&first, tr.utt_spk[i], (uint32_t)start[sidx[i]], NULL);
		/* count[] by first position, for the lookups below */
		size_t *cnt2 = xcalloc(tr.n_utt ? tr.n_utt : 1, sizeof(size_t));
		for (size_t s = 0; s < ns; s++)
			if (count[s])
				cnt2[start[s]] = count[s];
		free(count);
		count = cnt2;
		free(fill);
		free(start);
		free(sidx);
		vpa_strmap_release(&spk);
	}
	for (size_t i = 0; i < en.n_utt && !rc; i++) {
		uint32_t f;
		if (!vpa_strmap_get(&first, en.utt_spk[i], &f)) {
			rc = vpa_fail(err, VPA_EINPUT, NULL,
				      "%s: enrolment speaker '%s' has no trial utterance in %s: no "
				      "pseudo-speaker to inform the attacker of",
				      enroll_dir, en.utt_spk[i], trial_dir);
			break;
		}
		size_t j = seen[f]++ % count[f];
		vpa_strmap_put(&m.to, en.utt[i], (uint32_t)order[f + j], NULL);
	}
	if (rc)
		goto out;
	struct vpa_anon_opts ao;
	vpa_anon_opts_init(&ao, kind);
	ao.level = utt_level ? VPA_SIGANON_UTTERANCE : VPA_SIGANON_SPEAKER;
	ao.lo = lo;
	ao.hi = hi;
	ao.seed = user_seed;
	if (utt_level) {
		ao.stream = informed_stream;
		ao.stream_ctx = &m;
	}
	rc = vpa_anonymise_datadir(enroll_dir, out_dir, &ao, threads, err);
out:
	free(order);
	free(count);
	free(seen);
	vpa_strmap_release(&m.to);
	vpa_strmap_release(&first);
	vpa_datadir_release(&en);
	vpa_datadir_release(&tr);
	return rc;
}
