#include "depth_order.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

namespace tprop {
namespace {

// Level and attached parent of each entity, by id, read back from a DepthOrder.
struct Placement {
  uint32_t level;
  std::optional<EntityId> parent;
  bool operator==(const Placement&) const = default;
};

std::map<EntityId, Placement> placements(const EntityStore& store, const DepthOrder& order) {
  std::map<EntityId, Placement> out;
  for (uint32_t l = 0; l < order.level_count(); ++l)
    for (uint32_t pos = order.level_offsets[l]; pos < order.level_offsets[l + 1]; ++pos) {
      std::optional<EntityId> parent;
      if (order.attached(pos)) parent = store.id_at(order.slot[order.parent[pos]]);
      out[store.id_at(order.slot[pos])] = {l, parent};
    }
  return out;
}

void expect_parents_first(const DepthOrder& order) {
  for (uint32_t pos = 0; pos < order.size(); ++pos) {
    if (order.attached(pos)) {
      EXPECT_LT(order.parent[pos], pos);
    }
  }
}

TEST(DepthOrder, EmptyStoreHasNoLevels) {
  EntityStore store;
  const DepthOrder order = sort_by_depth(store);
  EXPECT_EQ(order.size(), 0u);
  EXPECT_EQ(order.level_count(), 0u);
}

TEST(DepthOrder, ParentsComeBeforeChildrenLevelByLevel) {
  EntityStore store;
  // Created children first so that slot order is the opposite of depth order.
  for (EntityId e : {4, 3, 2, 1}) store.create(e);
  store.set_parent(4, 3);
  store.set_parent(3, 1);
  store.set_parent(2, 1);
  const DepthOrder order = sort_by_depth(store);
  expect_parents_first(order);
  EXPECT_EQ(order.level_offsets, (std::vector<uint32_t>{0, 1, 3, 4}));
  const auto p = placements(store, order);
  EXPECT_EQ(p.at(1), (Placement{0, std::nullopt}));
  EXPECT_EQ(p.at(2), (Placement{1, 1}));
  EXPECT_EQ(p.at(3), (Placement{1, 1}));
  EXPECT_EQ(p.at(4), (Placement{2, 3}));
  EXPECT_EQ(order.roots, 1u);
  EXPECT_EQ(order.cycles_broken, 0u);
}

TEST(DepthOrder, UnknownParentStandsAtTheRoot) {
  EntityStore store;
  store.create(1);
  store.create(2);
  store.set_parent(1, 99);
  store.set_parent(2, 1);
  const DepthOrder order = sort_by_depth(store);
  const auto p = placements(store, order);
  EXPECT_EQ(p.at(1), (Placement{0, std::nullopt}));
  EXPECT_EQ(p.at(2), (Placement{1, 1}));
  EXPECT_EQ(order.unknown_parents, 1u);
}

TEST(DepthOrder, SelfParentIsACycleOfLengthOne) {
  EntityStore store;
  store.create(1);
  store.create(2);
  store.set_parent(1, 1);
  store.set_parent(2, 1);
  const DepthOrder order = sort_by_depth(store);
  const auto p = placements(store, order);
  EXPECT_EQ(p.at(1), (Placement{0, std::nullopt}));
  EXPECT_EQ(p.at(2), (Placement{1, 1}));
  EXPECT_EQ(order.cycles_broken, 1u);
  EXPECT_EQ(order.entities_on_cycles, 1u);
}

// A cycle 1 -> 2 -> ... -> n -> 1 plus a tail entity 100 hanging below entity 1, the parent
// edits applied in the given order (a permutation of 0..n; edit n hangs the tail).
EntityStore cycle_with_tail(const std::vector<int>& edit_order, int n) {
  EntityStore store;
  for (int e = 1; e <= n; ++e) store.create(e);
  store.create(100);
  for (int i : edit_order) {
    if (i == n) store.set_parent(100, 1);
    else store.set_parent(i + 1, i == n - 1 ? 1 : i + 2);  // entity i+1's parent is the next
  }
  return store;
}

// Checks the members of cycle_with_tail stand at the root and the tail keeps its parent.
void check_cycle_in_edit_order(const std::vector<int>& edit_order, int n) {
  const EntityStore store = cycle_with_tail(edit_order, n);
  const DepthOrder order = sort_by_depth(store);
  expect_parents_first(order);
  const auto p = placements(store, order);
  for (int e = 1; e <= n; ++e) EXPECT_EQ(p.at(e), (Placement{0, std::nullopt})) << "member " << e;
  EXPECT_EQ(p.at(100), (Placement{1, 1}));
  EXPECT_EQ(order.cycles_broken, 1u);
  EXPECT_EQ(order.entities_on_cycles, uint32_t(n));
}

TEST(DepthOrder, CycleMembersStandAtRootWhateverTheOrderOfEdits) {
  for (int n : {1, 2, 3}) {
    std::vector<int> edits(n + 1);
    std::iota(edits.begin(), edits.end(), 0);
    do {
      SCOPED_TRACE(testing::Message() << "cycle length " << n);
      check_cycle_in_edit_order(edits, n);
    } while (std::next_permutation(edits.begin(), edits.end()));
  }
}

// The cycle of cycle_with_tail, built in every order of edits, then resolved by
// removing the Parent of each member k in turn: k becomes the root and the others hang below it
// in cycle order (entity j's parent is j + 1, wrapping to 1, so j sits (k - j) mod n levels
// below k), and the tail stays one level below entity 1.
TEST(DepthOrder, EveryCycleResolvesIntoAChainWhateverTheOrderOfEditsAndTheEdgeRemoved) {
  for (int n : {1, 2, 3}) {
    std::vector<int> edits(n + 1);
    std::iota(edits.begin(), edits.end(), 0);
    do {
      for (int k = 1; k <= n; ++k) {
        SCOPED_TRACE(testing::Message() << "cycle length " << n << ", member " << k << " freed");
        EntityStore store = cycle_with_tail(edits, n);
        store.remove(k, Component::Parent);
        const DepthOrder order = sort_by_depth(store);
        expect_parents_first(order);
        EXPECT_EQ(order.cycles_broken, 0u);
        EXPECT_EQ(order.entities_on_cycles, 0u);
        EXPECT_EQ(order.roots, 1u);
        const auto p = placements(store, order);
        for (int j = 1; j <= n; ++j) {
          const uint32_t level = uint32_t((k - j + n) % n);
          const std::optional<EntityId> parent =
              j == k ? std::nullopt : std::optional<EntityId>(j == n ? 1 : j + 1);
          EXPECT_EQ(p.at(j), (Placement{level, parent})) << "member " << j;
        }
        EXPECT_EQ(p.at(100), (Placement{p.at(1).level + 1, 1}));
      }
    } while (std::next_permutation(edits.begin(), edits.end()));
  }
}

TEST(DepthOrder, CycleResolvesWhenAnEdgeIsRemoved) {
  EntityStore store;
  for (EntityId e : {1, 2, 3}) store.create(e);
  store.set_parent(1, 2);
  store.set_parent(2, 3);
  store.set_parent(3, 1);
  EXPECT_EQ(sort_by_depth(store).cycles_broken, 1u);
  store.remove(3, Component::Parent);
  const DepthOrder order = sort_by_depth(store);
  EXPECT_EQ(order.cycles_broken, 0u);
  const auto p = placements(store, order);
  EXPECT_EQ(p.at(3), (Placement{0, std::nullopt}));
  EXPECT_EQ(p.at(2), (Placement{1, 3}));
  EXPECT_EQ(p.at(1), (Placement{2, 2}));
}

TEST(DepthOrder, SeveralCyclesAreEachCounted) {
  EntityStore store;
  for (EntityId e = 1; e <= 7; ++e) store.create(e);
  store.set_parent(1, 2);
  store.set_parent(2, 1);
  store.set_parent(3, 4);
  store.set_parent(4, 5);
  store.set_parent(5, 3);
  store.set_parent(6, 6);
  store.set_parent(7, 5);
  const DepthOrder order = sort_by_depth(store);
  EXPECT_EQ(order.cycles_broken, 3u);
  EXPECT_EQ(order.entities_on_cycles, 6u);
  EXPECT_EQ(order.roots, 6u);
  EXPECT_EQ(placements(store, order).at(7), (Placement{1, 5}));
}

TEST(DepthOrder, MillionDeepChainSortsWithoutRecursion) {
  constexpr uint32_t kDepth = 1'000'000;
  EntityStore store;
  store.reserve(kDepth);
  // Leaf first, so every walk starts at the bottom and climbs the whole chain.
  for (uint32_t e = kDepth; e-- > 0;) {
    store.create(e);
    if (e > 0) store.set_parent(e, e - 1);
  }
  const DepthOrder order = sort_by_depth(store);
  ASSERT_EQ(order.level_count(), kDepth);
  for (uint32_t pos = 0; pos < kDepth; ++pos) {
    ASSERT_EQ(store.id_at(order.slot[pos]), pos);
    ASSERT_EQ(order.parent[pos], pos == 0 ? DepthOrder::kNone : pos - 1);
  }
}

TEST(DepthOrder, ResultDoesNotDependOnCreationOrder) {
  // The same forest created in two orders gives the same placement of every entity.
  std::vector<std::pair<EntityId, EntityId>> edges = {{2, 1}, {3, 1}, {4, 3}, {5, 4}, {6, 6},
                                                      {7, 8}, {8, 7}, {9, 7}, {10, 42}};
  std::map<EntityId, Placement> first;
  for (int round = 0; round < 2; ++round) {
    EntityStore store;
    std::vector<EntityId> ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    if (round == 1) std::reverse(ids.begin(), ids.end());
    for (EntityId e : ids) store.create(e);
    auto es = edges;
    if (round == 1) std::reverse(es.begin(), es.end());
    for (auto [child, parent] : es) store.set_parent(child, parent);
    const auto p = placements(store, sort_by_depth(store));
    if (round == 0) {
      first = p;
    } else {
      EXPECT_EQ(p, first);
    }
  }
}

}  // namespace
}  // namespace tprop
