#!/usr/bin/env python3
"""Fits the polynomial coefficients of axle's inline f32 math functions
(src/ir/kernel/math_reference.c) and prints them as C table rows.

Each polynomial P approximates a function g on an interval so that the
weighted error max |w(v) * (g(v) - P(v))| is as small as the degree allows
(w turns the error of P into the relative error of the final result).
The fit is a discrete minimax by Lawson's algorithm: repeated weighted
least squares over a dense grid, the weights growing where the error is
large, which converges to the equioscillating (Chebyshev) solution.

Coefficients of the f32 tables must be f32 numbers; rounding all of them
at the end would waste accuracy, so they are rounded one at a time, lowest
order first, each time refitting the higher ones to absorb the rounding.
pow's tables are f64 (pow works in double; see the C file) and stay f64.

Run:  /usr/bin/python3 tests/gen/math_coefficients.py
It prints, per table, the achieved weighted error (log2) and the rows.
"""
import math

import numpy as np


def lawson_fit(v, g, w, degree, fixed=(), iterations=200):
    """Minimax fit of g by sum c_k v^k with the first len(fixed) coefficients
    given; returns the free coefficients."""
    k0 = len(fixed)
    residual = g - sum(c * v**k for k, c in enumerate(fixed))
    columns = np.stack([v**k for k in range(k0, degree + 1)], axis=1)
    scale = np.max(np.abs(columns), axis=0)
    a = columns * w[:, None] / scale
    b = residual * w
    u = np.full(len(v), 1.0 / len(v))
    best, best_err = None, np.inf
    for _ in range(iterations):
        s = np.sqrt(u)
        c = np.linalg.lstsq(a * s[:, None], b * s, rcond=None)[0]
        e = np.abs(a @ c - b)
        if e.max() < best_err:
            best, best_err = c, e.max()
        u = u * e
        u /= u.sum()
    return best / scale


def fit_table(name, v, g, w, degree, f32=True):
    """Fits and rounds; prints the rows and the achieved error."""
    coefficients = []
    if f32:
        for k in range(degree + 1):
            free = lawson_fit(v, g, w, degree, fixed=coefficients)
            coefficients.append(float(np.float32(free[0])))
    else:
        coefficients = list(lawson_fit(v, g, w, degree))
    p = sum(c * v**k for k, c in enumerate(coefficients))
    err = np.max(np.abs(w * (g - p)))
    print(f"/* {name}: degree {degree}, max weighted error 2^{math.log2(err):.1f} */")
    for c in coefficients:
        print(f"  {c:.9g}f," if f32 else f"  {c:.17g},")
    print()
    return coefficients


def chebyshev_grid(lo, hi, n=6000):
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    return np.sort(lo + (hi - lo) * (t + 1) / 2)


erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)


# pi to 110 digits (far more than the 200-odd bits of 2/pi the table needs).
PI_DIGITS = ("3.14159265358979323846264338327950288419716939937510"
             "58209749445923078164062862089986280348253421170679821480865")


def print_two_over_pi_windows():
    """sin/cos/tan's large-argument reduction: for x = M 2^E (M the
    24-bit integer mantissa, E = 0-biased exponent - 150, E in [-1, 104]),
    the 96 bits of 2/pi that matter to x 2/pi mod 4, as three 32-bit words:
    floor(2/pi 2^(E+94)) mod 2^96. Exact integer arithmetic."""
    from fractions import Fraction
    two_over_pi = 2 / Fraction(PI_DIGITS)
    print("/* 2/pi windows for E = -1..104: floor(2/pi 2^(E+94)) mod 2^96 */")
    for e in range(-1, 105):
        w = (two_over_pi * 2 ** (e + 94)).__floor__() % 2**96
        words = [(w >> 64) & 0xFFFFFFFF, (w >> 32) & 0xFFFFFFFF, w & 0xFFFFFFFF]
        print("  {" + ", ".join(f"0x{x:08x}u" for x in words) + "},")
    print()


def pi_fraction(bits):
    """pi to `bits` bits, by Machin's formula in integers:
    pi = 16 atan(1/5) - 4 atan(1/239)."""
    from fractions import Fraction
    one = 1 << (bits + 16)
    def atan_inverse(n):
        total, term, k, sign = 0, one // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k += 2
            sign = -sign
        return total
    return Fraction(16 * atan_inverse(5) - 4 * atan_inverse(239), one)


def print_f64_trig():
    """sin/cos/tan in f64: the Taylor tables, pi/2 in three parts for the
    Cody-Waite reduction (33 + 33 + 53 bits) and in two for Payne-Hanek's
    result, and 2/pi as 20 64-bit words: word j = floor(2/pi 2^(64 j))
    mod 2^64 (word 0 is the zero integer part), from pi to 1400 bits."""
    from fractions import Fraction
    def row(name, values):
        print(f"/* {name} */")
        print("    " + ", ".join(float(v).hex() for v in values) + ",")
    row("sin: (-1)^k/(2k+1)!, k = 1..8", [Fraction((-1) ** k, math.factorial(2 * k + 1)) for k in range(1, 9)])
    row("cos: (-1)^k/(2k)!, k = 2..8", [Fraction((-1) ** k, math.factorial(2 * k)) for k in range(2, 9)])
    pi = pi_fraction(1400)
    pio2 = pi / 2
    p1 = Fraction(math.floor(pio2 * 2**32), 2**32)
    p2 = Fraction(math.floor((pio2 - p1) * 2**65), 2**65)
    p3 = pio2 - p1 - p2
    hi = Fraction(float(pio2))
    print("/* pi/2 = P1 + P2 + P3 */", float(p1).hex(), float(p2).hex(), float(p3).hex())
    print("/* pi/2 = HI + LO */", float(hi).hex(), float(pio2 - hi).hex())
    print("/* 2/pi */", float(2 / pi).hex())
    two_over_pi = 2 / pi
    words = [math.floor(two_over_pi * 2 ** (64 * j)) % 2**64 for j in range(20)]
    for j in range(0, 20, 4):
        print("    " + ", ".join(f"UINT64_C(0x{w:016x})" for w in words[j:j + 4]) + ",")


def print_f64_erf():
    """erf in f64. Below 1: x (2/sqrt(pi)) sum (-1)^n z^n / (n! (2n+1)),
    z = x^2, n <= 19, with 2/sqrt(pi) in two parts. From 1 to 6: erfc as
    its Taylor polynomial (20 terms) around the centers 1.25, 1.75, ...,
    5.75, |h| <= 1/4; the derivatives of erfc are Hermite polynomials
    times e^(-a^2): erfc^(n)(a) = -(2/sqrt(pi)) (-1)^(n-1) H_(n-1)(a) e^(-a^2).
    All in 80-digit decimals."""
    import decimal
    from fractions import Fraction
    decimal.getcontext().prec = 80
    D = decimal.Decimal
    pi = pi_fraction(400)
    sqrt_pi = (D(pi.numerator) / D(pi.denominator)).sqrt()
    c = 2 / sqrt_pi
    hi = float(c)
    print("/* 2/sqrt(pi) = HI + LO */", hi.hex(), float(c - D(hi)).hex())
    small = [Fraction((-1) ** n, math.factorial(n) * (2 * n + 1)) for n in range(1, 20)]
    print("/* erf small: (-1)^n / (n! (2n+1)), n = 1..19 (times 2/sqrt(pi) at run time) */")
    print("    " + ", ".join(float(v).hex() for v in small) + ",")

    def erf_decimal(a):
        a = D(a)
        total, term, n = D(0), a, 0
        while True:
            add = term / (2 * n + 1)
            total += add
            if abs(add) < D(10) ** -70:
                break
            n += 1
            term = -term * a * a / n
        return c * total

    print("/* erfc Taylor rows, centers 1.25 + k/2, k = 0..9, coefficients of h^0..h^19 */")
    for k in range(10):
        a = D("1.25") + D(k) / 2
        e = (-a * a).exp()
        h_prev, h = D(0), D(1)  # H_{-1} (unused), H_0
        row = [1 - erf_decimal(a)]
        hermite = [D(1), 2 * a]
        for m in range(2, 20):
            hermite.append(2 * a * hermite[m - 1] - 2 * (m - 1) * hermite[m - 2])
        for n in range(1, 20):
            row.append(-c * (-1) ** (n - 1) * hermite[n - 1] * e / math.factorial(n))
        print("    {" + ", ".join(float(v).hex() for v in row) + "},")


def print_f64_series():
    """The f64 functions' tables (src/ir/kernel/math_reference_f64.c):
    truncated Taylor series, whose coefficients are exact rationals
    rounded to f64 once, so nothing is fitted; each is long enough that
    the first term left out is below 2^-56 of the result on its interval.
    Then the split constants, from exact arithmetic on PI_DIGITS and on
    ln 2 (the decimal module, 50 digits)."""
    from fractions import Fraction
    def row(name, values):
        print(f"/* {name} */")
        print("    " + ", ".join(float(v).hex() for v in values) + ",")
    # exp: (e^r - 1 - r)/r^2 = sum r^k/(k+2)!, |r| <= ln2/2: k = 0..11
    row("exp: 1/(k+2)!, k = 0..11", [Fraction(1, math.factorial(k + 2)) for k in range(12)])
    # log: R(z) = sum_{k>=1} 2 z^k/(2k+1) as z (2/3 + 2/5 z + ...), z <= 0.0295: k = 1..10
    row("log: 2/(2k+1), k = 1..10", [Fraction(2, 2 * k + 1) for k in range(1, 11)])
    # atan: (atan t - t)/t^3 = sum (-1)^(k+1) z^(k-1)/(2k+1), z = t^2 <= 0.1716: k = 1..21
    row("atan: (-1)^k/(2k+1), k = 1..21", [Fraction((-1) ** k, 2 * k + 1) for k in range(1, 22)])
    import decimal
    decimal.getcontext().prec = 50
    ln2 = Fraction(decimal.Decimal(2).ln())
    ln2_hi = Fraction(math.floor(ln2 * 2**42), 2**42)
    print("/* ln2 = LN2_HI (42 bits) + LN2_LO */", float(ln2_hi).hex(), float(ln2 - ln2_hi).hex())
    pio4 = Fraction(PI_DIGITS) / 4
    hi = Fraction(float(pio4))
    print("/* pi/4 = PIO4_HI + PIO4_LO */", float(hi).hex(), float(pio4 - hi).hex())
    print("/* tan(pi/8) = sqrt(2) - 1 */", float(Fraction(decimal.Decimal(2).sqrt()) - 1).hex())
    print()


def main():
    # exp, expm1: e^r = 1 + r + r^2 P(r), |r| <= ln2/2 (a little wider: the
    # reduction's n comes from an f32 product).
    r = chebyshev_grid(-0.3466 * 1.002, 0.3466 * 1.002)
    g = (np.expm1(r) - r) / r**2
    fit_table("exp: (e^r - 1 - r)/r^2, relative to e^r", r, g, r**2 / np.exp(r), 4)
    fit_table("expm1: same, relative to e^r - 1", r, g, r**2 / np.abs(np.expm1(r)), 5)

    # log (and log1p): log(1+f) = f + f^2 Q(f), f = m - 1, m in [sqrt(1/2), sqrt(2)).
    f = chebyshev_grid(math.sqrt(0.5) - 1, math.sqrt(2) - 1)
    g = (np.log1p(f) - f) / f**2
    fit_table("log: (log1p(f) - f)/f^2, relative to log1p(f)", f, g,
              f**2 / np.abs(np.log1p(f)), 8)

    # tanh: x + x^3 T(x^2) for |x| < 0.5625.
    x = chebyshev_grid(1e-4, 0.5625)
    fit_table("tanh: (tanh(x) - x)/x^3 in z = x^2", x**2, (np.tanh(x) - x) / x**3,
              x**3 / np.tanh(x), 5)

    # erf: x + x E(x^2) for |x| < 1; 1 - exp(B(t - 1)) for 1 <= t <= 4, expanded
    # at t = 1, where erfc is largest, so that the f32 Horner sum does not
    # cancel there.
    x = chebyshev_grid(1e-4, 1.0)
    fit_table("erf small: (erf(x) - x)/x in z = x^2", x**2, (erf(x) - x) / x,
              x / erf(x), 6)
    t = chebyshev_grid(1.0, 4.0)
    fit_table("erf large: log(erfc(t)) in t - 1, weight erfc(t)", t - 1.0,
              np.log(erfc(t)), erfc(t), 11)

    # sin, cos, tan on |r| <= pi/4, with a 1.5% margin: the reduction's r
    # may pass pi/4 by rounding, and the margin costs no degree.
    r = chebyshev_grid(1e-4, math.pi / 4 * 1.015)
    z = r**2
    fit_table("sin: (sin(r) - r)/r^3 in z = r^2", z, (np.sin(r) - r) / r**3,
              r**3 / np.sin(r), 3)
    fit_table("cos: (cos(r) - 1)/r^2 in z = r^2", z, (np.cos(r) - 1) / z,
              z / np.cos(r), 4)
    fit_table("tan: (tan(r) - r)/r^3 in z = r^2", z, (np.tan(r) - r) / r**3,
              r**3 / np.tan(r), 6)

    # atan: t + t^3 A(t^2) on |t| <= tan(pi/8).
    t = chebyshev_grid(1e-4, math.tan(math.pi / 8) * 1.001)
    fit_table("atan: (atan(t) - t)/t^3 in z = t^2", t**2, (np.arctan(t) - t) / t**3,
              t**3 / np.arctan(t), 5)

    # cbrt: a first guess on [1, 2) that one Newton step then corrects.
    m = chebyshev_grid(1.0, 2.0)
    fit_table("cbrt guess: cbrt(m), relative", m, np.cbrt(m), 1 / np.cbrt(m), 4)

    # pow, in f64: log(1+f) = 2s + s^3 R(s^2), s = f/(2+f); 2^r on |r| <= 1/2.
    s = chebyshev_grid(1e-3, (math.sqrt(2) - 1) / (math.sqrt(2) + 1) * 1.001)
    f = 2 * s / (1 - s)
    fit_table("pow log: (log1p(f) - 2s)/s^3 in s^2", s**2, (np.log1p(f) - 2 * s) / s**3,
              s**3 / np.log1p(f), 5, f32=False)
    r = chebyshev_grid(-0.5, 0.5)
    fit_table("pow exp2: 2^r, relative", r, np.exp2(r), 1 / np.exp2(r), 9, f32=False)
    print_two_over_pi_windows()
    print_f64_series()
    print_f64_trig()
    print_f64_erf()


if __name__ == "__main__":
    main()
