#include "dcl_state.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "block_pool.h"
#include "dcl_transform.h"

namespace tprop {

namespace {

constexpr uint8_t kLive = 1;    // the record in place holds a live version
constexpr uint8_t kDead = 2;    // dead_version is set
constexpr uint8_t kExtras = 4;  // extras_ may hold other live versions of the number

constexpr uint32_t extra_key(uint16_t number, uint16_t version) {
  return uint32_t(number) << 16 | version;
}

}  // namespace

uint64_t CrdtCounts::total() const {
  uint64_t n = 0;
  for (uint64_t c : by_type) n += c;
  return n;
}

int lww_compare(uint32_t lamport, bool deleted, std::span<const uint8_t> data,
                const LwwEntry& held) {
  if (lamport != held.lamport) return lamport > held.lamport ? 1 : -1;
  // Equal lamports: a put beats a delete; two deletes are the same value.
  if (deleted != held.deleted) return deleted ? -1 : 1;
  if (deleted) return 0;
  // Two puts: the longer data wins, then the lexicographically larger (unsigned) bytes.
  if (data.size() != held.data.size()) return data.size() > held.data.size() ? 1 : -1;
  if (data.empty()) return 0;
  const int c = std::memcmp(data.data(), held.data.data(), data.size());
  return c > 0 ? 1 : c < 0 ? -1 : 0;
}

namespace {
// Never destroyed: a CrdtState in a static object may give its pages back after the pool's
// destructor would have run. Its chunks stay reachable from here.
BlockPool& page_pool(size_t page_size, size_t alignment) {
  static BlockPool* const pool = new BlockPool(page_size, alignment);
  return *pool;
}
}  // namespace

void* CrdtState::Page::operator new([[maybe_unused]] size_t size) {
  assert(size == sizeof(Page));
  return page_pool(sizeof(Page), alignof(Page)).allocate();
}

void CrdtState::Page::operator delete(void* p) noexcept {
  page_pool(sizeof(Page), alignof(Page)).deallocate(p);
}

CrdtState::CrdtState() = default;
CrdtState::~CrdtState() = default;
CrdtState::CrdtState(CrdtState&&) noexcept = default;
CrdtState& CrdtState::operator=(CrdtState&&) noexcept = default;

// Inline: every message asks, and all but the first of a page find it.
inline CrdtState::NumberRecord& CrdtState::number_for_write(uint16_t n) {
  const size_t page = n >> kPageBits;
  if (page < pages_.size() && pages_[page]) [[likely]]
    return pages_[page]->at[n & ((1u << kPageBits) - 1)];
  return number_in_new_page(n);
}

CrdtState::NumberRecord& CrdtState::number_in_new_page(uint16_t n) {
  const size_t page = n >> kPageBits;
  if (page >= pages_.size()) pages_.resize(page + 1);
  if (!pages_[page]) pages_[page] = std::make_unique<Page>();
  return pages_[page]->at[n & ((1u << kPageBits) - 1)];
}

const CrdtState::EntityRecord* CrdtState::locate(EntityId e) const {
  const NumberRecord* nr = number(dcl_entity_number(e));
  if (!nr || !(nr->flags & kLive)) return nullptr;
  const uint16_t v = dcl_entity_version(e);
  if (nr->version == v) return &nr->held();
  if (!(nr->flags & kExtras)) return nullptr;
  const auto it = extras_.find(extra_key(dcl_entity_number(e), v));
  return it == extras_.end() ? nullptr : &it->second;
}

bool CrdtState::is_dead(EntityId e) const {
  const NumberRecord* nr = number(dcl_entity_number(e));
  return nr && (nr->flags & kDead) && dcl_entity_version(e) <= nr->dead_version;
}

// Invariant: a number with live versions holds one of them in place, so a number whose record
// in place is not live has no extras either.
// Inline: most messages name the version held in place.
inline CrdtState::EntityRecord& CrdtState::record(NumberRecord& nr, EntityId e, bool& created) {
  if ((nr.flags & kLive) && nr.version == dcl_entity_version(e)) [[likely]] {
    created = false;
    return nr.held();
  }
  return new_or_extra_record(nr, e, created);
}

CrdtState::EntityRecord& CrdtState::new_or_extra_record(NumberRecord& nr, EntityId e,
                                                        bool& created) {
  const uint16_t n = dcl_entity_number(e), v = dcl_entity_version(e);
  created = false;
  if (!(nr.flags & kLive)) {
    nr.flags |= kLive;
    nr.version = v;
    created = true;
    ++live_count_;
    return nr.held();
  }
  if (nr.version == v) return nr.held();
  auto [it, inserted] = extras_.try_emplace(extra_key(n, v));
  if (inserted) {
    nr.flags |= kExtras;
    created = true;
    ++live_count_;
  }
  return it->second;
}

LwwEntry* CrdtState::component_for_write(EntityRecord& rec, uint32_t component, bool& present) {
  if (component == kDclTransformComponentId) {
    present = rec.has_transform;
    rec.has_transform = true;
    return &rec.transform;
  }
  if (rec.others == kNoList) {
    if (!free_lists_.empty()) {
      rec.others = free_lists_.back();
      free_lists_.pop_back();
    } else {
      rec.others = uint32_t(other_lists_.size());
      other_lists_.emplace_back();
    }
  }
  auto& list = other_lists_[rec.others];
  for (auto& c : list)
    if (c.first == component) {
      present = true;
      return &c.second;
    }
  present = false;
  return &list.emplace_back(component, LwwEntry{}).second;
}

// The entity died: its values go (its Transform's bytes stay allocated for the next version).
void CrdtState::forget(EntityRecord& rec) {
  rec.has_transform = false;
  rec.transform.lamport = 0;
  rec.transform.deleted = false;
  rec.transform.data.clear();
  if (rec.others != kNoList) {
    other_lists_[rec.others].clear();
    free_lists_.push_back(rec.others);
    rec.others = kNoList;
  }
}

inline CrdtApplyResult CrdtState::count(CrdtApplyResult r) {
  switch (r.outcome) {
    case CrdtOutcome::Applied: ++counts_.applied; break;
    case CrdtOutcome::NoOp: ++counts_.no_op; break;
    case CrdtOutcome::Outdated: ++counts_.outdated; break;
    case CrdtOutcome::DeadEntity: ++counts_.dead_entity; break;
    case CrdtOutcome::Recorded: break;
  }
  return r;
}

CrdtApplyResult CrdtState::apply(const CrdtMessage& m) {
  const uint32_t type = uint32_t(m.type);
  if (type >= 1 && type <= kCrdtMessageTypeCount) ++counts_.by_type[type];
  if (crdt_type_has_component(m.type) && m.component != kDclTransformComponentId)
    ++counts_.other_component;
  switch (m.type) {
    case CrdtMessageType::DeleteEntity:
    case CrdtMessageType::DeleteEntityNetwork: return count(apply_delete_entity(m.entity));
    case CrdtMessageType::PutComponent:
    case CrdtMessageType::PutComponentNetwork: return count(apply_lww(m, false));
    case CrdtMessageType::DeleteComponent:
    case CrdtMessageType::DeleteComponentNetwork: return count(apply_lww(m, true));
    case CrdtMessageType::AppendValue: {
      CrdtApplyResult r;
      if (is_dead(m.entity)) {
        r.outcome = CrdtOutcome::DeadEntity;
      } else {
        r.outcome = CrdtOutcome::Recorded;
        record(number_for_write(dcl_entity_number(m.entity)), m.entity, r.entity_created);
      }
      return count(r);
    }
  }
  return CrdtApplyResult{};  // not one of the seven: the reader never produces it
}

bool CrdtState::put_held_transform(const CrdtMessage& m, CrdtOutcome& outcome) {
  if ((m.type != CrdtMessageType::PutComponent && m.type != CrdtMessageType::PutComponentNetwork) ||
      m.component != kDclTransformComponentId)
    return false;
  NumberRecord* const found = number(dcl_entity_number(m.entity));
  if (!found) return false;
  NumberRecord& nr = *found;
  // Live in place at the message's version: a deletion at or above that version would have
  // taken the record out of place, and one below it made it dead no higher than it, so that
  // apply_lww() would pass its dead check, find this record and create nothing.
  if (!(nr.flags & kLive) || nr.version != dcl_entity_version(m.entity)) return false;
  EntityRecord& rec = nr.held();
  const std::span<const uint8_t> data(m.data);
  ++counts_.by_type[uint32_t(m.type)];
  // A later lamport wins outright (every move of a stream): the full order only on a tie or
  // an older one.
  if (rec.has_transform && m.lamport <= rec.transform.lamport) {
    const int c = lww_compare(m.lamport, false, data, rec.transform);
    if (c <= 0) {
      outcome = c == 0 ? CrdtOutcome::NoOp : CrdtOutcome::Outdated;
      count(CrdtApplyResult{outcome, false, {}});
      return true;
    }
  }
  rec.has_transform = true;
  rec.transform.lamport = m.lamport;
  rec.transform.deleted = false;
  rec.transform.data.assign(data);
  outcome = CrdtOutcome::Applied;
  ++counts_.applied;
  return true;
}

CrdtApplyResult CrdtState::apply_lww(const CrdtMessage& m, bool deleted) {
  CrdtApplyResult r;
  // One look-up of the number serves the dead check and the record (a dead number has its
  // page already, so nothing is made for a message that is ignored).
  NumberRecord& nr = number_for_write(dcl_entity_number(m.entity));
  if ((nr.flags & kDead) && dcl_entity_version(m.entity) <= nr.dead_version) {
    r.outcome = CrdtOutcome::DeadEntity;
    return r;
  }
  EntityRecord& rec = record(nr, m.entity, r.entity_created);
  bool present = false;
  LwwEntry* held = component_for_write(rec, m.component, present);
  const std::span<const uint8_t> data =
      deleted ? std::span<const uint8_t>() : std::span<const uint8_t>(m.data);
  if (present) {
    const int c = lww_compare(m.lamport, deleted, data, *held);
    if (c <= 0) {
      r.outcome = c == 0 ? CrdtOutcome::NoOp : CrdtOutcome::Outdated;
      return r;
    }
  }
  held->lamport = m.lamport;
  held->deleted = deleted;
  held->data.assign(data);
  r.outcome = CrdtOutcome::Applied;
  return r;
}

CrdtApplyResult CrdtState::apply_delete_entity(EntityId e) {
  CrdtApplyResult r;
  const uint16_t n = dcl_entity_number(e), version = dcl_entity_version(e);
  NumberRecord& nr = number_for_write(n);
  if ((nr.flags & kDead) && nr.dead_version >= version) {
    r.outcome = CrdtOutcome::NoOp;
    return r;
  }
  nr.flags |= kDead;
  nr.dead_version = version;
  r.outcome = CrdtOutcome::Applied;
  removed_.clear();
  if ((nr.flags & kLive) && nr.version <= version) {
    removed_.push_back(dcl_entity_id(n, nr.version));
    forget(nr.held());
    nr.flags &= uint8_t(~kLive);
    --live_count_;
  }
  if (nr.flags & kExtras) {
    const auto first = extras_.lower_bound(extra_key(n, 0));
    auto it = first;
    for (; it != extras_.end() && it->first <= extra_key(n, version); ++it) {
      removed_.push_back(dcl_entity_id(n, uint16_t(it->first)));
      forget(it->second);
      --live_count_;
    }
    extras_.erase(first, it);
    const bool more = it != extras_.end() && (it->first >> 16) == n;
    if (!more) {
      nr.flags &= uint8_t(~kExtras);
    } else if (!(nr.flags & kLive)) {
      // The version held in place died and a later one lives: it takes the place.
      nr.held() = std::move(it->second);
      nr.version = uint16_t(it->first);
      nr.flags |= kLive;
      extras_.erase(it);
      const auto next = extras_.lower_bound(extra_key(n, 0));
      if (next == extras_.end() || (next->first >> 16) != n) nr.flags &= uint8_t(~kExtras);
    }
  }
  // The same number throughout: increasing ids are increasing versions.
  std::sort(removed_.begin(), removed_.end());
  r.removed = removed_;
  return r;
}

const LwwEntry* CrdtState::find(EntityId e, uint32_t component) const {
  const EntityRecord* rec = locate(e);
  if (!rec) return nullptr;
  if (component == kDclTransformComponentId) return rec->has_transform ? &rec->transform : nullptr;
  if (rec->others == kNoList) return nullptr;
  for (const auto& c : other_lists_[rec->others])
    if (c.first == component) return &c.second;
  return nullptr;
}

std::vector<EntityId> CrdtState::entities() const {
  std::vector<EntityId> out;
  out.reserve(live_count_);
  for (size_t p = 0; p < pages_.size(); ++p) {
    if (!pages_[p]) continue;
    for (uint32_t i = 0; i < (1u << kPageBits); ++i) {
      const NumberRecord& nr = pages_[p]->at[i];
      if (nr.flags & kLive) out.push_back(dcl_entity_id(uint16_t((p << kPageBits) + i), nr.version));
    }
  }
  for (const auto& [key, rec] : extras_) out.push_back(dcl_entity_id(uint16_t(key >> 16), uint16_t(key)));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<uint16_t, uint16_t>> CrdtState::dead_numbers() const {
  std::vector<std::pair<uint16_t, uint16_t>> out;
  for (size_t p = 0; p < pages_.size(); ++p) {
    if (!pages_[p]) continue;
    for (uint32_t i = 0; i < (1u << kPageBits); ++i) {
      const NumberRecord& nr = pages_[p]->at[i];
      if (nr.flags & kDead) out.emplace_back(uint16_t((p << kPageBits) + i), nr.dead_version);
    }
  }
  return out;
}

}  // namespace tprop
