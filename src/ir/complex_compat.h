/* <complex.h> with CMPLX and CMPLXF for every compiler. glibc defines them
 * only when __GNUC__ says GCC 4.7 or later; clang says 4.2 but has the same
 * __builtin_complex, so without this clang fails on every CMPLX (and on
 * static tables of complex constants, which need a constant expression). */
#ifndef AXLE_COMPLEX_COMPAT_H
#define AXLE_COMPLEX_COMPAT_H

#include <complex.h>

#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif
#ifndef CMPLXF
#define CMPLXF(x, y) __builtin_complex((float)(x), (float)(y))
#endif

#endif
