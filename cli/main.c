/*
 * cli/main.c - the command table.  `vpaudit help` is generated from it.
 * exit() appears only here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "base/dist.h"
#include "base/la.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
	const char *summary;
};

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
	{"run", cmd_run,
	 "SCENARIO.yaml [-o OUTDIR] [--baseline OLD.json [--strict] [--significant]] [--seed N] "
	 "[--threads N] [--portable] [--no-plots] [--quiet]",
	 "build the scenario's targets, run its attacks, write the report, check its gates"},
	{"validate", cmd_validate, "SCENARIO.yaml", "check a scenario file; silent and exit 0 when valid"},
	{"report", cmd_report, "RESULTS.json [-o DIR] [--no-plots]",
	 "re-render HTML/PDF/JUnit from a results file (exit 3 when its gates failed)"},
	{"gate", cmd_gate,
	 "RESULTS.json [--scenario S.yaml] [--baseline OLD.json [--tolerance X] [--metrics M,..] "
	 "[--significant] [--strict]] [--junit FILE]",
	 "evaluate gates on a results file and compare it with a baseline (exit 3 when one fails)"},
	{"metrics", cmd_metrics, "SCORES [--key TRIALS] | --tar FILE --non FILE [options]",
	 "EER, Cllr, Cllr_min, linkability, minDCF, ZEBRA of a score set"},
	{"dp", cmd_dp, "epsilon|sigma|delta|gaussian|audit [options]", "differential-privacy accountants (RDP, PLD, Gaussian mechanisms) and audits (epsilon lower bounds)"},
	{"exposure", cmd_exposure, "--canary X --candidates FILE [--extrapolate] [--json]",
	 "canary exposure (Carlini et al. 2019)"},
	{"features", cmd_features, "fbank|mfcc [OPTIONS] DATA -o OUT.ark|DIR/",
	 "Kaldi-compatible fbank/MFCC (+ CMVN, energy VAD) of a data directory or audio files"},
	{"onnx", cmd_onnx, "info MODEL.onnx [--values] | run MODEL.onnx -i NAME=X.npy -o DIR [--outputs A,B]",
	 "inspect an ONNX model (every value's shape), or run it on .npy inputs (any value by name)"},
	{"embed", cmd_embed, "MODEL.onnx DATA -o OUT.ark [--features fbank|mfcc|--input waveform] [--chunk C] ...",
	 "one speaker embedding per utterance with an ONNX extractor (Kaldi vector archive)"},
	{"anonymise", cmd_anonymise,
	 "mcadams|warp [--alpha A | --alpha-range LO,HI [--level speaker|utterance] [--seed N]] "
	 "[--threads N] [--channel N] DATA OUT | pitch [--semitones S | --semitones-range LO,HI ...] "
	 "[--sigma-ratio R] DATA OUT",
	 "signal anonymisers (McAdams = VPC B2, bilinear warping, TD-PSOLA pitch shifting) "
	 "writing a Kaldi data directory"},
	{"synth-corpus", cmd_synth_corpus, "OUT [--speakers N] [--utts N] [--seed N] [--threads N]",
	 "a synthetic multi-speaker corpus (espeak-ng, flite; Brown sentences) as Kaldi data dirs"},
	{"classify", cmd_classify,
	 "DATA (--onnx MODEL | --folds FILE) --labels MAP [--utt2label F] [--anon DATA2] [--json]",
	 "an utterance classifier (emotion recognition): UAR, accuracy, recall, confusion"},
	{"asr", cmd_asr, "DATA -o HYP.txt [--model DIR | --onnx M.onnx --tokens T [--align TEXT]] [--threads N]",
	 "speech recognition with the embedded recogniser (CMU PocketSphinx, en-us): a Kaldi text of hypotheses"},
	{"wer", cmd_wer, "[--normalise N] [--strict] REF HYP", "word error rate of Kaldi text files, as compute-wer and the VPC"},
	{"version", cmd_version, "", "print the version"},
	{"help", cmd_help, "[COMMAND]", "this text, or a command's options"},
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: vpaudit COMMAND [ARGS]\n\n"
		   "vpaudit %s - privacy auditing and attack evaluation for speech and voice ML\n\n"
		   "commands:\n", VPA_VERSION);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-12s %s\n               %s\n", commands[i].name, commands[i].args,
			commands[i].summary);
	fprintf(f, "\nMPI: %s\n", vpa_dist_built() ? "built in (`mpirun -n N vpaudit-mpi run ...` "
		   "shares the work out over N ranks)" : "not built in (`make mpi` builds vpaudit-mpi)");
	fprintf(f, "\nexit status: 0 ok, 1 error, 2 usage, 3 a gate failed\n"
		   "`vpaudit COMMAND --help` shows a command's options.\n");
}

static int cmd_version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return cli_usage_error("version", "takes no arguments");
	printf("vpaudit %s\n", VPA_VERSION);
	printf("mpi: %s\n", vpa_dist_built() ? "yes" : "no");
	return 0;
}

static int cmd_help(int argc, char **argv)
{
	if (argc > 1) {
		for (size_t i = 0; i < N_COMMANDS; i++)
			if (!strcmp(argv[1], commands[i].name) && commands[i].fn != cmd_help &&
			    commands[i].fn != cmd_version) {
				char *av[] = {argv[1], "--help", NULL};
				return commands[i].fn(2, av);
			}
		return cli_usage_error("help", "unknown command '%s'", argv[1]);
	}
	usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* SIGINT, SIGTERM, SIGHUP remove the temporaries first (base/tmp.c) */
	vpa_tmp_signals();
	/* OpenBLAS single-threaded in every command (as `run` always was): its
	 * multi-threaded kernels round differently, so `asr`, `onnx run`, `embed`
	 * ... with --threads 1 (one loop thread, BLAS free to use every core) gave
	 * other bits than with --threads 2 (one BLAS thread per worker).  Our own
	 * loops are the parallelism, with the same numbers for any count. */
	vpa_la_set_threads(1);
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h"))
		name = "help";
	else if (!strcmp(name, "--version"))
		name = "version";
	/* vpaudit-mpi: only `run` starts MPI (validate and the rest need none);
	 * ranks other than 0 print and write nothing (base/dist.c) */
	if (vpa_dist_built() && !strcmp(name, "run")) {
		vpa_dist_init(&argc, &argv);
		if (vpa_dist_rank() != 0 && (!freopen("/dev/null", "w", stdout) ||
					     !freopen("/dev/null", "w", stderr)))
			return 1;
	}
	int rc = -1;
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(name, commands[i].name)) {
			vpa_cmd = commands[i].name;
			rc = commands[i].fn(argc - 1, argv + 1);
			break;
		}
	if (rc < 0) {
		fprintf(stderr, "vpaudit: error: unknown command '%s' (see 'vpaudit help')\n", name);
		return 2;
	}
	rc = vpa_dist_root_int(rc);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "vpaudit %s: error: cannot write to standard output: %s\n", name,
			strerror(errno));
		return rc ? rc : 1;
	}
	vpa_dist_finalize();
	exit(rc);
}
