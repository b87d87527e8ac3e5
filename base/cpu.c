/* base/cpu.c - the arithmetic of a run and portable mode.  See cpu.h. */
#include "base/cpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/dist.h"
#include "base/la.h"

#if defined(__x86_64__) && defined(__GLIBC__) && defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc >= 2.33: the features glibc itself uses */
#define HAVE_GLIBC_X86 1
#endif
#endif
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

extern char **environ;

static int portable_on;

int vpa_portable(void)
{
	return portable_on;
}

static int cpu_avx2_fma(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	return 0;
#endif
}

int vpa_cpu_simd(void)
{
	return !portable_on && cpu_avx2_fma();
}

/*
 * Whether glibc's libm takes its FMA variants: its ifunc selectors
 * (sysdeps/x86_64/fpu/multiarch/ifunc-fma.h, ifunc-fma4.h in glibc 2.36)
 * want FMA and AVX2 usable, or FMA4; glibc.cpu.hwcaps clears them.  1, 0,
 * or -1 when this libc does not say (then no ifunc of that kind is known).
 */
static int libm_fma(void)
{
#ifdef HAVE_GLIBC_X86
	return (CPU_FEATURE_ACTIVE(FMA) && CPU_FEATURE_ACTIVE(AVX2)) || CPU_FEATURE_ACTIVE(FMA4);
#else
	return -1;
#endif
}

void vpa_cpu_model(char *buf, size_t n)
{
	buf[0] = '\0';
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10))
			continue;
		const char *v = strchr(line, ':');
		if (!v)
			break;
		v += 1 + strspn(v + 1, " \t");
		size_t len = strcspn(v, "\r\n");
		while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
			len--;
		snprintf(buf, n, "%.*s", (int)len, v);
		break;
	}
	fclose(f);
}

/* "OpenBLAS 0.3.21" from "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." */
static void blas_version(char *buf, size_t n)
{
	const char *c = vpa_la_blas_config();
	c = c ? c + strspn(c, " ") : "";
	size_t a = strcspn(c, " "), b = c[a] ? strcspn(c + a + 1, " ") : 0;
	snprintf(buf, n, "%.*s", (int)(a + (b ? 1 + b : 0)), c);
}

void vpa_machine_json(struct vpa_json *m)
{
	char buf[256];
	vpa_cpu_model(buf, sizeof(buf));
	if (buf[0])
		vpa_json_set_str(m, "cpu", buf);
	else
		vpa_json_set(m, "cpu", vpa_json_null());
	blas_version(buf, sizeof(buf));
	vpa_json_set_str(m, "blas", buf);
	vpa_json_set_str(m, "blas_kernel", vpa_la_blas_kernel());
	vpa_json_set_str(m, "blas_config", vpa_la_blas_config());
#ifdef __GLIBC__
	snprintf(buf, sizeof(buf), "glibc %s", gnu_get_libc_version());
	vpa_json_set_str(m, "libc", buf);
#else
	vpa_json_set(m, "libc", vpa_json_null());
#endif
	int fma = libm_fma();
	vpa_json_set(m, "libm_fma", fma < 0 ? vpa_json_null() : vpa_json_bool(fma));
	vpa_json_set_str(m, "simd", vpa_cpu_simd() ? "avx2+fma" : "generic");
	vpa_json_set(m, "portable", vpa_json_bool(portable_on));
}

/* 1 when this process computes with the pinned arithmetic; else why not. */
static int pinned(char *why, size_t n)
{
	const char *k = vpa_la_blas_kernel();
	if (!k || strcasecmp(k, VPA_PORTABLE_KERNEL)) {
		const char *c = vpa_la_blas_config();
		snprintf(why, n, "OpenBLAS runs its %s kernel, not " VPA_PORTABLE_KERNEL " (its build: "
			 "%s; %s)", k ? k : "unknown", c ? c : "unknown",
			 c && strstr(c, "DYNAMIC_ARCH") ? "OPENBLAS_CORETYPE was not taken"
							: "only a DYNAMIC_ARCH build can be pinned");
		return 0;
	}
	if (libm_fma() > 0) {
		snprintf(why, n, "glibc's libm still uses its FMA variants (is GLIBC_TUNABLES "
			 "honoured, as for a set-user-ID program it is not?)");
		return 0;
	}
	return 1;
}

/* environ without NAME=... entries of the three variables, plus ours */
static char **portable_env(char **owned /* OUT: the one string to free */)
{
	static const char *const drop[] = {"OPENBLAS_CORETYPE=", "GLIBC_TUNABLES=",
					   VPA_PORTABLE_MARK "="};
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = xmalloc((n + 4) * sizeof(*env));
	const char *tun = getenv("GLIBC_TUNABLES");
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int keep = 1;
		for (size_t d = 0; d < 3; d++)
			keep &= strncmp(environ[i], drop[d], strlen(drop[d])) != 0;
		if (keep)
			env[k++] = environ[i];
	}
	env[k++] = "OPENBLAS_CORETYPE=" VPA_PORTABLE_KERNEL;
	/* the user's other tunables stay; ours comes last, and the last wins */
	size_t len = strlen("GLIBC_TUNABLES=") + (tun ? strlen(tun) + 1 : 0) +
		     strlen(VPA_PORTABLE_TUNABLE) + 1;
	char *t = xmalloc(len);
	snprintf(t, len, "GLIBC_TUNABLES=%s%s%s", tun && *tun ? tun : "", tun && *tun ? ":" : "",
		 VPA_PORTABLE_TUNABLE);
	env[k++] = t;
	*owned = t;
	env[k++] = VPA_PORTABLE_MARK "=1";
	env[k] = NULL;
	return env;
}

int vpa_portable_enter(char *const argv[], struct vpa_err *err)
{
	char why[512];
#if !defined(__x86_64__)
	(void)argv;
	(void)why;
	return vpa_fail(err, VPA_EINPUT, NULL, "portable mode is for x86-64 CPUs only");
#else
	if (pinned(why, sizeof(why))) {
		portable_on = 1;
		return 0;
	}
	if (!cpu_avx2_fma()) {
		char model[256];
		vpa_cpu_model(model, sizeof(model));
		return vpa_fail(err, VPA_EINPUT, NULL,
				"portable mode pins OpenBLAS's " VPA_PORTABLE_KERNEL " kernel, which "
				"needs AVX2 and FMA, and this CPU (%s) lacks them",
				model[0] ? model : "model unknown");
	}
	if (getenv(VPA_PORTABLE_MARK))
		return vpa_fail(err, VPA_EINPUT, NULL,
				"portable mode: re-executed with OPENBLAS_CORETYPE=" VPA_PORTABLE_KERNEL
				" and GLIBC_TUNABLES=" VPA_PORTABLE_TUNABLE ", but %s", why);
	if (vpa_dist_built())
		return vpa_fail(err, VPA_EINPUT, NULL,
				"portable mode: MPI ranks cannot re-execute themselves; start them "
				"with the portable environment: mpirun -x OPENBLAS_CORETYPE="
				VPA_PORTABLE_KERNEL " -x GLIBC_TUNABLES=" VPA_PORTABLE_TUNABLE " ...");
	char *owned = NULL, **env = portable_env(&owned);
	/* this program's file: /proc/self/exe's target (under valgrind the link
	 * itself names valgrind's tool, readlink the program), else the link */
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0 && (size_t)len < sizeof(exe) - 1) {
		exe[len] = '\0';
		if (access(exe, X_OK))
			snprintf(exe, sizeof(exe), "/proc/self/exe");
	} else {
		snprintf(exe, sizeof(exe), "/proc/self/exe");
	}
	fflush(stdout);
	fflush(stderr);
	execve(exe, argv, env);
	int e = errno;
	free(owned);
	free(env);
	return vpa_fail(err, VPA_EIO, NULL, "portable mode: cannot re-execute %s: %s", exe,
			strerror(e));
#endif
}
