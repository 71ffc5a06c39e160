// A BlockPool growth that runs out of memory throws std::bad_alloc and leaves the pool as it was
// (in oom_tests: alloc_failure.h).
#include <gtest/gtest.h>

#include <new>

#include "alloc_failure.h"
#include "block_pool.h"

namespace tprop {
namespace {

// Each allocation the pool's second chunk makes fails in turn, until one growth goes through:
// the helper thread's first allocations included, when this test is the first in its process
// to grow a pool past one chunk (it is listed first in oom_tests for that).
TEST(BlockPoolOutOfMemory, AGrowthThatRunsOutOfMemoryLeavesThePoolAsItWas) {
  if (!BlockPool::pools_blocks()) GTEST_SKIP() << "a sanitizer build allocates each block";
  BlockPool pool(size_t(1) << 20, 64);  // two blocks a chunk
  void* const first[2] = {pool.allocate(), pool.allocate()};
  ASSERT_EQ(pool.chunks(), 1u);
  void* grown = nullptr;
  for (long k = 0; k < 64 && !grown; ++k) {
    alloc_failure::arm(k, false);
    try {
      grown = pool.allocate();
    } catch (const std::bad_alloc&) {
    }
    alloc_failure::disarm();
    if (!grown) {
      EXPECT_EQ(pool.chunks(), 1u) << "allocation " << k << " failed";
      EXPECT_EQ(pool.blocks_in_use(), 2u) << "allocation " << k << " failed";
    }
  }
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(pool.chunks(), 2u);
  EXPECT_EQ(pool.blocks_in_use(), 3u);
  pool.deallocate(grown);
  for (void* p : first) pool.deallocate(p);
}

}  // namespace
}  // namespace tprop
