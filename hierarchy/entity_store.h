// The entity store: every entity's transform components, built for 10 million entities.
//
// Entities are named by caller-chosen 32-bit ids and live in slots. The common components
// (translation, rotation, scale, non-uniform scale, parent) sit in one 64-byte record per slot,
// so that setting or packing an entity costs one cache line; the rare ones (Euler angles, post
// rotation, pivots, the matrix components) share one side record per entity that has any.
// NonUniformScale is common: glTF nodes and Decentraland transforms carry a per-axis scale on
// every entity. Every operation is O(1) apart from destroy, which is O(children).
//
// Hierarchy bookkeeping follows the Unity seeds: Parent is the source of truth; Child lists and
// PreviousParent are derived. A Parent may name an id that does not exist (yet): the entity then
// stands at the root, and it attaches as soon as an entity with that id is created. Destroying
// an entity detaches its children, which lose their Parent and become roots (Unity's
// ParentSystem).
//
// The child lists hang from the parent's slot while the parent lives, and from its id in a
// small map while it does not (a Parent named ahead of its entity), so that creating,
// destroying and re-parenting entities under live parents, as a Decentraland world does a few
// thousand times a frame, looks no parent up by id: those id-map probes were a quarter of the
// world's ingest, one cache miss each.
//
// Out of host memory an edit throws std::bad_alloc (result.h), leaving the store as it was, or,
// where it had changed something already, with every change made reported by take_changes().
// take_changes() never throws.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "components.h"
#include "id_map.h"
#include "prefetch.h"
#include "slot_vector.h"

namespace tprop {

// The side record of an entity that carries any rare component. Values are meaningful only
// where the matching presence bit is set.
struct RareComponents {
  float3 rotation_euler[kEulerOrderCount]{};
  quat post_rotation{1.0f, 0.0f, 0.0f, 0.0f};
  float3 post_rotation_euler[kEulerOrderCount]{};
  float3 pivot[kPivotComponentCount]{};
  float4x4 matrix[kMatrixComponentCount]{float4x4(1.0f), float4x4(1.0f), float4x4(1.0f),
                                         float4x4(1.0f), float4x4(1.0f)};
};

// The values a values-only change carries: an entity's Translation, Rotation, Scale and
// NonUniformScale and which components it has, as the store holds them (the head of its record).
struct ValueSnapshot {
  float3 translation{0.0f};
  uint32_t flags = 0;  // the presence bits (components()) and the store's own flags above them
  quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
  float3 non_uniform_scale{1.0f};
  float scale = 1.0f;

  ComponentMask components() const { return flags & ((1u << kComponentCount) - 1); }
};
static_assert(sizeof(ValueSnapshot) == 48, "three 16-byte moves");

// What changed since the last take_changes(): consumers update their depth order only where the
// hierarchy changed (`structural`) and re-upload only the listed slots.
struct StoreChanges {
  bool hierarchy = false;              // an entity was created or destroyed, or a Parent changed
  // Slots changed in any way but `values`'s (may be dead now): components added or removed, rare
  // components' values, Static, Parent, created and destroyed entities.
  std::vector<uint32_t> slots;
  // Live slots whose only change was the value of Translation, Rotation, Scale or
  // NonUniformScale components they already had, so that what a backend derived from the
  // component set still holds and the new values alone need uploading: most of a frame's changes
  // in a game or a world. A slot is in at most one of `slots` and `values`.
  std::vector<uint32_t> values;
  // Either empty or one per `values` entry: that slot's values as of take_changes(), copied by
  // the setters as they wrote them, so that a consumer reads them one after the other instead
  // of from records scattered over the store (at 10 million entities a record read was a cache
  // miss, most of a 1% values frame's update). Empty in a store smaller than its log threshold
  // (EntityStore::set_value_log_threshold), when the frame changed more values than the store
  // logs (an eighth of its slots, at least 4,096: a frame that changes most entities reads the
  // records about in order anyway) or when logging them ran out of memory. Points into the
  // store: valid until its next take_changes(), assignment or destruction.
  std::span<const ValueSnapshot> value_records;
  // Slots whose parent, as the depth order resolves it, may have changed: created and destroyed
  // entities, Parents set or removed, children that lost their Parent to a destroyed entity, and
  // children whose Parent named an id that has just been created. Each slot once; a slot may be
  // dead now, or hold another entity than at the last take_changes().
  std::vector<uint32_t> structural;
};

// Which store an EntityStore is, for a consumer that keeps state about one store from frame to
// frame (Propagator::update): an address says nothing once a store is assigned a new scene
// (`store = EntityStore{}`) or made where a destroyed one lived. A number no other store has
// held in this process: kept by a move (the entities and their pending changes go with it),
// new for a copy, for a store assigned another's contents, and for what a move leaves behind.
class StoreIdentity {
 public:
  StoreIdentity() noexcept : value_(next()) {}
  StoreIdentity(const StoreIdentity&) noexcept : value_(next()) {}
  StoreIdentity& operator=(const StoreIdentity&) noexcept {
    value_ = next();
    return *this;
  }
  StoreIdentity(StoreIdentity&& other) noexcept : value_(other.value_) { other.value_ = next(); }
  StoreIdentity& operator=(StoreIdentity&& other) noexcept {
    value_ = other.value_;
    other.value_ = next();
    return *this;
  }
  uint64_t value() const { return value_; }

 private:
  static uint64_t next() noexcept;
  uint64_t value_;
};

class EntityStore {
 public:
  static constexpr uint32_t kNoSlot = 0xffffffffu;

  // See StoreIdentity: never 0, never another store's.
  uint64_t identity() const { return identity_.value(); }

  // Returns false when an entity with this id already exists.
  bool create(EntityId id);
  // The same, returning the new entity's slot (kNoSlot when the id exists): for callers that
  // keep their entities' slots, one id look-up instead of two.
  uint32_t create_at_slot(EntityId id);
  // Returns false when there is no such entity. Its children lose their Parent.
  bool destroy(EntityId id);
  // The same for the live entity at `slot`, for callers that keep their entities' slots: one
  // id-map probe instead of two.
  void destroy_at(uint32_t slot);
  // Room for destroying `entities` entities that have `children` children in all (each entity's
  // child_count_at(), counted before the first destroy): after it, those destroy() calls
  // allocate nothing, so a caller that must not stop half way can fail before it starts.
  // Throws std::bad_alloc, leaving the store as it was.
  void reserve_destroys(size_t entities, size_t children);
  // The entities whose Parent names the live entity at `slot`: O(that many).
  size_t child_count_at(uint32_t slot) const;
  // Whether any entity's Parent names the live entity at `slot`: O(1).
  bool has_children_at(uint32_t slot) const { return links_[slot].first_child != kNoSlot; }
  // Those entities as a list: first_child_at(slot), then next_sibling_at(child) until kNoSlot
  // (in no particular order; an entity whose Parent names no live entity is in none).
  uint32_t first_child_at(uint32_t slot) const { return links_[slot].first_child; }
  uint32_t next_sibling_at(uint32_t slot) const { return links_[slot].next_sibling; }
  bool contains(EntityId id) const { return slot_of(id) != kNoSlot; }
  size_t size() const { return id_to_slot_.size(); }
  void reserve(size_t entities);
  // Plain value changes are logged for the consumer (StoreChanges::value_records) in frames
  // that start with at least `slots` slots; 0: in every frame. It takes effect at the next
  // take_changes(), or now if nothing is listed yet. The log costs the setters about 40
  // instructions a call, and saves update() a record read a change, which pays where the
  // records do not stay cached: measured on a 2-core VM, at 10M entities a 1% values frame's
  // update 2.5 -> 0.9 ms for 1 ms more of edits, at 1M no faster for 0.25 ms more of edits.
  // Default kValueLogSlots, between the two.
  static constexpr size_t kValueLogSlots = size_t(1) << 22;
  void set_value_log_threshold(size_t slots);

  // Setters add the component when absent. Each returns false when the entity does not exist.
  bool set_translation(EntityId e, float3 v);
  bool set_rotation(EntityId e, quat q);
  bool set_scale(EntityId e, float s);
  bool set_non_uniform_scale(EntityId e, float3 s);
  bool set_rotation_euler(EntityId e, EulerOrder order, float3 radians);
  bool set_post_rotation(EntityId e, quat q);
  bool set_post_rotation_euler(EntityId e, EulerOrder order, float3 radians);
  bool set_pivot(EntityId e, PivotComponent p, float3 v);
  // A user-written matrix value.
  bool set_matrix(EntityId e, MatrixComponent m, const float4x4& value);
  bool set_parent(EntityId e, EntityId parent);
  // The same at a live slot, for callers that keep their entities' slots (no id look-up of the
  // entity; one of the parent).
  void set_parent_at(uint32_t slot, EntityId parent);
  // The same with a live parent given by its id and its slot as well: no id look-up at all.
  void set_parent_at(uint32_t slot, EntityId parent, uint32_t parent_slot);
  // Every entity whose Parent names `from` gets Parent `to` instead, as set_parent would do one
  // by one, without listing them first.
  void move_children(EntityId from, EntityId to);
  // The same between two live entities given by their slots.
  void move_children_at(uint32_t from_slot, uint32_t to_slot);
  // A whole local transform at a live slot, for ingest paths that find an entity's slot once a
  // message rather than once a setter (a Decentraland Transform message): Translation,
  // Rotation and Scale, removing NonUniformScale; or, with a float3 scale, NonUniformScale,
  // removing Scale.
  void set_trs_at(uint32_t slot, float3 translation, quat rotation, float scale);
  void set_trs_at(uint32_t slot, float3 translation, quat rotation, float3 non_uniform_scale);
  // Adds a component with its default value (identity, zero pivots, unit scale) or, for the tag
  // components Static and WriteGroupOverride, just the tag. Keeps the value if already present.
  bool add(EntityId e, Component c);
  bool remove(EntityId e, Component c);
  bool has(EntityId e, Component c) const;

  // The parent named by e's Parent component, if it has one.
  std::optional<EntityId> parent(EntityId e) const;
  // Derived: the entities whose Parent names e, in no particular order. Empty for unknown ids.
  std::vector<EntityId> children(EntityId e) const;
  // Derived: the Parent as of the last take_changes(); empty when e had none then.
  std::optional<EntityId> previous_parent(EntityId e) const;

  // Slot-level access for bulk passes (sorting, packing, the reference).
  uint32_t slot_of(EntityId e) const { return id_to_slot_.find(e); }
  uint32_t slot_capacity() const { return static_cast<uint32_t>(ids_.size()); }
  bool alive_at(uint32_t slot) const { return (rec_[slot].flags & kAlive) != 0; }
  EntityId id_at(uint32_t slot) const { return ids_[slot]; }
  ComponentMask mask_at(uint32_t slot) const { return rec_[slot].flags & kComponentBits; }
  bool has_at(uint32_t slot, Component c) const { return (rec_[slot].flags & bit(c)) != 0; }
  float3 translation_at(uint32_t slot) const { return rec_[slot].translation; }
  quat rotation_at(uint32_t slot) const { return rec_[slot].rotation; }
  float scale_at(uint32_t slot) const { return rec_[slot].scale; }
  float3 non_uniform_scale_at(uint32_t slot) const { return rec_[slot].non_uniform_scale; }
  // The slot's values and presence bits as one snapshot (its record's head).
  const ValueSnapshot& values_at(uint32_t slot) const { return rec_[slot]; }
  EntityId parent_at(uint32_t slot) const { return rec_[slot].parent; }
  // The slot of the entity that parent_at(slot) names, or kNoSlot when none has that id (only
  // while the entity has a Parent): what slot_of(parent_at(slot)) gives, without its look-up.
  uint32_t parent_slot_at(uint32_t slot) const { return links_[slot].parent_slot; }
  // nullptr when the entity carries no rare component.
  const RareComponents* rare_at(uint32_t slot) const {
    return rec_[slot].rare_index == kNoSlot ? nullptr : &rare_[rec_[slot].rare_index];
  }
  // A hint for passes over scattered slots (the changed ones, or a batch of messages about to be
  // applied with set_trs_at): starts loading the slot's record, so that the misses of several
  // slots overlap instead of queueing one by one.
  void prefetch(uint32_t slot) const { prefetch_line(&rec_[slot]); }
  // The same, loaded now (fetch_line; unlike the hint, the slot must be one the store has):
  // for a caller about to apply a batch of changes.
  void fetch(uint32_t slot) const { fetch_line(&rec_[slot]); }
  // The same for what re-parenting or destroying the entity at the slot reads first: its links
  // to its parent, siblings and children (one line).
  void prefetch_links(uint32_t slot) const { prefetch_line(&links_[slot]); }
  // The same for the links that unlinking the entity at the slot from its parent's child list
  // rewrites: its siblings' and its parent's. Reads the slot's own links: ask for them first
  // (prefetch_links), a few steps ahead.
  void prefetch_link_neighbours(uint32_t slot) const {
    if (slot >= links_.size()) return;
    const Links& l = links_[slot];
    for (const uint32_t s : {l.prev_sibling, l.next_sibling, l.parent_slot})
      if (s < links_.size()) prefetch_line(&links_[s]);
  }
  // The same for the id map's entry of `id` (what creating or destroying it looks up).
  void prefetch_id(EntityId id) const { id_to_slot_.prefetch(id); }
  // The same for what destroying the entity at the slot reads beside its record and links: its
  // id (kept apart from the record, which a destruction asks for too: prefetch()).
  void prefetch_id_at(uint32_t slot) const { prefetch_line(&ids_[slot]); }
  // Whether a Static entity's LocalToWorld has been computed in an earlier frame, so that every
  // backend now keeps it frozen.
  bool static_baked_at(uint32_t slot) const { return (rec_[slot].flags & kStaticBaked) != 0; }

  // Hands over what changed since the last call and makes PreviousParent current. Never throws
  // (the lists are handed over, not copied).
  StoreChanges take_changes();
  // Ends a frame: every Static entity present now has had its LocalToWorld computed, so from the
  // next frame on backends keep it frozen.
  void mark_statics_baked();

 private:
  StoreIdentity identity_;
  static constexpr uint32_t kComponentBits = (1u << kComponentCount) - 1;
  static constexpr uint32_t kHadPreviousParent = 1u << 29;
  static constexpr uint32_t kStaticBaked = 1u << 30;
  static constexpr uint32_t kAlive = 1u << 31;

  uint32_t live_slot(EntityId e) const;
  // Capacity for `more` further elements of a change list, grown geometrically: out of line,
  // so that the setters inlined below stay small (the lists grow only now and then).
  [[gnu::noinline]] static void grow_for(std::vector<uint32_t>& list, size_t more);
  static void room_for_one(std::vector<uint32_t>& list) {
    if (list.size() == list.capacity()) [[unlikely]] grow_for(list, 1);
  }
  RareComponents& rare_for_write(uint32_t slot);
  // A change that `values` cannot carry, and one that it can.
  void touch(uint32_t slot);
  void touch_value(uint32_t slot);
  // After a setter wrote a slot's values: its log entry, if it has one, gets them.
  void log_values(uint32_t slot);
  // touch_value()'s part for a newly listed slot: an entry at the log's end, or the log given up
  // for this frame (full, or out of memory).
  void log_new_entry(uint32_t slot);
  [[gnu::noinline]] void grow_log();
  // take_changes()'s part: value_slots_ without the slots reshaped since they were listed.
  void drop_spoiled_values();
  // Record::marks: the frame (frame_, 24 bits) in which the slot was last listed, above the
  // lists it joined in that frame. Marks of an earlier frame are stale: the slot is in no list
  // now, and take_changes() hands the lists over without visiting their records.
  static constexpr uint32_t kListedValues = 1;      // value_slots_
  static constexpr uint32_t kListedReshaped = 2;    // dirty_slots_
  static constexpr uint32_t kListedStructural = 4;  // structural_slots_
  static constexpr uint32_t kFrameShift = 8;
  static constexpr uint32_t kFrameEnd = 1u << 24;
  // The lists the slot joined in this frame, and setting them.
  uint32_t listed(uint32_t slot) const {
    const uint32_t marks = rec_[slot].marks;
    return marks >> kFrameShift == frame_ ? marks & ((1u << kFrameShift) - 1) : 0;
  }
  void set_listed(uint32_t slot, uint32_t lists) {
    rec_[slot].marks = frame_ << kFrameShift | lists;
  }
  // Room in the change lists for `slots` entities whose Parent changes, made before anything
  // changes: out of memory, the store stays as it was. (A Parent naming an id that no entity has
  // also needs room in pending_children_: IdMap::make_room_for_one.)
  void reserve_parent_change(size_t slots);
  // The entries of the child list that starts at `head` (kNoSlot: empty).
  size_t list_length(uint32_t head) const;
  void mark_structural(uint32_t slot);
  void set_bit(uint32_t slot, Component c);
  // A setter of Translation, Rotation, Scale or NonUniformScale, value already written.
  void set_value_bit(uint32_t slot, Component c);
  // set_trs_at's common part: `scale` present (its value already written), `other_scale` gone.
  void set_tr_and_scale_kind(uint32_t slot, float3 translation, quat rotation, Component scale,
                             Component other_scale);
  // Puts the live entity at `slot` in the child list of `parent`, whose live slot is
  // parent_slot (kNoSlot: no entity has that id).
  void link_child(uint32_t slot, EntityId parent, uint32_t parent_slot);
  // Makes `head` the first child of the parent (its slot, or the missing id when kNoSlot) and
  // returns the list's old head.
  uint32_t replace_head(EntityId parent, uint32_t parent_slot, uint32_t head);
  void unlink_child(uint32_t slot);
  void set_parent_linked(uint32_t slot, EntityId parent, uint32_t parent_slot);
  // The children listed under the live slot `from`, or (from == kNoSlot) under the missing id
  // `from_id`, get Parent `to` (live at to_slot, or missing when kNoSlot).
  void move_children_list(uint32_t from, EntityId from_id, EntityId to, uint32_t to_slot);
  void release_rare_if_unused(uint32_t slot);

  IdMap id_to_slot_;
  std::vector<uint32_t> free_slots_;
  SlotVector<EntityId> ids_;  // per slot
  // Per slot, everything a setter writes and a pass over changed slots reads, in one cache line:
  // at a million entities a change touched five lines as separate columns, one here.
  // The values and flags come first, as a ValueSnapshot, which the value log copies whole.
  struct alignas(64) Record : ValueSnapshot {
    EntityId parent = 0;
    // While the slot is listed in value_slots_ this frame and the log is kept: its entry in
    // value_logs_[log_filling_] (and value_slots_).
    uint32_t log_index = 0;
    uint32_t rare_index = kNoSlot;
    // The frame (frame_) in which the slot was last listed, and the change lists it joined then
    // (listed(), kListedValues...). A later frame's counter makes them stale all at once, so that
    // take_changes() visits no record to clear a mark: at 10 million entities a frame's 100,000
    // changed records were each a cache miss there.
    uint32_t marks = 0;
  };
  static_assert(sizeof(Record) == 64, "one cache line a slot");
  SlotVector<Record> rec_;
  // Per slot, the Parent as of the last take_changes() where kHadPreviousParent says it had one:
  // apart from the records, which no consumer reads it from.
  SlotVector<EntityId> previous_parent_;
  // Child lists: intrusive doubly linked lists through the slots. A live parent holds its list's
  // head itself; the children of a parent id that no entity has (yet) are listed under that id
  // in pending_children_, and move to the parent's slot when it is created. One 16-byte entry a
  // slot, so that re-parenting or destroying reads one line of its own.
  struct Links {
    uint32_t first_child = kNoSlot;
    uint32_t next_sibling = kNoSlot;
    uint32_t prev_sibling = kNoSlot;
    // While Parent is present: the parent's slot, or kNoSlot when no entity has that id (the
    // entity is then listed in pending_children_ under it).
    uint32_t parent_slot = kNoSlot;
  };
  SlotVector<Links> links_;
  IdMap pending_children_;  // missing parent id -> first child slot
  // Rare side records with their own free list.
  std::vector<RareComponents> rare_;
  std::vector<uint32_t> free_rare_;
  // Change tracking.
  std::vector<uint32_t> dirty_slots_;  // StoreChanges::slots
  std::vector<uint32_t> value_slots_;  // StoreChanges::values, and slots reshaped since
  // StoreChanges::value_records: one entry per value_slots_ entry while logging_, each rewritten
  // by every setter that changes the slot's values. Two, so that the one handed out by
  // take_changes() stays valid while the other fills (and neither is allocated again).
  // SlotVectors: grown in place on 2 MiB pages, since a std::vector's growth by copies into
  // fresh 4 KiB pages cost the first 1% values frame of a 10M scene 20 to 35 ms of edits here.
  SlotVector<ValueSnapshot> value_logs_[2];
  uint32_t log_filling_ = 0;
  bool logging_ = false;
  size_t log_threshold_ = kValueLogSlots;
  size_t log_max_ = 4096;  // entries this frame may log: an eighth of the slots, at least 4,096
  std::vector<uint32_t> structural_slots_;
  std::vector<uint32_t> parent_changed_slots_;
  std::vector<uint32_t> unbaked_statics_;
  // The frame number Record::marks carry: advanced by each take_changes(), wrapping at 24 bits
  // (every mark is then cleared, once in 16 million frames).
  uint32_t frame_ = 1;
  // Slots of value_slots_ reshaped since they were listed, which take_changes() drops: the
  // first kSpoiledMax of a frame (a world reshapes about 10 of its 10,000 listed a frame), so
  // that dropping them is a pass over value_slots_ with a filter in the L1 cache, not a record
  // read a listed slot (60 to 75 us of a world's update). Past kSpoiledMax, every listed slot's
  // record decides (spoiled_count_ is then kSpoiledMax + 1).
  static constexpr uint32_t kSpoiledMax = 64;
  std::array<uint32_t, kSpoiledMax> spoiled_{};
  uint32_t spoiled_count_ = 0;
  bool hierarchy_changed_ = false;
};

// The change lists' bookkeeping, a few instructions an edit, inline, with the lists' growth out
// of line: a world's frame moves some 10,000 entities through set_trs_at(), which four calls
// deep cost a hundred instructions a move, and creates, destroys and re-parents some 3,000,
// each listed in two or three lists.
inline void EntityStore::touch(uint32_t slot) {
  const uint32_t lists = listed(slot);
  if (!(lists & kListedReshaped)) {
    room_for_one(dirty_slots_);
    dirty_slots_.push_back(slot);
    // Listed in value_slots_ this frame: it leaves that list in take_changes().
    if (lists & kListedValues) {
      if (spoiled_count_ < kSpoiledMax) spoiled_[spoiled_count_] = slot;
      spoiled_count_ = std::min(spoiled_count_ + 1, kSpoiledMax + 1);
    }
    set_listed(slot, lists | kListedReshaped);
  }
}

inline void EntityStore::mark_structural(uint32_t slot) {
  const uint32_t lists = listed(slot);
  if (!(lists & kListedStructural)) {
    room_for_one(structural_slots_);
    structural_slots_.push_back(slot);
    set_listed(slot, lists | kListedStructural);
  }
}

[[gnu::always_inline]] inline void EntityStore::log_new_entry(uint32_t slot) {
  SlotVector<ValueSnapshot>& log = value_logs_[log_filling_];
  // Full, or at its most: grown, or given up.
  if (log.size() == log.capacity() || log.size() == log_max_) [[unlikely]] grow_log();
  if (!logging_) return;
  rec_[slot].log_index = static_cast<uint32_t>(log.size());
  log.append_uninitialized();  // written by log_values() once the setter has written the values
}

[[gnu::always_inline]] inline void EntityStore::touch_value(uint32_t slot) {
  const uint32_t lists = listed(slot);
  if (!(lists & (kListedValues | kListedReshaped))) {
    room_for_one(value_slots_);
    if (logging_) log_new_entry(slot);
    value_slots_.push_back(slot);
    set_listed(slot, lists | kListedValues);
  }
}

[[gnu::always_inline]] inline void EntityStore::log_values(uint32_t slot) {
  // Listed in value_slots_ and not reshaped since (a reshaped slot's entry is dropped).
  // Copied as bytes: three 16-byte moves, where the assignment copied member by member.
  if (logging_ && (listed(slot) & (kListedValues | kListedReshaped)) == kListedValues)
    std::memcpy(&value_logs_[log_filling_][rec_[slot].log_index],
                static_cast<const ValueSnapshot*>(&rec_[slot]), sizeof(ValueSnapshot));
}

[[gnu::always_inline]] inline void EntityStore::set_tr_and_scale_kind(uint32_t s,
                                                                     float3 translation,
                                                                     quat rotation,
                                                                     Component scale,
                                                                     Component other_scale) {
  assert(alive_at(s));
  Record& r = rec_[s];
  const uint32_t flags = (r.flags & ~bit(other_scale)) | bit(Component::Translation) |
                         bit(Component::Rotation) | bit(scale);
  // Listed first: out of memory, nothing changed.
  if (flags == r.flags) [[likely]] {
    touch_value(s);
  } else {
    touch(s);
    r.flags = flags;
  }
  r.translation = translation;
  r.rotation = rotation;
}

inline void EntityStore::set_trs_at(uint32_t s, float3 translation, quat rotation, float scale) {
  set_tr_and_scale_kind(s, translation, rotation, Component::Scale, Component::NonUniformScale);
  rec_[s].scale = scale;
  log_values(s);
}

inline void EntityStore::set_trs_at(uint32_t s, float3 translation, quat rotation,
                                    float3 non_uniform_scale) {
  set_tr_and_scale_kind(s, translation, rotation, Component::NonUniformScale, Component::Scale);
  rec_[s].non_uniform_scale = non_uniform_scale;
  log_values(s);
}

}  // namespace tprop
