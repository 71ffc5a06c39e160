#include "buffer_reclaimer.h"

#include <system_error>

namespace tprop {

BufferReclaimer::~BufferReclaimer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (worker_.joinable()) worker_.join();
  queue_.clear();  // what no worker took: freed here
}

void BufferReclaimer::free_later(std::vector<Buffer>& buffers) {
  if (buffers.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Buffer& b : buffers) queue_.push_back(std::move(b));
  }
  buffers.clear();
  if (!worker_.joinable()) {
    try {
      worker_ = std::thread([this] { work(); });
    } catch (const std::system_error&) {
      // No thread to be had (a sandbox's limit): the frame frees them, as before.
      std::vector<Buffer> now;
      std::lock_guard<std::mutex> lock(mutex_);
      now.swap(queue_);
      return;  // `now` frees them on leaving, after the lock is released
    }
  }
  wake_.notify_one();
}

void BufferReclaimer::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!worker_.joinable()) {
    std::vector<Buffer> now;
    now.swap(queue_);
    lock.unlock();
    return;
  }
  idle_.wait(lock, [this] { return queue_.empty() && !freeing_; });
}

void BufferReclaimer::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_, nothing left
    std::vector<Buffer> batch;
    batch.swap(queue_);
    freeing_ = true;
    lock.unlock();
    batch.clear();  // vkDestroyBuffer + vkFreeMemory, outside the lock
    lock.lock();
    freeing_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace tprop
