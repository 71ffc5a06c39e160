// Decentraland semantics on top of the hierarchy core: a CRDT stream (or decoded messages) drives
// an EntityStore, frame after frame, so that the CPU reference and the GPU path compute every
// entity's world matrix = parent world * T(position) * R(rotation) * S(scale) (NOTES.md,
// decentraland-transform.txt).
//
// The store is a pure function of the CRDT state, kept up to date message by message:
// - Every live recorded entity except the root (entity 0) is a store entity, keyed by its full
//   32-bit id (number in the low 16 bits, version in the high 16).
// - With a valid Transform (44 bytes): Translation = position, Rotation = rotation, the scale as
//   Scale when its three components are equal (the same matrix) else NonUniformScale, and
//   Parent = parent unless it is 0.
// - Without one (never put, deleted, or malformed data): no transform component at all, so the
//   entity is identity at the root, and entities whose Transform names it as parent still do and
//   follow it (the A..F example of the spec).
// - A parent that is not a store entity (never seen, dead) leaves its children at the root with
//   their local matrix, which is what an identity parent at the root gives. The depth sort puts
//   cycle members at the root and keeps entities below a cycle attached.
// - A dead entity leaves the store; its children keep naming it (the store would otherwise drop
//   their Parent), so the store stays a function of the state whatever the arrival order.
// Between frames the caller runs the store's usual protocol (take_changes(), re-sort only when
// changes.hierarchy, evaluate): a Transform whose parent did not change touches values only.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "dcl_crdt.h"
#include "dcl_state.h"
#include "dcl_transform.h"
#include "entity_store.h"
#include "result.h"
#include "scene.h"

namespace tprop {

class DclScene {
 public:
  // Applies one message to the CRDT state, then brings the store entities it affected up to date.
  // Out of host memory these throw std::bad_alloc (result.h) and the scene may stand between
  // the message and its entities: feed() reports that as an error and stops the stream instead.
  CrdtApplyResult apply(const CrdtMessage& m);
  void apply(std::span<const CrdtMessage> batch);
  // Feeds raw stream bytes in chunks of any size: every message they complete is applied. A
  // malformed message is an error naming its offset; everything before it stays applied and the
  // stream stops there (every later feed returns the same error).
  Status feed(std::span<const uint8_t> bytes);
  // The stream has ended: an error when it stopped inside a message.
  Status finish() const { return reader_.finish(); }

  // The valid Transform the state holds for e; empty when it has none (then e is identity at
  // the root).
  std::optional<DclTransform> transform(EntityId e) const;

  EntityStore& store() { return store_; }
  const EntityStore& store() const { return store_; }
  const CrdtState& state() const { return state_; }
  const CrdtStreamReader& reader() const { return reader_; }
  // Messages addressed to entity 0, the scene root, which is no entity: they change nothing.
  uint64_t root_messages() const { return root_messages_; }
  // Hands the store over (for a Scene); the DclScene is not used afterwards.
  EntityStore release_store() && { return std::move(store_); }

 private:
  void sync(EntityId e);
  void destroy_keeping_children(EntityId e);

  CrdtState state_;
  EntityStore store_;
  CrdtStreamReader reader_;
  uint64_t root_messages_ = 0;
};

// Reads a whole CRDT stream file into a Scene (source = path). Errors name the file and, for a
// malformed or truncated stream, the byte offset. Warnings report Transforms with malformed data
// and non-unit rotations; the first warning line sums up the messages by type and outcome.
Result<Scene> load_crdt_scene(const std::string& path);
// The same for bytes already in memory; `source` names them in messages.
Result<Scene> load_crdt_scene_from_bytes(std::span<const uint8_t> bytes, const std::string& source);

// Whether bytes plausibly start a CRDT stream: the first header has a known type and a length
// that fits that type (for sniffing inputs without a .crdt extension).
bool looks_like_crdt_stream(std::span<const uint8_t> bytes);

}  // namespace tprop
