// The Unity DOTS transform rules (NOTES.md "Unity DOTS rules"), one entity at a time: Euler
// angles to quaternions, the Rotation / PostRotation precedence, CompositeRotation,
// CompositeScale, ParentScaleInverse and the local matrix. The CPU reference and the GPU upload
// both call these, so that the rules live in exactly one place.
//
// Each function reads the store at a slot and returns a value; nothing here writes the store:
// "written" components (Rotation from an Euler, CompositeRotation from its sources, ...) are
// derived on the fly, so the user-written values stay as the caller set them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "components.h"
#include "entity_store.h"
#include "math.h"

namespace tprop {

// The quaternion of RotationEulerABC / PostRotationEulerABC. `radians` holds the angle about the
// x, y and z axis respectively (Unity's convention, whatever the order); the order says which
// axis turns first: for ABC, q = qC(c) * qB(b) * qA(a), so XYZ(x, y, z) = qz * qy * qx.
quat euler_to_quat(EulerOrder order, float3 radians);

// Rotation or any RotationEuler* (an Euler component implies the Rotation it writes).
bool has_rotation(ComponentMask m);
// The first RotationEuler* present in precedence order (XYZ, XZY, YXZ, YZX, ZXY, ZYX), else the
// Rotation quaternion, else identity.
quat effective_rotation(const EntityStore& store, uint32_t slot);

// PostRotation or any PostRotationEuler*.
bool has_post_rotation(ComponentMask m);
// The same precedence for PostRotationEuler* into PostRotation; identity when none.
quat effective_post_rotation(const EntityStore& store, uint32_t slot);

// CompositeRotation = T(rpt) * T(rp) * R * PR * T(-rp) when any of RotationPivotTranslation,
// RotationPivot, Rotation (or Euler), PostRotation (or Euler) is present (absent factors are
// identity), else the user-written CompositeRotation. Call only when the entity has the
// CompositeRotation component.
float4x4 composite_rotation(const EntityStore& store, uint32_t slot);
// CompositeScale = T(spt) * T(sp) * S * T(-sp), S = Scale else NonUniformScale else identity,
// when any of ScalePivotTranslation, ScalePivot, Scale, NonUniformScale is present, else the
// user-written CompositeScale. Call only when the entity has the CompositeScale component.
float4x4 composite_scale(const EntityStore& store, uint32_t slot);

// What a parent writes into its children's ParentScaleInverse: the inverse of its CompositeScale
// if it has one, else 1/Scale, else 1/NonUniformScale; nullopt when it has none of them (the
// child then keeps its user-written value).
// A scale factor with no finite reciprocal (0, or a magnitude below the smallest normal float)
// inverts to 0, not to infinity: scaling a parent to 0 hides it and its children, whose
// matrices stay finite (an infinity times the parent's 0 would be NaN), and the GPU, which gets
// no infinity to multiply, gives the same result. For a CompositeScale that glm::inverse cannot
// invert, the same rule is applied to its factors: T(sp) * S^+ * T(-sp) * T(-spt), S^+ the
// factor-wise inverse above; a user-written singular CompositeScale writes diag(0, 0, 0, 1).
std::optional<float4x4> parent_scale_inverse_from(const EntityStore& store, uint32_t parent_slot);

// One scale factor's part of the inverse above: 1/s, or 0 where that is not finite.
float inverse_scale_factor(float s);

// The inverse of the entity's CompositeScale as parent_scale_inverse_from() writes it. Call only
// when the entity has the CompositeScale component.
float4x4 inverse_composite_scale(const EntityStore& store, uint32_t slot);

// Whether what the entity writes into its children's ParentScaleInverse took the zero-inverse
// rule above (a scale factor without a finite reciprocal, or a singular CompositeScale).
bool writes_degenerate_scale_inverse(const EntityStore& store, uint32_t slot);

// One warning line when some attached entity with ParentScaleInverse sits under a parent that
// writes a degenerate inverse (counted, the first named); nullopt when none does.
std::optional<std::string> degenerate_scale_inverse_warning(const EntityStore& store);

// Whether the entity has a transform source component: Translation, Rotation (or Euler), Scale,
// NonUniformScale, CompositeRotation, CompositeScale, and, only when attached, ParentScaleInverse.
bool has_transform_source(ComponentMask m, bool attached);

// The entity's local matrix: Translation * [ParentScaleInverse] * Rot * Scl (its LocalToWorld
// when it is a root, its LocalToParent when attached), or, when it has no transform source, the
// user-written LocalToWorld (root) / LocalToParent (attached), identity when absent.
// parent_slot is EntityStore::kNoSlot when the entity is not attached (no Parent, an unknown
// parent, or a member of a cycle): it is then evaluated exactly as an entity without Parent.
float4x4 local_matrix(const EntityStore& store, uint32_t slot, uint32_t parent_slot);

}  // namespace tprop
