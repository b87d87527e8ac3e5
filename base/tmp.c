/*
 * base/tmp.c - temporaries: created without following links, registered so
 * that SIGINT/SIGTERM/SIGHUP and running out of memory remove them, and
 * removed by a later process when the one that made them was killed.  See
 * base.h ("Temporaries").
 *
 * Why each piece is as it is:
 *  - PATH.tmp.PID is a predictable name in a folder other people may write
 *    (a shared CI workspace): opening it with fopen("wb") follows a symlink
 *    planted there and truncates its target.  Every temporary is created
 *    with O_CREAT|O_EXCL|O_NOFOLLOW (files) or mkdir (folders: mkdir never
 *    follows a link); a name that exists already is removed itself (a link,
 *    never its target) and the creation tried once more.
 *  - The signal handler may only call async-signal-safe functions: the
 *    registry is a fixed table of fixed buffers under a spin lock that a
 *    thread takes with the three signals blocked (so the handler never runs
 *    in the thread holding it), and a folder is removed with openat,
 *    getdents64, unlinkat, all system calls.  After removing, the handler
 *    restores the default action and raises the signal again: the process
 *    ends by the signal (exit status 128 + N in a shell), as without it.
 */
#include "base/base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_TMP 64
#define TMP_PATH_MAX 4096
enum { SLOT_FREE, SLOT_FILE, SLOT_DIR };
static struct {
	int kind;
	char path[TMP_PATH_MAX];
} tmp_slot[N_TMP];
static atomic_flag tmp_lock = ATOMIC_FLAG_INIT;
static pid_t tmp_owner; /* the process whose temporaries these are (not a forked child) */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

/* Take the registry's lock with the stop signals blocked in this thread; old gets the mask. */
static void tmp_lock_take(sigset_t *old)
{
	sigset_t s;
	sigemptyset(&s);
	for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
		sigaddset(&s, stop_signals[i]);
	pthread_sigmask(SIG_BLOCK, &s, old);
	while (atomic_flag_test_and_set_explicit(&tmp_lock, memory_order_acquire))
		;
}

static void tmp_lock_drop(const sigset_t *old)
{
	atomic_flag_clear_explicit(&tmp_lock, memory_order_release);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

void vpa_tmp_register(const char *path, int is_dir)
{
	size_t n = strlen(path);
	sigset_t old;
	if (n >= TMP_PATH_MAX)
		return; /* not removed on a signal; the stale cleanup of a later run still does */
	vpa_set_oom_cleanup(vpa_tmp_remove_all);
	tmp_lock_take(&old);
	for (size_t i = 0; i < N_TMP; i++)
		if (tmp_slot[i].kind == SLOT_FREE) {
			memcpy(tmp_slot[i].path, path, n + 1);
			tmp_slot[i].kind = is_dir ? SLOT_DIR : SLOT_FILE;
			break;
		}
	tmp_lock_drop(&old);
}

void vpa_tmp_unregister(const char *path)
{
	sigset_t old;
	tmp_lock_take(&old);
	for (size_t i = 0; i < N_TMP; i++)
		if (tmp_slot[i].kind != SLOT_FREE && !strcmp(tmp_slot[i].path, path)) {
			tmp_slot[i].kind = SLOT_FREE;
			break;
		}
	tmp_lock_drop(&old);
}

/*
 * Remove the contents of the open folder dfd, depth levels deep at most,
 * without following links.  Async-signal-safe on Linux (system calls only).
 */
static void rm_contents(int dfd, int depth)
{
#ifdef __linux__
	char buf[4096] __attribute__((aligned(8)));
	/* entries removed while reading may shift the rest: read again until a
	 * pass finds nothing left to remove */
	for (int pass = 0, again = 1; again && pass < 8; pass++) {
		again = 0;
		if (lseek(dfd, 0, SEEK_SET) != 0)
			return;
		ssize_t n;
		while ((n = getdents64(dfd, buf, sizeof buf)) > 0) {
			for (ssize_t off = 0; off < n;) {
				struct dirent64 *e = (struct dirent64 *)(void *)(buf + off);
				const char *name = e->d_name;
				off += e->d_reclen;
				if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
					continue;
				if (unlinkat(dfd, name, 0) == 0) {
					again = 1;
					continue;
				}
				if ((errno != EISDIR && errno != EPERM) || depth <= 0)
					continue;
				int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (sub >= 0) {
					rm_contents(sub, depth - 1);
					close(sub);
				}
				if (unlinkat(dfd, name, AT_REMOVEDIR) == 0)
					again = 1;
			}
		}
	}
#else
	/* not async-signal-safe (readdir may allocate): used outside handlers only */
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		const char *name = e->d_name;
		if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
			continue;
		if (unlinkat(dfd, name, 0) == 0 || depth <= 0)
			continue;
		int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			rm_contents(sub, depth - 1);
			close(sub);
		}
		unlinkat(dfd, name, AT_REMOVEDIR);
	}
	closedir(d);
#endif
}

/* How deep vpa_rm_tree goes: vpaudit's own temporaries are at most 5 levels deep. */
#define RM_DEPTH 32

int vpa_rm_tree(const char *path)
{
	if (unlink(path) == 0)
		return 0;
	if (errno == ENOENT)
		return 0;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rm_contents(fd, RM_DEPTH);
	close(fd);
	return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Remove every registered temporary; the lock is held by the caller. */
static void remove_registered(void)
{
	for (size_t i = 0; i < N_TMP; i++) {
		if (tmp_slot[i].kind == SLOT_FILE)
			unlink(tmp_slot[i].path);
		else if (tmp_slot[i].kind == SLOT_DIR)
			vpa_rm_tree(tmp_slot[i].path);
		tmp_slot[i].kind = SLOT_FREE;
	}
}

void vpa_tmp_remove_all(void)
{
	/* called on the way out (out of memory): a thread holding the lock
	 * cannot be waited for, so the temporaries then stay */
	if (atomic_flag_test_and_set_explicit(&tmp_lock, memory_order_acquire))
		return;
	if (getpid() == tmp_owner || !tmp_owner)
		remove_registered();
	atomic_flag_clear_explicit(&tmp_lock, memory_order_release);
}

static void on_stop_signal(int sig)
{
	/* a child between fork and exec shares the table but not the files */
	if (getpid() == tmp_owner) {
		while (atomic_flag_test_and_set_explicit(&tmp_lock, memory_order_acquire))
			;
		remove_registered();
		/* the lock stays taken: the process ends below */
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	/* blocked while this handler runs: delivered, with the default action, on return */
	raise(sig);
}

void vpa_tmp_signals(void)
{
	tmp_owner = getpid();
	for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) {
		struct sigaction sa, old;
		/* a signal ignored by whoever started us (nohup) stays ignored */
		if (sigaction(stop_signals[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_stop_signal;
		sigemptyset(&sa.sa_mask);
		for (size_t k = 0; k < sizeof stop_signals / sizeof *stop_signals; k++)
			sigaddset(&sa.sa_mask, stop_signals[k]);
		sigaction(stop_signals[i], &sa, NULL);
	}
}

int vpa_create_new(const char *path)
{
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = open(path, flags, 0666);
	if (fd < 0 && errno == EEXIST) {
		/* a leftover of a killed process that had our PID, or a planted
		 * name: remove the entry itself (a link, not its target), once */
		struct stat st;
		if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(path) == 0)
			fd = open(path, flags, 0666);
		else
			errno = EEXIST;
	}
	return fd;
}

int vpa_mkdir_new(const char *path, struct vpa_err *err)
{
	/* the folders above it, as vpa_mkdirs (they are not temporaries) */
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] != '/')
		n--;
	if (n > 1) {
		char *up = xstrndup(path, n - 1);
		int prc = vpa_mkdirs(up, err);
		free(up);
		if (prc)
			return prc;
	}
	int rc = mkdir(path, 0777);
	/* mkdir never follows a link: an existing name (a planted link, or a
	 * leftover of a killed process that had our PID) is removed itself */
	if (rc != 0 && errno == EEXIST && vpa_rm_tree(path) == 0)
		rc = mkdir(path, 0777);
	if (rc != 0) {
		int e = errno;
		struct vpa_loc loc = {path, 0, 0};
		return vpa_fail(err, VPA_EIO, &loc, "cannot create the temporary folder: %s",
				strerror(e));
	}
	return 0;
}

long vpa_tmp_pid(const char *name, const char *base)
{
	size_t n = strlen(base);
	if (strncmp(name, base, n) || strncmp(name + n, ".tmp.", 5))
		return 0;
	const char *p = name + n + 5;
	if (!*p || strlen(p) > 9)
		return 0;
	for (const char *q = p; *q; q++)
		if (*q < '0' || *q > '9')
			return 0;
	return strtol(p, NULL, 10);
}

size_t vpa_tmp_remove_stale(const char *path)
{
	/* the folder and the last component of path ("dir/" is "dir") */
	struct vpa_buf dir, base, p;
	vpa_buf_init(&dir);
	vpa_buf_init(&base);
	vpa_buf_init(&p);
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	const char *slash = NULL;
	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			slash = path + i;
	if (slash) {
		vpa_buf_add(&dir, path, slash == path ? 1 : (size_t)(slash - path));
		vpa_buf_add(&base, slash + 1, len - (size_t)(slash + 1 - path));
	} else {
		vpa_buf_puts(&dir, ".");
		vpa_buf_add(&base, path, len);
	}
	size_t removed = 0;
	DIR *d = base.len ? opendir(dir.data) : NULL;
	for (struct dirent *e; d && (e = readdir(d));) {
		long pid = vpa_tmp_pid(e->d_name, base.data);
		if (pid <= 0 || pid == (long)getpid())
			continue;
		/* a live process may be writing it (another run into the same folder) */
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		p.len = 0;
		vpa_buf_printf(&p, "%s/%s", dir.data, e->d_name);
		if (vpa_rm_tree(p.data) == 0)
			removed++;
	}
	if (d)
		closedir(d);
	vpa_buf_release(&p);
	vpa_buf_release(&base);
	vpa_buf_release(&dir);
	return removed;
}

void vpa_tmp_clean_stale(const char *path)
{
	size_t n = vpa_tmp_remove_stale(path);
	if (n)
		vpa_warn("%s: removed %zu temporar%s left by a killed run", path, n,
			 n == 1 ? "y" : "ies");
}

FILE *vpa_atomic_open(const char *path, struct vpa_atomic *a, struct vpa_err *err)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_printf(&b, "%s.tmp.%ld", path, (long)getpid());
	a->path = xstrdup(path);
	a->tmp = b.data;
	a->f = NULL;
	/* registered before it exists: a signal in between removes nothing of anyone's */
	vpa_tmp_register(a->tmp, 0);
	int fd = vpa_create_new(a->tmp);
	if (fd >= 0 && !(a->f = fdopen(fd, "wb")))
		close(fd);
	if (!a->f) {
		int e = errno;
		struct vpa_loc loc = {path, 0, 0};
		vpa_fail(err, VPA_EIO, &loc, "cannot write: %s", strerror(e));
		if (fd >= 0)
			unlink(a->tmp);
		vpa_tmp_unregister(a->tmp);
		free(a->path);
		free(a->tmp);
		a->path = a->tmp = NULL;
		return NULL;
	}
	return a->f;
}

int vpa_atomic_commit(struct vpa_atomic *a, struct vpa_err *err)
{
	struct vpa_loc loc = {a->path, 0, 0};
	int rc = 0;
	int bad = ferror(a->f);
	errno = 0;
	if (fflush(a->f) != 0 || bad) {
		int e = bad ? EIO : errno;
		fclose(a->f);
		rc = vpa_fail(err, VPA_EIO, &loc, "write error: %s", strerror(e));
		remove(a->tmp);
	} else if (fclose(a->f) != 0) {
		rc = vpa_fail(err, VPA_EIO, &loc, "write error: %s", strerror(errno));
		remove(a->tmp);
	} else if (rename(a->tmp, a->path) != 0) {
		rc = vpa_fail(err, VPA_EIO, &loc, "cannot rename into place: %s",
			      strerror(errno));
		remove(a->tmp);
	}
	vpa_tmp_unregister(a->tmp);
	free(a->path);
	free(a->tmp);
	a->path = a->tmp = NULL;
	a->f = NULL;
	return rc;
}

void vpa_atomic_abort(struct vpa_atomic *a)
{
	if (a->f)
		fclose(a->f);
	if (a->tmp) {
		remove(a->tmp);
		vpa_tmp_unregister(a->tmp);
	}
	free(a->path);
	free(a->tmp);
	a->path = a->tmp = NULL;
	a->f = NULL;
}
