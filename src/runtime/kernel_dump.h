/* What a backend's --dump writes beside the optimizer's dumps (DIR/kernels/:
 * the CPU's listings, the GPU's PTX; docs/debugging.md): the pieces every
 * backend's dump is made of, so that the files read alike. */
#ifndef AXLE_RUNTIME_KERNEL_DUMP_H
#define AXLE_RUNTIME_KERNEL_DUMP_H

#include "ir.h"

/* The lines that head every file: the instruction as HLO text, its
 * op_name, its JAX source line and its line in the module; prefix is the
 * comment marker of the file's language ("//", "#"). */
void kernel_dump_origin(StrBuf *sb, const Instruction *inst, const Module *m, const char *prefix);
/* A file name from an instruction name, ".N" added for a repeat > 0: HLO
 * names are letters, digits, '.', '_' and '-'; anything else becomes '_'. */
void kernel_dump_stem(char *out, size_t size, const Instruction *inst, int repeat);
/* DIR/kernels, made (with DIR) if missing, into out. */
bool kernel_dump_folder(const char *dir, char *out, size_t size, Status *st);
bool kernel_dump_write(const char *path, const StrBuf *sb, Status *st);

#endif
