// The compose rules on the GPU: an entity's local matrix (Translation * [ParentScaleInverse] *
// Rot * Scl), in the CPU reference's order of products (hierarchy/compose.cpp local_matrix), with
// everything trigonometric or inverting resolved on the host (hierarchy/gpu_pack.cpp). Included
// by the passes after scene_access.glsl.
//
// Specialized per dispatch (pass_features.h): each rule that the entities of a dispatch cannot
// need is compiled out, because llvmpipe pays for every branch whatever the lanes take.
#ifndef TPROP_LOCAL_MATRIX_GLSL
#define TPROP_LOCAL_MATRIX_GLSL

// kPassFeatures, the specialization constant, is declared in scene_access.glsl.
const bool kComposite = (kPassFeatures & kFeatureComposite) != 0u;
const bool kUser = (kPassFeatures & kFeatureUser) != 0u;
const bool kStatic = (kPassFeatures & kFeatureStatic) != 0u;
const bool kFinalTest = (kPassFeatures & kFeatureFinalTest) != 0u;
const bool kParents = (kPassFeatures & kFeatureParents) != 0u;
const bool kSkip = (kPassFeatures & kFeatureSkip) != 0u;
const bool kProjective = (kPassFeatures & kFeatureProjective) != 0u;
// Only these paths look at an entity's flags; the closed form T * R * S does not need them.
const bool kReadsFlags =
    (kPassFeatures & (kFeatureComposite | kFeatureUser | kFeatureStatic | kFeatureFinalTest)) != 0u;

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
mat4 local_matrix(uint slot, uint f) {
  // An absent Translation, Rotation or Scale is packed as its identity value ((0, 0, 0),
  // (0, 0, 0, 1), (1, 1, 1): hierarchy/gpu_pack.h), with which the closed form below gives the
  // same bits as leaving the factor out (the products with 0 and 1 are exact). So the common
  // case reads the three unconditionally and needs no flags, and no branch for llvmpipe to pay.
  vec4 q = ROTATION(slot);
  vec3 t = TRANSLATION(slot).xyz;
  vec3 s = SCALE(slot).xyz;
  if (!kComposite ||
      (f & (kFlagParentScaleInverse | kFlagCompositeRotation | kFlagCompositeScale)) == 0u) {
    // The common case T * R * S (R a pure rotation) in closed form.
    mat4 rot = rotation_matrix(q);
    return mat4(rot[0] * s.x, rot[1] * s.y, rot[2] * s.z, vec4(t, 1.0));
  }

  uint rare = RARE_INDEX(slot);
  mat4 rot = mat4(1.0);
  if ((f & kFlagCompositeRotation) != 0u) {
    rot = RARE(rare).composite_rotation;
  } else if ((f & kFlagRotation) != 0u) {
    rot = rotation_matrix(q);
  }
  mat4 m = mat4(1.0);
  m[3] = vec4((f & kFlagTranslation) != 0u ? t : vec3(0.0), 1.0);
  if ((f & kFlagParentScaleInverse) != 0u) m = m * parent_scale_inverse(slot, rare);
  m = m * rot;
  if ((f & kFlagCompositeScale) != 0u) {
    m = m * RARE(rare).composite_scale;
  } else if ((f & kFlagScale) != 0u) {
    m = m * mat4(vec4(s.x, 0, 0, 0), vec4(0, s.y, 0, 0), vec4(0, 0, s.z, 0), vec4(0, 0, 0, 1));
  }
  return m;
}

// The entity's own matrix, what stands between its parent's LocalToWorld and its own: a frozen
// Static's LocalToWorld, a user-written LocalToWorld or LocalToParent, or the composed local
// matrix (kFlagWorldFinal says whether the parent's still multiplies it).
mat4 own_matrix(uint slot, uint f) {
  if (kStatic && (f & kFlagReadFrozen) != 0u) return FROZEN(STATIC_INDEX(slot));
  if (kUser && (f & (kFlagUserWorld | kFlagUserLocal)) != 0u) {
    uint rare = RARE_INDEX(slot);
    if (rare == kNoIndex) return mat4(1.0);
    return (f & kFlagUserWorld) != 0u ? RARE(rare).user_local_to_world
                                      : RARE(rare).user_local_to_parent;
  }
  // Without kFeatureUser, an entity flagged UserLocal or UserWorld has no components at all
  // (host/propagator_variants.cpp), and the closed form gives it the identity it needs.
  return local_matrix(slot, f);
}

// a * b for affine matrices (last rows (0, 0, 0, 1)): the reference's sums in its order, less
// the terms with b's last row, whose products are exact zeros and one (only the sign of a zero
// result can differ). 36 multiply-adds instead of 64.
mat4 affine_product(mat4 a, mat4 b) {
  return mat4(a[0] * b[0].x + a[1] * b[0].y + a[2] * b[0].z,
              a[0] * b[1].x + a[1] * b[1].y + a[2] * b[1].z,
              a[0] * b[2].x + a[1] * b[2].y + a[2] * b[2].z,
              a[0] * b[3].x + a[1] * b[3].y + a[2] * b[3].z + a[3]);
}

// LocalToWorld[slot]: without kFeatureProjective every matrix is affine, so it is read as its 3
// rows (48 bytes instead of 64) and the last row is known. In the Affine3x4 output those rows are
// all there is (the host refuses a scene that is not affine with it).
mat4 load_world(uint slot) {
#ifdef TPROP_TEXEL_EARLIER
  // The same values as texels: 3 rows, or 4 columns (scene_access.glsl).
  if (kAffineOutput) {
    const int r = int(slot) * 3;
    return affine3x4_to_mat4(
        Affine3x4(texelFetch(t_world, r), texelFetch(t_world, r + 1), texelFetch(t_world, r + 2)));
  }
  const int c = int(slot) * 4;
  if (kProjective)
    return mat4(texelFetch(t_world, c), texelFetch(t_world, c + 1), texelFetch(t_world, c + 2),
                texelFetch(t_world, c + 3));
  return mat4(vec4(texelFetch(t_world, c).xyz, 0.0), vec4(texelFetch(t_world, c + 1).xyz, 0.0),
              vec4(texelFetch(t_world, c + 2).xyz, 0.0), vec4(texelFetch(t_world, c + 3).xyz, 1.0));
#endif
  if (kAffineOutput) return affine3x4_to_mat4(WORLD_AFFINE(slot));
  if (kProjective) return WORLD(slot);
#ifdef TPROP_DESCRIPTORS
  return mat4(vec4(WORLD(slot)[0].xyz, 0.0), vec4(WORLD(slot)[1].xyz, 0.0),
              vec4(WORLD(slot)[2].xyz, 0.0), vec4(WORLD(slot)[3].xyz, 1.0));
#else
  // The element's address once (its piece table read once), then its three rows.
  Mat4Element w = Mat4Element(element_address(pc.local_to_world, slot, 64u));
  return mat4(vec4(w.v[0].xyz, 0.0), vec4(w.v[1].xyz, 0.0), vec4(w.v[2].xyz, 0.0),
              vec4(w.v[3].xyz, 1.0));
#endif
}

// a * b, affine or not, as this variant allows.
mat4 product(mat4 a, mat4 b) { return kProjective ? a * b : affine_product(a, b); }

// LocalToWorld[parent] * m.
mat4 parent_times(uint parent, mat4 m) { return product(load_world(parent), m); }

#endif  // TPROP_LOCAL_MATRIX_GLSL
