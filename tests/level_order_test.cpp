// LevelOrder, the incrementally updated depth order, against sort_by_depth(), which computes
// the same order from scratch: after every frame of random edits (creates, destroys, re-parents
// to live, unknown and own ids, cycles made and broken) both must give every entity the same
// level and attached parent, the same counts, and the segments must hold exactly each level.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "depth_order.h"
#include "level_order.h"

namespace tprop {
namespace {

constexpr uint32_t kNone = LevelOrder::kNone;

struct Truth {
  std::vector<uint32_t> level, parent;  // per slot, kNone when dead
};

Truth truth_of(const EntityStore& store, const DepthOrder& d) {
  Truth t;
  t.level.assign(store.slot_capacity(), kNone);
  t.parent.assign(store.slot_capacity(), kNone);
  for (uint32_t l = 0; l < d.level_count(); ++l)
    for (uint32_t pos = d.level_offsets[l]; pos < d.level_offsets[l + 1]; ++pos) {
      t.level[d.slot[pos]] = l;
      t.parent[d.slot[pos]] = d.attached(pos) ? d.slot[d.parent[pos]] : kNone;
    }
  return t;
}

// Everything LevelOrder promises, checked against the from-scratch sort.
void expect_matches_sort(const EntityStore& store, const LevelOrder& order, const char* when) {
  const DepthOrder d = sort_by_depth(store);
  const Truth t = truth_of(store, d);
  ASSERT_EQ(order.size(), d.size()) << when;
  ASSERT_EQ(order.level_count(), d.level_count()) << when;
  EXPECT_EQ(order.cycles_broken(), d.cycles_broken) << when;
  EXPECT_EQ(order.entities_on_cycles(), d.entities_on_cycles) << when;
  EXPECT_EQ(order.unknown_parents(), d.unknown_parents) << when;
  EXPECT_EQ(order.roots(), d.roots) << when;
  for (uint32_t s = 0; s < store.slot_capacity(); ++s) {
    ASSERT_EQ(order.level_of(s), t.level[s]) << when << ": slot " << s;
    ASSERT_EQ(order.parent_of(s), t.parent[s]) << when << ": slot " << s;
  }
  // Each segment holds exactly its level's slots, and entry_of points back.
  for (uint32_t l = 0; l < order.level_count(); ++l) {
    const LevelOrder::Segment seg = order.levels()[l];
    ASSERT_EQ(seg.count, d.level_offsets[l + 1] - d.level_offsets[l]) << when << ": level " << l;
    ASSERT_LE(seg.count, seg.capacity);
    for (uint32_t k = 0; k < seg.count; ++k) {
      const uint32_t s = order.entries()[seg.begin + k];
      ASSERT_NE(s, kNone) << when;
      ASSERT_EQ(t.level[s], l) << when;
      ASSERT_EQ(order.entry_of(s), seg.begin + k) << when;
    }
  }
  // Child lists are the attached children.
  std::map<uint32_t, std::set<uint32_t>> children;
  for (uint32_t s = 0; s < store.slot_capacity(); ++s)
    if (t.parent[s] != kNone) children[t.parent[s]].insert(s);
  for (uint32_t s = 0; s < store.slot_capacity(); ++s) {
    if (t.level[s] == kNone) continue;
    std::set<uint32_t> listed;
    for (uint32_t c = order.first_child(s); c != kNone; c = order.next_sibling(c))
      EXPECT_TRUE(listed.insert(c).second) << when << ": child listed twice";
    EXPECT_EQ(listed, children[s]) << when << ": children of slot " << s;
  }
}

uint32_t apply_frame(EntityStore& store, LevelOrder& order) {
  const StoreChanges changes = store.take_changes();
  order.take_moved();
  order.apply(store, changes.structural);
  return static_cast<uint32_t>(changes.structural.size());
}

TEST(LevelOrder, MatchesTheSortAfterEveryFrameOfRandomEdits) {
  uint32_t most_cycles = 0, most_unknown = 0, deepest = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
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
      apply_frame(store, order);
      const std::string when = "seed " + std::to_string(seed) + " frame " + std::to_string(frame);
      expect_matches_sort(store, order, when.c_str());
      if (HasFatalFailure()) return;
      most_cycles = std::max(most_cycles, order.cycles_broken());
      most_unknown = std::max(most_unknown, order.unknown_parents());
      deepest = std::max(deepest, order.level_count());
    }
  }
  // The edits did reach the cases that matter.
  EXPECT_GE(most_cycles, 2u);
  EXPECT_GE(most_unknown, 2u);
  EXPECT_GE(deepest, 6u);
}

// Every slot whose level or attached parent changed is listed in moved(), with its subtree.
TEST(LevelOrder, MovedListsEveryEntityWhoseChainChanged) {
  std::mt19937_64 rng(7);
  EntityStore store;
  LevelOrder order;
  for (uint32_t id = 0; id < 300; ++id) store.create(id);
  for (uint32_t id = 1; id < 300; ++id) store.set_parent(id, static_cast<EntityId>(rng() % id));
  (void)store.take_changes();
  order.rebuild(store);
  for (int frame = 0; frame < 60; ++frame) {
    Truth before = truth_of(store, sort_by_depth(store));
    for (int e = 0; e < 3; ++e) {
      const EntityId id = static_cast<EntityId>(rng() % 300);
      store.set_parent(id, static_cast<EntityId>(rng() % 300));
    }
    apply_frame(store, order);
    const Truth after = truth_of(store, sort_by_depth(store));
    const std::set<uint32_t> moved(order.moved().begin(), order.moved().end());
    // A chain changed where the entity or any ancestor changed level or parent.
    for (uint32_t s = 0; s < store.slot_capacity(); ++s) {
      bool changed = false;
      for (uint32_t v = s; v != kNone && !changed; v = after.parent[v])
        changed = v >= before.level.size() || before.level[v] != after.level[v] ||
                  before.parent[v] != after.parent[v];
      if (changed) {
        EXPECT_TRUE(moved.count(s)) << "frame " << frame << ": slot " << s;
      }
    }
  }
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

TEST(LevelOrder, ReparentingMovesOnlyTheSubtree) {
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
  store.set_parent(40, 120);  // 40..49 move from levels 40..49 to 21..30
  apply_frame(store, order);
  std::set<uint32_t> expected;
  for (EntityId id = 40; id < 50; ++id) expected.insert(store.slot_of(id));
  EXPECT_EQ(std::set<uint32_t>(order.moved().begin(), order.moved().end()), expected);
  EXPECT_EQ(order.level_of(store.slot_of(49)), 30u);
  expect_matches_sort(store, order, "after the move");
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
