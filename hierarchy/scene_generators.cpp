#include "scene_generators.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "generator_support.h"

namespace tprop {

namespace {

constexpr const char* kUsage =
    "expected gen:chain:N, gen:flat:N, gen:forest:N[:BRANCHING], gen:mixed:N or "
    "gen:dcl:SCENES:ENTITIES";

// One link of a chain: about a unit up from its parent, turned a little.
void create_chain_link(EntityStore& store, SeededRandom& rng, EntityId id) {
  store.create(id);
  store.set_translation(id, rng.point(float3(-0.1f, 0.9f, -0.1f), float3(0.1f, 1.1f, 0.1f)));
  store.set_rotation(id, rng.small_rotation(0.05));
}

void generate_chain(EntityStore& store, SeededRandom& rng, uint32_t n) {
  store.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    create_chain_link(store, rng, i);
    if (i > 0) store.set_parent(i, i - 1);
  }
}

// A root anywhere in a 200 m box, turned any way, with a uniform scale in [min_scale, max_scale).
void create_random_root(EntityStore& store, SeededRandom& rng, EntityId id, double min_scale,
                        double max_scale) {
  store.create(id);
  store.set_translation(id, rng.point(-100, 100));
  store.set_rotation(id, rng.rotation());
  store.set_scale(id, rng.range(min_scale, max_scale));
}

void generate_flat(EntityStore& store, SeededRandom& rng, uint32_t n) {
  store.reserve(n);
  for (uint32_t i = 0; i < n; ++i) create_random_root(store, rng, i, 0.5, 2.0);
}

constexpr uint32_t kForestTreeSize = 65536;

void generate_forest(EntityStore& store, SeededRandom& rng, uint32_t n, uint32_t branching) {
  store.reserve(n);
  const uint32_t roots = (n - 1) / kForestTreeSize + 1;
  for (uint32_t i = 0; i < roots; ++i) create_random_root(store, rng, i, 0.8, 1.25);
  // Breadth first: parents in id order each take ceil(B/2)..B children, so every parent comes
  // before its children and the depth is about log_B(N).
  const uint32_t fewest = (branching + 1) / 2;
  uint32_t next = roots;
  for (uint32_t parent = 0; next < n; ++parent) {
    const uint64_t children = fewest + rng.below(branching - fewest + 1);
    for (uint64_t c = 0; c < children && next < n; ++c, ++next) {
      store.create(next);
      store.set_translation(next, rng.point(-2, 2));
      store.set_rotation(next, rng.rotation());
      store.set_scale(next, rng.range(0.8, 1.25));
      store.set_parent(next, parent);
    }
  }
}

// A wide forest that also holds a tenth of its entities in deep chains: the shape that makes a
// level-by-level propagation pay for thousands of narrow levels after a few wide ones.
constexpr uint32_t kMixedChainLength = 10000;
constexpr uint32_t kMixedBranching = 32;

void generate_mixed(EntityStore& store, SeededRandom& rng, uint32_t n) {
  const MixedShape shape = mixed_shape(n);
  generate_forest(store, rng, shape.forest, kMixedBranching);
  store.reserve(n);
  EntityId next = shape.forest;
  for (uint32_t c = 0; c < shape.chains; ++c) {
    for (uint32_t k = 0; k < shape.chain_length; ++k, ++next) {
      // Drawn before the link so that the chain's anchor comes first in the stream.
      const EntityId parent = k == 0 ? static_cast<EntityId>(rng.below(shape.forest)) : next - 1;
      create_chain_link(store, rng, next);
      store.set_parent(next, parent);
    }
  }
}

// Decentraland: parcels are 16 m squares; SDK7 scene entity numbers are 16 bits, 0 is the scene
// root and user entities start at 512.
constexpr float kParcelSize = 16.0f;
constexpr uint32_t kDclFirstUserEntity = 512;
constexpr uint32_t kDclMaxEntities = 65536 - kDclFirstUserEntity;
constexpr uint8_t kDclMaxDepth = 4;

uint32_t dcl_id_stride(uint32_t entities) { return std::bit_ceil(kDclFirstUserEntity + entities); }

void generate_dcl(EntityStore& store, SeededRandom& rng, uint32_t scenes, uint32_t entities) {
  store.reserve(size_t(scenes) * (size_t(entities) + 1));
  const uint32_t stride = dcl_id_stride(entities);
  uint32_t grid = 1;
  while (uint64_t(grid) * grid < scenes) ++grid;
  std::vector<uint8_t> depth(entities);  // levels below the scene root, per user entity
  for (uint32_t s = 0; s < scenes; ++s) {
    const EntityId root = s * stride;
    store.create(root);
    store.set_translation(
        root, float3(kParcelSize * float(s % grid), 0.0f, kParcelSize * float(s / grid)));
    for (uint32_t k = 0; k < entities; ++k) {
      const EntityId id = root + kDclFirstUserEntity + k;
      store.create(id);
      // Half hang directly under the scene root; the rest under an earlier entity unless that
      // would go deeper than kDclMaxDepth.
      EntityId parent = root;
      depth[k] = 1;
      if (k > 0 && rng.unit() >= 0.5) {
        const uint32_t j = static_cast<uint32_t>(rng.below(k));
        if (depth[j] < kDclMaxDepth) {
          parent = root + kDclFirstUserEntity + j;
          depth[k] = uint8_t(depth[j] + 1);
        }
      }
      store.set_parent(id, parent);
      if (parent == root) {
        store.set_translation(id, rng.point(float3(0), float3(kParcelSize, 4, kParcelSize)));
      } else {
        store.set_translation(id, rng.point(float3(-1, 0, -1), float3(1, 1.5f, 1)));
      }
      store.set_rotation(id, rng.yaw());
      if (k % 8 == 7) {
        store.set_non_uniform_scale(id, rng.point(0.5f, 2.0f));
      } else {
        store.set_scale(id, rng.range(0.5, 1.5));
      }
    }
  }
}

}  // namespace

bool is_generator_spec(std::string_view spec) { return spec.starts_with("gen:"); }

MixedShape mixed_shape(uint32_t n) {
  MixedShape shape;
  shape.chain_length = std::min(kMixedChainLength, n / 10);
  shape.chains = shape.chain_length == 0 ? 0 : (n / 10) / shape.chain_length;
  shape.forest = n - shape.chains * shape.chain_length;
  return shape;
}

namespace {

// generate_scene(), or with `generate` false only its judgement of the spec: an empty scene, or
// the error generating would give.
Result<Scene> read_spec(std::string_view spec, uint64_t seed, bool generate) {
  const std::vector<std::string_view> f = split_spec(spec);
  if (f.size() < 2 || f[0] != "gen") return spec_error(spec, kUsage);
  const std::string_view kind = f[1];
  const uint64_t max = kMaxGeneratedEntities;

  Scene scene;
  scene.source = std::string(spec);
  SeededRandom rng(seed);

  if (kind == "chain" || kind == "flat") {
    if (f.size() != 3) return spec_error(spec, "expected gen:" + std::string(kind) + ":N");
    auto n = parse_spec_number(spec, f[2], "N", 1, max);
    if (!n) return n.error();
    if (generate)
      (kind == "chain" ? generate_chain : generate_flat)(scene.store, rng,
                                                         static_cast<uint32_t>(*n));
  } else if (kind == "mixed") {
    if (f.size() != 3) return spec_error(spec, "expected gen:mixed:N");
    auto n = parse_spec_number(spec, f[2], "N", 1, max);
    if (!n) return n.error();
    if (generate) generate_mixed(scene.store, rng, static_cast<uint32_t>(*n));
  } else if (kind == "forest") {
    if (f.size() != 3 && f.size() != 4) {
      return spec_error(spec, "expected gen:forest:N or gen:forest:N:BRANCHING");
    }
    auto n = parse_spec_number(spec, f[2], "N", 1, max);
    if (!n) return n.error();
    uint64_t branching = 4;
    if (f.size() == 4) {
      auto b = parse_spec_number(spec, f[3], "BRANCHING", 1, 65536);
      if (!b) return b.error();
      branching = *b;
    }
    if (generate)
      generate_forest(scene.store, rng, static_cast<uint32_t>(*n),
                      static_cast<uint32_t>(branching));
  } else if (kind == "dcl") {
    if (f.size() != 4) return spec_error(spec, "expected gen:dcl:SCENES:ENTITIES");
    auto scenes = parse_spec_number(spec, f[2], "SCENES", 1, max);
    if (!scenes) return scenes.error();
    auto entities = parse_spec_number(spec, f[3], "ENTITIES", 1, kDclMaxEntities);
    if (!entities) return entities.error();
    const uint64_t total = *scenes * (*entities + 1);
    if (total > max) {
      return spec_error(spec, std::to_string(*scenes) + " scenes of 1 + " +
                                  std::to_string(*entities) + " entities make " +
                                  std::to_string(total) + " entities, more than the " +
                                  std::to_string(max) + " a generator makes");
    }
    const uint64_t stride = dcl_id_stride(static_cast<uint32_t>(*entities));
    if (*scenes * stride > (uint64_t(1) << 32)) {
      return spec_error(spec, std::to_string(*scenes) + " scenes with ids spaced " +
                                  std::to_string(stride) +
                                  " apart do not fit in 32-bit entity ids (at most " +
                                  std::to_string((uint64_t(1) << 32) / stride) + " scenes)");
    }
    if (generate)
      generate_dcl(scene.store, rng, static_cast<uint32_t>(*scenes),
                   static_cast<uint32_t>(*entities));
  } else if (kind == "dclworld") {
    return spec_error(spec, "a world of scenes replayed frame by frame, which `tprop run` plays "
                            "(README.md); it is no single scene");
  } else {
    return spec_error(spec, "unknown generator '" + std::string(kind) + "'; " + kUsage);
  }
  return scene;
}

}  // namespace

Result<Scene> generate_scene(std::string_view spec, uint64_t seed) {
  // Millions of entities a spec: running out of host memory is an error, not an exception.
  try {
    return read_spec(spec, seed, true);
  } catch (const std::bad_alloc&) {
    return out_of_memory_error("out of host memory generating the scene");
  }
}

Status check_generator_spec(std::string_view spec) {
  if (Result<Scene> empty = read_spec(spec, 0, false); !empty) return empty.error();
  return ok_status();
}

}  // namespace tprop
