// The CRDT state of a Decentraland scene: last-writer-wins per (entity, component), and the
// grow-only set of dead entities (NOTES.md, ADR-117).
//
// Every message that names a live entity records that entity: it exists from then on, with or
// without components, until a DELETE_ENTITY kills it. An entity id is a 16-bit number and a
// 16-bit version; deleting (number, version) kills that number for every version up to the
// deleted one, for ever, and a later message for any of them is ignored. The state after a set
// of messages does not depend on the order in which they arrived nor on duplicates: each
// (entity, component) keeps the maximum of a total order over (lamport, put over delete, data
// length, data bytes), and the dead set only grows.
//
// The network forms (5, 6, 7) act as their local forms (1, 2, 3) on the entity id they carry;
// the network id is read and counted but not used for entity mapping. APPEND_VALUE (grow-only
// set components, never Transform) records its entity and is counted, its value is not kept.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dcl_crdt.h"

namespace tprop {

// The value held for one (entity, component).
struct LwwEntry {
  uint32_t lamport = 0;
  bool deleted = false;       // a DELETE_COMPONENT tombstone: it keeps its lamport, no data
  std::vector<uint8_t> data;  // the PUT's bytes
};

// What a message did to the state.
enum class CrdtOutcome : uint8_t {
  Applied,     // the state changed
  NoOp,        // the state already holds exactly this (a duplicate, or a repeated delete)
  Outdated,    // it lost to the value held (lower lamport, or a tie-break)
  DeadEntity,  // it names an entity that is dead
  Recorded,    // APPEND_VALUE: its entity is recorded, its value is not kept
};

struct CrdtApplyResult {
  CrdtOutcome outcome = CrdtOutcome::NoOp;
  bool entity_created = false;    // the first message for this entity: it exists now
  std::vector<EntityId> removed;  // DELETE_ENTITY: the recorded entities it killed
};

struct CrdtCounts {
  uint64_t by_type[kCrdtMessageTypeCount + 1] = {};  // indexed by the type value; 0 unused
  uint64_t applied = 0;
  uint64_t no_op = 0;
  uint64_t outdated = 0;
  uint64_t dead_entity = 0;
  uint64_t other_component = 0;  // component messages for components other than Transform

  uint64_t of(CrdtMessageType t) const { return by_type[uint32_t(t)]; }
  uint64_t total() const;
};

class CrdtState {
 public:
  CrdtApplyResult apply(const CrdtMessage& m);

  // The value held for (e, component); nullptr when no message for it has been kept.
  const LwwEntry* find(EntityId e, uint32_t component) const;
  // Whether a message has recorded e and it is not dead.
  bool known(EntityId e) const { return entities_.count(e) != 0; }
  // Whether e's number has been deleted at e's version or a later one.
  bool is_dead(EntityId e) const;
  // The recorded (live) entities, in increasing id order.
  std::vector<EntityId> entities() const;
  size_t entity_count() const { return entities_.size(); }
  // The (number, highest dead version) pairs, in increasing number order.
  std::vector<std::pair<uint16_t, uint16_t>> dead_numbers() const;
  const CrdtCounts& counts() const { return counts_; }

 private:
  struct EntityRecord {
    // Few components per entity: a flat list searched linearly.
    std::vector<std::pair<uint32_t, LwwEntry>> components;
  };

  // Returns the entity's record, creating it (and noting that) when it is new.
  EntityRecord& record(EntityId e, bool& created);
  CrdtApplyResult apply_lww(const CrdtMessage& m, bool deleted);
  CrdtApplyResult apply_delete_entity(EntityId e);
  CrdtApplyResult count(CrdtApplyResult r);

  std::unordered_map<EntityId, EntityRecord> entities_;
  // Number -> versions recorded in entities_, so that a DELETE_ENTITY finds them all.
  std::unordered_map<uint16_t, std::vector<uint16_t>> versions_;
  // Number -> the highest deleted version: versions up to it are dead.
  std::unordered_map<uint16_t, uint16_t> dead_;
  CrdtCounts counts_;
};

// The LWW order itself, exposed for tests and tools: > 0 when the incoming value (lamport,
// deleted, data) beats the held one, 0 when identical, < 0 when it loses.
int lww_compare(uint32_t lamport, bool deleted, std::span<const uint8_t> data,
                const LwwEntry& held);

}  // namespace tprop
