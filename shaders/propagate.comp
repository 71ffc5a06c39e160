#version 460
// Evaluate: LocalToWorld of every entity the list names, level after level. Compose and
// propagate in one step, so the local matrix never travels through memory: the entity's own
// matrix (local_matrix.glsl, a user-written value or a frozen Static), times its parent's
// LocalToWorld when it is attached, written to local_to_world[slot]. Specialized per dispatch
// to the rules its entities may need (pass_features.h).
// With pc.aux = 1 or 3 (and kFeatureSkip), an entity is recomputed only when its own or its
// parent's dirty[] is this frame's (it then marks itself for its children): the whole order is
// followed, but a clean entity costs the reads of its list entry, parent index and two marks.
// Built four ways:
//  - wide (default): one invocation per entry of one level's segment [pc.first, + pc.count);
//  - TPROP_NARROW: one workgroup walks the levels [pc.first, pc.first + pc.count), each at most
//    kNarrowLevelMax entities (so the inner loop runs at most 8 times), with a workgroup barrier
//    between levels, so a deep chain costs one dispatch per kNarrowLevelsPerDispatch levels
//    instead of one per level;
//  - TPROP_SERIAL: the same run of narrow levels walked by a single invocation, with no barrier
//    at all. On a CPU device (llvmpipe) a barrier costs more than the work of a thin level, so
//    this is several times faster there; on a GPU one invocation is latency-bound, so the
//    workgroup walk stays (PropagatorOptions::narrow_walk);
//  - TPROP_CHAIN: a chain (levels of one entity, each the child of the one above) walked by one
//    subgroup of 8, 8 levels at a time, with the products chained across lanes by subgroup
//    shuffles (main() says how); used beside TPROP_SERIAL;
//  - TPROP_BUNDLE: a bundle of k parallel chains (levels of k entities, the one at position p
//    the child of the one at position p of the level above) walked by k invocations, each down
//    its own chain; used beside TPROP_SERIAL;
//  - TPROP_CLIMB: the top levels of the order (from level 0, at most kClimbLevelsMax) in one
//    dispatch, one invocation per entry, each composing its own ancestors' matrices from its
//    root down (climb()), so that no level waits for the one above;
//  - TPROP_FUSED: consecutive levels in one dispatch, each workgroup a chunk of 256 entries of
//    one level, taken in level order from a counter; a chunk waits until the level above is
//    done (main() says how), so levels cost a few memory round trips each, not a dispatch.
#extension GL_GOOGLE_include_directive : require
// A parent's LocalToWorld and dirty mark as texels (scene_access.glsl) where an earlier dispatch
// wrote them: not in the walks, whose levels read what the same dispatch wrote a level earlier.
#if defined(TPROP_TEXEL_READS) && !defined(TPROP_NARROW) && !defined(TPROP_SERIAL) && \
    !defined(TPROP_FUSED) && !defined(TPROP_CLIMB)
#define TPROP_TEXEL_EARLIER
#endif
#include "scene_access.glsl"
#include "local_matrix.glsl"

#if defined(TPROP_SERIAL)
layout(local_size_x = 1) in;
#elif defined(TPROP_CHAIN)
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_shader_subgroup_shuffle : require
layout(local_size_x = TPROP_NARROW_GROUP_SIZE) in;
#elif defined(TPROP_NARROW) || defined(TPROP_BUNDLE)
layout(local_size_x = TPROP_NARROW_GROUP_SIZE) in;
#else
layout(local_size_x = TPROP_WIDE_GROUP_SIZE) in;
#endif

#if defined(TPROP_FUSED)
// The step's counters (main()); coherent: other workgroups of this dispatch raise them.
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer ProgressArray {
  uint v[];
};
const bool kPollEach = (kPassFeatures & kFeaturePollEach) != 0u;
shared uint s_chunk;       // the chunk this workgroup took
shared uint s_step_level;  // its level's index in the step
#endif

// The LocalToWorld of `slot` and its flags, or false where a frame that skips the unchanged
// leaves it standing.
bool world_of(uint slot, out mat4 m, out uint f) {
  m = mat4(1.0);
  f = 0u;
  if (kSkip && pc.aux != 0u && DIRTY_EARLIER(slot) != pc.frame) {
    uint parent = PARENT(slot);
    if (parent == kNoIndex || DIRTY_EARLIER(parent) != pc.frame) return false;
    DIRTY(slot) = pc.frame;
  }
  f = kReadsFlags ? FLAGS(slot) : 0u;
  m = own_matrix(slot, f);
  // The reference's product: LocalToWorld[parent] * local. Without kFeatureFinalTest every
  // entity of a dispatch with parents multiplies (pass_features.h).
  if (kParents && (!kFinalTest || (f & kFlagWorldFinal) == 0u)) m = parent_times(PARENT(slot), m);
  return true;
}

void evaluate(uint slot) {
  mat4 m;
  uint f;
  if (!world_of(slot, m, f)) return;
  store_world(slot, m);
  if (kStatic && (f & kFlagStoreFrozen) != 0u) FROZEN(STATIC_INDEX(slot)) = m;
}

#if defined(TPROP_CLIMB)
// The LocalToWorld of `slot`, an entity of the top levels [0, e) of the whole order (e <=
// kClimbLevelsMax), with nothing read that this dispatch writes: its chain (itself, its parent,
// ..., up to the first that keeps its own matrix: a root, a frozen Static, an override) is held
// in a private array and multiplied from the top down, the products of the level passes in their order
// (world_of() above each level), so the results are theirs. Each of its ancestors stands at a
// level above its own, so the chain holds at most e entities. In a frame that skips the
// unchanged it is recomputed when a mark on its way to the root is this frame's: the level
// passes' rule, unrolled (another invocation may be marking an ancestor meanwhile, but only one
// whose own way up holds such a mark: reading the mark before or after gives the same answer).
void climb(uint slot) {
  bool skipping = kSkip && pc.aux != 0u;
  uint chain[kClimbLevelsMax];
  uint flags[kClimbLevelsMax];
  uint n = 0u;
  bool open = true;  // the chain has not reached a matrix that its parent leaves alone
  bool dirty = !skipping;
  uint s = slot;
  for (uint k = 0u; k < kClimbLevelsMax && s != kNoIndex; ++k) {
    if (open) {
      uint f = kReadsFlags ? FLAGS(s) : 0u;
      chain[n] = s;
      flags[n] = f;
      ++n;
      open = !kFinalTest || (f & kFlagWorldFinal) == 0u;
    }
    if (!dirty) dirty = DIRTY(s) == pc.frame;
    if (!open && dirty) break;
    s = PARENT(s);
  }
  if (!dirty) return;
  if (skipping) DIRTY(slot) = pc.frame;
  mat4 m = own_matrix(chain[n - 1u], flags[n - 1u]);
  for (uint k = n - 1u; k > 0u; --k) m = product(m, own_matrix(chain[k - 1u], flags[k - 1u]));
  store_world(slot, m);
  if (kStatic && (flags[0] & kFlagStoreFrozen) != 0u) FROZEN(STATIC_INDEX(slot)) = m;
}
#endif

#if !defined(TPROP_NARROW) && !defined(TPROP_SERIAL) && !defined(TPROP_CHAIN) && \
    !defined(TPROP_BUNDLE) && !defined(TPROP_FUSED) && !defined(TPROP_CLIMB)
#define TPROP_WIDE_SHARED_STORES
// kFeatureSharedStores (WideStores): a workgroup whose 256 entries name 256 consecutive slots (a
// scene packed in level order) writes their LocalToWorlds through shared memory, so that each
// store instruction of a subgroup covers consecutive 16-byte columns instead of one column
// every 64 bytes. Measured on an H100 by descriptors, in a build that flagged broken runs with
// shared atomics: a 1M flat scene's full frame 0.072 -> 0.052 ms (host/propagator.h,
// WideStores). Columns of one matrix kWideColumnStride vec4s apart: conflict-free both ways.
// Other workgroups store directly. Sized by the specialization, so that only the variants built
// for it hold the 16.5 KiB.
const bool kSharedStores = (kPassFeatures & kFeatureSharedStores) != 0u;
const uint kColumnStride = kWideColumnStride;
const uint kColumnVec4s = kSharedStores ? 4u * kColumnStride : 1u;
shared vec4 s_columns[kColumnVec4s];
shared uint s_first_slot;
shared uint s_consecutive;

// Entry i of the dispatch, as evaluate(LIST(pc.first + i)) does it. Every invocation of the
// workgroup calls it (barriers).
void evaluate_through_shared(uint i) {
  uint t = gl_LocalInvocationID.x;
  uint slot = i < pc.count ? LIST(pc.first + i) : kNoIndex;
  mat4 m;
  uint f;
  bool writes = slot != kNoIndex && world_of(slot, m, f);
  if (t == 0u) {
    s_first_slot = slot;
    s_consecutive = 1u;
#if !defined(TPROP_DESCRIPTORS)
    // Their LocalToWorlds must be one piece's (pieces hold a power of two of at least 256).
    uint shift = uint(pc.local_to_world) & kPieceShiftMask;
    if (slot == kNoIndex || (slot >> shift) != ((slot + kWideGroupSize - 1u) >> shift))
      s_consecutive = 0u;
#endif
  }
  memoryBarrierShared();
  barrier();
  // Every invocation that breaks the run writes the same 0 (a plain store: atomics on one word
  // queue up, 256 of them where no slot follows its neighbour).
  if (!writes || slot != s_first_slot + t) s_consecutive = 0u;
  memoryBarrierShared();
  barrier();
  if (s_consecutive != 0u) {
    for (uint c = 0u; c < 4u; ++c) s_columns[c * kColumnStride + t] = m[c];
    memoryBarrierShared();
    barrier();
    // Column q of the workgroup's 1,024: matrix q / 4, its column q % 4.
#if defined(TPROP_DESCRIPTORS)
    for (uint c = 0u; c < 4u; ++c) {
      uint q = c * kWideGroupSize + t;
      b_world_columns.v[4u * s_first_slot + q] = s_columns[(q & 3u) * kColumnStride + (q >> 2u)];
    }
#else
    Vec4Array columns = Vec4Array(element_address(pc.local_to_world, s_first_slot, 64u));
    for (uint c = 0u; c < 4u; ++c) {
      uint q = c * kWideGroupSize + t;
      columns.v[q] = s_columns[(q & 3u) * kColumnStride + (q >> 2u)];
    }
#endif
  } else if (writes) {
    store_world(slot, m);
  }
  if (writes && kStatic && (f & kFlagStoreFrozen) != 0u) FROZEN(STATIC_INDEX(slot)) = m;
}
#endif

#if defined(TPROP_CHAIN)
// A lane's matrix: from `delta` lanes below, or from lane `lane` (affine: only the 12 elements
// that are not known; every subgroup operation on llvmpipe is a loop over the lanes).
mat4 shuffle_up(mat4 m, uint delta) {
  if (kProjective)
    return mat4(subgroupShuffleUp(m[0], delta), subgroupShuffleUp(m[1], delta),
                subgroupShuffleUp(m[2], delta), subgroupShuffleUp(m[3], delta));
  return mat4(vec4(subgroupShuffleUp(m[0].xyz, delta), 0.0),
              vec4(subgroupShuffleUp(m[1].xyz, delta), 0.0),
              vec4(subgroupShuffleUp(m[2].xyz, delta), 0.0),
              vec4(subgroupShuffleUp(m[3].xyz, delta), 1.0));
}
mat4 shuffle(mat4 m, uint lane) {
  if (kProjective)
    return mat4(subgroupShuffle(m[0], lane), subgroupShuffle(m[1], lane),
                subgroupShuffle(m[2], lane), subgroupShuffle(m[3], lane));
  return mat4(vec4(subgroupShuffle(m[0].xyz, lane), 0.0), vec4(subgroupShuffle(m[1].xyz, lane), 0.0),
              vec4(subgroupShuffle(m[2].xyz, lane), 0.0), vec4(subgroupShuffle(m[3].xyz, lane), 1.0));
}
// One round of the block's segmented scan: a lane whose product does not start at a final
// matrix yet takes the product of the `delta` lanes below it in front of its own.
#define TPROP_CHAIN_ROUND(delta)                                 \
  {                                                              \
    mat4 below = shuffle_up(prefix, delta);                      \
    bool below_final = subgroupShuffleUp(final, delta);          \
    if (lane >= delta && !final) {                               \
      prefix = product(below, prefix);                           \
      final = below_final;                                       \
    }                                                            \
  }
#endif

void main() {
#if defined(TPROP_SERIAL)
  for (uint level = pc.first; level < pc.first + pc.count; ++level) {
    uvec2 segment = LEVELS(level);
    for (uint k = 0u; k < segment.y; ++k) evaluate(LIST(segment.x + k));
  }
#elif defined(TPROP_CHAIN)
  // The levels [pc.first, + pc.count) each hold one entity, the child of the one above it (the
  // host checks: propagator_plan.cpp plan_steps). The workgroup is one subgroup of 8 lanes
  // (the host uses this pass only where subgroups hold at least 8): each block of 8 levels
  // loads and composes its 8 entities side by side, one lane each; a scan over the lanes (3
  // rounds of shuffles) gives each lane the product of the block's own matrices down to its own,
  // and the LocalToWorld above the block (in a register, from the block before) multiplies it.
  // No lane reads memory another lane wrote, so no barrier is needed. On llvmpipe every memory
  // access is a loop over the 8 lanes: here all 8 do work, where the single-invocation walk
  // used 1. Measured there (100,000-deep chain): 104 ms for the general single-invocation walk,
  // 21 ms specialized, 5-6 ms for this pass (with a sequential chain of broadcasts instead of
  // the scan, 6-7 ms: each subgroup operation loops over the lanes). The scan reassociates the
  // products (hierarchy/compare.h bounds that, as for pointer jumping); their order stays
  // parent-then-child.
  //
  // In a frame that skips the unchanged, a change marks everything below it, so a chain's clean
  // entities come first: the host starts the step at the first changed level
  // (host/propagator_variants.cpp trim_chains), and every entity here is recomputed and marked.
  uint lane = gl_SubgroupInvocationID;
  bool skipping = kSkip && pc.aux != 0u;
  uint above = PARENT(LIST(LEVELS(pc.first).x));
  // Above a root: the identity (identity * own is own).
  mat4 carry = mat4(1.0);
  if (above != kNoIndex) carry = load_world(above);  // written by an earlier dispatch
  for (uint base = 0u; base < pc.count; base += TPROP_NARROW_GROUP_SIZE) {
    // Lanes past the end repeat the last level: their products are never written.
    bool here = base + lane < pc.count;
    uint slot = LIST(LEVELS(pc.first + min(base + lane, pc.count - 1u)).x);
    uint f = kReadsFlags ? FLAGS(slot) : 0u;
    mat4 own = own_matrix(slot, f);
    // A segmented inclusive scan (Hillis-Steele, 3 rounds of 8 lanes): lane j ends with the
    // product of the own matrices from the block's start, or from the last entity at or below
    // it whose own matrix is final, down to its own.
    bool final = kFinalTest && (f & kFlagWorldFinal) != 0u;
    mat4 prefix = own;
    TPROP_CHAIN_ROUND(1u)
    TPROP_CHAIN_ROUND(2u)
    TPROP_CHAIN_ROUND(4u)
    mat4 world = final ? prefix : product(carry, prefix);
    carry = shuffle(world, TPROP_NARROW_GROUP_SIZE - 1u);
    if (here) {
      store_world(slot, world);
      if (skipping) DIRTY(slot) = pc.frame;
      if (kStatic && (f & kFlagStoreFrozen) != 0u) FROZEN(STATIC_INDEX(slot)) = world;
    }
  }
#elif defined(TPROP_BUNDLE)
  // The levels [pc.first, + pc.count) each hold k entities, the one at position p the child of
  // the one at position p above (the host checks: propagator_plan.cpp plan_steps).
  // Invocation p walks position p down the levels with its parent's LocalToWorld in a register:
  // it reads only what it wrote itself, so neither a barrier nor a shared workgroup is needed
  // (ceil(k / 8) workgroups of 8, which llvmpipe runs on all its threads). Against the single
  // invocation, which walks the k entities of a level one after another, each memory access
  // serves up to 8 entities.
  uint p = gl_WorkGroupID.x * TPROP_NARROW_GROUP_SIZE + gl_LocalInvocationID.x;
  uvec2 top = LEVELS(pc.first);
  if (p >= top.y) return;
  bool skipping = kSkip && pc.aux != 0u;
  uint above = PARENT(LIST(top.x + p));
  // Above a root: the identity (identity * own is own).
  mat4 carry = mat4(1.0);
  bool carry_dirty = false;
  if (above != kNoIndex) {
    carry = load_world(above);  // written by an earlier dispatch
    carry_dirty = !skipping || DIRTY_EARLIER(above) == pc.frame;
  }
  for (uint level = pc.first; level < pc.first + pc.count; ++level) {
    uint slot = LIST(LEVELS(level).x + p);
    // As evaluate(): recomputed when it or its parent changed this frame.
    bool dirty = !skipping || carry_dirty || DIRTY_EARLIER(slot) == pc.frame;
    if (dirty) {
      uint f = kReadsFlags ? FLAGS(slot) : 0u;
      mat4 m = own_matrix(slot, f);
      if (!kFinalTest || (f & kFlagWorldFinal) == 0u) m = product(carry, m);
      store_world(slot, m);
      if (skipping) DIRTY(slot) = pc.frame;
      if (kStatic && (f & kFlagStoreFrozen) != 0u) FROZEN(STATIC_INDEX(slot)) = m;
      carry = m;
    } else {
      carry = load_world(slot);  // clean: its LocalToWorld stands
    }
    carry_dirty = dirty;
  }
#elif defined(TPROP_FUSED)
  // The chunk table: LEVELS(pc.first + j) = (the first chunk of the step's j-th level, that
  // level), for j < pc.count, levels with entries only. The counters at pc.deltas: [0] the next
  // chunk to take, [1 + j] the chunks of level j done. Chunks are taken in order, so every chunk
  // of level j - 1 is held by a workgroup that is running (or done) when a chunk of level j waits
  // for them, and no wait depends on a workgroup that has not started. Level j - 1 complete
  // means every level above it is too (its chunks waited in turn), which is what a child below
  // lazy levels (more than one level below its parent) needs.
  uint lane = gl_LocalInvocationID.x;
  ProgressArray progress = ProgressArray(pc.deltas);
  if (lane == 0u) {
    uint chunk = atomicAdd(progress.v[0], 1u);
    uint lo = 0u, hi = pc.count;  // the level holding `chunk` is in [lo, hi)
    while (hi - lo > 1u) {
      uint mid = (lo + hi) / 2u;
      if (LEVELS(pc.first + mid).x <= chunk) lo = mid; else hi = mid;
    }
    s_chunk = chunk;
    s_step_level = lo;
  }
  memoryBarrierShared();
  barrier();
  uint j = s_step_level;
  if (j > 0u) {
    // One invocation polls the count (atomics: plain reads may be hoisted out of the loop), the
    // others wait at the barrier; on a CPU device each polls itself (pass_features.h). Without
    // the Vulkan memory model barrier() orders shared memory only, so this leans on the buffer
    // fences on both sides of it as GPUs implement them (the H200 matched the reference on every
    // fused strategy; lavapipe did not, hence kPollEach there). Bounded only against a driver
    // that breaks the in-order start, where a hang would lose the device: after some 10^8 polls
    // the chunk goes on, and its results would be wrong.
    uint above = LEVELS(pc.first + j).x - LEVELS(pc.first + j - 1u).x;  // its chunks
    if (lane == 0u || kPollEach) {
      for (uint polls = 0u; atomicAdd(progress.v[j], 0u) < above && polls < 100000000u; ++polls) {
      }
      memoryBarrierBuffer();  // the poller's acquire, before the barrier releases the others
    }
    barrier();
    memoryBarrierBuffer();
  }
  uvec2 entry = LEVELS(pc.first + j);
  uvec2 segment = LEVELS(entry.y);
  uint k = (s_chunk - entry.x) * kWideGroupSize + lane;
  if (k < segment.y) evaluate(LIST(segment.x + k));
  // Every invocation's writes, then the count that lets the level below start.
  memoryBarrierBuffer();
  barrier();
  if (lane == 0u) atomicAdd(progress.v[1u + j], 1u);
#elif defined(TPROP_CLIMB)
  // The chunk table as the fused pass's: LEVELS(pc.first + j) = (the first chunk of the step's
  // j-th level, that level), for j < pc.count, levels with entries only (the first starts at
  // chunk 0); workgroup w takes chunk w (a uniform search over at most kClimbLevelsMax entries;
  // the 2D grid's extra workgroups land past the last level's entries).
  uint chunk = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  uint lo = 0u, hi = pc.count;  // the level holding `chunk` is in [lo, hi)
  while (hi - lo > 1u) {
    uint mid = (lo + hi) / 2u;
    if (LEVELS(pc.first + mid).x <= chunk) lo = mid; else hi = mid;
  }
  uvec2 entry = LEVELS(pc.first + lo);
  uvec2 segment = LEVELS(entry.y);
  uint k = (chunk - entry.x) * kWideGroupSize + gl_LocalInvocationID.x;
  if (k < segment.y) climb(LIST(segment.x + k));
#elif defined(TPROP_NARROW)
  for (uint level = pc.first; level < pc.first + pc.count; ++level) {
    uvec2 segment = LEVELS(level);
    for (uint k = gl_LocalInvocationID.x; k < segment.y; k += TPROP_NARROW_GROUP_SIZE) {
      evaluate(LIST(segment.x + k));
    }
    // The next level reads what this one wrote, from other invocations of this workgroup.
    memoryBarrierBuffer();
    barrier();
  }
#else
  uint i = flat_invocation(kWideGroupSize);
#if defined(TPROP_WIDE_SHARED_STORES)
  // Uniform: a frame that skips the unchanged (pc.aux 1) writes few matrices and takes no
  // barrier, unless the host expects most to change (pc.aux 3). Measured on an H100, where that
  // build took the shared path in every frame: all values changed 0.071 -> 0.059 ms, 1% 0.015
  // -> 0.040 (a 1M flat scene; its atomics or barriers, not told apart).
  if (kSharedStores && !kAffineOutput && (pc.aux == 0u || pc.aux == 3u)) {
    evaluate_through_shared(i);
    return;
  }
#endif
  if (i < pc.count) evaluate(LIST(pc.first + i));
#endif
}
