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
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "dcl_crdt.h"
#include "prefetch.h"
#include "small_bytes.h"

namespace tprop {

// The value held for one (entity, component). (In this order, 52 bytes: see NumberRecord.)
struct LwwEntry {
  SmallBytes data;       // the PUT's bytes
  bool deleted = false;  // a DELETE_COMPONENT tombstone: it keeps its lamport, no data
  uint32_t lamport = 0;
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
  bool entity_created = false;  // the first message for this entity: it exists now
  // DELETE_ENTITY: the recorded entities it killed, in increasing id order. It points into the
  // state, which reuses the array, so it is valid until the state's next apply().
  std::span<const EntityId> removed;
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

// Entity numbers are dense in practice (the SDK counts them up from 512 and reuses deleted ones
// at the next version), so the state is kept by number in pages of flat records, not in
// node-based maps: a message costs a page look-up and its record, and nothing is allocated
// while a number's Transform changes. The Transform, the one component tprop reads, is held in
// the record itself; other components sit in a list per entity. A number holds one live version
// in place; further live versions of the same number (which the SDK never makes) go to a
// side map.
class CrdtState {
 public:
  CrdtState();
  ~CrdtState();
  CrdtState(CrdtState&&) noexcept;
  CrdtState& operator=(CrdtState&&) noexcept;

  CrdtApplyResult apply(const CrdtMessage& m);
  // apply(m) for the message most of a world's frame is made of: a PUT (or PUT_NETWORK) of the
  // Transform of an entity that is its number's live version held in place, which creates
  // nothing and kills nothing, so that its outcome is all there is to say. Without apply()'s
  // general dispatch (a tenth of a world message's instructions). Returns false, having changed
  // nothing, for any other message; apply() then takes it.
  bool put_held_transform(const CrdtMessage& m, CrdtOutcome& outcome);

  // The value held for (e, component); nullptr when no message for it has been kept. Valid
  // until the next apply().
  const LwwEntry* find(EntityId e, uint32_t component) const;
  // Whether a message has recorded e and it is not dead.
  bool known(EntityId e) const { return locate(e) != nullptr; }
  // Whether e's number has been deleted at e's version or a later one.
  bool is_dead(EntityId e) const;
  // The recorded (live) entities, in increasing id order.
  std::vector<EntityId> entities() const;
  size_t entity_count() const { return live_count_; }
  // The (number, highest dead version) pairs, in increasing number order.
  std::vector<std::pair<uint16_t, uint16_t>> dead_numbers() const;
  const CrdtCounts& counts() const { return counts_; }
  // A hint that a message for e comes soon: starts loading its record into the cache, so that
  // a caller holding several messages overlaps their memory latencies.
  void prefetch(EntityId e) const {
    if (const NumberRecord* nr = number(dcl_entity_number(e))) prefetch_line(nr);
  }
  // The same, loaded now (fetch_line): for a caller about to apply a batch of messages.
  void fetch(EntityId e) const {
    if (const NumberRecord* nr = number(dcl_entity_number(e))) fetch_line(nr);
  }
  // A hint that messages come soon: starts loading the table of pages that prefetch() reads
  // first (a scene's first 16,384 numbers are on its first line).
  void prefetch_pages() const {
    if (!pages_.empty()) prefetch_line(pages_.data());
  }

 private:
  static constexpr uint32_t kNoList = 0xffffffffu;
  static constexpr uint32_t kPageBits = 8;  // 256 numbers a page

  struct EntityRecord {
    LwwEntry transform;         // meaningful when has_transform
    uint32_t others = kNoList;  // index in other_lists_ of its other components
    bool has_transform = false;
  };
  // A number's record is the record of its live version held in place, with the number's own
  // fields in that record's tail padding: 64 bytes on one cache line, which is all a message
  // for a held entity reads of the state (80 bytes over two lines before).
  struct alignas(64) NumberRecord : EntityRecord {
    EntityRecord& held() { return *this; }  // the live version `version`, when kLive
    const EntityRecord& held() const { return *this; }
    uint16_t version = 0;
    uint16_t dead_version = 0;  // when kDead: every version up to it is dead
    uint8_t flags = 0;          // kLive, kDead, kExtras
  };
  static_assert(sizeof(SmallBytes) == 45 && sizeof(LwwEntry) == 52 && sizeof(NumberRecord) == 64);
  struct Page {
    NumberRecord at[size_t(1) << kPageBits];
    // Pages come from one pool of 2 MiB pages that every CrdtState shares (block_pool.h): a
    // world's thousand scenes otherwise spread them over 4 KiB pages, a TLB miss a message.
    static void* operator new(size_t size);
    static void operator delete(void* p) noexcept;
  };

  const NumberRecord* number(uint16_t n) const;
  // The same record to change in place (a page is never made here).
  NumberRecord* number(uint16_t n) {
    return const_cast<NumberRecord*>(static_cast<const CrdtState&>(*this).number(n));
  }
  NumberRecord& number_for_write(uint16_t n);
  NumberRecord& number_in_new_page(uint16_t n);  // its slow part
  const EntityRecord* locate(EntityId e) const;
  // Returns the record of e (whose number's record is nr), creating it (and noting that) when
  // it is new.
  EntityRecord& record(NumberRecord& nr, EntityId e, bool& created);
  EntityRecord& new_or_extra_record(NumberRecord& nr, EntityId e, bool& created);  // its slow part
  LwwEntry* component_for_write(EntityRecord& rec, uint32_t component, bool& present);
  void forget(EntityRecord& rec);
  CrdtApplyResult apply_lww(const CrdtMessage& m, bool deleted);
  CrdtApplyResult apply_delete_entity(EntityId e);
  CrdtApplyResult count(CrdtApplyResult r);

  std::vector<std::unique_ptr<Page>> pages_;  // by number >> kPageBits; null until used
  // Live versions of a number beside the one held in place, keyed number << 16 | version.
  std::map<uint32_t, EntityRecord> extras_;
  // Components other than Transform, a list per entity that has any, with a free list.
  std::vector<std::vector<std::pair<uint32_t, LwwEntry>>> other_lists_;
  std::vector<uint32_t> free_lists_;
  std::vector<EntityId> removed_;  // the last DELETE_ENTITY's victims
  size_t live_count_ = 0;
  CrdtCounts counts_;
};

// Inline: prefetch() and fetch() ask it for every message a world reads.
inline const CrdtState::NumberRecord* CrdtState::number(uint16_t n) const {
  const size_t page = n >> kPageBits;
  if (page >= pages_.size() || !pages_[page]) return nullptr;
  return &pages_[page]->at[n & ((1u << kPageBits) - 1)];
}

// The LWW order itself, exposed for tests and tools: > 0 when the incoming value (lamport,
// deleted, data) beats the held one, 0 when identical, < 0 when it loses.
int lww_compare(uint32_t lamport, bool deleted, std::span<const uint8_t> data,
                const LwwEntry& held);

}  // namespace tprop
