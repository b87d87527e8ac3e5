/*
 * cli/cli.h - the subcommands.  Each cmd_x(argc, argv) gets argv[0] = "x",
 * parses its options with getopt_long and returns an exit status:
 * 0 ok, 1 error, 2 usage, 3 a gate failed.  Errors go to stderr as one line
 * "vpaudit CMD: error: ..." (the message starts "FILE:LINE[:COL]: " when it
 * blames a place); nothing is written to stdout on error.
 */
#ifndef VPA_CLI_H
#define VPA_CLI_H

#include "base/base.h"
#include "base/json.h"

int cmd_metrics(int argc, char **argv);
int cmd_dp(int argc, char **argv);
int cmd_exposure(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_features(int argc, char **argv);
int cmd_onnx(int argc, char **argv);
int cmd_embed(int argc, char **argv);
int cmd_anonymise(int argc, char **argv);
int cmd_wer(int argc, char **argv);
int cmd_asr(int argc, char **argv);
int cmd_synth_corpus(int argc, char **argv);
int cmd_classify(int argc, char **argv);

/* Print "vpaudit CMD: error: MSG" for err and return its exit status. */
int cli_error(const struct vpa_err *err);
/* Print "vpaudit CMD: error: ..." (one line). */
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "vpaudit CMD: error: ... (see 'vpaudit CMD --help')" (usage problems) and return 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Option values: strict conversions with range checks, e.g.
 *   if (cli_double("--omega", optarg, 0, INFINITY, 0, &omega)) return 2;
 * lo/hi bounds are inclusive unless open_lo is set (then x > lo).
 * Print "vpaudit CMD: error: --omega must be ..." and return non-zero on failure.
 */
int cli_double(const char *opt, const char *s, double lo, double hi, int open_lo,
	       double *out);
int cli_ulong(const char *opt, const char *s, unsigned long lo, unsigned long hi,
	      unsigned long *out);

/* One line for a getopt_long failure (opterr = 0, optstring starting ':'); returns 2. */
int cli_getopt_error(const char *cmd, int c, char **argv);

/* One warning per "mismatches" entry of a baseline summary (vpa_gates_baseline). */
void cli_warn_baseline(const struct vpa_json *summary);
/*
 * Portable mode for a subcommand (base/cpu.h): argv is the subcommand's
 * (argv[0] its name, as main passes it); vpaudit is re-executed as
 * `vpaudit ARGV...` when the arithmetic is not pinned yet, so this returns
 * only when portable mode is on (0) or on error.
 */
int cli_portable(int argc, char **argv, struct vpa_err *err);
/* A results file, checked with vpa_results_check; caller frees.  NULL on error. */
struct vpa_json *cli_read_results(const char *path, struct vpa_err *err);
/* cli_error, then the offending scenario line with a caret when the message has one. */
int cli_scenario_error(const struct vpa_err *err);
/* The offending line of a data file, on stderr below the error: "  LINE", its
 * terminal control characters escaped (vpa_buf_add_shown). */
void cli_echo_line(const char *line);
/* Write data to path atomically (path.tmp.PID, renamed). */
int cli_write_file(const char *path, const char *data, size_t len, struct vpa_err *err);
/*
 * The verdicts on stdout: one "PASS ..."/"FAIL [simulated] ..." line per gate
 * of results["gates"], then the baseline's lines ("BASELINE matched ...",
 * "UNMATCHED ...", "REGRESSION ...", "STABLE ...") when results["baseline"].
 */
void cli_print_verdicts(const struct vpa_json *results);

/* --metrics eer,linkability: each a compared metric (vpa_metric_direction). */
struct cli_metrics {
	char **names; /* (n), owned */
	size_t n;
};
int cli_parse_metrics(const char *cmd, const char *arg, struct cli_metrics *out);
void cli_metrics_release(struct cli_metrics *m);

#endif
