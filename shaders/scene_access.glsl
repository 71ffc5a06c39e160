// GLSL side of scene_layout.h: the buffer_reference views onto the push-constant addresses and
// the small helpers every pass shares. Included by the .comp files only.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "scene_layout.h"

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer UintArray {
  uint v[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Vec4Array {
  vec4 v[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer RareArray {
  RareRecord v[];
};
// The narrow propagate pass reads what other invocations of its own workgroup wrote a level
// earlier, hence coherent there; elsewhere dispatch boundaries order everything, and coherent
// would only cost (measured: llvmpipe turns it into uncached accesses).
#ifdef TPROP_NARROW
#define TPROP_MAT4_COHERENCE coherent
#else
#define TPROP_MAT4_COHERENCE
#endif
layout(buffer_reference, std430, buffer_reference_align = 16) TPROP_MAT4_COHERENCE buffer Mat4Array {
  mat4 v[];
};

layout(push_constant, std430) uniform Push { ScenePush pc; };

// The flat invocation index of a 2D grid of workgroups (the x dimension is capped at
// kMaxGroupsPerDimension groups, more rows go to y).
uint flat_invocation(uint group_size) {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  return group * group_size + gl_LocalInvocationID.x;
}
