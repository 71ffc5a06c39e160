#include "entity_store.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <new>
#include <utility>

namespace tprop {

uint64_t StoreIdentity::next() noexcept {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

namespace {
constexpr uint32_t kNone = EntityStore::kNoSlot;
// Loops over listed slots visit scattered records: each asks for the one kRecordsAhead slots
// on, so that their misses overlap.
constexpr size_t kRecordsAhead = 16;

// Capacity for `more` further elements, grown geometrically (reserve() alone grows to the exact
// size asked: once an element, that is a copy of the whole list each time). The test inline:
// every edit asks for room in a few lists, and the lists grow only now and then.
[[gnu::noinline]] void grow_list(std::vector<uint32_t>& list, size_t more) {
  list.reserve(std::max(list.size() + more, 2 * list.capacity()));
}
inline void room_for(std::vector<uint32_t>& list, size_t more) {
  if (list.size() + more > list.capacity()) [[unlikely]] grow_list(list, more);
}

}  // namespace

void EntityStore::grow_for(std::vector<uint32_t>& list, size_t more) { grow_list(list, more); }

void EntityStore::grow_log() {
  SlotVector<ValueSnapshot>& log = value_logs_[log_filling_];
  if (log.size() >= log_max_) {
    logging_ = false;  // the records are read instead (StoreChanges::value_records)
    return;
  }
  try {
    log.reserve(std::min(std::max(log.size() + 1, 2 * log.capacity()), log_max_));
  } catch (const std::bad_alloc&) {
    logging_ = false;  // an optimization only: the setter goes on
  }
}

void EntityStore::set_value_log_threshold(size_t slots) {
  log_threshold_ = slots;
  // Mid-frame, the log would miss what is listed already: the next frame decides then.
  if (value_slots_.empty()) logging_ = rec_.size() >= log_threshold_;
}

void EntityStore::reserve(size_t entities) {
  id_to_slot_.reserve(entities);
  ids_.reserve(entities);
  rec_.reserve(entities);
  links_.reserve(entities);
  previous_parent_.reserve(entities);
}

bool EntityStore::create(EntityId id) { return create_at_slot(id) != kNone; }

uint32_t EntityStore::create_at_slot(EntityId id) {
  // The slot it gets if the id is new: claimed in the id map and checked in one probe.
  const bool reuse = !free_slots_.empty();
  const uint32_t slot = reuse ? free_slots_.back() : static_cast<uint32_t>(ids_.size());
  // Room first, for everything below that may allocate: out of memory, the store is left as
  // it was (a claimed id without its slot would name a slot that does not exist).
  if (!reuse) {
    ids_.reserve(ids_.size() + 1);
    rec_.reserve(rec_.size() + 1);
    links_.reserve(links_.size() + 1);
    previous_parent_.reserve(previous_parent_.size() + 1);
  }
  room_for(dirty_slots_, 1);
  // The children that named the id before it existed (none in a world).
  const size_t waiting =
      pending_children_.size() != 0 ? list_length(pending_children_.find(id)) : 0;
  room_for(structural_slots_, 1 + waiting);
  if (id_to_slot_.insert_if_absent(id, slot) != IdMap::kMissing) return kNone;
  if (reuse) {
    free_slots_.pop_back();
  } else {
    ids_.push_back(0);
    rec_.emplace_back();
    links_.emplace_back();
    previous_parent_.push_back(0);
  }
  ids_[slot] = id;
  // A slot freed earlier in this frame is listed already: it keeps its marks, so that
  // take_changes() lists it once.
  const uint32_t listed = rec_[slot].marks;
  rec_[slot] = Record{};
  rec_[slot].flags = kAlive;
  rec_[slot].marks = listed;
  links_[slot] = Links{};
  touch(slot);
  mark_structural(slot);
  // Children whose Parent named this id while it did not exist attach now: their list moves
  // from the id to the slot.
  if (pending_children_.size() != 0) {
    const uint32_t head = pending_children_.take(id);
    links_[slot].first_child = head;
    for (uint32_t child = head; child != kNone; child = links_[child].next_sibling) {
      links_[child].parent_slot = slot;
      mark_structural(child);
    }
  }
  hierarchy_changed_ = true;
  return slot;
}

bool EntityStore::destroy(EntityId id) {
  const uint32_t found = live_slot(id);
  if (found == kNone) return false;
  destroy_at(found);
  return true;
}

void EntityStore::destroy_at(uint32_t slot) {
  assert(alive_at(slot));
  // Room first for every list below: out of memory, the entity stays as it was.
  reserve_destroys(1, child_count_at(slot));
  [[maybe_unused]] const uint32_t taken = id_to_slot_.take(ids_[slot]);
  assert(taken == slot);
  // Unity's ParentSystem: children of a destroyed parent leave the hierarchy.
  for (uint32_t child = links_[slot].first_child; child != kNone;) {
    const uint32_t next = links_[child].next_sibling;
    links_[child] = Links{links_[child].first_child, kNone, kNone, kNone};
    rec_[child].flags &= ~bit(Component::Parent);
    parent_changed_slots_.push_back(child);
    touch(child);
    mark_structural(child);
    child = next;
  }
  links_[slot].first_child = kNone;
  if (rec_[slot].flags & bit(Component::Parent)) unlink_child(slot);
  if (rec_[slot].rare_index != kNone) {
    free_rare_.push_back(rec_[slot].rare_index);
    rec_[slot].rare_index = kNone;
  }
  rec_[slot].flags = 0;
  free_slots_.push_back(slot);
  touch(slot);
  mark_structural(slot);
  hierarchy_changed_ = true;
}

void EntityStore::reserve_destroys(size_t entities, size_t children) {
  // Each destroy lists the entity and its children (whose lists only shrink as the destroys go
  // on), so what one destroy asks, summed, covers many.
  room_for(parent_changed_slots_, children);
  room_for(dirty_slots_, entities + children);
  room_for(structural_slots_, entities + children);
  room_for(free_slots_, entities);
  room_for(free_rare_, entities);
}

size_t EntityStore::child_count_at(uint32_t slot) const {
  assert(alive_at(slot));
  return list_length(links_[slot].first_child);
}

size_t EntityStore::list_length(uint32_t head) const {
  size_t n = 0;
  for (uint32_t c = head; c != kNone; c = links_[c].next_sibling) ++n;
  return n;
}

uint32_t EntityStore::live_slot(EntityId e) const { return id_to_slot_.find(e); }

// Listed first, marked after: out of memory, the slot is neither, and the next change lists it
// (marked but not listed, its changes would never be reported).
void EntityStore::reserve_parent_change(size_t slots) {
  room_for(parent_changed_slots_, slots);
  room_for(dirty_slots_, slots);
  room_for(structural_slots_, slots);
}

// Listed before anything changes, here and in the edits that call these: out of memory, the
// store is as it was (or its change is reported), never changed and unreported.
void EntityStore::set_bit(uint32_t slot, Component c) {
  touch(slot);
  if (c == Component::Static && !(rec_[slot].flags & bit(c))) {
    unbaked_statics_.push_back(slot);
    rec_[slot].flags &= ~kStaticBaked;
  }
  rec_[slot].flags |= bit(c);
}

void EntityStore::set_value_bit(uint32_t slot, Component c) {
  if (rec_[slot].flags & bit(c)) {
    touch_value(slot);
  } else {
    touch(slot);
    rec_[slot].flags |= bit(c);
  }
}

RareComponents& EntityStore::rare_for_write(uint32_t slot) {
  if (rec_[slot].rare_index == kNone) {
    if (!free_rare_.empty()) {
      rec_[slot].rare_index = free_rare_.back();
      free_rare_.pop_back();
      rare_[rec_[slot].rare_index] = RareComponents{};
    } else {
      rare_.emplace_back();  // first: out of memory, the slot names no record past the end
      rec_[slot].rare_index = static_cast<uint32_t>(rare_.size() - 1);
    }
  }
  return rare_[rec_[slot].rare_index];
}

void EntityStore::release_rare_if_unused(uint32_t slot) {
  if (rec_[slot].rare_index != kNone && !(rec_[slot].flags & kRareComponentMask)) {
    free_rare_.push_back(rec_[slot].rare_index);
    rec_[slot].rare_index = kNone;
  }
}

bool EntityStore::set_translation(EntityId e, float3 v) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  set_value_bit(s, Component::Translation);  // listed first: out of memory, nothing changed
  rec_[s].translation = v;
  log_values(s);
  return true;
}

bool EntityStore::set_rotation(EntityId e, quat q) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  set_value_bit(s, Component::Rotation);  // listed first: out of memory, nothing changed
  rec_[s].rotation = q;
  log_values(s);
  return true;
}

bool EntityStore::set_scale(EntityId e, float v) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  set_value_bit(s, Component::Scale);  // listed first: out of memory, nothing changed
  rec_[s].scale = v;
  log_values(s);
  return true;
}

bool EntityStore::set_non_uniform_scale(EntityId e, float3 v) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  set_value_bit(s, Component::NonUniformScale);  // listed first: out of memory, nothing changed
  rec_[s].non_uniform_scale = v;
  log_values(s);
  return true;
}

bool EntityStore::set_rotation_euler(EntityId e, EulerOrder order, float3 radians) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  RareComponents& r = rare_for_write(s);
  set_bit(s, rotation_euler(order));  // listed first: out of memory, nothing changed
  r.rotation_euler[static_cast<int>(order)] = radians;
  return true;
}

bool EntityStore::set_post_rotation(EntityId e, quat q) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  RareComponents& r = rare_for_write(s);
  set_bit(s, Component::PostRotation);  // listed first: out of memory, nothing changed
  r.post_rotation = q;
  return true;
}

bool EntityStore::set_post_rotation_euler(EntityId e, EulerOrder order, float3 radians) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  RareComponents& r = rare_for_write(s);
  set_bit(s, post_rotation_euler(order));  // listed first: out of memory, nothing changed
  r.post_rotation_euler[static_cast<int>(order)] = radians;
  return true;
}

bool EntityStore::set_pivot(EntityId e, PivotComponent p, float3 v) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  RareComponents& r = rare_for_write(s);
  set_bit(s, component_of(p));  // listed first: out of memory, nothing changed
  r.pivot[static_cast<int>(p)] = v;
  return true;
}

bool EntityStore::set_matrix(EntityId e, MatrixComponent m, const float4x4& value) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  RareComponents& r = rare_for_write(s);
  set_bit(s, component_of(m));  // listed first: out of memory, nothing changed
  r.matrix[static_cast<int>(m)] = value;
  return true;
}

bool EntityStore::set_parent(EntityId e, EntityId parent) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  set_parent_at(s, parent);
  return true;
}

void EntityStore::set_parent_at(uint32_t s, EntityId parent) {
  assert(alive_at(s));
  if ((rec_[s].flags & bit(Component::Parent)) && rec_[s].parent == parent) return;
  set_parent_linked(s, parent, id_to_slot_.find(parent));
}

void EntityStore::set_parent_at(uint32_t s, EntityId parent, uint32_t parent_slot) {
  assert(alive_at(s) && alive_at(parent_slot) && ids_[parent_slot] == parent);
  if ((rec_[s].flags & bit(Component::Parent)) && rec_[s].parent == parent) return;
  set_parent_linked(s, parent, parent_slot);
}

void EntityStore::set_parent_linked(uint32_t s, EntityId parent, uint32_t parent_slot) {
  reserve_parent_change(1);
  if (parent_slot == kNone) pending_children_.make_room_for_one();  // listed under the id
  if (rec_[s].flags & bit(Component::Parent)) unlink_child(s);
  rec_[s].parent = parent;
  link_child(s, parent, parent_slot);
  set_bit(s, Component::Parent);
  parent_changed_slots_.push_back(s);
  mark_structural(s);
  hierarchy_changed_ = true;
}

void EntityStore::move_children(EntityId from, EntityId to) {
  if (from == to) return;
  move_children_list(id_to_slot_.find(from), from, to, id_to_slot_.find(to));
}

void EntityStore::move_children_at(uint32_t from_slot, uint32_t to_slot) {
  assert(alive_at(from_slot) && alive_at(to_slot));
  // A leaf (most entities a world destroys) has nothing to move: the two ids are not read, each
  // a line of its own that nothing else of the edit touches.
  if (from_slot == to_slot || links_[from_slot].first_child == kNone) return;
  move_children_list(from_slot, ids_[from_slot], ids_[to_slot], to_slot);
}

void EntityStore::move_children_list(uint32_t from, EntityId from_id, EntityId to,
                                     uint32_t to_slot) {
  const uint32_t head = from != kNone                       ? links_[from].first_child
                        : pending_children_.size() != 0 ? pending_children_.find(from_id)
                                                        : kNone;
  if (head == kNone) return;
  // Room first: out of memory, the children stay where they were.
  reserve_parent_change(list_length(head));
  if (to_slot == kNone) pending_children_.make_room_for_one();
  if (from != kNone) {
    links_[from].first_child = kNone;
  } else {
    pending_children_.erase(from_id);
  }
  // The list moves whole: each child changes its Parent, then the list is spliced in front of
  // `to`'s children.
  uint32_t tail = head;
  for (uint32_t c = head; c != kNone; c = links_[c].next_sibling) {
    rec_[c].parent = to;
    links_[c].parent_slot = to_slot;
    set_bit(c, Component::Parent);
    parent_changed_slots_.push_back(c);
    mark_structural(c);
    tail = c;
  }
  const uint32_t old_head = replace_head(to, to_slot, head);
  links_[tail].next_sibling = old_head;
  if (old_head != kNone) links_[old_head].prev_sibling = tail;
  hierarchy_changed_ = true;
}

bool EntityStore::add(EntityId e, Component c) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  if (rec_[s].flags & bit(c)) return true;
  if (c == Component::Parent) {
    assert(!"add(Parent) needs a parent id: use set_parent");
    return false;
  }
  // Listed first: out of memory, nothing changed (a slot listed for its values this frame would
  // otherwise keep a log entry that its record no longer matches).
  touch(s);
  // Default values: the slot's columns and a fresh rare record already hold them, except where
  // an earlier remove() left an old value behind.
  switch (c) {
    case Component::Translation: rec_[s].translation = float3(0.0f); break;
    case Component::Rotation: rec_[s].rotation = quat(1.0f, 0.0f, 0.0f, 0.0f); break;
    case Component::Scale: rec_[s].scale = 1.0f; break;
    case Component::NonUniformScale: rec_[s].non_uniform_scale = float3(1.0f); break;
    case Component::Parent:
    case Component::Static:
    case Component::WriteGroupOverride: break;
    default: {
      RareComponents& r = rare_for_write(s);
      const int i = static_cast<int>(c);
      if (bit(c) & kRotationEulerMask) r.rotation_euler[i - int(Component::RotationEulerXYZ)] = float3(0.0f);
      else if (c == Component::PostRotation) r.post_rotation = quat(1.0f, 0.0f, 0.0f, 0.0f);
      else if (bit(c) & kPostRotationEulerMask) r.post_rotation_euler[i - int(Component::PostRotationEulerXYZ)] = float3(0.0f);
      else if (i >= int(Component::RotationPivot) && i <= int(Component::ScalePivotTranslation)) r.pivot[i - int(Component::RotationPivot)] = float3(0.0f);
      else r.matrix[i - int(Component::CompositeRotation)] = float4x4(1.0f);
    }
  }
  set_bit(s, c);
  return true;
}

bool EntityStore::remove(EntityId e, Component c) {
  const uint32_t s = live_slot(e);
  if (s == kNone) return false;
  if (!(rec_[s].flags & bit(c))) return true;
  if (c == Component::Parent) {
    reserve_parent_change(1);
    unlink_child(s);
    parent_changed_slots_.push_back(s);
    mark_structural(s);
    hierarchy_changed_ = true;
  }
  touch(s);
  rec_[s].flags &= ~bit(c);
  if (c == Component::Static) rec_[s].flags &= ~kStaticBaked;
  release_rare_if_unused(s);
  return true;
}

bool EntityStore::has(EntityId e, Component c) const {
  const uint32_t s = live_slot(e);
  return s != kNone && (rec_[s].flags & bit(c));
}

std::optional<EntityId> EntityStore::parent(EntityId e) const {
  const uint32_t s = live_slot(e);
  if (s == kNone || !(rec_[s].flags & bit(Component::Parent))) return std::nullopt;
  return rec_[s].parent;
}

std::vector<EntityId> EntityStore::children(EntityId e) const {
  std::vector<EntityId> out;
  const uint32_t s = live_slot(e);
  if (s == kNone) return out;
  for (uint32_t c = links_[s].first_child; c != kNone; c = links_[c].next_sibling)
    out.push_back(ids_[c]);
  return out;
}

std::optional<EntityId> EntityStore::previous_parent(EntityId e) const {
  const uint32_t s = live_slot(e);
  if (s == kNone || !(rec_[s].flags & kHadPreviousParent)) return std::nullopt;
  return previous_parent_[s];
}

uint32_t EntityStore::replace_head(EntityId parent, uint32_t parent_slot, uint32_t head) {
  if (parent_slot != kNone) return std::exchange(links_[parent_slot].first_child, head);
  const uint32_t old = pending_children_.find(parent);
  pending_children_.set(parent, head);
  return old;
}

void EntityStore::link_child(uint32_t slot, EntityId parent, uint32_t parent_slot) {
  const uint32_t head = replace_head(parent, parent_slot, slot);
  Links& l = links_[slot];
  l.prev_sibling = kNone;
  l.next_sibling = head;
  l.parent_slot = parent_slot;
  if (head != kNone) links_[head].prev_sibling = slot;
}

void EntityStore::unlink_child(uint32_t slot) {
  Links& l = links_[slot];
  const uint32_t prev = l.prev_sibling, next = l.next_sibling;
  if (next != kNone) links_[next].prev_sibling = prev;
  if (prev != kNone) {
    links_[prev].next_sibling = next;
  } else if (l.parent_slot != kNone) {
    links_[l.parent_slot].first_child = next;
  } else if (next != kNone) {
    pending_children_.set(rec_[slot].parent, next);
  } else {
    pending_children_.erase(rec_[slot].parent);
  }
  l.prev_sibling = l.next_sibling = l.parent_slot = kNone;
}

void EntityStore::drop_spoiled_values() {
  // The log's entries go with their slots (value_logs_ is parallel to value_slots_ while kept).
  SlotVector<ValueSnapshot>& log = value_logs_[log_filling_];
  assert(!logging_ || log.size() == value_slots_.size());
  size_t kept = 0;
  auto keep = [&](size_t i) {
    if (logging_) log[kept] = log[i];
    value_slots_[kept++] = value_slots_[i];
  };
  if (spoiled_count_ > kSpoiledMax) {
    // Too many to list: every listed slot's record says.
    for (size_t i = 0; i < value_slots_.size(); ++i) {
      if (i + kRecordsAhead < value_slots_.size())
        prefetch_line(&rec_[value_slots_[i + kRecordsAhead]]);
      if (!(listed(value_slots_[i]) & kListedReshaped)) keep(i);
    }
  } else {
    // A 4,096-bit filter of the spoiled slots: a listed slot whose bit is clear was not
    // reshaped; one whose bit is set (about one in 64 when 64 are spoiled) asks its record.
    const auto bit_of = [](uint32_t slot) { return (slot * 0x9E3779B9u) >> 20; };
    uint64_t filter[64] = {};
    for (uint32_t i = 0; i < spoiled_count_; ++i) {
      const uint32_t b = bit_of(spoiled_[i]);
      filter[b >> 6] |= uint64_t(1) << (b & 63);
    }
    for (size_t i = 0; i < value_slots_.size(); ++i) {
      const uint32_t s = value_slots_[i];
      const uint32_t b = bit_of(s);
      if ((filter[b >> 6] >> (b & 63) & 1) && (listed(s) & kListedReshaped)) continue;
      keep(i);
    }
  }
  value_slots_.resize(kept);
  if (logging_) log.resize(kept);
  spoiled_count_ = 0;
}

StoreChanges EntityStore::take_changes() {
  StoreChanges out;
  out.hierarchy = hierarchy_changed_;
  // A value change followed by another kind keeps the slot in value_slots_: dropped here, while
  // the marks still say so. Frames where no listed slot was reshaped (most) skip this.
  if (spoiled_count_ != 0) drop_spoiled_values();
  // Every slot's marks go stale at once.
  if (++frame_ == kFrameEnd) {
    // Once in 16 million frames: no record may carry the stamp the counter comes back to.
    for (Record& r : rec_) r.marks = 0;
    frame_ = 1;
  }
  out.slots = std::move(dirty_slots_);
  dirty_slots_.clear();
  out.values = std::move(value_slots_);
  value_slots_.clear();
  // The filled log is handed out; the other, handed out by the last call, fills next.
  const SlotVector<ValueSnapshot>& log = value_logs_[log_filling_];
  if (logging_) out.value_records = {log.data(), log.size()};
  log_filling_ ^= 1;
  value_logs_[log_filling_].clear();
  logging_ = rec_.size() >= log_threshold_;
  log_max_ = std::max<size_t>(4096, rec_.size() / 8);
  out.structural = std::move(structural_slots_);
  structural_slots_.clear();
  // The lists were handed over whole: room for as many as this frame's, so that the next frame
  // does not regrow them from nothing (a dozen reallocations and copies, and fresh pages, for
  // a world's 13,000 changes a frame). Out of memory they grow as edits need, as before.
  try {
    dirty_slots_.reserve(out.slots.size());
    value_slots_.reserve(out.values.size());
    structural_slots_.reserve(out.structural.size());
  } catch (const std::bad_alloc&) {
  }
  for (size_t i = 0; i < parent_changed_slots_.size(); ++i) {
    // Scattered records (a world re-parents some 2,000 a frame): asked for ahead.
    if (i + kRecordsAhead < parent_changed_slots_.size()) {
      prefetch_line(&rec_[parent_changed_slots_[i + kRecordsAhead]]);
      prefetch_line(&previous_parent_[parent_changed_slots_[i + kRecordsAhead]]);
    }
    const uint32_t s = parent_changed_slots_[i];
    if (!(rec_[s].flags & kAlive)) continue;
    if (rec_[s].flags & bit(Component::Parent)) {
      previous_parent_[s] = rec_[s].parent;
      rec_[s].flags |= kHadPreviousParent;
    } else {
      rec_[s].flags &= ~kHadPreviousParent;
    }
  }
  parent_changed_slots_.clear();
  hierarchy_changed_ = false;
  return out;
}

void EntityStore::mark_statics_baked() {
  // A slot listed here may have lost Static or died since; the flags say what holds now.
  for (uint32_t s : unbaked_statics_)
    if ((rec_[s].flags & kAlive) && (rec_[s].flags & bit(Component::Static)))
      rec_[s].flags |= kStaticBaked;
  unbaked_statics_.clear();
}

}  // namespace tprop
