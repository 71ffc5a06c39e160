// Which pipeline variant each evaluate dispatch runs (shaders/pass_features.h). The features a
// scene's entities need are counted as entities are packed (every live slot is packed once by a
// full upload, then again whenever it changes), so the counts are exact for the frame about to
// be recorded and a variant never lacks a rule that an entity it evaluates needs.
#include "propagator_state.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdio>
#include <span>
#include <string>

namespace tprop {

using namespace propagator_detail;

namespace {

bool affine(const float4x4& m) {
  return m[0][3] == 0.0f && m[1][3] == 0.0f && m[2][3] == 0.0f && m[3][3] == 1.0f;
}

// The first matrix of a rare record whose last row is not (0, 0, 0, 1) and its component's name,
// or nullptr. Computed matrices (pivots, Euler angles, scales) are products of affine ones, so
// only what the rules take as given can be found: user-written matrices, and a
// CompositeRotation or CompositeScale kept as written (NOTES.md: one without source components).
const float4x4* first_non_affine(const gpu::RareRecord& r, const char** name = nullptr) {
  const std::pair<const float4x4*, const char*> all[] = {
      {&r.composite_rotation, "CompositeRotation"},
      {&r.composite_scale, "CompositeScale"},
      {&r.user_parent_scale_inverse, "ParentScaleInverse"},
      {&r.user_local_to_parent, "LocalToParent"},
      {&r.user_local_to_world, "LocalToWorld"}};
  for (const auto& [m, n] : all)
    if (!affine(*m)) {
      if (name) *name = n;
      return m;
    }
  return nullptr;
}

// What one entity needs, from its packed flags (hierarchy/gpu_pack.cpp decides them) and its
// rare record (nullptr when it has none).
uint32_t entity_features(const PackedEntity& e, bool attached, const gpu::RareRecord* rare) {
  using namespace gpu;
  const uint32_t f = e.flags;
  uint32_t out = 0;
  if (f == 0) return 0;  // a dead slot is never evaluated
  constexpr uint32_t kProductPath =
      kFlagCompositeRotation | kFlagCompositeScale | kFlagParentScaleInverse;
  if (f & kProductPath) out |= kFeatureComposite;
  // A user-written matrix, or an identity that the closed form would not give: an override or a
  // LocalToParent entity that still carries components (local_matrix.glsl reads them whatever
  // the flags say, relying on absent ones being packed as identity values).
  constexpr uint32_t kComponents = kFlagTranslation | kFlagRotation | kFlagScale | kProductPath;
  if ((f & (kFlagUserWorld | kFlagUserLocal)) && (rare || (f & kComponents))) out |= kFeatureUser;
  if (f & (kFlagReadFrozen | kFlagStoreFrozen)) out |= kFeatureStatic;
  if (attached && (f & kFlagWorldFinal)) out |= kFeatureFinalTest;
  // Any matrix of the record, used or not: a cheap over-approximation, and the rule the
  // Affine3x4 output refuses by (check_affine_output). Not the inverse of the CompositeScale:
  // it is affine exactly when the CompositeScale is (a last row (0, 0, 0, 1) times the inverse
  // gives the inverse's last row), but glm::inverse rounds its [3][3] off 1 for about one
  // affine matrix in seven (measured), and an entity carrying it is checked by its
  // CompositeScale already.
  if (rare && first_non_affine(*rare) != nullptr) out |= kFeatureProjective;
  return out;
}

}  // namespace

Status Propagator::Impl::check_affine_output(const EntityStore& store) const {
  constexpr uint32_t kProjectiveBit = std::countr_zero(gpu::kFeatureProjective);
  if (!affine_output() || feature_entities[kProjectiveBit] == 0) return ok_status();
  // The counts are exact for the live entities, so one of them carries it: the first by slot.
  for (uint32_t slot = 0; slot < side.size(); ++slot) {
    if (!(side[slot].features & gpu::kFeatureProjective) || side[slot].rare == gpu::kNoIndex)
      continue;
    const char* which = "";
    const float4x4* found = first_non_affine(staged_rare(side[slot].rare), &which);
    if (!found) continue;
    const float4x4& m = *found;
    char row[128];
    std::snprintf(row, sizeof(row), "(%.9g, %.9g, %.9g, %.9g)", m[0][3], m[1][3], m[2][3],
                  m[3][3]);
    return Error{"entity " + std::to_string(store.id_at(slot)) + " carries a " + which +
                 " whose last row is " + row +
                 ", not (0, 0, 0, 1): its LocalToWorld cannot be written in the Affine3x4 "
                 "output layout (OutputLayout::Float4x4 can)"};
  }
  assert(false && "a projective entity was counted but none was found");
  return Error{"internal: a non-affine entity was counted but not found"};
}

void Propagator::Impl::reset_features() {
  for (SlotSide& e : side) e.features = 0;
  std::fill(std::begin(feature_entities), std::end(feature_entities), 0u);
}

void Propagator::Impl::note_features(uint32_t slot, const PackedEntity& e, bool attached,
                                     const gpu::RareRecord* record) {
  const uint32_t before = side[slot].features;  // side covers every slot packed
  const uint32_t after = entity_features(e, attached, record);
  if (after == before) return;  // the common case: a value changed, not what the entity needs
  static_assert(gpu::kFeatureAll < (1u << kFeatureBits));
  for (uint32_t b = 0; b < kFeatureBits; ++b) {
    const uint32_t bit = 1u << b;
    if (before & bit) {
      assert(feature_entities[b] > 0 && "feature counts follow the slots");
      --feature_entities[b];
    }
    if (after & bit) ++feature_entities[b];
  }
  side[slot].features = static_cast<uint8_t>(after);
}

uint32_t Propagator::Impl::scene_features() const {
  uint32_t f = 0;
  for (uint32_t b = 0; b < kFeatureBits; ++b)
    if (feature_entities[b]) f |= 1u << b;
  // A frozen value keeps what its first frame computed, perhaps under a non-affine matrix that
  // is gone since: a Static read back then counts as one.
  if (frozen_projective && feature_entities[std::countr_zero(gpu::kFeatureStatic)])
    f |= gpu::kFeatureProjective;
  if (skip_unchanged) f |= gpu::kFeatureSkip;
  // A root left below level 0 by an edit (hierarchy/level_order.h) keeps its own matrix in a
  // dispatch of attached entities.
  if (order.deep_roots()) f |= gpu::kFeatureFinalTest;
  return f;
}

void Propagator::Impl::trim_chains() {
  if (!skip_unchanged) return;
  std::vector<size_t> chains;  // indices into steps, by level (plan_steps emits level order)
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind == Step::Chain) chains.push_back(i);
  if (chains.empty()) return;
  // The chain holding level l, or chains.size().
  auto chain_at = [&](uint32_t l) {
    size_t lo = 0, hi = chains.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      const Step& c = steps[chains[mid]];
      if (l < c.level) hi = mid;
      else if (l >= c.level + c.count) lo = mid + 1;
      else return mid;
    }
    return chains.size();
  };
  // The entities the scatter marks this frame (the GPU's dirty[] == frame before the passes),
  // marked in side[].seen: a per-slot array of its own cost 40 MB of first touches at 10M slots,
  // in the first frame whose edits made a chain.
  const uint32_t staged_mark = next_frame_mark();
  std::vector<uint32_t> first(chains.size(), UINT32_MAX);  // each chain's first changed level
  auto mark = [&](uint32_t slot) {
    side[slot].seen = staged_mark;
    const uint32_t l = order.level_of(slot);
    if (l == LevelOrder::kNone) return;
    if (const size_t c = chain_at(l); c < chains.size()) first[c] = std::min(first[c], l);
  };
  for (uint32_t k = 0; k < value_count; ++k) mark(value_deltas.staged<gpu::ValueDelta>(k).slot);
  for (uint32_t slot : in_place_slots) mark(slot);
  for (uint32_t k = 0; k < delta_count; ++k) mark(deltas.staged<gpu::EntityDelta>(k).slot);
  // A chain whose parent above changed (it, or anything above it) changes whole. The walk up
  // stops at the last chain above, which every path from below passes through (its levels hold
  // one entity), so all the walks together cost O(levels).
  const std::span<const uint32_t> entries = order.entries();
  for (size_t c = 0; c < chains.size(); ++c) {
    const Step& chain = steps[chains[c]];
    const uint32_t top = entries[order.levels()[chain.level].begin];
    for (uint32_t x = order.parent_of(top); x != LevelOrder::kNone; x = order.parent_of(x)) {
      if (side[x].seen == staged_mark) {
        first[c] = chain.level;
        break;
      }
      const uint32_t l = order.level_of(x);
      if (const size_t above = chain_at(l); above < c) {
        if (first[above] <= l) first[c] = chain.level;
        break;
      }
    }
  }
  // Start each chain at its first change; drop those without one.
  size_t kept = 0, c = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    Step step = steps[i];
    if (step.kind == Step::Chain) {
      const uint32_t from = first[c++];
      if (from == UINT32_MAX) continue;
      step.count -= from - step.level;
      step.first = step.level = from;
    }
    steps[kept++] = step;
  }
  steps.resize(kept);
}

Status Propagator::Impl::prepare_passes() {
  const uint32_t compiled_before = pipes.compiled();
  Status st = prepare_variants();
  stats.pipelines_created = pipes.compiled() - compiled_before;
  return st;
}

Status Propagator::Impl::prepare_variants() {
  trim_chains();
  // The scatter clears dead slots' LocalToWorld in the output's layout.
  if (Status st = pipes.prepare(Pass::Scatter, storage_addressing(addressing), output_features());
      !st)
    return st;
  const uint32_t scene = scene_features();
  // The Statics this frame computes freeze what it computes.
  if ((scene & gpu::kFeatureProjective) && !pending_statics.empty()) frozen_projective = true;
  // A full frame (the scene's first, or one after growth) also makes the variants that later
  // frames of the same scene reach for (below), so that their compile (5 to 8 ms each on
  // lavapipe) lands in the frame that uploads the scene anyway, not as a hitch later.
  const bool warm = full_upload && options.specialize;
  stats.pass_features = 0;
  stats.chain_steps = 0;
  stats.bundle_steps = 0;
  stats.fused_levels = 0;
  stats.climbed_levels = 0;
  for (Step& step : steps) {
    uint32_t f = gpu::kFeatureAll;
    if (options.specialize) {
      f = scene;
      const uint32_t step_levels = step.kind == Step::Wide ? 1 : step.count;
      const bool root = step.level == 0;
      const bool deeper = step.level + step_levels > 1;
      if (deeper) f |= gpu::kFeatureParents;
      // Roots keep their own matrix: a dispatch holding them and deeper levels tests the flag
      // (the chain and bundle passes start at a root from the identity instead). Roots alone
      // multiply nothing.
      if (root && deeper && step.kind != Step::Chain && step.kind != Step::Bundle &&
          step.kind != Step::Scan)
        f |= gpu::kFeatureFinalTest;
      if (!deeper) f &= ~gpu::kFeatureFinalTest;
    }
    f |= output_features();  // the layout, specialized or not
    if (shared_wide_stores()) f |= gpu::kFeatureSharedStores;  // only the wide pass reads it
    if (step.kind == Step::Fused && s->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
      f |= gpu::kFeaturePollEach;
    step.features = f;
    // The rules and the layout, not how the matrices are stored.
    stats.pass_features |= f & ~(gpu::kFeatureSharedStores | gpu::kFeatureWordStores);
    if (step.kind == Step::Chain) ++stats.chain_steps;
    if (step.kind == Step::Bundle) ++stats.bundle_steps;
    if (step.kind == Step::Fused) stats.fused_levels += step.count;
    if (step.kind == Step::Climb) stats.climbed_levels += step.count;
    // Warming: each variant with and without skipping, and a wide level's features walked
    // narrow, as a work list of it is; below the roots, each also testing which entities keep
    // their own matrix, as the first frame that despawns a parent needs (its children stay
    // where they stand as roots: hierarchy/level_order.h).
    auto prepare_as = [&](Pass p, Addressing a, uint32_t g) {
      if (Status st = pipes.prepare(p, a, g); !st || !warm) return st;
      if (Status st = pipes.prepare(p, a, g ^ gpu::kFeatureSkip); !st) return st;
      if (!(g & gpu::kFeatureParents) || (g & gpu::kFeatureFinalTest)) return ok_status();
      if (Status st = pipes.prepare(p, a, g | gpu::kFeatureFinalTest); !st) return st;
      return pipes.prepare(p, a, (g | gpu::kFeatureFinalTest) ^ gpu::kFeatureSkip);
    };
    auto prepare = [&](Pass p, Addressing a) { return prepare_as(p, a, f); };
    const Pass narrow = narrow_pass();
    Status st = ok_status();
    switch (step.kind) {
      case Step::Wide:
        st = prepare(Pass::Wide, addressing);
        if (st && warm) st = prepare(narrow, addressing);
        break;
      case Step::Narrow:
        st = prepare(narrow, addressing);
        // And its levels grown wide: compaction brings hundreds of roots up to level 0 after a
        // despawn frame (a 4 ms compile in a forest's first spawn frame on lavapipe).
        if (st && warm && step.level == 0)
          st = prepare_as(Pass::Wide, addressing,
                          f & ~(gpu::kFeatureParents | gpu::kFeatureFinalTest));
        if (st && warm && step.level + step.count > 1)
          st = prepare_as(Pass::Wide, addressing, f | gpu::kFeatureParents);
        break;
      case Step::Fused:
        st = prepare(Pass::Fused, addressing);
        // A step from the roots tests which entities keep their own matrix; one below them (a
        // subtree moved deeper, levels added) does not.
        if (st && warm && step.level == 0 && (f & gpu::kFeatureFinalTest) &&
            !order.deep_roots())
          st = prepare_as(Pass::Fused, addressing, f & ~gpu::kFeatureFinalTest);
        // Work lists of one level with entries stay single dispatches.
        if (st && warm) st = prepare(Pass::Wide, addressing);
        if (st && warm) st = prepare(narrow, addressing);
        break;
      case Step::Climb:
        st = prepare(Pass::Climb, addressing);
        // Frames that do not climb (work lists) take these levels a dispatch or a walk each:
        // the roots alone, and the levels below with roots among them or not.
        if (st && warm)
          st = prepare_as(Pass::Wide, addressing,
                          f & ~(gpu::kFeatureParents | gpu::kFeatureFinalTest));
        if (st && warm) st = prepare_as(Pass::Wide, addressing, f & ~gpu::kFeatureFinalTest);
        if (st && warm) st = prepare_as(narrow, addressing, f & ~gpu::kFeatureFinalTest);
        break;
      case Step::Chain: st = prepare(Pass::Chain, addressing); break;
      case Step::Bundle: st = prepare(Pass::Bundle, addressing); break;
      case Step::Jump:
        for (Pass p : {Pass::JumpIndex, Pass::JumpInit, Pass::JumpRound, Pass::JumpWrite})
          if (st = prepare(p, Addressing::DeviceAddress); !st) break;
        break;
      case Step::Scan:
        for (Pass p : {Pass::ScanReduce, Pass::ScanCarry, Pass::ScanWrite})
          if (st = prepare(p, Addressing::DeviceAddress); !st) break;
        // A run whose alignment edits break is jumped whole instead (propagator_plan.cpp): the
        // first despawn in a scanned chain compiled all four then (8 ms of a lavapipe frame).
        if (warm && narrow_walk() == NarrowWalk::Jump)
          for (Pass p : {Pass::JumpIndex, Pass::JumpInit, Pass::JumpRound, Pass::JumpWrite})
            if (st && !(st = prepare(p, Addressing::DeviceAddress))) break;
        break;
    }
    if (!st) return st;
  }
  // And the narrow walk of a work list that spans the roots and the levels below them (a
  // re-parent frame's), which no step of a full frame needs.
  if (warm && !steps.empty()) {
    const uint32_t f =
        ((scene | gpu::kFeatureParents | gpu::kFeatureFinalTest) & ~gpu::kFeatureSkip) |
        output_features();
    if (Status st = pipes.prepare(narrow_pass(), addressing, f); !st) return st;
  }
  return ok_status();
}

}  // namespace tprop
