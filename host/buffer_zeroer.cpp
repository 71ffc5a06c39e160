#include "buffer_zeroer.h"

#include <system_error>

namespace tprop {

void BufferZeroer::start(std::vector<const Buffer*> buffers) {
  finish();
  if (buffers.empty()) return;
  buffers_ = std::move(buffers);
  all_zeroed_ = false;
  try {
    worker_ = std::thread([this] {
      bool all = true;
      for (const Buffer* b : buffers_) all = b->zero_from_host() && all;
      all_zeroed_ = all;
    });
  } catch (const std::system_error&) {
    buffers_.clear();  // no thread to be had: the device's own clears and copies fault them
  }
}

bool BufferZeroer::finish() {
  if (!worker_.joinable()) return false;
  worker_.join();
  buffers_.clear();
  return all_zeroed_;
}

}  // namespace tprop
