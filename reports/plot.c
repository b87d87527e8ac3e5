/*
 * reports/plot.c - the gnuplot driver and the three figure types.
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
 *
 * Figures (see reports/README.md):
 *   det          probit ("normal deviate") axes: a probability p is drawn at
 *                invnorm(p).  p is clamped to the axis limits, so p = 0 and
 *                p = 1 lie on the frame instead of at -/+infinity.  The axes
 *                span 0.1%..40% when every EER is at most 30%, else
 *                0.1%..99.9% (anonymised systems sit near 50%).
 *   linkability  mated and non-mated score densities as translucent boxes,
 *                D<->(s) on the second y axis (0..1), D<->sys and omega in
 *                the title (Gomez-Barrero et al. 2017; the VoicePrivacy
 *                linkability figure).
 *   lines        x/y series with points, optional log x axis.
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
	for (size_t i = 0; i < n; i++) {
		struct job *j = &jobs[i];
		if (j->pid <= 0)
			continue;
		if (rc)
			kill(j->pid, SIGKILL);
		while (waitpid(j->pid, &j->status, 0) < 0 && errno == EINTR)
			;
		if (!rc)
			rc = finish_job(j, err);
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

/* ---- script text ---- */

/*
 * gnuplot (5.4) reads '' inside a single-quoted string as one quote only
 * after an ordinary character: a quote right after the opening quote or
 * after an escaped '' closes the string ('''B1' and 'a''''b' are syntax
 * errors).  So the text becomes a concatenation of single-quoted pieces in
 * which every quote follows an ordinary character, and each quote that
 * cannot be written so is the expression sprintf('%c',39):
 *   it's   -> 'it''s'
 *   'B1'   -> sprintf('%c',39).'B1'''
 *   a''b   -> 'a'''.sprintf('%c',39).'b'
 * Double-quoted strings are never used (they expand backquotes).  Control
 * characters (and DEL) become spaces: a newline would end the command.
 */
static void quote_text(struct vpa_buf *out, const char *s, int tic)
{
	int open = 0, plain = 0, first = 1;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\'') {
			if (open && plain) {
				vpa_buf_puts(out, "''");
				plain = 0;
				continue;
			}
			if (open)
				vpa_buf_puts(out, "'");
			vpa_buf_puts(out, first ? "sprintf('%c',39)" : ".sprintf('%c',39)");
			open = plain = first = 0;
			continue;
		}
		if (!open) {
			vpa_buf_puts(out, first ? "'" : ".'");
			open = 1;
			first = 0;
		}
		if (c < 0x20 || c == 0x7f)
			vpa_buf_puts(out, " ");
		else if (c == '%' && tic)
			vpa_buf_puts(out, "%%");
		else
			vpa_buf_add(out, s, 1);
		plain = 1;
	}
	if (open)
		vpa_buf_puts(out, "'");
	else if (first)
		vpa_buf_puts(out, "''");
}

void vpa_gnuplot_quote(struct vpa_buf *out, const char *s)
{
	quote_text(out, s, 0);
}

/* A tic label is a format for the tic's value: % is written %%. */
void vpa_gnuplot_quote_tic(struct vpa_buf *out, const char *s)
{
	quote_text(out, s, 1);
}

/* A number for the script or a data block: shortest that round-trips well enough. */
static void put_num(struct vpa_buf *b, double x)
{
	vpa_buf_printf(b, "%.10g", x);
}

/* ---- figure checks ---- */

static int fig_fail(struct vpa_err *err, const char *name, const struct vpa_json *v,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fig_fail(struct vpa_err *err, const char *name, const struct vpa_json *v,
		    const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (name) {
		struct vpa_loc loc = {name, v ? v->line : 0, v ? v->col : 0};
		return vpa_fail(err, VPA_EINPUT, &loc, "%s", msg);
	}
	return vpa_fail(err, VPA_EINPUT, NULL, "%s", msg);
}

/* The figure's id or type for messages. */
static const char *fig_label(const struct vpa_json *fig)
{
	const char *id = vpa_json_get_str(fig, "id");
	if (id)
		return id;
	const char *t = vpa_json_get_str(fig, "type");
	return t ? t : "?";
}

/* An array of numbers or nulls at key; *n its length. */
static int check_nums(const struct vpa_json *fig, const struct vpa_json *obj, const char *key,
		      const char *name, size_t *n, struct vpa_err *err)
{
	const struct vpa_json *a = vpa_json_get(obj, key);
	if (!a)
		return fig_fail(err, name, obj, "figure '%s': missing '%s'", fig_label(fig), key);
	if (a->type != VPA_JSON_ARR)
		return fig_fail(err, name, a, "figure '%s': '%s' must be an array of numbers",
				fig_label(fig), key);
	for (size_t i = 0; i < a->n; i++)
		if (a->items[i]->type != VPA_JSON_NUM && a->items[i]->type != VPA_JSON_NULL)
			return fig_fail(err, name, a->items[i],
					"figure '%s': '%s' must be an array of numbers",
					fig_label(fig), key);
	*n = a->n;
	return 0;
}

static int check_opt_str(const struct vpa_json *fig, const struct vpa_json *obj, const char *key,
			 const char *name, struct vpa_err *err)
{
	const struct vpa_json *v = vpa_json_get(obj, key);
	if (v && v->type != VPA_JSON_STR && v->type != VPA_JSON_NULL)
		return fig_fail(err, name, v, "figure '%s': '%s' must be a string", fig_label(fig), key);
	return 0;
}

static int check_opt_num(const struct vpa_json *fig, const struct vpa_json *obj, const char *key,
			 const char *name, struct vpa_err *err)
{
	const struct vpa_json *v = vpa_json_get(obj, key);
	if (v && v->type != VPA_JSON_NUM && v->type != VPA_JSON_NULL)
		return fig_fail(err, name, v, "figure '%s': '%s' must be a number or null",
				fig_label(fig), key);
	return 0;
}

static int check_series(const struct vpa_json *fig, const char *xk, const char *yk,
			const char *name, struct vpa_err *err)
{
	const struct vpa_json *s = vpa_json_get(fig, "series");
	if (!s)
		return fig_fail(err, name, fig, "figure '%s': missing 'series'", fig_label(fig));
	if (s->type != VPA_JSON_ARR)
		return fig_fail(err, name, s, "figure '%s': 'series' must be an array", fig_label(fig));
	for (size_t i = 0; i < s->n; i++) {
		const struct vpa_json *one = s->items[i];
		size_t nx, ny;
		if (one->type != VPA_JSON_OBJ)
			return fig_fail(err, name, one, "figure '%s': series %zu must be an object",
					fig_label(fig), i + 1);
		int rc = check_opt_str(fig, one, "name", name, err);
		if (!rc)
			rc = check_nums(fig, one, xk, name, &nx, err);
		if (!rc)
			rc = check_nums(fig, one, yk, name, &ny, err);
		if (rc)
			return rc;
		if (nx != ny)
			return fig_fail(err, name, one,
					"figure '%s': series %zu: '%s' has %zu values but '%s' has %zu",
					fig_label(fig), i + 1, xk, nx, yk, ny);
	}
	return 0;
}

/* Optional "yrange": [lo, hi] with lo < hi (a fixed scale: 0-1, 0-0.5). */
static int check_yrange(const struct vpa_json *fig, const char *name, struct vpa_err *err)
{
	const struct vpa_json *y = vpa_json_get(fig, "yrange");
	if (!y || y->type == VPA_JSON_NULL)
		return 0;
	if (y->type != VPA_JSON_ARR || y->n != 2 || y->items[0]->type != VPA_JSON_NUM ||
	    y->items[1]->type != VPA_JSON_NUM || !(y->items[0]->num < y->items[1]->num) ||
	    !isfinite(y->items[0]->num) || !isfinite(y->items[1]->num))
		return fig_fail(err, name, y, "figure '%s': 'yrange' must be [low, high] with low < high",
				fig_label(fig));
	return 0;
}

static int has_yrange(const struct vpa_json *fig, double *lo, double *hi)
{
	const struct vpa_json *y = vpa_json_get(fig, "yrange");
	if (!y || y->type != VPA_JSON_ARR || y->n != 2)
		return 0;
	*lo = y->items[0]->num;
	*hi = y->items[1]->num;
	return 1;
}

int vpa_plot_check(const struct vpa_json *fig, const char *name, struct vpa_err *err)
{
	if (!fig || fig->type != VPA_JSON_OBJ)
		return fig_fail(err, name, fig, "a figure must be an object");
	const struct vpa_json *t = vpa_json_get(fig, "type");
	if (!t)
		return fig_fail(err, name, fig, "figure '%s': missing 'type'", fig_label(fig));
	int rc = check_opt_str(fig, fig, "title", name, err);
	if (!rc)
		rc = check_opt_str(fig, fig, "id", name, err);
	if (rc)
		return rc;
	const char *type = t->type == VPA_JSON_STR ? t->str : "";
	if (!strcmp(type, "det")) {
		rc = check_series(fig, "p_fa", "p_miss", name, err);
		const struct vpa_json *s = vpa_json_get(fig, "series");
		for (size_t i = 0; !rc && i < s->n; i++)
			rc = check_opt_num(fig, s->items[i], "eer", name, err);
		return rc;
	}
	if (!strcmp(type, "lines")) {
		rc = check_opt_str(fig, fig, "xlabel", name, err);
		if (!rc)
			rc = check_opt_str(fig, fig, "ylabel", name, err);
		const struct vpa_json *lx = vpa_json_get(fig, "logx");
		if (!rc && lx && lx->type != VPA_JSON_BOOL && lx->type != VPA_JSON_NULL)
			rc = fig_fail(err, name, lx, "figure '%s': 'logx' must be true or false",
				      fig_label(fig));
		const struct vpa_json *tl = vpa_json_get(fig, "xticlabels");
		if (!rc && tl && tl->type != VPA_JSON_NULL) {
			int ok = tl->type == VPA_JSON_ARR;
			for (size_t i = 0; ok && i < tl->n; i++)
				ok = tl->items[i]->type == VPA_JSON_STR;
			if (!ok)
				rc = fig_fail(err, name, tl,
					      "figure '%s': 'xticlabels' must be an array of strings",
					      fig_label(fig));
		}
		if (!rc)
			rc = check_yrange(fig, name, err);
		return rc ? rc : check_series(fig, "x", "y", name, err);
	}
	if (!strcmp(type, "linkability")) {
		static const char *keys[] = {"centers", "p_mated", "p_non", "d_local"};
		size_t n[4];
		for (int k = 0; k < 4; k++)
			if ((rc = check_nums(fig, fig, keys[k], name, &n[k], err)))
				return rc;
		for (int k = 1; k < 4; k++)
			if (n[k] != n[0])
				return fig_fail(err, name, fig,
						"figure '%s': '%s' has %zu values but 'centers' has %zu",
						fig_label(fig), keys[k], n[k], n[0]);
		rc = check_opt_num(fig, fig, "dsys", name, err);
		return rc ? rc : check_opt_num(fig, fig, "omega", name, err);
	}
	if (!strcmp(type, "bars")) {
		rc = check_opt_str(fig, fig, "ylabel", name, err);
		const struct vpa_json *c = vpa_json_get(fig, "categories");
		int ok = c && c->type == VPA_JSON_ARR && c->n > 0;
		for (size_t i = 0; ok && i < c->n; i++)
			ok = c->items[i]->type == VPA_JSON_STR;
		if (!rc && !ok)
			rc = fig_fail(err, name, c ? c : fig,
				      "figure '%s': 'categories' must be a non-empty array of strings",
				      fig_label(fig));
		const struct vpa_json *s = vpa_json_get(fig, "series");
		if (!rc && (!s || s->type != VPA_JSON_ARR || s->n == 0))
			rc = fig_fail(err, name, s ? s : fig, "figure '%s': 'series' must be a non-empty array",
				      fig_label(fig));
		for (size_t i = 0; !rc && i < s->n; i++) {
			size_t n = 0;
			if (!(rc = check_opt_str(fig, s->items[i], "name", name, err)) &&
			    !(rc = check_nums(fig, s->items[i], "y", name, &n, err)) && n != c->n)
				rc = fig_fail(err, name, s->items[i],
					      "figure '%s': series %zu: 'y' has %zu values but there are %zu "
					      "categories", fig_label(fig), i + 1, n, c->n);
		}
		return rc ? rc : check_yrange(fig, name, err);
	}
	return fig_fail(err, name, t, "figure '%s': unknown type '%s' (expected det, linkability, lines or bars)",
			fig_label(fig), t->type == VPA_JSON_STR ? t->str : "(not a string)");
}

/* ---- figure scripts ---- */

static const char *palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
				"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define N_PALETTE (sizeof(palette) / sizeof(palette[0]))

/* A finite number at arr[i], or NAN. */
static double num_at(const struct vpa_json *arr, size_t i)
{
	const struct vpa_json *v = arr->items[i];
	return v->type == VPA_JSON_NUM && isfinite(v->num) ? v->num : NAN;
}

static void set_title(struct vpa_buf *s, const struct vpa_json *fig, const char *extra)
{
	const char *t = vpa_json_get_str(fig, "title");
	struct vpa_buf tb;
	vpa_buf_init(&tb);
	vpa_buf_puts(&tb, t ? t : "");
	if (extra) {
		if (tb.len)
			vpa_buf_puts(&tb, " - ");
		vpa_buf_puts(&tb, extra);
	}
	if (tb.len) {
		vpa_buf_puts(s, "set title ");
		vpa_gnuplot_quote(s, tb.data);
		vpa_buf_puts(s, "\n");
	}
	vpa_buf_release(&tb);
}

static double clampd(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* Percent text of a probability for legends: "12.3%". */
static void put_pct(struct vpa_buf *b, double p)
{
	vpa_buf_printf(b, "%.2f%%", 100 * p);
}

static void det_script(const struct vpa_json *fig, const char *tag, struct vpa_buf *s)
{
	const struct vpa_json *series = vpa_json_get(fig, "series");
	/* The axis range follows the largest EER; a series without "eer" gets
	 * the crossing of its curve with the diagonal, min_k max(p_miss, p_fa). */
	double max_eer = 0;
	for (size_t i = 0; i < series->n; i++) {
		const struct vpa_json *one = series->items[i];
		double e = vpa_json_get_num(one, "eer", NAN);
		if (!isfinite(e)) {
			const struct vpa_json *pf = vpa_json_get(one, "p_fa"), *pm = vpa_json_get(one, "p_miss");
			for (size_t k = 0; k < pf->n; k++) {
				double m = fmax(num_at(pf, k), num_at(pm, k));
				if (isfinite(m) && !(m >= e))
					e = m;
			}
		}
		if (isfinite(e) && e > max_eer)
			max_eer = e;
	}
	int wide = max_eer > 0.30;
	const double lo = 0.001, hi = wide ? 0.999 : 0.40;
	static const double narrow_ticks[] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4};
	static const double wide_ticks[] = {0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6,
					    0.8, 0.9, 0.95, 0.98, 0.99, 0.999};
	const double *ticks = wide ? wide_ticks : narrow_ticks;
	size_t nt = wide ? sizeof(wide_ticks) / sizeof(*wide_ticks)
			 : sizeof(narrow_ticks) / sizeof(*narrow_ticks);

	set_title(s, fig, NULL);
	vpa_buf_puts(s, "set size square\nset grid\nset key bottom left opaque box\n"
			"set xlabel 'false alarm rate (%)'\nset ylabel 'miss rate (%)'\n");
	vpa_buf_printf(s, "set xrange [invnorm(%g):invnorm(%g)]\nset yrange [invnorm(%g):invnorm(%g)]\n",
		       lo, hi, lo, hi);
	for (int axis = 0; axis < 2; axis++) {
		vpa_buf_puts(s, axis ? "set ytics (" : "set xtics (");
		for (size_t i = 0; i < nt; i++)
			vpa_buf_printf(s, "%s'%g' invnorm(%g)", i ? ", " : "", 100 * ticks[i], ticks[i]);
		vpa_buf_puts(s, ")\n");
	}
	vpa_buf_printf(s, "set arrow from invnorm(%g),invnorm(%g) to invnorm(%g),invnorm(%g) nohead dt 2 lc rgb '#888888'\n",
		       lo, lo, hi, hi);

	struct vpa_buf plot;
	vpa_buf_init(&plot);
	size_t drawn = 0;
	for (size_t i = 0; i < series->n; i++) {
		const struct vpa_json *one = series->items[i];
		const struct vpa_json *pf = vpa_json_get(one, "p_fa"), *pm = vpa_json_get(one, "p_miss");
		const char *color = palette[i % N_PALETTE];
		const char *name = vpa_json_get_str(one, "name");
		double eer = vpa_json_get_num(one, "eer", NAN);
		size_t valid = 0;
		vpa_buf_printf(s, "$%s_s%zu << EOD\n", tag, i);
		for (size_t k = 0; k < pf->n; k++) {
			double x = num_at(pf, k), y = num_at(pm, k);
			if (isnan(x) || isnan(y)) {
				vpa_buf_puts(s, "\n"); /* a gap in the curve */
				continue;
			}
			put_num(s, clampd(x, lo, hi));
			vpa_buf_puts(s, " ");
			put_num(s, clampd(y, lo, hi));
			vpa_buf_puts(s, "\n");
			valid++;
		}
		vpa_buf_puts(s, "EOD\n");
		struct vpa_buf label;
		vpa_buf_init(&label);
		vpa_buf_puts(&label, name ? name : "");
		if (isfinite(eer)) {
			vpa_buf_puts(&label, label.len ? " (EER " : "EER ");
			put_pct(&label, eer);
			if (name && *name)
				vpa_buf_puts(&label, ")");
		}
		if (valid) {
			vpa_buf_printf(&plot, "%s$%s_s%zu using (invnorm($1)):(invnorm($2)) with lines lw 2 lc rgb '%s' title ",
				       drawn++ ? ", " : "", tag, i, color);
			vpa_gnuplot_quote(&plot, vpa_buf_str(&label));
		}
		if (isfinite(eer)) {
			vpa_buf_printf(s, "$%s_e%zu << EOD\n", tag, i);
			put_num(s, clampd(eer, lo, hi));
			vpa_buf_puts(s, "\nEOD\n");
			vpa_buf_printf(&plot, "%s$%s_e%zu using (invnorm($1)):(invnorm($1)) with points pt 7 ps 1.2 lc rgb '%s' ",
				       drawn++ ? ", " : "", tag, i, color);
			if (valid)
				vpa_buf_puts(&plot, "notitle");
			else {
				vpa_buf_puts(&plot, "title ");
				vpa_gnuplot_quote(&plot, vpa_buf_str(&label));
			}
		}
		vpa_buf_release(&label);
	}
	if (!drawn)
		vpa_buf_puts(&plot, "NaN notitle");
	vpa_buf_puts(s, "plot ");
	vpa_buf_add(s, plot.data, plot.len);
	vpa_buf_puts(s, "\n");
	vpa_buf_release(&plot);
}

static void linkability_script(const struct vpa_json *fig, const char *tag, struct vpa_buf *s)
{
	const struct vpa_json *c = vpa_json_get(fig, "centers"), *pm = vpa_json_get(fig, "p_mated"),
			      *pn = vpa_json_get(fig, "p_non"), *dl = vpa_json_get(fig, "d_local");
	double dsys = vpa_json_get_num(fig, "dsys", NAN), omega = vpa_json_get_num(fig, "omega", NAN);
	struct vpa_buf extra;
	vpa_buf_init(&extra);
	vpa_buf_puts(&extra, "D\xe2\x86\x94sys = ");
	if (isfinite(dsys))
		vpa_buf_printf(&extra, "%.3f", dsys);
	else
		vpa_buf_puts(&extra, "undefined");
	if (isfinite(omega))
		vpa_buf_printf(&extra, ", \xcf\x89 = %g", omega);
	set_title(s, fig, extra.data);
	vpa_buf_release(&extra);

	/* Box width: the smallest spacing of consecutive finite centres. */
	double width = INFINITY, prev = NAN;
	size_t n_valid = 0;
	for (size_t i = 0; i < c->n; i++) {
		double x = num_at(c, i);
		if (isnan(x))
			continue;
		if (!isnan(prev) && fabs(x - prev) > 0 && fabs(x - prev) < width)
			width = fabs(x - prev);
		prev = x;
		n_valid++;
	}
	if (!isfinite(width))
		width = 1;
	vpa_buf_puts(s, "set grid\nset key top left opaque box\n"
			"set style fill transparent solid 0.45 noborder\n"
			"set xlabel 'score'\nset ylabel 'probability density'\n"
			"set y2label 'D\xe2\x86\x94(s)'\nset y2range [0:1]\nset y2tics 0.2\n"
			"set ytics nomirror\nset yrange [0:*]\n");
	vpa_buf_puts(s, "set boxwidth ");
	put_num(s, width);
	vpa_buf_puts(s, " absolute\n");
	static const char *names[] = {"m", "n", "d"};
	const struct vpa_json *ys[] = {pm, pn, dl};
	for (int k = 0; k < 3; k++) {
		vpa_buf_printf(s, "$%s_%s << EOD\n", tag, names[k]);
		for (size_t i = 0; i < c->n; i++) {
			double x = num_at(c, i), y = num_at(ys[k], i);
			if (isnan(x) || isnan(y)) {
				vpa_buf_puts(s, "\n");
				continue;
			}
			put_num(s, x);
			vpa_buf_puts(s, " ");
			put_num(s, k == 2 ? clampd(y, 0, 1) : y);
			vpa_buf_puts(s, "\n");
		}
		vpa_buf_puts(s, "EOD\n");
	}
	if (n_valid == 0) {
		vpa_buf_puts(s, "set xrange [0:1]\nset label 'no data' at graph 0.5,0.5 center\n"
				"plot NaN notitle\n");
		return;
	}
	vpa_buf_printf(s, "plot $%s_m using 1:2 with boxes lc rgb '#1f77b4' title 'mated', "
			  "$%s_n using 1:2 with boxes lc rgb '#d62728' title 'non-mated', "
			  "$%s_d using 1:2 axes x1y2 with lines lw 2 lc rgb '#000000' title 'D\xe2\x86\x94(s)'\n",
		       tag, tag, tag);
}

static void lines_script(const struct vpa_json *fig, const char *tag, struct vpa_buf *s)
{
	const struct vpa_json *series = vpa_json_get(fig, "series");
	const struct vpa_json *lx = vpa_json_get(fig, "logx");
	int logx = lx && lx->type == VPA_JSON_BOOL && lx->boolean;
	const char *xl = vpa_json_get_str(fig, "xlabel"), *yl = vpa_json_get_str(fig, "ylabel");
	set_title(s, fig, NULL);
	vpa_buf_puts(s, "set grid\nset key outside right top\n");
	if (xl) {
		vpa_buf_puts(s, "set xlabel ");
		vpa_gnuplot_quote(s, xl);
		vpa_buf_puts(s, "\n");
	}
	if (yl) {
		vpa_buf_puts(s, "set ylabel ");
		vpa_gnuplot_quote(s, yl);
		vpa_buf_puts(s, "\n");
	}
	if (logx)
		vpa_buf_puts(s, "set logscale x\n");
	/* Categorical x (a sweep over names): x = 0, 1, ... labelled by xticlabels. */
	const struct vpa_json *tl = vpa_json_get(fig, "xticlabels");
	if (tl && tl->type == VPA_JSON_ARR && tl->n) {
		vpa_buf_puts(s, "set xtics (");
		for (size_t i = 0; i < tl->n; i++) {
			if (i)
				vpa_buf_puts(s, ", ");
			vpa_gnuplot_quote_tic(s, tl->items[i]->str);
			vpa_buf_printf(s, " %zu", i);
		}
		vpa_buf_printf(s, ")\nset xrange [-0.5:%zu.5]\n", tl->n - 1);
	}
	/* One distinct x (a single repetition count, a one-value sweep) or one
	 * distinct y (a flat series): gnuplot cannot autoscale an empty range
	 * (it warns and widens it); centre the value ourselves. */
	double lo = INFINITY, hi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	for (size_t i = 0; i < series->n; i++) {
		const struct vpa_json *x = vpa_json_get(series->items[i], "x");
		const struct vpa_json *y = vpa_json_get(series->items[i], "y");
		for (size_t k = 0; k < x->n; k++) {
			double a = num_at(x, k), b = num_at(y, k);
			if (isnan(a) || isnan(b) || (logx && a <= 0))
				continue;
			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
			ylo = b < ylo ? b : ylo;
			yhi = b > yhi ? b : yhi;
		}
	}
	if (lo == hi && !(tl && tl->type == VPA_JSON_ARR && tl->n))
		vpa_buf_printf(s, "set xrange [%.17g:%.17g]\n", logx ? lo / 2 : lo - 1,
			       logx ? hi * 2 : hi + 1);
	double flo, fhi;
	if (has_yrange(fig, &flo, &fhi))
		vpa_buf_printf(s, "set yrange [%.17g:%.17g]\n", flo, fhi);
	else if (ylo == yhi)
		vpa_buf_printf(s, "set yrange [%.17g:%.17g]\n", ylo - 1, yhi + 1);
	struct vpa_buf plot;
	vpa_buf_init(&plot);
	size_t drawn = 0;
	for (size_t i = 0; i < series->n; i++) {
		const struct vpa_json *one = series->items[i];
		const struct vpa_json *x = vpa_json_get(one, "x"), *y = vpa_json_get(one, "y");
		const char *name = vpa_json_get_str(one, "name");
		size_t valid = 0;
		vpa_buf_printf(s, "$%s_s%zu << EOD\n", tag, i);
		for (size_t k = 0; k < x->n; k++) {
			double a = num_at(x, k), b = num_at(y, k);
			/* Undefined points and x <= 0 on a log axis are gaps. */
			if (isnan(a) || isnan(b) || (logx && a <= 0)) {
				vpa_buf_puts(s, "\n");
				continue;
			}
			put_num(s, a);
			vpa_buf_puts(s, " ");
			put_num(s, b);
			vpa_buf_puts(s, "\n");
			valid++;
		}
		vpa_buf_puts(s, "EOD\n");
		if (!valid)
			continue;
		vpa_buf_printf(&plot, "%s$%s_s%zu using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '%s' title ",
			       drawn++ ? ", " : "", tag, i, palette[i % N_PALETTE]);
		vpa_gnuplot_quote(&plot, name ? name : "");
	}
	if (!drawn) {
		vpa_buf_puts(s, "unset logscale x\nset xrange [0:1]\nset yrange [0:1]\n"
				"set label 'no data' at graph 0.5,0.5 center\n");
		vpa_buf_puts(&plot, "NaN notitle");
	}
	vpa_buf_puts(s, "plot ");
	vpa_buf_add(s, plot.data, plot.len);
	vpa_buf_puts(s, "\n");
	vpa_buf_release(&plot);
}

/* Bars: the categories named on the x axis, one bar per series in each
 * category (side by side), on the figure's fixed y range when it has one. */
static void bars_script(const struct vpa_json *fig, const char *tag, struct vpa_buf *s)
{
	const struct vpa_json *cat = vpa_json_get(fig, "categories"), *series = vpa_json_get(fig, "series");
	const char *yl = vpa_json_get_str(fig, "ylabel");
	size_t m = series->n;
	double w = 0.8 / (double)m;
	set_title(s, fig, NULL);
	vpa_buf_puts(s, "set grid ytics\nset style fill solid 0.85 border lc rgb '#333333'\n");
	vpa_buf_printf(s, "set boxwidth %.6f absolute\n", w);
	vpa_buf_puts(s, m > 1 ? "set key outside right top\n" : "unset key\n");
	if (yl) {
		vpa_buf_puts(s, "set ylabel ");
		vpa_gnuplot_quote(s, yl);
		vpa_buf_puts(s, "\n");
	}
	vpa_buf_puts(s, "set xtics (");
	for (size_t i = 0; i < cat->n; i++) {
		if (i)
			vpa_buf_puts(s, ", ");
		vpa_gnuplot_quote(s, cat->items[i]->str);
		vpa_buf_printf(s, " %zu", i);
	}
	vpa_buf_printf(s, ") scale 0\nset xrange [-0.6:%zu.6]\n", cat->n - 1);
	/* slanted when the names would not fit side by side (about 70 characters
	 * across the plot) */
	size_t longest = 0;
	for (size_t i = 0; i < cat->n; i++)
		if (strlen(cat->items[i]->str) > longest)
			longest = strlen(cat->items[i]->str);
	if (cat->n > 4 || longest * cat->n > 70)
		vpa_buf_puts(s, "set xtics rotate by -30\n");
	double lo, hi;
	if (has_yrange(fig, &lo, &hi))
		vpa_buf_printf(s, "set yrange [%.17g:%.17g]\n", lo, hi);
	else
		vpa_buf_puts(s, "set yrange [0:*]\n");
	for (size_t j = 0; j < m; j++) {
		const struct vpa_json *y = vpa_json_get(series->items[j], "y");
		vpa_buf_printf(s, "$%s_b%zu << EOD\n", tag, j);
		for (size_t i = 0; i < y->n; i++) {
			double v = num_at(y, i);
			if (isnan(v))
				continue; /* an undefined value has no bar */
			put_num(s, (double)i - 0.4 + w * ((double)j + 0.5));
			vpa_buf_puts(s, " ");
			put_num(s, v);
			vpa_buf_puts(s, "\n");
		}
		vpa_buf_puts(s, "EOD\n");
	}
	vpa_buf_puts(s, "plot ");
	for (size_t j = 0; j < m; j++) {
		const char *name = vpa_json_get_str(series->items[j], "name");
		vpa_buf_printf(s, "%s$%s_b%zu using 1:2 with boxes lc rgb '%s' title ", j ? ", " : "", tag, j,
			       palette[j % N_PALETTE]);
		vpa_gnuplot_quote(s, name ? name : "");
	}
	vpa_buf_puts(s, "\n");
}

int vpa_plot_script(const struct vpa_json *fig, const char *tag, struct vpa_buf *script,
		    struct vpa_err *err)
{
	int rc = vpa_plot_check(fig, NULL, err);
	if (rc)
		return rc;
	const char *type = vpa_json_get_str(fig, "type");
	vpa_buf_puts(script, "reset\nset encoding utf8\n");
	if (!strcmp(type, "det"))
		det_script(fig, tag, script);
	else if (!strcmp(type, "linkability"))
		linkability_script(fig, tag, script);
	else if (!strcmp(type, "bars"))
		bars_script(fig, tag, script);
	else
		lines_script(fig, tag, script);
	return 0;
}

/* ---- rendering ---- */

static const char svg_term[] =
	"set terminal svg size 640,420 fixed font 'sans,10' noenhanced background '#ffffff'\n";
static const char pdf_term[] =
	"set terminal pdfcairo size 6.4in,4.2in font 'sans,10' noenhanced\n";

int vpa_plot_render(const struct vpa_json *fig, const char *format, struct vpa_buf *out,
		    struct vpa_err *err)
{
	struct vpa_buf s;
	vpa_buf_init(&s);
	int rc = 0;
	if (!strcmp(format, "svg"))
		vpa_buf_puts(&s, svg_term);
	else if (!strcmp(format, "pdf"))
		vpa_buf_puts(&s, pdf_term);
	else
		VPA_BUG("unknown plot format '%s'", format);
	rc = vpa_plot_script(fig, "f0", &s, err);
	if (!rc)
		rc = vpa_gnuplot_run(s.data, s.len, out, err);
	vpa_buf_release(&s);
	return rc;
}

/*
 * Copy one gnuplot SVG document [p, end) into out without its prolog
 * (<?xml ...?>, <!DOCTYPE ...>), with every id and #reference prefixed.
 */
static void copy_svg(struct vpa_buf *out, const char *p, const char *end, const char *prefix)
{
	const char *svg = memmem(p, (size_t)(end - p), "<svg", 4);
	if (svg)
		p = svg;
	static const char *const pats[] = {" id='", " id=\"", "href='#", "href=\"#", "url(#"};
	enum { NP = sizeof(pats) / sizeof(*pats) };
	/* next[k]: the next hit of pats[k] at or after p (NULL: none left), so
	 * the text is scanned once per pattern, not once per hit. */
	const char *next[NP];
	for (size_t k = 0; k < NP; k++)
		next[k] = memmem(p, (size_t)(end - p), pats[k], strlen(pats[k]));
	for (;;) {
		size_t best = NP;
		for (size_t k = 0; k < NP; k++)
			if (next[k] && (best == NP || next[k] < next[best]))
				best = k;
		if (best == NP) {
			vpa_buf_add(out, p, (size_t)(end - p));
			break;
		}
		size_t n = strlen(pats[best]);
		vpa_buf_add(out, p, (size_t)(next[best] - p) + n);
		vpa_buf_puts(out, prefix);
		p = next[best] + n;
		for (size_t k = 0; k < NP; k++)
			if (next[k] && next[k] < p)
				next[k] = memmem(p, (size_t)(end - p), pats[k], strlen(pats[k]));
	}
}

int vpa_plot_svgs_script(const struct vpa_json *const *figs, size_t n, struct vpa_buf *s,
			 struct vpa_err *err)
{
	vpa_buf_puts(s, svg_term);
	for (size_t i = 0; i < n; i++) {
		char tag[32];
		snprintf(tag, sizeof(tag), "f%zu", i);
		int rc = vpa_plot_script(figs[i], tag, s, err);
		if (rc)
			return rc;
	}
	return 0;
}

int vpa_plot_svgs_split(const struct vpa_buf *gout, size_t n, size_t prefix, struct vpa_buf *svgs,
			struct vpa_err *err)
{
	/* gnuplot writes one complete document per plot, each ending "</svg>". */
	const char *p = gout->data, *end = gout->data + gout->len;
	for (size_t i = 0; i < n; i++) {
		const char *close = p ? memmem(p, (size_t)(end - p), "</svg>", 6) : NULL;
		if (!close)
			return vpa_fail(err, VPA_EIO, NULL,
					"gnuplot produced %zu SVG documents for %zu figures", i, n);
		close += 6;
		char pre[48];
		snprintf(pre, sizeof(pre), "vpa%zu-", prefix + i);
		copy_svg(&svgs[i], p, close, pre);
		vpa_buf_puts(&svgs[i], "\n");
		p = close;
	}
	return 0;
}

int vpa_plot_svgs(const struct vpa_json *const *figs, size_t n, size_t prefix,
		  struct vpa_buf *svgs, struct vpa_err *err)
{
	if (n == 0)
		return 0;
	struct vpa_buf s, out;
	vpa_buf_init(&s);
	vpa_buf_init(&out);
	int rc = vpa_plot_svgs_script(figs, n, &s, err);
	if (!rc)
		rc = vpa_gnuplot_run(s.data, s.len, &out, err);
	if (!rc)
		rc = vpa_plot_svgs_split(&out, n, prefix, svgs, err);
	vpa_buf_release(&s);
	vpa_buf_release(&out);
	return rc;
}

int vpa_plot_files(const struct vpa_json *fig, const char *base, struct vpa_err *err)
{
	struct vpa_buf svg, pdf, path;
	vpa_buf_init(&svg);
	vpa_buf_init(&pdf);
	vpa_buf_init(&path);
	struct vpa_atomic a[2] = {{0}, {0}};
	int rc = vpa_plot_render(fig, "svg", &svg, err);
	if (!rc)
		rc = vpa_plot_render(fig, "pdf", &pdf, err);
	const struct vpa_buf *data[2] = {&svg, &pdf};
	static const char *ext[2] = {".svg", ".pdf"};
	for (int k = 0; k < 2 && !rc; k++) {
		path.len = 0;
		vpa_buf_puts(&path, base);
		vpa_buf_puts(&path, ext[k]);
		FILE *f = vpa_atomic_open(path.data, &a[k], err);
		if (!f) {
			rc = VPA_EIO;
			break;
		}
		if (data[k]->len && fwrite(data[k]->data, 1, data[k]->len, f) != data[k]->len) {
			struct vpa_loc loc = {path.data, 0, 0};
			rc = vpa_fail(err, VPA_EIO, &loc, "write error: %s", strerror(errno));
		}
	}
	/* Commit both or neither (an aborted or committed vpa_atomic has path NULL). */
	for (int k = 0; k < 2; k++) {
		if (!a[k].path)
			continue;
		if (rc)
			vpa_atomic_abort(&a[k]);
		else
			rc = vpa_atomic_commit(&a[k], err);
	}
	vpa_buf_release(&svg);
	vpa_buf_release(&pdf);
	vpa_buf_release(&path);
	return rc;
}
