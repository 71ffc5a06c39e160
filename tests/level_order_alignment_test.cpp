// LevelOrder's alignment (aligned(): levels that are chains or bundles of parallel chains, which
// the passes can scan) and its slot order (restore_slot_order(): wide levels that edits
// scattered, sorted back), each against its definition through edits, compaction and layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <set>

#include "level_order_test_support.h"

namespace tprop {
namespace {

using namespace level_order_test;

// Alignment (LevelOrder::aligned) by its definition, checked at every position: as many entries
// as the level above, each the attached child of the entry at its position there.
bool aligned_by_definition(const LevelOrder& order, uint32_t level) {
  const LevelOrder::Segment above = order.levels()[level - 1], seg = order.levels()[level];
  if (seg.count != above.count) return false;
  for (uint32_t p = 0; p < seg.count; ++p)
    if (order.parent_of(order.entries()[seg.begin + p]) != order.entries()[above.begin + p])
      return false;
  return true;
}

// `chains` parallel chains of `depth` links: link k of chain c is id first + c * depth + k.
void add_bundle(EntityStore& store, EntityId first, uint32_t chains, uint32_t depth) {
  for (uint32_t k = 0; k < depth; ++k)
    for (uint32_t c = 0; c < chains; ++c) {
      const EntityId id = first + c * depth + k;
      store.create(id);
      if (k > 0) store.set_parent(id, id - 1);
    }
}

TEST(LevelOrder, AlignmentFollowsEditsAsACheckOfEveryPositionWould) {
  uint32_t aligned_seen = 0, misaligned_seen = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
    const uint32_t chains = 1 + pick(6), depth = 20 + pick(40), ids = chains * depth;
    const uint32_t compact = seed % 3 == 0 ? 0 : seed % 3 == 1 ? 2 : UINT32_MAX;
    EntityStore store;
    LevelOrder order;
    add_bundle(store, 0, chains, depth);
    (void)store.take_changes();
    order.rebuild(store);
    for (int frame = 0; frame < 120; ++frame) {
      // Mostly small edits, so that most levels stay aligned between the checks.
      const uint32_t edits = pick(4);
      for (uint32_t e = 0; e < edits; ++e) {
        const EntityId id = pick(ids + ids / 4);
        switch (pick(8)) {
          case 0: store.destroy(id); break;
          case 1: store.create(id); break;
          case 2: store.remove(id, Component::Parent); break;
          case 3: store.set_parent(id, id >= ids ? pick(ids) : id - 1); break;  // back in line
          default: store.set_parent(id, pick(ids + ids / 4)); break;
        }
      }
      apply_frame(store, order, compact);
      // Asked about every frame, every few frames, or once in a while: what edits touched in
      // between piles up.
      if (frame % (1 + seed % 4) != 0) continue;
      for (uint32_t l = 1; l < order.level_count(); ++l) {
        const bool expected = aligned_by_definition(order, l);
        ASSERT_EQ(order.aligned(l), expected)
            << "seed " << seed << " frame " << frame << " level " << l;
        ++(expected ? aligned_seen : misaligned_seen);
      }
    }
  }
  // Both answers were reached, often.
  EXPECT_GE(aligned_seen, 1000u);
  EXPECT_GE(misaligned_seen, 1000u);
}

TEST(LevelOrder, AskingAgainAfterAnEditChecksOnlyWhatTheEditTouched) {
  EntityStore store;
  LevelOrder order;
  add_bundle(store, 0, 10, 200);
  apply_frame(store, order);
  for (uint32_t l = 1; l < 200; ++l) ASSERT_TRUE(order.aligned(l)) << l;
  const uint64_t first = order.alignment_checks();
  EXPECT_EQ(first, 199u * 10u);  // every position once
  // Chain 3 loses its last link: the deepest level is one short, the rest stay aligned.
  store.destroy(3 * 200 + 199);
  apply_frame(store, order);
  for (uint32_t l = 1; l < 199; ++l) ASSERT_TRUE(order.aligned(l)) << l;
  EXPECT_FALSE(order.aligned(199));
  EXPECT_LE(order.alignment_checks() - first, 4u);
  // Chain 5 re-parented under chain 2's link at the same depth: every level below keeps its
  // count, and level 60 misfits at two positions at most.
  store.set_parent(5 * 200 + 60, 2 * 200 + 59);
  apply_frame(store, order);
  const uint64_t second = order.alignment_checks();
  for (uint32_t l = 1; l < 199; ++l)
    ASSERT_EQ(order.aligned(l), aligned_by_definition(order, l)) << l;
  EXPECT_FALSE(order.aligned(60));
  EXPECT_LE(order.alignment_checks() - second, 8u);
}

// An entity joining a level can make the entry below it fit: that entry is not edited itself.
TEST(LevelOrder, AnEntityJoiningALevelRefitsTheEntryBelowIt) {
  EntityStore store;
  LevelOrder order;
  store.create(0);
  for (EntityId id = 1; id <= 4; ++id) store.create(id);
  store.set_parent(1, 0);  // Y, level 1
  store.set_parent(2, 0);  // Z, level 1
  store.set_parent(3, 2);  // level 2
  store.set_parent(4, 3);  // X, level 3
  apply_frame(store, order, 0);
  // X re-parented higher up keeps its level; level 2 empties.
  store.set_parent(4, 1);
  store.destroy(3);
  apply_frame(store, order, 0);
  ASSERT_EQ(order.level_of(4), 3u);
  ASSERT_EQ(order.levels()[2].count, 0u);
  EXPECT_FALSE(order.aligned(3));
  // Y goes below Z, to level 2, right above X, which stays: level 3 fits level 2 now.
  store.set_parent(1, 2);
  apply_frame(store, order, 0);
  ASSERT_EQ(order.level_of(1), 2u);
  ASSERT_EQ(order.level_of(4), 3u);
  ASSERT_TRUE(aligned_by_definition(order, 3));
  EXPECT_TRUE(order.aligned(3));
}

// Removals lower the live count without laying the array out; the first entry of a new bottom
// level can then be what finds the threshold passed. The layout keeps that level for it (it
// dropped the level, empty still, and the entry was written past the array).
TEST(LevelOrder, ALayoutStartedByANewBottomLevelKeepsThatLevel) {
  EntityStore store;
  LevelOrder order;
  store.create(1000000);
  store.create(1000001);
  store.set_parent(1000001, 1000000);
  apply_frame(store, order);
  // Levels 0 and 1 relocate by turns: abandoned space piles up.
  for (EntityId i = 0; i < 40000; ++i) {
    store.create(i);
    store.create(40000 + i);
    store.set_parent(40000 + i, i);
  }
  apply_frame(store, order);
  for (EntityId i = 0; i < 80000; ++i) store.destroy(i);
  apply_frame(store, order);
  const uint32_t begin_before = order.levels()[1].begin;
  store.create(1000002);
  store.set_parent(1000002, 1000001);  // level 2, new
  apply_frame(store, order);
  ASSERT_NE(order.levels()[1].begin, begin_before);  // the array was laid out afresh
  EXPECT_EQ(order.level_of(store.slot_of(1000002)), 2u);
  expect_matches_sort(store, order, "after the layout");
}

// A level wider than kAlignedTrackedMax is dropped when edited and counted afresh when asked
// about; misfits kept for other levels survive the array being laid out afresh.
TEST(LevelOrder, AlignmentOfWideLevelsAndOfALaidOutArrayStaysExact) {
  constexpr uint32_t kWide = LevelOrder::kAlignedTrackedMax + 800;
  EntityStore store;
  LevelOrder order;
  add_bundle(store, 0, kWide, 3);      // levels 0 to 2 of kWide entries each, aligned
  add_bundle(store, 100000, 4, 12);    // four chains of 12 beside them
  apply_frame(store, order);
  EXPECT_TRUE(order.aligned(1));
  EXPECT_TRUE(order.aligned(2));
  // The small bundle's last chain hangs its link 6 below chain 2's link 5: level 6 keeps its
  // count and misfits at its last position alone.
  store.set_parent(100000 + 3 * 12 + 6, 100000 + 2 * 12 + 5);
  // Half of the wide bundle's middle links go.
  for (uint32_t c = 0; c < kWide; c += 2) store.destroy(c * 3 + 1);
  apply_frame(store, order);
  for (uint32_t l = 1; l < order.level_count(); ++l)
    ASSERT_EQ(order.aligned(l), aligned_by_definition(order, l)) << l;
  ASSERT_FALSE(order.aligned(6));
  // Two levels growing by turns relocate again and again until the array is laid out afresh
  // (level 6's segment moves without being edited).
  const uint32_t begin_before = order.levels()[6].begin;
  const uint64_t checks_before = order.alignment_checks();
  for (EntityId k = 0; k < 153100; ++k) {
    const EntityId id = 200000 + k;
    store.create(id);
    store.set_parent(id, k % 2 ? 0 : 4);  // levels 1 and 2 (4: chain 1's link 1)
  }
  apply_frame(store, order);
  ASSERT_NE(order.levels()[6].begin, begin_before);
  for (uint32_t l = 3; l < order.level_count(); ++l)
    ASSERT_EQ(order.aligned(l), aligned_by_definition(order, l)) << l;
  EXPECT_FALSE(order.aligned(6));  // from its kept misfits: nothing checked level 6 again
  EXPECT_LE(order.alignment_checks() - checks_before, 64u);
  // Back in line: level 6 fits again, which only the misfit moved with it can tell.
  store.set_parent(100000 + 3 * 12 + 6, 100000 + 3 * 12 + 5);
  apply_frame(store, order);
  ASSERT_TRUE(aligned_by_definition(order, 6));
  EXPECT_TRUE(order.aligned(6));
  // The wide levels, counted afresh.
  EXPECT_EQ(order.aligned(1), aligned_by_definition(order, 1));
  EXPECT_EQ(order.aligned(2), aligned_by_definition(order, 2));
}

// The slots of level `l`, in the order's order.
std::vector<uint32_t> level_entries(const LevelOrder& order, uint32_t l) {
  const LevelOrder::Segment seg = order.levels()[l];
  return {order.entries().begin() + seg.begin, order.entries().begin() + seg.begin + seg.count};
}

// Spawns and despawns scatter a wide level (an entity joins at the level's end, a leaving
// one's place takes the level's last); once an eighth of it is scattered (divisor 8 here),
// restore_slot_order() sorts it, and nothing else about the order changes.
TEST(LevelOrder, WideLevelsScatteredByEditsReturnToSlotOrder) {
  constexpr uint32_t kRoots = 64, kChildren = 12000, kMin = 10000;
  EntityStore store;
  LevelOrder order;
  for (EntityId r = 0; r < kRoots; ++r) store.create(r);
  // Three levels: the roots, the wide one, and a narrow one below it.
  for (EntityId c = 0; c < kChildren; ++c) {
    store.create(1000 + c);
    store.set_parent(1000 + c, c % kRoots);
  }
  for (EntityId g = 0; g < 500; ++g) {
    store.create(100000 + g);
    store.set_parent(100000 + g, 1000 + g * 7);
  }
  apply_frame(store, order);
  ASSERT_EQ(order.level_count(), 3u);
  const std::vector<uint32_t> fresh = level_entries(order, 1);
  EXPECT_TRUE(std::is_sorted(fresh.begin(), fresh.end()));
  EXPECT_EQ(order.scattered(1), 0u);
  EXPECT_FALSE(order.aligned(2));  // from here on, alignment is kept through the edits
  EXPECT_EQ(order.restore_slot_order(1, kMin), 0u) << "nothing scattered yet";

  std::mt19937 rng(5);
  EntityId next = 200000;
  std::vector<EntityId> children;
  for (EntityId c = 0; c < kChildren; ++c) children.push_back(1000 + c);
  // `n` children despawned in one frame, as many spawned under random roots in the next (a
  // slot freed and taken again within one frame keeps its entry, which scatters nothing).
  const auto churn = [&](int n) {
    std::vector<size_t> victims;
    for (int k = 0; k < n; ++k) {
      const size_t victim = rng() % children.size();
      if (std::find(victims.begin(), victims.end(), victim) != victims.end()) continue;
      victims.push_back(victim);
      store.destroy(children[victim]);
    }
    apply_frame(store, order);
    for (const size_t victim : victims) {
      children[victim] = next;
      store.create(next);
      store.set_parent(next, EntityId(rng() % kRoots));
      ++next;
    }
    apply_frame(store, order);
  };
  uint32_t frames = 0;
  while (uint64_t(order.scattered(1)) * 8 < order.levels()[1].count) {
    ASSERT_LT(++frames, 100u) << "the edits scatter the level";
    EXPECT_EQ(order.restore_slot_order(8, kMin), 0u) << "below an eighth, frame " << frames;
    churn(100);
  }
  const std::vector<uint32_t> before = level_entries(order, 1);
  ASSERT_FALSE(std::is_sorted(before.begin(), before.end()));
  const std::vector<uint32_t> narrow_before = level_entries(order, 2);
  order.take_moved();

  EXPECT_EQ(order.restore_slot_order(8, kChildren + 1), 0u) << "narrower than asked for";
  EXPECT_EQ(order.restore_slot_order(8, kMin), before.size());
  std::vector<uint32_t> after = level_entries(order, 1);
  EXPECT_TRUE(std::adjacent_find(after.begin(), after.end(), std::greater_equal<uint32_t>()) ==
              after.end())
      << "strictly increasing slots";
  std::vector<uint32_t> sorted = before;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(after, sorted) << "the same entities";
  EXPECT_EQ(order.scattered(1), 0u);
  EXPECT_EQ(level_entries(order, 2), narrow_before) << "other levels stay as they are";
  const LevelOrder::Segment seg = order.levels()[1];
  ASSERT_EQ(order.rewritten().size(), 1u);
  EXPECT_EQ(order.rewritten()[0], std::make_pair(seg.begin, seg.begin + seg.count));
  EXPECT_TRUE(order.moved().empty()) << "no entity changed level or parent";
  expect_matches_sort(store, order, "sorted");
  for (uint32_t l = 1; l < order.level_count(); ++l)
    EXPECT_EQ(order.aligned(l), aligned_by_definition(order, l)) << l;
  EXPECT_EQ(order.restore_slot_order(1, kMin), 0u) << "nothing scattered any more";
  // Edits go on from the sorted positions.
  for (int frame = 0; frame < 3; ++frame) {
    churn(200);
    expect_matches_sort(store, order, "edited after sorting");
    for (uint32_t l = 1; l < order.level_count(); ++l)
      EXPECT_EQ(order.aligned(l), aligned_by_definition(order, l)) << l;
  }
}

// Levels narrower than asked for are never reordered, however scattered.
TEST(LevelOrder, NarrowLevelsKeepTheOrderEditsLeft) {
  EntityStore store;
  LevelOrder order;
  for (EntityId r = 0; r < 2000; ++r) store.create(r);
  apply_frame(store, order);
  for (EntityId r = 0; r < 2000; r += 2) store.destroy(r);
  apply_frame(store, order);
  for (EntityId r = 5000; r < 6000; ++r) store.create(r);
  apply_frame(store, order);
  ASSERT_GT(order.scattered(0), 0u);
  const std::vector<uint32_t> before = level_entries(order, 0);
  ASSERT_GE(order.scattered(0) * 4, before.size());
  EXPECT_EQ(order.restore_slot_order(4, 2001), 0u);
  EXPECT_EQ(level_entries(order, 0), before);
  EXPECT_EQ(order.restore_slot_order(4, 2000), 2000u) << "wide enough";
  const std::vector<uint32_t> after = level_entries(order, 0);
  EXPECT_TRUE(std::is_sorted(after.begin(), after.end()));
}

}  // namespace
}  // namespace tprop
