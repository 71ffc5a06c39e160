// Frees buffers on a worker thread, off the frame's path.
//
// Measured on an NVIDIA H200 (driver 580): vkFreeMemory of a host-visible buffer costs about a
// millisecond for a megabyte and tens of milliseconds for gigabytes (the driver unpins and
// unmaps it), so the staging mirrors of a full upload, freed by the update() calls that follow
// it, added 1 to 37 ms to each of those frames' host time (a 100M-entity scene). Handed to a
// BufferReclaimer, they cost the frame a move into a queue.
//
// Vulkan lets another thread free a VkDeviceMemory and destroy a VkBuffer while the device is in
// use elsewhere, as long as nothing else uses those two objects: what is handed over must be
// unused by the device (its last frame completed) and referenced by nothing else. The device
// must outlive the reclaimer, whose destructor frees what is left and joins the thread.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "vk_buffer.h"

namespace tprop {

class BufferReclaimer {
 public:
  BufferReclaimer() = default;
  ~BufferReclaimer();
  BufferReclaimer(const BufferReclaimer&) = delete;
  BufferReclaimer& operator=(const BufferReclaimer&) = delete;

  // Takes the buffers (emptying `buffers`) and frees them on the worker, started by the first
  // call; where no thread can be started they are freed here and now.
  void free_later(std::vector<Buffer>& buffers);
  // Returns once everything handed over has been freed.
  void drain();

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;  // work arrived, or stop
  std::condition_variable idle_;  // the queue emptied and nothing is being freed
  std::vector<Buffer> queue_;
  bool freeing_ = false;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace tprop
