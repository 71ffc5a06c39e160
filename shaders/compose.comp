#version 460
// Compose: every entity's local matrix (or the value that stands in for it: a user-written
// matrix, a frozen Static) into local_to_world[pos]. Roots, overrides and frozen Statics are then
// final; propagate.comp multiplies the others by their parent's LocalToWorld.
#extension GL_GOOGLE_include_directive : require
#include "scene_access.glsl"
#include "local_matrix.glsl"

layout(local_size_x = TPROP_COMPOSE_GROUP_SIZE) in;

void main() {
  uint i = flat_invocation(kComposeGroupSize);
  if (i >= pc.count) return;
  uint pos = pc.first + i;
  uint f = FLAGS_SELF[SELF(pos)];
  uint rare = RARE_INDEX_SELF[SELF(pos)];

  mat4 m;
  if ((f & kFlagReadFrozen) != 0u) {
    m = FROZEN[STATIC_INDEX_SELF[SELF(pos)]];
  } else if ((f & kFlagUserWorld) != 0u) {
    m = rare != kNoIndex ? RARE[rare].user_local_to_world : mat4(1.0);
  } else if ((f & kFlagUserLocal) != 0u) {
    m = rare != kNoIndex ? RARE[rare].user_local_to_parent : mat4(1.0);
  } else {
    m = local_matrix(pos, f, rare);
  }
  WORLD_SELF[SELF(pos)] = m;
  if ((f & (kFlagStoreFrozen | kFlagWorldFinal)) == (kFlagStoreFrozen | kFlagWorldFinal)) {
    FROZEN[STATIC_INDEX_SELF[SELF(pos)]] = m;
  }
}
