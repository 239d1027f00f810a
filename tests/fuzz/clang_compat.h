/* Forced into every file of the fuzz builds (clang -include): glibc's
 * <complex.h> defines CMPLX and CMPLXF only for compilers it knows to have
 * __builtin_complex, which leaves clang 14 without them (an implicit
 * function, then "initializer element is not a compile-time constant").
 * clang has the builtin; the macros are defined here as C11 gives them,
 * without including <complex.h> (whose `I` and `complex` would reach
 * files that never asked for them). */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif
#ifndef CMPLXF
#define CMPLXF(x, y) __builtin_complex((float)(x), (float)(y))
#endif
