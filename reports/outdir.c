/*
 * reports/outdir.c - the output folder of `vpaudit run`: checked before any
 * computation (created, writable, gnuplot runs when plots are asked for,
 * stale temporaries of killed runs removed), left with the complete new set
 * of report files after a run, or with none of an earlier run after a
 * failure.  See report.h and reports/README.md ("The output folder").
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "reports/report.h"

#define N_REPORT 6
static const char *const report_names[N_REPORT] = {"results.json", "report.html", "report.pdf",
						   "junit.xml", "result_for_rank.txt",
						   "vpc2022_results.txt"};
/* the VPA_REPORT_* bit of report_names[k] */
static unsigned report_bit(int k)
{
	return k < 4 ? 1u << k : (unsigned)VPA_REPORT_VPC;
}

/*
 * PID of a temporary of vpaudit's own naming, "REPORT.tmp.PID" with REPORT
 * one of report_names and PID all digits; 0 when the name is not one.
 */
static long own_tmp_pid(const char *name)
{
	for (int k = 0; k < N_REPORT; k++) {
		size_t n = strlen(report_names[k]);
		if (strncmp(name, report_names[k], n) || strncmp(name + n, ".tmp.", 5))
			continue;
		const char *p = name + n + 5;
		if (!*p || strlen(p) > 9)
			return 0;
		for (const char *q = p; *q; q++)
			if (*q < '0' || *q > '9')
				return 0;
		return strtol(p, NULL, 10);
	}
	return 0;
}

size_t vpa_outdir_remove_stale(const char *outdir)
{
	DIR *d = opendir(outdir);
	size_t removed = 0;
	if (!d)
		return 0;
	struct vpa_buf path;
	vpa_buf_init(&path);
	for (struct dirent *e; (e = readdir(d));) {
		long pid = own_tmp_pid(e->d_name);
		if (pid <= 0 || pid == (long)getpid())
			continue;
		/* a live process may be writing it (another run into the same folder) */
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		path.len = 0;
		vpa_buf_printf(&path, "%s/%s", outdir, e->d_name);
		if (remove(path.data) == 0)
			removed++;
	}
	closedir(d);
	vpa_buf_release(&path);
	return removed;
}

int vpa_outdir_prepare(const char *outdir, unsigned formats, int no_plots, struct vpa_err *err)
{
	int rc = vpa_mkdirs(outdir, err);
	if (rc)
		return rc;
	size_t n = vpa_outdir_remove_stale(outdir);
	if (n)
		vpa_warn("%s: removed %zu temporary file%s left by a killed run", outdir, n,
			 n == 1 ? "" : "s");
	/* writable: the report files are created there at the end */
	struct vpa_buf probe;
	vpa_buf_init(&probe);
	vpa_buf_printf(&probe, "%s/results.json.tmp.%ld", outdir, (long)getpid());
	FILE *f = fopen(probe.data, "wb");
	if (!f || fclose(f) != 0) {
		struct vpa_loc loc = {outdir, 0, 0};
		rc = vpa_fail(err, VPA_EIO, &loc, "cannot write in the output folder: %s",
			      strerror(errno));
	}
	remove(probe.data);
	vpa_buf_release(&probe);
	if (rc)
		return rc;
	if (!no_plots && (formats & (VPA_REPORT_HTML | VPA_REPORT_PDF))) {
		struct vpa_buf out;
		vpa_buf_init(&out);
		rc = vpa_gnuplot_run("exit\n", 5, &out, err);
		vpa_buf_release(&out);
	}
	return rc;
}

void vpa_outdir_remove_reports(const char *outdir, unsigned keep)
{
	struct vpa_buf path;
	vpa_buf_init(&path);
	for (int k = 0; k < N_REPORT; k++) {
		if (keep & report_bit(k))
			continue;
		path.len = 0;
		vpa_buf_printf(&path, "%s/%s", outdir, report_names[k]);
		if (remove(path.data) != 0 && errno != ENOENT && errno != ENOTDIR)
			vpa_warn("%s: cannot remove: %s", path.data, strerror(errno));
	}
	vpa_buf_release(&path);
}

void vpa_outdir_fail(const char *outdir, unsigned formats, const char *suite, const char *message)
{
	vpa_outdir_remove_reports(outdir, 0);
	if (!(formats & VPA_REPORT_JUNIT))
		return;
	struct vpa_err err;
	struct vpa_buf x, path;
	vpa_err_init(&err);
	vpa_buf_init(&x);
	vpa_buf_init(&path);
	vpa_report_junit_error(suite, message, &x);
	vpa_buf_printf(&path, "%s/junit.xml", outdir);
	struct vpa_atomic a;
	memset(&a, 0, sizeof(a));
	FILE *f = NULL;
	if (vpa_mkdirs(outdir, &err)) {
		/* the run's own error says why the folder is unusable */
	} else if ((f = vpa_atomic_open(path.data, &a, &err)) && fwrite(x.data, 1, x.len, f) == x.len &&
		   fflush(f) == 0) {
		vpa_atomic_commit(&a, &err);
	} else {
		if (f)
			vpa_atomic_abort(&a);
		vpa_warn("%s: cannot write the error report: %s", path.data, err.msg);
	}
	vpa_buf_release(&path);
	vpa_buf_release(&x);
}
