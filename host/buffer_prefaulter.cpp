#include "buffer_prefaulter.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <system_error>

namespace tprop {

namespace {

// Makes the whole pages within [at, at + bytes) present and writable without writing them;
// false where the kernel cannot.
bool populate(void* at, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (uintptr_t(at) + page - 1) & ~(page - 1);
  const uintptr_t end = (uintptr_t(at) + bytes) & ~(page - 1);
  if (end <= begin) return true;
  return madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0;
#else
  (void)at;
  (void)bytes;
  return false;
#endif
}

}  // namespace

void BufferPrefaulter::start(std::vector<const Buffer*> written,
                             std::vector<const Buffer*> zeroed) {
  finish();
  std::erase_if(written, [](const Buffer* b) { return b->mapped() == nullptr; });
  if (written.empty() && zeroed.empty()) return;
  written_ = std::move(written);
  zeroed_ = std::move(zeroed);
  all_zeroed_ = false;
  try {
    worker_ = std::thread([this] { work(); });
  } catch (const std::system_error&) {
    // No thread to be had: the packer and the device's own clears and copies fault them.
    written_.clear();
    zeroed_.clear();
  }
}

void BufferPrefaulter::work() {
  // A sixty-fourth of every written buffer in turn: the packer writes slot after slot into all
  // of them at once, so each slice is ready in all of them before it gets there.
  constexpr size_t kSlices = 64;
  bool populating = true;
  for (size_t k = 0; k < kSlices && populating; ++k)
    for (const Buffer* b : written_) {
      const size_t size = size_t(b->size());
      const size_t from = size * k / kSlices, to = size * (k + 1) / kSlices;
      if (!populate(static_cast<char*>(b->mapped()) + from, to - from)) populating = false;
    }
  bool all = true;
  for (const Buffer* b : zeroed_) all = b->zero_from_host() && all;
  all_zeroed_ = all;
}

bool BufferPrefaulter::finish() {
  if (!worker_.joinable()) return false;
  worker_.join();
  written_.clear();
  zeroed_.clear();
  return all_zeroed_;
}

}  // namespace tprop
