#version 460
// Pointer jumping (Wyllie) over a deep run of levels (each at most kJumpLevelMax entities; a deep
// chain, or many parallel ones): log2(levels)
// dispatches instead of one step per level. The run's M entities are numbered 0..M-1 (run
// index); each holds a matrix and an ancestor: the matrix is the product of the entity's own
// matrices from just below the ancestor down to itself, or, once the ancestor is gone (kNoIndex),
// the entity's LocalToWorld. A round replaces each (matrix, ancestor) by (matrix[ancestor] *
// matrix, ancestor[ancestor]), so after ceil(log2(levels)) rounds every matrix is final. Products
// keep the parent-then-child order; only their association changes (hierarchy/compare.h).
//
// Frames that skip the unchanged (pc.frame's top bit set; the frame number is the rest) carry a
// dirty bit with each ancestor: an entity is recomputed when it, an ancestor in the run or the
// run's parent outside it changed this frame, the same rule as propagate.comp's, OR-ed through
// the rounds like the products; a clean entity's LocalToWorld is left as it is.
//
// Built four times, by device address only (push constants: pc.deltas is the scratch buffer,
// laid out below; pc.count is M):
//  - TPROP_JUMP_INDEX: each run entity marks its slot with its run index (dirty[slot] =
//    kRunMark | index), so that children find their parent's index;
//  - TPROP_JUMP_INIT: each run entity's own matrix and ancestor; a parent outside the run is
//    final already, so the entity starts final too;
//  - TPROP_JUMP_ROUND: one round, from buffers pc.aux to 1 - pc.aux;
//  - TPROP_JUMP_WRITE: the final matrices (buffers pc.aux) of the dirty entities into
//    local_to_world, the frozen table of a Static's first frame and this frame's dirty marks.
// The run table: levels[pc.first + j] = (run index of the first entity of the run's level j,
// that level), for j < pc.aux (INDEX, INIT); the level's own segment is levels[level].
#extension GL_GOOGLE_include_directive : require
#include "scene_access.glsl"
#include "local_matrix.glsl"

layout(local_size_x = TPROP_WIDE_GROUP_SIZE) in;

const uint kRunMark = 0x80000000u;
// Scratch words: slots[i] and ancestors[i] keep a dirty bit on top; kNoAncestor in the low bits.
const uint kDirtyBit = 0x80000000u;
const uint kNoAncestor = 0x7fffffffu;

uint frame_number() { return pc.frame & ~kDirtyBit; }
bool skipping() { return (pc.frame & kDirtyBit) != 0u; }

// Scratch: matrices[2][M] (64 bytes each), ancestors[2][M], slots[M]. Without
// kFeatureProjective every matrix is affine and a matrix is kept as its top 3 rows, 48 bytes
// instead of 64, in the same place (fewer bytes moved per round; the layout does not change).
Vec4Array matrices(uint which) {
  return Vec4Array(pc.deltas + uint64(which) * uint64(pc.count) * 64ul);
}
void store_matrix(uint which, uint i, mat4 m) {
  Vec4Array a = matrices(which);
  if (kProjective) {
    for (uint c = 0u; c < 4u; ++c) a.v[4u * i + c] = m[c];
  } else {
    for (uint r = 0u; r < 3u; ++r) a.v[3u * i + r] = vec4(m[0][r], m[1][r], m[2][r], m[3][r]);
  }
}
mat4 load_matrix(uint which, uint i) {
  Vec4Array a = matrices(which);
  if (kProjective) return mat4(a.v[4u * i], a.v[4u * i + 1u], a.v[4u * i + 2u], a.v[4u * i + 3u]);
  vec4 r0 = a.v[3u * i], r1 = a.v[3u * i + 1u], r2 = a.v[3u * i + 2u];
  return mat4(vec4(r0.x, r1.x, r2.x, 0.0), vec4(r0.y, r1.y, r2.y, 0.0),
              vec4(r0.z, r1.z, r2.z, 0.0), vec4(r0.w, r1.w, r2.w, 1.0));
}
UintArray ancestors(uint which) {
  return UintArray(pc.deltas + uint64(pc.count) * 128ul + uint64(which) * uint64(pc.count) * 4ul);
}
UintArray slots() { return UintArray(pc.deltas + uint64(pc.count) * 136ul); }

#if defined(TPROP_JUMP_INDEX) || defined(TPROP_JUMP_INIT)
// The slot of run index i: a binary search of the run table for i's level.
uint slot_of_run_index(uint i) {
  uint lo = 0u, hi = pc.aux;  // the level holding i is in [lo, hi)
  while (hi - lo > 1u) {
    uint mid = (lo + hi) / 2u;
    if (LEVELS(pc.first + mid).x <= i) lo = mid; else hi = mid;
  }
  uvec2 entry = LEVELS(pc.first + lo);
  uvec2 segment = LEVELS(entry.y);
  return LIST(segment.x + (i - entry.x));
}
#endif

void main() {
  uint i = flat_invocation(kWideGroupSize);
  if (i >= pc.count) return;
#if defined(TPROP_JUMP_INDEX)
  uint slot = slot_of_run_index(i);
  // Its own mark, before the run index takes its place.
  bool dirty = !skipping() || DIRTY(slot) == frame_number();
  slots().v[i] = slot | (dirty ? kDirtyBit : 0u);
  DIRTY(slot) = kRunMark | i;
#elif defined(TPROP_JUMP_INIT)
  uint word = slots().v[i];
  uint slot = word & ~kDirtyBit;
  bool dirty = (word & kDirtyBit) != 0u;
  uint f = kReadsFlags ? FLAGS(slot) : 0u;
  mat4 m = own_matrix(slot, f);
  uint ancestor = kNoAncestor;
  if (!kFinalTest || (f & kFlagWorldFinal) == 0u) {
    uint parent = PARENT(slot);
    uint mark = DIRTY(parent);
    if ((mark & kRunMark) != 0u) {
      ancestor = mark & ~kRunMark;
    } else {
      m = parent_times(parent, m);  // the parent is before the run: final
      dirty = dirty || mark == frame_number();
    }
  }
  store_matrix(0u, i, m);
  ancestors(0u).v[i] = ancestor | (dirty ? kDirtyBit : 0u);
#elif defined(TPROP_JUMP_ROUND)
  uint from = pc.aux, to = 1u - pc.aux;
  uint word = ancestors(from).v[i];
  uint ancestor = word & ~kDirtyBit;
  mat4 m = load_matrix(from, i);
  if (ancestor != kNoAncestor) {
    uint above = ancestors(from).v[ancestor];
    m = product(load_matrix(from, ancestor), m);
    word = (above & ~kDirtyBit) | ((word | above) & kDirtyBit);
  }
  store_matrix(to, i, m);
  ancestors(to).v[i] = word;
#elif defined(TPROP_JUMP_WRITE)
  uint slot = slots().v[i] & ~kDirtyBit;
  if ((ancestors(pc.aux).v[i] & kDirtyBit) == 0u) {
    DIRTY(slot) = 0u;  // clean: its LocalToWorld stands; any mark but this frame's will do
    return;
  }
  mat4 m = load_matrix(pc.aux, i);
  store_world(slot, m);
  if (kStatic && (FLAGS(slot) & kFlagStoreFrozen) != 0u) FROZEN(STATIC_INDEX(slot)) = m;
  DIRTY(slot) = frame_number();
#endif
}
