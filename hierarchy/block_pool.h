// BlockPool: fixed-size blocks carved from 2 MiB chunks that Linux may back with huge pages
// (MADV_HUGEPAGE), for small records that a big world reaches at random.
//
// A Decentraland world keeps each scene's CRDT state in pages of a few kilobytes, a thousand
// scenes' worth scattered over the heap in 4 KiB pages: nearly every message then missed the TLB
// on its record as well as the cache, and walked the page tables. Ingest of a 1M-entity world
// frame spent about a tenth of its time there (the same binary with glibc's malloc on huge
// pages, GLIBC_TUNABLES=glibc.malloc.hugetlb=1: 3.68 -> 3.33 ms). Blocks from a pool share
// 2 MiB pages instead.
//
// Blocks freed go to a free list for the next allocation; chunks go back to the system only
// with the pool. Thread-safe (a mutex: blocks are taken and given back rarely). On systems
// without mmap, and where a mapping is refused, chunks come from operator new.
//
// A pool that grows past its first chunk has its next chunk mapped and faulted in ahead, by one
// process-wide helper thread: the first write to a chunk makes the kernel clear (on virtual
// machines, also back) 2 MiB at once, which on this project's VM took about 5 ms, a hitch in
// the world frame that happened to need the chunk (10 to 14% of a 1M-entity world's ingest time
// over 80 frames). The frame then takes a chunk that is ready; when none is (a burst, or no
// thread could be started), it maps one itself as before. A growing pool holds one such chunk
// more than it hands out.
#pragma once

#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

namespace tprop {

class BlockPool {
 public:
  // block_size: the bytes of a block (at most 1 MiB); blocks are aligned to `alignment` (a power
  // of two up to 4096).
  BlockPool(size_t block_size, size_t alignment);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // A block of block_size bytes (uninitialized); throws std::bad_alloc when memory runs out.
  void* allocate();
  // p must come from allocate() of this pool.
  void deallocate(void* p) noexcept;

  size_t block_size() const { return block_size_; }
  // Blocks handed out and not given back.
  size_t blocks_in_use() const;
  // Chunks blocks are carved from (the one faulted ahead not counted until it is used), and how
  // many of them were faulted ahead by the helper thread.
  size_t chunks() const;
  size_t chunks_faulted_ahead() const;
  // Whether a chunk faulted ahead waits for the pool's next growth.
  bool chunk_ready() const;
  // False under AddressSanitizer, where every block is an allocation of its own (so that a use
  // after free is still caught) and no chunk is made.
  static bool pools_blocks();

  static constexpr size_t kChunkBytes = size_t(2) << 20;

 private:
  struct Chunk {
    void* base;
    bool mapped;
  };
  friend class ChunkPrefaulter;
  // Makes `c` the chunk blocks are carved from (room in chunks_ assured by the caller).
  void start_chunk(Chunk c);
  void add_chunk();

  const size_t alignment_;
  const size_t block_size_;  // rounded up to the alignment
  mutable std::mutex mutex_;
  std::vector<Chunk> chunks_;
  void* free_ = nullptr;  // the free list, linked through the blocks' first bytes
  char* next_ = nullptr;  // the current chunk's blocks not handed out yet
  char* end_ = nullptr;
  size_t in_use_ = 0;
  // The chunk faulted ahead (base null when none), whether one is asked of the helper thread,
  // and how many were used.
  Chunk ready_{nullptr, false};
  bool ahead_asked_ = false;
  size_t faulted_ahead_ = 0;
};

// Storage of `bytes` for arrays that a big world reaches at random (a scene's per-entity
// records): from process-wide pools of 2 MiB pages, one a power-of-two size class from 4 KiB to
// 512 KiB (a request takes the smallest class that holds it); smaller and larger requests go to
// operator new. Give it back with the same size.
void* pooled_allocate(size_t bytes);
void pooled_deallocate(void* p, size_t bytes) noexcept;

// An allocator for std::vector and friends over pooled_allocate.
template <class T>
struct PooledAllocator {
  using value_type = T;
  PooledAllocator() = default;
  template <class U>
  PooledAllocator(const PooledAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    static_assert(alignof(T) <= 64, "pooled blocks are aligned to 64 bytes");
    if (n > size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(pooled_allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { pooled_deallocate(p, n * sizeof(T)); }
  template <class U>
  friend bool operator==(const PooledAllocator&, const PooledAllocator<U>&) noexcept {
    return true;
  }
};

}  // namespace tprop
