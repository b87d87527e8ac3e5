/* tests/unit/test_base.c - errors, buffers, RNG. */
#include "base/base.h"
#include "harness.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_fail_keeps_first(void)
{
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_loc loc = {"a.txt", 3, 7};
	CHECK(vpa_fail(&err, VPA_EINPUT, &loc, "expected %s", "x") == VPA_EINPUT);
	vpa_fail(&err, VPA_EIO, NULL, "second");
	CHECK_STR(err.msg, "a.txt:3:7: expected x");
	CHECK(err.status == VPA_EINPUT);
	struct vpa_err e2;
	vpa_err_init(&e2);
	struct vpa_loc l2 = {"b", 2, 0};
	vpa_fail(&e2, VPA_EINPUT, &l2, "bad\nline");
	CHECK_STR(e2.msg, "b:2: bad line");
}

static void test_exit_codes(void)
{
	CHECK(vpa_exit_code(0) == 0);
	CHECK(vpa_exit_code(VPA_EINPUT) == 1);
	CHECK(vpa_exit_code(VPA_EUSAGE) == 2);
	CHECK(vpa_exit_code(VPA_EGATE) == 3);
}

static void test_buf(void)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	for (int i = 0; i < 1000; i++)
		vpa_buf_printf(&b, "%d,", i);
	CHECK(b.len == 3890);
	CHECK(!strncmp(vpa_buf_str(&b), "0,1,2,", 6));
	vpa_buf_release(&b);
}

static void test_rng(void)
{
	struct vpa_rng a, b, c;
	vpa_rng_split(&a, 42, "x");
	vpa_rng_split(&b, 42, "x");
	vpa_rng_split(&c, 42, "y");
	CHECK(vpa_rng_u64(&a) == vpa_rng_u64(&b));
	CHECK(vpa_rng_u64(&a) != vpa_rng_u64(&c));
	/* Moments of the normal generator. */
	double s = 0, s2 = 0;
	int n = 200000;
	for (int i = 0; i < n; i++) {
		double x = vpa_rng_normal(&a);
		s += x;
		s2 += x * x;
	}
	CHECK_NEAR(s / n, 0.0, 0.01);
	CHECK_NEAR(s2 / n, 1.0, 0.02);
	int counts[3] = {0, 0, 0};
	for (int i = 0; i < 30000; i++)
		counts[vpa_rng_below(&a, 3)]++;
	for (int k = 0; k < 3; k++)
		CHECK(counts[k] > 9500 && counts[k] < 10500);
}

/* vpa_run_workers: a pull-based worker takes items under its lock; every
 * item is done exactly once for any thread count, and n workers ran. */
struct pull {
	pthread_mutex_t mx;
	size_t next, n, workers;
	unsigned char *done;
};

static void *pull_worker(void *arg)
{
	struct pull *p = arg;
	pthread_mutex_lock(&p->mx);
	p->workers++;
	pthread_mutex_unlock(&p->mx);
	for (;;) {
		pthread_mutex_lock(&p->mx);
		size_t i = p->next++;
		pthread_mutex_unlock(&p->mx);
		if (i >= p->n)
			return NULL;
		p->done[i]++;
	}
}

static void test_run_workers(void)
{
	const size_t threads[] = {0, 1, 2, 5};
	for (size_t k = 0; k < 4; k++) {
		struct pull p = {PTHREAD_MUTEX_INITIALIZER, 0, 1000, 0, NULL};
		p.done = calloc(p.n, 1);
		vpa_run_workers(threads[k], pull_worker, &p);
		size_t ones = 0;
		for (size_t i = 0; i < p.n; i++)
			ones += p.done[i] == 1;
		CHECK(ones == p.n);
		CHECK(p.workers == (threads[k] > 1 ? threads[k] : 1));
		free(p.done);
	}
}

/* vpa_par_jobs: each job once; every job up to a failing one ran (jobs
 * are handed out in order); with one thread exactly 0..fail ran. */
struct pj {
	unsigned char *done;
	size_t fail;
};

static int pj_job(void *arg, size_t i)
{
	struct pj *p = arg;
	p->done[i]++;
	return i == p->fail;
}

static void test_par_jobs(void)
{
	const int threads[] = {0, 1, 2, 5};
	for (size_t k = 0; k < 4; k++) {
		struct pj p = {calloc(1000, 1), (size_t)-1};
		vpa_par_jobs(1000, threads[k], pj_job, &p, NULL, NULL);
		size_t ones = 0;
		for (size_t i = 0; i < 1000; i++)
			ones += p.done[i] == 1;
		CHECK(ones == 1000);
		memset(p.done, 0, 1000);
		p.fail = 10;
		vpa_par_jobs(1000, threads[k], pj_job, &p, "par", NULL);
		size_t low = 0, twice = 0, ran = 0;
		for (size_t i = 0; i < 1000; i++) {
			low += i <= 10 && p.done[i] == 1;
			twice += p.done[i] > 1;
			ran += p.done[i];
		}
		CHECK(low == 11);
		CHECK(twice == 0);
		if (threads[k] <= 1)
			CHECK(ran == 11);
		free(p.done);
	}
	struct pj none = {NULL, 0};
	vpa_par_jobs(0, 2, pj_job, &none, "none", NULL); /* no job, no thread */
}

/* Under ASan a failed malloc must return NULL (as glibc's does), not abort. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

/* Run fn in a child with stderr on a pipe; its exit status and stderr text. */
static int in_child(void (*fn)(void), char *msg, size_t cap)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		dup2(fd[1], 2);
		fn();
		_exit(42); /* fn returned: not what is tested */
	}
	close(fd[1]);
	size_t n = 0;
	ssize_t got;
	while (n + 1 < cap && (got = read(fd[0], msg + n, cap - 1 - n)) > 0)
		n += (size_t)got;
	msg[n] = '\0';
	close(fd[0]);
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The child's last stderr line (ASan may warn before our own message). */
static const char *last_line(const char *msg)
{
	size_t n = strlen(msg);
	const char *p = msg + n;
	if (p > msg && p[-1] == '\n')
		p--;
	while (p > msg && p[-1] != '\n')
		p--;
	return p;
}

static void alloc_too_much(void)
{
	void *p = xmalloc((size_t)1 << 46); /* 64 TiB */
	free(p);
}

static void alloc_too_much_in_cmd(void)
{
	vpa_cmd = "metrics"; /* as main sets it: the line names the subcommand */
	alloc_too_much();
}

static void mul_overflows(void)
{
	(void)xmul(SIZE_MAX / 2, 3);
}

static void calloc_too_much(void)
{
	void *p = xcalloc((size_t)1 << 40, 64);
	free(p);
}

static void oom_with_temporary(void)
{
	struct vpa_atomic a;
	struct vpa_err err;
	vpa_err_init(&err);
	FILE *f = vpa_atomic_open("oom-test.out", &a, &err);
	if (f)
		fputs("partial", f);
	alloc_too_much();
}

/*
 * Allocation failure is an error with exit status 1 and one message line, not
 * an abort (status 134 before): issue 20.  The temporaries of unfinished
 * atomic writes are removed.
 */
static void test_out_of_memory(void)
{
	char msg[512];
	CHECK(in_child(alloc_too_much, msg, sizeof(msg)) == 1);
	CHECK_STR(last_line(msg), "vpaudit: error: out of memory (allocating 70368744177664 bytes)\n");
	CHECK(in_child(alloc_too_much_in_cmd, msg, sizeof(msg)) == 1);
	CHECK_STR(last_line(msg), "vpaudit metrics: error: out of memory (allocating 70368744177664 bytes)\n");
	CHECK(in_child(calloc_too_much, msg, sizeof(msg)) == 1);
	CHECK_STR(last_line(msg), "vpaudit: error: out of memory (allocating 1099511627776 * 64 bytes)\n");
	CHECK(in_child(mul_overflows, msg, sizeof(msg)) == 1);
	CHECK(!strncmp(last_line(msg), "vpaudit: error: out of memory (allocating 9223372036854775807 * 3 bytes)", 72));
	CHECK(in_child(oom_with_temporary, msg, sizeof(msg)) == 1);
	/* no oom-test.out* left in the working folder */
	DIR *d = opendir(".");
	int left = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		left += !strncmp(e->d_name, "oom-test.out", 12);
	if (d)
		closedir(d);
	CHECK(left == 0);
}

/* vpa_read_file needs the whole file: a folder and a device are refused
 * (/dev/zero read until memory ran out before); a pipe is read. */
static void test_read_file_kinds(void)
{
	struct vpa_err err;
	char *data = NULL;
	size_t len = 0;
	vpa_err_init(&err);
	CHECK(vpa_read_file("/dev/zero", &data, &len, &err) == VPA_EIO);
	CHECK_STR(err.msg, "/dev/zero: not a regular file (a device or socket)");
	CHECK(data == NULL);
	vpa_err_init(&err);
	CHECK(vpa_read_file(".", &data, &len, &err) == VPA_EIO);
	CHECK_STR(err.msg, ".: is a folder, expected a file");
	int fd[2];
	CHECK(pipe(fd) == 0);
	CHECK(write(fd[1], "abc\n", 4) == 4);
	close(fd[1]);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd[0]);
	vpa_err_init(&err);
	CHECK(vpa_read_file(path, &data, &len, &err) == 0 && len == 4 && !strcmp(data, "abc\n"));
	free(data);
	close(fd[0]);
}

/* A regular file over 1 GiB (sparse: no disk used) is refused before reading (issue 26 item 8). */
static void test_read_file_cap(void)
{
	char path[] = "/tmp/vpa_test_bigXXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, (off_t)VPA_READ_MAX + 1) == 0);
	close(fd);
	struct vpa_err err;
	char *data = NULL;
	size_t len = 0;
	vpa_err_init(&err);
	CHECK(vpa_read_file(path, &data, &len, &err) == VPA_EIO && data == NULL);
	char want[128];
	snprintf(want, sizeof want, "%s: larger than 1 GiB (1073741825 bytes)", path);
	CHECK_STR(err.msg, want);
	unlink(path);
}

/* Terminal control characters of data shown in messages (issue 26 item 9). */
static void test_shown(void)
{
	struct vpa_buf b;
	vpa_buf_init(&b);
	vpa_buf_add_shown(&b, "a\033[2J\tb\r\x7f\xc2\x9b\xc3\xa9", 13);
	CHECK_STR(vpa_buf_str(&b), "a\\x1b[2J\tb\\x0d\\x7f\\xc2\\x9b\xc3\xa9");
	vpa_buf_release(&b);
	struct vpa_err err;
	vpa_err_init(&err);
	struct vpa_loc loc = {"s.txt", 2, 1};
	vpa_fail(&err, VPA_EINPUT, &loc, "got '%s'", "\033]0;pwned\007\t");
	CHECK_STR(err.msg, "s.txt:2:1: got '\\x1b]0;pwned\\x07 '");
}

/* Temporaries: a link planted at the name is removed, never followed (issue 26 item 3). */
static void test_tmp_links(void)
{
	char dir[] = "/tmp/vpa_test_tmpXXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char victim[128], tmp[128], vdir[128], keep[128];
	snprintf(victim, sizeof victim, "%s/victim", dir);
	snprintf(tmp, sizeof tmp, "%s/out.tmp.1", dir);
	snprintf(vdir, sizeof vdir, "%s/vdir", dir);
	snprintf(keep, sizeof keep, "%s/vdir/keep", dir);
	FILE *f = fopen(victim, "w");
	CHECK(f && fputs("precious", f) >= 0 && fclose(f) == 0);
	CHECK(symlink(victim, tmp) == 0);
	int fd = vpa_create_new(tmp);
	CHECK(fd >= 0 && write(fd, "new", 3) == 3 && close(fd) == 0);
	char got[16] = {0};
	f = fopen(victim, "r");
	CHECK(f && fread(got, 1, sizeof got - 1, f) == 8);
	if (f)
		fclose(f);
	CHECK_STR(got, "precious");
	/* a folder's link: vpa_mkdir_new makes a folder, vpa_rm_tree removes the link only */
	CHECK(mkdir(vdir, 0777) == 0);
	f = fopen(keep, "w");
	CHECK(f && fclose(f) == 0);
	unlink(tmp);
	CHECK(symlink(vdir, tmp) == 0);
	struct vpa_err err;
	vpa_err_init(&err);
	CHECK(vpa_mkdir_new(tmp, &err) == 0);
	CHECK(access(keep, F_OK) == 0);
	CHECK(rmdir(tmp) == 0 && symlink(vdir, tmp) == 0);
	CHECK(vpa_rm_tree(tmp) == 0);
	CHECK(access(keep, F_OK) == 0 && access(tmp, F_OK) != 0);
	/* a tree of our own goes entirely */
	char sub[160];
	snprintf(sub, sizeof sub, "%s/a/b/c", tmp);
	CHECK(vpa_mkdirs(sub, &err) == 0);
	snprintf(sub, sizeof sub, "%s/a/b/c/f", tmp);
	f = fopen(sub, "w");
	CHECK(f && fclose(f) == 0);
	snprintf(sub, sizeof sub, "%s/a/l", tmp);
	CHECK(symlink(vdir, sub) == 0);
	CHECK(vpa_rm_tree(tmp) == 0 && access(tmp, F_OK) != 0 && access(keep, F_OK) == 0);
	CHECK(vpa_tmp_pid("out.tmp.123", "out") == 123);
	CHECK(vpa_tmp_pid("out.tmp.12a", "out") == 0 && vpa_tmp_pid("outx.tmp.1", "out") == 0);
	CHECK(vpa_rm_tree(dir) == 0 && access(dir, F_OK) != 0);
}

/* Published FNV-1a 64 test vectors (Fowler/Noll/Vo reference test suite). */
static void test_fnv1a(void)
{
	CHECK(vpa_fnv1a("") == 0xcbf29ce484222325ull);
	CHECK(vpa_fnv1a("a") == 0xaf63dc4c8601ec8cull);
	CHECK(vpa_fnv1a("foobar") == 0x85944171f73967e8ull);
}

int main(void)
{
	RUN(test_fnv1a);
	RUN(test_fail_keeps_first);
	RUN(test_exit_codes);
	RUN(test_buf);
	RUN(test_rng);
	RUN(test_run_workers);
	RUN(test_par_jobs);
	RUN(test_out_of_memory);
	RUN(test_read_file_kinds);
	RUN(test_read_file_cap);
	RUN(test_shown);
	RUN(test_tmp_links);
	return DONE();
}
