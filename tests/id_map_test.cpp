#include "id_map.h"

#include <random>
#include <unordered_map>

#include <gtest/gtest.h>

namespace tprop {
namespace {

// Checks every key ever used against the model; returns how many disagree.
size_t disagreements(const IdMap& map, const std::unordered_map<uint32_t, uint32_t>& model,
                     uint32_t key_range) {
  size_t bad = 0;
  for (uint32_t k = 0; k < key_range; ++k) {
    const auto it = model.find(k);
    bad += map.find(k) != (it == model.end() ? IdMap::kMissing : it->second);
  }
  return bad + (map.size() != model.size());
}

TEST(IdMap, MatchesAMapThroughGrowthsWithEditsWhileTheOldTableDrains) {
  IdMap map;
  std::unordered_map<uint32_t, uint32_t> model;
  std::mt19937 rng(7);
  constexpr uint32_t kKeys = 40000;
  // Mostly inserts (growing through several tables), with overwrites and erases mixed in, and
  // everything checked often, drains under way included.
  for (int step = 0; step < 120000; ++step) {
    const uint32_t key = rng() % kKeys;
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
      ASSERT_EQ(disagreements(map, model, kKeys), 0u) << "step " << step;
    }
  }
  ASSERT_EQ(disagreements(map, model, kKeys), 0u);
  // Emptied, in the middle of whatever state it is in.
  for (uint32_t k = 0; k < kKeys; ++k) map.erase(k);
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.find(5), IdMap::kMissing);
}

// insert_if_absent and take are find-then-set and find-then-erase in one probe: the same
// outcomes as those pairs on a model, through growths and drains.
TEST(IdMap, InsertIfAbsentAndTakeActAsFindThenSetAndFindThenErase) {
  IdMap map;
  std::unordered_map<uint32_t, uint32_t> model;
  std::mt19937 rng(11);
  constexpr uint32_t kKeys = 30000;
  for (int step = 0; step < 100000; ++step) {
    const uint32_t key = rng() % kKeys;
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
      ASSERT_EQ(disagreements(map, model, kKeys), 0u) << "step " << step;
    }
  }
  ASSERT_EQ(disagreements(map, model, kKeys), 0u);
  EXPECT_EQ(IdMap().take(3), IdMap::kMissing);  // an empty map, no table yet
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
