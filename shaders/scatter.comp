#version 460
// Scatter: a frame's changed entities, uploaded compactly, written to their slots in the per-slot
// arrays, so that only the changed entities' bytes cross the bus, and marked dirty for this
// frame. Built two ways:
//  - default: EntityDelta records, everything a slot holds (a dead slot, flags 0, gets an
//    all-zero LocalToWorld: an instance drawn from it collapses to a point); invocations past
//    the pc.aux entity deltas write the frame's scattered depth-order changes, (entry, slot)
//    pairs, into the order (bound as LIST here);
//  - TPROP_SCATTER_VALUES: ValueDelta records, an entity's new translation, rotation and scale
//    alone (48 bytes where a whole record takes 64), in the scatter's own dispatch before the
//    other; a slot with both carries the same values in each.
#extension GL_GOOGLE_include_directive : require
#include "scene_access.glsl"

layout(local_size_x = TPROP_SCATTER_GROUP_SIZE) in;

#if defined(TPROP_SCATTER_VALUES)
void main() {
  uint i = flat_invocation(TPROP_SCATTER_GROUP_SIZE);
  if (i >= pc.count) return;
  ValueDelta d = VALUE_DELTAS(i);
  uint slot = d.slot;
  TRANSLATION(slot) = vec4(d.translation_x, d.translation_y, d.translation_z, 0.0);
  ROTATION(slot) = d.rotation;
  SCALE(slot) = d.scale;
  DIRTY(slot) = pc.frame;
}
#else
void main() {
  uint i = flat_invocation(TPROP_SCATTER_GROUP_SIZE);
  if (i >= pc.count) return;
  if (i >= pc.aux) {
    uvec2 change = LEVELS(pc.first + i - pc.aux);
    LIST(change.x) = change.y;
    return;
  }
  EntityDelta d = DELTAS(i);
  uint slot = d.slot;
  TRANSLATION(slot) = vec4(d.translation_x, d.translation_y, d.translation_z, 0.0);
  ROTATION(slot) = d.rotation;
  SCALE(slot) = d.scale;
  DIRTY(slot) = pc.frame;
  FLAGS(slot) = d.flags;
  PARENT(slot) = d.parent;
  RARE_INDEX(slot) = d.rare_index;
  STATIC_INDEX(slot) = d.static_index;
  if (d.flags == 0u) store_world(slot, mat4(0.0));
}
#endif
