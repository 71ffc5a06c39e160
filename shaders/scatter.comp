#version 460
// Scatter: a value-only frame's changed entities, uploaded compactly as EntityDelta records,
// written to their positions in the per-position arrays. Used when the changes are too scattered
// for a few copy regions, so that only the changed entities' bytes cross the bus.
#extension GL_GOOGLE_include_directive : require
#include "scene_access.glsl"

layout(local_size_x = TPROP_COMPOSE_GROUP_SIZE) in;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer DeltaArray {
  EntityDelta v[];
};
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer UintOut {
  uint v[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer Vec4Out {
  vec4 v[];
};

void main() {
  uint i = flat_invocation(TPROP_COMPOSE_GROUP_SIZE);
  if (i >= pc.count) return;
  EntityDelta d = DeltaArray(pc.deltas).v[i];
  uint pos = d.position;
  UintOut(pc.flags).v[pos] = d.flags;
  UintOut(pc.parent).v[pos] = d.parent;
  UintOut(pc.rare_index).v[pos] = d.rare_index;
  UintOut(pc.static_index).v[pos] = d.static_index;
  Vec4Out(pc.translation).v[pos] = d.translation;
  Vec4Out(pc.rotation).v[pos] = d.rotation;
  Vec4Out(pc.scale).v[pos] = d.scale;
}
