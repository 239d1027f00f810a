/* NumPy .npz archives: a ZIP file whose members are .npy files, as
 * np.savez writes them (axle-run --in FILE.npz, --out FILE.npz,
 * --expected FILE.npz).
 *
 * Only what np.savez produces is read: members stored without compression
 * (method 0). np.savez_compressed's deflated members are refused with a
 * message, since inflating is a library of its own. The member list comes
 * from the central directory at the end of the file, which holds the true
 * sizes even where a local header says 0xffffffff (Python's zipfile writes
 * a ZIP64 local header for every .npz member). Written archives use
 * stored members and plain (not ZIP64) headers, so members past 4 GiB are
 * refused. The ZIP layout is PKWARE's APPNOTE.TXT, sections 4.3.7
 * (local file header), 4.3.12 (central directory header) and 4.3.16 (end
 * of central directory record). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/npy.h"
#include "runtime/npz.h"

enum {
  ZIP_LOCAL_SIGNATURE = 0x04034b50,
  ZIP_CENTRAL_SIGNATURE = 0x02014b50,
  ZIP_END_SIGNATURE = 0x06054b50,
  ZIP_LOCAL_SIZE = 30,
  ZIP_CENTRAL_SIZE = 46,
  ZIP_END_SIZE = 22,
};

static uint32_t get16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const unsigned char *p) { return get16(p) | get16(p + 2) << 16; }

static void put16(FILE *f, uint32_t v) {
  fputc((int)(v & 0xff), f);
  fputc((int)(v >> 8 & 0xff), f);
}
static void put32(FILE *f, uint32_t v) {
  put16(f, v & 0xffff);
  put16(f, v >> 16);
}

/* CRC-32 as ZIP uses it (the reflected polynomial 0xEDB88320). */
static uint32_t crc32_of(const unsigned char *p, size_t n) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    for (int k = 0; k < 8; k++) crc = crc >> 1 ^ (0xedb88320u & (0u - (crc & 1)));
  }
  return ~crc;
}

static unsigned char *file_bytes(const char *path, size_t *size, Status *st) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    status_error(st, STATUS_INPUT_ERROR, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  /* malloc and its NULL here, not mem_malloc: an unwind would leave f open. */
  unsigned char *bytes = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n + 1) : NULL;
  if (!bytes || fread(bytes, 1, (size_t)n, f) != (size_t)n) {
    mem_free(bytes);
    fclose(f);
    status_error(st, n < 0 ? STATUS_INPUT_ERROR : STATUS_OUT_OF_MEMORY, "cannot read %s", path);
    return NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return mem_adopt(bytes);
}

/* The end of central directory record: the last signature in the file
 * (a comment of up to 65535 bytes may follow it). */
static const unsigned char *find_end_record(const unsigned char *bytes, size_t size) {
  if (size < ZIP_END_SIZE) return NULL;
  size_t lowest = size > ZIP_END_SIZE + 65535 ? size - ZIP_END_SIZE - 65535 : 0;
  for (size_t at = size - ZIP_END_SIZE + 1; at-- > lowest;)
    if (get32(bytes + at) == ZIP_END_SIGNATURE) return bytes + at;
  return NULL;
}

static void npz_free_members(NpzMember *members, int count) {
  for (int i = 0; i < count; i++) literal_free(members[i].array);
  mem_free(members);
}

/* One central directory entry at *at: its member parsed into m. */
static bool read_member(const unsigned char *bytes, size_t size, size_t *at, const char *path, NpzMember *m,
                        Status *st) {
  const unsigned char *c = bytes + *at;
  if (*at + ZIP_CENTRAL_SIZE > size || get32(c) != ZIP_CENTRAL_SIGNATURE)
    return status_error(st, STATUS_INPUT_ERROR, "%s: a damaged ZIP central directory", path);
  uint32_t method = get16(c + 10), packed = get32(c + 20), name_length = get16(c + 28);
  size_t entry_size = ZIP_CENTRAL_SIZE + name_length + get16(c + 30) + get16(c + 32);
  uint32_t local = get32(c + 42);
  if (*at + entry_size > size) return status_error(st, STATUS_INPUT_ERROR, "%s: a damaged ZIP central directory", path);
  size_t copy = name_length < sizeof m->name - 1 ? name_length : sizeof m->name - 1;
  memcpy(m->name, c + ZIP_CENTRAL_SIZE, copy);
  m->name[copy] = 0;
  *at += entry_size;
  if (method != 0)
    return status_error(st, STATUS_INPUT_ERROR,
                        "%s: member %s is compressed (np.savez_compressed); axle reads np.savez archives", path,
                        m->name);
  if (packed == 0xffffffffu || (size_t)local + ZIP_LOCAL_SIZE > size || get32(bytes + local) != ZIP_LOCAL_SIGNATURE)
    return status_error(st, STATUS_INPUT_ERROR, "%s: member %s: a damaged or ZIP64 entry", path, m->name);
  size_t data = (size_t)local + ZIP_LOCAL_SIZE + get16(bytes + local + 26) + get16(bytes + local + 28);
  if (data + packed > size) return status_error(st, STATUS_INPUT_ERROR, "%s: member %s is cut short", path, m->name);
  char label[600];
  snprintf(label, sizeof label, "%s:%s", path, m->name);
  m->array = npy_parse(bytes + data, packed, label, st);
  return m->array != NULL;
}

/* np.savez(f, a, b) names its members arr_0.npy, arr_1.npy, ...: those
 * go in number order (a ZIP's order is the writer's); named members keep
 * the archive's order. */
static int member_number(const NpzMember *m) {
  int n = -1, length = 0;
  return sscanf(m->name, "arr_%d.npy%n", &n, &length) == 1 && m->name[length] == 0 ? n : -1;
}

static int compare_members(const void *a, const void *b) {
  int x = member_number(a), y = member_number(b);
  return (x > y) - (x < y);
}

bool npz_read(const char *path, NpzMember **members, int *count, Status *st) {
  *members = NULL;
  *count = 0;
  size_t size;
  unsigned char *bytes = file_bytes(path, &size, st);
  if (!bytes) return false;
  const unsigned char *end = find_end_record(bytes, size);
  bool ok = end != NULL || status_error(st, STATUS_INPUT_ERROR, "%s is not a ZIP (.npz) archive", path);
  int n = ok ? (int)get16(end + 10) : 0;
  size_t at = ok ? get32(end + 16) : 0;
  NpzMember *list = mem_calloc((size_t)n + 1, sizeof *list);
  if (!list) ok = status_error(st, STATUS_OUT_OF_MEMORY, "out of memory reading %s", path);
  int numbered = 0;
  for (int i = 0; ok && i < n; i++) {
    ok = read_member(bytes, size, &at, path, &list[i], st);
    numbered += ok && member_number(&list[i]) >= 0;
  }
  mem_free(bytes);
  if (!ok) {
    npz_free_members(list, n);
    return false;
  }
  if (numbered == n) qsort(list, (size_t)n, sizeof *list, compare_members);
  *members = list;
  *count = n;
  return true;
}

void npz_members_free(NpzMember *members, int count) { npz_free_members(members, count); }

typedef struct WrittenMember {
  uint32_t crc, bytes, offset;
} WrittenMember;

static void write_central_entry(FILE *f, const char *name, const WrittenMember *w) {
  put32(f, ZIP_CENTRAL_SIGNATURE);
  put16(f, 20);          /* made by: version 2.0 */
  put16(f, 20);          /* needed to extract */
  put16(f, 0);           /* flags */
  put16(f, 0);           /* method: stored */
  put16(f, 0);           /* time */
  put16(f, 0x21);        /* date: 1980-01-01 */
  put32(f, w->crc);
  put32(f, w->bytes);    /* compressed size */
  put32(f, w->bytes);    /* uncompressed size */
  put16(f, (uint32_t)strlen(name));
  put16(f, 0);           /* extra */
  put16(f, 0);           /* comment */
  put16(f, 0);           /* disk */
  put16(f, 0);           /* internal attributes */
  put32(f, 0);           /* external attributes */
  put32(f, w->offset);
  fputs(name, f);
}

bool npz_write(const char *path, const Literal *const *arrays, int count, Status *st) {
  for (int i = 0; i < count; i++)
    if (!npy_writable(arrays[i]))
      return status_error(st, STATUS_INPUT_ERROR, "cannot write a %s to %s", type_name(arrays[i]->shape.type), path);
  FILE *f = fopen(path, "wb");
  if (!f) return status_error(st, STATUS_INPUT_ERROR, "cannot create %s: %s", path, strerror(errno));
  WrittenMember *written = mem_calloc((size_t)count + 1, sizeof *written);
  bool ok = written != NULL;
  char name[32];
  for (int i = 0; ok && i < count; i++) {
    char *npy = NULL;
    size_t bytes = 0;
    FILE *memory = open_memstream(&npy, &bytes);
    ok = memory && npy_write_stream(memory, arrays[i]);
    if (memory && fclose(memory) != 0) ok = false;
    long offset = ftell(f);
    if (ok && (bytes >= 0xffffffffu || offset < 0 || offset >= 0xffffffffL)) {
      mem_free(npy);
      fclose(f);
      mem_free(written);
      return status_error(st, STATUS_INPUT_ERROR, "%s: an .npz past 4 GiB needs ZIP64, which axle does not write", path);
    }
    if (ok) {
      snprintf(name, sizeof name, "out%d.npy", i);
      written[i] = (WrittenMember){crc32_of((unsigned char *)npy, bytes), (uint32_t)bytes, (uint32_t)offset};
      put32(f, ZIP_LOCAL_SIGNATURE);
      put16(f, 20);
      put16(f, 0);
      put16(f, 0);
      put16(f, 0);
      put16(f, 0x21);
      put32(f, written[i].crc);
      put32(f, written[i].bytes);
      put32(f, written[i].bytes);
      put16(f, (uint32_t)strlen(name));
      put16(f, 0);
      fputs(name, f);
      ok = fwrite(npy, 1, bytes, f) == bytes;
    }
    mem_free(npy);
  }
  long directory = ok ? ftell(f) : -1;
  for (int i = 0; ok && i < count; i++) {
    snprintf(name, sizeof name, "out%d.npy", i);
    write_central_entry(f, name, &written[i]);
  }
  long end = ok ? ftell(f) : -1;
  if (ok && directory >= 0 && end >= directory) {
    put32(f, ZIP_END_SIGNATURE);
    put16(f, 0);
    put16(f, 0);
    put16(f, (uint32_t)count);
    put16(f, (uint32_t)count);
    put32(f, (uint32_t)(end - directory));
    put32(f, (uint32_t)directory);
    put16(f, 0);
  } else {
    ok = false;
  }
  if (fclose(f) != 0) ok = false;
  mem_free(written);
  if (!ok) return status_error(st, STATUS_INPUT_ERROR, "error writing %s", path);
  return true;
}
