#include "dcl_world.h"

#include <algorithm>
#include <cassert>
#include <exception>
#include <unordered_map>

#include "block_pool.h"
#include "dcl_sync.h"
#include "prefetch.h"

namespace tprop {

namespace {

constexpr uint8_t kHeld = 1;     // a live version of this number is a store entity
constexpr uint8_t kOnCycle = 2;  // its parent link closes a cycle: it stands at the scene root

}  // namespace

float3 dcl_parcel_position(DclParcel parcel) {
  return float3(kDclParcelSize * float(parcel.x), 0.0f, kDclParcelSize * float(parcel.y));
}

// What the world keeps per entity number of a scene, beside the CRDT state: 20 bytes.
struct NumberRecord {
  EntityId parent = kDclRootEntity;  // the parent its Transform names (0: none or the root)
  // The store slot of the held version: the world alone creates and destroys its entities, and
  // a slot stays put while its entity lives, so a message reaches the store without a look-up.
  uint32_t slot = EntityStore::kNoSlot;
  uint32_t stamp = 0;                // the cycle walk that last visited it
  uint16_t version = 0;              // the version held, when kHeld
  uint16_t cycle_next = 0;           // on a cycle: the next member (its parent's number)
  uint8_t flags = 0;
};

struct DclWorld::SceneData {
  SceneId slot = 0;
  uint32_t root_slot = EntityStore::kNoSlot;  // the root's store slot
  // Set when applying one of its messages failed (out of memory): the state lacks that message,
  // so the scene's stream stops there, as at a malformed message; every later feed says so.
  std::optional<Error> failure;
  std::string name;
  DclParcel parcel;
  CrdtState state;
  CrdtStreamReader reader;
  // By entity number, grown to the highest seen; in huge pages shared with other scenes, as a
  // message reaches its record at random (block_pool.h).
  std::vector<NumberRecord, PooledAllocator<NumberRecord>> numbers;
  // Named parent (a full id no held entity has yet) -> numbers of entities naming it. Entries
  // can be stale (the child re-parented since); they are checked when the parent appears.
  std::unordered_map<EntityId, std::vector<uint16_t>> waiting;
  // Number -> live versions that are not held (the number is held by another version).
  std::unordered_map<uint16_t, std::vector<uint16_t>> shadows;
  std::vector<uint16_t> recheck;  // numbers whose store Parent must be decided again
  std::vector<uint16_t> path;     // scratch for cycle walks
  uint32_t epoch = 0;

  EntityId root() const { return root_id(slot); }
  EntityId id(uint16_t number) const { return store_id_of(slot, number); }
  bool holds(EntityId e) const {
    const uint16_t n = dcl_entity_number(e);
    return n != 0 && n < numbers.size() && (numbers[n].flags & kHeld) &&
           numbers[n].version == dcl_entity_version(e);
  }
};

struct DclWorld::Staged {
  SceneData* scene = nullptr;
  size_t chunk = 0;  // the index of its chunk's status
  CrdtMessage message;
  // request_store()'s guess of what applying the message will do to the store's child lists,
  // for request_links(): unlink the entity (a deletion or a re-parent), and link it below the
  // entity of number `named` (a creation or a re-parent).
  bool unlinks = false;
  uint16_t links_below = 0;  // the named parent's number; 0: none
  // A Transform that names the parent its held entity has already: a move (apply_move()).
  bool moves = false;
  // The number record of its entity while the batch's requests are made (null for number 0 and
  // for a number with no record yet); applying a message may grow the records, so it is never
  // read while applying.
  const NumberRecord* record = nullptr;
};

DclWorld::DclWorld() = default;
DclWorld::~DclWorld() = default;
DclWorld::DclWorld(DclWorld&&) noexcept = default;
DclWorld& DclWorld::operator=(DclWorld&&) noexcept = default;

DclWorld::SceneData& DclWorld::scene(SceneId s) {
  assert(has_scene(s));
  return *scenes_[s];
}
const DclWorld::SceneData& DclWorld::scene(SceneId s) const {
  assert(has_scene(s));
  return *scenes_[s];
}
bool DclWorld::has_scene(SceneId s) const { return s < scenes_.size() && scenes_[s]; }
const CrdtState& DclWorld::state(SceneId s) const { return scene(s).state; }
const std::string& DclWorld::name(SceneId s) const { return scene(s).name; }
DclParcel DclWorld::parcel(SceneId s) const { return scene(s).parcel; }

size_t DclWorld::shadowed(SceneId s) const {
  size_t n = 0;
  for (const auto& [number, versions] : scene(s).shadows) n += versions.size();
  return n;
}

std::vector<DclWorld::SceneId> DclWorld::scenes() const {
  std::vector<SceneId> out;
  out.reserve(scene_count_);
  for (SceneId s = 0; s < scenes_.size(); ++s)
    if (scenes_[s]) out.push_back(s);
  return out;
}

namespace {

// "scene 'NAME': what", or where even that cannot be allocated a message short enough for the
// string's own room (no allocation).
Error scene_error(const std::string& scene, const char* what) noexcept {
  try {
    return Error{"scene '" + scene + "': " + what};
  } catch (...) {
    return Error{"out of memory"};
  }
}

// The scene error for the exception being handled; only from a catch block.
Error failure_in_flight(const std::string& scene) noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    return scene_error(scene, e.what());
  } catch (...) {
    return scene_error(scene, "unknown exception");
  }
}

// Capacity for one more element, grown geometrically (reserve(size() + 1) alone copies the
// whole vector each time: thousands of scenes added one by one took quadratic time).
template <class T>
void room_for_one_more(std::vector<T>& v) {
  if (v.size() == v.capacity()) v.reserve(2 * v.size() + 1);
}

// A copy of e, or where its message cannot be allocated one short enough for the string's own
// room.
Error copy_error(const Error& e) noexcept {
  try {
    return e;
  } catch (...) {
    return Error{"out of memory"};
  }
}

// The first error of a chunk stands.
void set_error(Status& st, const Error& e) noexcept {
  if (st) st = copy_error(e);
}

}  // namespace

Result<DclWorld::SceneId> DclWorld::add_scene(std::string name, DclParcel base) {
  if (free_slots_.empty() && scenes_.size() >= kMaxScenes)
    return scene_error(name,
                       "cannot add it: the world already holds 65536 scenes, the most its 32-bit "
                       "entity ids allow (65536 numbers a scene)");
  static_assert(kMaxScenes == 65536, "the message above names it");
  // What allocates comes first: out of memory, the world stays as it was. (The root's
  // translation, set on the entity just created and listed, allocates nothing.)
  const bool reuse = !free_slots_.empty();
  const SceneId slot = reuse ? free_slots_.back() : SceneId(scenes_.size());
  std::unique_ptr<SceneData> sc;
  try {
    sc = std::make_unique<SceneData>();
    if (!reuse) room_for_one_more(scenes_);
    sc->slot = slot;
    sc->root_slot = store_.create_at_slot(sc->root());
  } catch (const std::bad_alloc&) {
    return scene_error(name, "out of memory adding the scene");
  }
  assert(sc->root_slot != EntityStore::kNoSlot && "a free scene slot has no entities left");
  store_.set_translation(sc->root(), dcl_parcel_position(base));
  sc->name = std::move(name);
  sc->parcel = base;
  if (reuse) {
    free_slots_.pop_back();
  } else {
    scenes_.emplace_back();
  }
  scenes_[slot] = std::move(sc);
  ++scene_count_;
  return slot;
}

Status DclWorld::remove_scene(SceneId s) {
  SceneData& sc = scene(s);
  // Every store entity of the scene is a held number or the root: O(highest number), which a
  // scene's own stream decides (the SDK numbers its entities densely from 512). Room first, so
  // that out of memory the scene stays whole rather than half destroyed: for its entities and
  // all their children, which may include entities an application made through store().
  size_t entities = 1, children = store_.child_count_at(sc.root_slot);
  for (uint32_t n = 1; n < sc.numbers.size(); ++n) {
    if (!(sc.numbers[n].flags & kHeld)) continue;
    ++entities;
    children += store_.child_count_at(sc.numbers[n].slot);
  }
  try {
    store_.reserve_destroys(entities, children);
    room_for_one_more(free_slots_);
  } catch (const std::bad_alloc&) {
    return scene_error(sc.name, "out of memory removing the scene (it stays loaded)");
  }
  for (uint32_t n = 1; n < sc.numbers.size(); ++n)
    if (sc.numbers[n].flags & kHeld) destroy_held(sc.numbers[n].slot, sc.id(uint16_t(n)));
  destroy_held(sc.root_slot, sc.root());
  scenes_[s].reset();
  free_slots_.push_back(s);
  --scene_count_;
  return ok_status();
}

std::optional<EntityId> DclWorld::store_id(SceneId s, EntityId entity) const {
  const SceneData& sc = scene(s);
  if (entity == kDclRootEntity) return sc.root();
  if (!sc.holds(entity)) return std::nullopt;
  return sc.id(dcl_entity_number(entity));
}

Result<CrdtApplyResult> DclWorld::apply(SceneId s, const CrdtMessage& m) {
  SceneData& sc = scene(s);
  CrdtApplyResult r;
  if (apply_unless_failed(sc, m, &r)) return r;
  return copy_error(*sc.failure);
}

bool DclWorld::apply_unless_failed(SceneData& sc, const CrdtMessage& m,
                                   CrdtApplyResult* result) noexcept {
  if (sc.failure) return false;
  try {
    const CrdtApplyResult r = apply(sc, m);
    if (result) *result = r;
    return true;
  } catch (...) {  // std::bad_alloc: nothing else throws while a message is applied
    sc.failure = failure_in_flight(sc.name);
    return false;
  }
}

// What apply() does with a move, without its layers: request_store() found the message a
// Transform naming the parent its held entity has (staged.moves), which an earlier message of
// the batch may have changed since, so that is checked again here. False: apply_unless_failed()
// takes the message, which this left unapplied (a scene that failed, a move no more), or reports
// the failure this just met (out of memory listing the change: the state holds the message
// then, as the general path's would).
bool DclWorld::apply_move(const Staged& staged) noexcept {
  SceneData& sc = *staged.scene;
  const CrdtMessage& m = staged.message;
  // SceneData::holds() without its bounds: request_store() found the number held, and records
  // only ever grow (9 instructions a move fewer).
  const NumberRecord& record = sc.numbers[dcl_entity_number(m.entity)];
  if (sc.failure || !(record.flags & kHeld) ||
      record.version != dcl_entity_version(m.entity) ||
      read_u32_le(m.data.data() + kDclTransformSize - 4) != record.parent)
    return false;
  CrdtOutcome outcome;
  // Outside the try: a 44-byte value is held inline (SmallBytes), so taking it allocates nothing.
  if (!sc.state.put_held_transform(m, outcome)) return false;
  if (outcome != CrdtOutcome::Applied) return true;
  try {
    put_dcl_transform_values(store_, record.slot, *decode_dcl_transform(m.data));
  } catch (...) {  // std::bad_alloc, listing the change: apply_unless_failed() reports it
    sc.failure = failure_in_flight(sc.name);
    return false;
  }
  return true;
}

CrdtApplyResult DclWorld::apply(SceneData& sc, const CrdtMessage& m) {
  // Most messages move a held entity: its state takes the Transform without the general
  // dispatch, and under the parent it has already, what sync() would do then is only to write
  // the values the message carries (the state now holds exactly its bytes).
  CrdtApplyResult r;
  if (sc.holds(m.entity) && sc.state.put_held_transform(m, r.outcome)) {
    if (r.outcome != CrdtOutcome::Applied) return r;  // nothing changed: nothing to sync
    const NumberRecord& record = sc.numbers[dcl_entity_number(m.entity)];
    const std::optional<DclTransform> t = decode_dcl_transform(m.data);
    if (t && t->parent == record.parent) {
      put_dcl_transform_values(store_, record.slot, *t);
    } else {
      sync(sc, m.entity);
    }
    return r;
  }
  r = sc.state.apply(m);
  for_each_entity_to_sync(m, r, [&](EntityId e) { sync(sc, e); });
  return r;
}

// A message costs a few cache misses in a big world (its CRDT record, its number's record, its
// store record), each waiting for the one before when applied alone, and a world's frame brings
// each scene only a dozen messages or so. So the messages of every chunk of a feed are applied in
// batches of kBatch, scene after scene: as a message is read its CRDT and number records are
// asked for (hints); once the batch is full, those records are loaded in one loop (fetch_line:
// the loads do not depend on each other, so their misses overlap, and a load cannot come too
// late the way a hint can), the number records name what applying will touch in the store
// (request_store: hints), the child-list entries that deletions, creations and re-parents
// rewrite are asked for (request_links), each held entity's own store record is loaded in a
// loop too, and then the batch is applied. Messages are applied in the order they were
// read, every message of a feed before it returns, so the outcome is the same as one at a time.
//
// Measured (tprop run gen:dclworld:1000:5 --frames 50, this project's VM, six alternated pairs
// each): with hints alone, issued 4 to 8 messages before each message was applied, 10,000 moves
// a frame took 2.4 to 2.6 ms of ingest (1.0 ms where nothing had streamed through memory since
// the frame before, no evaluation: the hints were not enough after one); in batches of 32 loaded
// this way, 1.7 ms (0.67x to 0.72x), and issue 10's mix of moves, deletions and creations 2.8 ms
// against 3.4 to 4.4 (0.63x to 0.80x). Batches of 16 gained less, 64 and 128 no more; loading
// the structural guesses' lines too (links, ids) instead of hinting them measured no better.
constexpr size_t kBatch = 32;

[[gnu::always_inline]] inline void DclWorld::stage(SceneData& sc, size_t chunk,
                                                   const CrdtMessage& m) {
  Staged& staged = batch_[read_ % kBatch];
  staged.scene = &sc;
  staged.chunk = chunk;
  // feed() reads each message into its place in the batch: no copy then.
  if (&m != &staged.message) staged.message = m;  // reuses the data's capacity
  ++read_;
  sc.state.prefetch(m.entity);
  const uint16_t n = dcl_entity_number(m.entity);
  if (n < sc.numbers.size()) prefetch_line(&sc.numbers[n]);
  if (read_ - applied_ == kBatch) apply_batch();
}

void DclWorld::apply_batch() noexcept {
  Staged* const batch = batch_.data();
  const uint64_t first = applied_;
  for (uint64_t k = first; k < read_; ++k) {
    Staged& staged = batch[k % kBatch];
    const SceneData& sc = *staged.scene;
    sc.state.fetch(staged.message.entity);
    const uint16_t n = dcl_entity_number(staged.message.entity);
    staged.record = n != 0 && n < sc.numbers.size() ? &sc.numbers[n] : nullptr;
    if (staged.record) fetch_line(staged.record);
  }
  for (uint64_t k = first; k < read_; ++k) request_store(batch[k % kBatch]);
  for (uint64_t k = first; k < read_; ++k) {
    const Staged& staged = batch[k % kBatch];
    if (staged.unlinks || staged.links_below != 0) request_links(staged);  // not a move's
  }
  for (uint64_t k = first; k < read_; ++k) {
    const NumberRecord* const record = batch[k % kBatch].record;
    if (record && (record->flags & kHeld)) store_.fetch(record->slot);
  }
  for (; applied_ < read_; ++applied_) {
    Staged& staged = batch[applied_ % kBatch];
    if (staged.moves && apply_move(staged)) continue;
    if (!apply_unless_failed(*staged.scene, staged.message))
      set_error((*statuses_)[staged.chunk], *staged.scene->failure);
  }
}

// The store entries that applying a message reads first, requested once the batch's number
// records (which hold the slots) are loaded: the entity's record and, by a guess from the message
// alone, what destroying it or naming it another parent reads in the store: its links (parent,
// siblings, children) and, for a destruction, its id and its id-map entry; for a re-parent, the
// records of both parents' numbers, whose slots the new links name. The batch's earlier messages
// are not applied yet: a wrong guess costs a few wasted requests, never a wrong result. So is
// `moves`, the guess that the message moves a held entity: apply_move() checks it again.
void DclWorld::request_store(Staged& staged) {
  const SceneData& sc = *staged.scene;
  const CrdtMessage& m = staged.message;
  const uint16_t n = dcl_entity_number(m.entity);
  staged.unlinks = false;
  staged.links_below = 0;
  staged.moves = false;
  if (n == 0) return;
  const NumberRecord* const held =
      staged.record && (staged.record->flags & kHeld) ? staged.record : nullptr;
  const bool dies =
      m.type == CrdtMessageType::DeleteEntity || m.type == CrdtMessageType::DeleteEntityNetwork;
  const bool transform = m.component == kDclTransformComponentId &&
                         crdt_type_has_data(m.type) && m.data.size() == kDclTransformSize;
  const EntityId named =
      transform ? read_u32_le(m.data.data() + kDclTransformSize - 4) : kDclRootEntity;
  const auto request_parent = [&](EntityId parent) {
    const uint16_t p = dcl_entity_number(parent);
    if (p != 0 && p < sc.numbers.size()) prefetch_line(&sc.numbers[p]);
  };
  if (!held) {
    // Most likely a creation, whose id the store's id map takes: a miss in a cold map (a frame
    // after the GPU's evaluation has passed through the cache). Its parent's record tells where
    // it goes (place(), note_waiting()).
    if (!dies) {
      store_.prefetch_id(sc.id(n));
      if (transform) {
        request_parent(named);
        staged.links_below = dcl_entity_number(named);
      }
    }
    return;
  }
  const NumberRecord& r = *held;
  store_.prefetch(r.slot);
  staged.moves = transform && named == r.parent;
  if (dies) {
    store_.prefetch_links(r.slot);
    store_.prefetch_id_at(r.slot);
    store_.prefetch_id(sc.id(n));
    staged.unlinks = true;
  } else if (transform && named != r.parent) {
    store_.prefetch_links(r.slot);
    request_parent(named);
    request_parent(r.parent);
    staged.unlinks = true;
    staged.links_below = dcl_entity_number(named);
  }
}

// The child-list entries that applying a deletion, creation or re-parent rewrites, requested
// after request_store() has gone over the whole batch (reading the entity's links here loads
// them where that hint was lost): the entity's siblings and parent (unlinking it), and the new
// parent's own entry, whose list it joins. A guess, as there. (Not the scene root's, where half
// of a world's creations go: asking for it measured no better.)
void DclWorld::request_links(const Staged& staged) {
  const SceneData& sc = *staged.scene;
  if (staged.unlinks && staged.record && (staged.record->flags & kHeld))
    store_.prefetch_link_neighbours(staged.record->slot);
  const uint16_t p = staged.links_below;
  if (p != 0 && p < sc.numbers.size() && (sc.numbers[p].flags & kHeld))
    store_.prefetch_links(sc.numbers[p].slot);
}

Status DclWorld::feed(SceneId s, std::span<const uint8_t> bytes) {
  const Chunk chunk{s, bytes};
  return std::move(feed(std::span<const Chunk>(&chunk, 1)).front());
}

std::vector<Status> DclWorld::feed(std::span<const Chunk> chunks) {
  assert(read_ == applied_ && "feed() leaves no message unapplied");
  // (The one allocation that may throw out of feed(), before anything is read.)
  std::vector<Status> out(chunks.size(), ok_status());
  statuses_ = &out;
  for (size_t i = 0; i < chunks.size(); ++i) {
    // The scenes ahead: a chain of misses otherwise paid one after the other at a scene's
    // start. Two chunks ahead its record and first bytes; one ahead, what the record points to
    // that reading its messages needs first, its CRDT state's table of pages.
    if (i + 2 < chunks.size()) {
      const Chunk& next = chunks[i + 2];
      const char* data = reinterpret_cast<const char*>(&scene(next.scene));
      for (size_t at = 0; at < sizeof(SceneData); at += 64) prefetch_line(data + at);
      if (!next.bytes.empty()) prefetch_line(next.bytes.data());
    }
    if (i + 1 < chunks.size()) scene(chunks[i + 1].scene).state.prefetch_pages();
    SceneData& sc = scene(chunks[i].scene);
    if (sc.failure) {
      set_error(out[i], *sc.failure);
      continue;
    }
    // The messages before the end, or before a malformed one, are applied whatever happens.
    try {
      // A message is read into its place in the batch, where one applied already lies. The
      // batch's places are made by the first message read, where a failed allocation stops the
      // scene (feed() does not throw).
      const auto slot_to_read = [&]() -> CrdtMessage& {
        if (batch_.empty()) batch_.resize(kBatch);
        return batch_[read_ % kBatch].message;
      };
      // stage() inline, in a lambda inline in the reader's loop: called, the two cost some 30
      // instructions of a move's 480 (callgrind).
      Status st = feed_crdt_bytes_into(sc.reader, chunks[i].bytes, slot_to_read,
                                       [&](const CrdtMessage& m) __attribute__((always_inline)) {
                                         stage(sc, i, m);
                                       });
      if (!st) set_error(out[i], scene_error(sc.name, st.error().message.c_str()));
    } catch (...) {
      // A message read but not staged (out of memory) is lost: the scene stops there.
      sc.failure = Error{"out of memory"};
      set_error(out[i], *sc.failure);
    }
  }
  apply_batch();  // the last, partial batch; never throws
  statuses_ = nullptr;
  return out;
}

Status DclWorld::finish(SceneId s) const {
  const SceneData& sc = scene(s);
  if (sc.failure) return copy_error(*sc.failure);
  Status st = sc.reader.finish();
  if (!st) return Error{"scene '" + sc.name + "': " + st.error().message};
  return st;
}

void DclWorld::sync(SceneData& sc, EntityId e) {
  if (e == kDclRootEntity) return;  // the root's place is its parcel, whatever the stream says
  const uint16_t n = dcl_entity_number(e);
  const uint16_t v = dcl_entity_version(e);
  // A Transform held (put or deleted) implies a live entity: one look-up in the common case.
  const LwwEntry* transform = sc.state.find(e, kDclTransformComponentId);
  const bool live = transform || sc.state.known(e);
  if (n >= sc.numbers.size()) sc.numbers.resize(size_t(n) + 1);
  const bool held = sc.holds(e);
  if (!live) {
    if (held) {
      release(sc, n);
    } else if (auto it = sc.shadows.find(n); it != sc.shadows.end()) {
      std::erase(it->second, v);
      if (it->second.empty()) sc.shadows.erase(it);
    }
    return;
  }
  if (!held && (n == 0 || (sc.numbers[n].flags & kHeld))) {
    std::vector<uint16_t>& versions = sc.shadows[n];
    if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
    return;
  }

  const EntityId id = sc.id(n);
  const bool created = !held;
  if (created) {
    // The world alone makes its scenes' ids; should a caller have made this one through
    // store(), the world takes that entity over as create() then slot_of() did. (The slot
    // first: should it fail, the number is not held without one.)
    uint32_t slot = store_.create_at_slot(id);
    if (slot == EntityStore::kNoSlot) slot = store_.slot_of(id);
    sc.numbers[n] = NumberRecord{};
    sc.numbers[n].flags = kHeld;
    sc.numbers[n].version = v;
    sc.numbers[n].slot = slot;
  }
  assert(store_.id_at(sc.numbers[n].slot) == id);
  const std::optional<DclTransform> t =
      transform && !transform->deleted ? decode_dcl_transform(transform->data) : std::nullopt;
  const EntityId named = t ? t->parent : kDclRootEntity;
  if (created) {
    sc.numbers[n].parent = named;
    const auto it = sc.waiting.find(e);
    if (it == sc.waiting.end() && named != e) {
      // No entity of the scene names e: one naming an id the scene does not hold waits for it
      // (relink), and a dead id never comes back. So no chain of parents leads back to e and
      // its own link closes no cycle: it takes its place without the walk up its ancestors
      // that settle() would make, as it would first of what waits there.
      note_waiting(sc, n);
      place(sc, n);
    } else {
      relink(sc, n);
      // The entities that named e before it appeared attach now.
      if (it != sc.waiting.end()) {
        const std::vector<uint16_t> children = std::move(it->second);
        sc.waiting.erase(it);
        for (uint16_t c : children)
          if ((sc.numbers[c].flags & kHeld) && sc.numbers[c].parent == e) relink(sc, c);
      }
    }
  } else if (named != sc.numbers[n].parent) {
    sc.numbers[n].parent = named;
    relink(sc, n);
  }
  settle(sc);
  // The values after the parent: a re-parented entity is then listed once, as reshaped, rather
  // than as a value change that its re-parenting spoils (EntityStore::take_changes() drops such
  // slots from `values`, cheaply only while they are few: a world re-parents ~1,000 a frame).
  if (t) {
    put_dcl_transform_values(store_, sc.numbers[n].slot, *t);
  } else {
    remove_dcl_transform_values(store_, id);
  }
}

// By the slot the world keeps (one id-map probe, not two), unless a caller destroyed the entity
// through store() already (the world does not forbid it).
void DclWorld::destroy_held(uint32_t slot, EntityId id) {
  if (store_.alive_at(slot) && store_.id_at(slot) == id) store_.destroy_at(slot);
}

// The held version of `number` died: its store entity goes, its children (which name a dead id
// for ever) stand at the scene root, and a shadowed live version takes the number over.
void DclWorld::release(SceneData& sc, uint16_t number) {
  if (sc.numbers[number].flags & kOnCycle) dissolve_cycle(sc, number);
  store_.move_children_at(sc.numbers[number].slot, sc.root_slot);
  destroy_held(sc.numbers[number].slot, sc.id(number));
  sc.numbers[number].flags = 0;
  sc.numbers[number].parent = kDclRootEntity;
  if (auto it = sc.shadows.find(number); it != sc.shadows.end()) {
    std::vector<uint16_t> versions = std::move(it->second);
    sc.shadows.erase(it);
    std::erase_if(versions,
                  [&](uint16_t v) { return !sc.state.known(dcl_entity_id(number, v)); });
    if (!versions.empty()) {
      const auto newest = std::max_element(versions.begin(), versions.end());
      const uint16_t v = *newest;
      versions.erase(newest);
      if (!versions.empty()) sc.shadows[number] = std::move(versions);
      sync(sc, dcl_entity_id(number, v));
    }
  }
  settle(sc);
}

// The parent link of `number` changed (its Transform, or the parent it names appeared): a cycle
// it closed is open now, and its store Parent is decided again in settle().
void DclWorld::relink(SceneData& sc, uint16_t number) {
  if (sc.numbers[number].flags & kOnCycle) dissolve_cycle(sc, number);
  sc.recheck.push_back(number);
  note_waiting(sc, number);
}

// A parent that may still appear (not held, not dead) is waited for.
void DclWorld::note_waiting(SceneData& sc, uint16_t number) {
  const EntityId parent = sc.numbers[number].parent;
  if (parent != kDclRootEntity && dcl_entity_number(parent) != 0 && !sc.holds(parent) &&
      !sc.state.is_dead(parent))
    sc.waiting[parent].push_back(number);
}

void DclWorld::dissolve_cycle(SceneData& sc, uint16_t member) {
  uint16_t m = member;
  do {
    sc.numbers[m].flags &= uint8_t(~kOnCycle);
    sc.recheck.push_back(m);
    m = sc.numbers[m].cycle_next;
  } while (m != member);
}

// Walks up the parent links from `start` through held entities. Reaching the root, a parent the
// scene does not hold, or a known cycle ends the walk; coming back to an entity of this walk
// closes a new cycle, whose members all stand at the scene root until one of them re-parents.
void DclWorld::find_cycle(SceneData& sc, uint16_t start) {
  if (++sc.epoch == 0) {  // the stamps wrapped: forget them all
    for (NumberRecord& r : sc.numbers) r.stamp = 0;
    sc.epoch = 1;
  }
  sc.path.clear();
  uint16_t at = start;
  for (;;) {
    sc.numbers[at].stamp = sc.epoch;
    sc.path.push_back(at);
    const EntityId parent = sc.numbers[at].parent;
    if (parent == kDclRootEntity || !sc.holds(parent)) return;
    const uint16_t next = dcl_entity_number(parent);
    if (sc.numbers[next].flags & kOnCycle) return;
    if (sc.numbers[next].stamp == sc.epoch) {
      const auto first = std::find(sc.path.begin(), sc.path.end(), next);
      for (auto it = first; it != sc.path.end(); ++it) {
        NumberRecord& r = sc.numbers[*it];
        r.flags |= kOnCycle;
        r.cycle_next = std::next(it) == sc.path.end() ? next : *std::next(it);
        store_.set_parent_at(r.slot, sc.root(), sc.root_slot);
      }
      return;
    }
    at = next;
  }
}

void DclWorld::place(SceneData& sc, uint16_t number) {
  const NumberRecord& r = sc.numbers[number];
  if ((r.flags & kOnCycle) || r.parent == kDclRootEntity || !sc.holds(r.parent)) {
    store_.set_parent_at(r.slot, sc.root(), sc.root_slot);
  } else {
    const uint16_t p = dcl_entity_number(r.parent);
    store_.set_parent_at(r.slot, sc.id(p), sc.numbers[p].slot);
  }
}

void DclWorld::settle(SceneData& sc) {
  // One entity re-linked alone (a move that re-parents it: a world's ~1,000 a frame), not on a
  // cycle, naming another entity, with no child in the store: nothing names it (an entity that
  // did would stand below it, or be on a cycle through it), so its new link closes no cycle and
  // the walk up its ancestors, a miss a step, can be spared.
  if (sc.recheck.size() == 1) {
    const uint16_t n = sc.recheck.front();
    const NumberRecord& r = sc.numbers[n];
    if ((r.flags & kHeld) && !(r.flags & kOnCycle) && dcl_entity_number(r.parent) != n &&
        !store_.has_children_at(r.slot)) {
      sc.recheck.clear();
      place(sc, n);
      return;
    }
  }
  while (!sc.recheck.empty()) {
    const uint16_t n = sc.recheck.back();
    sc.recheck.pop_back();
    if (!(sc.numbers[n].flags & kHeld)) continue;
    if (!(sc.numbers[n].flags & kOnCycle)) find_cycle(sc, n);
    place(sc, n);
  }
}

}  // namespace tprop
