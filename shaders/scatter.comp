#version 460
// Scatter: a value-only frame's changed entities, uploaded compactly as EntityDelta records,
// written to their positions in the per-position arrays. Used when the changes are too scattered
// for a few copy regions, so that only the changed entities' bytes cross the bus.
#extension GL_GOOGLE_include_directive : require
#include "scene_access.glsl"

layout(local_size_x = TPROP_COMPOSE_GROUP_SIZE) in;

void main() {
  uint i = flat_invocation(TPROP_COMPOSE_GROUP_SIZE);
  if (i >= pc.count) return;
  EntityDelta d = DELTAS[i];
  uint pos = d.position;
  FLAGS[pos] = d.flags;
  PARENT[pos] = d.parent;
  RARE_INDEX[pos] = d.rare_index;
  STATIC_INDEX[pos] = d.static_index;
  TRANSLATION[pos] = d.translation;
  ROTATION[pos] = d.rotation;
  SCALE[pos] = d.scale;
}
