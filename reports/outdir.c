/*
 * reports/outdir.c - the output folder of `vpaudit run`: checked before any
 * computation (created, writable, gnuplot runs when plots are asked for,
 * stale temporaries of killed runs removed), left with the complete new set
 * of report files after a run, or with none of an earlier run after a
 * failure.  See report.h and reports/README.md ("The output folder").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

size_t vpa_outdir_remove_stale(const char *outdir)
{
	struct vpa_buf path;
	size_t removed = 0;
	vpa_buf_init(&path);
	for (int k = 0; k < N_REPORT; k++) {
		path.len = 0;
		vpa_buf_printf(&path, "%s/%s", outdir, report_names[k]);
		removed += vpa_tmp_remove_stale(path.data);
	}
	vpa_buf_release(&path);
	return removed;
}

/* Set when the output folder was found unwritable: the run's error says so, and
 * vpa_outdir_fail then says nothing more about the files it cannot write. */
static int outdir_unwritable;

/* Below this many free bytes in the output folder, a warning before computing. */
#define OUTDIR_LOW_SPACE (64ull << 20)

int vpa_outdir_prepare(const char *outdir, unsigned formats, int no_plots, struct vpa_err *err)
{
	int rc = vpa_mkdirs(outdir, err);
	if (rc)
		return rc;
	size_t n = vpa_outdir_remove_stale(outdir);
	if (n)
		vpa_warn("%s: removed %zu temporary file%s left by a killed run", outdir, n,
			 n == 1 ? "" : "s");
	/* writable: the report files are created there at the end (created as
	 * they will be: a link planted at the probe's name is not followed) */
	struct vpa_buf probe;
	vpa_buf_init(&probe);
	vpa_buf_printf(&probe, "%s/results.json.tmp.%ld", outdir, (long)getpid());
	vpa_tmp_register(probe.data, 0);
	int fd = vpa_create_new(probe.data);
	if (fd < 0 || close(fd) != 0) {
		struct vpa_loc loc = {outdir, 0, 0};
		rc = vpa_fail(err, VPA_EIO, &loc, "cannot write in the output folder: %s",
			      strerror(errno));
		outdir_unwritable = 1;
	}
	if (fd >= 0)
		unlink(probe.data);
	vpa_tmp_unregister(probe.data);
	vpa_buf_release(&probe);
	if (rc)
		return rc;
	/* a run killed later must not leave the previous run's reports (a
	 * passing junit.xml) looking current */
	vpa_outdir_remove_reports(outdir, 0);
	struct statvfs fs;
	if (statvfs(outdir, &fs) == 0) {
		unsigned long long avail = (unsigned long long)fs.f_bavail * fs.f_frsize;
		if (avail < OUTDIR_LOW_SPACE)
			vpa_warn("%s: only %.1f MiB free: the report may not fit", outdir,
				 (double)avail / (1 << 20));
	}
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
		/* a file that is not there needs no word, even where removing
		 * says "Read-only file system" before looking */
		struct stat st;
		if (lstat(path.data, &st) != 0)
			continue;
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
	struct vpa_err quiet;
	vpa_err_init(&quiet);
	if (outdir_unwritable || vpa_mkdirs(outdir, &quiet)) {
		/* the run's own error says why the folder is unusable */
	} else if ((f = vpa_atomic_open(path.data, &a, &err))) {
		if (fwrite(x.data, 1, x.len, f) != x.len || fflush(f) != 0) {
			struct vpa_loc loc = {path.data, 0, 0};
			vpa_fail(&err, VPA_EIO, &loc, "write error: %s", strerror(errno));
			vpa_atomic_abort(&a);
		} else {
			vpa_atomic_commit(&a, &err);
		}
	}
	/* the reason stays (a full disk: "No space left on device") */
	if (err.status)
		vpa_warn("cannot write the error report %s", err.msg);
	vpa_buf_release(&path);
	vpa_buf_release(&x);
}
