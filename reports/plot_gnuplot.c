/*
 * reports/plot_gnuplot.c - the gnuplot process (split from reports/plot.c,
 * which keeps the quoting of text for scripts and the rendering; the figure
 * checks are in reports/plot_check.c, the figure scripts in
 * reports/plot_scripts.c).
 *
 * gnuplot runs as a child process (fork/execv, never a shell): the script,
 * data included as inline blocks ($name << EOD), goes to its standard input
 * and the terminal output (SVG or PDF bytes) comes back on its standard
 * output, because no `set output` is given.  gnuplot is told to read the
 * file /dev/stdin rather than to read commands from standard input: its
 * interactive reader is 4-5 times slower on large inline data than its file
 * reader (3.9 s against 0.9 s for 100 DET figures).  SIGPIPE is blocked in
 * the calling thread while we write, so a gnuplot that dies early gives EPIPE
 * instead of killing vpaudit; a SIGPIPE raised meanwhile is consumed before
 * the mask is restored.  All three descriptors are serviced by one poll()
 * loop, so neither side can block the other however large the script or
 * the output.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reports/table.h"

#define GNUPLOT_TIMEOUT_S 300
/* A gnuplot exits as it closes its output; one that lingers is killed. */
#define GNUPLOT_EXIT_GRACE_S 10

/* ---- process ---- */

/* Find an executable regular file "gnuplot" in $PATH; caller frees *out. */
static int find_gnuplot(char **out, struct vpa_err *err)
{
	const char *path = getenv("PATH");
	if (path) {
		const char *p = path;
		for (;;) {
			const char *e = strchr(p, ':');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			struct vpa_buf b;
			vpa_buf_init(&b);
			/* An empty PATH entry means the current folder. */
			if (n == 0)
				vpa_buf_puts(&b, ".");
			else
				vpa_buf_add(&b, p, n);
			vpa_buf_puts(&b, "/gnuplot");
			struct stat st;
			if (stat(b.data, &st) == 0 && S_ISREG(st.st_mode) && access(b.data, X_OK) == 0) {
				*out = b.data;
				return 0;
			}
			vpa_buf_release(&b);
			if (!e)
				break;
			p = e + 1;
		}
	}
	return vpa_fail(err, VPA_EIO, NULL, "gnuplot not found: install gnuplot-nox or run with --no-plots");
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/*
 * Where "line N: " starts in an error line of gnuplot: at its start (commands
 * read interactively) or after the quoted file name ("/dev/stdin" line 3: ...).
 */
static const char *error_position(const char *a, const char *z)
{
	const char *p = a;
	if (*p == '"') {
		const char *q = memchr(p + 1, '"', (size_t)(z - p - 1));
		if (!q || q + 1 >= z || q[1] != ' ')
			return NULL;
		p = q + 2;
	}
	if (z - p < 7 || strncmp(p, "line ", 5))
		return NULL;
	const char *d = p + 5;
	while (d < z && *d >= '0' && *d <= '9')
		d++;
	return d > p + 5 && d < z && *d == ':' ? p : NULL;
}

/*
 * The first line of gnuplot's stderr that reports an error: "line N: ..."
 * lines that are not warnings, else the first non-blank line that is not
 * an echo of the script ("gnuplot> ...") or a caret.  Returns a malloc'd
 * trimmed copy or NULL.
 */
static char *first_error_line(const char *s)
{
	const char *fallback = NULL;
	size_t fallback_n = 0;
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		const char *a = s, *z = s + n;
		while (a < z && (*a == ' ' || *a == '\t' || *a == '\r'))
			a++;
		while (z > a && (z[-1] == ' ' || z[-1] == '\t' || z[-1] == '\r'))
			z--;
		if (z > a) {
			int is_warning = memmem(a, (size_t)(z - a), "arning:", 7) != NULL ||
					 memmem(a, (size_t)(z - a), "ARNING:", 7) != NULL;
			int is_echo = !strncmp(a, "gnuplot>", 8) || (z - a == 1 && *a == '^');
			const char *l = error_position(a, z);
			if (l && !is_warning)
				return strndup(l, (size_t)(z - l));
			if (!fallback && !is_warning && !is_echo) {
				fallback = a;
				fallback_n = (size_t)(z - a);
			}
		}
		if (!e)
			break;
		s = e + 1;
	}
	return fallback ? strndup(fallback, fallback_n) : NULL;
}

/* Pass gnuplot's warnings on (one vpa_warn per line, deduplicated). */
static void forward_warnings(const char *s)
{
	char *last = NULL;
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		if (memmem(s, n, "arning:", 7) || memmem(s, n, "ARNING:", 7)) {
			const char *a = s;
			while (a < s + n && (*a == ' ' || *a == '\t'))
				a++;
			char *line = strndup(a, n - (size_t)(a - s));
			if (!last || strcmp(last, line))
				vpa_warn("gnuplot: %s", line);
			free(last);
			last = line;
		}
		if (!e)
			break;
		s = e + 1;
	}
	free(last);
}

/* One gnuplot child. */
struct job {
	const char *script; /* borrowed */
	size_t len, sent;
	struct vpa_buf *out; /* borrowed: stdout is appended here */
	struct vpa_buf eb;   /* stderr */
	pid_t pid;
	int in, po, pe; /* our ends: stdin (write), stdout, stderr (read); -1 when closed */
	int status;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Start one gnuplot reading /dev/stdin; SIGPIPE is already blocked. */
static int start_job(struct job *j, const char *exe, const sigset_t *child_mask,
		     struct vpa_err *err)
{
	int in[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1};
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
		int e = errno;
		for (int k = 0; k < 2; k++) {
			close_fd(&in[k]);
			close_fd(&po[k]);
			close_fd(&pe[k]);
		}
		return vpa_fail(err, VPA_EIO, NULL, "cannot start gnuplot: %s", strerror(e));
	}
	pid_t pid = fork();
	if (pid == 0) {
		/* Child: only async-signal-safe calls until execv. */
		if (dup2(in[0], 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(127);
		pthread_sigmask(SIG_SETMASK, child_mask, NULL);
		char *argv[] = {"gnuplot", "-d", "/dev/stdin", NULL};
		execv(exe, argv);
		static const char msg[] = "cannot execute gnuplot\n";
		ssize_t w = write(2, msg, sizeof(msg) - 1);
		(void)w;
		_exit(127);
	}
	int e = errno;
	close_fd(&in[0]);
	close_fd(&po[1]);
	close_fd(&pe[1]);
	if (pid < 0) {
		close_fd(&in[1]);
		close_fd(&po[0]);
		close_fd(&pe[0]);
		return vpa_fail(err, VPA_EIO, NULL, "cannot start gnuplot: %s", strerror(e));
	}
	j->pid = pid;
	j->in = in[1];
	j->po = po[0];
	j->pe = pe[0];
	set_nonblock(j->in);
	set_nonblock(j->po);
	set_nonblock(j->pe);
	if (j->len == 0)
		close_fd(&j->in);
	return 0;
}

/* Turn a finished job's exit status and stderr into 0 or an error. */
static int finish_job(struct job *j, struct vpa_err *err)
{
	int rc = 0;
	vpa_buf_str(&j->eb);
	char *line = first_error_line(j->eb.data);
	int st = j->status;
	int failed = !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	/* An error line that is no warning means the script failed even if the
	 * exit status says otherwise. */
	if (!failed && line && !strncmp(line, "line ", 5))
		failed = 1;
	if (failed) {
		if (line)
			rc = vpa_fail(err, VPA_EIO, NULL, "gnuplot failed: %s", line);
		else if (WIFEXITED(st))
			rc = vpa_fail(err, VPA_EIO, NULL, "gnuplot failed: exit status %d", WEXITSTATUS(st));
		else
			rc = vpa_fail(err, VPA_EIO, NULL, "gnuplot failed: killed by signal %d", WTERMSIG(st));
	} else {
		forward_warnings(j->eb.data);
	}
	free(line);
	return rc;
}

/*
 * Reap the job by `deadline` (vpa_now() seconds): 1 when it exited (or is
 * not our child: j->status stays 0), 0 when it is still running then.
 */
static int reap_by(struct job *j, double deadline)
{
	for (;;) {
		pid_t w = waitpid(j->pid, &j->status, WNOHANG);
		if (w == j->pid || (w < 0 && errno != EINTR))
			return 1;
		if (vpa_now() >= deadline)
			return 0;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

int vpa_gnuplot_run_many(const char *const *scripts, const size_t *lens, size_t n,
			 struct vpa_buf *outs, struct vpa_err *err)
{
	if (n == 0)
		return 0;
	char *exe = NULL;
	int rc = find_gnuplot(&exe, err);
	if (rc)
		return rc;
	struct job *jobs = xcalloc(n, sizeof(*jobs));
	struct pollfd *p = xcalloc(3 * n, sizeof(*p));
	struct { size_t job; int which; } *who = xcalloc(3 * n, sizeof(*who));
	for (size_t i = 0; i < n; i++) {
		jobs[i] = (struct job){scripts[i], lens[i], 0, &outs[i], {0}, -1, -1, -1, -1, 0};
		vpa_buf_init(&jobs[i].eb);
	}
	sigset_t pipe_set, old_mask, pending;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
	sigpending(&pending);
	int pipe_was_pending = sigismember(&pending, SIGPIPE);

	for (size_t i = 0; i < n && !rc; i++)
		rc = start_job(&jobs[i], exe, &old_mask, err);
	double t0 = vpa_now();
	char chunk[65536];
	while (!rc) {
		nfds_t np = 0;
		for (size_t i = 0; i < n; i++) {
			struct job *j = &jobs[i];
			int fds[3] = {j->in, j->po, j->pe};
			for (int k = 0; k < 3; k++)
				if (fds[k] >= 0) {
					p[np] = (struct pollfd){fds[k], k ? POLLIN : POLLOUT, 0};
					who[np].job = i;
					who[np++].which = k;
				}
		}
		/* Done when every stdout and stderr reached end of file. */
		int reading = 0;
		for (nfds_t q = 0; q < np; q++)
			reading |= who[q].which != 0;
		if (!reading)
			break;
		int r = poll(p, np, 1000);
		if (r < 0 && errno != EINTR) {
			rc = vpa_fail(err, VPA_EIO, NULL, "gnuplot: poll: %s", strerror(errno));
			break;
		}
		if (vpa_now() - t0 > GNUPLOT_TIMEOUT_S) {
			rc = vpa_fail(err, VPA_EIO, NULL, "gnuplot timed out after %d s", GNUPLOT_TIMEOUT_S);
			break;
		}
		for (nfds_t q = 0; r > 0 && q < np; q++) {
			if (!p[q].revents)
				continue;
			struct job *j = &jobs[who[q].job];
			if (who[q].which == 0) {
				ssize_t w = write(j->in, j->script + j->sent, j->len - j->sent);
				if (w > 0)
					j->sent += (size_t)w;
				else if (w < 0 && errno != EAGAIN && errno != EINTR)
					j->sent = j->len; /* EPIPE: gnuplot stopped reading; stderr says why */
				if (j->sent == j->len)
					close_fd(&j->in);
				continue;
			}
			int *fd = who[q].which == 1 ? &j->po : &j->pe;
			ssize_t got = read(*fd, chunk, sizeof(chunk));
			if (got > 0)
				vpa_buf_add(who[q].which == 1 ? j->out : &j->eb, chunk, (size_t)got);
			else if (got == 0 || (errno != EAGAIN && errno != EINTR))
				close_fd(fd);
		}
	}
	/* Every output is closed (or we failed): reap the children, but a
	 * gnuplot that closed its output and stays alive is not waited for
	 * without limit (issue 26 item 11). */
	double deadline = vpa_now() + GNUPLOT_EXIT_GRACE_S;
	for (size_t i = 0; i < n; i++) {
		struct job *j = &jobs[i];
		if (j->pid <= 0)
			continue;
		if (!rc && reap_by(j, deadline)) {
			rc = finish_job(j, err);
			continue;
		}
		if (!rc)
			rc = vpa_fail(err, VPA_EIO, NULL,
				      "gnuplot did not exit within %d s of closing its output: killed it",
				      GNUPLOT_EXIT_GRACE_S);
		kill(j->pid, SIGKILL);
		while (waitpid(j->pid, &j->status, 0) < 0 && errno == EINTR)
			;
	}
	for (size_t i = 0; i < n; i++) {
		close_fd(&jobs[i].in);
		close_fd(&jobs[i].po);
		close_fd(&jobs[i].pe);
		vpa_buf_release(&jobs[i].eb);
	}
	/* Consume a SIGPIPE our writes raised, then restore the caller's mask. */
	sigpending(&pending);
	if (!pipe_was_pending && sigismember(&pending, SIGPIPE)) {
		struct timespec zero = {0, 0};
		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	free(who);
	free(p);
	free(jobs);
	free(exe);
	return rc;
}

int vpa_gnuplot_run(const char *script, size_t len, struct vpa_buf *out, struct vpa_err *err)
{
	return vpa_gnuplot_run_many(&script, &len, 1, out, err);
}

