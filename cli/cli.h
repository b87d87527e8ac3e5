/*
 * cli/cli.h - the subcommands.  Each cmd_x(argc, argv) gets argv[0] = "x",
 * parses its options with getopt_long and returns an exit status:
 * 0 ok, 1 error, 2 usage, 3 a gate failed.  Errors go to stderr as one line
 * "vpaudit: error: ..." (or "FILE:LINE: ..."); nothing is written to stdout
 * on error.
 */
#ifndef VPA_CLI_H
#define VPA_CLI_H

#include "core/base.h"

int cmd_metrics(int argc, char **argv);
int cmd_dp(int argc, char **argv);
int cmd_exposure(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_features(int argc, char **argv);

/* Print "vpaudit: error: MSG" for err and return its exit status. */
int cli_error(const struct vpa_err *err);
/* Print "vpaudit: error: ..." (usage problems) and return 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Option values: strict conversions with range checks, e.g.
 *   if (cli_double("--omega", optarg, 0, INFINITY, 0, &omega)) return 2;
 * lo/hi bounds are inclusive unless open_lo is set (then x > lo).
 * Print "vpaudit: error: --omega must be ..." and return non-zero on failure.
 */
int cli_double(const char *opt, const char *s, double lo, double hi, int open_lo,
	       double *out);
int cli_ulong(const char *opt, const char *s, unsigned long lo, unsigned long hi,
	      unsigned long *out);

#endif
