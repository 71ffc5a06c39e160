// LevelOrder, the incrementally updated depth order, against sort_by_depth(), which computes
// the same order from scratch: after every frame of random edits (creates, destroys, re-parents
// to live, unknown and own ids, cycles made and broken) both must give every entity the same
// level and attached parent, the same counts, and the segments must hold exactly each level.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <set>

#include "level_order_test_support.h"

namespace tprop {
namespace {

using namespace level_order_test;

TEST(LevelOrder, MatchesTheSortAfterEveryFrameOfRandomEdits) {
  uint32_t most_cycles = 0, most_unknown = 0, deepest = 0, most_deep_roots = 0;
  size_t most_queued = 0;
  uint32_t sorted = 0;
  // Compaction never, a few entities a frame, and all of it every frame.
  for (uint64_t seed = 1; seed <= 9; ++seed) {
    const uint32_t compact = seed % 3 == 0 ? 0 : seed % 3 == 1 ? 3 : UINT32_MAX;
    std::mt19937_64 rng(seed);
    const uint32_t ids = seed % 2 ? 60 : 400;  // few ids: many cycles; more: deeper trees
    auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
    EntityStore store;
    LevelOrder order;
    for (uint32_t id = 0; id < ids / 2; ++id) store.create(id);
    (void)store.take_changes();
    order.rebuild(store);
    expect_matches_sort(store, order, "after rebuild");
    for (int frame = 0; frame < 150; ++frame) {
      const uint32_t edits = 1 + pick(seed % 3 == 0 ? 40 : 8);
      for (uint32_t e = 0; e < edits; ++e) {
        const EntityId id = pick(ids);
        switch (pick(10)) {
          case 0: case 1: store.create(id); break;
          case 2: store.destroy(id); break;
          case 3: store.remove(id, Component::Parent); break;
          case 4: store.set_parent(id, id); break;  // a self-cycle
          default: store.set_parent(id, pick(ids + ids / 8)); break;  // unknown ids too
        }
      }
      apply_frame(store, order, compact);
      // Seeds 4 and up put a level back in slot order whenever one of its entries in four is
      // scattered, whatever its size: sorts amid cycles, compaction and layouts.
      if (seed >= 4) sorted += order.restore_slot_order(4, 1) > 0;
      const std::string when = "seed " + std::to_string(seed) + " frame " + std::to_string(frame);
      expect_matches_sort(store, order, when.c_str());
      if (HasFatalFailure()) return;
      most_cycles = std::max(most_cycles, order.cycles_broken());
      most_unknown = std::max(most_unknown, order.unknown_parents());
      most_deep_roots = std::max(most_deep_roots, order.deep_roots());
      most_queued = std::max(most_queued, order.slack_queued());
      deepest = std::max(deepest, order.level_count());
    }
    // Whatever was left, compaction ends at the exact depths.
    order.compact(store, UINT32_MAX);
    EXPECT_EQ(order.slack_queued(), 0u);
    expect_matches_sort(store, order, "compacted at the end");
  }
  // The edits did reach the cases that matter.
  EXPECT_GE(most_cycles, 2u);
  EXPECT_GE(most_unknown, 2u);
  EXPECT_GE(deepest, 6u);
  EXPECT_GE(most_deep_roots, 2u);
  EXPECT_GE(most_queued, 10u);
  EXPECT_GE(sorted, 20u);
}

// Every slot whose level or attached parent an apply() changed is listed in moved(), and only
// those and the edited slots; compaction's moves up are not (they change neither the parent nor
// the LocalToWorld).
TEST(LevelOrder, MovedListsEveryEntityWhoseLevelOrParentChanged) {
  for (const uint32_t compact : {0u, 5u, UINT32_MAX}) {
    std::mt19937_64 rng(7);
    EntityStore store;
    LevelOrder order;
    for (uint32_t id = 0; id < 300; ++id) store.create(id);
    for (uint32_t id = 1; id < 300; ++id) store.set_parent(id, static_cast<EntityId>(rng() % id));
    (void)store.take_changes();
    order.rebuild(store);
    uint32_t moved_in_all = 0;
    for (int frame = 0; frame < 60; ++frame) {
      std::vector<uint32_t> level(store.slot_capacity()), parent(store.slot_capacity());
      for (uint32_t s = 0; s < store.slot_capacity(); ++s) {
        level[s] = order.level_of(s);
        parent[s] = order.parent_of(s);
      }
      std::set<uint32_t> edited;
      for (int e = 0; e < 3; ++e) {
        const EntityId id = static_cast<EntityId>(rng() % 300);
        store.set_parent(id, static_cast<EntityId>(rng() % 300));
        edited.insert(store.slot_of(id));
      }
      const StoreChanges changes = store.take_changes();
      order.take_moved();
      order.apply(store, changes.structural);
      const std::set<uint32_t> moved(order.moved().begin(), order.moved().end());
      EXPECT_EQ(moved.size(), order.moved().size()) << "each once";
      for (uint32_t s = 0; s < store.slot_capacity(); ++s) {
        const bool changed = order.level_of(s) != level[s] || order.parent_of(s) != parent[s];
        if (changed) {
          EXPECT_TRUE(moved.count(s)) << "frame " << frame << ": slot " << s;
        }
        if (moved.count(s)) {
          EXPECT_TRUE(changed || edited.count(s) || order.cycles_broken())
              << "frame " << frame << ": slot " << s << " listed, unchanged";
        }
      }
      moved_in_all += static_cast<uint32_t>(moved.size());
      order.take_moved();
      order.compact(store, compact);
      EXPECT_TRUE(order.moved().empty());
      expect_matches_sort(store, order, "after compaction");
      if (HasFatalFailure()) return;
    }
    EXPECT_GT(moved_in_all, 180u);
  }
}

// A despawned parent's children become roots where they stand: neither they nor their subtrees
// move. Compaction then brings them up, a bounded number a frame, parents before children.
TEST(LevelOrder, OrphanedSubtreesStayWhereTheyStandUntilCompacted) {
  EntityStore store;
  LevelOrder order;
  for (EntityId id = 1; id <= 5; ++id) {
    store.create(id);
    if (id > 1) store.set_parent(id, id - 1);  // 1 - 2 - 3 - 4 - 5
  }
  apply_frame(store, order, 0);
  store.destroy(2);
  apply_frame(store, order, 0);
  EXPECT_EQ(std::set<uint32_t>(order.moved().begin(), order.moved().end()),
            std::set<uint32_t>{store.slot_of(3)});
  EXPECT_EQ(order.parent_of(store.slot_of(3)), kNone);
  EXPECT_EQ(order.level_of(store.slot_of(3)), 2u) << "a root where it stood";
  EXPECT_EQ(order.level_of(store.slot_of(5)), 4u);
  EXPECT_EQ(order.deep_roots(), 1u);
  EXPECT_EQ(order.roots(), 2u);
  expect_matches_sort(store, order, "orphaned, not compacted");
  order.take_moved();
  EXPECT_EQ(order.compact(store, 2), 2u);
  EXPECT_EQ(order.compacted(), 2u);
  EXPECT_EQ(order.level_of(store.slot_of(3)), 0u);
  EXPECT_EQ(order.level_of(store.slot_of(4)), 1u);
  EXPECT_EQ(order.level_of(store.slot_of(5)), 4u) << "beyond the budget: next frame";
  EXPECT_EQ(order.deep_roots(), 0u);
  expect_matches_sort(store, order, "compacted in part");
  EXPECT_EQ(order.compact(store, UINT32_MAX), 1u);
  EXPECT_EQ(order.slack_queued(), 0u);
  expect_matches_sort(store, order, "compacted");
}

// Moving deeper pushes down only what would stand at or above its new parent's level; a child
// already deeper stays.
TEST(LevelOrder, MovingDeeperPushesOnlyWhatMustMove) {
  EntityStore store;
  LevelOrder order;
  // 1 - 2 - 3 - 4, and 4 gets a child 5 after 2 is re-parented to the root: 3 and 4 then stand
  // a level deeper than their depth.
  for (EntityId id = 1; id <= 4; ++id) {
    store.create(id);
    if (id > 1) store.set_parent(id, id - 1);
  }
  apply_frame(store, order, 0);
  store.remove(2, Component::Parent);  // 2 stays at level 1 as a root
  apply_frame(store, order, 0);
  EXPECT_EQ(order.level_of(store.slot_of(4)), 3u);
  // 10 - 11, then 2 goes below 11: 2 at level 2 (deeper than 1), 3 must go to 3? It stands at
  // 2: pushed to 3; 4 stands at 3: pushed to 4.
  store.create(10);
  store.create(11);
  store.set_parent(11, 10);
  apply_frame(store, order, 0);
  order.take_moved();
  store.set_parent(2, 11);
  const StoreChanges changes = store.take_changes();
  order.apply(store, changes.structural);
  EXPECT_EQ(order.level_of(store.slot_of(2)), 2u);
  EXPECT_EQ(order.level_of(store.slot_of(3)), 3u);
  EXPECT_EQ(order.level_of(store.slot_of(4)), 4u);
  EXPECT_EQ(order.moved().size(), 3u);
  expect_matches_sort(store, order, "pushed");
  // Up again below 10: nothing but 2 moves (it keeps its level, below 10's).
  order.take_moved();
  store.set_parent(2, 10);
  const StoreChanges again = store.take_changes();
  order.apply(store, again.structural);
  EXPECT_EQ(std::vector<uint32_t>(order.moved().begin(), order.moved().end()),
            std::vector<uint32_t>{store.slot_of(2)});
  EXPECT_EQ(order.level_of(store.slot_of(2)), 2u);
  EXPECT_EQ(order.level_of(store.slot_of(4)), 4u);
  expect_matches_sort(store, order, "kept");
  order.compact(store, UINT32_MAX);
  EXPECT_EQ(order.level_of(store.slot_of(4)), 3u);
  expect_matches_sort(store, order, "compacted");
}

// A chain that loses its head every frame and grows at its foot never stands exact under a
// small budget (each frame would move all of it up a level); once its levels stand twice as
// deep as its depth (plus 64), compaction catches up at once, so the levels stay within that
// instead of growing a level a frame.
TEST(LevelOrder, LevelsOfAChainLosingItsHeadEveryFrameStayBounded) {
  EntityStore store;
  LevelOrder order;
  constexpr EntityId kLength = 300;
  for (EntityId id = 0; id < kLength; ++id) {
    store.create(id);
    if (id) store.set_parent(id, id - 1);
  }
  apply_frame(store, order);
  uint32_t most_levels = 0, catch_ups = 0;
  for (EntityId head = 0; head < 3000; ++head) {
    store.destroy(head);
    store.create(head + kLength);
    store.set_parent(head + kLength, head + kLength - 1);
    apply_frame(store, order, 4);
    catch_ups += order.compacted() > kLength / 2;
    most_levels = std::max(most_levels, order.level_count());
    if (head % 500 == 0) {
      expect_matches_sort(store, order, "a chain moving down");
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GE(catch_ups, 2u) << "most of the chain moved up in one frame, now and then";
  EXPECT_LE(catch_ups, 3000u / kLength) << "not every frame";
  EXPECT_LE(most_levels, 2 * kLength + 64 + 1);
  // Without compaction the levels grow a level a frame.
  LevelOrder lazy;
  for (EntityId head = 3000; head < 3100; ++head) {
    store.destroy(head);
    store.create(head + kLength);
    store.set_parent(head + kLength, head + kLength - 1);
    apply_frame(store, head == 3000 ? order : lazy, 0);
    if (head == 3000) {
      (void)store.take_changes();
      lazy.rebuild(store);
    }
  }
  EXPECT_GE(lazy.level_count(), kLength + 90);
}

TEST(LevelOrder, CycleMembersStandAtRootUntilResolved) {
  EntityStore store;
  LevelOrder order;
  for (EntityId id : {1u, 2u, 3u, 4u}) store.create(id);
  store.set_parent(2, 1);
  store.set_parent(3, 2);
  store.set_parent(4, 3);
  apply_frame(store, order);
  EXPECT_EQ(order.level_of(store.slot_of(4)), 3u);
  store.set_parent(1, 3);  // 1 -> 3 -> 2 -> 1; 4 hangs below the cycle
  apply_frame(store, order);
  EXPECT_EQ(order.cycles_broken(), 1u);
  EXPECT_EQ(order.entities_on_cycles(), 3u);
  for (EntityId id : {1u, 2u, 3u}) EXPECT_EQ(order.level_of(store.slot_of(id)), 0u) << id;
  EXPECT_EQ(order.level_of(store.slot_of(4)), 1u) << "below a cycle, an entity keeps its parent";
  EXPECT_EQ(order.parent_of(store.slot_of(4)), store.slot_of(3));
  store.remove(2, Component::Parent);  // resolved: 2 is a root, 1 below 3 below 2
  apply_frame(store, order);
  EXPECT_EQ(order.cycles_broken(), 0u);
  EXPECT_EQ(order.level_of(store.slot_of(3)), 1u);
  EXPECT_EQ(order.level_of(store.slot_of(1)), 2u);
  EXPECT_EQ(order.level_of(store.slot_of(4)), 2u);
  expect_matches_sort(store, order, "resolved");
}

// Cycle walks start only where something points: here every member was childless before the
// frame, so only the edits' own Parents show the cycles.
TEST(LevelOrder, ChildlessEntitiesNamingEachOtherInOneFrameFormACycle) {
  EntityStore store;
  LevelOrder order;
  for (EntityId id : {1u, 2u, 3u}) store.create(id);
  apply_frame(store, order);
  store.set_parent(1, 2);
  store.set_parent(2, 1);
  store.set_parent(3, 3);  // its own parent
  store.create(4);
  store.set_parent(4, 1);  // a spawned leaf below the new cycle
  apply_frame(store, order);
  EXPECT_EQ(order.cycles_broken(), 2u);
  EXPECT_EQ(order.entities_on_cycles(), 3u);
  for (EntityId id : {1u, 2u, 3u}) EXPECT_EQ(order.level_of(store.slot_of(id)), 0u) << id;
  EXPECT_EQ(order.level_of(store.slot_of(4)), 1u);
  expect_matches_sort(store, order, "two cycles made in one frame");
}

// An edit placed below a parent whose level an edit further up changes later in the same frame
// (edits are placed in slot order) ends at its final level.
TEST(LevelOrder, AnEditBelowAnAncestorMovedInTheSameFrameEndsAtItsFinalLevel) {
  EntityStore store;
  LevelOrder order;
  for (EntityId id = 1; id <= 6; ++id) store.create(id);
  store.set_parent(3, 2);  // 2 - 3 - 4
  store.set_parent(4, 3);
  store.set_parent(6, 5);  // 5 - 6
  apply_frame(store, order);
  store.set_parent(1, 4);  // the lowest slot: placed first, below 4, at level 3 for now
  store.set_parent(2, 6);  // moves 2 - 3 - 4 down two levels: 1 ends at level 5
  apply_frame(store, order);
  EXPECT_EQ(order.level_of(store.slot_of(2)), 2u);
  EXPECT_EQ(order.level_of(store.slot_of(4)), 4u);
  EXPECT_EQ(order.level_of(store.slot_of(1)), 5u);
  expect_matches_sort(store, order, "edits at two depths of one chain");
}

TEST(LevelOrder, UnknownParentAttachesWhenItsIdIsCreated) {
  EntityStore store;
  LevelOrder order;
  store.create(5);
  store.set_parent(5, 9);
  apply_frame(store, order);
  EXPECT_EQ(order.unknown_parents(), 1u);
  EXPECT_EQ(order.level_of(store.slot_of(5)), 0u);
  store.create(9);
  apply_frame(store, order);
  EXPECT_EQ(order.unknown_parents(), 0u);
  EXPECT_EQ(order.level_of(store.slot_of(5)), 1u);
  EXPECT_EQ(order.parent_of(store.slot_of(5)), store.slot_of(9));
}

TEST(LevelOrder, ReparentingHigherUpMovesOnlyTheEntityUntilCompacted) {
  EntityStore store;
  LevelOrder order;
  // Two chains of 50: 0..49 and 100..149.
  for (EntityId id = 0; id < 50; ++id) {
    store.create(id);
    store.create(100 + id);
    if (id) {
      store.set_parent(id, id - 1);
      store.set_parent(100 + id, 100 + id - 1);
    }
  }
  (void)store.take_changes();
  order.rebuild(store);
  order.take_moved();
  store.set_parent(40, 120);  // 40..49 may stay at levels 40..49, below 120 at 20
  apply_frame(store, order, 0);
  EXPECT_EQ(std::vector<uint32_t>(order.moved().begin(), order.moved().end()),
            std::vector<uint32_t>{store.slot_of(40)});
  EXPECT_EQ(order.level_of(store.slot_of(49)), 49u);
  expect_matches_sort(store, order, "after the move");
  order.take_moved();
  EXPECT_EQ(order.compact(store, UINT32_MAX), 10u);  // to levels 21..30
  EXPECT_EQ(order.level_of(store.slot_of(49)), 30u);
  EXPECT_TRUE(order.moved().empty());
  expect_matches_sort(store, order, "compacted");
}

TEST(LevelOrder, DestroyedParentsChildrenBecomeRootsAndTheSlotLeaves) {
  EntityStore store;
  LevelOrder order;
  for (EntityId id : {1u, 2u, 3u}) store.create(id);
  store.set_parent(2, 1);
  store.set_parent(3, 2);
  apply_frame(store, order);
  const uint32_t slot1 = store.slot_of(1);
  store.destroy(1);
  store.create(7);  // reuses slot1 within the same frame
  apply_frame(store, order);
  EXPECT_EQ(store.slot_of(7), slot1);
  EXPECT_EQ(order.size(), 3u);
  EXPECT_EQ(order.level_of(store.slot_of(2)), 0u);
  EXPECT_EQ(order.level_of(store.slot_of(3)), 1u);
  expect_matches_sort(store, order, "after destroy");
}

// An edited entity that keeps its level keeps its entry: the children of a destroyed parent
// (roots now, where they stood), a member of a new cycle, a slot destroyed and created again
// within one frame. Nothing of the order is rewritten for them, though the plan's version moves
// (their parents changed, and with them the levels' alignment).
TEST(LevelOrder, EditedEntitiesKeepingTheirLevelKeepTheirEntries) {
  EntityStore store;
  LevelOrder order;
  // 1 - {2, 3, 4}, 2 - {5, 6}, and 7 - 8 beside them.
  for (EntityId id = 1; id <= 8; ++id) store.create(id);
  for (EntityId id : {2u, 3u, 4u}) store.set_parent(id, 1);
  for (EntityId id : {5u, 6u}) store.set_parent(id, 2);
  store.set_parent(8, 7);
  apply_frame(store, order, 0);
  const auto entry = [&](EntityId id) { return order.entry_of(store.slot_of(id)); };
  const uint32_t e2 = entry(2), e3 = entry(3), e4 = entry(4), e5 = entry(5), e6 = entry(6),
                 e7 = entry(7);
  const uint64_t version = order.version();

  // 2's children become roots at level 2; 3 is destroyed and its slot taken by 9 (a root, at
  // 3's level: a slot keeps the level it held) within the same frame.
  const uint32_t slot3 = store.slot_of(3);
  store.destroy(2);
  store.destroy(3);
  store.create(9);
  ASSERT_EQ(store.slot_of(9), slot3);
  apply_frame(store, order, 0);
  EXPECT_EQ(entry(5), e5);
  EXPECT_EQ(entry(6), e6);
  EXPECT_EQ(entry(9), e3);
  EXPECT_EQ(order.level_of(store.slot_of(5)), 2u) << "a root where it stood";
  EXPECT_EQ(order.level_of(store.slot_of(9)), 1u);
  EXPECT_NE(order.version(), version);
  // 2's entry went: the level's last (8, of the highest slot) filled its place. Nothing else
  // was rewritten.
  EXPECT_EQ(entry(8), e2);
  EXPECT_EQ(entry(4), e4);
  std::set<uint32_t> rewritten;
  for (const auto& [b, e] : order.rewritten())
    for (uint32_t k = b; k < e; ++k) rewritten.insert(k);
  EXPECT_EQ(rewritten, std::set<uint32_t>{e2});
  EXPECT_EQ(std::set<uint32_t>(order.moved().begin(), order.moved().end()),
            (std::set<uint32_t>{store.slot_of(5), store.slot_of(6), store.slot_of(9)}));
  EXPECT_EQ(order.deep_roots(), 3u);
  expect_matches_sort(store, order, "orphans kept");

  // 7 and 8 name each other: both stand at the root, 7 where it was.
  store.set_parent(7, 8);
  apply_frame(store, order, 0);
  EXPECT_EQ(entry(7), e7);
  EXPECT_EQ(order.level_of(store.slot_of(7)), 0u);
  EXPECT_EQ(order.level_of(store.slot_of(8)), 1u) << "a root where it stood";
  EXPECT_EQ(order.cycles_broken(), 1u);
  expect_matches_sort(store, order, "a cycle");
  EXPECT_EQ(order.compact(store, UINT32_MAX), 4u);
  expect_matches_sort(store, order, "compacted");
}

// Many spawns into one level relocate its segment and eventually lay the array out afresh;
// the order stays exact throughout.
TEST(LevelOrder, GrowingLevelsRelocateWithoutLosingEntries) {
  EntityStore store;
  LevelOrder order;
  store.create(0);
  apply_frame(store, order);
  for (EntityId id = 1; id < 20000; ++id) {
    store.create(id);
    store.set_parent(id, id % 3 == 0 ? 0 : id - 1);
    if (id % 997 == 0) {
      apply_frame(store, order);
      if (id % (997 * 5) == 0) expect_matches_sort(store, order, "while growing");
    }
  }
  apply_frame(store, order);
  expect_matches_sort(store, order, "grown");
}

}  // namespace
}  // namespace tprop
