#include "dcl_state.h"

#include <algorithm>
#include <cstring>

#include "dcl_transform.h"

namespace tprop {

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

bool CrdtState::is_dead(EntityId e) const {
  const auto it = dead_.find(dcl_entity_number(e));
  return it != dead_.end() && dcl_entity_version(e) <= it->second;
}

CrdtState::EntityRecord& CrdtState::record(EntityId e, bool& created) {
  auto [it, inserted] = entities_.try_emplace(e);
  created = inserted;
  if (inserted) versions_[dcl_entity_number(e)].push_back(dcl_entity_version(e));
  return it->second;
}

CrdtApplyResult CrdtState::count(CrdtApplyResult r) {
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
        record(m.entity, r.entity_created);
      }
      return count(std::move(r));
    }
  }
  return CrdtApplyResult{};  // not one of the seven: the reader never produces it
}

CrdtApplyResult CrdtState::apply_lww(const CrdtMessage& m, bool deleted) {
  CrdtApplyResult r;
  if (is_dead(m.entity)) {
    r.outcome = CrdtOutcome::DeadEntity;
    return r;
  }
  EntityRecord& rec = record(m.entity, r.entity_created);
  auto it = std::find_if(rec.components.begin(), rec.components.end(),
                         [&](const auto& c) { return c.first == m.component; });
  const std::span<const uint8_t> data =
      deleted ? std::span<const uint8_t>() : std::span<const uint8_t>(m.data);
  if (it == rec.components.end()) {
    rec.components.emplace_back(m.component,
                                LwwEntry{m.lamport, deleted, {data.begin(), data.end()}});
    r.outcome = CrdtOutcome::Applied;
    return r;
  }
  const int c = lww_compare(m.lamport, deleted, data, it->second);
  if (c > 0) {
    it->second.lamport = m.lamport;
    it->second.deleted = deleted;
    it->second.data.assign(data.begin(), data.end());
    r.outcome = CrdtOutcome::Applied;
  } else {
    r.outcome = c == 0 ? CrdtOutcome::NoOp : CrdtOutcome::Outdated;
  }
  return r;
}

CrdtApplyResult CrdtState::apply_delete_entity(EntityId e) {
  CrdtApplyResult r;
  const uint16_t number = dcl_entity_number(e), version = dcl_entity_version(e);
  auto [dead, inserted] = dead_.try_emplace(number, version);
  if (!inserted) {
    if (dead->second >= version) {
      r.outcome = CrdtOutcome::NoOp;
      return r;
    }
    dead->second = version;
  }
  r.outcome = CrdtOutcome::Applied;
  auto versions = versions_.find(number);
  if (versions == versions_.end()) return r;
  std::vector<uint16_t>& list = versions->second;
  for (size_t i = 0; i < list.size();) {
    if (list[i] <= version) {
      const EntityId id = dcl_entity_id(number, list[i]);
      entities_.erase(id);
      r.removed.push_back(id);
      list[i] = list.back();
      list.pop_back();
    } else {
      ++i;
    }
  }
  if (list.empty()) versions_.erase(versions);
  std::sort(r.removed.begin(), r.removed.end());
  return r;
}

const LwwEntry* CrdtState::find(EntityId e, uint32_t component) const {
  const auto it = entities_.find(e);
  if (it == entities_.end()) return nullptr;
  for (const auto& c : it->second.components)
    if (c.first == component) return &c.second;
  return nullptr;
}

std::vector<EntityId> CrdtState::entities() const {
  std::vector<EntityId> out;
  out.reserve(entities_.size());
  for (const auto& e : entities_) out.push_back(e.first);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<uint16_t, uint16_t>> CrdtState::dead_numbers() const {
  std::vector<std::pair<uint16_t, uint16_t>> out(dead_.begin(), dead_.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace tprop
