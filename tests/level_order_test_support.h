// What the LevelOrder tests share: the from-scratch sort's levels and parents, everything
// LevelOrder promises checked against it, and one frame of edits applied.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "depth_order.h"
#include "level_order.h"

namespace tprop::level_order_test {

constexpr uint32_t kNone = LevelOrder::kNone;

struct Truth {
  std::vector<uint32_t> level, parent;  // per slot, kNone when dead
};

inline Truth truth_of(const EntityStore& store, const DepthOrder& d) {
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

// Everything LevelOrder promises, checked against the from-scratch sort: the same entities,
// attachments and counts; every attached entity below its parent's level; with nothing queued
// for compaction, exactly the sort's levels.
inline void expect_matches_sort(const EntityStore& store, const LevelOrder& order, const char* when) {
  const DepthOrder d = sort_by_depth(store);
  const Truth t = truth_of(store, d);
  ASSERT_EQ(order.size(), d.size()) << when;
  EXPECT_EQ(order.cycles_broken(), d.cycles_broken) << when;
  EXPECT_EQ(order.entities_on_cycles(), d.entities_on_cycles) << when;
  EXPECT_EQ(order.unknown_parents(), d.unknown_parents) << when;
  EXPECT_EQ(order.roots(), d.roots) << when;
  const bool exact = order.slack_queued() == 0;
  if (exact) {
    ASSERT_EQ(order.level_count(), d.level_count()) << when;
  } else {
    ASSERT_GE(order.level_count(), d.level_count()) << when;
  }
  std::vector<uint32_t> per_level(order.level_count(), 0);
  uint32_t deep_roots = 0;
  for (uint32_t s = 0; s < store.slot_capacity(); ++s) {
    ASSERT_EQ(order.parent_of(s), t.parent[s]) << when << ": slot " << s;
    const uint32_t level = order.level_of(s);
    if (t.level[s] == kNone) {
      ASSERT_EQ(level, kNone) << when << ": dead slot " << s;
      continue;
    }
    ASSERT_LT(level, order.level_count()) << when << ": slot " << s;
    ++per_level[level];
    if (t.parent[s] != kNone) {
      ASSERT_GT(level, order.level_of(t.parent[s])) << when << ": slot " << s << " not below its parent";
    } else if (level > 0) {
      ++deep_roots;
    }
    if (exact) {
      ASSERT_EQ(level, t.level[s]) << when << ": slot " << s << " with nothing queued";
    }
  }
  EXPECT_EQ(order.deep_roots(), deep_roots) << when;
  // Each segment holds exactly its level's slots, and entry_of points back.
  for (uint32_t l = 0; l < order.level_count(); ++l) {
    const LevelOrder::Segment seg = order.levels()[l];
    ASSERT_EQ(seg.count, per_level[l]) << when << ": level " << l;
    ASSERT_LE(seg.count, seg.capacity);
    for (uint32_t k = 0; k < seg.count; ++k) {
      const uint32_t s = order.entries()[seg.begin + k];
      ASSERT_NE(s, kNone) << when;
      ASSERT_EQ(order.level_of(s), l) << when;
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
    for (uint32_t c = order.first_child(store, s); c != kNone; c = order.next_sibling(store, c))
      EXPECT_TRUE(listed.insert(c).second) << when << ": child listed twice";
    EXPECT_EQ(listed, children[s]) << when << ": children of slot " << s;
  }
}

// One frame's edits, then at most `compact` entities moved toward their depth.
inline uint32_t apply_frame(EntityStore& store, LevelOrder& order, uint32_t compact = UINT32_MAX) {
  const StoreChanges changes = store.take_changes();
  order.take_moved();
  order.apply(store, changes.structural);
  order.compact(store, compact);
  return static_cast<uint32_t>(changes.structural.size());
}

}  // namespace tprop::level_order_test
