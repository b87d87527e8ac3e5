/*
 * reports/pdf_child.c - report.pdf typeset in a child process.
 *
 * GLib (under Pango, cairo's font code and librsvg) ends the process when an
 * allocation fails: g_malloc prints "failed to allocate N bytes" and traps
 * (SIGTRAP, exit status 133), where vpaudit promises one error line "out of
 * memory (allocating N bytes)" and exit status 1 (issue 26 item 5).  So the
 * PDF is typeset by vpa_pdf_doc in a forked child (no exec: it inherits the
 * document and the SVGs in memory), whose bytes come back on a pipe into
 * memory: report.pdf is still written by the parent with the other files, all
 * or nothing.  Whatever ends the child (its own error, our allocator's
 * out-of-memory exit, GLib's trap, a crash in a library) becomes one error
 * line in the parent; the child's stderr is read by the parent, passed on when
 * the child succeeded (warnings) and summarised when it failed.
 *
 * The wire: 'P' and the PDF bytes, or 'E', the status (one byte, -status) and
 * the error message.  The child leaves with _exit: no atexit handler of the
 * parent and no copy of its buffered stdout runs twice.
 *
 * Test hook: VPAUDIT_TEST_PDF_HEADROOM_MB=N lets the child's address space
 * grow by only N MiB (RLIMIT_AS), to reach these failures in tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reports/doc.h"

static void write_all(int fd, const void *p, size_t n)
{
	const char *s = p;
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(3); /* the parent is gone or failed: it reports */
		s += w;
		n -= (size_t)w;
	}
}

/* The test hook above: RLIMIT_AS = the size now + N MiB. */
static void limit_memory(void)
{
	const char *h = getenv("VPAUDIT_TEST_PDF_HEADROOM_MB");
	if (!h || !*h)
		return;
	char *end;
	long mb = strtol(h, &end, 10);
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (*end || mb < 0 || !f || fscanf(f, "%lu", &pages) != 1) {
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	rlim_t lim = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)mb << 20);
	struct rlimit rl = {lim, lim};
	setrlimit(RLIMIT_AS, &rl);
}

static _Noreturn void child(int out, int errfd, const struct vpa_doc *d,
			    const struct vpa_buf *svgs, size_t n_figs)
{
	/* Ctrl-C and kill reach the parent, which reaps us; no handler of the
	 * parent's (cleaning its temporaries) may run here. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (dup2(errfd, 2) < 0)
		_exit(4);
	struct rlimit no_core = {0, 0}; /* GLib's trap leaves no core file */
	setrlimit(RLIMIT_CORE, &no_core);
	limit_memory();
	struct vpa_buf pdf;
	struct vpa_err err;
	vpa_buf_init(&pdf);
	vpa_err_init(&err);
	int rc = vpa_pdf_doc(d, svgs, n_figs, &pdf, &err);
	if (rc) {
		unsigned char head[2] = {'E', (unsigned char)-rc};
		write_all(out, head, 2);
		write_all(out, err.msg, strlen(err.msg));
	} else {
		write_all(out, "P", 1);
		write_all(out, pdf.data, pdf.len);
	}
	_exit(0);
}

/* Read both pipes to their end (into a and b); 0 or errno. */
static int drain(int fa, struct vpa_buf *a, int fb, struct vpa_buf *b)
{
	char chunk[65536];
	int fd[2] = {fa, fb};
	struct vpa_buf *to[2] = {a, b};
	while (fd[0] >= 0 || fd[1] >= 0) {
		struct pollfd p[2];
		nfds_t n = 0;
		int which[2];
		for (int k = 0; k < 2; k++)
			if (fd[k] >= 0) {
				p[n] = (struct pollfd){fd[k], POLLIN, 0};
				which[n++] = k;
			}
		if (poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		for (nfds_t q = 0; q < n; q++) {
			if (!p[q].revents)
				continue;
			int k = which[q];
			ssize_t got = read(fd[k], chunk, sizeof(chunk));
			if (got > 0)
				vpa_buf_add(to[k], chunk, (size_t)got);
			else if (got == 0 || (errno != EINTR && errno != EAGAIN))
				fd[k] = -1;
		}
	}
	return 0;
}

/*
 * "N" of "failed to allocate N bytes" (GLib), "memory allocation of N bytes
 * failed" (librsvg's Rust) or "out of memory (allocating N bytes)" / "(allocating
 * N * M bytes)" (base/base.c) in the child's stderr, copied to out; 1 when found.
 */
static int oom_size(const char *s, char *out, size_t cap)
{
	static const char *const marks[] = {"failed to allocate ", "memory allocation of ",
					    "out of memory (allocating "};
	for (size_t k = 0; k < sizeof(marks) / sizeof(*marks); k++) {
		const char *p = strstr(s, marks[k]);
		if (!p)
			continue;
		p += strlen(marks[k]);
		const char *e = strstr(p, " bytes");
		size_t n = e ? (size_t)(e - p) : 0;
		if (!n || n >= cap || strspn(p, "0123456789 *") < n)
			continue;
		memcpy(out, p, n);
		out[n] = '\0';
		return 1;
	}
	return 0;
}

/*
 * The child's first stderr line, printable and at most 200 bytes; GLib's
 * "(process:PID): GLib-ERROR **: 11:00:02.197: what" becomes "GLib: what".
 */
static void first_line(const char *s, char *out, size_t cap)
{
	size_t n = 0;
	while (*s == '\n')
		s++;
	const char *eol = strchr(s, '\n'), *stars = strstr(s, " **: ");
	if (stars && (!eol || stars < eol)) {
		const char *dom = strstr(s, "): ");
		dom = dom && dom < stars ? dom + 3 : s;
		const char *dash = memchr(dom, '-', (size_t)(stars - dom));
		size_t dl = (size_t)((dash ? dash : stars) - dom);
		const char *m = stars + 5;
		size_t t = strspn(m, "0123456789:.");
		if (t && m[t - 1] == ':' && m[t] == ' ')
			m += t + 1;
		for (size_t i = 0; i < dl && n + 3 < cap; i++)
			out[n++] = dom[i];
		out[n++] = ':';
		out[n++] = ' ';
		s = m;
	}
	for (; *s && *s != '\n' && n + 1 < cap && n < 200; s++)
		out[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s;
	out[n] = '\0';
}

int vpa_pdf_doc_child(const struct vpa_doc *d, const struct vpa_buf *svgs, size_t n_figs,
		      struct vpa_buf *out, struct vpa_err *err)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
		int e = errno;
		for (int k = 0; k < 2; k++) {
			if (po[k] >= 0)
				close(po[k]);
			if (pe[k] >= 0)
				close(pe[k]);
		}
		return vpa_fail(err, VPA_EIO, NULL, "report.pdf: cannot start the typesetter: %s",
				strerror(e));
	}
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		close(po[0]);
		close(pe[0]);
		child(po[1], pe[1], d, svgs, n_figs);
	}
	int fork_errno = errno;
	close(po[1]);
	close(pe[1]);
	struct vpa_buf data, msgs;
	vpa_buf_init(&data);
	vpa_buf_init(&msgs);
	int rc = 0, st = 0;
	if (pid < 0) {
		rc = vpa_fail(err, VPA_EIO, NULL, "report.pdf: cannot start the typesetter: %s",
			      strerror(fork_errno));
		goto out;
	}
	int e = drain(po[0], &data, pe[0], &msgs);
	if (e) /* it may be blocked writing to us */
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	vpa_buf_str(&msgs);
	char what[64], line[256];
	first_line(msgs.data, line, sizeof(line));
	int oom_said = strstr(msgs.data, "Cannot allocate memory") || strstr(msgs.data, "out of memory");
	if (e) {
		rc = vpa_fail(err, VPA_EIO, NULL, "report.pdf: reading the typesetter: %s", strerror(e));
	} else if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && data.len >= 1 && data.data[0] == 'P') {
		vpa_buf_add(out, data.data + 1, data.len - 1);
		if (msgs.len) /* its warnings */
			fputs(msgs.data, stderr);
	} else if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && data.len >= 2 && data.data[0] == 'E') {
		rc = vpa_fail(err, -(int)(unsigned char)data.data[1], NULL, "%.*s",
			      (int)(data.len - 2), data.data + 2);
	} else if (oom_size(msgs.data, what, sizeof(what))) {
		rc = vpa_fail(err, VPA_ENOMEM, NULL,
			      "out of memory (allocating %s bytes) while typesetting report.pdf", what);
	} else if (oom_said) {
		rc = vpa_fail(err, VPA_ENOMEM, NULL, "out of memory while typesetting report.pdf: %s",
			      line);
	} else {
		if (WIFSIGNALED(st))
			rc = vpa_fail(err, VPA_EIO, NULL,
				      "report.pdf: the typesetter was killed by signal %d (%s)%s%s",
				      WTERMSIG(st), strsignal(WTERMSIG(st)), *line ? ": " : "", line);
		else
			rc = vpa_fail(err, VPA_EIO, NULL,
				      "report.pdf: the typesetter failed (exit status %d)%s%s",
				      WIFEXITED(st) ? WEXITSTATUS(st) : -1, *line ? ": " : "", line);
	}
out:
	close(po[0]);
	close(pe[0]);
	vpa_buf_release(&data);
	vpa_buf_release(&msgs);
	return rc;
}
