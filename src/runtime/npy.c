/* NumPy .npy files: how axle-run and the test corpus move arrays in and out.
 *
 * A file is the magic "\x93NUMPY", a major and minor version byte, the
 * header length (2 bytes little-endian in v1.0, 4 bytes in v2.0), then the
 * header: a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a final '\n' so the data starts 64-byte aligned.
 * The raw data follows. Only little-endian C-order arrays of the dtypes in
 * npy.h are accepted; everything else is refused with a message, since the
 * bytes come from users. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

static const char npy_magic[] = "\x93NUMPY";
enum { NPY_MAGIC_SIZE = 6, NPY_MAX_HEADER = 1 << 20 };

/* dtype string ↔ element type. bf16 has no NumPy dtype and travels as <u2,
 * so reading "<u2" always gives u16; the caller reinterprets when it knows. */
static const struct {
  const char *descr;
  ElementType type;
} npy_dtypes[] = {
    {"<f4", TYPE_F32}, {"<f8", TYPE_F64}, {"<f2", TYPE_F16}, {"<i8", TYPE_S64},
    {"<i4", TYPE_S32}, {"<i2", TYPE_S16}, {"|i1", TYPE_S8},  {"<u8", TYPE_U64},
    {"<u4", TYPE_U32}, {"<u2", TYPE_U16}, {"|u1", TYPE_U8},  {"|b1", TYPE_PRED},
    {"<c8", TYPE_C64}, {"<c16", TYPE_C128},  /* real, imaginary interleaved, as axle stores them */
};
enum { NPY_DTYPE_COUNT = sizeof npy_dtypes / sizeof npy_dtypes[0] };

/* NumPy has no bf16, f8, f4 or 4- and 2-bit integers; each travels in a
 * type it has, one element per byte for the narrow ones (a layout's E(n)
 * packing is a buffer's business, never a file's). */
ElementType npy_carrier_type(ElementType t) {
  if (t == TYPE_BF16) return TYPE_U16;
  if (type_is_minifloat(t)) return TYPE_U8;                    /* the bits */
  if (type_is_integer(t) && type_bit_width(t) < 8)             /* the values */
    return type_kind(t) == TYPE_KIND_SINT ? TYPE_S8 : TYPE_U8;
  return t;
}

const char *npy_dtype_name(ElementType t) {
  t = npy_carrier_type(t);
  for (int i = 0; i < NPY_DTYPE_COUNT; i++)
    if (npy_dtypes[i].type == t) return npy_dtypes[i].descr;
  return NULL;
}

/* NumPy writes one-byte types with '|', but '<' and '=' mean the same for
 * them; '=' is native order, which is little-endian on every host we run. */
static bool npy_type_from_descr(const char *descr, size_t n, ElementType *out) {
  if (n < 3) return false;
  char order = descr[0];
  if (order != '<' && order != '|' && order != '=') return false;
  for (int i = 0; i < NPY_DTYPE_COUNT; i++) {
    const char *d = npy_dtypes[i].descr;
    if (strlen(d) != n || memcmp(d + 1, descr + 1, n - 1) != 0) continue;
    bool one_byte = d[0] == '|';
    if (order == '|' && !one_byte) return false;  /* '|' on a multi-byte type */
    *out = npy_dtypes[i].type;
    return true;
  }
  return false;
}

/* ---- header dict parsing ---- */

typedef struct HeaderCursor {
  const char *p, *end;
} HeaderCursor;

static void skip_space(HeaderCursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static bool accept_char(HeaderCursor *c, char ch) {
  skip_space(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return true;
  }
  return false;
}

/* A quoted Python string ('..' or ".."); returns the text between quotes. */
static bool read_quoted(HeaderCursor *c, const char **text, size_t *n) {
  skip_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
  char quote = *c->p++;
  const char *start = c->p;
  while (c->p < c->end && *c->p != quote) c->p++;
  if (c->p >= c->end) return false;
  *text = start;
  *n = (size_t)(c->p - start);
  c->p++;
  return true;
}

static bool read_word(HeaderCursor *c, const char *word) {
  skip_space(c);
  size_t n = strlen(word);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return false;
  c->p += n;
  return true;
}

typedef struct NpyHeader {
  bool has_descr, has_order, has_shape;
  ElementType type;
  int rank;
  int64_t dims[AXLE_MAX_RANK];
} NpyHeader;

/* shape = "(" [int ("," int)* [","]] ")" */
static bool parse_shape_tuple(HeaderCursor *c, NpyHeader *h, const char *name, Status *st) {
  if (!accept_char(c, '('))
    return status_error(st, STATUS_INPUT_ERROR, "%s: npy header: 'shape' is not a tuple", name);
  h->rank = 0;
  while (!accept_char(c, ')')) {
    skip_space(c);
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
      return status_error(st, STATUS_INPUT_ERROR,
                          "%s: npy header: bad dimension in 'shape' (expected a non-negative integer)",
                          name);
    if (h->rank == AXLE_MAX_RANK)
      return status_error(st, STATUS_INPUT_ERROR, "%s: npy header: rank exceeds %d", name,
                          AXLE_MAX_RANK);
    int64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
      if (v > (INT64_MAX - 9) / 10)
        return status_error(st, STATUS_INPUT_ERROR, "%s: npy header: dimension too large", name);
      v = v * 10 + (*c->p++ - '0');
    }
    if (c->p < c->end && *c->p == 'L') c->p++;  /* Python 2 longs */
    h->dims[h->rank++] = v;
    if (!accept_char(c, ',')) {
      if (!accept_char(c, ')'))
        return status_error(st, STATUS_INPUT_ERROR, "%s: npy header: unterminated 'shape'", name);
      break;
    }
  }
  h->has_shape = true;
  return true;
}

static bool parse_header_entry(HeaderCursor *c, NpyHeader *h, const char *name, Status *st) {
  const char *key;
  size_t key_len;
  if (!read_quoted(c, &key, &key_len) || !accept_char(c, ':'))
    return status_error(st, STATUS_INPUT_ERROR, "%s: npy header is not a dict literal", name);
  if (key_len == 5 && memcmp(key, "descr", 5) == 0) {
    const char *descr;
    size_t n;
    if (!read_quoted(c, &descr, &n))
      return status_error(st, STATUS_INPUT_ERROR,
                          "%s: npy header: 'descr' is not a simple dtype string", name);
    if (!npy_type_from_descr(descr, n, &h->type)) {
      if (n == 3 && descr[0] == '>')
        return status_error(st, STATUS_INPUT_ERROR,
                            "%s: big-endian dtype '%.*s' is not supported (only little-endian)",
                            name, (int)n, descr);
      return status_error(st, STATUS_INPUT_ERROR, "%s: unsupported npy dtype '%.*s'", name,
                          (int)(n > 32 ? 32 : n), descr);
    }
    h->has_descr = true;
  } else if (key_len == 13 && memcmp(key, "fortran_order", 13) == 0) {
    if (read_word(c, "True"))
      return status_error(st, STATUS_INPUT_ERROR,
                          "%s: fortran_order=True is not supported (only C order)", name);
    if (!read_word(c, "False"))
      return status_error(st, STATUS_INPUT_ERROR, "%s: npy header: bad 'fortran_order' value",
                          name);
    h->has_order = true;
  } else if (key_len == 5 && memcmp(key, "shape", 5) == 0) {
    if (!parse_shape_tuple(c, h, name, st)) return false;
  } else {
    return status_error(st, STATUS_INPUT_ERROR, "%s: npy header: unknown key '%.*s'", name,
                        (int)(key_len > 32 ? 32 : key_len), key);
  }
  return true;
}

static bool parse_header_dict(const char *text, size_t n, NpyHeader *h, const char *name,
                              Status *st) {
  HeaderCursor c = {text, text + n};
  memset(h, 0, sizeof *h);
  if (!accept_char(&c, '{'))
    return status_error(st, STATUS_INPUT_ERROR, "%s: npy header is not a dict literal", name);
  while (!accept_char(&c, '}')) {
    if (!parse_header_entry(&c, h, name, st)) return false;
    if (!accept_char(&c, ',')) {
      if (!accept_char(&c, '}'))
        return status_error(st, STATUS_INPUT_ERROR, "%s: npy header: expected ',' or '}'", name);
      break;
    }
  }
  if (!h->has_descr || !h->has_order || !h->has_shape)
    return status_error(st, STATUS_INPUT_ERROR,
                        "%s: npy header lacks one of 'descr', 'fortran_order', 'shape'", name);
  return true;
}

/* ---- reading ---- */

/* Element count, refusing products that overflow or exceed the data we hold:
 * a shape like (99999999999, 99999999999) must not turn into an allocation. */
static bool npy_data_size(const NpyHeader *h, size_t available, int64_t *bytes, const char *name,
                          Status *st) {
  int64_t count = 1;
  for (int i = 0; i < h->rank; i++) {
    if (h->dims[i] != 0 && count > INT64_MAX / 16 / h->dims[i])
      return status_error(st, STATUS_INPUT_ERROR, "%s: npy shape is absurdly large", name);
    count *= h->dims[i];
  }
  *bytes = count * type_byte_size(h->type);
  if ((uint64_t)*bytes > available)
    return status_error(st, STATUS_INPUT_ERROR,
                        "%s: truncated npy data: the shape needs %lld bytes, the file has %zu",
                        name, (long long)*bytes, available);
  if ((uint64_t)*bytes < available)
    return status_error(st, STATUS_INPUT_ERROR,
                        "%s: npy file has %zu bytes after the data the shape describes", name,
                        available - (size_t)*bytes);
  return true;
}

Literal *npy_parse(const unsigned char *bytes, size_t size, const char *name, Status *st) {
  if (!name) name = "<npy>";
  if (size < NPY_MAGIC_SIZE + 2 || memcmp(bytes, npy_magic, NPY_MAGIC_SIZE) != 0) {
    status_error(st, STATUS_INPUT_ERROR, "%s: not a NumPy .npy file (bad magic)", name);
    return NULL;
  }
  int major = bytes[6];
  /* 3.0 differs from 2.0 only in the header's text encoding (utf-8). */
  if (major < 1 || major > 3) {
    status_error(st, STATUS_INPUT_ERROR, "%s: unsupported npy format version %d.%d", name, major,
                 bytes[7]);
    return NULL;
  }
  size_t prefix = major == 1 ? 10 : 12, header_len = 0;
  if (size >= prefix) {
    header_len = (size_t)bytes[8] | (size_t)bytes[9] << 8;
    if (major > 1) header_len |= (size_t)bytes[10] << 16 | (size_t)bytes[11] << 24;
  }
  if (size < prefix || header_len > NPY_MAX_HEADER || header_len > size - prefix) {
    status_error(st, STATUS_INPUT_ERROR, "%s: truncated npy header", name);
    return NULL;
  }
  NpyHeader h;
  if (!parse_header_dict((const char *)bytes + prefix, header_len, &h, name, st)) return NULL;
  int64_t data_bytes = 0;
  size_t data_at = prefix + header_len;
  if (!npy_data_size(&h, size - data_at, &data_bytes, name, st)) return NULL;
  Shape shape = shape_array(h.type, h.rank, h.dims);
  Literal *lit = literal_create(&shape);
  memcpy(lit->data, bytes + data_at, (size_t)data_bytes);
  if (h.type == TYPE_PRED) {
    /* NumPy bools are 0 or 1; normalize any other byte rather than trust it. */
    unsigned char *p = lit->data;
    for (int64_t i = 0; i < data_bytes; i++) p[i] = p[i] != 0;
  }
  return lit;
}

Literal *npy_read(const char *path, Status *st) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    status_error(st, STATUS_INPUT_ERROR, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  /* malloc and its NULL here, not mem_malloc: an unwind would leave f open. */
  size_t cap = 1 << 16, size = 0;
  unsigned char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + size, 1, cap - size, f)) > 0) {
    size += got;
    if (size == cap) {
      unsigned char *bigger = realloc(buf, cap * 2);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
  }
  bool read_failed = ferror(f);
  fclose(f);
  mem_adopt(buf);
  if (!buf) {
    status_error(st, STATUS_OUT_OF_MEMORY, "out of memory reading %s", path);
    return NULL;
  }
  if (read_failed) {
    mem_free(buf);
    status_error(st, STATUS_INPUT_ERROR, "error reading %s", path);
    return NULL;
  }
  Literal *lit = npy_parse(buf, size, path, st);
  mem_free(buf);
  return lit;
}

/* ---- writing ---- */

/* The header's dictionary, padded as NumPy pads it; returns its length. */
static int npy_header(const Literal *lit, char *header, size_t size) {
  int n = snprintf(header, size, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                   npy_dtype_name(lit->shape.type));
  for (int i = 0; i < lit->shape.rank; i++)
    n += snprintf(header + n, size - (size_t)n, "%s%lld", i ? ", " : "",
                  (long long)lit->shape.dims[i]);
  /* A one-element Python tuple needs its trailing comma: (3,) */
  n += snprintf(header + n, size - (size_t)n, "%s), }", lit->shape.rank == 1 ? "," : "");
  /* Pad with spaces to a 64-byte boundary, counting the 10-byte prefix and
   * the final newline, as NumPy does. */
  while ((10 + n + 1) % 64 != 0) header[n++] = ' ';
  header[n++] = '\n';
  return n;
}

bool npy_write(const char *path, const Literal *lit, Status *st) {
  if (!npy_writable(lit))
    return status_error(st, STATUS_INPUT_ERROR, "cannot write a %s to %s as .npy",
                        type_name(lit->shape.type), path);
  FILE *f = fopen(path, "wb");
  if (!f) return status_error(st, STATUS_INPUT_ERROR, "cannot create %s: %s", path, strerror(errno));
  bool ok = npy_write_stream(f, lit);
  if (fclose(f) != 0) ok = false;
  if (!ok) return status_error(st, STATUS_INPUT_ERROR, "error writing %s", path);
  return true;
}

bool npy_write_stream(FILE *f, const Literal *lit) {
  char header[128 + 24 * AXLE_MAX_RANK];
  int n = npy_header(lit, header, sizeof header);
  unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff),
                              (unsigned char)(n >> 8)};
  size_t data_bytes = (size_t)shape_byte_size(&lit->shape);
  return fwrite(prefix, 1, 10, f) == 10 && fwrite(header, 1, (size_t)n, f) == (size_t)n &&
         (data_bytes == 0 || fwrite(lit->data, 1, data_bytes, f) == data_bytes);
}

bool npy_writable(const Literal *lit) {
  return lit->shape.type != TYPE_TUPLE && npy_dtype_name(lit->shape.type) != NULL;
}
