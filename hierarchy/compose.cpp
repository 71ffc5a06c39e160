#include "compose.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <string>

namespace tprop {

namespace {

// The axes each order turns about, first to last.
constexpr int kEulerAxes[kEulerOrderCount][3] = {
    {0, 1, 2},  // XYZ
    {0, 2, 1},  // XZY
    {1, 0, 2},  // YXZ
    {1, 2, 0},  // YZX
    {2, 0, 1},  // ZXY
    {2, 1, 0},  // ZYX
};

// The rotation by `radians` about one coordinate axis. The half-angle sine and cosine are taken
// in double so the quaternion is correctly rounded to float (the GPU receives it from here).
quat axis_quat(int axis, float radians) {
  const double half = 0.5 * static_cast<double>(radians);
  const float s = static_cast<float>(std::sin(half));
  const float c = static_cast<float>(std::cos(half));
  float3 v(0.0f);
  v[axis] = s;
  return make_quat(v.x, v.y, v.z, c);
}

// The first Euler component present in precedence order, as an index into the Euler arrays;
// -1 when none. `first_bit` is the bit of the XYZ member of the family.
int first_euler(ComponentMask m, Component first_bit) {
  for (int o = 0; o < kEulerOrderCount; ++o)
    if (m & bit(static_cast<Component>(static_cast<int>(first_bit) + o))) return o;
  return -1;
}

const float4x4& user_matrix(const EntityStore& store, uint32_t slot, MatrixComponent m) {
  static const float4x4 kIdentity(1.0f);
  if (!store.has_at(slot, component_of(m))) return kIdentity;
  const RareComponents* rare = store.rare_at(slot);
  assert(rare != nullptr && "a matrix component lives in the rare record");
  return rare->matrix[static_cast<int>(m)];
}

float3 pivot(const RareComponents& rare, PivotComponent p) {
  return rare.pivot[static_cast<int>(p)];
}

bool all_finite(const float4x4& m) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r)
      if (!std::isfinite(m[c][r])) return false;
  return true;
}

// Whether inverse_scale_factor() takes its zero rule for some factor of s.
bool has_degenerate_factor(float3 s) {
  const float smallest = std::numeric_limits<float>::min();
  return std::fabs(s.x) < smallest || std::fabs(s.y) < smallest || std::fabs(s.z) < smallest;
}

// The S of a CompositeScale built from its components (Scale wins over NonUniformScale, else 1);
// nullopt when it is the user-written matrix.
std::optional<float3> composite_scale_factor(ComponentMask m, const EntityStore& store,
                                             uint32_t slot) {
  if (m & bit(Component::Scale)) return float3(store.scale_at(slot));
  if (m & bit(Component::NonUniformScale)) return store.non_uniform_scale_at(slot);
  if (m & (bit(Component::ScalePivotTranslation) | bit(Component::ScalePivot))) return float3(1.0f);
  return std::nullopt;
}

}  // namespace

quat euler_to_quat(EulerOrder order, float3 radians) {
  const int* axes = kEulerAxes[static_cast<int>(order)];
  const quat qa = axis_quat(axes[0], radians[axes[0]]);
  const quat qb = axis_quat(axes[1], radians[axes[1]]);
  const quat qc = axis_quat(axes[2], radians[axes[2]]);
  // Hamilton product: the right-hand factor turns first.
  return qc * qb * qa;
}

bool has_rotation(ComponentMask m) {
  return (m & (bit(Component::Rotation) | kRotationEulerMask)) != 0;
}

quat effective_rotation(const EntityStore& store, uint32_t slot) {
  const ComponentMask m = store.mask_at(slot);
  const int o = first_euler(m, Component::RotationEulerXYZ);
  if (o >= 0)
    return euler_to_quat(static_cast<EulerOrder>(o), store.rare_at(slot)->rotation_euler[o]);
  if (m & bit(Component::Rotation)) return store.rotation_at(slot);
  return quat(1.0f, 0.0f, 0.0f, 0.0f);
}

bool has_post_rotation(ComponentMask m) {
  return (m & (bit(Component::PostRotation) | kPostRotationEulerMask)) != 0;
}

quat effective_post_rotation(const EntityStore& store, uint32_t slot) {
  const ComponentMask m = store.mask_at(slot);
  const int o = first_euler(m, Component::PostRotationEulerXYZ);
  if (o >= 0)
    return euler_to_quat(static_cast<EulerOrder>(o), store.rare_at(slot)->post_rotation_euler[o]);
  if (m & bit(Component::PostRotation)) return store.rare_at(slot)->post_rotation;
  return quat(1.0f, 0.0f, 0.0f, 0.0f);
}

float4x4 composite_rotation(const EntityStore& store, uint32_t slot) {
  const ComponentMask m = store.mask_at(slot);
  assert(m & bit(Component::CompositeRotation));
  const bool has_rpt = m & bit(Component::RotationPivotTranslation);
  const bool has_rp = m & bit(Component::RotationPivot);
  const bool has_r = has_rotation(m);
  const bool has_pr = has_post_rotation(m);
  if (!(has_rpt || has_rp || has_r || has_pr))
    return user_matrix(store, slot, MatrixComponent::CompositeRotation);

  float4x4 out(1.0f);
  const RareComponents* rare = store.rare_at(slot);  // non-null: CompositeRotation is rare
  if (has_rpt)
    out = out * translation_matrix(pivot(*rare, PivotComponent::RotationPivotTranslation));
  if (has_rp) out = out * translation_matrix(pivot(*rare, PivotComponent::RotationPivot));
  if (has_r) out = out * rotation_matrix(effective_rotation(store, slot));
  if (has_pr) out = out * rotation_matrix(effective_post_rotation(store, slot));
  if (has_rp) out = out * translation_matrix(-pivot(*rare, PivotComponent::RotationPivot));
  return out;
}

float4x4 composite_scale(const EntityStore& store, uint32_t slot) {
  const ComponentMask m = store.mask_at(slot);
  assert(m & bit(Component::CompositeScale));
  const bool has_spt = m & bit(Component::ScalePivotTranslation);
  const bool has_sp = m & bit(Component::ScalePivot);
  const std::optional<float3> factor = composite_scale_factor(m, store, slot);
  if (!factor) return user_matrix(store, slot, MatrixComponent::CompositeScale);

  float4x4 out(1.0f);
  const RareComponents* rare = store.rare_at(slot);  // non-null: CompositeScale is rare
  if (has_spt) out = out * translation_matrix(pivot(*rare, PivotComponent::ScalePivotTranslation));
  if (has_sp) out = out * translation_matrix(pivot(*rare, PivotComponent::ScalePivot));
  if (m & (bit(Component::Scale) | bit(Component::NonUniformScale)))
    out = out * scale_matrix(*factor);
  if (has_sp) out = out * translation_matrix(-pivot(*rare, PivotComponent::ScalePivot));
  return out;
}

float inverse_scale_factor(float s) {
  // Below the smallest normal float 1/s overflows (and a GPU may flush s to 0 anyway).
  return std::fabs(s) < std::numeric_limits<float>::min() ? 0.0f : 1.0f / s;
}

float4x4 inverse_composite_scale(const EntityStore& store, uint32_t slot) {
  const float4x4 inverse = glm::inverse(composite_scale(store, slot));
  if (all_finite(inverse)) return inverse;
  // Singular: invert factor by factor, each scale factor by inverse_scale_factor().
  const ComponentMask m = store.mask_at(slot);
  const std::optional<float3> factor = composite_scale_factor(m, store, slot);
  if (!factor) return scale_matrix(float3(0.0f));  // user-written: no factors to invert
  float4x4 out(1.0f);
  const RareComponents* rare = store.rare_at(slot);  // non-null: CompositeScale is rare
  if (m & bit(Component::ScalePivot))
    out = out * translation_matrix(pivot(*rare, PivotComponent::ScalePivot));
  out = out * scale_matrix(float3(inverse_scale_factor(factor->x), inverse_scale_factor(factor->y),
                                  inverse_scale_factor(factor->z)));
  if (m & bit(Component::ScalePivot))
    out = out * translation_matrix(-pivot(*rare, PivotComponent::ScalePivot));
  if (m & bit(Component::ScalePivotTranslation))
    out = out * translation_matrix(-pivot(*rare, PivotComponent::ScalePivotTranslation));
  return out;
}

std::optional<float4x4> parent_scale_inverse_from(const EntityStore& store, uint32_t parent_slot) {
  const ComponentMask m = store.mask_at(parent_slot);
  if (m & bit(Component::CompositeScale)) return inverse_composite_scale(store, parent_slot);
  if (m & bit(Component::Scale))
    return scale_matrix(float3(inverse_scale_factor(store.scale_at(parent_slot))));
  if (m & bit(Component::NonUniformScale)) {
    const float3 s = store.non_uniform_scale_at(parent_slot);
    return scale_matrix(
        float3(inverse_scale_factor(s.x), inverse_scale_factor(s.y), inverse_scale_factor(s.z)));
  }
  return std::nullopt;
}

bool writes_degenerate_scale_inverse(const EntityStore& store, uint32_t slot) {
  const ComponentMask m = store.mask_at(slot);
  if (m & bit(Component::CompositeScale))
    return !all_finite(glm::inverse(composite_scale(store, slot)));
  if (m & bit(Component::Scale)) return has_degenerate_factor(float3(store.scale_at(slot)));
  if (m & bit(Component::NonUniformScale))
    return has_degenerate_factor(store.non_uniform_scale_at(slot));
  return false;
}

std::optional<std::string> degenerate_scale_inverse_warning(const EntityStore& store) {
  size_t count = 0;
  EntityId first_child = 0, first_parent = 0;
  for (uint32_t slot = 0; slot < store.slot_capacity(); ++slot) {
    if (!store.alive_at(slot) || !store.has_at(slot, Component::ParentScaleInverse) ||
        !store.has_at(slot, Component::Parent))
      continue;
    const uint32_t parent_slot = store.slot_of(store.parent_at(slot));
    if (parent_slot == EntityStore::kNoSlot || !writes_degenerate_scale_inverse(store, parent_slot))
      continue;
    if (count++ == 0) {
      first_child = store.id_at(slot);
      first_parent = store.id_at(parent_slot);
    }
  }
  if (count == 0) return std::nullopt;
  return std::to_string(count) + (count == 1 ? " entity has" : " entities have") +
         " ParentScaleInverse under a parent whose scale has no inverse (first: entity " +
         std::to_string(first_child) + " under entity " + std::to_string(first_parent) +
         "): a zero scale factor inverts to 0, so the child collapses with its parent";
}

bool has_transform_source(ComponentMask m, bool attached) {
  constexpr ComponentMask kSources =
      bit(Component::Translation) | bit(Component::Rotation) | kRotationEulerMask |
      bit(Component::Scale) | bit(Component::NonUniformScale) | bit(Component::CompositeRotation) |
      bit(Component::CompositeScale);
  if (m & kSources) return true;
  return attached && (m & bit(Component::ParentScaleInverse));
}

float4x4 local_matrix(const EntityStore& store, uint32_t slot, uint32_t parent_slot) {
  const ComponentMask m = store.mask_at(slot);
  const bool attached = parent_slot != EntityStore::kNoSlot;
  if (!has_transform_source(m, attached))
    return user_matrix(store, slot,
                       attached ? MatrixComponent::LocalToParent : MatrixComponent::LocalToWorld);

  float4x4 out(1.0f);
  if (m & bit(Component::Translation)) out = translation_matrix(store.translation_at(slot));
  if (attached && (m & bit(Component::ParentScaleInverse))) {
    const std::optional<float4x4> written = parent_scale_inverse_from(store, parent_slot);
    out =
        out * (written ? *written : user_matrix(store, slot, MatrixComponent::ParentScaleInverse));
  }
  if (m & bit(Component::CompositeRotation)) {
    out = out * composite_rotation(store, slot);
  } else if (has_rotation(m)) {
    out = out * rotation_matrix(effective_rotation(store, slot));
  }
  if (m & bit(Component::CompositeScale)) {
    out = out * composite_scale(store, slot);
  } else if (m & bit(Component::Scale)) {
    out = out * scale_matrix(float3(store.scale_at(slot)));
  } else if (m & bit(Component::NonUniformScale)) {
    out = out * scale_matrix(store.non_uniform_scale_at(slot));
  }
  return out;
}

}  // namespace tprop
