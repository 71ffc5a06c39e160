// tprop math conventions (NOTES.md): column vectors, column-major float4x4 (glm and GLSL layout),
// `A * B` applies B first, quaternions stored (x, y, z, w).
#pragma once

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

namespace tprop {

using float3 = glm::vec3;
using float4 = glm::vec4;
using float4x4 = glm::mat4;
// glm::quat stores x, y, z, w in memory but its constructor takes w first: use make_quat.
using quat = glm::quat;

inline quat make_quat(float x, float y, float z, float w) { return quat(w, x, y, z); }

// T(v), S(s) = diag(s, s, s, 1), S(v) = diag(v, 1) and R(q), built plainly so the reference
// reads like NOTES.md.
inline float4x4 translation_matrix(float3 v) {
  float4x4 m(1.0f);
  m[3] = float4(v, 1.0f);
  return m;
}

inline float4x4 scale_matrix(float3 s) {
  float4x4 m(1.0f);
  m[0][0] = s.x;
  m[1][1] = s.y;
  m[2][2] = s.z;
  return m;
}

// The standard unit-quaternion formula applied to q as given: no normalization (NOTES.md).
inline float4x4 rotation_matrix(quat q) {
  const float x = q.x, y = q.y, z = q.z, w = q.w;
  float4x4 m(1.0f);
  m[0] = float4(1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y), 0);
  m[1] = float4(2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x), 0);
  m[2] = float4(2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y), 0);
  return m;
}

}  // namespace tprop
