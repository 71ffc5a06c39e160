// The compose rules on the GPU: an entity's local matrix (Translation * [ParentScaleInverse] *
// Rot * Scl), in the CPU reference's order of products (hierarchy/compose.cpp local_matrix), with
// everything trigonometric or inverting resolved on the host (hierarchy/gpu_pack.cpp). Included
// by the passes after scene_access.glsl.
#ifndef TPROP_LOCAL_MATRIX_GLSL
#define TPROP_LOCAL_MATRIX_GLSL

const float kSmallestNormalFloat = 1.17549435e-38;  // FLT_MIN, 2^-126

mat4 parent_scale_inverse(uint slot, uint rare) {
  uint parent = PARENT(slot);
  uint parent_flags = FLAGS(parent);
  // NOTES.md: the parent writes the inverse of its CompositeScale, else 1/Scale, else
  // 1/NonUniformScale (one vec4: the host resolved which), else the child keeps its own value.
  if ((parent_flags & kFlagCompositeScale) != 0u) {
    uint parent_rare = RARE_INDEX(parent);
    return RARE(parent_rare).inverse_composite_scale;
  }
  if ((parent_flags & kFlagScale) != 0u) {
    // hierarchy/compose.cpp inverse_scale_factor: a factor without a finite reciprocal (0, or
    // below the smallest normal float) inverts to 0, so no infinity reaches a product.
    vec3 scale = SCALE(parent).xyz;
    vec3 s = mix(1.0 / scale, vec3(0.0), lessThan(abs(scale), vec3(kSmallestNormalFloat)));
    return mat4(vec4(s.x, 0, 0, 0), vec4(0, s.y, 0, 0), vec4(0, 0, s.z, 0), vec4(0, 0, 0, 1));
  }
  if (rare != kNoIndex) return RARE(rare).user_parent_scale_inverse;
  return mat4(1.0);
}

// The unit-quaternion formula as in hierarchy/math.h rotation_matrix (no normalization).
mat4 rotation_matrix(vec4 q) {
  float x = q.x, y = q.y, z = q.z, w = q.w;
  return mat4(vec4(1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y), 0),
              vec4(2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x), 0),
              vec4(2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y), 0),
              vec4(0, 0, 0, 1));
}

// Translation * [ParentScaleInverse] * Rot * Scl, in the reference's order of products.
mat4 local_matrix(uint slot, uint f, uint rare) {
  mat4 rot = mat4(1.0);
  if ((f & kFlagCompositeRotation) != 0u) {
    rot = RARE(rare).composite_rotation;
  } else if ((f & kFlagRotation) != 0u) {
    rot = rotation_matrix(ROTATION(slot));
  }
  vec3 t = (f & kFlagTranslation) != 0u ? TRANSLATION(slot).xyz : vec3(0.0);

  if ((f & (kFlagParentScaleInverse | kFlagCompositeRotation | kFlagCompositeScale)) == 0u) {
    // The common case T * R * S (R a pure rotation) in closed form: the products with 0 and 1
    // that the reference does are exact, so this gives the same bits for less work.
    vec3 s = (f & kFlagScale) != 0u ? SCALE(slot).xyz : vec3(1.0);
    return mat4(rot[0] * s.x, rot[1] * s.y, rot[2] * s.z, vec4(t, 1.0));
  }

  mat4 m = mat4(1.0);
  m[3] = vec4(t, 1.0);
  if ((f & kFlagParentScaleInverse) != 0u) m = m * parent_scale_inverse(slot, rare);
  m = m * rot;
  if ((f & kFlagCompositeScale) != 0u) {
    m = m * RARE(rare).composite_scale;
  } else if ((f & kFlagScale) != 0u) {
    vec3 s = SCALE(slot).xyz;
    m = m * mat4(vec4(s.x, 0, 0, 0), vec4(0, s.y, 0, 0), vec4(0, 0, s.z, 0), vec4(0, 0, 0, 1));
  }
  return m;
}

// The entity's own matrix, what stands between its parent's LocalToWorld and its own: a frozen
// Static's LocalToWorld, a user-written LocalToWorld or LocalToParent, or the composed local
// matrix (kFlagWorldFinal says whether the parent's still multiplies it).
mat4 own_matrix(uint slot, uint f) {
  uint rare = RARE_INDEX(slot);
  if ((f & kFlagReadFrozen) != 0u) return FROZEN(STATIC_INDEX(slot));
  if ((f & kFlagUserWorld) != 0u) {
    return rare != kNoIndex ? RARE(rare).user_local_to_world : mat4(1.0);
  }
  if ((f & kFlagUserLocal) != 0u) {
    return rare != kNoIndex ? RARE(rare).user_local_to_parent : mat4(1.0);
  }
  return local_matrix(slot, f, rare);
}

#endif  // TPROP_LOCAL_MATRIX_GLSL
