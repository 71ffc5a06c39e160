#include "slot_vector.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace tprop {
namespace {

struct Wide {
  uint32_t a = 7;
  float b[15] = {};
};
static_assert(sizeof(Wide) == 64);

TEST(SlotVector, GrowingPastTwoMebibytesKeepsEveryElementAndThenStaysPut) {
  SlotVector<uint32_t> v;
  for (uint32_t i = 0; i < 1000; ++i) v.push_back(i * 3);  // small: ordinary heap storage
  const size_t big = (size_t(8) << 20) / sizeof(uint32_t);  // 8 MiB worth
  for (uint32_t i = 1000; i < big; ++i) v.push_back(i * 3);
  const uint32_t* at = v.data();
  // Growing by eight times more moves nothing once the array is mapped.
  v.resize(8 * big, 5u);
  EXPECT_EQ(v.data(), at);
  v.reserve(32 * big);
  EXPECT_EQ(v.data(), at);
  EXPECT_GE(v.capacity(), 32 * big);
  ASSERT_EQ(v.size(), 8 * big);
  bool same = true;
  for (uint32_t i = 0; i < big; ++i) same = same && v[i] == i * 3;
  for (size_t i = big; i < 8 * big; ++i) same = same && v[i] == 5u;
  EXPECT_TRUE(same);
}

TEST(SlotVector, NewElementsTakeTheirDefaultOrTheGivenValue) {
  SlotVector<Wide> v;
  v.resize(3);
  EXPECT_EQ(v[2].a, 7u);
  v.emplace_back();
  v.back().a = 9;
  v.resize(100000, Wide{1, {2.0f}});  // past 2 MiB
  EXPECT_EQ(v[3].a, 9u);
  EXPECT_EQ(v[99999].a, 1u);
  EXPECT_EQ(v[99999].b[0], 2.0f);
  v.assign(10, Wide{});
  EXPECT_EQ(v.size(), 10u);
  EXPECT_EQ(v[0].a, 7u);
  v.pop_back();
  EXPECT_EQ(v.size(), 9u);
  v.clear();
  EXPECT_TRUE(v.empty());
}

TEST(SlotVector, CopiesAreIndependentAndMovesHandTheStorageOver) {
  SlotVector<uint32_t> big;
  big.resize(1 << 20);  // 4 MiB: mapped
  for (uint32_t i = 0; i < big.size(); ++i) big[i] = i;
  SlotVector<uint32_t> copy = big;
  copy[5] = 0;
  EXPECT_EQ(big[5], 5u);
  EXPECT_EQ(copy[(1 << 20) - 1], (1u << 20) - 1);
  const uint32_t* storage = big.data();
  SlotVector<uint32_t> moved = std::move(big);
  EXPECT_EQ(moved.data(), storage);
  EXPECT_EQ(moved[12345], 12345u);
  SlotVector<uint32_t> small;
  small.push_back(4);
  small = std::move(moved);
  EXPECT_EQ(small.size(), size_t(1) << 20);
  small = copy;  // copy-assigned over mapped storage
  EXPECT_EQ(small[5], 0u);
  std::size_t sum = 0;
  for (uint32_t x : small) sum += x;
  EXPECT_EQ(sum, (size_t(1 << 20) * ((1 << 20) - 1)) / 2 - 5);
}

}  // namespace
}  // namespace tprop
