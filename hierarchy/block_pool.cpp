#include "block_pool.h"

#include <algorithm>
#include <cassert>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <new>
#include <thread>
#include <utility>

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

// The helper thread that maps and faults chunks ahead for the pools that grow (block_pool.h).
// Started at the first request; never stopped: pools live as long as the process.
class ChunkPrefaulter {
 public:
  static ChunkPrefaulter& instance() {
    static ChunkPrefaulter* const prefaulter = new ChunkPrefaulter;
    return *prefaulter;
  }

  // Asks for a chunk for `pool`, which holds its mutex; false when no helper thread runs (the
  // pool then maps its chunks itself).
  bool ask(BlockPool* pool) noexcept {
#if defined(__linux__)
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      if (!started_) {
        std::thread([this] { run(); }).detach();
        started_ = true;
      }
      asked_.push_back(pool);
    } catch (...) {  // no thread (std::system_error), or no room in the queue
      return false;
    }
    work_.notify_one();
    return true;
#else
    (void)pool;
    return false;
#endif
  }

  // Drops `pool`'s request and waits until the thread is done with it: from its destructor.
  void forget(BlockPool* pool) {
    std::unique_lock<std::mutex> lock(mutex_);
    asked_.erase(std::remove(asked_.begin(), asked_.end(), pool), asked_.end());
    done_.wait(lock, [&] { return working_on_ != pool; });
  }

 private:
  void run() {
#if defined(__linux__)
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return !asked_.empty(); });
      BlockPool* const pool = asked_.front();
      asked_.erase(asked_.begin());
      working_on_ = pool;
      lock.unlock();
      // A write a 4 KiB page: the first one of a huge page brings all 2 MiB in.
      void* const base = map_huge_aligned(BlockPool::kChunkBytes, false, true);
      if (base)
        for (size_t at = 0; at < BlockPool::kChunkBytes; at += 4096)
          static_cast<volatile char*>(base)[at] = 0;
      {
        std::lock_guard<std::mutex> pool_lock(pool->mutex_);
        if (base) pool->ready_ = {base, true};
        pool->ahead_asked_ = false;
      }
      lock.lock();
      working_on_ = nullptr;
      done_.notify_all();
    }
#endif
  }

  std::mutex mutex_;
  std::condition_variable work_;  // asked_ is not empty
  std::condition_variable done_;  // working_on_ changed
  std::vector<BlockPool*> asked_;
  BlockPool* working_on_ = nullptr;
  bool started_ = false;
};

BlockPool::BlockPool(size_t block_size, size_t alignment)
    : alignment_(alignment < alignof(void*) ? alignof(void*) : alignment),
      block_size_(round_up(block_size < sizeof(void*) ? sizeof(void*) : block_size,
                           alignment < alignof(void*) ? alignof(void*) : alignment)) {
  assert(alignment != 0 && (alignment & (alignment - 1)) == 0 && alignment <= 4096);
  assert(block_size_ <= kChunkBytes / 2);
}

BlockPool::~BlockPool() {
  bool asked;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    asked = ahead_asked_;
  }
  if (asked) ChunkPrefaulter::instance().forget(this);
  if (ready_.base) chunks_.push_back(ready_);  // (room: reserved with the last chunk)
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

void BlockPool::start_chunk(Chunk c) {
  chunks_.push_back(c);
  next_ = static_cast<char*>(c.base);
  end_ = next_ + kChunkBytes / block_size_ * block_size_;
}

void BlockPool::add_chunk() {
  // Room first, for this chunk and one faulted ahead (which the destructor may add), and the
  // helper's first allocation when this chunk makes the pool a growing one: out of memory, the
  // pool stays as it was.
  if (chunks_.size() + 2 > chunks_.capacity()) chunks_.reserve(2 * chunks_.size() + 2);
  ChunkPrefaulter* const prefaulter =
      chunks_.size() >= 1 && !ahead_asked_ ? &ChunkPrefaulter::instance() : nullptr;
  if (ready_.base) {
    start_chunk(std::exchange(ready_, Chunk{nullptr, false}));
    ++faulted_ahead_;
  } else {
    void* base = nullptr;
    bool mapped = false;
#if defined(__linux__)
    base = map_huge_aligned(kChunkBytes, false, true);  // a huge page needs the alignment
    mapped = base != nullptr;
#endif
    if (!base) base = ::operator new(kChunkBytes, std::align_val_t(4096));
    start_chunk({base, mapped});
  }
  // Past its first chunk the pool is growing: its next chunk is faulted ahead.
  if (prefaulter) ahead_asked_ = prefaulter->ask(this);
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

size_t BlockPool::chunks_faulted_ahead() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return faulted_ahead_;
}

bool BlockPool::chunk_ready() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ready_.base != nullptr;
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
