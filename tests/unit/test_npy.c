/* NumPy .npy reading and writing: round trips for every element type, and
 * refusal (never a crash) of every malformed or unsupported file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir.h"
#include "runtime/npy.h"
#include "../test.h"

static char temp_path[64];

static const char *temp_file(void) {
  snprintf(temp_path, sizeof temp_path, "/tmp/axle_test_npy_%d.npy", (int)getpid());
  return temp_path;
}

static Literal *pattern_literal(ElementType t) {
  int64_t dims[] = {3, 4};
  Shape s = shape_array(t, 2, dims);
  Literal *lit = literal_create(&s);
  unsigned char *p = lit->data;
  for (int64_t i = 0; i < shape_byte_size(&s); i++) p[i] = (unsigned char)(i * 37 + 11);
  if (t == TYPE_PRED)
    for (int64_t i = 0; i < 12; i++) p[i] = (unsigned char)(i % 3 == 0);
  return lit;
}

TEST(every_element_type_round_trips_through_a_file) {
  for (int t = 0; t < TYPE_TOKEN; t++) {
    Status st;
    status_clear(&st);
    Literal *lit = pattern_literal((ElementType)t);
    bool wrote = npy_write(temp_file(), lit, &st);
    EXPECT(wrote, "%s: %s", type_name((ElementType)t), st.message);
    Literal *back = wrote ? npy_read(temp_file(), &st) : NULL;
    EXPECT(back != NULL, "%s: %s", type_name((ElementType)t), st.message);
    if (back) {
      /* bf16 travels as <u2, f8 and f4 as |u1 bits, s4 as |i1 values ... */
      ElementType expected = npy_carrier_type((ElementType)t);
      EXPECT(back->shape.type == expected, "%s came back as %s", type_name((ElementType)t),
             type_name(back->shape.type));
      EXPECT(shape_same_dims(&back->shape, &lit->shape), "%s dims", type_name((ElementType)t));
      EXPECT(memcmp(back->data, lit->data, (size_t)shape_byte_size(&lit->shape)) == 0,
             "%s data differs", type_name((ElementType)t));
    }
    literal_free(lit);
    literal_free(back);
  }
  unlink(temp_file());
}

TEST(scalars_and_empty_arrays_round_trip) {
  Status st;
  status_clear(&st);
  Shape scalar = shape_scalar(TYPE_F64);
  Literal *lit = literal_create(&scalar);
  literal_set_f64(lit, 0, -2.5);
  EXPECT(npy_write(temp_file(), lit, &st), "%s", st.message);
  Literal *back = npy_read(temp_file(), &st);
  EXPECT(back && back->shape.rank == 0 && literal_get_f64(back, 0) == -2.5, "scalar");
  literal_free(lit);
  literal_free(back);
  int64_t dims[] = {0, 5};
  Shape empty = shape_array(TYPE_S32, 2, dims);
  lit = literal_create(&empty);
  EXPECT(npy_write(temp_file(), lit, &st), "%s", st.message);
  back = npy_read(temp_file(), &st);
  EXPECT(back && back->shape.rank == 2 && back->shape.dims[0] == 0 && back->shape.dims[1] == 5,
         "empty array: %s", back ? "wrong shape" : st.message);
  literal_free(lit);
  literal_free(back);
  unlink(temp_file());
}

/* NumPy aligns the data to 64 bytes; other readers rely on it. */
TEST(written_header_is_64_byte_aligned_and_newline_terminated) {
  Status st;
  status_clear(&st);
  Literal *lit = pattern_literal(TYPE_F32);
  EXPECT(npy_write(temp_file(), lit, &st), "%s", st.message);
  FILE *f = fopen(temp_file(), "rb");
  unsigned char head[10];
  EXPECT(f && fread(head, 1, 10, f) == 10, "read back");
  if (f) fclose(f);
  int header_len = head[8] | head[9] << 8;
  EXPECT((10 + header_len) % 64 == 0, "data starts at %d", 10 + header_len);
  EXPECT(head[6] == 1 && head[7] == 0, "version 1.0");
  literal_free(lit);
  unlink(temp_file());
}

/* Builds an npy image: version, header text (padded to 64), data bytes. */
static size_t build_npy(unsigned char *out, int major, const char *header, size_t data_bytes) {
  size_t prefix = major == 1 ? 10 : 12, n = strlen(header);
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)major;
  out[7] = 0;
  memcpy(out + prefix, header, n);
  while ((prefix + n + 1) % 64) out[prefix + n++] = ' ';
  out[prefix + n++] = '\n';
  out[8] = (unsigned char)(n & 0xff);
  out[9] = (unsigned char)(n >> 8);
  if (major != 1) out[10] = out[11] = 0;
  for (size_t i = 0; i < data_bytes; i++) out[prefix + n + i] = (unsigned char)i;
  return prefix + n + data_bytes;
}

static unsigned char image[4096];

TEST(version_2_header_is_read) {
  size_t n = build_npy(image, 2, "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }", 8);
  Status st;
  status_clear(&st);
  Literal *lit = npy_parse(image, n, "v2", &st);
  EXPECT(lit && lit->shape.type == TYPE_S16 && lit->shape.rank == 2, "%s", st.message);
  EXPECT(lit && literal_get_s64(lit, 1) == 0x0302, "little-endian element");
  literal_free(lit);
}

/* Each malformed image must be refused with a message containing a phrase. */
static void expect_refused(const unsigned char *bytes, size_t n, const char *phrase) {
  Status st;
  status_clear(&st);
  Literal *lit = npy_parse(bytes, n, "bad.npy", &st);
  EXPECT(lit == NULL, "accepted a file that should say '%s'", phrase);
  literal_free(lit);
  EXPECT(strstr(st.message, phrase) != NULL, "message '%s' lacks '%s'", st.message, phrase);
}

TEST(refuses_fortran_order_big_endian_and_unknown_dtypes) {
  size_t n = build_npy(image, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8);
  expect_refused(image, n, "fortran_order");
  n = build_npy(image, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8);
  expect_refused(image, n, "big-endian");
  n = build_npy(image, 1, "{'descr': '<m8', 'fortran_order': False, 'shape': (1,), }", 8);
  expect_refused(image, n, "unsupported npy dtype");
  n = build_npy(image, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4);
  expect_refused(image, n, "descr");
  n = build_npy(image, 1, "{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }", 4);
  expect_refused(image, n, "unsupported npy dtype");
}

TEST(refuses_bad_magic_versions_and_truncation) {
  expect_refused((const unsigned char *)"", 0, "bad magic");
  expect_refused((const unsigned char *)"PK\x03\x04 not numpy", 15, "bad magic");
  size_t n = build_npy(image, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16);
  expect_refused(image, n - 1, "truncated npy data");
  expect_refused(image, 20, "truncated npy header");
  expect_refused(image, 9, "truncated npy header");
  image[6] = 7;
  expect_refused(image, n, "version 7");
  n = build_npy(image, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 8);
  expect_refused(image, n, "after the data");
}

TEST(refuses_absurd_shapes_without_allocating) {
  size_t n = build_npy(image, 1,
                       "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }", 0);
  expect_refused(image, n, "absurdly large");
  n = build_npy(image, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999,), }", 0);
  expect_refused(image, n, "truncated npy data");
  n = build_npy(image, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 0);
  expect_refused(image, n, "bad dimension");
  n = build_npy(image, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0);
  expect_refused(image, n, "dimension too large");
  n = build_npy(image, 1,
                "{'descr': '<f4', 'fortran_order': False, "
                "'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }", 4);
  expect_refused(image, n, "rank exceeds");
}

TEST(refuses_malformed_header_dicts) {
  size_t n = build_npy(image, 1, "{'descr': '<f4', 'shape': (1,), }", 4);
  expect_refused(image, n, "lacks");
  n = build_npy(image, 1, "not a dict", 4);
  expect_refused(image, n, "not a dict");
  n = build_npy(image, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,", 4);
  expect_refused(image, n, "shape");
  n = build_npy(image, 1, "{'descr': '<f4, 'fortran_order': False}", 4);
  expect_refused(image, n, "");
  n = build_npy(image, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4);
  expect_refused(image, n, "unknown key");
}

TEST(missing_file_is_an_error_not_a_crash) {
  Status st;
  status_clear(&st);
  Literal *lit = npy_read("/nonexistent/axle/x.npy", &st);
  EXPECT(lit == NULL && strstr(st.message, "cannot open") != NULL, "%s", st.message);
}

TEST(tuples_are_refused_by_the_writer) {
  Status st;
  status_clear(&st);
  Literal *parts[1] = {pattern_literal(TYPE_S8)};
  Literal *tuple = literal_create_tuple(parts, 1);
  EXPECT(!npy_write(temp_file(), tuple, &st) && strstr(st.message, "tuple"), "%s", st.message);
  literal_free(tuple);
}

TEST(dtype_names_match_the_documented_table) {
  EXPECT(strcmp(npy_dtype_name(TYPE_F32), "<f4") == 0, "f32");
  EXPECT(strcmp(npy_dtype_name(TYPE_S8), "|i1") == 0, "s8");
  EXPECT(strcmp(npy_dtype_name(TYPE_PRED), "|b1") == 0, "pred");
  EXPECT(strcmp(npy_dtype_name(TYPE_BF16), "<u2") == 0, "bf16 as its bits");
  EXPECT(strcmp(npy_dtype_name(TYPE_U64), "<u8") == 0, "u64");
}

int main(void) {
  RUN(every_element_type_round_trips_through_a_file);
  RUN(scalars_and_empty_arrays_round_trip);
  RUN(written_header_is_64_byte_aligned_and_newline_terminated);
  RUN(version_2_header_is_read);
  RUN(refuses_fortran_order_big_endian_and_unknown_dtypes);
  RUN(refuses_bad_magic_versions_and_truncation);
  RUN(refuses_absurd_shapes_without_allocating);
  RUN(refuses_malformed_header_dicts);
  RUN(missing_file_is_an_error_not_a_crash);
  RUN(tuples_are_refused_by_the_writer);
  RUN(dtype_names_match_the_documented_table);
  return test_summary();
}
