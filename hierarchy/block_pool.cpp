#include "block_pool.h"

#include <cassert>
#include <cstdint>
#include <cstring>
#include <new>

#include "huge_pages.h"

namespace tprop {

namespace {
size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Under AddressSanitizer every block is its own allocation, so that a use after free or an
// overrun is still caught (a pool's chunk would hide both).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kBlockEach = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kBlockEach = true;
#else
constexpr bool kBlockEach = false;
#endif
#else
constexpr bool kBlockEach = false;
#endif
}  // namespace

BlockPool::BlockPool(size_t block_size, size_t alignment)
    : alignment_(alignment < alignof(void*) ? alignof(void*) : alignment),
      block_size_(round_up(block_size < sizeof(void*) ? sizeof(void*) : block_size,
                           alignment < alignof(void*) ? alignof(void*) : alignment)) {
  assert(alignment != 0 && (alignment & (alignment - 1)) == 0 && alignment <= 4096);
  assert(block_size_ <= kChunkBytes / 2);
}

BlockPool::~BlockPool() {
  for (const Chunk& c : chunks_) {
#if defined(__linux__)
    if (c.mapped) {
      munmap(c.base, kChunkBytes);
      continue;
    }
#endif
    ::operator delete(c.base, std::align_val_t(4096));
  }
}

void BlockPool::add_chunk() {
  void* base = nullptr;
  bool mapped = false;
#if defined(__linux__)
  base = map_huge_aligned(kChunkBytes, false, true);  // a huge page needs the alignment
  mapped = base != nullptr;
#endif
  if (!base) base = ::operator new(kChunkBytes, std::align_val_t(4096));
  try {
    chunks_.push_back({base, mapped});
  } catch (...) {
#if defined(__linux__)
    if (mapped) {
      munmap(base, kChunkBytes);
      throw;
    }
#endif
    ::operator delete(base, std::align_val_t(4096));
    throw;
  }
  next_ = static_cast<char*>(base);
  end_ = next_ + kChunkBytes / block_size_ * block_size_;
}

void* BlockPool::allocate() {
  std::lock_guard<std::mutex> lock(mutex_);
  if constexpr (kBlockEach) {
    void* block = ::operator new(block_size_, std::align_val_t(alignment_));
    ++in_use_;
    return block;
  }
  void* p;
  if (free_) {
    p = free_;
    std::memcpy(&free_, p, sizeof(void*));
  } else {
    if (next_ == end_) add_chunk();
    p = next_;
    next_ += block_size_;
  }
  ++in_use_;
  return p;
}

void BlockPool::deallocate(void* p) noexcept {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if constexpr (kBlockEach) {
    ::operator delete(p, std::align_val_t(alignment_));
    --in_use_;
    return;
  }
  std::memcpy(p, &free_, sizeof(void*));
  free_ = p;
  --in_use_;
}

size_t BlockPool::blocks_in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_;
}

bool BlockPool::pools_blocks() { return !kBlockEach; }

size_t BlockPool::chunks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return chunks_.size();
}

namespace {
constexpr size_t kSmallestClass = size_t(4) << 10;
constexpr size_t kLargestClass = size_t(512) << 10;
constexpr size_t kClasses = 8;  // 4 KiB, 8 KiB, ... 512 KiB

size_t class_of(size_t bytes) {
  size_t c = 0;
  while ((kSmallestClass << c) < bytes) ++c;
  return c;
}

// Never destroyed, as CrdtState's page pool: arrays may be given back during static
// destruction.
BlockPool& class_pool(size_t c) {
  static BlockPool* const pools[kClasses] = {
      new BlockPool(kSmallestClass << 0, 64), new BlockPool(kSmallestClass << 1, 64),
      new BlockPool(kSmallestClass << 2, 64), new BlockPool(kSmallestClass << 3, 64),
      new BlockPool(kSmallestClass << 4, 64), new BlockPool(kSmallestClass << 5, 64),
      new BlockPool(kSmallestClass << 6, 64), new BlockPool(kSmallestClass << 7, 64)};
  static_assert((kSmallestClass << (kClasses - 1)) == kLargestClass);
  return *pools[c];
}
}  // namespace

void* pooled_allocate(size_t bytes) {
  if (bytes < kSmallestClass / 2 || bytes > kLargestClass)
    return ::operator new(bytes, std::align_val_t(64));
  return class_pool(class_of(bytes)).allocate();
}

void pooled_deallocate(void* p, size_t bytes) noexcept {
  if (!p) return;
  if (bytes < kSmallestClass / 2 || bytes > kLargestClass) {
    ::operator delete(p, std::align_val_t(64));
    return;
  }
  class_pool(class_of(bytes)).deallocate(p);
}

}  // namespace tprop
