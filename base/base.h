/*
 * base/base.h - status codes, error context, allocation, small utilities.
 *
 * Every fallible function returns int (0 or a negative enum vpa_status) and
 * takes `struct vpa_err *err` last.  vpa_fail() records the first error only,
 * so an error raised deep in a call chain is the one the user reads.
 *
 * Messages follow git's style: lowercase, no full stop, say what is wrong and
 * quote the subject.  With a location they read `path:line:col: message`
 * (1-based; col omitted when 0, line omitted when 0).
 */
#ifndef VPA_BASE_H
#define VPA_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>

#define VPA_VERSION "0.1.0"

/*
 * The longest free text a report shows, in characters: a scenario's
 * `description` (checked by `validate`, and by `report` in a results file).
 * The title page has room for this much even in wide characters.
 */
#define VPA_DESCRIPTION_MAX 1000

enum vpa_status {
	VPA_OK = 0,
	VPA_EINPUT = -1, /* bad user input: file contents, options, scenario */
	VPA_EIO = -2,    /* cannot open / read / write */
	VPA_ENOMEM = -3, /* allocation failed where we can recover */
	VPA_EUSAGE = -4, /* command-line usage (exit status 2) */
	VPA_ENUMERIC = -5, /* numeric failure the user must see */
	VPA_EGATE = -6,  /* a gate failed (exit status 3) */
};

/* A place in a user file.  line and col are 1-based; 0 means unknown. */
struct vpa_loc {
	const char *file; /* borrowed */
	long line;
	long col;
};

struct vpa_err {
	int status;     /* 0 until the first vpa_fail */
	char msg[1024]; /* the full one-line message, location included */
};

void vpa_err_init(struct vpa_err *err);

/*
 * Record an error (the first one wins) and return `status`.
 *   return vpa_fail(err, VPA_EINPUT, &loc, "expected a number, got '%s'", tok);
 * gives  "scores.txt:12:7: expected a number, got 'abc'".
 * loc may be NULL.  err may be NULL (the error is then dropped).
 */
int vpa_fail(struct vpa_err *err, int status, const struct vpa_loc *loc,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Exit status for a status code: 0, 1 (error), 2 (usage), 3 (gate). */
int vpa_exit_code(int status);

/* "vpaudit: warning: ..." on stderr.  Warnings are never silent. */
void vpa_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Set to 1 by --quiet: suppresses vpa_progress (never warnings or errors). */
extern int vpa_quiet;

/*
 * The running subcommand ("run", "dp epsilon", ...) or NULL, set by the CLI:
 * every error line is "vpaudit CMD: error: ...", those printed by cli/ and
 * the out-of-memory line of every layer alike.
 */
extern const char *vpa_cmd;

/* Broken invariant: our bug, not the user's.  Prints file:line and aborts. */
#define VPA_BUG(...) vpa_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void vpa_bug(const char *file, int line, const char *fmt, ...);

/*
 * Allocation that cannot fail: when memory runs out they print
 * "vpaudit: error: out of memory (allocating N bytes)", remove the
 * temporaries of unfinished vpa_atomic_open writes and end the process with
 * exit status 1 (_exit: no abort, no core dump, no buffered output flushed).
 */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* n * size; an overflow is an allocation failure as above ("N * M bytes"). */
size_t xmul(size_t n, size_t size);

/* Growable byte buffer. */
struct vpa_buf {
	char *data; /* owned, NUL-terminated when len > 0 or after vpa_buf_str */
	size_t len, cap;
};
void vpa_buf_init(struct vpa_buf *b);
void vpa_buf_release(struct vpa_buf *b);
void vpa_buf_add(struct vpa_buf *b, const void *p, size_t n);
void vpa_buf_puts(struct vpa_buf *b, const char *s);
void vpa_buf_printf(struct vpa_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *vpa_buf_str(struct vpa_buf *b); /* borrowed, valid until next add */
/*
 * Append s[0..n) as it may be shown on a terminal: control characters other
 * than tab (ESC, CR, BEL, ...), DEL and the UTF-8 C1 controls U+0080..U+009F
 * as \xHH per byte ("\e[2J" becomes "\x1b[2J"), everything else as it is.
 * Every echo of a line read from a user's file goes through it.
 */
void vpa_buf_add_shown(struct vpa_buf *b, const char *s, size_t n);

/*
 * Read a whole file into memory (NUL-terminated; *len excludes the NUL).
 * Caller frees *data with free().  A regular file or a pipe of at most
 * VPA_READ_MAX bytes (1 GiB: "larger than 1 GiB (N bytes)"); a folder ("is
 * a folder, expected a file") or a device such as /dev/zero ("not a regular
 * file (a device or socket)") is an error VPA_EIO.
 */
#define VPA_READ_MAX (1024 << 20)
#define VPA_READ_PIPE_MAX VPA_READ_MAX
int vpa_read_file(const char *path, char **data /* OUT */, size_t *len /* OUT */,
		  struct vpa_err *err);
/*
 * The hook vpa_read_file calls with every file it has read whole (path, its
 * bytes): base/inputs.c registers vpa_input_note here while a run records
 * its inputs (vpa_inputs_begin), so that base/base.c needs nothing above it.
 * NULL: no hook (the default).  Set from the main thread before reading.
 */
typedef void (*vpa_read_hook_fn)(const char *path, const void *data, size_t len);
void vpa_set_read_hook(vpa_read_hook_fn fn);

/*
 * Atomic output: write to `path.tmp.PID`, then rename over `path`.
 *   FILE *f = vpa_atomic_open(path, &a, err); ... vpa_atomic_commit(&a, err);
 * On error call vpa_atomic_abort(&a) (removes the temporary).  The temporary
 * is created with vpa_create_new (never through a link planted at its
 * predictable name) and registered (vpa_tmp_register) until commit or abort.
 * Commit's errors say why ("write error: No space left on device").
 */
struct vpa_atomic {
	char *path; /* owned */
	char *tmp;  /* owned */
	FILE *f;
};
FILE *vpa_atomic_open(const char *path, struct vpa_atomic *a, struct vpa_err *err);
int vpa_atomic_commit(struct vpa_atomic *a, struct vpa_err *err);
void vpa_atomic_abort(struct vpa_atomic *a);

/*
 * Temporaries (base/tmp.c).
 * vpa_create_new: create the file path for writing with
 * O_CREAT|O_EXCL|O_NOFOLLOW (mode 0666 & ~umask); a name that exists already
 * (a planted link, a leftover of a killed process with our PID) is removed
 * itself, never the file it points to, and the creation tried once more.
 * Returns the descriptor (caller closes), or -1 with errno set.
 * vpa_mkdir_new: the same for a folder (mkdir; an existing name is removed
 * with vpa_rm_tree first; the folders above it are made as by vpa_mkdirs).  VPA_EIO "PATH: cannot create the temporary
 * folder: REASON".
 * vpa_rm_tree: remove path, and a folder's contents, never following a link
 * (a link is removed itself); 0, or -1 with errno.  Async-signal-safe on Linux.
 */
int vpa_create_new(const char *path);
int vpa_mkdir_new(const char *path, struct vpa_err *err);
int vpa_rm_tree(const char *path);
/*
 * Registered temporaries are removed when the process is stopped by SIGINT,
 * SIGTERM or SIGHUP (vpa_tmp_signals, installed once by main before any
 * thread starts; the signal is then raised again with its default action, so
 * the exit status stays 128 + N) and when it runs out of memory
 * (vpa_tmp_remove_all).  path is copied (a path of 4096 bytes or more is not
 * registered); is_dir: removed with its contents.  Register a name before
 * creating it and unregister it after renaming or removing it.  At most 64
 * at once (more are not registered).  Safe from any thread.
 */
void vpa_tmp_register(const char *path, int is_dir);
void vpa_tmp_unregister(const char *path);
void vpa_tmp_remove_all(void);
/* What running out of memory calls before exiting: vpa_tmp_register sets
   vpa_tmp_remove_all here (base/tmp.c is above base/base.c, which calls up
   only through this hook).  Async-signal-safe functions only. */
typedef void (*vpa_cleanup_fn)(void);
void vpa_set_oom_cleanup(vpa_cleanup_fn fn);
void vpa_tmp_signals(void);
/*
 * Stale temporaries: PATH.tmp.PID (a file or a folder) beside path whose PID
 * (digits only) is no live process, left by a killed process.
 * vpa_tmp_pid: the PID of name when it is "BASE.tmp.PID", else 0.
 * vpa_tmp_remove_stale removes them and returns how many; vpa_tmp_clean_stale
 * does so with the warning "PATH: removed N temporaries left by a killed run".
 * path may end in '/' (a folder's own temporaries beside it).
 */
long vpa_tmp_pid(const char *name, const char *base);
size_t vpa_tmp_remove_stale(const char *path);
void vpa_tmp_clean_stale(const char *path);

/* mkdir -p; 0 or VPA_EIO. */
int vpa_mkdirs(const char *path, struct vpa_err *err);

/* Seconds since an arbitrary epoch (monotonic). */
double vpa_now(void);

/* log|Gamma(x)|, thread-safe (lgamma_r: lgamma writes the global signgam). */
double vpa_lgamma(double x);

/* 64-bit FNV-1a of a NUL-terminated string (hash tables, per-id seeds). */
uint64_t vpa_fnv1a(const char *s);

/*
 * Run the pull-based worker fn(arg) on n threads: n - 1 new ones and the
 * caller's (all of it in the caller's thread when n <= 1 or when no thread
 * can be started); returns when every worker has returned.  fn takes its
 * work items from arg under its own lock until none is left.
 */
void vpa_run_workers(size_t n, void *(*fn)(void *), void *arg);

/*
 * Jobs 0 .. n-1 shared out to min(threads, n) threads (at least one):
 * job(arg, i) runs once for each i handed out, in increasing order of i; once
 * a job returns non-zero no further job is handed out, so every job below a
 * started one has run.  Callers keep each job's results (and errors) in their
 * own slots.  label non-NULL: a progress line per finished job.  run starts
 * the threads: NULL for vpa_run_workers, vpa_la_run_workers when jobs call
 * BLAS.  A loop of vpa_par_jobs stays inside the process: under MPI every
 * rank runs all of its jobs.  Loops whose work is worth sharing out over
 * ranks use vpa_dist_jobs (base/dist.h), which is this loop plus the ranks.
 */
void vpa_par_jobs(size_t n, int threads, int (*job)(void *arg, size_t i), void *arg,
		  const char *label, void (*run)(size_t, void *(*)(void *), void *));

/*
 * Random numbers: xoshiro256** seeded through splitmix64.  One generator per
 * component: vpa_rng_split(parent, "name") derives an independent stream from
 * a parent seed and a name, so results do not depend on call order or threads.
 */
struct vpa_rng {
	uint64_t s[4];
};
void vpa_rng_seed(struct vpa_rng *r, uint64_t seed);
void vpa_rng_split(struct vpa_rng *child /* OUT */, uint64_t seed, const char *name);
uint64_t vpa_rng_u64(struct vpa_rng *r);
double vpa_rng_uniform(struct vpa_rng *r);          /* [0, 1) */
uint64_t vpa_rng_below(struct vpa_rng *r, uint64_t n); /* [0, n), unbiased */
double vpa_rng_normal(struct vpa_rng *r);           /* N(0, 1) */

/* Progress line on stderr when it is a terminal and not quiet. */
void vpa_progress(const char *stage, size_t k, size_t n, double t0);
/* One progress line "vpaudit: ..." (no newline in fmt) on stderr, under the
 * same rule as vpa_progress: only when stderr is a terminal and not --quiet
 * (scenarios/README.md "Running"), so a CI log or a captured stderr holds
 * warnings and errors only. */
void vpa_progress_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
