#include "block_pool.h"

#include <cstdint>
#include <cstring>
#include <set>
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
