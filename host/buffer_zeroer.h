// Writes zeros over freshly made device buffers from a helper thread, while update() packs.
//
// Where device memory is host memory (a CPU device: lavapipe), a new buffer's pages do not exist
// until something writes them, and the first write to each 4 KiB page costs a page fault: on
// this project's virtual machines about 4 us, so a 1M-entity scene's first frame spent 80 to 120
// ms of its GPU time in the upload stage faulting the LocalToWorld, flags and parent arrays in
// the driver's copies and clears (90 MB), one page after another on the device's one queue
// thread. Zeroed here instead, the faults run on another core during the first frame's packing,
// which takes longer (tprop_bench --sizes 1M, README Performance). Zeros are what a fresh
// slot must hold anyway (Propagator::record clears them).
//
// A batch is started once and finished (joined) before anything else touches its buffers: the
// buffers must outlive the batch and no one else may map or write them meanwhile.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

#include "vk_buffer.h"

namespace tprop {

class BufferZeroer {
 public:
  BufferZeroer() = default;
  ~BufferZeroer() { finish(); }
  BufferZeroer(const BufferZeroer&) = delete;
  BufferZeroer& operator=(const BufferZeroer&) = delete;

  // Starts zeroing `buffers` on a helper thread (after finishing any batch still running);
  // where no thread can be started, nothing is zeroed and finish() says so.
  void start(std::vector<const Buffer*> buffers);
  // Waits for the batch, if any; whether it zeroed every buffer it was given (false with no
  // batch, or where some buffer's memory was not host-visible).
  bool finish();

 private:
  std::vector<const Buffer*> buffers_;
  std::atomic<bool> all_zeroed_{false};
  std::thread worker_;
};

}  // namespace tprop
