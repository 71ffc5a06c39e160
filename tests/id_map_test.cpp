#include "id_map.h"

#include <random>
#include <string>
#include <unordered_map>

#include <gtest/gtest.h>

namespace tprop {
namespace {

// The keys of a test, from an index below `count`: dense (the index itself), sparse (spread
// over all 32 bits, so that every key goes to the hash) or mixed (scattered below 300,000: the
// early ones above the direct array's bound go to the hash and stay there as the bound rises
// past them with the map's size).
enum class Keys { Dense, Sparse, Mixed };
uint32_t key_of(Keys keys, uint32_t index) {
  switch (keys) {
    case Keys::Dense: return index;
    case Keys::Sparse: return index * 0x9E3779B1u + 0x40000000u;
    case Keys::Mixed: return uint32_t((uint64_t(index) * 7919u) % 300007u);
  }
  return index;
}

// Checks every key of the test against the model; returns how many disagree.
size_t disagreements(const IdMap& map, const std::unordered_map<uint32_t, uint32_t>& model,
                     Keys keys, uint32_t count) {
  size_t bad = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t k = key_of(keys, i);
    const auto it = model.find(k);
    bad += map.find(k) != (it == model.end() ? IdMap::kMissing : it->second);
  }
  return bad + (map.size() != model.size());
}

class IdMapKeys : public ::testing::TestWithParam<Keys> {};

TEST_P(IdMapKeys, MatchesAMapThroughGrowthsWithEditsWhileTheOldTableDrains) {
  const Keys keys = GetParam();
  IdMap map;
  std::unordered_map<uint32_t, uint32_t> model;
  std::mt19937 rng(7);
  constexpr uint32_t kKeys = 40000;
  // Mostly inserts (growing through several tables), with overwrites and erases mixed in, and
  // everything checked often, drains under way included.
  for (int step = 0; step < 120000; ++step) {
    const uint32_t key = key_of(keys, rng() % kKeys);
    const uint32_t op = rng() % 10;
    if (op < 6) {
      map.set(key, uint32_t(step));
      model[key] = uint32_t(step);
    } else if (op < 9) {
      EXPECT_EQ(map.erase(key), model.erase(key) == 1) << "step " << step;
    } else {
      const auto it = model.find(key);
      ASSERT_EQ(map.find(key), it == model.end() ? IdMap::kMissing : it->second) << step;
    }
    if (step % 4999 == 0) {
      ASSERT_EQ(disagreements(map, model, keys, kKeys), 0u) << "step " << step;
    }
  }
  ASSERT_EQ(disagreements(map, model, keys, kKeys), 0u);
  // Emptied, in the middle of whatever state it is in.
  for (uint32_t i = 0; i < kKeys; ++i) map.erase(key_of(keys, i));
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.find(key_of(keys, 5)), IdMap::kMissing);
}

// insert_if_absent and take are find-then-set and find-then-erase in one probe: the same
// outcomes as those pairs on a model, through growths and drains.
TEST_P(IdMapKeys, InsertIfAbsentAndTakeActAsFindThenSetAndFindThenErase) {
  const Keys keys = GetParam();
  IdMap map;
  std::unordered_map<uint32_t, uint32_t> model;
  std::mt19937 rng(11);
  constexpr uint32_t kKeys = 30000;
  for (int step = 0; step < 100000; ++step) {
    const uint32_t key = key_of(keys, rng() % kKeys);
    const auto it = model.find(key);
    const uint32_t held = it == model.end() ? IdMap::kMissing : it->second;
    if (rng() % 3 != 0) {
      ASSERT_EQ(map.insert_if_absent(key, uint32_t(step)), held) << "step " << step;
      if (held == IdMap::kMissing) model[key] = uint32_t(step);  // a present value stays
    } else {
      ASSERT_EQ(map.take(key), held) << "step " << step;
      model.erase(key);
    }
    if (step % 9973 == 0) {
      ASSERT_EQ(disagreements(map, model, keys, kKeys), 0u) << "step " << step;
    }
  }
  ASSERT_EQ(disagreements(map, model, keys, kKeys), 0u);
  EXPECT_EQ(IdMap().take(3), IdMap::kMissing);  // an empty map, no table yet
}

INSTANTIATE_TEST_SUITE_P(Keys, IdMapKeys, ::testing::Values(Keys::Dense, Keys::Sparse, Keys::Mixed),
                         [](const ::testing::TestParamInfo<Keys>& p) {
                           return std::string(p.param == Keys::Dense    ? "Dense"
                                              : p.param == Keys::Sparse ? "Sparse"
                                                                           : "Mixed");
                         });

// A key the hash took while it lay beyond the direct array's bound stays the one entry for that
// key once the array has grown past it: found, overwritten, taken there, never doubled.
TEST(IdMap, AKeyHashedBeforeTheDirectArrayReachedItStaysOneEntry) {
  IdMap map;
  constexpr uint32_t kEarly = 150000;  // beyond the bound of an empty map (4,096)
  map.set(kEarly, 1);
  for (uint32_t k = 0; k < 100000; ++k) map.set(k, k + 10);  // the bound passes kEarly
  map.set(kEarly + 1, 2);  // inside the direct array now
  EXPECT_EQ(map.size(), 100002u);
  EXPECT_EQ(map.find(kEarly), 1u);
  EXPECT_EQ(map.insert_if_absent(kEarly, 7), 1u);
  map.set(kEarly, 3);
  EXPECT_EQ(map.find(kEarly), 3u);
  EXPECT_EQ(map.size(), 100002u);
  EXPECT_EQ(map.take(kEarly), 3u);
  EXPECT_EQ(map.find(kEarly), IdMap::kMissing);
  EXPECT_EQ(map.size(), 100001u);
  EXPECT_EQ(map.insert_if_absent(kEarly, 4), IdMap::kMissing);  // now a direct entry
  EXPECT_EQ(map.find(kEarly), 4u);
  EXPECT_EQ(map.find(kEarly + 1), 2u);
  EXPECT_EQ(map.size(), 100002u);
}

// Keys a few thousand to every 65,536 (a Decentraland world's scene << 16 | number) stay
// hashed: the direct array would span scenes 0 to 30 for 3% of the keys. Dense keys fill it.
TEST(IdMap, SparseKeysBelowTheBoundStayHashedWhileDenseOnesFillTheArray) {
  IdMap sparse;
  for (uint32_t number = 512; number < 1512; ++number)
    for (uint32_t scene = 0; scene < 1000; ++scene) sparse.set(scene << 16 | number, scene);
  EXPECT_EQ(sparse.size(), 1000000u);
  EXPECT_LE(sparse.direct_span(), 4096u);
  for (uint32_t scene = 0; scene < 1000; scene += 37)
    ASSERT_EQ(sparse.find(scene << 16 | 700), scene);
  IdMap dense;
  for (uint32_t k = 0; k < 1000000; ++k) dense.set(k, k);
  EXPECT_GE(dense.direct_span(), 1000000u);
  // Named by reserve(), even keys arriving sparse first go to the array.
  IdMap reserved;
  reserved.reserve(500000);
  for (uint32_t k = 999992;; k -= 8) {
    reserved.set(k, k);
    if (k < 8) break;
  }
  EXPECT_EQ(reserved.size(), 125000u);
  EXPECT_EQ(reserved.direct_span(), 999993u);
}

TEST(IdMap, SequentialIdsGrowWithoutLosingAny) {
  IdMap map;
  constexpr uint32_t kCount = 300000;  // past several growths
  for (uint32_t k = 0; k < kCount; ++k) {
    map.set(k, k ^ 0x5555u);
    // The entry just set and an early one, which may still sit in the draining table.
    ASSERT_EQ(map.find(k), k ^ 0x5555u);
    ASSERT_EQ(map.find(k / 3), (k / 3) ^ 0x5555u);
  }
  EXPECT_EQ(map.size(), kCount);
  for (uint32_t k = 0; k < kCount; k += 2) ASSERT_TRUE(map.erase(k));
  for (uint32_t k = 0; k < kCount; ++k)
    ASSERT_EQ(map.find(k), k % 2 ? (k ^ 0x5555u) : IdMap::kMissing);
  map.reserve(1000000);
  for (uint32_t k = 1; k < kCount; k += 2) ASSERT_EQ(map.find(k), k ^ 0x5555u);
  map.clear();
  EXPECT_EQ(map.find(1), IdMap::kMissing);
  map.set(1, 2);
  EXPECT_EQ(map.find(1), 2u);
}

}  // namespace
}  // namespace tprop
