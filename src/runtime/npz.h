/* NumPy .npz archives (np.savez): several .npy arrays in one ZIP file.
 * npz.c says which ZIP forms are read and written. */
#ifndef AXLE_RUNTIME_NPZ_H
#define AXLE_RUNTIME_NPZ_H

#include "ir.h"

typedef struct NpzMember {
  char name[256];      /* the member's file name, e.g. "arr_0.npy" */
  Literal *array;
} NpzMember;

/* Every member of the archive, parsed: np.savez's positional arr_N in
 * number order, else the archive's order. Free with npz_members_free. */
bool npz_read(const char *path, NpzMember **members, int *count, Status *st);
void npz_members_free(NpzMember *members, int count);
/* Writes arrays[0..count) as out0.npy, out1.npy, ... (what --out DIR
 * names its files), stored uncompressed. */
bool npz_write(const char *path, const Literal *const *arrays, int count, Status *st);

#endif
