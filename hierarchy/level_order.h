// The depth order, kept up to date edit by edit: what sort_by_depth() computes from scratch, but
// maintained so that a frame that creates, destroys or re-parents k entities costs O(k + the
// entities that must move deeper + the ancestors of the edited entities) instead of O(N).
//
// Every live entity stands at a level, and an attached child stands at a deeper level than its
// parent: that is all the passes need (each level's parents are written by an earlier
// dispatch). The attachment follows exactly the rules of depth_order.h: a Parent that names no
// live entity, or one on a parenting cycle, leaves the entity at the root (detached, evaluated
// as a root); entities hanging below a cycle keep their parent; which entity is attached to
// which is a pure function of the current Parent components, whatever the order of edits.
//
// Levels are not always depths. An edited entity keeps its level when that is still below its
// new parent (or it is now a root): a despawned parent's children become roots where they
// stand, and their subtrees do not move; an entity re-parented higher up keeps its subtree where
// it is. Only an entity that must move deeper moves, with the part of its subtree that it would
// otherwise meet. The slack this leaves (a level deeper than the parent's + 1, or a root below
// level 0) is queued, and compact() takes it out a bounded number of entities at a time, top
// down; with the queue empty, every level is the depth sort_by_depth() gives. Roots below level
// 0 are counted (deep_roots()): a pass over such a level must test kFlagWorldFinal instead of
// multiplying every entity by its parent.
//
// The order itself is a flat array of store slots holding one segment per level. Each segment
// has slack: an entity joining a level is appended in place; a full segment moves to the end of
// the array with twice the room (amortised O(1) per insertion), and once the abandoned space
// outgrows the live entries the whole array is laid out afresh. An entity leaving a level is
// replaced by that level's last entry, so segments stay dense and every entry of
// [begin, begin + count) is a live slot. The GPU passes follow these segments; the per-entity
// data stays at its slot and never moves.
//
// Cost of an edit: detecting whether it closes a cycle walks up from the entity to the first
// ancestor already known this frame (O(depth) for the first edit below a deep chain); an entity
// placed deeper than before pushes down the part of its subtree that stood at or above its new
// level. Cycles made or broken cost their length.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "entity_store.h"
#include "prefetch.h"
#include "slot_vector.h"

namespace tprop {

// Out of host memory its edits (rebuild, apply, compact) throw std::bad_alloc (result.h);
// Propagator::update() catches that and rebuilds the order the next frame.
class LevelOrder {
 public:
  static constexpr uint32_t kNone = 0xffffffffu;
  static_assert(kNone == EntityStore::kNoSlot, "the store's child lists end where the order's do");

  struct Segment {
    uint32_t begin = 0;     // first entry of the level in entries()
    uint32_t count = 0;     // live entries: [begin, begin + count)
    uint32_t capacity = 0;  // room before the next segment: [begin, begin + capacity)
  };

  // Builds the order of the store's current hierarchy from scratch, O(N).
  void rebuild(const EntityStore& store);
  // Brings the order up to date after edits: `structural` is StoreChanges::structural of the
  // store's take_changes() since the last rebuild() or apply(). Slots whose level or attached
  // parent changed (the moved subtrees, new entities) are appended to moved(); dead slots leave
  // the order.
  void apply(const EntityStore& store, std::span<const uint32_t> structural);
  // Moves up to `most` entities up toward their depth (the queued slack, oldest first, each
  // entity's parent before its children), all of them once drifted(), and returns how many
  // moved. Any budget leaves a valid order; an unlimited one (UINT32_MAX) leaves the exact
  // depths; 0 moves nothing, drifted or not. Moves land in rewritten(), not in moved(): an
  // entity moved up keeps its parent and its LocalToWorld. `store` is the one of the last
  // rebuild() or apply(), unchanged since (its child lists are the order's).
  uint32_t compact(const EntityStore& store, uint32_t most);
  // Whether the levels stand more than twice as deep (plus 64) as when the order was last exact
  // (after a rebuild, or when compaction emptied its queue): compact() is falling behind edits
  // that keep leaving slack (a chain losing its head every frame while it grows at its foot
  // needs the whole chain moved every frame to stay exact, so no smaller budget keeps up).
  // Catching up at once costs what exact levels would have cost in one frame, at most once per
  // exact-depth-plus-64 levels of drift, rather than levels (the passes' dispatches) growing
  // without bound.
  bool drifted() const { return level_count() > 2 * exact_levels_ + 64; }
  // Puts the entries of one level of at least `min_entries` entries back in slot order, the
  // level with the largest share of scattered entries among those where at least one in
  // `divisor` is (0: none), and returns how many entries it holds (0 when no level qualifies).
  // A fresh order lists each level in slot order, so the passes read the per-slot arrays
  // forward; edits scatter it (an entity joins its level at the end, a leaving one's place
  // takes the level's last), and after 60 frames of 1,000 spawns, 1,000 despawns and 100
  // re-parents a 1M forest's evaluation on lavapipe took twice as long, reading lines it no
  // longer shares with its neighbours. The sort is O(level) (a radix sort, then every moved
  // entity's node, in slot order), once the level's scattered entries pass its size / divisor:
  // amortised O(divisor) an edit, in one frame. Narrower levels are best left as they are: they
  // matter little to the bytes, sorting them often costs more host time than it saves, and
  // those of at most kAlignedTrackedMax entries are the ones aligned() reports on (sorted, a
  // level's alignment is counted afresh when next asked about: right, but a scan's bundle of
  // parallel chains may lose it).
  uint32_t restore_slot_order(uint32_t divisor, uint32_t min_entries);
  // Entries of `level` placed out of slot order since it was last in order (counted when placed;
  // an upper bound: later edits may have put some right again).
  uint32_t scattered(uint32_t level) const {
    return level < scattered_.size() ? scattered_[level] : 0;
  }
  // Forgets everything (the next apply must be a rebuild).
  void clear();

  // The order: entries()[s.begin .. s.begin + s.count) are the slots of level L for
  // s = levels()[L]. Entries outside every segment's live range are kNone.
  std::span<const uint32_t> entries() const { return entries_; }
  std::span<const Segment> levels() const { return {levels_.data(), level_count()}; }
  uint32_t level_count() const;
  uint32_t size() const { return live_; }
  // Changes whenever an entry or a segment moves (never repeats, rebuilds included): a plan of
  // the passes made from levels() holds while it is the same.
  uint64_t version() const { return version_; }

  // Whether `level` (> 0) is aligned with the level above: as many entries, each entry the
  // attached child of the entry at the same position one level up (a chain, or a bundle of
  // parallel chains: what the passes can scan as prefix products). The first call starts
  // keeping, per entry, whether it fits the entry above it (a byte an entry of the order, and
  // the positions each edit touches); from then on a call costs what the edits since the last
  // one touched, plus, the first time a level is asked about or after it was edited while wider
  // than kAlignedTrackedMax, its entries once. A structural frame's plan asks about every level
  // of the deep runs, and checking each of their entries every frame took 10 ms a frame at 10M
  // entities of gen:mixed on an H100's host (100 chains of 10,000: a million node reads).
  bool aligned(uint32_t level);
  // Levels wider than this stop being kept once edited (the passes ask about levels of at most
  // 4,096 entries): a level recounted when asked about had at least as many edits since.
  static constexpr uint32_t kAlignedTrackedMax = 8192;
  // Positions aligned() has checked since the order was built (what its cost follows).
  uint64_t alignment_checks() const { return alignment_checks_; }

  // Per store slot. level_of/parent_of are kNone for slots not in the order (dead).
  bool contains(uint32_t slot) const { return slot < node_.size() && node_[slot].level != kNone; }
  uint32_t level_of(uint32_t slot) const { return slot < node_.size() ? node_[slot].level : kNone; }
  // The slot of the attached parent; kNone at the root (for any reason).
  uint32_t parent_of(uint32_t slot) const {
    return slot < node_.size() ? node_[slot].parent : kNone;
  }
  // A hint for passes over scattered slots: starts loading the slot's node (none for a slot
  // beyond those the order has seen).
  void prefetch(uint32_t slot) const {
    if (slot < node_.size()) prefetch_line(&node_[slot]);
  }
  uint32_t entry_of(uint32_t slot) const { return slot < node_.size() ? node_[slot].entry : kNone; }
  // Attached children: first_child(store, s), then next_sibling(store, c) until kNone, for the
  // store of the last rebuild() or apply(). They are the store's children of s (its child
  // lists, which the store keeps anyway), less the members of a parenting cycle, which stand at
  // the root: the order keeps no lists of its own, so that an edit rewrites its siblings' and
  // its parent's links once, in the store, not again here (three of the eight lines a detached
  // entity's update read, with the order's own lists).
  uint32_t first_child(const EntityStore& store, uint32_t slot) const {
    return attached_from(store, store.first_child_at(slot), slot);
  }
  uint32_t next_sibling(const EntityStore& store, uint32_t child) const {
    return attached_from(store, store.next_sibling_at(child), node_[child].parent);
  }

  // What changed since take_moved(): slots whose level or attached parent changed, or that
  // joined the order (each once; dead slots are not listed), and the entries rewritten.
  const std::vector<uint32_t>& moved() const { return moved_; }
  // The live slots whose attached parent may have changed (edited slots and members of cycles
  // made or broken); a subset of moved().
  const std::vector<uint32_t>& relinked() const { return relinked_; }
  // Ranges of entries() rewritten since the last take_moved(), [begin, end), unsorted,
  // possibly overlapping; `layout_changed` when segments moved or the array was laid out anew.
  const std::vector<std::pair<uint32_t, uint32_t>>& rewritten() const { return rewritten_; }
  bool layout_changed() const { return layout_changed_; }
  void take_moved();

  // The same figures as DepthOrder.
  uint32_t cycles_broken() const { return cycle_count_; }
  uint32_t entities_on_cycles() const { return on_cycles_; }
  uint32_t unknown_parents() const { return unknown_parents_; }
  uint32_t roots() const { return (levels_.empty() ? 0 : levels_[0].count) + deep_roots_; }
  // Roots (detached entities) standing below level 0.
  uint32_t deep_roots() const { return deep_roots_; }
  // Entities queued for compact(): an upper bound on those standing deeper than their depth.
  size_t slack_queued() const { return slack_.size() - slack_head_; }
  // Entities compact() moved since take_moved().
  uint32_t compacted() const { return compacted_; }

 private:
  void grow_slots(uint32_t slots);
  uint32_t resolve_up(const EntityStore& store, uint32_t slot);
  void dissolve_cycle(uint32_t cycle, std::vector<uint32_t>& affected);
  void detect_cycles(const std::vector<uint32_t>& affected);
  void link(uint32_t slot, uint32_t parent);
  void unlink(uint32_t slot);
  void remove_entry(uint32_t slot);
  // remove_entry() without the count of deep roots (for a lifted slot, apply()).
  void take_entry(uint32_t slot);
  void insert_entry(uint32_t slot, uint32_t level);
  void relocate(uint32_t level, uint32_t capacity);
  void lay_out_afresh(uint32_t slack_divisor, uint32_t keep_levels);
  void place_edited(const EntityStore& store, uint32_t slot);
  void place(const EntityStore& store, uint32_t slot);
  void push_below(const EntityStore& store, uint32_t top);
  // The first of the store's siblings from `child` on that is attached to `parent`.
  uint32_t attached_from(const EntityStore& store, uint32_t child, uint32_t parent) const {
    while (child != kNone && node_[child].parent != parent) child = store.next_sibling_at(child);
    return child;
  }
  void queue_slack(uint32_t slot);
  void note_rewritten(uint32_t begin, uint32_t end);
  void note_scattered(uint32_t level);
  void note_moved(uint32_t slot);
  void touch(uint32_t level, uint32_t position);
  bool misfits(uint32_t level, uint32_t position);
  void move_misfits(uint32_t from, uint32_t to, uint32_t count);
  bool next_stamp();

  // Per slot, all the order keeps, in one place: a walk step, or an edited slot's own
  // bookkeeping, costs one cache miss instead of one per field (at a million entities every
  // step misses; the edited slots' fields in an array of their own were one more line an edit).
  static constexpr uint32_t kMovedEpochs = 1u << 29;
  struct alignas(32) Node {
    uint32_t up = kNone;      // Parent's slot when the Parent names a live entity
    uint32_t parent = kNone;  // attached parent (up unless on a cycle)
    uint32_t level = kNone;   // kNone: not in the order
    uint32_t entry = kNone;   // index in entries_
    uint32_t stamp = 0;       // per-apply marks (see next_stamp)
    uint32_t cycle = kNone;   // the cycle the slot is a member of, or kNone
    uint32_t held = kNone;    // an edited live slot's level, its entry left there (apply())
    uint32_t moved_stamp : 29 = 0;  // listed in moved_ in epoch moved_epoch_ (< kMovedEpochs)
    uint32_t unknown : 1 = 0;       // Parent names no live entity
    uint32_t queued : 1 = 0;        // in slack_
    // An edited live slot has children in the store (apply(), read with its links): it may be
    // on a new cycle, and placed deeper it pushes them down.
    uint32_t has_children : 1 = 0;
  };
  static_assert(sizeof(Node) == 32, "two nodes a cache line");
  SlotVector<Node> node_;
  uint32_t stamp_base_ = 0;
  uint32_t moved_epoch_ = 1;

  // The order.
  SlotVector<uint32_t> entries_;
  std::vector<Segment> levels_;
  std::vector<uint32_t> scattered_;  // per level (scattered())
  std::vector<uint32_t> scattered_levels_;  // the levels whose scattered_ is above 0, once each
  SlotVector<uint32_t> sort_scratch_;  // restore_slot_order()'s, kept for its capacity
  uint32_t live_ = 0;
  uint32_t abandoned_ = 0;  // entries_ space no segment owns any more

  // Cycles: members of each live cycle, ids recycled.
  std::vector<std::vector<uint32_t>> cycles_;
  std::vector<uint32_t> free_cycles_;
  uint32_t cycle_count_ = 0;
  uint32_t on_cycles_ = 0;
  uint32_t unknown_parents_ = 0;
  uint32_t deep_roots_ = 0;

  // Slots that may stand deeper than their depth, oldest first: [slack_head_, size).
  std::vector<uint32_t> slack_;
  size_t slack_head_ = 0;
  uint32_t compacted_ = 0;
  uint32_t exact_levels_ = 0;  // level_count() when the queue was last empty
  uint64_t version_ = 0;

  std::vector<uint32_t> moved_;
  std::vector<uint32_t> relinked_;
  std::vector<uint32_t> walk_;  // push_below's queue, kept for its capacity
  std::vector<uint32_t> path_;  // place_edited's
  std::vector<std::pair<uint32_t, uint32_t>> rewritten_;
  bool layout_changed_ = false;

  // aligned()'s bookkeeping, kept once it was first called: per entry (by index in entries_),
  // whether it misfits (is not the attached child of the entry at its position one level up, or
  // has none there); per level, how many of its live entries misfit, or kNone where not kept
  // (counted afresh when asked about); (level, position) pairs whose fit edits may have changed
  // since the last call. Entries beyond a segment's count never misfit.
  bool aligning_ = false;
  SlotVector<uint8_t> misfit_;
  std::vector<uint32_t> misfit_count_;
  std::vector<std::pair<uint32_t, uint32_t>> touched_;
  uint64_t alignment_checks_ = 0;
};

}  // namespace tprop
