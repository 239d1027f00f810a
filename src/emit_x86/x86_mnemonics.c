/* The mnemonics' Intel spellings ("movzx"), one per row of the
 * X86_MNEMONICS table (x86_encode.h). A file of its own, below both the
 * emitter (its error messages) and the listing (its text), so that neither
 * reaches into the other for a name. */
#include "x86_encode_internal.h"

static const char *const mnemonic_names[] = {
#define X86_MNEMONIC_NAME(id, name) name,
    X86_MNEMONICS(X86_MNEMONIC_NAME)
#undef X86_MNEMONIC_NAME
};
_Static_assert(sizeof mnemonic_names / sizeof mnemonic_names[0] == X86_MNEMONIC_COUNT,
               "one name per mnemonic");

const char *x86_mnemonic_name(X86Mnemonic m) {
  return (unsigned)m < X86_MNEMONIC_COUNT ? mnemonic_names[m] : "?";
}
