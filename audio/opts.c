/*
 * audio/opts.c - the feature options: one table gives the names (Kaldi's),
 * the defaults, the ranges, the kinds they apply to and the --help text, so
 * the CLI parser, the help and the checks cannot disagree.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "audio/audio.h"

enum otype { T_DBL, T_INT, T_BOOL, T_WINDOW, T_CMVN };
enum { K_FBANK = 1, K_MFCC = 2, K_BOTH = 3 };

struct opt {
	const char *name;
	int type, kinds;
	size_t off;
	double lo, hi;
	const char *help;
};

#define O(f) offsetof(struct vpa_feat_opts, f)
static const struct opt table[] = {
	{"sample-frequency", T_DBL, K_BOTH, O(sample_frequency), 1, 1e6, "sampling rate of the features in Hz (a file at another rate is an error unless --allow-downsample / --allow-upsample resamples it)"},
	{"frame-length", T_DBL, K_BOTH, O(frame_length), 0.01, 10000, "frame length in ms"},
	{"frame-shift", T_DBL, K_BOTH, O(frame_shift), 0.01, 10000, "frame shift in ms"},
	{"dither", T_DBL, K_BOTH, O(dither), 0, 1e6, "Gaussian dither (Kaldi's default is 1; 0 here for reproducible audits; seeded per utterance id)"},
	{"preemphasis-coefficient", T_DBL, K_BOTH, O(preemphasis_coefficient), 0, 1, "pre-emphasis x[i] - c x[i-1]"},
	{"remove-dc-offset", T_BOOL, K_BOTH, O(remove_dc_offset), 0, 1, "subtract each frame's mean"},
	{"window-type", T_WINDOW, K_BOTH, O(window_type), 0, 0, "povey|hamming|hanning|rectangular|blackman"},
	{"round-to-power-of-two", T_BOOL, K_BOTH, O(round_to_power_of_two), 0, 1, "zero-pad frames to a power of two for the FFT"},
	{"blackman-coeff", T_DBL, K_BOTH, O(blackman_coeff), -1e6, 1e6, "constant of the blackman window"},
	{"snip-edges", T_BOOL, K_BOTH, O(snip_edges), 0, 1, "true: only frames inside the signal; false: frames centred on shift multiples, ends reflected"},
	{"low-freq", T_DBL, K_BOTH, O(low_freq), 0, 1e6, "low edge of the mel bins in Hz"},
	{"high-freq", T_DBL, K_BOTH, O(high_freq), -1e6, 1e6, "high edge of the mel bins in Hz; <= 0: offset from Nyquist"},
	{"num-mel-bins", T_INT, K_BOTH, O(num_mel_bins), 3, 1024, "number of triangular mel bins"},
	{"use-energy", T_BOOL, K_BOTH, O(use_energy), 0, 1, "fbank: add the log energy as first column; MFCC: replace C0 by it"},
	{"raw-energy", T_BOOL, K_BOTH, O(raw_energy), 0, 1, "energy before pre-emphasis and window"},
	{"energy-floor", T_DBL, K_BOTH, O(energy_floor), 0, 1e30, "floor on the energy (absolute, not log); 0: none"},
	{"use-log-fbank", T_BOOL, K_FBANK, O(use_log_fbank), 0, 1, "log of the mel energies"},
	{"use-power", T_BOOL, K_FBANK, O(use_power), 0, 1, "power spectrum (false: magnitude)"},
	{"htk-compat", T_BOOL, K_BOTH, O(htk_compat), 0, 1, "energy last (MFCC: C0 last), as HTK"},
	{"num-ceps", T_INT, K_MFCC, O(num_ceps), 1, 1024, "number of cepstra (at most --num-mel-bins)"},
	{"cepstral-lifter", T_DBL, K_MFCC, O(cepstral_lifter), 0, 1e6, "lifter coefficient Q (0: none)"},
	{"cmvn", T_CMVN, K_BOTH, O(cmvn), 0, 0, "none|utt|sliding: per-utterance or sliding-window mean normalisation"},
	{"norm-vars", T_BOOL, K_BOTH, O(norm_vars), 0, 1, "CMVN also normalises the variance"},
	{"cmn-window", T_INT, K_BOTH, O(cmn_window), 1, 1000000, "sliding CMVN: window in frames"},
	{"min-cmn-window", T_INT, K_BOTH, O(min_cmn_window), 1, 1000000, "sliding CMVN: at least this many frames at the start (when not centred)"},
	{"center", T_BOOL, K_BOTH, O(center), 0, 1, "sliding CMVN: window centred on the frame (false: the preceding frames)"},
	{"vad", T_BOOL, K_BOTH, O(vad), 0, 1, "keep only the frames Kaldi's energy VAD (compute-vad) marks voiced, after CMVN"},
	{"vad-energy-threshold", T_DBL, K_BOTH, O(vad_energy_threshold), -1e6, 1e6, "VAD: constant term of the log-energy threshold"},
	{"vad-energy-mean-scale", T_DBL, K_BOTH, O(vad_energy_mean_scale), 0, 1e6, "VAD: plus this times the mean log energy"},
	{"vad-frames-context", T_INT, K_BOTH, O(vad_frames_context), 0, 1000000, "VAD: frames of context on each side"},
	{"vad-proportion-threshold", T_DBL, K_BOTH, O(vad_proportion_threshold), 0, 1, "VAD: proportion of context frames above threshold (in (0, 1))"},
};
#define N_OPTS (sizeof(table) / sizeof(table[0]))

static const char *const windows[] = {"povey", "hamming", "hanning", "rectangular", "blackman"};
static const char *const cmvns[] = {"none", "utt", "sliding"};

void vpa_feat_opts_init(struct vpa_feat_opts *o, int kind)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->sample_frequency = 16000;
	o->frame_length = 25;
	o->frame_shift = 10;
	o->dither = 0;
	o->preemphasis_coefficient = 0.97;
	o->remove_dc_offset = 1;
	o->window_type = VPA_WIN_POVEY;
	o->round_to_power_of_two = 1;
	o->blackman_coeff = 0.42;
	o->snip_edges = 1;
	o->low_freq = 20;
	o->high_freq = 0;
	o->num_mel_bins = 23;
	o->use_energy = kind == VPA_FEAT_MFCC;
	o->raw_energy = 1;
	o->energy_floor = 0;
	o->use_log_fbank = 1;
	o->use_power = 1;
	o->htk_compat = 0;
	o->num_ceps = 13;
	o->cepstral_lifter = 22;
	o->cmvn = VPA_CMVN_NONE;
	o->norm_vars = 0;
	o->cmn_window = 600;
	o->min_cmn_window = 100;
	o->center = 0;
	o->vad = 0;
	o->vad_energy_threshold = 5.0;
	o->vad_energy_mean_scale = 0.5;
	o->vad_frames_context = 0;
	o->vad_proportion_threshold = 0.6;
}

static int kind_bit(int kind)
{
	return kind == VPA_FEAT_MFCC ? K_MFCC : K_FBANK;
}

int vpa_feat_opts_set(struct vpa_feat_opts *o, const char *name, const char *v,
		      struct vpa_err *err)
{
	const struct opt *p = NULL;
	for (size_t i = 0; i < N_OPTS; i++)
		if (!strcmp(table[i].name, name) && (table[i].kinds & kind_bit(o->kind)))
			p = &table[i];
	if (!p)
		return vpa_fail(err, VPA_EUSAGE, NULL, "unknown option '--%s'", name);
	char *base = (char *)o + p->off, *end;
	switch (p->type) {
	case T_DBL: {
		errno = 0;
		double x = strtod(v, &end);
		if (end == v || *end || errno == ERANGE || !isfinite(x) || x < p->lo || x > p->hi ||
		    (!strcmp(name, "vad-proportion-threshold") && (x <= 0 || x >= 1)))
			return vpa_fail(err, VPA_EUSAGE, NULL, "--%s must be a number in [%g, %g], got '%s'",
					name, p->lo, p->hi, v);
		*(double *)base = x;
		return 0;
	}
	case T_INT: {
		errno = 0;
		long x = strtol(v, &end, 10);
		if (end == v || *end || errno == ERANGE || x < p->lo || x > p->hi)
			return vpa_fail(err, VPA_EUSAGE, NULL, "--%s must be an integer in [%g, %g], got '%s'",
					name, p->lo, p->hi, v);
		*(int *)base = (int)x;
		return 0;
	}
	case T_BOOL:
		if (!strcmp(v, "true"))
			*(int *)base = 1;
		else if (!strcmp(v, "false"))
			*(int *)base = 0;
		else
			return vpa_fail(err, VPA_EUSAGE, NULL, "--%s must be true or false, got '%s'", name, v);
		return 0;
	case T_WINDOW:
	case T_CMVN: {
		const char *const *names = p->type == T_WINDOW ? windows : cmvns;
		size_t n = p->type == T_WINDOW ? 5 : 3;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(v, names[i])) {
				*(int *)base = (int)i;
				return 0;
			}
		return vpa_fail(err, VPA_EUSAGE, NULL, "--%s must be %s, got '%s'", name,
				p->type == T_WINDOW ? "povey, hamming, hanning, rectangular or blackman"
						    : "none, utt or sliding",
				v);
	}
	}
	VPA_BUG("option type %d", p->type);
}

void vpa_feat_opts_help(FILE *f, int kind)
{
	struct vpa_feat_opts o;
	vpa_feat_opts_init(&o, kind);
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt *p = &table[i];
		if (!(p->kinds & kind_bit(kind)))
			continue;
		char def[64];
		const char *base = (const char *)&o + p->off;
		switch (p->type) {
		case T_DBL:
			snprintf(def, sizeof(def), "%g", *(const double *)base);
			break;
		case T_INT:
			snprintf(def, sizeof(def), "%d", *(const int *)base);
			break;
		case T_BOOL:
			snprintf(def, sizeof(def), "%s", *(const int *)base ? "true" : "false");
			break;
		case T_WINDOW:
			snprintf(def, sizeof(def), "%s", windows[*(const int *)base]);
			break;
		default:
			snprintf(def, sizeof(def), "%s", cmvns[*(const int *)base]);
		}
		fprintf(f, "  --%s=%s\n      %s\n", p->name, def, p->help);
	}
}
