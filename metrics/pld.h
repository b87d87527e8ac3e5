/*
 * metrics/pld.h - the privacy loss distribution (PLD) accountant of the
 * Poisson-subsampled Gaussian mechanism under add/remove adjacency.
 *
 * Beside the RDP accountant (metrics/dp.c): pure functions, the T-fold
 * composition by a double-precision FFT written in metrics/pld.c (no library:
 * see fft_radix2 there for why).
 *
 * One step, sampling rate q, noise multiplier sigma (sensitivity 1):
 *   remove: P = (1-q) N(0, s^2) + q N(1, s^2) against Q = N(0, s^2),
 *   add:    P = N(0, s^2) against the mixture;
 * each direction is composed over T steps and delta(eps) is the larger of the
 * two (as Google dp_accounting does).
 *
 * Discretisation on the grid l_i = i * interval ("connect the dots",
 * Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, as dp_accounting's default):
 *   - pessimistic: a PLD on the grid whose hockey-stick curve delta(e^eps)
 *     equals the exact one at every grid point and is linear in e^eps
 *     between them.  delta is convex in e^eps, so the chord lies above it:
 *     the discrete PLD dominates the mechanism, its composition dominates the
 *     composition, and every delta / epsilon it gives is an UPPER bound;
 *   - optimistic: on each interval a segment below a tangent of the curve
 *     (at the middle, or at the right end where the middle's is negative),
 *     then the lower convex hull; its curve lies below the exact one, and so
 *     after composition (the order of hockey-stick curves is kept by products
 *     of independent steps): a LOWER bound.  The two bracket the exact value:
 *     what the upper bound can exceed it by is measured, for the chosen
 *     interval, as upper - lower (both up to floating-point rounding: the FFT's
 *     ~1e-17 per entry, the one-step curve in long double).
 * Composition: FFT of the one-step PMF, its T-th power, inverse FFT on a
 * window of losses chosen by a Chernoff bound; the mass outside the window
 * (at most 1e-18 on each side) is added to every delta as if it were at +inf,
 * and so is the mass the one-step grid leaves at +inf.
 */
#ifndef VPA_PLD_H
#define VPA_PLD_H

#include "base/base.h"

/* The default grid interval: meets the checks of tests/unit/test_pld.c (upper
 * bound within 0.02 of the exact epsilon on DP-SGD-sized problems). */
#define VPA_PLD_INTERVAL_DEFAULT 1e-4

/* The largest number of steps the PLD accountant takes (the FFT's phase
 * arithmetic is in 64-bit integers). */
#define VPA_PLD_MAX_STEPS 1e9

struct vpa_pld;

/*
 * Compose T steps.  q in [0, 1], sigma > 0, steps whole in [1, 1e9],
 * interval in [1e-6, 0.1].  Fails (VPA_EINPUT) with a one-line message when
 * the grid or the composed window would need more than 2^23 points.
 */
int vpa_pld_new(double q, double sigma, double steps, double interval, struct vpa_pld **out,
		struct vpa_err *err);
void vpa_pld_free(struct vpa_pld *p);

/* delta(eps), eps >= 0: the upper bound (upper = 1) or the lower bound. */
double vpa_pld_delta(const struct vpa_pld *p, double eps, int upper);

/* The smallest eps >= 0 with delta(eps) <= delta (upper or lower bound);
 * +inf when no eps reaches delta (delta below the +inf mass). */
double vpa_pld_epsilon(const struct vpa_pld *p, double delta, int upper);

/*
 * The claim beside RDP's of a Poisson-subsampled Gaussian run: the upper-bound
 * epsilon at delta after floor(steps) steps on the default grid, or NAN when
 * the accountant does not apply (q <= 0, steps outside [1, VPA_PLD_MAX_STEPS],
 * a grid that does not fit).
 */
double vpa_pld_claim(double q, double sigma, double steps, double delta);

/* The mass at +inf of the composed upper-bound PLD (the one-step grid's
 * +inf mass composed, and the window's tails): no epsilon reaches a delta
 * below it. */
double vpa_pld_inf_mass(const struct vpa_pld *p);

/*
 * The smallest noise multiplier whose PLD upper-bound epsilon at `delta`
 * after `steps` steps is at most `eps` (bisection on log sigma to a relative
 * 1e-6, rounded up so that the returned sigma meets the target).  q = 0 gives 0.
 */
int vpa_pld_sigma(double q, double eps, double steps, double delta, double interval,
		  double *sigma /* OUT */, struct vpa_err *err);

#endif
