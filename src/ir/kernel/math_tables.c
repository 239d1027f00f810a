/* The coefficient tables and constant tables of the math functions,
 * declared in math_reference.h: the one copy of these numbers that the
 * algorithms (math_algorithms.c), the C of the functions not yet written
 * once (math_reference*.c) and the emitters (which place them in the
 * generated code or the PTX module) all read. This file is the bottom of
 * src/ir/kernel's math: it calls nothing.
 *
 * The f32 tables were fitted by tests/gen/math_coefficients.py (discrete
 * minimax by Lawson's algorithm, coefficients rounded to f32 one at a
 * time, lowest order first, refitting the rest); rerunning it prints them
 * again. The f64 polynomials are truncated Taylor series with exact
 * rational coefficients rounded once to f64 (print_f64_series there):
 * each is long enough that the first term left out is below 2^-56 of the
 * result on its interval, so nothing is fitted. Each comment gives the
 * approximated function and its interval. */
#include "kernel/math_reference.h"

#include <stdint.h>

/* ---- f32 (pow's tables are f64: pow works in f64 lanes) ---- */

/* (e^r - 1 - r) / r^2 on |r| <= ln2/2, minimax relative to e^r
 * (weighted error 2^-28.2). */
const float mathref_exp_table[MATHREF_EXP_COUNT] = {
    0.49999994f, 0.166665211f, 0.0416682884f, 0.0083687054f, 0.00138189492f,
};

/* The same function, minimax relative to e^r - 1 (weighted error 2^-31.1):
 * expm1 returns r + r^2 P(r) itself near 0, so it needs relative accuracy
 * there. */
const float mathref_expm1_table[MATHREF_EXPM1_COUNT] = {
    0.5f, 0.166666657f, 0.0416664928f, 0.00833354332f, 0.00139323669f, 0.000197643501f,
};

/* (log(1+f) - f) / f^2 on f in [sqrt(1/2) - 1, sqrt(2) - 1], minimax
 * relative to log(1+f) (weighted error 2^-27.8). log1p uses it too. */
const float mathref_log_table[MATHREF_LOG_COUNT] = {
    -0.499999881f, 0.333333224f, -0.250016034f, 0.200022057f, -0.1660887f,
    0.141774371f,  -0.132400155f, 0.129298031f, -0.0765954629f,
};

/* (tanh(x) - x) / x^3 as a polynomial in z = x^2 on |x| < 0.5625, minimax
 * relative to tanh (weighted error 2^-33.0). */
const float mathref_tanh_table[MATHREF_TANH_COUNT] = {
    -0.333333313f, 0.133332282f, -0.0539496243f, 0.0217162166f, -0.00821394753f, 0.00217314181f,
};

/* Rows 0..6: (erf(x) - x) / x as a polynomial in z = x^2 on |x| < 1,
 * minimax relative to erf (weighted error 2^-29.4).
 * Rows 7..18: log(erfc(t)) as a polynomial in t - 1 on 1 <= t <= 4,
 * minimax weighted by erfc(t), i.e. for the absolute error of
 * erf = 1 - erfc (weighted error 2^-26.9). Expanded around t = 1, where
 * erfc matters most, so that Horner's sum does not cancel there. */
const float mathref_erf_table[MATHREF_ERF_COUNT] = {
    0.128379166f,  -0.37612626f,    0.112835787f,    -0.0268533472f,
    0.0051871622f, -0.00079978531f, 7.80690389e-05f,
    -1.84960556f,  -2.63895798f,    -0.843390882f,   -0.0384268388f,
    -0.00695002358f, 0.0495128967f, -0.0933454633f,  0.105303407f,
    -0.0735041723f, 0.0308199823f,  -0.007077788f,   0.000681281788f,
};

/* The sin, cos and tan tables are fitted on |r| <= 1.015 pi/4, a margin
 * for an r that rounding leaves a hair past pi/4. */

/* (sin(r) - r) / r^3 as a polynomial in z = r^2, minimax relative to sin
 * (weighted error 2^-32.4). */
const float mathref_sin_table[MATHREF_SIN_COUNT] = {
    -0.166666672f, 0.00833337847f, -0.000198525056f, 2.82521728e-06f,
};

/* (cos(r) - 1) / r^2 in z = r^2, relative to cos (weighted error
 * 2^-36.9). */
const float mathref_cos_table[MATHREF_COS_COUNT] = {
    -0.5f, 0.0416666679f, -0.00138889765f, 2.48204542e-05f, -2.87125118e-07f,
};

/* (tan(r) - r) / r^3 in z = r^2, relative to tan (weighted error
 * 2^-29.1). */
const float mathref_tan_table[MATHREF_TAN_COUNT] = {
    0.333333552f, 0.133324727f, 0.0540818684f, 0.0211672075f,
    0.011137587f, -0.000297188497f, 0.00456883525f,
};

/* For x = M 2^E (M the 24-bit integer mantissa, E = biased exponent -
 * 150), row E + 1 holds floor(2/pi 2^(E+94)) mod 2^96 in three words,
 * most significant first: the only bits of 2/pi that matter to
 * x 2/pi mod 4 (higher ones add multiples of 4, lower ones less than
 * 2^-70). Printed by tests/gen/math_coefficients.py from exact integer
 * arithmetic on 110 digits of pi. Rows for E = -1..104, i.e. biased
 * exponents 149 (2^22) to 254. */
const uint32_t mathref_two_over_pi_windows[106][3] = {
    {0x145f306du, 0xc9c882a5u, 0x3f84eafau},
    {0x28be60dbu, 0x9391054au, 0x7f09d5f4u},
    {0x517cc1b7u, 0x27220a94u, 0xfe13abe8u},
    {0xa2f9836eu, 0x4e441529u, 0xfc2757d1u},
    {0x45f306dcu, 0x9c882a53u, 0xf84eafa3u},
    {0x8be60db9u, 0x391054a7u, 0xf09d5f47u},
    {0x17cc1b72u, 0x7220a94fu, 0xe13abe8fu},
    {0x2f9836e4u, 0xe441529fu, 0xc2757d1fu},
    {0x5f306dc9u, 0xc882a53fu, 0x84eafa3eu},
    {0xbe60db93u, 0x91054a7fu, 0x09d5f47du},
    {0x7cc1b727u, 0x220a94feu, 0x13abe8fau},
    {0xf9836e4eu, 0x441529fcu, 0x2757d1f5u},
    {0xf306dc9cu, 0x882a53f8u, 0x4eafa3eau},
    {0xe60db939u, 0x1054a7f0u, 0x9d5f47d4u},
    {0xcc1b7272u, 0x20a94fe1u, 0x3abe8fa9u},
    {0x9836e4e4u, 0x41529fc2u, 0x757d1f53u},
    {0x306dc9c8u, 0x82a53f84u, 0xeafa3ea6u},
    {0x60db9391u, 0x054a7f09u, 0xd5f47d4du},
    {0xc1b72722u, 0x0a94fe13u, 0xabe8fa9au},
    {0x836e4e44u, 0x1529fc27u, 0x57d1f534u},
    {0x06dc9c88u, 0x2a53f84eu, 0xafa3ea69u},
    {0x0db93910u, 0x54a7f09du, 0x5f47d4d3u},
    {0x1b727220u, 0xa94fe13au, 0xbe8fa9a6u},
    {0x36e4e441u, 0x529fc275u, 0x7d1f534du},
    {0x6dc9c882u, 0xa53f84eau, 0xfa3ea69bu},
    {0xdb939105u, 0x4a7f09d5u, 0xf47d4d37u},
    {0xb727220au, 0x94fe13abu, 0xe8fa9a6eu},
    {0x6e4e4415u, 0x29fc2757u, 0xd1f534ddu},
    {0xdc9c882au, 0x53f84eafu, 0xa3ea69bbu},
    {0xb9391054u, 0xa7f09d5fu, 0x47d4d377u},
    {0x727220a9u, 0x4fe13abeu, 0x8fa9a6eeu},
    {0xe4e44152u, 0x9fc2757du, 0x1f534ddcu},
    {0xc9c882a5u, 0x3f84eafau, 0x3ea69bb8u},
    {0x9391054au, 0x7f09d5f4u, 0x7d4d3770u},
    {0x27220a94u, 0xfe13abe8u, 0xfa9a6ee0u},
    {0x4e441529u, 0xfc2757d1u, 0xf534ddc0u},
    {0x9c882a53u, 0xf84eafa3u, 0xea69bb81u},
    {0x391054a7u, 0xf09d5f47u, 0xd4d37703u},
    {0x7220a94fu, 0xe13abe8fu, 0xa9a6ee06u},
    {0xe441529fu, 0xc2757d1fu, 0x534ddc0du},
    {0xc882a53fu, 0x84eafa3eu, 0xa69bb81bu},
    {0x91054a7fu, 0x09d5f47du, 0x4d377036u},
    {0x220a94feu, 0x13abe8fau, 0x9a6ee06du},
    {0x441529fcu, 0x2757d1f5u, 0x34ddc0dbu},
    {0x882a53f8u, 0x4eafa3eau, 0x69bb81b6u},
    {0x1054a7f0u, 0x9d5f47d4u, 0xd377036du},
    {0x20a94fe1u, 0x3abe8fa9u, 0xa6ee06dbu},
    {0x41529fc2u, 0x757d1f53u, 0x4ddc0db6u},
    {0x82a53f84u, 0xeafa3ea6u, 0x9bb81b6cu},
    {0x054a7f09u, 0xd5f47d4du, 0x377036d8u},
    {0x0a94fe13u, 0xabe8fa9au, 0x6ee06db1u},
    {0x1529fc27u, 0x57d1f534u, 0xddc0db62u},
    {0x2a53f84eu, 0xafa3ea69u, 0xbb81b6c5u},
    {0x54a7f09du, 0x5f47d4d3u, 0x77036d8au},
    {0xa94fe13au, 0xbe8fa9a6u, 0xee06db14u},
    {0x529fc275u, 0x7d1f534du, 0xdc0db629u},
    {0xa53f84eau, 0xfa3ea69bu, 0xb81b6c52u},
    {0x4a7f09d5u, 0xf47d4d37u, 0x7036d8a5u},
    {0x94fe13abu, 0xe8fa9a6eu, 0xe06db14au},
    {0x29fc2757u, 0xd1f534ddu, 0xc0db6295u},
    {0x53f84eafu, 0xa3ea69bbu, 0x81b6c52bu},
    {0xa7f09d5fu, 0x47d4d377u, 0x036d8a56u},
    {0x4fe13abeu, 0x8fa9a6eeu, 0x06db14acu},
    {0x9fc2757du, 0x1f534ddcu, 0x0db62959u},
    {0x3f84eafau, 0x3ea69bb8u, 0x1b6c52b3u},
    {0x7f09d5f4u, 0x7d4d3770u, 0x36d8a566u},
    {0xfe13abe8u, 0xfa9a6ee0u, 0x6db14accu},
    {0xfc2757d1u, 0xf534ddc0u, 0xdb629599u},
    {0xf84eafa3u, 0xea69bb81u, 0xb6c52b32u},
    {0xf09d5f47u, 0xd4d37703u, 0x6d8a5664u},
    {0xe13abe8fu, 0xa9a6ee06u, 0xdb14acc9u},
    {0xc2757d1fu, 0x534ddc0du, 0xb6295993u},
    {0x84eafa3eu, 0xa69bb81bu, 0x6c52b327u},
    {0x09d5f47du, 0x4d377036u, 0xd8a5664fu},
    {0x13abe8fau, 0x9a6ee06du, 0xb14acc9eu},
    {0x2757d1f5u, 0x34ddc0dbu, 0x6295993cu},
    {0x4eafa3eau, 0x69bb81b6u, 0xc52b3278u},
    {0x9d5f47d4u, 0xd377036du, 0x8a5664f1u},
    {0x3abe8fa9u, 0xa6ee06dbu, 0x14acc9e2u},
    {0x757d1f53u, 0x4ddc0db6u, 0x295993c4u},
    {0xeafa3ea6u, 0x9bb81b6cu, 0x52b32788u},
    {0xd5f47d4du, 0x377036d8u, 0xa5664f10u},
    {0xabe8fa9au, 0x6ee06db1u, 0x4acc9e21u},
    {0x57d1f534u, 0xddc0db62u, 0x95993c43u},
    {0xafa3ea69u, 0xbb81b6c5u, 0x2b327887u},
    {0x5f47d4d3u, 0x77036d8au, 0x5664f10eu},
    {0xbe8fa9a6u, 0xee06db14u, 0xacc9e21cu},
    {0x7d1f534du, 0xdc0db629u, 0x5993c439u},
    {0xfa3ea69bu, 0xb81b6c52u, 0xb3278872u},
    {0xf47d4d37u, 0x7036d8a5u, 0x664f10e4u},
    {0xe8fa9a6eu, 0xe06db14au, 0xcc9e21c8u},
    {0xd1f534ddu, 0xc0db6295u, 0x993c4390u},
    {0xa3ea69bbu, 0x81b6c52bu, 0x32788720u},
    {0x47d4d377u, 0x036d8a56u, 0x64f10e41u},
    {0x8fa9a6eeu, 0x06db14acu, 0xc9e21c82u},
    {0x1f534ddcu, 0x0db62959u, 0x93c43904u},
    {0x3ea69bb8u, 0x1b6c52b3u, 0x27887208u},
    {0x7d4d3770u, 0x36d8a566u, 0x4f10e410u},
    {0xfa9a6ee0u, 0x6db14accu, 0x9e21c820u},
    {0xf534ddc0u, 0xdb629599u, 0x3c439041u},
    {0xea69bb81u, 0xb6c52b32u, 0x78872083u},
    {0xd4d37703u, 0x6d8a5664u, 0xf10e4107u},
    {0xa9a6ee06u, 0xdb14acc9u, 0xe21c820fu},
    {0x534ddc0du, 0xb6295993u, 0xc439041fu},
    {0xa69bb81bu, 0x6c52b327u, 0x8872083fu},
    {0x4d377036u, 0xd8a5664fu, 0x10e4107fu},
};

/* (atan(t) - t) / t^3 in z = t^2 on |t| <= tan(pi/8), minimax relative to
 * atan (weighted error 2^-33.9). */
const float mathref_atan_table[MATHREF_ATAN_COUNT] = {
    -0.333333313f, 0.199998021f, -0.142791316f, 0.110095896f, -0.0828325972f, 0.0435149595f,
};

/* In f64. Rows 0..5: (log(1+f) - 2s) / s^3 as a polynomial in s^2,
 * s = f / (2 + f), on f in [sqrt(1/2) - 1, sqrt(2) - 1], relative to
 * log(1+f) (weighted error 2^-51). Rows 6..15: 2^r on |r| <= 1/2,
 * relative (error 2^-46). */
const double mathref_pow_table[MATHREF_POW_COUNT] = {
    0.66666666666595398,  0.40000000050591267,   0.28571417147195344,
    0.22223380520689606,  0.18123176865870574,   0.16826593167730239,
    1.0000000000000127,   0.69314718055987545,   0.24022650695651859,
    0.055504108668529277, 0.0096181291915458447, 0.0013333557641165073,
    0.00015403435335019516, 1.525297129191657e-05, 1.3259320728290339e-06,
    1.015291062392348e-07,
};

/* A first guess of cbrt(m) on [1, 2), minimax relative (error 2^-16.7);
 * one Newton step then makes it exact to about 2^-33. Rows 5 and 6 are
 * cbrt(2) and cbrt(4), rounded to f32. */
const float mathref_cbrt_table[MATHREF_CBRT_COUNT] = {
    0.506979406f, 0.718153834f, -0.300611436f, 0.0860912874f, -0.0106038861f,
    0x1.428a30p+0f, 0x1.965feap+0f,
};

/* ---- f64 ---- */

/* (e^r - 1 - r) / r^2 = sum r^k / (k+2)!, k = 0..11, |r| <= ln2/2. */
const double mathref_exp_f64_table[MATHREF_EXP_F64_COUNT] = {
    0x1.0000000000000p-1,  0x1.5555555555555p-3,  0x1.5555555555555p-5,  0x1.1111111111111p-7,
    0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19,
    0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
};

/* R(z) / z = sum 2 z^(k-1) / (2k+1), k = 1..10, z = s^2 <= 0.0295. */
const double mathref_log_f64_table[MATHREF_LOG_F64_COUNT] = {
    0x1.5555555555555p-1, 0x1.999999999999ap-2, 0x1.2492492492492p-2, 0x1.c71c71c71c71cp-3, 0x1.745d1745d1746p-3,
    0x1.3b13b13b13b14p-3, 0x1.1111111111111p-3, 0x1.e1e1e1e1e1e1ep-4, 0x1.af286bca1af28p-4, 0x1.8618618618618p-4,
};

/* (atan t - t) / t^3 = sum (-1)^k z^(k-1) / (2k+1), k = 1..21, z = t^2 on
 * |t| <= tan(pi/8). */
const double mathref_atan_f64_table[MATHREF_ATAN_F64_COUNT] = {
    -0x1.5555555555555p-2, 0x1.999999999999ap-3,  -0x1.2492492492492p-3, 0x1.c71c71c71c71cp-4,
    -0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4,  -0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5,
    -0x1.af286bca1af28p-5, 0x1.8618618618618p-5,  -0x1.642c8590b2164p-5, 0x1.47ae147ae147bp-5,
    -0x1.2f684bda12f68p-5, 0x1.1a7b9611a7b96p-5,  -0x1.0842108421084p-5, 0x1.f07c1f07c1f08p-6,
    -0x1.d41d41d41d41dp-6, 0x1.bacf914c1bad0p-6,  -0x1.a41a41a41a41ap-6, 0x1.8f9c18f9c18fap-6,
    -0x1.7d05f417d05f4p-6,
};

/* (sin r - r) / r^3 = sum (-1)^k z^(k-1) / (2k+1)!, k = 1..8, z = r^2. */
const double mathref_sin_f64_table[MATHREF_SIN_F64_COUNT] = {
    -0x1.5555555555555p-3, 0x1.1111111111111p-7,  -0x1.a01a01a01a01ap-13, 0x1.71de3a556c734p-19,
    -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33, -0x1.ae7f3e733b81fp-41, 0x1.952c77030ad4ap-49,
};

/* (cos r - 1 + r^2/2) / r^4 = sum (-1)^k z^(k-2) / (2k)!, k = 2..8. */
const double mathref_cos_f64_table[MATHREF_COS_F64_COUNT] = {
    0x1.5555555555555p-5,  -0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-16, -0x1.27e4fb7789f5cp-22,
    0x1.1eed8eff8d898p-29, -0x1.93974a8c07c9dp-37, 0x1.ae7f3e733b81fp-45,
};

/* Word j: floor(2/pi 2^(64 j)) mod 2^64, so bit g of the table (most
 * significant first) is bit g - 63 after 2/pi's binary point. */
const uint64_t mathref_two_over_pi_words[MATHREF_TWO_OVER_PI_WORDS] = {
    UINT64_C(0x0000000000000000), UINT64_C(0xa2f9836e4e441529), UINT64_C(0xfc2757d1f534ddc0),
    UINT64_C(0xdb6295993c439041), UINT64_C(0xfe5163abdebbc561), UINT64_C(0xb7246e3a424dd2e0),
    UINT64_C(0x06492eea09d1921c), UINT64_C(0xfe1deb1cb129a73e), UINT64_C(0xe88235f52ebb4484),
    UINT64_C(0xe99c7026b45f7e41), UINT64_C(0x3991d639835339f4), UINT64_C(0x9c845f8bbdf9283b),
    UINT64_C(0x1ff897ffde05980f), UINT64_C(0xef2f118b5a0a6d1f), UINT64_C(0x6d367ecf27cb09b7),
    UINT64_C(0x4f463f669e5fea2d), UINT64_C(0x7527bac7ebe5f17b), UINT64_C(0x3d0739f78a5292ea),
    UINT64_C(0x6bfb5fb11f8d5d08), UINT64_C(0x56033046fc7b6bab),
};

/* Below 1: erf x = x (2/sqrt(pi)) (1 + z S(z)), z = x^2,
 * S = sum (-1)^n z^(n-1) / (n! (2n+1)), n = 1..19 (the first term left
 * out is below 2^-62). */
const double mathref_erf_small_f64_table[MATHREF_ERF_SMALL_F64_COUNT] = {
    -0x1.5555555555555p-2, 0x1.999999999999ap-4, -0x1.8618618618618p-6, 0x1.2f684bda12f68p-8, -0x1.8d3018d3018d3p-11, 0x1.c01c01c01c01cp-14, -0x1.bbd779334ef0bp-17, 0x1.87a00187a0018p-20, -0x1.3777c55568ccdp-23, 0x1.c2e3054870b38p-27, -0x1.2b67310aa9f3ap-30, 0x1.6f448e13e85e1p-34, -0x1.a289ee7e40f74p-38, 0x1.bd577e658d020p-42, -0x1.bc6250fb14231p-46, 0x1.a173a167fba4dp-50, -0x1.7271cbe5863ecp-54, 0x1.377c2110f2083p-58, -0x1.f1b4073b34a68p-63,
};

/* From 1 to 6: erfc as its Taylor polynomial around 1.25 + k/2 (row k),
 * coefficients of h^0..h^19, |h| <= 1/4; what they leave out is below
 * 2^-70 absolute, where erf = 1 - erfc needs 2^-55. */
const double mathref_erfc_f64_rows[MATHREF_ERFC_F64_ROWS][MATHREF_ERFC_F64_COUNT] = {
    {0x1.3bcd133aa0ffcp-4, -0x1.e4652fadcb6b2p-3, 0x1.2ebf3dcc9f22fp-2, -0x1.571d01c5c56bep-3, 0x1.93a9a7bb7ed94p-8, 0x1.8281ce0b34fa4p-5, -0x1.5d0003af70568p-6, -0x1.db43c97264485p-9, 0x1.75672cebadac5p-8, -0x1.cc22555d6cd4ep-11, -0x1.a0074f860d925p-11, 0x1.53b177f074426p-12, 0x1.ba66102895704p-15, -0x1.d4520093cdd9ep-15, 0x1.94a53c645ccdbp-19, 0x1.ae23c1a269f29p-18, -0x1.6b412b613178bp-20, -0x1.10b20781c7674p-21, 0x1.c7658e8701944p-23, 0x1.842847778c28bp-26},
    {0x1.b4be201caa4b4p-7, -0x1.b055303221015p-5, 0x1.7a4a8a2bdce13p-4, -0x1.7148c3d57c312p-4, 0x1.8a0da54306154p-5, -0x1.b22257dd01249p-8, -0x1.25b378c92a6c0p-7, 0x1.8d10fb6b8006fp-8, -0x1.7ec1d1d8d3387p-11, -0x1.d4cf0ad2e6ca3p-11, 0x1.d041eea2258aep-12, 0x1.6d70cffe71229p-18, -0x1.2007a6d7935c6p-14, 0x1.294d49e1a631dp-16, 0x1.3668d56f09b00p-18, -0x1.b75406fd5ffd6p-19, 0x1.7ac9620b78991p-23, 0x1.5ca65a3135758p-22, -0x1.5e653add60eb8p-24, -0x1.2864313064732p-26},
    {0x1.7f713f9cc9784p-10, -0x1.d4143a9dfe965p-8, 0x1.074b60f8df349p-6, -0x1.63ef61e824425p-6, 0x1.38a98327890e6p-6, -0x1.5d3b17bbe0f22p-7, 0x1.7cae0d45b1a6ap-9, 0x1.5f8313b6fdd59p-11, -0x1.0602e33b9ef4ap-10, 0x1.8352cd05696b8p-12, 0x1.80c1330a27b22p-17, -0x1.11321ce0dc8f3p-14, 0x1.7ca5429a38511p-16, 0x1.65937983af9a4p-20, -0x1.cb0718bc6dc96p-19, 0x1.ce4a65fe7584cp-21, 0x1.50c6594c2253ap-23, -0x1.251917755b0cfp-23, 0x1.3073257725eebp-26, 0x1.420056ef84d97p-27},
    {0x1.a609f7584d32bp-14, -0x1.3360ccd23db3ap-11, 0x1.a6a519a114d70p-10, -0x1.69cf466ccdf62p-9, 0x1.ab0c273ac263ep-9, -0x1.6935960664d74p-9, 0x1.b2755bfd73556p-10, -0x1.52b6263f0c0e7p-11, 0x1.7557726380065p-14, 0x1.2abb3cb37d67fp-14, -0x1.cd592454e7d28p-15, 0x1.09d09f8254931p-16, 0x1.1f87c15445595p-20, -0x1.68b7ad440ba03p-19, 0x1.eb027532f1e9dp-21, -0x1.6553f2333fb0bp-29, -0x1.c66fe8aad4da0p-24, 0x1.2882c1472066ep-25, 0x1.1c7d9c488cbe6p-31, -0x1.ec3b221d4fb0bp-29},
    {0x1.20c1303550f0ep-18, -0x1.e9b5e8d00ce77p-16, 0x1.8de3cd290a7c0p-14, -0x1.9aa489e3cad21p-13, 0x1.2c7d5ef053eb0p-12, -0x1.490a4d230eab9p-12, 0x1.145464ea2872bp-12, -0x1.647f721c135ebp-13, 0x1.567479c97cce7p-14, -0x1.b2c3201a66dd9p-16, 0x1.38933c0f0c9fap-19, 0x1.8070948011d1bp-19, -0x1.ff3236f426a50p-20, 0x1.26552b63b3912p-21, -0x1.d56060892daf5p-29, -0x1.1d2c62f6d64e1p-24, 0x1.d640778ed81c9p-26, -0x1.afec4ca81925ep-29, -0x1.dae1d5486d301p-30, 0x1.f0ada171682b7p-31},
    {0x1.e87470e4f4246p-24, -0x1.d9371e2ff7c35p-21, 0x1.bba3ac4cf8472p-19, -0x1.0b6a7b0f1b586p-17, 0x1.d06f586093ea7p-17, -0x1.3436bc9fc46f6p-16, 0x1.4357b5546e9f3p-16, -0x1.110de49c0acd0p-16, 0x1.7566beee1bb2fp-17, -0x1.99f5c54c5ea75p-18, 0x1.5d6903bb02d10p-19, -0x1.a0431133a7b2dp-21, 0x1.833324e429526p-24, 0x1.ec7d23a1cdfffp-25, -0x1.6df3b136b9415p-25, 0x1.e8012ea5d94a8p-27, -0x1.cfcbfb76f6f4dp-30, -0x1.c3f3bfbbb49c7p-31, 0x1.1d510fc6e20b0p-31, -0x1.0ec6bc32c044ep-33},
    {0x1.fcae93fb7323cp-30, -0x1.155a09065d4f7p-26, 0x1.26afa996c3246p-24, -0x1.95ea6fdffb3afp-23, 0x1.96ba7366c000ep-22, -0x1.3b468019bd292p-21, 0x1.8868e1d27f2d6p-21, -0x1.916e92305502ap-21, 0x1.566f01cad15b6p-21, -0x1.eab4e6fa86d63p-22, 0x1.2758b2a0beedcp-22, -0x1.27d982a66f4e9p-23, 0x1.e03eb4cee755cp-25, -0x1.263bc8a1901e0p-26, 0x1.9fdec7298d93dp-29, 0x1.be2c0dfaad6fap-32, -0x1.389654ec1c67bp-31, 0x1.076088161c198p-32, -0x1.d7f5528c3aa07p-35, 0x1.ab749472a9c18p-43},
    {0x1.453141082302ap-36, -0x1.8a61745ec7d1dp-33, 0x1.d453ba308d493p-31, -0x1.6a8aeba4765aep-29, 0x1.9b017abbf1539p-28, -0x1.6b43c95302c89p-27, 0x1.042f2a66410c6p-26, -0x1.35dc831945a9bp-26, 0x1.3834e4e13dedcp-26, -0x1.0d4cf48c6599fp-26, 0x1.90aa132c72227p-27, -0x1.01e4c086668e5p-27, 0x1.1eeb043bb237dp-28, -0x1.11dd029bd7bfbp-29, 0x1.b8a9191ee1fd3p-31, -0x1.1eea380dfa8a3p-32, 0x1.0e23c748a4602p-34, -0x1.8615e29f4daa4p-38, -0x1.ec3d7da8a2ba5p-39, 0x1.43ae532fe00ecp-39},
    {0x1.fd5f08ad2b29ap-44, -0x1.5422ef5d8949dp-40, 0x1.be6dda2ac430ep-38, -0x1.7f8a0f3e23794p-36, 0x1.e4cb4aea710d1p-35, -0x1.e044b3eb1a717p-34, 0x1.83ea4ba25a448p-33, -0x1.065958aed15d7p-32, 0x1.2ec54e940db0fp-32, -0x1.2e385fc3a026fp-32, 0x1.07815c45933cap-32, -0x1.9425acbdd20eap-33, 0x1.11c7574f11f87p-33, -0x1.484483b3371dap-34, 0x1.5bfd9fefc661bp-35, -0x1.449dca92f8003p-36, 0x1.07a9cf3dcd308p-37, -0x1.6cfa2f26110e4p-39, 0x1.9a7395c43d3b4p-41, -0x1.46c3e39f28db0p-43},
    {0x1.e7eea02e4ed88p-52, -0x1.63daf8b4b1e0cp-48, 0x1.ff8ac583bfb31p-46, -0x1.e2d06d6fd401ap-44, 0x1.505d9535a1b81p-42, -0x1.70b70116486d4p-41, 0x1.4aed68293ee4fp-40, -0x1.f3c5929c895efp-40, 0x1.43c123ee60917p-39, -0x1.6d18ea5326ed0p-39, 0x1.6a4e3a492865bp-39, -0x1.3f07e3641ce1cp-39, 0x1.f5afa7fd1b99ap-40, -0x1.61d0f54a3aefap-40, 0x1.c0f4eae434f91p-41, -0x1.0096a81b5bd8fp-41, 0x1.0816e36103676p-42, -0x1.e831789403765p-44, 0x1.92dd6c941fb1bp-45, -0x1.258b149c60df7p-46},
};

/* 2/(2k+1), k = 2..14: pow's log series past 2s + 2s^3/3, long enough
 * for 2^-72 of the result (log's own table stops at 2^-56). */
const double mathref_pow_log_f64_table[MATHREF_POW_LOG_F64_COUNT] = {
    0x1.999999999999ap-2, 0x1.2492492492492p-2, 0x1.c71c71c71c71cp-3, 0x1.745d1745d1746p-3, 0x1.3b13b13b13b14p-3, 0x1.1111111111111p-3, 0x1.e1e1e1e1e1e1ep-4, 0x1.af286bca1af28p-4, 0x1.8618618618618p-4, 0x1.642c8590b2164p-4, 0x1.47ae147ae147bp-4, 0x1.2f684bda12f68p-4, 0x1.1a7b9611a7b96p-4,
};
