#version 460
// One cube per instance, placed by the instance's LocalToWorld read straight from tprop's output
// buffer: no vertex buffers, no readback. One draw per piece of the output, firstInstance its
// first slot, so gl_InstanceIndex is the store slot.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "render_layout.h"
#include "output_layout.h"

// The output in either layout (output_layout.h), as PropagatorOptions::output_layout chose.
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Matrices {
  mat4 m[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer AffineRows {
  Affine3x4 a[];
};
layout(push_constant, std430) uniform Push { RenderPush pc; };

layout(location = 0) out vec3 out_normal;
layout(location = 1) flat out uint out_instance;

const vec3 kCorners[8] = vec3[](vec3(-1, -1, -1), vec3(1, -1, -1), vec3(1, 1, -1), vec3(-1, 1, -1),
                                vec3(-1, -1, 1), vec3(1, -1, 1), vec3(1, 1, 1), vec3(-1, 1, 1));
// Two triangles per face, faces in the order of kNormals.
const uint kIndices[36] = uint[](0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                                 2, 3, 7, 2, 7, 6, 1, 2, 6, 1, 6, 5, 3, 0, 4, 3, 4, 7);
const vec3 kNormals[6] = vec3[](vec3(0, 0, -1), vec3(0, 0, 1), vec3(0, -1, 0), vec3(0, 1, 0),
                                vec3(1, 0, 0), vec3(-1, 0, 0));

void main() {
  uint i = gl_InstanceIndex - pc.first_slot;
  mat4 model = pc.affine != 0u ? affine3x4_to_mat4(AffineRows(pc.local_to_world).a[i])
                               : Matrices(pc.local_to_world).m[i];
  vec3 corner = kCorners[kIndices[gl_VertexIndex]] * pc.half_size;
  gl_Position = pc.view_proj * (model * vec4(corner, 1.0));
  // Shading only: mat3(model) is close enough to the normal matrix for a gizmo.
  out_normal = mat3(model) * kNormals[gl_VertexIndex / 6];
  out_instance = uint(gl_InstanceIndex);
}
