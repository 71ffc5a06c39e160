#version 460
// A scan over a run of aligned levels: levels [pc.first, pc.first + pc.count), each holding
// exactly k = pc.aux entities, the one at position p the child of the one at position p of the
// level above (the host checks: propagator_plan.cpp plan_steps). Position p down the run is
// one path (a chain when k = 1, k parallel chains otherwise), and its LocalToWorlds are the
// inclusive prefix products of its own matrices, parent-then-child: a scan. Reduce-then-scan in
// three dispatches whatever the depth, each entity read twice and written once, O(entities)
// work (pointer jumping, jump.comp, moves its scratch log2(levels) times):
//  - TPROP_SCAN_REDUCE: each workgroup composes one tile (T consecutive levels of P consecutive
//    positions, scene_layout.h scan_positions), each invocation kScanLevelsPerInvocation
//    consecutive levels of one position multiplied in its registers, and writes the product of
//    each of its positions (that position's aggregate for the tile) to the scratch;
//  - TPROP_SCAN_CARRY: one workgroup per position scans its tiles' aggregates into each tile's
//    exclusive prefix (the product of everything above the tile in the run);
//  - TPROP_SCAN_WRITE: each workgroup composes its tile again (cheaper in bytes than keeping the
//    local matrices), scans the invocations' products in shared memory, multiplies the tile's
//    prefix and the invocation's own prefix in front of each level's and writes LocalToWorld.
// An element is (matrix, final, dirty). A final element's matrix does not depend on what is above
// it: the run's first level (its parent, before the run, is final already: its LocalToWorld
// multiplies the own matrix here; a root's is the identity) and any entity whose own matrix is
// its LocalToWorld (kFlagWorldFinal: a frozen Static, a user-written LocalToWorld). Combining a
// (above) with b (below): b if b is final, else (a.m * b.m, a.final, a.dirty | b.dirty): an
// associative operator, so any grouping gives the same products up to rounding (hierarchy/
// compare.h). The dirty bit is the rule of propagate.comp in frames that skip the unchanged
// (pc.frame's top bit set, the frame number the rest): an entity is recomputed when it, an entity
// above it in the run or the run's parent changed this frame; a clean one keeps its LocalToWorld.
//
// By device address only; pc.deltas is the scratch: aggregates[k * tiles] then prefixes[k *
// tiles], each a mat4 as 4 columns (64 bytes), then their flag words (final, dirty), the same
// order; position p's tile i at p * tiles + i. Workgroup g (flattened over a 2D grid) of the
// reduce and write passes takes positions [P * (g / tiles), + P) of tile g % tiles, invocation t
// levels [L * (t / P), + L) of the tile at position t % P (L = kScanLevelsPerInvocation):
// neighbouring invocations read neighbouring list entries when the run is wide.
#extension GL_GOOGLE_include_directive : require
#include "scene_access.glsl"
#include "local_matrix.glsl"

layout(local_size_x = TPROP_SCAN_GROUP_SIZE) in;

const uint kTopBit = 0x80000000u;
const uint kFinal = 1u;
const uint kDirty = 2u;

uint frame_number() { return pc.frame & ~kTopBit; }
bool skipping() { return (pc.frame & kTopBit) != 0u; }
// P, T and the tiles a position's levels take, as the host counts them (scene_layout.h).
uint positions() { return min(1u << findMSB(pc.aux), kScanPositionsMax); }
uint tile_levels() { return kScanLevelsPerInvocation * kScanGroupSize / positions(); }
uint tiles() { return (pc.count + tile_levels() - 1u) / tile_levels(); }

struct Element {
  mat4 m;
  uint flags;  // kFinal | kDirty
};

const Element kIdentity = Element(mat4(1.0), 0u);

// a above b.
Element combine(Element a, Element b) {
  if ((b.flags & kFinal) != 0u) return b;
  return Element(product(a.m, b.m), (a.flags & kFinal) | ((a.flags | b.flags) & kDirty));
}

Vec4Array matrices(uint which) {
  return Vec4Array(pc.deltas + uint64(which) * uint64(pc.aux) * uint64(tiles()) * 64ul);
}
UintArray flag_words(uint which) {
  uint64 elements = uint64(pc.aux) * uint64(tiles());
  return UintArray(pc.deltas + elements * 128ul + uint64(which) * elements * 4ul);
}
void store_element(uint which, uint i, Element e) {
  Vec4Array a = matrices(which);
  for (uint c = 0u; c < 4u; ++c) a.v[4u * i + c] = e.m[c];
  flag_words(which).v[i] = e.flags;
}
Element load_element(uint which, uint i) {
  Vec4Array a = matrices(which);
  return Element(mat4(a.v[4u * i], a.v[4u * i + 1u], a.v[4u * i + 2u], a.v[4u * i + 3u]),
                 flag_words(which).v[i]);
}

// A workgroup's elements, for the scans below (4 columns and a flag word each: 17 KiB).
shared vec4 s_columns[4][kScanGroupSize];
shared uint s_flags[kScanGroupSize];

void share(uint t, Element e) {
  for (uint c = 0u; c < 4u; ++c) s_columns[c][t] = e.m[c];
  s_flags[t] = e.flags;
}
Element shared_element(uint t) {
  return Element(mat4(s_columns[0][t], s_columns[1][t], s_columns[2][t], s_columns[3][t]),
                 s_flags[t]);
}

// The inclusive scans of the workgroup's elements taken `stride` apart: `stride` interleaved
// sequences of kScanGroupSize / stride elements each, invocation t the (t / stride)-th element of
// sequence t % stride (Hillis-Steele: log2 of the length rounds). Every invocation of the
// workgroup calls it.
Element scan_workgroup(Element e, uint stride) {
  uint t = gl_LocalInvocationID.x;
  uint at = t / stride;  // in its sequence
  share(t, e);
  memoryBarrierShared();
  barrier();
  for (uint d = 1u; d < kScanGroupSize / stride; d <<= 1u) {
    Element above = kIdentity;
    if (at >= d) above = shared_element(t - d * stride);
    memoryBarrierShared();
    barrier();
    if (at >= d) {
      e = combine(above, e);
      share(t, e);
    }
    memoryBarrierShared();
    barrier();
  }
  return e;
}

#if defined(TPROP_SCAN_REDUCE) || defined(TPROP_SCAN_WRITE)
// The element at level j of the run, position p (past the run's end or its width: the identity),
// with its slot and flags.
Element run_element(uint j, uint p, out uint slot, out uint f) {
  slot = kNoIndex;
  f = 0u;
  if (j >= pc.count || p >= pc.aux) return kIdentity;
  slot = LIST(LEVELS(pc.first + j).x + p);
  f = kReadsFlags ? FLAGS(slot) : 0u;
  Element e = Element(own_matrix(slot, f), 0u);
  bool dirty = !skipping() || DIRTY(slot) == frame_number();
  bool final = kFinalTest && (f & kFlagWorldFinal) != 0u;
  if (j == 0u) {
    uint parent = PARENT(slot);
    if (!final && parent != kNoIndex) {
      e.m = parent_times(parent, e.m);  // written by an earlier dispatch
      dirty = dirty || DIRTY(parent) == frame_number();
    }
    final = true;
  }
  e.flags = (final ? kFinal : 0u) | (dirty ? kDirty : 0u);
  return e;
}
#endif

void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint t = gl_LocalInvocationID.x;
#if defined(TPROP_SCAN_CARRY)
  // Position `group`'s tiles, a contiguous range per invocation: their product, scanned across
  // the workgroup, gives each range's prefix; the range is walked again to write each tile's.
  if (group >= pc.aux) return;
  uint n = tiles();
  uint per = (n + kScanGroupSize - 1u) / kScanGroupSize;
  uint begin = min(t * per, n), end = min(begin + per, n);
  uint base = group * n;
  Element range = kIdentity;
  for (uint i = begin; i < end; ++i) range = combine(range, load_element(0u, base + i));
  scan_workgroup(range, 1u);  // leaves each invocation's inclusive product in shared memory
  Element prefix = t == 0u ? kIdentity : shared_element(t - 1u);
  for (uint i = begin; i < end; ++i) {
    store_element(1u, base + i, prefix);
    prefix = combine(prefix, load_element(0u, base + i));
  }
#else
  const uint kL = kScanLevelsPerInvocation;
  uint n = tiles(), width = positions();
  if (group >= (pc.aux + width - 1u) / width * n) return;  // the 2D grid's last row
  uint tile = group % n;
  uint p = group / n * width + t % width;
  uint j0 = tile * tile_levels() + kL * (t / width);
#if defined(TPROP_SCAN_WRITE)
  // The tile's prefix (the carry pass's), asked for before the loads below are waited on.
  Element above_tile = p < pc.aux ? load_element(1u, p * n + tile) : kIdentity;
#endif
  // The invocation's levels, each then the product of the invocation's levels down to it.
  Element own[kL];
  uint slots[kL], fs[kL];
  for (uint i = 0u; i < kL; ++i) own[i] = run_element(j0 + i, p, slots[i], fs[i]);
  for (uint i = 1u; i < kL; ++i) own[i] = combine(own[i - 1u], own[i]);
  Element inclusive = scan_workgroup(own[kL - 1u], width);
  if (p >= pc.aux) return;
#if defined(TPROP_SCAN_REDUCE)
  if (t / width == kScanGroupSize / width - 1u) store_element(0u, p * n + tile, inclusive);
#else
  // scan_workgroup left every invocation's inclusive product in shared memory: the one `width`
  // invocations before is this invocation's exclusive prefix within the tile.
  Element above = t >= width ? combine(above_tile, shared_element(t - width)) : above_tile;
  for (uint i = 0u; i < kL; ++i) {
    Element world = combine(above, own[i]);
    if (j0 + i >= pc.count || (world.flags & kDirty) == 0u) continue;  // clean: it stands
    store_world(slots[i], world.m);
    if (skipping()) DIRTY(slots[i]) = frame_number();
    if (kStatic && (fs[i] & kFlagStoreFrozen) != 0u) FROZEN(STATIC_INDEX(slots[i])) = world.m;
  }
#endif
#endif
}
