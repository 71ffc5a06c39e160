// Brings freshly made buffers' pages in from a helper thread while update() packs.
//
// Where device memory is host memory (a CPU device: lavapipe), a new buffer's pages do not exist
// until something writes them, and the first write to each 4 KiB page costs a page fault: on
// this project's virtual machines about 4 us. A 1M-entity scene's first frame spent 80 to 120
// ms of its GPU time in the upload stage faulting in the LocalToWorld, flags and parent arrays
// through the driver's copies and clears (90 MB), one page after another on the device's queue
// thread, and its update() faulted in the arrays it writes in place and the mirrors it packs
// (64 MB) on the application's thread. Here the faults run on another core while the first
// frame packs (tprop_bench --sizes 1M, PERFORMANCE.md):
//  - the buffers update() writes meanwhile are populated without a byte changed
//    (MADV_POPULATE_WRITE: a page the packer wrote first stays as it is), a slice of each in
//    turn from the start, ahead of the packer's sequential writes;
//  - the buffers no one touches until record() are zeroed from the host, after: zeros are what
//    a fresh slot must hold anyway, so record() may skip its clears (Propagator::record).
// A batch is finished (joined) before the buffers are used otherwise: they must outlive it, and
// no one but the packer may write the populated ones meanwhile, no one at all the zeroed ones.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

#include "vk_buffer.h"

namespace tprop {

class BufferPrefaulter {
 public:
  BufferPrefaulter() = default;
  ~BufferPrefaulter() { finish(); }
  BufferPrefaulter(const BufferPrefaulter&) = delete;
  BufferPrefaulter& operator=(const BufferPrefaulter&) = delete;

  // Starts a batch on a helper thread (after finishing any batch still running): `written`,
  // mapped buffers to populate, then `zeroed`, buffers to zero. Where no thread can be started,
  // nothing is done and finish() says so.
  void start(std::vector<const Buffer*> written, std::vector<const Buffer*> zeroed);
  // Waits for the batch, if any; whether it zeroed every buffer of `zeroed` (false with no batch,
  // or where some buffer's memory was not host-visible). Populating is best effort: a kernel
  // without MADV_POPULATE_WRITE (before Linux 5.14) leaves the faults to the packer.
  bool finish();

 private:
  void work();

  std::vector<const Buffer*> written_;
  std::vector<const Buffer*> zeroed_;
  std::atomic<bool> all_zeroed_{false};
  std::thread worker_;
};

}  // namespace tprop
