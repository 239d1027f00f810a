/* The TransferManager: host <-> device copies for the GPU backend.
 *
 * Copies go through one pinned (page-locked) staging buffer, because the
 * driver can copy asynchronously only from pinned memory: from pageable
 * memory cuMemcpy*Async quietly becomes a synchronous copy through the
 * driver's own bounce buffer. A run stages every argument, enqueues its
 * copy on the device's stream, enqueues the launches and the copies of the
 * results back, then synchronizes once (transfer_manager_finish), after
 * which the results are copied out of the staging buffer.
 *
 * The staging buffer is sized once, at compile time, to what one run
 * moves each way (transfer_manager_create), so a run allocates nothing.
 * Its upload part and download part are separate, so that a result's
 * copy back can never land on an argument still being uploaded. */
#ifndef AXLE_RUNTIME_TRANSFER_MANAGER_H
#define AXLE_RUNTIME_TRANSFER_MANAGER_H

#include "runtime/cuda_driver.h"

typedef struct TransferCopyOut {
  void *host;          /* where the result's bytes go after the sync */
  size_t staged_at;    /* their offset in the download part */
  size_t bytes;
  const Shape *layout; /* non-NULL: the device holds this layout */
} TransferCopyOut;

typedef struct TransferManager {
  GpuDevice *gpu;      /* not owned */
  char *staging;       /* pinned: upload_capacity + download_capacity bytes */
  size_t upload_capacity, download_capacity;
  size_t uploaded, downloaded;   /* bytes of each part in use this run */
  int copy_count, copy_capacity;
  TransferCopyOut *copies;
} TransferManager;

/* Pins staging for up to upload_bytes each run in and download_bytes out.
 * Fails (with the bytes it wanted) when the driver cannot pin them. */
bool transfer_manager_create(TransferManager *tm, GpuDevice *gpu, size_t upload_bytes, size_t download_bytes,
                             Status *st);
void transfer_manager_free(TransferManager *tm);
/* Host buffers are row-major. With a layout (not NULL), the device holds
 * the array in that layout instead: the copy goes through it on the way,
 * in the staging buffer, so the device never sees the row-major bytes. */
/* Stages src and enqueues its copy to dst on the stream. */
bool transfer_to_device(TransferManager *tm, CUdeviceptr dst, const void *src, size_t bytes, const Shape *layout,
                        Status *st);
/* Enqueues the copy of src back; host receives it at transfer_manager_finish. */
bool transfer_to_host(TransferManager *tm, void *host, CUdeviceptr src, size_t bytes, const Shape *layout,
                      Status *st);
/* Waits for the stream (a failed launch is reported here), then copies the
 * downloaded results to their host buffers. The staging buffer is free for
 * the next run afterwards, whether or not it failed. */
bool transfer_manager_finish(TransferManager *tm, Status *st);

#endif
