// Packing one entity into the GPU layout of shaders/scene_layout.h: the host-side half of the
// transform rules that the shaders do not do (Euler angles to quaternions, Scale versus
// NonUniformScale, CompositeRotation / CompositeScale with their pivots and the inverse a parent
// writes into its children's ParentScaleInverse), and the flags that tell the level pass
// (shaders/propagate.comp, shaders/local_matrix.glsl) which rule applies. Everything here calls compose.h, so the GPU follows the
// very rules the CPU reference follows. No Vulkan.
#pragma once

#include <cstdint>

#include "scene_layout.h"  // shaders/: the layout the GPU reads, shared with GLSL
#include "components.h"
#include "compose.h"
#include "entity_store.h"
#include "math.h"

namespace tprop {

// How a Static entity is treated this frame (hierarchy/reference.h): computed and saved in its
// first frame, read back from the frozen table after that.
enum class StaticMode : uint8_t { NotStatic, Store, Frozen };

// An entity's translation, rotation and scale as the GPU reads them. An absent one keeps its
// identity value here: the GPU's closed form T * R * S reads all three whatever the flags
// (shaders/local_matrix.glsl).
struct PackedValues {
  float4 translation{0.0f};
  float4 rotation{0.0f, 0.0f, 0.0f, 1.0f};  // (x, y, z, w)
  float4 scale{1.0f, 1.0f, 1.0f, 0.0f};
};

struct PackedEntity : PackedValues {
  uint32_t flags = 0;  // gpu::kFlag*
  bool needs_rare = false;  // pack_rare() must be uploaded for it
};

// `attached`: the depth order attached the entity to its parent (LevelOrder::parent_of, or
// DepthOrder::attached: a live parent and no cycle).
PackedEntity pack_entity(const EntityStore& store, uint32_t slot, bool attached,
                         StaticMode static_mode);

// Whether a change listed in StoreChanges::values may upload the values alone: not where
// something else packed derives from them (a rare record's composite matrices) or where the
// flags follow a bake (Static).
constexpr bool values_alone_suffice(ComponentMask mask) {
  return !(mask & (bit(Component::Static) | kRareComponentMask));
}

// The values of a snapshot (StoreChanges::value_records, EntityStore::values_at): translation,
// rotation and scale as the presence bits say, Scale winning over NonUniformScale. Euler angles,
// rare components, are not in it: pack_values() below resolves them.
inline PackedValues pack_values(const ValueSnapshot& v) {
  const ComponentMask m = v.components();
  PackedValues out;
  if (m & bit(Component::Translation)) out.translation = float4(v.translation, 0.0f);
  if (m & bit(Component::Rotation))
    out.rotation = float4(v.rotation.x, v.rotation.y, v.rotation.z, v.rotation.w);
  if (m & bit(Component::Scale)) {
    out.scale = float4(float3(v.scale), 0.0f);
  } else if (m & bit(Component::NonUniformScale)) {
    out.scale = float4(v.non_uniform_scale, 0.0f);
  }
  return out;
}

// The values part of pack_entity (translation, rotation, scale; what the presence flags govern):
// all that a change listed in StoreChanges::values uploads. Inline, and returned by value:
// thousands a frame, and the values stay in registers on their way to the staging memory.
inline PackedValues pack_values(const EntityStore& store, uint32_t slot, ComponentMask m) {
  PackedValues out = pack_values(store.values_at(slot));
  if (m & kRotationEulerMask) {
    const quat q = effective_rotation(store, slot);  // Euler resolved here, not in GLSL
    out.rotation = float4(q.x, q.y, q.z, q.w);
  }
  return out;
}

// The components that need a rare record on the GPU (the matrix-valued ones).
bool needs_rare_record(ComponentMask mask);

// The matrices of the rare record, resolved on the host; identity where absent.
gpu::RareRecord pack_rare(const EntityStore& store, uint32_t slot);

}  // namespace tprop
