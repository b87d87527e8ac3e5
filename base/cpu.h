/*
 * base/cpu.h - the arithmetic a run is computed with, and the portable mode
 * that makes it the same on every x86-64 runner.
 *
 * Three choices made at run time from the CPU change the last bits of
 * results, and a trained model (PLDA, x-vector extractor, LSTM) turns those
 * bits into different metrics (issue 25 item 2: the quickstart's EERs move
 * by up to 0.03 between two OpenBLAS kernels on one machine):
 *   - OpenBLAS built with DYNAMIC_ARCH (Debian's is) picks a kernel for the
 *     CPU when it loads, before main(): the kernels block and sum in
 *     different orders, some with FMA.  The environment variable
 *     OPENBLAS_CORETYPE, read at that moment, forces one.
 *   - glibc's libm picks FMA variants of exp, log, pow, sin, atan, tan by
 *     ifunc when it loads, when the CPU has FMA and AVX2 (or FMA4); about 1 in
 *     1,500 arguments then rounds differently (glibc 2.36).  The tunable
 *     GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4, read by the dynamic
 *     loader, disables them (the "_Usable" spelling of glibc <= 2.32 is
 *     silently ignored by 2.36).
 *   - vpaudit's own AVX2/FMA paths (onnx/vmath.c, onnx/conv_wino.c), chosen
 *     through vpa_cpu_simd().
 *
 * Portable mode pins all three: the Haswell kernel (AVX2 + FMA: every Intel
 * CPU since 2013 and AMD since 2015; its GEMM blocking is fixed, not derived
 * from the cache sizes), libm's generic variants and vpaudit's generic paths.
 * Because the first two are read when the libraries load,
 * vpa_portable_enter() re-executes the program itself (execve of its file,
 * the target of /proc/self/exe, with the same arguments, no shell) with the
 * two variables set, then checks in the new process that OpenBLAS and glibc
 * took them.
 */
#ifndef VPA_CPU_H
#define VPA_CPU_H

#include "base/base.h"
#include "base/json.h"

#define VPA_PORTABLE_KERNEL "Haswell"
#define VPA_PORTABLE_TUNABLE "glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4"
/* set in the re-executed process: a second failed check is an error, not a loop */
#define VPA_PORTABLE_MARK "VPAUDIT_PORTABLE_EXEC"

/*
 * Enter portable mode.  When this process already computes with the pinned
 * arithmetic (OpenBLAS kernel Haswell, libm without FMA variants) it only
 * switches vpaudit's own paths to generic and returns 0.  Otherwise it
 * re-executes this program (/proc/self/exe's target) with argv (argv[0]
 * first, NULL-terminated, borrowed) and the environment plus
 * OPENBLAS_CORETYPE, GLIBC_TUNABLES and VPA_PORTABLE_MARK, and returns only
 * on failure.  Errors (VPA_EINPUT): not
 * x86-64, a CPU without AVX2/FMA, an OpenBLAS that cannot be pinned (not
 * DYNAMIC_ARCH), under MPI (ranks cannot re-execute: the message gives the
 * mpirun -x options); VPA_EIO when execve fails.  Call it before any output
 * and before threads start.
 */
int vpa_portable_enter(char *const argv[], struct vpa_err *err);

/* 1 after vpa_portable_enter succeeded. */
int vpa_portable(void);

/* 1 when vpaudit's own AVX2/FMA paths may run: the CPU has both and the run
 * is not portable.  Thread-safe once portable mode is set. */
int vpa_cpu_simd(void);

/*
 * Add to `m` (an object) what decides this process's arithmetic:
 * "cpu" (the model name of /proc/cpuinfo, null when unknown), "blas"
 * ("OpenBLAS 0.3.21"), "blas_kernel" (the kernel chosen: "Haswell"),
 * "blas_config" (openblas_get_config()), "libc" ("glibc 2.36"), "libm_fma"
 * (true when libm uses its FMA variants, null when unknown), "simd"
 * ("avx2+fma" or "generic": vpaudit's own paths) and "portable".
 */
void vpa_machine_json(struct vpa_json *m);

/* The CPU's model name from /proc/cpuinfo into buf ("" when unknown). */
void vpa_cpu_model(char *buf, size_t n);

#endif
