#include "level_order.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace tprop {

namespace {
// Room every segment gets beyond its eighth of slack, so a small level does not relocate at its
// first insertion. Small, because a chain has one level per entity.
constexpr uint32_t kMinSegment = 2;

// Room reserved in the array beyond a fresh layout: relocated segments go to its end, and
// without room the first relocation after a layout reallocated and copied the whole array (a
// 100 ms frame at 10 million entities) to move a segment of a few entries.
size_t with_headroom(size_t entries) { return entries + entries / 4 + 4096; }
}  // namespace

void LevelOrder::clear() {
  const uint64_t version = version_;
  *this = LevelOrder{};
  version_ = version + 1;
}

uint32_t LevelOrder::level_count() const {
  uint32_t n = static_cast<uint32_t>(levels_.size());
  while (n > 0 && levels_[n - 1].count == 0) --n;
  return n;
}

void LevelOrder::grow_slots(uint32_t slots) {
  if (node_.size() >= slots) return;
  node_.resize(slots);
}

// The marks of one apply() share Node::stamp (base + 1..6): on-path and resolved for the cycle
// walk, pointed at by an edited slot's Parent. Edited slots are told apart by level == kNone
// until they are placed.
bool LevelOrder::next_stamp() {
  if (stamp_base_ > 0xfffffff0u) {
    for (Node& n : node_) n.stamp = 0;
    stamp_base_ = 0;
  }
  stamp_base_ += 8;
  return true;
}

uint32_t LevelOrder::resolve_up(const EntityStore& store, uint32_t slot) {
  if (node_[slot].unknown) {
    node_[slot].unknown = 0;
    --unknown_parents_;
  }
  if (!store.alive_at(slot) || !store.has_at(slot, Component::Parent)) return kNone;
  const uint32_t p = store.parent_slot_at(slot);
  assert(p == store.slot_of(store.parent_at(slot)));
  if (p == kNone) {
    node_[slot].unknown = 1;
    ++unknown_parents_;
  }
  return p;
}

// Only while the slot is out of the order: deep_roots_ counts by the parent at insertion. The
// child lists are the store's (first_child()), so attaching is the slot's own field alone.
void LevelOrder::link(uint32_t slot, uint32_t parent) {
  assert(node_[slot].level == kNone);
  node_[slot].parent = parent;
}

void LevelOrder::unlink(uint32_t slot) {
  assert(node_[slot].level == kNone);
  node_[slot].parent = kNone;
}

void LevelOrder::remove_entry(uint32_t slot) {
  if (node_[slot].parent == kNone && node_[slot].level > 0) --deep_roots_;
  take_entry(slot);
}

void LevelOrder::take_entry(uint32_t slot) {
  ++version_;
  const uint32_t level = node_[slot].level;
  Segment& seg = levels_[level];
  const uint32_t i = node_[slot].entry;
  const uint32_t last = seg.begin + seg.count - 1;
  if (i != last) {
    const uint32_t moved = entries_[last];
    entries_[i] = moved;
    node_[moved].entry = i;
    note_rewritten(i, i + 1);
    // The level's last entry fills the hole: out of slot order unless it falls between the
    // hole's neighbours (its old place, the last, left no gap).
    if ((i > seg.begin && entries_[i - 1] > moved) || (i + 1 < last && entries_[i + 1] < moved))
      note_scattered(level);
  }
  entries_[last] = kNone;
  --seg.count;
  if (aligning_) {
    // The last position leaves the level with its misfit; the entry moved into i is checked
    // later, and so are the entries below both positions.
    if (misfit_[last]) {
      misfit_[last] = 0;
      if (misfit_count_[level] != kNone) --misfit_count_[level];
    }
    if (i != last) {
      touch(level, i - seg.begin);
      touch(level + 1, i - seg.begin);
    }
    touch(level + 1, last - seg.begin);
  }
  node_[slot].entry = kNone;
  node_[slot].level = kNone;
  --live_;
}

void LevelOrder::insert_entry(uint32_t slot, uint32_t level) {
  ++version_;
  if (levels_.size() <= level) {
    levels_.resize(level + 1);
    scattered_.resize(level + 1, 0);
    if (aligning_) misfit_count_.resize(level + 1, 0);
  }
  if (levels_[level].count == levels_[level].capacity)
    relocate(level, std::max(kMinSegment, levels_[level].capacity * 2));
  Segment& seg = levels_[level];
  const uint32_t i = seg.begin + seg.count++;
  if (i > seg.begin && entries_[i - 1] > slot) note_scattered(level);
  entries_[i] = slot;
  node_[slot].entry = i;
  node_[slot].level = level;
  note_rewritten(i, i + 1);
  if (aligning_) {
    touch(level, i - seg.begin);
    touch(level + 1, i - seg.begin);
  }
  ++live_;
  if (node_[slot].parent == kNone && level > 0) ++deep_roots_;
}

void LevelOrder::relocate(uint32_t level, uint32_t capacity) {
  ++version_;
  Segment& seg = levels_[level];
  layout_changed_ = true;
  if (seg.capacity > 0 && seg.begin + seg.capacity == entries_.size()) {
    // The last segment of the array grows in place.
    entries_.resize(seg.begin + capacity, kNone);
    if (aligning_) misfit_.resize(entries_.size(), 0);
    seg.capacity = capacity;
    return;
  }
  const uint32_t begin = static_cast<uint32_t>(entries_.size());
  entries_.resize(size_t(begin) + capacity, kNone);
  for (uint32_t k = 0; k < seg.count; ++k) {
    const uint32_t s = entries_[seg.begin + k];
    entries_[begin + k] = s;
    node_[s].entry = begin + k;
    entries_[seg.begin + k] = kNone;
  }
  if (aligning_) {
    misfit_.resize(entries_.size(), 0);
    move_misfits(seg.begin, begin, seg.count);
  }
  if (seg.count) note_rewritten(begin, begin + seg.count);
  abandoned_ += seg.capacity;
  seg.begin = begin;
  seg.capacity = capacity;
  // Once more of the array is abandoned than lives in it, lay it out afresh: O(N), but only
  // after Omega(N) relocated entries, so amortised O(1) per insertion.
  // (Removals lower live_ without this check, so a level's first insertion can be what finds the
  // threshold passed: the layout must keep that level, still empty, for the entry to come.)
  if (abandoned_ > live_ + 4 * kMinSegment * levels_.size() + 65536) lay_out_afresh(8, level + 1);
}

void LevelOrder::lay_out_afresh(uint32_t slack_divisor, uint32_t keep_levels) {
  ++version_;
  // Empty levels left at the bottom by a destroyed deep chain go, but not those the caller is
  // about to fill.
  levels_.resize(std::max(level_count(), keep_levels));
  scattered_.resize(levels_.size(), 0);
  std::erase_if(scattered_levels_, [&](uint32_t l) { return l >= levels_.size(); });
  SlotVector<uint32_t> old = std::move(entries_);
  size_t total = 0;
  for (Segment& seg : levels_) total += seg.count + seg.count / slack_divisor + kMinSegment;
  entries_.reserve(with_headroom(total));
  entries_.assign(total, kNone);
  SlotVector<uint8_t> old_misfit;
  if (aligning_) {
    misfit_count_.resize(levels_.size());
    old_misfit.swap(misfit_);
    misfit_.reserve(with_headroom(total));
    misfit_.assign(total, 0);
  }
  uint32_t at = 0;
  for (Segment& seg : levels_) {
    for (uint32_t k = 0; k < seg.count; ++k) {
      const uint32_t s = old[seg.begin + k];
      entries_[at + k] = s;
      node_[s].entry = at + k;
    }
    if (aligning_)
      std::copy_n(old_misfit.begin() + seg.begin, seg.count, misfit_.data() + at);
    seg.begin = at;
    seg.capacity = seg.count + seg.count / slack_divisor + kMinSegment;
    at += seg.capacity;
  }
  abandoned_ = 0;
  layout_changed_ = true;
  rewritten_.clear();
  rewritten_.push_back({0, static_cast<uint32_t>(entries_.size())});
}

void LevelOrder::note_rewritten(uint32_t begin, uint32_t end) {
  // Appends to one level come in a row: one range for them all.
  if (!rewritten_.empty() && rewritten_.back().second == begin) {
    rewritten_.back().second = end;
  } else {
    rewritten_.push_back({begin, end});
  }
}

void LevelOrder::note_moved(uint32_t slot) {
  if (node_[slot].moved_stamp == moved_epoch_) return;
  node_[slot].moved_stamp = moved_epoch_;
  moved_.push_back(slot);
}

void LevelOrder::take_moved() {
  moved_.clear();
  relinked_.clear();
  rewritten_.clear();
  layout_changed_ = false;
  compacted_ = 0;
  if (++moved_epoch_ == kMovedEpochs) {  // Node::moved_stamp has 29 bits
    for (Node& n : node_) n.moved_stamp = 0;
    moved_epoch_ = 1;
  }
}

void LevelOrder::dissolve_cycle(uint32_t cycle, std::vector<uint32_t>& affected) {
  for (uint32_t m : cycles_[cycle]) {
    node_[m].cycle = kNone;
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
    while (v != kNone && node_[v].cycle == kNone && node_[v].stamp != resolved) {
      if (node_[v].stamp == on_path) {
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
          node_[*it].cycle = id;
          cycles_[id].push_back(*it);
        }
        on_cycles_ += static_cast<uint32_t>(cycles_[id].size());
        ++cycle_count_;
        break;
      }
      node_[v].stamp = on_path;
      path.push_back(v);
      v = node_[v].up;
    }
    for (uint32_t p : path) node_[p].stamp = resolved;
  }
}

void LevelOrder::queue_slack(uint32_t slot) {
  if (node_[slot].queued) return;
  node_[slot].queued = 1;
  slack_.push_back(slot);
}

// Moves down whatever below `top` now stands at or above its parent's level, breadth first
// (parents still placed before their children), and stops where a child is deeper already: the
// rest of that subtree keeps its levels. Children apply() has not placed yet read as kNone and
// are left to it. The entities a few places ahead are known, so their scattered lines are asked
// for while this one moves: a moved subtree of thousands cost ~200 ns an entity in misses met
// one at a time.
void LevelOrder::push_below(const EntityStore& store, uint32_t top) {
  constexpr size_t kAhead = 8;
  std::vector<uint32_t>& queue = walk_;
  queue.clear();
  queue.push_back(top);
  for (size_t k = 0; k < queue.size(); ++k) {
    if (k + kAhead < queue.size()) {
      const uint32_t ahead = queue[k + kAhead];
      const uint32_t e = node_[ahead].entry;  // its node came in when it was queued
      if (e != kNone) prefetch_line(&entries_[e]);
      const uint32_t child = store.first_child_at(ahead);  // its links: read when it was queued
      if (child != kNone) {
        prefetch_line(&node_[child]);
        store.prefetch_links(child);
      }
    }
    const uint32_t v = queue[k];
    const uint32_t level = node_[v].level;
    for (uint32_t c = first_child(store, v); c != kNone; c = next_sibling(store, c)) {
      if (node_[c].level == kNone || node_[c].level > level) continue;
      remove_entry(c);
      insert_entry(c, level + 1);
      note_moved(c);
      queue.push_back(c);
    }
  }
}

// An edited slot, whose parent is placed: it stays at the level it held when that is still
// deeper than its parent (any level for a root), else it goes one below its parent and pushes
// its subtree down as far as needed.
void LevelOrder::place(const EntityStore& store, uint32_t slot) {
  const uint32_t p = node_[slot].parent;
  const uint32_t need = p == kNone ? 0 : node_[p].level + 1;
  const uint32_t held = node_[slot].held;
  node_[slot].held = kNone;
  const bool keep = held != kNone && held >= need;
  if (held != kNone) {
    // Lifted (apply()): its entry still stands in level `held`.
    node_[slot].level = held;
    if (keep) {
      ++version_;  // the entry stays, but its parent changed: a plan's alignment may not hold
      if (p == kNone && held > 0) ++deep_roots_;
      if (aligning_) touch(held, node_[slot].entry - levels_[held].begin);
    } else {
      take_entry(slot);
    }
  }
  if (!keep) insert_entry(slot, need);
  note_moved(slot);
  if (keep && held > need) queue_slack(slot);
  // Kept where it was, its children stand below it already; placed deeper (or new), those it
  // kept from before may not (a new one has none: no look at its links).
  if (!keep && node_[slot].has_children) push_below(store, slot);
}

// Places an edited slot, after its edited ancestors that are not placed yet (their levels
// decide its own): parents before children, each once.
void LevelOrder::place_edited(const EntityStore& store, uint32_t slot) {
  if (node_[slot].level != kNone) return;
  // Most often its parent is placed (or it has none): no path to gather.
  const uint32_t p = node_[slot].parent;
  if (p == kNone || node_[p].level != kNone) return place(store, slot);
  path_.clear();
  for (uint32_t v = slot; v != kNone && node_[v].level == kNone; v = node_[v].parent)
    path_.push_back(v);
  for (auto it = path_.rbegin(); it != path_.rend(); ++it) place(store, *it);
}

uint32_t LevelOrder::compact(const EntityStore& store, uint32_t most) {
  if (drifted() && most > 0) most = UINT32_MAX;
  uint32_t moved = 0;
  // The queue says which scattered slots come next: their nodes are asked for kFar places
  // ahead, and what a node points at (its entry, its parent's node) and its links in the store
  // (its children) kNear places ahead, once it is in, as apply() does for edited slots.
  constexpr size_t kFar = 16, kNear = 8;
  while (moved < most && slack_head_ < slack_.size()) {
    if (slack_head_ + kFar < slack_.size()) {
      const uint32_t far = slack_[slack_head_ + kFar];
      prefetch_line(&node_[far]);
    }
    if (slack_head_ + kNear < slack_.size()) {
      const Node& near = node_[slack_[slack_head_ + kNear]];
      if (near.entry != kNone) prefetch_line(&entries_[near.entry]);
      if (near.parent != kNone) prefetch_line(&node_[near.parent]);
      store.prefetch_links(slack_[slack_head_ + kNear]);
    }
    const uint32_t v = slack_[slack_head_++];
    node_[v].queued = 0;
    const uint32_t level = node_[v].level;
    if (level == kNone) continue;  // died since
    const uint32_t p = node_[v].parent;
    const uint32_t need = p == kNone ? 0 : node_[p].level + 1;
    if (level <= need) continue;  // placed exactly since, by an edit or a push
    remove_entry(v);
    insert_entry(v, need);
    ++moved;
    // Each child stood below the old level, so each has slack now.
    for (uint32_t c = first_child(store, v); c != kNone; c = next_sibling(store, c))
      queue_slack(c);
  }
  compacted_ += moved;
  if (slack_head_ == slack_.size()) {
    slack_.clear();
    slack_head_ = 0;
    exact_levels_ = level_count();
  } else if (slack_head_ > 4096 && slack_head_ > slack_.size() / 2) {
    slack_.erase(slack_.begin(), slack_.begin() + static_cast<std::ptrdiff_t>(slack_head_));
    slack_head_ = 0;
  }
  return moved;
}

void LevelOrder::apply(const EntityStore& store, std::span<const uint32_t> structural) {
  grow_slots(store.slot_capacity());
  next_stamp();

  // The edited slots (the store lists each once), and every member of a cycle that one of them
  // belonged to: that cycle is gone, so its members stand where their Parents say now.
  std::vector<uint32_t> with_members;
  if (cycle_count_ > 0) {
    for (uint32_t s : structural)
      if (node_[s].cycle != kNone) dissolve_cycle(node_[s].cycle, with_members);
    if (!with_members.empty()) {
      with_members.insert(with_members.end(), structural.begin(), structural.end());
      std::sort(with_members.begin(), with_members.end());
      with_members.erase(std::unique(with_members.begin(), with_members.end()),
                         with_members.end());
    }
  }
  const std::span<const uint32_t> edited =
      with_members.empty() ? structural : std::span<const uint32_t>(with_members);

  // The loops below visit scattered slots of arrays of millions, a few dependent misses each:
  // the lines of the slots kAhead places on are asked for first, and what those lines point at
  // once they are in, so that the misses of several slots overlap. (8 places left the detach
  // loop waiting on lines asked for too late: a world frame's update, 3,000 edited slots, took
  // 10% longer.)
  constexpr size_t kAhead = 16;
  auto at = [&](size_t k) { return k < edited.size() ? edited[k] : kNone; };

  // Take them out of the order (level == kNone marks an edited slot until it is placed again)
  // and resolve their Parent afresh. A live slot's entry stays where it stands until place()
  // knows its level (lifted): one that keeps its level (a child whose parent died, one
  // re-parented higher up or at the same depth, a slot destroyed and created again, most cycle
  // members) then keeps its entry too, where taking it out and appending it again rewrote two
  // entries, the level's last node and the slot order (a churn frame's 1,000 orphans, a world's
  // children of deleted entities). Nothing reads a lifted entry before place(): an exception
  // out of apply() leaves the order to be cleared (Propagator::update() does).
  auto detach = [&](uint32_t s, bool live) {
    const uint32_t level = node_[s].level;
    node_[s].held = live ? level : kNone;  // a dead slot forgets its level
    if (level != kNone) {
      if (!live) {
        remove_entry(s);
      } else {
        if (node_[s].parent == kNone && level > 0) --deep_roots_;
        node_[s].level = kNone;
      }
    }
    unlink(s);
  };
  std::vector<uint32_t> alive;
  for (size_t k = 0; k < edited.size(); ++k) {
    if (const uint32_t a = at(k + 2 * kAhead); a != kNone) {
      prefetch_line(&node_[a]);
      store.prefetch(a);
    }
    if (const uint32_t a = at(k + kAhead); a != kNone) {
      const Node& n = node_[a];
      if (n.entry != kNone) prefetch_line(&entries_[n.entry]);
      store.prefetch_links(a);
    }
    // Its Parent resolved while its lines are in (a second pass over a few thousand edited
    // slots found them gone from the core's cache): detaching reads no slot's `up`.
    const uint32_t s = edited[k];
    const bool live = store.alive_at(s);
    detach(s, live);
    node_[s].up = resolve_up(store, s);
    // Whether it has children (the store's, those on a cycle too), noted while its links are in.
    node_[s].has_children = live && store.has_children_at(s);
    if (live) alive.push_back(s);
  }
#ifndef NDEBUG
  for (uint32_t s : edited)
    assert((store.alive_at(s) || !store.has_children_at(s)) &&
           "a destroyed entity's children lose their Parent");
#endif

  // New cycles (each closed by an edited slot) stand at the root: detach their members too.
  // Only a slot that something points at can be on one: a slot with children, or the Parent of
  // an edited slot. A spawned leaf, the common edit, is neither, and its walk up to the root was
  // most of a spawn frame's cycle check.
  const uint32_t pointed_at = stamp_base_ + 6;
  for (uint32_t s : alive)
    if (node_[s].up != kNone) node_[node_[s].up].stamp = pointed_at;
  std::vector<uint32_t> starts;
  for (uint32_t s : alive)
    if (node_[s].has_children || node_[s].stamp == pointed_at) starts.push_back(s);
  detect_cycles(starts);
  for (size_t i = 0, n = alive.size(); i < n; ++i) {
    const uint32_t id = node_[alive[i]].cycle;
    if (id == kNone) continue;
    for (uint32_t m : cycles_[id])
      if (node_[m].level != kNone) {  // a member whose own Parent did not change
        detach(m, true);
        node_[m].has_children = store.has_children_at(m);
        alive.push_back(m);
      }
  }
  for (uint32_t s : alive)
    if (node_[s].up != kNone && node_[s].cycle == kNone) link(s, node_[s].up);

  // Place every edited slot, parents first.
  for (size_t k = 0; k < alive.size(); ++k) {
    if (k + kAhead < alive.size()) {
      prefetch_line(&node_[alive[k + kAhead]]);
    }
    if (k + kAhead / 2 < alive.size()) {
      const uint32_t p = node_[alive[k + kAhead / 2]].parent;  // place() reads its level
      if (p != kNone) prefetch_line(&node_[p]);
    }
    place_edited(store, alive[k]);
  }
  relinked_.insert(relinked_.end(), alive.begin(), alive.end());
}

void LevelOrder::rebuild(const EntityStore& store) {
  clear();
  const uint32_t slots = store.slot_capacity();
  grow_slots(slots);
  next_stamp();
  std::vector<uint32_t> alive;
  for (uint32_t s = 0; s < slots; ++s)
    if (store.alive_at(s)) {
      node_[s].up = resolve_up(store, s);
      alive.push_back(s);
    }
  detect_cycles(alive);
  for (uint32_t s : alive)
    if (node_[s].up != kNone && node_[s].cycle == kNone) link(s, node_[s].up);

  // Levels: walk up to the first placed ancestor, then down the path. O(N) in all.
  std::vector<uint32_t> path;
  std::vector<uint32_t> counts;
  for (uint32_t s : alive) {
    uint32_t v = s;
    while (v != kNone && node_[v].level == kNone) {
      path.push_back(v);
      v = node_[v].parent;
    }
    uint32_t level = v == kNone ? 0 : node_[v].level + 1;
    while (!path.empty()) {
      const uint32_t p = path.back();
      path.pop_back();
      node_[p].level = node_[p].parent == kNone ? 0 : level;
      level = node_[p].level + 1;
      if (counts.size() <= node_[p].level) counts.resize(node_[p].level + 1, 0);
      ++counts[node_[p].level];
    }
  }
  // Segments with an eighth of slack each, entries in slot order within a level.
  levels_.resize(counts.size());
  scattered_.assign(levels_.size(), 0);
  uint32_t at = 0;
  for (size_t l = 0; l < counts.size(); ++l) {
    levels_[l] = {at, 0, counts[l] + counts[l] / 8 + kMinSegment};
    at += levels_[l].capacity;
  }
  entries_.reserve(with_headroom(at));
  entries_.assign(at, kNone);
  for (uint32_t s : alive) {
    Segment& seg = levels_[node_[s].level];
    node_[s].entry = seg.begin + seg.count;
    entries_[seg.begin + seg.count++] = s;
  }
  live_ = static_cast<uint32_t>(alive.size());
  exact_levels_ = level_count();
  layout_changed_ = true;
  rewritten_.push_back({0, at});
}

}  // namespace tprop
