// What DclScene (one stream, a store of its own) and DclWorld (many streams, one shared store)
// share: which entities a message may have changed, how a Transform's values become store
// components, and the loop that turns stream bytes into applied messages. The two differ only
// in how they name store entities and how they place an entity's parent.
#pragma once

#include <exception>
#include <optional>
#include <span>
#include <string>

#include "dcl_crdt.h"
#include "dcl_state.h"
#include "dcl_transform.h"
#include "entity_store.h"
#include "result.h"

namespace tprop {

// Calls sync(entity) for every entity whose store state message m may have changed, given what
// it did to the CRDT state: the entities a DELETE_ENTITY killed, or m's entity when it was first
// recorded or its Transform changed.
template <class Sync>
void for_each_entity_to_sync(const CrdtMessage& m, const CrdtApplyResult& r, Sync&& sync) {
  if (!r.removed.empty()) {
    for (EntityId e : r.removed) sync(e);
  } else if (r.entity_created ||
             (r.outcome == CrdtOutcome::Applied && m.component == kDclTransformComponentId &&
              crdt_type_has_component(m.type))) {
    sync(m.entity);
  }
}

// The valid Transform the state holds for e; empty when it has none (never put, deleted, or not
// 44 bytes long): then e is identity at its scene's root.
std::optional<DclTransform> dcl_transform_of(const CrdtState& state, EntityId e);

// Position, rotation and scale of t on the store entity at `slot` (which must be live): the
// scale as Scale when its three components are equal (the same matrix), else NonUniformScale.
// Parent is left to the caller. By slot: the caller finds the slot once a message, not once a
// component.
void put_dcl_transform_values(EntityStore& store, uint32_t slot, const DclTransform& t);
// Removes Translation, Rotation, Scale and NonUniformScale (not Parent).
void remove_dcl_transform_values(EntityStore& store, EntityId id);

// Appends bytes to the reader and calls apply(message) for every message they complete. A
// malformed message is an error naming its offset; everything before it stays applied. So is a
// message that could not be read or applied (out of memory): the reader stops there for good,
// since the state now lacks that message. Each message is read into the one scratch_for()
// returns for it (CrdtStreamReader::feed_into).
template <class ScratchFor, class Apply>
Status feed_crdt_bytes_into(CrdtStreamReader& reader, std::span<const uint8_t> bytes,
                            ScratchFor&& scratch_for, Apply&& apply) {
  try {
    return reader.feed_into(bytes, scratch_for, apply);
  } catch (const std::exception& e) {  // std::bad_alloc: nothing else throws here
    reader.stop(e.what());
  }
  try {
    return reader.finish();  // the error stop() left
  } catch (...) {
    return Error{"out of memory"};
  }
}

// The same, every message read into one of its own.
template <class Apply>
Status feed_crdt_bytes(CrdtStreamReader& reader, std::span<const uint8_t> bytes, Apply&& apply) {
  CrdtMessage m;  // read into again and again
  return feed_crdt_bytes_into(reader, bytes, [&]() -> CrdtMessage& { return m; }, apply);
}

}  // namespace tprop
