#include "gpu_pack.h"

#include "compose.h"

namespace tprop {

namespace {

float4x4 user_matrix(const EntityStore& store, uint32_t slot, MatrixComponent m) {
  if (!store.has_at(slot, component_of(m))) return float4x4(1.0f);
  return store.rare_at(slot)->matrix[static_cast<int>(m)];
}

}  // namespace

bool needs_rare_record(ComponentMask m) {
  return (m & (bit(Component::CompositeRotation) | bit(Component::CompositeScale) |
               bit(Component::ParentScaleInverse) | bit(Component::LocalToParent) |
               bit(Component::LocalToWorld))) != 0;
}

PackedEntity pack_entity(const EntityStore& store, uint32_t slot, bool attached,
                         StaticMode static_mode) {
  const ComponentMask m = store.mask_at(slot);
  PackedEntity out;
  static_cast<PackedValues&>(out) = pack_values(store, slot, m);

  // Presence, also read by the entity's children (their ParentScaleInverse).
  uint32_t f = 0;
  if (m & bit(Component::Translation)) f |= gpu::kFlagTranslation;
  if (has_rotation(m)) f |= gpu::kFlagRotation;
  if (m & (bit(Component::Scale) | bit(Component::NonUniformScale))) f |= gpu::kFlagScale;
  if (m & bit(Component::CompositeRotation)) f |= gpu::kFlagCompositeRotation;
  if (m & bit(Component::CompositeScale)) f |= gpu::kFlagCompositeScale;
  if (attached && (m & bit(Component::ParentScaleInverse))) f |= gpu::kFlagParentScaleInverse;

  // What compose writes, in the order of CpuReference::evaluate.
  if (static_mode == StaticMode::Frozen) {
    f |= gpu::kFlagReadFrozen | gpu::kFlagWorldFinal;
  } else if (m & bit(Component::WriteGroupOverride)) {
    f |= gpu::kFlagUserWorld | gpu::kFlagWorldFinal;
  } else if (has_transform_source(m, attached)) {
    f |= gpu::kFlagComputeLocal;
    if (!attached) f |= gpu::kFlagWorldFinal;
  } else if (attached) {
    f |= gpu::kFlagUserLocal;
  } else {
    f |= gpu::kFlagUserWorld | gpu::kFlagWorldFinal;
  }
  if (static_mode == StaticMode::Store) f |= gpu::kFlagStoreFrozen;

  out.flags = f;
  out.needs_rare = needs_rare_record(m);
  return out;
}

gpu::RareRecord pack_rare(const EntityStore& store, uint32_t slot) {
  const ComponentMask m = store.mask_at(slot);
  gpu::RareRecord r;
  r.composite_rotation = (m & bit(Component::CompositeRotation)) ? composite_rotation(store, slot)
                                                                 : float4x4(1.0f);
  if (m & bit(Component::CompositeScale)) {
    r.composite_scale = composite_scale(store, slot);
    // Exactly what parent_scale_inverse_from() computes for this entity's children.
    r.inverse_composite_scale = inverse_composite_scale(store, slot);
  } else {
    r.composite_scale = float4x4(1.0f);
    r.inverse_composite_scale = float4x4(1.0f);
  }
  r.user_parent_scale_inverse = user_matrix(store, slot, MatrixComponent::ParentScaleInverse);
  r.user_local_to_parent = user_matrix(store, slot, MatrixComponent::LocalToParent);
  r.user_local_to_world = user_matrix(store, slot, MatrixComponent::LocalToWorld);
  return r;
}

}  // namespace tprop
