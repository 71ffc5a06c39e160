#include "level_order.h"

#include <algorithm>
#include <cassert>

namespace tprop {

namespace {
constexpr uint32_t kNone = LevelOrder::kNone;
// Room every segment gets beyond its eighth of slack, so a small level does not relocate at its
// first insertion. Small, because a chain has one level per entity.
constexpr uint32_t kMinSegment = 2;
}  // namespace

void LevelOrder::clear() { *this = LevelOrder{}; }

uint32_t LevelOrder::level_count() const {
  uint32_t n = static_cast<uint32_t>(levels_.size());
  while (n > 0 && levels_[n - 1].count == 0) --n;
  return n;
}

void LevelOrder::grow_slots(uint32_t slots) {
  if (up_.size() >= slots) return;
  up_.resize(slots, kNone);
  parent_.resize(slots, kNone);
  level_.resize(slots, kNone);
  entry_.resize(slots, kNone);
  cycle_.resize(slots, kNone);
  unknown_.resize(slots, 0);
  first_child_.resize(slots, kNone);
  next_sibling_.resize(slots, kNone);
  prev_sibling_.resize(slots, kNone);
  stamp_.resize(slots, 0);
  moved_stamp_.resize(slots, 0);
}

// The marks of one apply() share stamp_ (base + 1..5): on-path and resolved for the cycle walk,
// then has / has-no edited ancestor for finding the tops of the edited subtrees, and placed by a
// subtree's relevel. Edited slots are told apart by level_ == kNone until they are placed.
bool LevelOrder::next_stamp() {
  if (stamp_base_ > 0xfffffff0u) {
    std::fill(stamp_.begin(), stamp_.end(), 0);
    stamp_base_ = 0;
  }
  stamp_base_ += 8;
  return true;
}

uint32_t LevelOrder::resolve_up(const EntityStore& store, uint32_t slot) {
  if (unknown_[slot]) {
    unknown_[slot] = 0;
    --unknown_parents_;
  }
  if (!store.alive_at(slot) || !store.has_at(slot, Component::Parent)) return kNone;
  const uint32_t p = store.slot_of(store.parent_at(slot));
  if (p == kNone) {
    unknown_[slot] = 1;
    ++unknown_parents_;
  }
  return p;
}

void LevelOrder::link(uint32_t slot, uint32_t parent) {
  parent_[slot] = parent;
  prev_sibling_[slot] = kNone;
  next_sibling_[slot] = first_child_[parent];
  if (first_child_[parent] != kNone) prev_sibling_[first_child_[parent]] = slot;
  first_child_[parent] = slot;
}

void LevelOrder::unlink(uint32_t slot) {
  const uint32_t parent = parent_[slot];
  if (parent == kNone) return;
  const uint32_t prev = prev_sibling_[slot], next = next_sibling_[slot];
  if (next != kNone) prev_sibling_[next] = prev;
  if (prev != kNone) {
    next_sibling_[prev] = next;
  } else {
    first_child_[parent] = next;
  }
  prev_sibling_[slot] = next_sibling_[slot] = kNone;
  parent_[slot] = kNone;
}

void LevelOrder::remove_entry(uint32_t slot) {
  Segment& seg = levels_[level_[slot]];
  const uint32_t i = entry_[slot];
  const uint32_t last = seg.begin + seg.count - 1;
  if (i != last) {
    entries_[i] = entries_[last];
    entry_[entries_[i]] = i;
    rewritten_.push_back({i, i + 1});
  }
  entries_[last] = kNone;
  --seg.count;
  entry_[slot] = kNone;
  level_[slot] = kNone;
  --live_;
}

void LevelOrder::insert_entry(uint32_t slot, uint32_t level) {
  if (levels_.size() <= level) levels_.resize(level + 1);
  if (levels_[level].count == levels_[level].capacity)
    relocate(level, std::max(kMinSegment, levels_[level].capacity * 2));
  Segment& seg = levels_[level];
  const uint32_t i = seg.begin + seg.count++;
  entries_[i] = slot;
  entry_[slot] = i;
  level_[slot] = level;
  rewritten_.push_back({i, i + 1});
  ++live_;
}

void LevelOrder::relocate(uint32_t level, uint32_t capacity) {
  Segment& seg = levels_[level];
  layout_changed_ = true;
  if (seg.capacity > 0 && seg.begin + seg.capacity == entries_.size()) {
    // The last segment of the array grows in place.
    entries_.resize(seg.begin + capacity, kNone);
    seg.capacity = capacity;
    return;
  }
  const uint32_t begin = static_cast<uint32_t>(entries_.size());
  entries_.resize(size_t(begin) + capacity, kNone);
  for (uint32_t k = 0; k < seg.count; ++k) {
    const uint32_t s = entries_[seg.begin + k];
    entries_[begin + k] = s;
    entry_[s] = begin + k;
    entries_[seg.begin + k] = kNone;
  }
  if (seg.count) rewritten_.push_back({begin, begin + seg.count});
  abandoned_ += seg.capacity;
  seg.begin = begin;
  seg.capacity = capacity;
  // Once more of the array is abandoned than lives in it, lay it out afresh: O(N), but only
  // after Omega(N) relocated entries, so amortised O(1) per insertion.
  if (abandoned_ > live_ + 4 * kMinSegment * levels_.size() + 65536) lay_out_afresh(8);
}

void LevelOrder::lay_out_afresh(uint32_t slack_divisor) {
  levels_.resize(level_count());  // empty levels left at the bottom by a destroyed deep chain
  std::vector<uint32_t> old = std::move(entries_);
  size_t total = 0;
  for (Segment& seg : levels_) total += seg.count + seg.count / slack_divisor + kMinSegment;
  entries_.assign(total, kNone);
  uint32_t at = 0;
  for (Segment& seg : levels_) {
    for (uint32_t k = 0; k < seg.count; ++k) {
      const uint32_t s = old[seg.begin + k];
      entries_[at + k] = s;
      entry_[s] = at + k;
    }
    seg.begin = at;
    seg.capacity = seg.count + seg.count / slack_divisor + kMinSegment;
    at += seg.capacity;
  }
  abandoned_ = 0;
  layout_changed_ = true;
  rewritten_.clear();
  rewritten_.push_back({0, static_cast<uint32_t>(entries_.size())});
}

void LevelOrder::note_moved(uint32_t slot) {
  if (moved_stamp_[slot] == moved_epoch_) return;
  moved_stamp_[slot] = moved_epoch_;
  moved_.push_back(slot);
}

void LevelOrder::take_moved() {
  moved_.clear();
  relinked_.clear();
  rewritten_.clear();
  layout_changed_ = false;
  if (++moved_epoch_ == 0) {
    std::fill(moved_stamp_.begin(), moved_stamp_.end(), 0);
    moved_epoch_ = 1;
  }
}

void LevelOrder::dissolve_cycle(uint32_t cycle, std::vector<uint32_t>& affected) {
  for (uint32_t m : cycles_[cycle]) {
    cycle_[m] = kNone;
    affected.push_back(m);
  }
  on_cycles_ -= static_cast<uint32_t>(cycles_[cycle].size());
  --cycle_count_;
  cycles_[cycle].clear();
  free_cycles_.push_back(cycle);
}

// Walks up from every slot of `starts` until a root, a member of a known cycle, or a slot an
// earlier walk of this pass already settled; a walk that meets its own path has found a new
// cycle, whose members all stand at the root.
void LevelOrder::detect_cycles(const std::vector<uint32_t>& starts) {
  const uint32_t on_path = stamp_base_ + 1, resolved = stamp_base_ + 2;
  std::vector<uint32_t> path;
  for (uint32_t start : starts) {
    path.clear();
    uint32_t v = start;
    while (v != kNone && cycle_[v] == kNone && stamp_[v] != resolved) {
      if (stamp_[v] == on_path) {
        uint32_t id;
        if (!free_cycles_.empty()) {
          id = free_cycles_.back();
          free_cycles_.pop_back();
        } else {
          id = static_cast<uint32_t>(cycles_.size());
          cycles_.emplace_back();
        }
        auto first = std::find(path.begin(), path.end(), v);
        for (auto it = first; it != path.end(); ++it) {
          cycle_[*it] = id;
          cycles_[id].push_back(*it);
        }
        on_cycles_ += static_cast<uint32_t>(cycles_[id].size());
        ++cycle_count_;
        break;
      }
      stamp_[v] = on_path;
      path.push_back(v);
      v = up_[v];
    }
    for (uint32_t p : path) stamp_[p] = resolved;
  }
}

void LevelOrder::relevel_subtree(uint32_t top) {
  std::vector<uint32_t> stack{top};
  while (!stack.empty()) {
    const uint32_t v = stack.back();
    stack.pop_back();
    const uint32_t p = parent_[v];
    const uint32_t level = p == kNone ? 0 : level_[p] + 1;
    if (level_[v] != level) {
      if (level_[v] != kNone) remove_entry(v);
      insert_entry(v, level);
    }
    note_moved(v);
    stamp_[v] = stamp_base_ + 5;
    for (uint32_t c = first_child_[v]; c != kNone; c = next_sibling_[c]) stack.push_back(c);
  }
}

void LevelOrder::apply(const EntityStore& store, std::span<const uint32_t> structural) {
  grow_slots(store.slot_capacity());
  next_stamp();

  // The edited slots, and every member of a cycle that one of them belonged to: that cycle is
  // gone, so its members stand where their Parents say now.
  std::vector<uint32_t> edited(structural.begin(), structural.end());
  for (uint32_t s : structural)
    if (cycle_[s] != kNone) dissolve_cycle(cycle_[s], edited);
  std::sort(edited.begin(), edited.end());
  edited.erase(std::unique(edited.begin(), edited.end()), edited.end());

  // Take them out of the order (level_ == kNone marks an edited slot until it is placed again)
  // and resolve their Parent afresh.
  auto detach = [&](uint32_t s) {
    if (level_[s] != kNone) remove_entry(s);
    unlink(s);
  };
  for (uint32_t s : edited) detach(s);
  std::vector<uint32_t> alive;
  for (uint32_t s : edited) {
    up_[s] = resolve_up(store, s);
    if (store.alive_at(s)) {
      alive.push_back(s);
    } else {
      assert(first_child_[s] == kNone && "a destroyed entity's children lose their Parent");
    }
  }

  // New cycles (each closed by an edited slot) stand at the root: detach their members too.
  detect_cycles(alive);
  for (size_t i = 0, n = alive.size(); i < n; ++i) {
    const uint32_t id = cycle_[alive[i]];
    if (id == kNone) continue;
    for (uint32_t m : cycles_[id])
      if (level_[m] != kNone) {  // a member whose own Parent did not change
        detach(m);
        alive.push_back(m);
      }
  }
  for (uint32_t s : alive) {
    const bool attached = up_[s] != kNone && cycle_[s] == kNone;
    if (attached) link(s, up_[s]);
  }

  // The tops: edited slots with no edited ancestor. Their parent's level is settled, and
  // relevelling each top's subtree places every edited slot exactly once.
  const uint32_t has_edited = stamp_base_ + 3, no_edited = stamp_base_ + 4;
  const uint32_t placed = stamp_base_ + 5;
  std::vector<uint32_t> path;
  for (uint32_t s : alive) {
    if (stamp_[s] == placed) continue;  // inside a subtree relevelled already
    path.clear();
    bool edited_above = false;
    for (uint32_t v = parent_[s]; v != kNone; v = parent_[v]) {
      if (stamp_[v] == has_edited || level_[v] == kNone) {
        edited_above = true;
        break;
      }
      if (stamp_[v] == no_edited) break;
      path.push_back(v);
    }
    for (uint32_t v : path) stamp_[v] = edited_above ? has_edited : no_edited;
    if (!edited_above) relevel_subtree(s);
  }
  relinked_.insert(relinked_.end(), alive.begin(), alive.end());
}

void LevelOrder::rebuild(const EntityStore& store) {
  *this = LevelOrder{};
  const uint32_t slots = store.slot_capacity();
  grow_slots(slots);
  next_stamp();
  std::vector<uint32_t> alive;
  for (uint32_t s = 0; s < slots; ++s)
    if (store.alive_at(s)) {
      up_[s] = resolve_up(store, s);
      alive.push_back(s);
    }
  detect_cycles(alive);
  // Link in reverse slot order so that child lists read in slot order.
  for (auto it = alive.rbegin(); it != alive.rend(); ++it)
    if (up_[*it] != kNone && cycle_[*it] == kNone) link(*it, up_[*it]);

  // Levels: walk up to the first placed ancestor, then down the path. O(N) in all.
  std::vector<uint32_t> path;
  std::vector<uint32_t> counts;
  for (uint32_t s : alive) {
    uint32_t v = s;
    while (v != kNone && level_[v] == kNone) {
      path.push_back(v);
      v = parent_[v];
    }
    uint32_t level = v == kNone ? 0 : level_[v] + 1;
    while (!path.empty()) {
      const uint32_t p = path.back();
      path.pop_back();
      level_[p] = parent_[p] == kNone ? 0 : level;
      level = level_[p] + 1;
      if (counts.size() <= level_[p]) counts.resize(level_[p] + 1, 0);
      ++counts[level_[p]];
    }
  }
  // Segments with an eighth of slack each, entries in slot order within a level.
  levels_.resize(counts.size());
  uint32_t at = 0;
  for (size_t l = 0; l < counts.size(); ++l) {
    levels_[l] = {at, 0, counts[l] + counts[l] / 8 + kMinSegment};
    at += levels_[l].capacity;
  }
  entries_.assign(at, kNone);
  for (uint32_t s : alive) {
    Segment& seg = levels_[level_[s]];
    entry_[s] = seg.begin + seg.count;
    entries_[seg.begin + seg.count++] = s;
  }
  live_ = static_cast<uint32_t>(alive.size());
  layout_changed_ = true;
  rewritten_.push_back({0, at});
}

}  // namespace tprop
