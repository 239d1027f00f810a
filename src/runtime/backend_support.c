/* What a backend calls back into the runtime for, in a file below both
 * the backend table (backend.c, which names every backend) and the
 * executables (executable.c, which calls the backends): the one message
 * every native backend refuses an instruction with. The backends' files
 * depend on this one and on nothing else of src/runtime's, so the
 * registry sits above them. */
#include "runtime/backend.h"

bool backend_refuse(Status *st, const Module *m, const Instruction *inst, const char *backend_name,
                    const char *why, const char *after) {
  StrBuf sb = {0};
  instruction_describe(&sb, inst);
  SourceLoc loc = instruction_source_loc(inst);
  status_error_at(st, STATUS_UNSUPPORTED, m->filename, loc, "the %s backend cannot compile %s (%s) yet%s%s%s",
                  backend_name, sb.data ? sb.data : inst->name, opcode_name(inst->opcode), why ? ": " : "",
                  why ? why : "", after);
  strbuf_free(&sb);
  return false;
}
