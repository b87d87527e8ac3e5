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

/* The path ox_exp_shift_f32 takes in this process: "avx2+fma" or "generic". */
const char *ox_exp_path(void);

#endif
