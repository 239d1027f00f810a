/* NumPy .npy files (format version 1.0, also read: 2.0), little-endian,
 * C order. The dtype names map to element types:
 *   <f4 f32  <f8 f64  <f2 f16  <i8 s64  <i4 s32  <i2 s16  |i1 s8
 *   <u8 u64  <u4 u32  <u2 u16  |u1 u8   |b1 pred  <c8 c64  <c16 c128
 * bf16 has no NumPy dtype: it is read and written as <u2 holding the bits;
 * likewise the f8/f4 types as |u1 bits and s4/s2 (u4/u2) as |i1 (|u1) values. */
#ifndef AXLE_RUNTIME_NPY_H
#define AXLE_RUNTIME_NPY_H

#include "ir.h"

/* Reads an array; the literal's element type comes from the dtype. */
Literal *npy_read(const char *path, Status *st);
/* Parses .npy bytes already in memory. */
Literal *npy_parse(const unsigned char *bytes, size_t size, const char *name, Status *st);
/* Writes an array literal (not a tuple). */
bool npy_write(const char *path, const Literal *lit, Status *st);
/* Whether lit can be written as .npy (an array of a type with a dtype). */
bool npy_writable(const Literal *lit);
/* The .npy bytes of a writable lit into f (a file, or a memory stream for
 * an .npz member); false when a write failed. */
bool npy_write_stream(FILE *f, const Literal *lit);
/* The dtype string for an element type, e.g. "<f4". */
const char *npy_dtype_name(ElementType t);
/* The type a file written from type t reads back as: t itself, or for the
 * types NumPy lacks the one carrying them: bf16 in u16 (bits), f8 and f4
 * types in u8 (bits), s4/s2 in s8 and u4/u2 in u8 (values, one a byte). */
ElementType npy_carrier_type(ElementType t);

#endif
