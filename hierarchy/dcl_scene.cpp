#include "dcl_scene.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>

#include "dcl_sync.h"
#include "scene_input.h"


namespace tprop {

namespace {

std::string hex_id(EntityId e) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) s += digits[(e >> shift) & 0xf];
  return s;
}

// "1 duplicate", "2 duplicates".
std::string counted(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

void put_dcl_transform_values(EntityStore& store, uint32_t slot, const DclTransform& t) {
  const auto same_bits = [](float a, float b) {
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
  };
  if (same_bits(t.scale.x, t.scale.y) && same_bits(t.scale.x, t.scale.z)) {
    store.set_trs_at(slot, t.position, t.rotation, t.scale.x);
  } else {
    store.set_trs_at(slot, t.position, t.rotation, t.scale);
  }
}

void remove_dcl_transform_values(EntityStore& store, EntityId id) {
  for (Component c : {Component::Translation, Component::Rotation, Component::Scale,
                      Component::NonUniformScale})
    store.remove(id, c);
}

CrdtApplyResult DclScene::apply(const CrdtMessage& m) {
  if (m.entity == kDclRootEntity) ++root_messages_;
  CrdtApplyResult r = state_.apply(m);
  for_each_entity_to_sync(m, r, [this](EntityId e) { sync(e); });
  return r;
}

void DclScene::apply(std::span<const CrdtMessage> batch) {
  for (const CrdtMessage& m : batch) apply(m);
}

Status DclScene::feed(std::span<const uint8_t> bytes) {
  return feed_crdt_bytes(reader_, bytes, [this](const CrdtMessage& m) { apply(m); });
}

std::optional<DclTransform> dcl_transform_of(const CrdtState& state, EntityId e) {
  const LwwEntry* entry = state.find(e, kDclTransformComponentId);
  if (!entry || entry->deleted) return std::nullopt;
  return decode_dcl_transform(entry->data);
}

std::optional<DclTransform> DclScene::transform(EntityId e) const {
  return dcl_transform_of(state_, e);
}

void DclScene::destroy_keeping_children(EntityId e) {
  const std::vector<EntityId> children = store_.children(e);
  store_.destroy(e);
  for (EntityId c : children) store_.set_parent(c, e);
}

void DclScene::sync(EntityId e) {
  if (e == kDclRootEntity) return;  // the scene root is no store entity
  if (!state_.known(e)) {
    if (store_.contains(e)) destroy_keeping_children(e);
    return;
  }
  store_.create(e);  // no-op when it exists
  const std::optional<DclTransform> t = transform(e);
  if (!t) {
    remove_dcl_transform_values(store_, e);
    store_.remove(e, Component::Parent);
    return;
  }
  put_dcl_transform_values(store_, store_.slot_of(e), *t);
  if (t->parent == kDclRootEntity) {
    store_.remove(e, Component::Parent);
  } else {
    store_.set_parent(e, t->parent);  // keeps the hierarchy untouched when it is the same
  }
}

bool looks_like_crdt_stream(std::span<const uint8_t> bytes) {
  if (bytes.size() < kCrdtHeaderSize) return false;
  CrdtStreamReader reader;
  reader.append(bytes.first(std::min<size_t>(bytes.size(), 64)));
  // A valid first message, or a valid header whose body lies beyond the bytes looked at.
  return reader.next().ok();
}

namespace {

Result<Scene> load_crdt_bytes(std::span<const uint8_t> bytes, const std::string& source) {
  DclScene dcl;
  if (Status s = dcl.feed(bytes); !s) return Error{source + ": " + s.error().message};
  if (Status s = dcl.finish(); !s) return Error{source + ": " + s.error().message};

  Scene scene;
  scene.source = source;
  const CrdtState& state = dcl.state();
  const CrdtCounts& n = state.counts();
  // One line: the types that occur, what was ignored, what is left. A note when nothing was
  // ignored (messages for other components are expected: tprop reads only Transform), else a
  // warning.
  const uint64_t root = dcl.root_messages();
  const uint64_t live = state.entity_count() - (state.known(kDclRootEntity) ? 1 : 0);
  std::string summary = "crdt: " + counted(n.total(), "message", "messages");
  const char* sep = " (";
  for (uint32_t t = 1; t <= kCrdtMessageTypeCount; ++t) {
    if (n.by_type[t] == 0) continue;
    summary += sep;
    summary += crdt_message_type_name(CrdtMessageType(t));
    summary += " " + std::to_string(n.by_type[t]);
    sep = ", ";
  }
  if (n.total() > 0) summary += ")";
  summary += "; ignored: " + std::to_string(n.outdated) + " outdated, " +
             counted(n.no_op, "duplicate", "duplicates") + ", " +
             counted(n.dead_entity, "for a dead entity", "for dead entities") + ", " +
             counted(root, "for entity 0 (the scene root, no entity)",
                     "for entity 0 (the scene root, no entity)") +
             "; " +
             counted(n.other_component, "for a component other than Transform",
                     "for components other than Transform") +
             "; " + counted(live, "live entity", "live entities");
  const bool ignored_any = n.outdated + n.no_op + n.dead_entity + root > 0;
  (ignored_any ? scene.warnings : scene.notes).push_back(std::move(summary));

  size_t malformed = 0, non_unit = 0, non_finite = 0;
  EntityId first_malformed = 0, first_non_unit = 0, first_non_finite = 0;
  for (EntityId e : state.entities()) {
    if (e == kDclRootEntity) continue;  // its Transform is ignored, and counted above
    const LwwEntry* entry = state.find(e, kDclTransformComponentId);
    if (!entry || entry->deleted) continue;
    const std::optional<DclTransform> t = decode_dcl_transform(entry->data);
    if (!t) {
      if (malformed++ == 0) first_malformed = e;
      continue;
    }
    const quat q = t->rotation;
    const float values[10] = {t->position.x, t->position.y, t->position.z, q.x, q.y, q.z, q.w,
                              t->scale.x,    t->scale.y,    t->scale.z};
    const bool finite =
        std::all_of(values, values + 10, [](float v) { return std::isfinite(v); });
    if (!finite && non_finite++ == 0) first_non_finite = e;
    const float len = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    if (!(std::fabs(len - 1.0f) <= 1e-3f)) {
      if (non_unit++ == 0) first_non_unit = e;
    }
  }
  if (malformed)
    scene.warnings.push_back(counted(malformed, "Transform", "Transforms") +
                             " whose data is not 44 bytes, taken as identity at the root (first: "
                             "entity " + hex_id(first_malformed) + ")");
  // The wire carries any 32-bit pattern; the matrices of such an entity and of everything below
  // it are not finite (a dump writes null for those elements).
  if (non_finite)
    scene.warnings.push_back(counted(non_finite, "Transform holds", "Transforms hold") +
                             " a NaN or an infinity, used as given (first: entity " +
                             hex_id(first_non_finite) + ")");
  if (non_unit)
    scene.warnings.push_back(counted(non_unit, "Transform rotation is not a unit quaternion",
                                     "Transform rotations are not unit quaternions") +
                             ", used as given (first: entity " + hex_id(first_non_unit) + ")");
  scene.store = std::move(dcl).release_store();
  return scene;
}

}  // namespace

Result<Scene> load_crdt_scene_from_bytes(std::span<const uint8_t> bytes,
                                         const std::string& source) {
  try {
    return load_crdt_bytes(bytes, source);
  } catch (const std::exception& e) {  // std::bad_alloc
    return Error{source + ": " + e.what()};
  }
}

Result<Scene> load_crdt_scene(const std::string& path) {
  Result<std::string> bytes = read_file_bytes(path);  // names the path and the OS reason
  if (!bytes) return bytes.error();
  return load_crdt_scene_from_bytes(
      {reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()}, path);
}

}  // namespace tprop
