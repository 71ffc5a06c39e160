// The depth sort: every live entity gets a level (roots 0, children one below their parent) and
// a position, parents strictly before children, in a counting sort that is O(N) and recursion
// free. Parenting cycles are broken on the way: every member of a cycle stands at the root while
// the cycle lasts, and entities hanging below a cycle keep their parent. The result is a pure
// function of the store's current Parent components, so it does not depend on the order of the
// edits that led there. This is exactly the parent index buffer the GPU path uploads. Out of host
// memory sort_by_depth() throws std::bad_alloc (result.h).
#pragma once

#include <cstdint>
#include <vector>

#include "entity_store.h"

namespace tprop {

struct DepthOrder {
  static constexpr uint32_t kNone = 0xffffffffu;

  std::vector<uint32_t> slot;           // position -> store slot
  std::vector<uint32_t> position;       // store slot -> position; kNone for dead slots
  std::vector<uint32_t> parent;         // position -> parent's position; kNone at the root
  std::vector<uint32_t> level_offsets;  // level L holds positions [offsets[L], offsets[L + 1])

  uint32_t cycles_broken = 0;       // distinct cycles found
  uint32_t entities_on_cycles = 0;  // their members, all standing at the root
  uint32_t unknown_parents = 0;     // entities whose Parent names no live entity (at the root)
  uint32_t roots = 0;               // entities at level 0, for any reason

  uint32_t size() const { return static_cast<uint32_t>(slot.size()); }
  uint32_t level_count() const {
    return level_offsets.empty() ? 0 : static_cast<uint32_t>(level_offsets.size() - 1);
  }
  // An entity "has a parent" for the transform rules only when it is attached: a Parent that
  // names an unknown entity, or one that closes a cycle, makes it a root (NOTES.md).
  bool attached(uint32_t pos) const { return parent[pos] != kNone; }
};

DepthOrder sort_by_depth(const EntityStore& store);

}  // namespace tprop
