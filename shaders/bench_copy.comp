// tprop_bench's ceiling: copies CopyPush::count 16-byte elements (shaders/bench_copy.h).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require

#include "bench_copy.h"

layout(local_size_x = kCopyGroupSize) in;
layout(push_constant, std430) uniform Push { CopyPush pc; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer From { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer To { uvec4 v[]; };

void main() {
  From from = From(pc.from);
  To to = To(pc.to);
  for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += pc.stride) to.v[i] = from.v[i];
}
