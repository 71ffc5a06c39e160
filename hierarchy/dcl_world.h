// A Decentraland world: many scenes, each its own CRDT stream with its own entity numbers and
// its own base parcel, held in ONE EntityStore so that one propagation a frame places every
// entity of every scene in Genesis City coordinates (an explorer's transform backend).
//
// Store ids: scene slot s (0..65535) and entity number n give the store id s * 65536 + n. A
// scene holds fewer than 65536 live entity numbers, and the store needs only the number: the
// version decides liveness, which the scene's CrdtState keeps. So a world holds at most
// kMaxScenes scenes at once; the slot of a removed scene is reused by a later add_scene.
//
// Each scene's root (entity 0, number 0) is a real store entity, translated to its base
// parcel's world position (x * 16, 0, y * 16): parcel (x, y) spans world X from 16x and world Z
// from 16y (left-handed, Y up, Z forward; NOTES.md). A scene entity hangs below that root
// whenever the single-scene path (DclScene) would put it at the root: no Transform, a Transform
// with parent 0, a parent that is no live entity of the scene (never seen yet, dead, another
// version), or membership of a parenting cycle. Since the store would leave such an entity at
// the WORLD root, the world decides the store Parent itself instead of naming the missing
// parent: it keeps, per scene, the entities that wait for a parent to appear, and finds the
// cycles a new parent link closes (a walk up the scene's links, O(depth), only when a link
// changes; moving an entity without re-parenting it touches values only). So the store holds no
// cycle and no unknown parent, and every scene entity's LocalToWorld is the single-scene one
// multiplied by its parcel's translation.
//
// One difference from DclScene, which keys the store by the full 32-bit id: a number is held by
// one version at a time. A second live version of a held number (a stream that reuses a number
// without deleting the old version first; the SDK never does) is "shadowed": kept in the CRDT
// state but not in the store, counted by shadowed(), and it takes over the number when the held
// version dies. Entity number 0 at a version other than 0 is shadowed by the scene root.
//
// Frames: feed or apply each scene's new messages, then run the store's frame protocol once for
// the whole world (take_changes, re-sort on hierarchy changes, evaluate; or Propagator::run).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dcl_crdt.h"
#include "dcl_state.h"
#include "dcl_transform.h"
#include "entity_store.h"
#include "math.h"
#include "result.h"

namespace tprop {

inline constexpr float kDclParcelSize = 16.0f;

// A Genesis City parcel: x and y as in its "x,y" name (each from -150 to 150 in Genesis City;
// any int32 is accepted).
struct DclParcel {
  int32_t x = 0;
  int32_t y = 0;
  friend bool operator==(const DclParcel&, const DclParcel&) = default;
};

// The world position of the parcel's origin corner: (16x, 0, 16y).
float3 dcl_parcel_position(DclParcel parcel);

class DclWorld {
 public:
  using SceneId = uint32_t;  // the scene's slot
  static constexpr uint32_t kMaxScenes = 65536;

  DclWorld();
  ~DclWorld();
  DclWorld(DclWorld&&) noexcept;
  DclWorld& operator=(DclWorld&&) noexcept;

  // Adds an empty scene (its root only). Error when kMaxScenes scenes are loaded or memory
  // runs out (the world then stays as it was).
  Result<SceneId> add_scene(std::string name, DclParcel base);
  // Destroys every store entity of the scene and forgets its stream, in O(scene); the slot is
  // free for a later add_scene. `s` must be a loaded scene. Error only when memory runs out
  // before anything is destroyed: the scene then stays loaded, whole.
  Status remove_scene(SceneId s);
  bool has_scene(SceneId s) const;

  // The scene's CRDT logic, as DclScene's: apply one message, or feed stream bytes in chunks of
  // any size (a malformed message is an error naming its offset; the scene's stream stops there,
  // as it does at a message that could not be applied for lack of memory: every later apply,
  // feed and finish() of the scene return that error; other scenes go on).
  Result<CrdtApplyResult> apply(SceneId s, const CrdtMessage& m);
  Status feed(SceneId s, std::span<const uint8_t> bytes);
  // Stream bytes for one scene, for the feed of many scenes below.
  struct Chunk {
    SceneId scene;
    std::span<const uint8_t> bytes;
  };
  // A frame's bytes for many loaded scenes: feed(chunk.scene, chunk.bytes) for each chunk in
  // turn, its status at the same index. Faster in a big world: messages are applied a few
  // behind their reading, scene after scene, so the cache misses of several overlap. Throws
  // (std::bad_alloc) only when its own status vector cannot be allocated, before reading.
  std::vector<Status> feed(std::span<const Chunk> chunks);
  // The scene's stream has ended: an error when it stopped inside a message.
  Status finish(SceneId s) const;

  // The store id of the scene root and of (scene, entity number).
  static EntityId root_id(SceneId s) { return EntityId(s) << 16; }
  static EntityId store_id_of(SceneId s, uint16_t number) { return root_id(s) | number; }
  // The store entity that stands for the scene's entity (a full 32-bit Decentraland id; 0 is the
  // root): empty when the scene holds no live entity under that id (unknown, dead, shadowed).
  std::optional<EntityId> store_id(SceneId s, EntityId entity) const;
  // Its store slot, which indexes per-slot results (CpuReference via DepthOrder::position).
  std::optional<uint32_t> store_slot(SceneId s, EntityId entity) const {
    const std::optional<EntityId> id = store_id(s, entity);
    if (!id) return std::nullopt;
    return store_.slot_of(*id);
  }

  EntityStore& store() { return store_; }
  const EntityStore& store() const { return store_; }
  const CrdtState& state(SceneId s) const;
  const std::string& name(SceneId s) const;
  DclParcel parcel(SceneId s) const;
  // Live entities of the scene that are not in the store (see above).
  size_t shadowed(SceneId s) const;
  // The loaded scenes, in slot order.
  std::vector<SceneId> scenes() const;
  size_t scene_count() const { return scene_count_; }

 private:
  struct SceneData;
  struct Staged;  // a message read, waiting in the feed's batch

  SceneData& scene(SceneId s);
  const SceneData& scene(SceneId s) const;
  CrdtApplyResult apply(SceneData& sc, const CrdtMessage& m);
  // apply() unless the scene has failed; out of memory, the scene fails (SceneData::failure).
  // Whether the message was applied; its result in *result when asked.
  bool apply_unless_failed(SceneData& sc, const CrdtMessage& m,
                           CrdtApplyResult* result = nullptr) noexcept;
  bool apply_move(const Staged& staged) noexcept;
  void stage(SceneData& sc, size_t chunk, const CrdtMessage& m);
  void request_store(Staged& staged);
  void request_links(const Staged& staged);
  void apply_batch() noexcept;
  void sync(SceneData& sc, EntityId e);
  void release(SceneData& sc, uint16_t number);
  void destroy_held(uint32_t slot, EntityId id);
  void relink(SceneData& sc, uint16_t number);
  void note_waiting(SceneData& sc, uint16_t number);
  void dissolve_cycle(SceneData& sc, uint16_t member);
  void find_cycle(SceneData& sc, uint16_t start);
  void settle(SceneData& sc);
  // Sets the store Parent of a held number: its named parent when the scene holds it and no
  // cycle stands in the way, else the scene root.
  void place(SceneData& sc, uint16_t number);

  EntityStore store_;
  std::vector<std::unique_ptr<SceneData>> scenes_;  // by slot; null for a free slot
  std::vector<SceneId> free_slots_;
  size_t scene_count_ = 0;
  // The batch (see stage()): messages read but not yet applied, by count of messages read. None
  // waits between calls (its places keep their capacity); feed() applies every message it read
  // before it returns.
  std::vector<Staged> batch_;
  uint64_t read_ = 0;
  uint64_t applied_ = 0;
  std::vector<Status>* statuses_ = nullptr;  // the feed's, by chunk
};

}  // namespace tprop
