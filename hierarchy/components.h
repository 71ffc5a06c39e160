// Every transform component of the Unity DOTS TransformSystem that tprop understands, as a
// presence bit, and the value types that go with them. Child and PreviousParent are derived by
// the entity store, not set by callers, so they have no bit here.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "math.h"

namespace tprop {

// A caller-chosen entity name: a JSON scene's "id", a Decentraland entity id, a glTF node index.
using EntityId = uint32_t;

// Euler orders in NOTES.md precedence order: when several RotationEuler* (or PostRotationEuler*)
// components are present, the lowest order wins.
enum class EulerOrder : uint8_t { XYZ, XZY, YXZ, YZX, ZXY, ZYX };
inline constexpr int kEulerOrderCount = 6;

enum class Component : uint8_t {
  Translation,
  Rotation,
  Scale,
  NonUniformScale,
  RotationEulerXYZ,
  RotationEulerXZY,
  RotationEulerYXZ,
  RotationEulerYZX,
  RotationEulerZXY,
  RotationEulerZYX,
  PostRotation,
  PostRotationEulerXYZ,
  PostRotationEulerXZY,
  PostRotationEulerYXZ,
  PostRotationEulerYZX,
  PostRotationEulerZXY,
  PostRotationEulerZYX,
  RotationPivot,
  RotationPivotTranslation,
  ScalePivot,
  ScalePivotTranslation,
  CompositeRotation,
  CompositeScale,
  ParentScaleInverse,
  LocalToParent,
  LocalToWorld,  // present = the caller wrote a value; every entity has a LocalToWorld result
  Parent,
  Static,
  WriteGroupOverride,
  Count
};
inline constexpr int kComponentCount = static_cast<int>(Component::Count);
static_assert(kComponentCount <= 29, "presence bits share a uint32 with three store flags");

using ComponentMask = uint32_t;
constexpr ComponentMask bit(Component c) { return ComponentMask(1) << static_cast<int>(c); }

constexpr Component rotation_euler(EulerOrder o) {
  return static_cast<Component>(static_cast<int>(Component::RotationEulerXYZ) + static_cast<int>(o));
}
constexpr Component post_rotation_euler(EulerOrder o) {
  return static_cast<Component>(static_cast<int>(Component::PostRotationEulerXYZ) +
                                static_cast<int>(o));
}

inline constexpr ComponentMask kRotationEulerMask =
    bit(Component::RotationEulerXYZ) | bit(Component::RotationEulerXZY) |
    bit(Component::RotationEulerYXZ) | bit(Component::RotationEulerYZX) |
    bit(Component::RotationEulerZXY) | bit(Component::RotationEulerZYX);
inline constexpr ComponentMask kPostRotationEulerMask = kRotationEulerMask << 7;
static_assert(kPostRotationEulerMask ==
              (bit(Component::PostRotationEulerXYZ) | bit(Component::PostRotationEulerXZY) |
               bit(Component::PostRotationEulerYXZ) | bit(Component::PostRotationEulerYZX) |
               bit(Component::PostRotationEulerZXY) | bit(Component::PostRotationEulerZYX)));

// The components whose values live outside an entity's common record (EntityStore's rare side
// record): rotations other than the quaternion, pivots, and the matrix-valued components.
inline constexpr ComponentMask kRareComponentMask =
    kRotationEulerMask | bit(Component::PostRotation) | kPostRotationEulerMask |
    bit(Component::RotationPivot) | bit(Component::RotationPivotTranslation) |
    bit(Component::ScalePivot) | bit(Component::ScalePivotTranslation) |
    bit(Component::CompositeRotation) | bit(Component::CompositeScale) |
    bit(Component::ParentScaleInverse) | bit(Component::LocalToParent) |
    bit(Component::LocalToWorld);

// The matrix-valued components, which a caller may write directly.
enum class MatrixComponent : uint8_t {
  CompositeRotation,
  CompositeScale,
  ParentScaleInverse,
  LocalToParent,
  LocalToWorld
};
inline constexpr int kMatrixComponentCount = 5;
constexpr Component component_of(MatrixComponent m) {
  return static_cast<Component>(static_cast<int>(Component::CompositeRotation) +
                                static_cast<int>(m));
}

// The four pivot float3 components.
enum class PivotComponent : uint8_t {
  RotationPivot,
  RotationPivotTranslation,
  ScalePivot,
  ScalePivotTranslation
};
inline constexpr int kPivotComponentCount = 4;
constexpr Component component_of(PivotComponent p) {
  return static_cast<Component>(static_cast<int>(Component::RotationPivot) + static_cast<int>(p));
}

// The spelling used in scene files, exactly as in the Unity spec ("RotationEulerXYZ", ...).
std::string_view component_name(Component c);
std::optional<Component> component_from_name(std::string_view name);

}  // namespace tprop
