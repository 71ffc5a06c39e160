#include "depth_order.h"

#include <cassert>

namespace tprop {

namespace {
constexpr uint32_t kNone = DepthOrder::kNone;
constexpr uint32_t kUnvisited = 0xffffffffu;
constexpr uint32_t kOnPath = 0xfffffffeu;
}  // namespace

DepthOrder sort_by_depth(const EntityStore& store) {
  DepthOrder out;
  const uint32_t slots = store.slot_capacity();

  // Resolve each Parent id to a slot once; kNone at the root.
  std::vector<uint32_t> up(slots, kNone);
  std::vector<uint32_t> level(slots, kUnvisited);
  uint32_t live = 0;
  for (uint32_t s = 0; s < slots; ++s) {
    if (!store.alive_at(s)) continue;
    ++live;
    if (!store.has_at(s, Component::Parent)) continue;
    up[s] = store.slot_of(store.parent_at(s));
    if (up[s] == kNone) ++out.unknown_parents;
  }

  // Walk up from every unvisited entity until a root, an entity already placed, or the walk's
  // own path (a cycle). Every entity joins a path once, so the whole pass is O(N).
  std::vector<uint32_t> path;
  uint32_t max_level = 0;
  for (uint32_t start = 0; start < slots; ++start) {
    if (!store.alive_at(start) || level[start] != kUnvisited) continue;
    uint32_t cur = start;
    while (cur != kNone && level[cur] == kUnvisited) {
      level[cur] = kOnPath;
      path.push_back(cur);
      cur = up[cur];
    }
    if (cur != kNone && level[cur] == kOnPath) {
      // cur closes a cycle: it and everything above it on the path are its members.
      ++out.cycles_broken;
      uint32_t member;
      do {
        member = path.back();
        path.pop_back();
        level[member] = 0;
        up[member] = kNone;
        ++out.entities_on_cycles;
      } while (member != cur);
    }
    while (!path.empty()) {
      const uint32_t s = path.back();
      path.pop_back();
      level[s] = up[s] == kNone ? 0 : level[up[s]] + 1;
      if (level[s] > max_level) max_level = level[s];
    }
  }

  // Counting sort by level; within a level, slot order, so the result is deterministic.
  out.level_offsets.assign(live == 0 ? 1 : max_level + 2, 0);
  for (uint32_t s = 0; s < slots; ++s)
    if (store.alive_at(s)) ++out.level_offsets[level[s] + 1];
  for (size_t l = 1; l < out.level_offsets.size(); ++l)
    out.level_offsets[l] += out.level_offsets[l - 1];
  out.slot.resize(live);
  out.position.assign(slots, kNone);
  std::vector<uint32_t> cursor(out.level_offsets.begin(), out.level_offsets.end() - 1);
  for (uint32_t s = 0; s < slots; ++s) {
    if (!store.alive_at(s)) continue;
    const uint32_t pos = cursor[level[s]]++;
    out.slot[pos] = s;
    out.position[s] = pos;
  }
  out.parent.resize(live);
  for (uint32_t pos = 0; pos < live; ++pos) {
    const uint32_t p = up[out.slot[pos]];
    out.parent[pos] = p == kNone ? kNone : out.position[p];
    assert(out.parent[pos] == kNone || out.parent[pos] < pos);
  }
  out.roots = live == 0 ? 0 : out.level_offsets[1];
  return out;
}

}  // namespace tprop
