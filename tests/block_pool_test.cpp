#include "block_pool.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tprop {
namespace {

// Blocks are distinct, aligned, writable in full, and a block given back is handed out again
// before the pool grows; blocks_in_use counts what is out.
TEST(BlockPool, HandsOutDistinctAlignedBlocksAndReusesFreedOnes) {
  BlockPool pool(20480, 64);
  EXPECT_EQ(pool.block_size(), 20480u);
  std::vector<void*> blocks;
  // More than one chunk's worth (2 MiB / 20 KiB = 102 a chunk).
  for (int i = 0; i < 250; ++i) {
    void* p = pool.allocate();
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    std::memset(p, i & 0xff, 20480);
    blocks.push_back(p);
  }
  EXPECT_EQ(pool.blocks_in_use(), 250u);
  EXPECT_EQ(std::set<void*>(blocks.begin(), blocks.end()).size(), 250u);
  // No block overlaps another: each still holds its own pattern.
  for (int i = 0; i < 250; ++i) {
    const auto* b = static_cast<const uint8_t*>(blocks[i]);
    ASSERT_EQ(b[0], uint8_t(i)) << i;
    ASSERT_EQ(b[20479], uint8_t(i)) << i;
  }
  const size_t chunks = pool.chunks();
  for (int i = 0; i < 250; i += 2) pool.deallocate(blocks[i]);
  EXPECT_EQ(pool.blocks_in_use(), 125u);
  std::set<void*> freed;
  for (int i = 0; i < 250; i += 2) freed.insert(blocks[i]);
  for (int i = 0; i < 125; ++i) {
    void* p = pool.allocate();
    if (BlockPool::pools_blocks()) {
      EXPECT_TRUE(freed.count(p)) << i;
    }
    blocks[size_t(i) * 2] = p;
  }
  EXPECT_EQ(pool.chunks(), chunks);
  pool.deallocate(nullptr);  // as delete does
  EXPECT_EQ(pool.blocks_in_use(), 250u);
  for (void* p : blocks) pool.deallocate(p);  // (a sanitizer build allocates each)
}

#if defined(__linux__)
// Whether the pool's next chunk becomes ready within `ms` milliseconds (the helper thread's work).
bool chunk_ready_soon(const BlockPool& pool, int ms = 5000) {
  for (int waited_ms = 0; waited_ms < ms && !pool.chunk_ready(); ++waited_ms)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return pool.chunk_ready();
}

// A pool past its first chunk gets the next one mapped and faulted in by the helper thread, takes
// it when it fills the current one, and asks for another.
TEST(BlockPool, AGrowingPoolTakesItsNextChunkFaultedAhead) {
  if (!BlockPool::pools_blocks()) GTEST_SKIP() << "a sanitizer build allocates each block";
  BlockPool pool(size_t(1) << 20, 64);  // two blocks a chunk
  std::vector<void*> blocks;
  blocks.push_back(pool.allocate());
  blocks.push_back(pool.allocate());
  EXPECT_FALSE(chunk_ready_soon(pool, 50)) << "one chunk: nothing is faulted ahead";
  blocks.push_back(pool.allocate());  // the second chunk, mapped by the pool itself
  ASSERT_TRUE(chunk_ready_soon(pool));
  EXPECT_EQ(pool.chunks(), 2u);
  EXPECT_EQ(pool.chunks_faulted_ahead(), 0u);
  blocks.push_back(pool.allocate());
  blocks.push_back(pool.allocate());  // the third chunk: the one faulted ahead
  EXPECT_EQ(pool.chunks(), 3u);
  EXPECT_EQ(pool.chunks_faulted_ahead(), 1u);
  ASSERT_TRUE(chunk_ready_soon(pool));  // and the fourth is on its way
  for (size_t i = 0; i < blocks.size(); ++i) std::memset(blocks[i], int(i), size_t(1) << 20);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto* b = static_cast<const uint8_t*>(blocks[i]);
    EXPECT_EQ(b[0], uint8_t(i));
    EXPECT_EQ(b[(size_t(1) << 20) - 1], uint8_t(i));
  }
  EXPECT_EQ(std::set<void*>(blocks.begin(), blocks.end()).size(), blocks.size());
  for (void* p : blocks) pool.deallocate(p);
}

// A pool destroyed while its chunk is being faulted ahead waits for the helper thread (or takes
// its request back) and releases that chunk: no crash, no hang, whatever the timing.
TEST(BlockPool, APoolDestroyedWhileItsNextChunkIsFaultedAheadEndsCleanly) {
  if (!BlockPool::pools_blocks()) GTEST_SKIP() << "a sanitizer build allocates each block";
  for (int round = 0; round < 40; ++round) {
    BlockPool pool(size_t(1) << 20, 64);
    void* blocks[3] = {pool.allocate(), pool.allocate(), pool.allocate()};  // growing
    if (round % 4 == 0) {
      EXPECT_TRUE(chunk_ready_soon(pool));
    }
    for (void* p : blocks) pool.deallocate(p);
  }
}
#endif

TEST(BlockPool, RoundsASmallBlockUpToItsAlignment) {
  BlockPool pool(20, 16);
  EXPECT_EQ(pool.block_size(), 32u);
  void* a = pool.allocate();
  void* b = pool.allocate();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 16, 0u);
  EXPECT_NE(a, b);
  pool.deallocate(a);
  pool.deallocate(b);
  EXPECT_EQ(pool.blocks_in_use(), 0u);
}

// Sizes below, inside and above the pooled classes: each block is writable in full without
// touching another, and a vector over the allocator keeps its elements through its growth.
TEST(PooledAllocate, BlocksOfEverySizeAreDistinctAndWholeAndVectorsGrowThroughThem) {
  std::vector<std::pair<uint8_t*, size_t>> blocks;
  for (size_t bytes : {1u, 100u, 2047u, 2048u, 4096u, 4097u, 20000u, 65536u, 524288u, 524289u,
                       1048576u}) {
    for (int k = 0; k < 3; ++k) {
      auto* p = static_cast<uint8_t*>(pooled_allocate(bytes));
      ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
      std::memset(p, int(blocks.size() & 0xff), bytes);
      blocks.emplace_back(p, bytes);
    }
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    ASSERT_EQ(blocks[i].first[0], uint8_t(i)) << i;
    ASSERT_EQ(blocks[i].first[blocks[i].second - 1], uint8_t(i)) << i;
  }
  for (const auto& [p, bytes] : blocks) pooled_deallocate(p, bytes);

  std::vector<uint32_t, PooledAllocator<uint32_t>> v;
  for (uint32_t i = 0; i < 300000; ++i) v.push_back(i * 7u);  // through every class and past
  for (uint32_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i * 7u);
}

}  // namespace
}  // namespace tprop
