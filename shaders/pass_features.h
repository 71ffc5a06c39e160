// What an evaluate pass is specialized for: one specialization constant (kPassFeatures, constant
// id kSpecPassFeatures) whose bits say which of the compose rules' paths the entities of a
// dispatch may take. Shared by the GLSL passes (local_matrix.glsl, propagate.comp, jump.comp) and
// by C++ (host/propagator_variants.cpp, which chooses the bits per frame and dispatch).
//
// Why: llvmpipe (lavapipe) runs every branch of a shader with lane masks and never skips code
// whose lanes are all inactive, and each storage-buffer access is a loop over the lanes, so every
// entity paid for every rule (Euler-resolved composites, pivots, user matrices, frozen Statics,
// overrides): measured on a 100,000-deep chain, 102 ms walked by the general shader against 31 ms
// by one without those paths. A path compiled out is free on any device and frees registers on
// GPUs. A bit may be set when no entity needs it (the general shader has them all), never left
// clear when one does: the host counts what the scene holds, it does not guess.
#ifndef TPROP_PASS_FEATURES_H
#define TPROP_PASS_FEATURES_H

#ifdef __cplusplus
#include <cstdint>
namespace tprop::gpu {
#define TPROP_CONST inline constexpr uint32_t
#else
#define TPROP_CONST const uint
#endif

TPROP_CONST kSpecPassFeatures = 0u;  // the constant_id of kPassFeatures
#define TPROP_SPEC_PASS_FEATURES 0   // the same, for GLSL's layout(constant_id = ...)

// CompositeRotation, CompositeScale or ParentScaleInverse: the general product path, which reads
// the rare table and the parent's flags.
TPROP_CONST kFeatureComposite = 1u << 0u;
// A user-written LocalToWorld or LocalToParent (kFlagUserWorld / kFlagUserLocal) that is not the
// identity the closed form gives an entity without components.
TPROP_CONST kFeatureUser = 1u << 1u;
// Statics: a frozen LocalToWorld read (kFlagReadFrozen) or saved (kFlagStoreFrozen).
TPROP_CONST kFeatureStatic = 1u << 2u;
// Some entity of the dispatch keeps its own matrix as its LocalToWorld (kFlagWorldFinal): a root
// in a dispatch that also holds deeper levels, an override or a frozen Static below a parent.
// Without it every entity of a dispatch with kFeatureParents multiplies by its parent.
TPROP_CONST kFeatureFinalTest = 1u << 3u;
// The dispatch holds entities below level 0 (the parent's LocalToWorld is read). Without it
// every entity is a root (level 0).
TPROP_CONST kFeatureParents = 1u << 4u;
// The frame skips the unchanged (pc.aux = 1: the dirty marks are read and written).
TPROP_CONST kFeatureSkip = 1u << 5u;
// Some matrix may have a last row other than (0, 0, 0, 1) (a user-written matrix, or a frozen
// value computed under one). Without it every matrix is affine: parents are read as 3 rows and
// pointer jumping keeps 3x4 matrices.
TPROP_CONST kFeatureProjective = 1u << 6u;
TPROP_CONST kFeatureAll = (1u << 7u) - 1u;
// Not a rule but the output's layout (output_layout.h): LocalToWorld is written, and parents are
// read, as Affine3x4 rows (48 bytes) instead of a mat4. Set from
// PropagatorOptions::output_layout on every pass that touches LocalToWorld, the scatter's
// dead-slot clear included; outside kFeatureAll, so the general shader keeps the layout asked for.
TPROP_CONST kFeatureAffineOutput = 1u << 7u;
// Not a rule either: the fused pass (propagate.comp) on a CPU device, where every invocation
// polls the level above's count itself. Measured on lavapipe (Mesa 22.3): with one invocation
// polling and a workgroup barrier after it, as on a GPU, about one frame in a few hundred read a
// parent's matrix from before it was written.
TPROP_CONST kFeaturePollEach = 1u << 8u;
// Not a rule: the wide pass writes LocalToWorld through shared memory where a workgroup's
// entries are consecutive slots (propagate.comp; PropagatorOptions::wide_stores).
TPROP_CONST kFeatureSharedStores = 1u << 9u;
// Not a rule: LocalToWorld is written as 64-bit words, two floats each (scene_access.glsl
// store_world; PropagatorOptions::world_writes). Part of the output's features (with
// kFeatureAffineOutput) on every pass that writes LocalToWorld.
TPROP_CONST kFeatureWordStores = 1u << 10u;
TPROP_CONST kFeatureOutput = kFeatureAffineOutput | kFeatureWordStores;

#ifdef __cplusplus
}  // namespace tprop::gpu
#endif

#undef TPROP_CONST
#endif  // TPROP_PASS_FEATURES_H
