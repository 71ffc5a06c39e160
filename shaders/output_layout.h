// The layouts of tprop's LocalToWorld output (PropagatorOptions::output_layout), one element per
// store slot, included by the compute passes, by the renderer sample's vertex shader and by C++
// (host/propagator.h, installed as <tprop/output_layout.h> for an application's own shaders):
//  - Float4x4 (the default): one mat4, column-major, 64 bytes an element;
//  - Affine3x4: the top three rows of that matrix, each a vec4, 48 bytes an element. The last
//    row is (0, 0, 0, 1) by definition and not stored: a renderer reads
//      vec3 p = vec3(dot(a.row0, v), dot(a.row1, v), dot(a.row2, v));   // v = vec4(x, y, z, 1)
//    or affine3x4_to_mat4(a) below. A quarter fewer bytes written by the passes and read by the
//    renderer; only scenes whose every matrix is affine can be written so (README, API).
#ifndef TPROP_OUTPUT_LAYOUT_H
#define TPROP_OUTPUT_LAYOUT_H

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>

#include <glm/glm.hpp>
namespace tprop::gpu {
using vec4 = glm::vec4;
using mat4 = glm::mat4;
#define TPROP_CONST inline constexpr uint32_t
#else
#define TPROP_CONST const uint
#endif

TPROP_CONST kFloat4x4Bytes = 64u;
TPROP_CONST kAffine3x4Bytes = 48u;

// One LocalToWorld in the Affine3x4 layout: row r holds (m[0][r], m[1][r], m[2][r], m[3][r]) of
// the column-major matrix m, so the translation is (row0.w, row1.w, row2.w).
struct Affine3x4 {
  vec4 row0;
  vec4 row1;
  vec4 row2;
};

#ifdef __cplusplus
static_assert(sizeof(Affine3x4) == kAffine3x4Bytes);
static_assert(offsetof(Affine3x4, row0) == 0);
static_assert(offsetof(Affine3x4, row1) == 16);
static_assert(offsetof(Affine3x4, row2) == 32);
static_assert(sizeof(mat4) == kFloat4x4Bytes);

// The two layouts' conversions, written once for each language (the shaders' are below).
inline Affine3x4 to_affine3x4(const mat4& m) {
  return {glm::vec4(m[0][0], m[1][0], m[2][0], m[3][0]),
          glm::vec4(m[0][1], m[1][1], m[2][1], m[3][1]),
          glm::vec4(m[0][2], m[1][2], m[2][2], m[3][2])};
}
inline mat4 affine3x4_to_mat4(const Affine3x4& a) {
  return glm::mat4(glm::vec4(a.row0.x, a.row1.x, a.row2.x, 0.0f),
                   glm::vec4(a.row0.y, a.row1.y, a.row2.y, 0.0f),
                   glm::vec4(a.row0.z, a.row1.z, a.row2.z, 0.0f),
                   glm::vec4(a.row0.w, a.row1.w, a.row2.w, 1.0f));
}
}  // namespace tprop::gpu
#else
Affine3x4 to_affine3x4(mat4 m) {
  return Affine3x4(vec4(m[0][0], m[1][0], m[2][0], m[3][0]),
                   vec4(m[0][1], m[1][1], m[2][1], m[3][1]),
                   vec4(m[0][2], m[1][2], m[2][2], m[3][2]));
}
mat4 affine3x4_to_mat4(Affine3x4 a) {
  return mat4(vec4(a.row0.x, a.row1.x, a.row2.x, 0.0), vec4(a.row0.y, a.row1.y, a.row2.y, 0.0),
              vec4(a.row0.z, a.row1.z, a.row2.z, 0.0), vec4(a.row0.w, a.row1.w, a.row2.w, 1.0));
}
#endif

#undef TPROP_CONST
#endif  // TPROP_OUTPUT_LAYOUT_H
