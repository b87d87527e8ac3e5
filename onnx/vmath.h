/*
 * onnx/vmath.h - vectorised float maths for the element-wise operators
 * (internal): 8 values at a time, compiled for the baseline x86-64 ISA and
 * for AVX2+FMA (chosen once at run time, never in portable mode: base/cpu.h).
 */
#ifndef VPA_ONNX_VMATH_H
#define VPA_ONNX_VMATH_H

#include <stddef.h>

/*
 * y[i] = exp(x[i] - shift) in float: Cody-Waite range reduction
 * (x = n ln 2 + r, |r| <= ln 2 / 2) and Cephes' degree-7 polynomial of expf
 * for e^r, scaled by 2^n through the exponent bits.  At most 2 ulp from the
 * exact value for x - shift in [-87.33, 88] (tests/unit/test_vmath.c: 0.96
 * ulp measured over a grid); below -87.33 (and -inf) it is 0 (the exact
 * value is under 1.2e-38: no normal float); above 88 it is exp(88) (Softmax
 * calls it with x <= shift); NaN stays NaN.  x and y borrowed and may not
 * overlap; safe from any number of threads.
 */
void ox_exp_shift_f32(const float *x, float shift, float *y, size_t n);

/*
 * y[i] = erf(x[i]) in float (the Erf operator; GELU as exported by PyTorch):
 * x P(x^2) for |x| < 0.9, 1 - exp(-x^2) Q((|x| - 2.45) / 1.55) up to 4 (Q
 * fitted to exp(x^2) erfc(x)), +-1 beyond; coefficients fitted by
 * tests/golden/onnx_erf/gen.py (relative errors of the fits 3.3e-10 and
 * 9.6e-9).  Odd, NaN kept, +-inf give +-1.  Within 2 ulp of the exact value
 * (tests/unit/test_vmath_erf.c, against libm's double erf).  The same paths
 * as ox_exp_shift_f32.  x and y may be the same array.
 */
void ox_erf_f32(const float *x, float *y, size_t n);

/*
 * y[i] = 1 / (1 + exp(-x[i])) in float (Sigmoid, and the SiLU/GLU of
 * Conformer exports: Sigmoid with libm's expf took 31% of a torchaudio
 * Conformer-CTC run): e = exp(-|x|) by ox_exp_shift_f32 (never overflows),
 * then 1 / (1 + e) for x >= 0 and e / (1 + e) below, as a select.  Within 3
 * ulp of the exact value where it is a normal float; 0 below -87.33 (the
 * exact value is under 1.2e-38).  x and y may be the same array.
 */
void ox_sigmoid_f32(const float *x, float *y, size_t n);

/* The path ox_exp_shift_f32 takes in this process: "avx2+fma" or "generic". */
const char *ox_exp_path(void);

#endif
