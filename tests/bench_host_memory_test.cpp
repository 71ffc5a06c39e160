// tprop_bench's host floor, in-process: the random cycle its walks follow, and the memory it
// spreads them over (its timings are figures for the report, never asserted beyond being there).
#include <gtest/gtest.h>

#include <vector>

#include "bench_host_memory.h"

namespace tprop::bench {
namespace {

// Follows next from 0 and counts the steps back to 0, failing on a repeat before that.
uint32_t cycle_length(const std::vector<uint32_t>& next) {
  std::vector<bool> seen(next.size(), false);
  uint32_t at = 0, steps = 0;
  do {
    EXPECT_LT(at, next.size());
    if (at >= next.size() || seen[at]) return 0;
    seen[at] = true;
    at = next[at];
    ++steps;
  } while (at != 0);
  return steps;
}

TEST(HostMemoryFloor, ARandomCycleVisitsEveryLineOnceBeforeComingBack) {
  for (const uint32_t n : {2u, 3u, 17u, 1000u, 65536u}) {
    SCOPED_TRACE(n);
    const std::vector<uint32_t> next = random_cycle(n, 7);
    ASSERT_EQ(next.size(), n);
    EXPECT_EQ(cycle_length(next), n);
    for (uint32_t i = 0; i < n; ++i) EXPECT_NE(next[i], i) << "a line that leads to itself";
  }
}

TEST(HostMemoryFloor, ARandomCycleIsTheSeedsAlone) {
  EXPECT_EQ(random_cycle(1000, 7), random_cycle(1000, 7));
  EXPECT_NE(random_cycle(1000, 7), random_cycle(1000, 8));
  // Not the identity's neighbour either: far fewer than half the lines lead to the next one.
  const std::vector<uint32_t> next = random_cycle(1000, 7);
  uint32_t sequential = 0;
  for (uint32_t i = 0; i < 1000; ++i) sequential += next[i] == (i + 1) % 1000;
  EXPECT_LT(sequential, 50u);
}

TEST(HostMemoryFloor, TheLinesSpreadOverTheMemoryAskedForInWholeHugePages) {
  // One line every 64 bytes below a million lines; sizes rounded down to 2 MiB, at least 4 MiB.
  for (const auto& [asked, bytes] : {std::pair<uint64_t, uint64_t>{4u << 20, 4u << 20},
                                     {5u << 20, 4u << 20},
                                     {1u << 20, 4u << 20},
                                     {8u << 20, 8u << 20}}) {
    SCOPED_TRACE(asked);
    const Result<HostMemoryFloor> floor = measure_host_memory_floor(asked);
    ASSERT_TRUE(floor.ok()) << floor.error().message;
    EXPECT_EQ(floor->bytes, bytes);
    EXPECT_EQ(floor->lines, bytes / 64);
    EXPECT_GT(floor->latency_ns, 0.0);
    EXPECT_GT(floor->ns_per_line, 0.0);
    EXPECT_TRUE(floor->walks == 4 || floor->walks == 8 || floor->walks == 16 ||
                floor->walks == 32)
        << floor->walks;
  }
}

}  // namespace
}  // namespace tprop::bench
