/* ELF64 relocatable objects for x86-64; see elf_writer.h.
 *
 * The file is laid out as the ELF header, the section contents, and the
 * section header table at the end. Every field is written explicitly in
 * little-endian order, so the writer needs no <elf.h> and runs on any host.
 * Numbers come from the System V gABI and the x86-64 psABI. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emit_x86/elf_writer.h"

/* ------------------------------------------------------------ ELF numbers */
enum {
  ELF_HEADER_SIZE = 64, SECTION_HEADER_SIZE = 64, SYMBOL_SIZE = 24, RELA_SIZE = 24,
  ET_REL = 1, EM_X86_64 = 62, EV_CURRENT = 1, ELFCLASS64 = 2, ELFDATA2LSB = 1,
  SHT_PROGBITS = 1, SHT_SYMTAB = 2, SHT_STRTAB = 3, SHT_RELA = 4, SHT_NOBITS = 8,
  SHF_WRITE = 0x1, SHF_ALLOC = 0x2, SHF_EXECINSTR = 0x4, SHF_INFO_LINK = 0x40,
  STB_LOCAL = 0, STB_GLOBAL = 1,
  STT_NOTYPE = 0, STT_OBJECT = 1, STT_FUNC = 2, STT_SECTION = 3, STT_FILE = 4,
  SHN_UNDEF = 0, SHN_ABS = 0xfff1,
};

/* ------------------------------------------------------------ byte buffer */
typedef struct Bytes {
  uint8_t *data;
  size_t len, cap;
} Bytes;

static void bytes_reserve(Bytes *b, size_t extra) {
  if (b->len + extra <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra) cap *= 2;
  b->data = mem_realloc(b->data, cap);
  b->cap = cap;
}

/* Both return early for n == 0: an empty buffer's data is NULL, and
 * memcpy or memset on NULL is undefined even for zero bytes. */
static void bytes_append(Bytes *b, const void *src, size_t n) {
  if (n == 0) return;
  bytes_reserve(b, n);
  memcpy(b->data + b->len, src, n);
  b->len += n;
}

static void bytes_fill(Bytes *b, uint8_t value, size_t n) {
  if (n == 0) return;
  bytes_reserve(b, n);
  memset(b->data + b->len, value, n);
  b->len += n;
}

static void bytes_align(Bytes *b, size_t align, uint8_t fill) {
  size_t pad = (align - b->len % align) % align;
  bytes_fill(b, fill, pad);
}

static void put_u8(Bytes *b, uint8_t v) { bytes_append(b, &v, 1); }
static void put_u16(Bytes *b, uint16_t v) { for (int i = 0; i < 2; i++) put_u8(b, (uint8_t)(v >> 8 * i)); }
static void put_u32(Bytes *b, uint32_t v) { for (int i = 0; i < 4; i++) put_u8(b, (uint8_t)(v >> 8 * i)); }
static void put_u64(Bytes *b, uint64_t v) { for (int i = 0; i < 8; i++) put_u8(b, (uint8_t)(v >> 8 * i)); }

/* Appends a NUL-terminated name to a string table; returns its offset. */
static uint32_t string_table_add(Bytes *table, const char *name) {
  if (table->len == 0) put_u8(table, 0);  /* offset 0 is the empty name */
  uint32_t offset = (uint32_t)table->len;
  bytes_append(table, name, strlen(name) + 1);
  return offset;
}

/* ------------------------------------------------------------ the writer */
typedef enum SymbolClass { SYMBOL_DEFINED, SYMBOL_EXTERNAL, SYMBOL_SECTION } SymbolClass;

typedef struct Symbol {
  char *name;            /* malloc'd; "" for section symbols */
  SymbolClass class;
  ElfSectionId section;  /* for defined and section symbols */
  uint64_t offset, size;
  ElfSymbolKind kind;
  ElfBinding binding;
} Symbol;

typedef struct Relocation {
  ElfSectionId section;
  uint64_t offset;
  ElfRelocType type;
  ElfSymbol target;
  int64_t addend;
} Relocation;

struct ElfWriter {
  char *source_name;
  Bytes contents[ELF_SECTION_COUNT];  /* .bss stays empty; its size is below */
  uint64_t bss_size;
  uint64_t align[ELF_SECTION_COUNT];
  Symbol *symbols;
  int symbol_count, symbol_cap;
  Relocation *relocations;
  int relocation_count, relocation_cap;
};

static void *grow(void *array, int *cap, int needed, size_t item_size) {
  if (needed <= *cap) return array;
  int cap2 = *cap ? *cap * 2 : 16;
  void *p = mem_realloc(array, (size_t)cap2 * item_size);
  *cap = cap2;
  return p;
}

static char *copy_string(const char *s) {
  Bytes b = {0};
  bytes_append(&b, s, strlen(s) + 1);
  return (char *)b.data;
}

ElfWriter *elf_writer_new(const char *source_name) {
  ElfWriter *w = mem_calloc(1, sizeof *w);
  w->source_name = source_name ? copy_string(source_name) : NULL;
  for (int s = 0; s < ELF_SECTION_COUNT; s++) w->align[s] = 1;
  return w;
}

void elf_writer_free(ElfWriter *w) {
  if (!w) return;
  for (int s = 0; s < ELF_SECTION_COUNT; s++) mem_free(w->contents[s].data);
  for (int i = 0; i < w->symbol_count; i++) mem_free(w->symbols[i].name);
  mem_free(w->symbols);
  mem_free(w->relocations);
  mem_free(w->source_name);
  mem_free(w);
}

uint64_t elf_section_size(const ElfWriter *w, ElfSectionId section) {
  return section == ELF_SECTION_BSS ? w->bss_size : w->contents[section].len;
}

uint64_t elf_append(ElfWriter *w, ElfSectionId section, const void *bytes, size_t size, size_t align) {
  if (align == 0) align = 1;
  assert((align & (align - 1)) == 0 && "alignment must be a power of two");
  assert((section != ELF_SECTION_BSS || bytes == NULL) && ".bss holds no bytes");
  if (align > w->align[section]) w->align[section] = align;
  if (section == ELF_SECTION_BSS) {
    w->bss_size = (w->bss_size + align - 1) / align * align;
    uint64_t offset = w->bss_size;
    w->bss_size += size;
    return offset;
  }
  Bytes *b = &w->contents[section];
  /* Padding between functions is int3, as assemblers do, so a jump into it traps. */
  bytes_align(b, align, section == ELF_SECTION_TEXT ? 0xcc : 0);
  uint64_t offset = b->len;
  if (bytes) bytes_append(b, bytes, size);
  else bytes_fill(b, 0, size);
  return offset;
}

static Symbol *symbol_add(ElfWriter *w, const char *name) {
  w->symbols = grow(w->symbols, &w->symbol_cap, w->symbol_count + 1, sizeof(Symbol));
  Symbol *s = &w->symbols[w->symbol_count++];
  memset(s, 0, sizeof *s);
  s->name = copy_string(name);
  return s;
}

static ElfSymbol symbol_find(const ElfWriter *w, const char *name) {
  for (int i = 0; i < w->symbol_count; i++) {
    if (w->symbols[i].class != SYMBOL_SECTION && strcmp(w->symbols[i].name, name) == 0) return i;
  }
  return -1;
}

ElfSymbol elf_define_symbol(ElfWriter *w, const char *name, ElfSectionId section, uint64_t offset,
                            uint64_t size, ElfSymbolKind kind, ElfBinding binding, Status *st) {
  if (!name || !name[0]) {
    status_error(st, STATUS_INPUT_ERROR, "an ELF symbol needs a name");
    return -1;
  }
  ElfSymbol handle = symbol_find(w, name);
  if (handle >= 0 && w->symbols[handle].class == SYMBOL_DEFINED) {
    status_error(st, STATUS_INPUT_ERROR, "symbol '%s' is defined twice", name);
    return -1;
  }
  if (handle < 0) {
    symbol_add(w, name);
    handle = w->symbol_count - 1;
  }
  Symbol *s = &w->symbols[handle];
  s->class = SYMBOL_DEFINED;
  s->section = section;
  s->offset = offset;
  s->size = size;
  s->kind = kind;
  s->binding = binding;
  return handle;
}

ElfSymbol elf_declare_external(ElfWriter *w, const char *name) {
  assert(name && name[0] && "an external symbol needs a name");
  ElfSymbol handle = symbol_find(w, name);
  if (handle >= 0) return handle;
  Symbol *s = symbol_add(w, name);
  s->class = SYMBOL_EXTERNAL;
  s->binding = ELF_BINDING_GLOBAL;
  return w->symbol_count - 1;
}

ElfSymbol elf_section_symbol(ElfWriter *w, ElfSectionId section) {
  for (int i = 0; i < w->symbol_count; i++) {
    if (w->symbols[i].class == SYMBOL_SECTION && w->symbols[i].section == section) return i;
  }
  Symbol *s = symbol_add(w, "");
  s->class = SYMBOL_SECTION;
  s->section = section;
  s->binding = ELF_BINDING_LOCAL;
  return w->symbol_count - 1;
}

bool elf_add_relocation(ElfWriter *w, ElfSectionId section, uint64_t offset, ElfRelocType type,
                        ElfSymbol target, int64_t addend, Status *st) {
  if (section != ELF_SECTION_TEXT && section != ELF_SECTION_DATA)
    return status_error(st, STATUS_INPUT_ERROR, "relocations are supported in .text and .data only");
  if (type != ELF_RELOC_64 && type != ELF_RELOC_PC32 && type != ELF_RELOC_PLT32)
    return status_error(st, STATUS_INPUT_ERROR, "unknown x86-64 relocation type %d", (int)type);
  if (type == ELF_RELOC_64 && section == ELF_SECTION_TEXT)
    return status_error(st, STATUS_INPUT_ERROR,
                        "R_X86_64_64 in .text would need text relocations; put the address in .data");
  if (target < 0 || target >= w->symbol_count)
    return status_error(st, STATUS_INPUT_ERROR, "relocation names an unknown symbol handle %d", target);
  w->relocations = grow(w->relocations, &w->relocation_cap, w->relocation_count + 1, sizeof(Relocation));
  w->relocations[w->relocation_count++] = (Relocation){section, offset, type, target, addend};
  return true;
}

/* ------------------------------------------------------------ layout */

/* The sections of the output file, in order. Index 0 is the null section. */
typedef struct OutSection {
  const char *name;
  uint32_t type;
  uint64_t flags, align, entsize;
  uint32_t link, info;
  const Bytes *contents;   /* NULL for .bss and the empty note */
  uint64_t size, offset;
  uint32_t name_offset;
} OutSection;

enum { MAX_OUT_SECTIONS = 16 };

typedef struct Layout {
  OutSection sections[MAX_OUT_SECTIONS];
  int count;
  int index_of[ELF_SECTION_COUNT];  /* 0 when the section is left out */
  int symtab_index, strtab_index;
  Bytes symtab, strtab, rela[ELF_SECTION_COUNT], shstrtab;
  int *final_index;                 /* symbol handle -> .symtab index */
} Layout;

static const struct {
  const char *name;
  uint32_t type;
  uint64_t flags;
} program_sections[ELF_SECTION_COUNT] = {
    [ELF_SECTION_TEXT] = {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR},
    [ELF_SECTION_RODATA] = {".rodata", SHT_PROGBITS, SHF_ALLOC},
    [ELF_SECTION_DATA] = {".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE},
    [ELF_SECTION_BSS] = {".bss", SHT_NOBITS, SHF_ALLOC | SHF_WRITE},
};

static const char *const rela_names[ELF_SECTION_COUNT] = {
    [ELF_SECTION_TEXT] = ".rela.text",
    [ELF_SECTION_DATA] = ".rela.data",
};

static OutSection *layout_add(Layout *l, const char *name, uint32_t type, uint64_t flags, uint64_t align) {
  OutSection *s = &l->sections[++l->count];
  s->name = name;
  s->type = type;
  s->flags = flags;
  s->align = align;
  return s;
}

/* A program section is written when it holds bytes or a symbol points into it. */
static bool section_is_used(const ElfWriter *w, ElfSectionId id) {
  if (elf_section_size(w, id) > 0) return true;
  for (int i = 0; i < w->symbol_count; i++) {
    const Symbol *s = &w->symbols[i];
    if (s->class != SYMBOL_EXTERNAL && s->section == id) return true;
  }
  return false;
}

static bool section_has_relocations(const ElfWriter *w, ElfSectionId id) {
  for (int i = 0; i < w->relocation_count; i++) {
    if (w->relocations[i].section == id) return true;
  }
  return false;
}

/* Chooses which sections exist and their indices; contents come later. */
static void layout_sections(const ElfWriter *w, Layout *l) {
  for (int id = 0; id < ELF_SECTION_COUNT; id++) {
    if (!section_is_used(w, (ElfSectionId)id)) continue;
    OutSection *s = layout_add(l, program_sections[id].name, program_sections[id].type,
                               program_sections[id].flags, w->align[id]);
    s->contents = id == ELF_SECTION_BSS ? NULL : &w->contents[id];
    s->size = elf_section_size(w, (ElfSectionId)id);
    l->index_of[id] = l->count;
  }
  /* The relocation sections name .symtab, which comes after them: its index
   * is known once we count what lies between. */
  int rela_count = 0;
  for (int id = 0; id < ELF_SECTION_COUNT; id++) rela_count += section_has_relocations(w, (ElfSectionId)id);
  l->symtab_index = l->count + rela_count + 2;  /* after the relas and the note */
  l->strtab_index = l->symtab_index + 1;
  for (int id = 0; id < ELF_SECTION_COUNT; id++) {
    if (!section_has_relocations(w, (ElfSectionId)id)) continue;
    OutSection *s = layout_add(l, rela_names[id], SHT_RELA, SHF_INFO_LINK, 8);
    s->entsize = RELA_SIZE;
    s->link = (uint32_t)l->symtab_index;
    s->info = (uint32_t)l->index_of[id];
    s->contents = &l->rela[id];
  }
  layout_add(l, ".note.GNU-stack", SHT_PROGBITS, 0, 1);
  OutSection *symtab = layout_add(l, ".symtab", SHT_SYMTAB, 0, 8);
  symtab->entsize = SYMBOL_SIZE;
  symtab->link = (uint32_t)l->strtab_index;
  symtab->contents = &l->symtab;
  layout_add(l, ".strtab", SHT_STRTAB, 0, 1)->contents = &l->strtab;
  layout_add(l, ".shstrtab", SHT_STRTAB, 0, 1)->contents = &l->shstrtab;
}

static void put_symbol(Bytes *b, uint32_t name, int binding, int type, uint16_t shndx, uint64_t value,
                       uint64_t size) {
  put_u32(b, name);
  put_u8(b, (uint8_t)(binding << 4 | type));
  put_u8(b, 0);  /* st_other: default visibility */
  put_u16(b, shndx);
  put_u64(b, value);
  put_u64(b, size);
}

static void put_one_symbol(Layout *l, const Symbol *s) {
  if (s->class == SYMBOL_SECTION) {
    put_symbol(&l->symtab, 0, STB_LOCAL, STT_SECTION, (uint16_t)l->index_of[s->section], 0, 0);
  } else if (s->class == SYMBOL_EXTERNAL) {
    put_symbol(&l->symtab, string_table_add(&l->strtab, s->name), STB_GLOBAL, STT_NOTYPE, SHN_UNDEF, 0, 0);
  } else {
    put_symbol(&l->symtab, string_table_add(&l->strtab, s->name),
               s->binding == ELF_BINDING_GLOBAL ? STB_GLOBAL : STB_LOCAL,
               s->kind == ELF_SYMBOL_FUNCTION ? STT_FUNC : STT_OBJECT, (uint16_t)l->index_of[s->section],
               s->offset, s->size);
  }
}

/* ELF wants every local symbol before the first global one; .symtab's
 * sh_info holds the index of that first global. */
static void write_symbols(const ElfWriter *w, Layout *l) {
  put_symbol(&l->symtab, 0, STB_LOCAL, STT_NOTYPE, SHN_UNDEF, 0, 0);
  int next = 1;
  if (w->source_name) {
    put_symbol(&l->symtab, string_table_add(&l->strtab, w->source_name), STB_LOCAL, STT_FILE, SHN_ABS, 0, 0);
    next++;
  }
  for (int pass = 0; pass < 2; pass++) {
    ElfBinding wanted = pass == 0 ? ELF_BINDING_LOCAL : ELF_BINDING_GLOBAL;
    if (pass == 1) l->sections[l->symtab_index].info = (uint32_t)next;
    for (int i = 0; i < w->symbol_count; i++) {
      if (w->symbols[i].binding != wanted) continue;
      put_one_symbol(l, &w->symbols[i]);
      l->final_index[i] = next++;
    }
  }
  if (l->strtab.len == 0) put_u8(&l->strtab, 0);
  l->sections[l->symtab_index].size = l->symtab.len;
  l->sections[l->strtab_index].size = l->strtab.len;
}

static void write_relocations(const ElfWriter *w, Layout *l) {
  for (int i = 0; i < w->relocation_count; i++) {
    const Relocation *r = &w->relocations[i];
    Bytes *b = &l->rela[r->section];
    put_u64(b, r->offset);
    put_u64(b, (uint64_t)l->final_index[r->target] << 32 | (uint32_t)r->type);
    put_u64(b, (uint64_t)r->addend);
  }
  for (int i = 1; i <= l->count; i++) {
    if (l->sections[i].type == SHT_RELA) l->sections[i].size = l->sections[i].contents->len;
  }
}

/* Symbols and relocations may be added before the code they point into, so
 * they are checked against the final section sizes here. */
static bool check_bounds(const ElfWriter *w, Status *st) {
  for (int i = 0; i < w->symbol_count; i++) {
    const Symbol *s = &w->symbols[i];
    uint64_t limit = elf_section_size(w, s->section);
    if (s->class == SYMBOL_DEFINED && (s->offset > limit || s->size > limit - s->offset))
      return status_error(st, STATUS_INPUT_ERROR, "symbol '%s' (offset %llu, size %llu) lies outside %s (%llu bytes)",
                          s->name, (unsigned long long)s->offset, (unsigned long long)s->size,
                          program_sections[s->section].name, (unsigned long long)limit);
  }
  for (int i = 0; i < w->relocation_count; i++) {
    const Relocation *r = &w->relocations[i];
    uint64_t width = r->type == ELF_RELOC_64 ? 8 : 4;
    uint64_t limit = elf_section_size(w, r->section);
    if (r->offset > limit || width > limit - r->offset)
      return status_error(st, STATUS_INPUT_ERROR, "relocation at offset %llu lies outside %s (%llu bytes)",
                          (unsigned long long)r->offset, program_sections[r->section].name,
                          (unsigned long long)limit);
  }
  return true;
}

/* ------------------------------------------------------------ the file */

static void put_elf_header(Bytes *out, uint64_t section_headers_offset, int section_count, int shstrtab_index) {
  static const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', ELFCLASS64, ELFDATA2LSB, EV_CURRENT};
  bytes_append(out, ident, sizeof ident);   /* OS ABI 0 (System V), padding */
  put_u16(out, ET_REL);
  put_u16(out, EM_X86_64);
  put_u32(out, EV_CURRENT);
  put_u64(out, 0);                          /* e_entry: none in a .o */
  put_u64(out, 0);                          /* e_phoff: no program headers */
  put_u64(out, section_headers_offset);
  put_u32(out, 0);                          /* e_flags */
  put_u16(out, ELF_HEADER_SIZE);
  put_u16(out, 0);                          /* e_phentsize */
  put_u16(out, 0);                          /* e_phnum */
  put_u16(out, SECTION_HEADER_SIZE);
  put_u16(out, (uint16_t)section_count);
  put_u16(out, (uint16_t)shstrtab_index);
}

static void put_section_header(Bytes *out, const OutSection *s) {
  put_u32(out, s->name_offset);
  put_u32(out, s->type);
  put_u64(out, s->flags);
  put_u64(out, 0);  /* sh_addr: a .o is not loaded */
  put_u64(out, s->offset);
  put_u64(out, s->size);
  put_u32(out, s->link);
  put_u32(out, s->info);
  put_u64(out, s->align);
  put_u64(out, s->entsize);
}

static void layout_free(Layout *l) {
  mem_free(l->symtab.data);
  mem_free(l->strtab.data);
  mem_free(l->shstrtab.data);
  for (int id = 0; id < ELF_SECTION_COUNT; id++) mem_free(l->rela[id].data);
  mem_free(l->final_index);
}

bool elf_write_bytes(const ElfWriter *w, uint8_t **bytes, size_t *size, Status *st) {
  *bytes = NULL;
  *size = 0;
  if (!check_bounds(w, st)) return false;
  Layout l = {0};
  l.final_index = mem_calloc((size_t)w->symbol_count + 1, sizeof(int));
  if (!l.final_index) return status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  layout_sections(w, &l);
  write_symbols(w, &l);
  write_relocations(w, &l);
  for (int i = 1; i <= l.count; i++) l.sections[i].name_offset = string_table_add(&l.shstrtab, l.sections[i].name);
  l.sections[l.count].size = l.shstrtab.len;  /* .shstrtab is last */

  Bytes out = {0};
  bytes_fill(&out, 0, ELF_HEADER_SIZE);  /* filled in at the end */
  for (int i = 1; i <= l.count; i++) {
    OutSection *s = &l.sections[i];
    bytes_align(&out, s->align, 0);
    s->offset = out.len;
    if (s->contents) bytes_append(&out, s->contents->data, s->contents->len);
  }
  bytes_align(&out, 8, 0);
  uint64_t headers_offset = out.len;
  OutSection null_section = {0};
  put_section_header(&out, &null_section);
  for (int i = 1; i <= l.count; i++) put_section_header(&out, &l.sections[i]);

  Bytes header = {0};
  put_elf_header(&header, headers_offset, l.count + 1, l.count);
  memcpy(out.data, header.data, ELF_HEADER_SIZE);
  mem_free(header.data);
  layout_free(&l);
  *bytes = out.data;
  *size = out.len;
  return true;
}

bool elf_write_file(const ElfWriter *w, const char *path, Status *st) {
  uint8_t *bytes;
  size_t size;
  if (!elf_write_bytes(w, &bytes, &size, st)) return false;
  FILE *f = fopen(path, "wb");
  if (!f) {
    mem_free(bytes);
    return status_error(st, STATUS_RUNTIME_ERROR, "cannot create %s: %s", path, strerror(errno));
  }
  bool ok = fwrite(bytes, 1, size, f) == size;
  ok = (fclose(f) == 0) && ok;
  mem_free(bytes);
  if (!ok) return status_error(st, STATUS_RUNTIME_ERROR, "cannot write %s: %s", path, strerror(errno));
  return true;
}
