// Seeded scene generators for benchmarks and demos. The same spec and seed give the same scene on
// every platform: the generators draw from std::mt19937_64 (fully specified by the standard) and
// map its bits to numbers themselves, without the standard library's distributions or any
// sin/cos, so no implementation-defined rounding enters.
//
// Specs (every number a plain decimal, at least 1):
//   gen:chain:N                one chain of N entities (ids 0..N-1, i's parent is i-1), each
//                              translated about one unit and rotated a little from its parent;
//                              N levels.
//   gen:flat:N                 N roots (ids 0..N-1) with random translation, rotation, Scale.
//   gen:forest:N[:BRANCHING]   N entities (ids 0..N-1) in ceil(N / 65536) trees (roots are ids
//                              0..trees-1), laid out breadth first; every inner node has between
//                              ceil(B/2) and B children (B = BRANCHING from 1 to 65536, default
//                              4), so the depth grows like log_B(N).
//                              Random translation, rotation and uniform Scale.
//   gen:mixed:N                a wide forest with deep chains hanging from it: ids
//                              0..F-1 are gen:forest:F:32 (random translation, rotation,
//                              Scale), then C chains of L entities (ids F + c * L + k, built like
//                              gen:chain's links), each hanging from a random forest entity.
//                              L = min(10000, N / 10), C = (N / 10) / L (0 when L is 0),
//                              F = N - C * L: about a tenth of the entities sit in chains, so
//                              100,000 entities have one 10,000-deep chain and 10 million have
//                              100; the depth is the forest's plus L.
//   gen:dcl:SCENES:ENTITIES    SCENES independent Decentraland-like scenes on a square grid of
//                              16 m parcels. Scene s owns the ids [s * stride, (s + 1) * stride),
//                              stride the power of two >= 512 + ENTITIES: its root is id
//                              s * stride (entity 0 of a Decentraland scene) at the parcel
//                              offset, and its ENTITIES entities are s * stride + 512 + k (512
//                              being where SDK7 user entities start), up to 4 levels below the
//                              root, with translation, yaw rotation and scale. Scales are mostly
//                              uniform (Scale); every 8th entity has a non-uniform scale
//                              (NonUniformScale), which keeps 10 million entities in memory
//                              (NonUniformScale lives in the store's ~0.5 KB rare record).
//                              ENTITIES <= 65024 (16-bit Decentraland entity numbers).
// At most kMaxGeneratedEntities entities in all.
#pragma once

#include <cstdint>
#include <string_view>

#include "result.h"
#include "scene.h"

namespace tprop {

inline constexpr uint64_t kMaxGeneratedEntities = 100'000'000;

// The parts of gen:mixed:N (see above).
struct MixedShape {
  uint32_t forest = 0;        // entities of the forest: ids 0..forest-1
  uint32_t chains = 0;        // chains hanging from it
  uint32_t chain_length = 0;  // entities per chain
};
MixedShape mixed_shape(uint32_t n);

// Whether spec asks for a generator ("gen:..."), well-formed or not.
bool is_generator_spec(std::string_view spec);

// Builds the scene spec names, or an Error that says what is wrong with the spec.
// Scene::source is the spec; generated scenes have no names and no warnings.
Result<Scene> generate_scene(std::string_view spec, uint64_t seed);
// The error generate_scene() would give for the spec, without generating anything: a tool that
// runs many specs judges them all before the first one's minutes of work.
Status check_generator_spec(std::string_view spec);

}  // namespace tprop
