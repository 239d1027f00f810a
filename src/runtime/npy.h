/* NumPy .npy files (format version 1.0, also read: 2.0), little-endian,
 * C order. The dtype names map to element types:
 *   <f4 f32  <f8 f64  <f2 f16  <i8 s64  <i4 s32  <i2 s16  |i1 s8
 *   <u8 u64  <u4 u32  <u2 u16  |u1 u8   |b1 pred  <c8 c64  <c16 c128
 * bf16 has no NumPy dtype: it is read and written as <u2 holding the bits. */
#ifndef AXLE_RUNTIME_NPY_H
#define AXLE_RUNTIME_NPY_H

#include "ir.h"

/* Reads an array; the literal's element type comes from the dtype. */
Literal *npy_read(const char *path, Status *st);
/* Parses .npy bytes already in memory. */
Literal *npy_parse(const unsigned char *bytes, size_t size, const char *name, Status *st);
/* Writes an array literal (not a tuple). */
bool npy_write(const char *path, const Literal *lit, Status *st);
/* The dtype string for an element type, e.g. "<f4". */
const char *npy_dtype_name(ElementType t);

#endif
