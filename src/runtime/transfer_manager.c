/* Host <-> device copies through pinned staging (see transfer_manager.h). */
#include <stdlib.h>
#include <string.h>

#include "runtime/buffer.h"
#include "runtime/transfer_manager.h"

/* Each staged copy starts on a 256-byte boundary, the alignment that
 * cuMemAlloc gives, so the DMA engine sees the same alignment both sides. */
enum { STAGING_ALIGNMENT = 256 };

static size_t staging_round(size_t bytes) {
  return (bytes + STAGING_ALIGNMENT - 1) / STAGING_ALIGNMENT * STAGING_ALIGNMENT;
}

bool transfer_manager_create(TransferManager *tm, GpuDevice *gpu, size_t upload_bytes, size_t download_bytes,
                             Status *st) {
  memset(tm, 0, sizeof *tm);
  tm->gpu = gpu;
  tm->upload_capacity = staging_round(upload_bytes);
  tm->download_capacity = staging_round(download_bytes);
  size_t total = tm->upload_capacity + tm->download_capacity;
  if (total == 0) return true;
  void *p = NULL;
  if (!gpu_alloc_pinned(gpu, total, &p, st)) return false;
  tm->staging = p;
  return true;
}

void transfer_manager_free(TransferManager *tm) {
  if (tm->staging) tm->gpu->driver.mem_free_host(tm->staging);
  mem_free(tm->copies);
  memset(tm, 0, sizeof *tm);
}

bool transfer_to_device(TransferManager *tm, CUdeviceptr dst, const void *src, size_t bytes, const Shape *layout,
                        Status *st) {
  if (bytes == 0) return true;
  if (tm->uploaded + bytes > tm->upload_capacity)
    return status_error(st, STATUS_RUNTIME_ERROR, "the GPU run stages %zu bytes more than the %zu planned",
                        tm->uploaded + bytes - tm->upload_capacity, tm->upload_capacity);
  char *staged = tm->staging + tm->uploaded;
  if (layout) shape_relayout_copy(layout, src, staged, true);
  else memcpy(staged, src, bytes);
  tm->uploaded += staging_round(bytes);
  return gpu_copy_to_device(tm->gpu, dst, staged, bytes, st);
}

bool transfer_to_host(TransferManager *tm, void *host, CUdeviceptr src, size_t bytes, const Shape *layout,
                      Status *st) {
  if (bytes == 0) return true;
  if (tm->downloaded + bytes > tm->download_capacity)
    return status_error(st, STATUS_RUNTIME_ERROR, "the GPU run downloads %zu bytes more than the %zu planned",
                        tm->downloaded + bytes - tm->download_capacity, tm->download_capacity);
  size_t at = tm->upload_capacity + tm->downloaded;
  if (!gpu_copy_to_host_async(tm->gpu, tm->staging + at, src, bytes, st)) return false;
  tm->downloaded += staging_round(bytes);
  if (tm->copy_count == tm->copy_capacity) {
    tm->copy_capacity = tm->copy_capacity ? 2 * tm->copy_capacity : 8;
    tm->copies = mem_realloc(tm->copies, (size_t)tm->copy_capacity * sizeof *tm->copies);
    if (!tm->copies) return status_error(st, STATUS_OUT_OF_MEMORY, "out of memory");
  }
  tm->copies[tm->copy_count++] = (TransferCopyOut){.host = host, .staged_at = at, .bytes = bytes, .layout = layout};
  return true;
}

bool transfer_manager_finish(TransferManager *tm, Status *st) {
  bool ok = gpu_synchronize(tm->gpu, st);
  for (int i = 0; ok && i < tm->copy_count; i++) {
    const TransferCopyOut *c = &tm->copies[i];
    if (c->layout) shape_relayout_copy(c->layout, tm->staging + c->staged_at, c->host, false);
    else memcpy(c->host, tm->staging + c->staged_at, c->bytes);
  }
  tm->uploaded = tm->downloaded = 0;
  tm->copy_count = 0;
  return ok;
}
