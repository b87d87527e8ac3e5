/*
 * cli/cmd_anon.c - `vpaudit anonymise mcadams|warp|pitch`, `vpaudit wer` and
 * `vpaudit synth-corpus` (audio/anon.h).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audio/anon.h"
#include "cli/cli.h"

static int default_threads(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	return ncpu > 0 ? (int)(ncpu > 256 ? 256 : ncpu) : 1;
}

static void anon_usage(FILE *f)
{
	fprintf(f,
		"usage: vpaudit anonymise mcadams|warp|pitch [OPTIONS] DATA OUT\n"
		"\n"
		"Anonymise every utterance of the Kaldi data directory DATA into the new data\n"
		"directory OUT: OUT/wav/UTT.wav (16-bit PCM at the input rate), OUT/wav.scp, copies\n"
		"of utt2spk, spk2utt, spk2gender, text, utt2dur, enrolls, trials*, and anon_coeffs\n"
		"(UTT COEFFICIENT: alpha, or the semitone shift for pitch).  OUT must not exist;\n"
		"nothing is left behind on error.\n"
		"\n"
		"mcadams  the McAdams-coefficient anonymiser of the VoicePrivacy Challenge\n"
		"         2022/2024 baseline B2 (anonym_v2; Patino et al., Interspeech 2021): LPC\n"
		"         poles' angles phi -> sign(phi)|phi|^alpha; output normalised to 32766\n"
		"warp     bilinear (VTLN-style, VoiceMask) frequency warping of the short-time\n"
		"         spectrum with a phase vocoder: omega -> omega + 2 atan(alpha sin omega /\n"
		"         (1 - alpha cos omega)); alpha > 0 raises, < 0 lowers frequencies\n"
		"pitch    TD-PSOLA pitch shifting (Moulines and Charpentier 1990) on YIN pitch\n"
		"         marks, duration and formants kept; per utterance the log-F0 mapping of\n"
		"         COMPRISE D2.3 eq. 3: ln F0' = (ln F0 - mu) * R + mu + S ln(2)/12 (mu: mean\n"
		"         log F0 of the voiced frames; S semitones shift the mean, R scales the\n"
		"         spread); unvoiced stretches keep their pitch and timing\n"
		"\n"
		"options:\n"
		"  --alpha A            mcadams, warp: the coefficient for every utterance\n"
		"                       (mcadams (0, 2], default 0.8; warp (-1, 1), default 0.1)\n"
		"  --alpha-range LO,HI  mcadams, warp: draw one coefficient per speaker or\n"
		"                       utterance from [LO, HI)\n"
		"  --semitones S        pitch: the shift of the mean log F0 for every utterance,\n"
		"                       [-24, 24] (pitch needs this or --semitones-range)\n"
		"  --semitones-range LO,HI\n"
		"                       pitch: draw one shift per speaker or utterance from [LO, HI)\n"
		"  --sigma-ratio R      pitch: spread of log F0 out / in, [0, 4] (default 1; 0\n"
		"                       flattens every utterance to a monotone)\n"
		"  --level L            speaker|utterance: what a drawn coefficient belongs to\n"
		"                       (default speaker; speaker needs utt2spk)\n"
		"  --seed N             the draw's seed (default 1); the same for any --threads\n"
		"  --win-ms X           frame length (mcadams 20, warp 32)\n"
		"  --shift-ms X         frame shift (mcadams 10, warp 8)\n"
		"  --lp-order N         LPC order (mcadams only, default 20)\n"
		"  --threads N          utterances in parallel (default: online CPUs)\n"
		"  --channel N          channel of multi-channel recordings (0-based; default: mono\n"
		"                       required); the output is mono\n"
		"\nExit status: 0 ok, 1 bad input, 2 usage.\n");
}

/* "LO,HI" of opt into lo < hi, each in [min, max] (open at min when open_lo); 2 on error */
static int parse_range(const char *name, const char *opt, char *arg, double min, double max,
		       int open_lo, double *lo, double *hi)
{
	char *comma = strchr(arg, ',');
	if (!comma)
		return cli_usage_error(name, "%s must be LO,HI, got '%s'", opt, arg);
	*comma = 0;
	int bad = cli_double(opt, arg, min, max, open_lo, lo) ||
		  cli_double(opt, comma + 1, min, max, open_lo, hi);
	*comma = ',';
	if (bad)
		return 2;
	if (!(*lo < *hi))
		return cli_usage_error(name, "%s needs LO < HI, got '%s'", opt, arg);
	return 0;
}

int cmd_anonymise(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("anonymise", "expected 'mcadams', 'warp' or 'pitch'");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		anon_usage(stdout);
		return 0;
	}
	int kind = !strcmp(argv[1], "mcadams") ? VPA_ANON_MCADAMS
		   : !strcmp(argv[1], "warp")  ? VPA_ANON_WARP
		   : !strcmp(argv[1], "pitch") ? VPA_ANON_PITCH
					       : -1;
	if (kind < 0)
		return cli_usage_error("anonymise", "expected 'mcadams', 'warp' or 'pitch', got '%s'",
				       argv[1]);
	/* errors read "vpaudit anonymise: error: ..." (main sets the command name;
	 * not "anonymise mcadams": main renames that global, see the report) */
	const char *name = "anonymise";
	struct vpa_anon_opts o;
	vpa_anon_opts_init(&o, kind);
	int threads = default_threads(), have_alpha = 0, have_range = 0, have_level = 0;
	static const struct option opts[] = {
		{"alpha", required_argument, NULL, 'a'}, {"alpha-range", required_argument, NULL, 'r'},
		{"semitones", required_argument, NULL, 'S'},
		{"semitones-range", required_argument, NULL, 'R'},
		{"sigma-ratio", required_argument, NULL, 'g'},
		{"level", required_argument, NULL, 'l'}, {"seed", required_argument, NULL, 's'},
		{"win-ms", required_argument, NULL, 'w'}, {"shift-ms", required_argument, NULL, 'f'},
		{"lp-order", required_argument, NULL, 'p'}, {"threads", required_argument, NULL, 't'},
		{"channel", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	int mc = kind == VPA_ANON_MCADAMS, pitch = kind == VPA_ANON_PITCH;
	double *alpha = mc ? &o.mcadams.alpha : &o.warp.alpha;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc - 1, argv + 1, ":h", opts, NULL)) != -1) {
		unsigned long v;
		if (pitch && c > 0 && strchr("arwf", c))
			return cli_usage_error(name, "--%s applies to mcadams and warp, not pitch",
					       c == 'a' ? "alpha" : c == 'r' ? "alpha-range"
							    : c == 'w' ? "win-ms" : "shift-ms");
		if (!pitch && c > 0 && strchr("SRg", c))
			return cli_usage_error(name, "--%s applies to pitch only",
					       c == 'S' ? "semitones" : c == 'R' ? "semitones-range"
									 : "sigma-ratio");
		switch (c) {
		case 'h':
			anon_usage(stdout);
			return 0;
		case 'a':
			if (mc ? cli_double("--alpha", optarg, 0, 2, 1, alpha)
			       : cli_double("--alpha", optarg, -0.99, 0.99, 0, alpha))
				return 2;
			have_alpha = 1;
			break;
		case 'S':
			if (cli_double("--semitones", optarg, -24, 24, 0, &o.pshift.semitones))
				return 2;
			have_alpha = 1;
			break;
		case 'r':
			if (mc ? parse_range(name, "--alpha-range", optarg, 0, 2, 1, &o.lo, &o.hi)
			       : parse_range(name, "--alpha-range", optarg, -0.99, 0.99, 0, &o.lo, &o.hi))
				return 2;
			have_range = 1;
			break;
		case 'R':
			if (parse_range(name, "--semitones-range", optarg, -24, 24, 0, &o.lo, &o.hi))
				return 2;
			have_range = 1;
			break;
		case 'g':
			if (cli_double("--sigma-ratio", optarg, 0, 4, 0, &o.pshift.sigma_ratio))
				return 2;
			break;
		case 'l':
			if (!strcmp(optarg, "speaker"))
				o.level = VPA_SIGANON_SPEAKER;
			else if (!strcmp(optarg, "utterance"))
				o.level = VPA_SIGANON_UTTERANCE;
			else
				return cli_usage_error(name, "--level must be speaker or utterance, got '%s'",
						       optarg);
			have_level = 1;
			break;
		case 's':
			if (cli_ulong("--seed", optarg, 0, 4294967295UL, &v))
				return 2;
			o.seed = v;
			break;
		case 'w':
			if (cli_double("--win-ms", optarg, 0, 1000, 1, mc ? &o.mcadams.win_ms : &o.warp.win_ms))
				return 2;
			break;
		case 'f':
			if (cli_double("--shift-ms", optarg, 0, 1000, 1,
				       mc ? &o.mcadams.shift_ms : &o.warp.shift_ms))
				return 2;
			break;
		case 'p':
			if (!mc)
				return cli_usage_error(name, "--lp-order applies to mcadams only");
			if (cli_ulong("--lp-order", optarg, 1, 64, &v))
				return 2;
			o.mcadams.lp_order = (int)v;
			break;
		case 't':
			if (cli_ulong("--threads", optarg, 1, 256, &v))
				return 2;
			threads = (int)v;
			break;
		case 'c':
			if (cli_ulong("--channel", optarg, 0, 256, &v))
				return 2;
			o.channel = (int)v;
			break;
		default:
			return cli_getopt_error(name, c, argv + 1);
		}
	}
	const char *fixed = pitch ? "--semitones" : "--alpha";
	const char *range = pitch ? "--semitones-range" : "--alpha-range";
	if (have_alpha && have_range)
		return cli_usage_error(name, "%s and %s exclude each other", fixed, range);
	if (have_level && !have_range)
		return cli_usage_error(name, "--level needs %s", range);
	if (pitch && !have_alpha && !have_range) /* no default shift: 0 would be the identity */
		return cli_usage_error(name, "pitch needs --semitones S or --semitones-range LO,HI");
	if (have_range && !have_level)
		o.level = VPA_SIGANON_SPEAKER;
	int rest = argc - 1 - optind;
	if (rest != 2)
		return cli_usage_error(name, "expected DATA OUT, got %d argument%s", rest,
				       rest == 1 ? "" : "s");
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_anonymise_datadir(argv[1 + optind], argv[2 + optind], &o, threads, &err))
		return cli_error(&err);
	return 0;
}

int cmd_wer(int argc, char **argv)
{
	struct vpa_wer_opts o;
	vpa_wer_opts_init(&o);
	static const struct option opts[] = {{"normalise", required_argument, NULL, 'n'},
					     {"strict", no_argument, NULL, 's'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			printf("usage: vpaudit wer [--normalise vpc|upper|punct|none] [--strict] REF HYP\n"
			       "\n"
			       "Word error rate of the hypothesis Kaldi text file HYP against the reference\n"
			       "REF (lines 'UTT word word ...'), as Kaldi's compute-wer: per utterance the\n"
			       "minimum-cost word alignment (most substitutions among equal costs), and as\n"
			       "the VoicePrivacy Challenge scores it: the words of both files normalised\n"
			       "first (--normalise vpc, the default: ASCII letters upper-cased and every\n"
			       "punctuation character a word break, except an apostrophe inside a word as\n"
			       "in DON'T; upper or punct: one of the two; none: the words as written).\n"
			       "An utterance of REF missing from HYP is scored as all deletions with a\n"
			       "warning (compute-wer --mode=all); with --strict it is an error (compute-wer's\n"
			       "default mode).  HYP may name no utterance that REF lacks.  Prints\n"
			       "  %%WER 12.50 [ 3 / 24, 1 ins, 1 del, 1 sub ]\n"
			       "  %%SER 50.00 [ 2 / 4 ]\n"
			       "  Scored 4 sentences, 0 not present in hyp.\n"
			       "\nExit status: 0 ok, 1 bad input, 2 usage.\n");
			return 0;
		case 'n':
			if (vpa_wer_norm_parse(optarg, &o))
				return cli_usage_error("wer", "--normalise: expected vpc, upper, punct or none, got '%s'",
						       optarg);
			break;
		case 's':
			o.strict = 1;
			break;
		default:
			return cli_getopt_error("wer", c, argv);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error("wer", "expected REF HYP");
	const char *ref = argv[optind], *hyp = argv[optind + 1];
	struct vpa_wer w;
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_wer_files_opts(ref, hyp, &o, &w, &err))
		return cli_error(&err);
	if (w.n_absent)
		vpa_warn("%s: %zu utterance%s of %s not present in hyp: %s scored as deletions", hyp,
			 w.n_absent, w.n_absent == 1 ? "" : "s", ref, w.n_absent == 1 ? "its words" : "their words");
	printf("%%WER %.2f [ %zu / %zu, %zu ins, %zu del, %zu sub ]\n", w.wer,
	       w.ins + w.del + w.sub, w.ref_words, w.ins, w.del, w.sub);
	printf("%%SER %.2f [ %zu / %zu ]\n", 100.0 * (double)w.n_utt_err / (double)w.n_utt,
	       w.n_utt_err, w.n_utt);
	printf("Scored %zu sentences, %zu not present in hyp.\n", w.n_utt, w.n_absent);
	return 0;
}

int cmd_synth_corpus(int argc, char **argv)
{
	struct vpa_synth_opts o;
	vpa_synth_opts_init(&o);
	int threads = default_threads();
	static const struct option opts[] = {
		{"speakers", required_argument, NULL, 'n'}, {"utts", required_argument, NULL, 'u'},
		{"seed", required_argument, NULL, 's'}, {"brown", required_argument, NULL, 'b'},
		{"threads", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		unsigned long v;
		switch (c) {
		case 'h':
			printf("usage: vpaudit synth-corpus OUT [--speakers N] [--utts N] [--seed N] "
			       "[--brown DIR] [--threads N]\n"
			       "\n"
			       "A SYNTHETIC multi-speaker corpus made now from Debian's speech synthesisers\n"
			       "(espeak-ng accents x variants with drawn pitch/rate; flite voices slt, rms,\n"
			       "awb, kal16 with drawn F0/duration; a vocal-tract scale per speaker so that\n"
			       "speakers of one voice differ) reading Brown corpus sentences, resampled\n"
			       "to 16 kHz 16-bit WAV.  OUT gets SYNTHETIC (the note), speakers.txt (each\n"
			       "speaker's synthesiser command) and the Kaldi data directories train/,\n"
			       "enrol/ (enrolls) and trials/ (trials, trials_f, trials_m).  Speakers\n"
			       "alternate male/female; half of them (even) train, the others are enrolled\n"
			       "with their first utterance.  The same files for any --threads.\n"			       "\n"
			       "Phone alignments from the synthesisers' own timing (flite -psdur of the call\n"
			       "that writes the audio; libespeak-ng's phoneme events, run in a fresh process\n"
			       "per utterance and checked to give the espeak-ng program's samples):\n"
			       "  OUT/phones.txt     \"PHONE ID\" per line, SIL 0, the others 1.. in byte order\n"
			       "  SET/phones.seg     \"UTT PHONE START_S END_S\", contiguous from 0 to the end;\n"
			       "                     pauses and leading/trailing silence are SIL\n"
			       "  SET/ali.txt        \"UTT ID ID ...\" (Kaldi ali-to-phones --per-frame text): one\n"
			       "                     id per frame of the default front end (25 ms every 10 ms,\n"
			       "                     snip-edges), the phone covering the frame's centre\n"
			       "Phone names: flite's as printed (pau = SIL); espeak-ng's mnemonics without\n"
			       "the stress marks ' , %% = and the length mark : (_... = SIL).\n"
			       "\n"
			       "options:\n"
			       "  --speakers N   speakers, [8, 1000] (default 60)\n"
			       "  --utts N       utterances per speaker, [3, 200] (default 8)\n"
			       "  --seed N       voices, pitch/rate draws and sentences (default 1)\n"
			       "  --brown DIR    the Brown corpus folder (default data/brown)\n"
			       "  --threads N    synthesiser processes in parallel (default: online CPUs)\n"
			       "\nExit status: 0 ok, 1 bad input, 2 usage.\n");
			return 0;
		case 'n':
		case 'u':
			if (cli_ulong(c == 'n' ? "--speakers" : "--utts", optarg, c == 'n' ? 8 : 3,
				      c == 'n' ? 1000 : 200, &v))
				return 2;
			*(c == 'n' ? &o.speakers : &o.utts) = (int)v;
			break;
		case 's':
			if (cli_ulong("--seed", optarg, 0, 4294967295UL, &v))
				return 2;
			o.seed = v;
			break;
		case 'b':
			o.brown = optarg;
			break;
		case 't':
			if (cli_ulong("--threads", optarg, 1, 256, &v))
				return 2;
			threads = (int)v;
			break;
		default:
			return cli_getopt_error("synth-corpus", c, argv);
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("synth-corpus", "expected OUT");
	struct vpa_err err;
	vpa_err_init(&err);
	if (vpa_synth_corpus(&o, argv[optind], threads, &err))
		return cli_error(&err);
	return 0;
}
