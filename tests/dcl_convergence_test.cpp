// Convergence: the world matrices never depend on the order in which messages arrived nor on
// duplicates. Small sets go through every permutation and are checked against hand-computed
// matrices; large random sets (reparenting, cycles, ties, deletes, dead entities) go through many
// shuffles, in chunks of bytes too, and are checked bit for bit against the first order and,
// within rounding, against an oracle that derives the final state and the matrices on its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "dcl_scene.h"
#include "depth_order.h"
#include "dcl_test_support.h"
#include "reference.h"

namespace tprop {
namespace {

using namespace dcl_test;  // messages, transforms and the oracle of dcl_test_support.h

using WorldById = std::map<EntityId, float4x4>;

WorldById world_of(const std::vector<CrdtMessage>& messages) {
  DclScene dcl;
  dcl.apply(messages);
  const auto w = world_matrices_by_id(dcl.store());
  return WorldById(w.begin(), w.end());
}

float4x4 T(float x, float y, float z) { return translation_matrix(float3(x, y, z)); }

// Runs every permutation of `messages` (by index, so duplicates count as distinct) and checks
// each result equals the first bit for bit and the hand-computed `expected` within rounding.
void every_permutation_converges(const std::vector<CrdtMessage>& messages,
                                 const WorldById& expected) {
  std::vector<size_t> index(messages.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = i;
  const WorldById first = world_of(messages);
  ASSERT_EQ(first.size(), expected.size());
  for (const auto& [id, m] : expected) {
    ASSERT_TRUE(first.count(id)) << "entity " << id;
    EXPECT_TRUE(near(first.at(id), m)) << "entity " << id;
  }
  size_t runs = 0;
  std::vector<CrdtMessage> order(messages.size());
  do {
    for (size_t i = 0; i < index.size(); ++i) order[i] = messages[index[i]];
    const WorldById got = world_of(order);
    ASSERT_EQ(got, first) << "permutation " << runs;
    ++runs;
  } while (std::next_permutation(index.begin(), index.end()));
  EXPECT_GT(runs, 1000u);
}

TEST(DclConvergence, EveryOrderOfAReparentingCycleAndDeletesGivesTheSameMatrices) {
  const std::vector<CrdtMessage> messages = {
      put_transform(1, 1, at({1, 0, 0}, 0)),
      put_transform(2, 1, at({0, 1, 0}, 1)),
      put_transform(3, 1, at({0, 0, 1}, 2)),
      put_transform(1, 2, at({2, 0, 0}, 3)),  // closes 1 -> 3 -> 2 -> 1
      put_transform(4, 1, at({0, 0, 4}, 3)),  // hangs below the cycle
      delete_transform(2, 2),                 // breaks it: 2 identity at the root
      CrdtMessage::delete_entity(5),
      put_transform(5, 3, at({9, 9, 9}, 0)),  // dead whatever the order
  };
  // 2 identity; 3 at (0,0,1) under 2; 1 at (2,0,0) under 3; 4 at (0,0,4) under 3.
  every_permutation_converges(messages, {{1, T(2, 0, 1)},
                                         {2, float4x4(1.0f)},
                                         {3, T(0, 0, 1)},
                                         {4, T(0, 0, 5)}});
}

TEST(DclConvergence, EveryOrderWithTiesDuplicatesAndAnUnresolvedCycleGivesTheSameMatrices) {
  const std::vector<CrdtMessage> messages = {
      put_transform(1, 1, at({1, 0, 0}, 2)),
      put_transform(2, 1, at({0, 1, 0}, 1)),    // 1 <-> 2 until the tie below resolves it
      put_transform(3, 1, at({0, 0, 1}, 2)),
      // Same lamport, same length: the larger bytes win, and y = 0.5 (00 00 00 3f) is larger
      // than y = 0 at the first byte that differs, before the parent bytes.
      put_transform(1, 1, at({1, 0.5f, 0}, 0)),
      put_transform(2, 1, at({0, 1, 0}, 1)),    // duplicate
      delete_transform(3, 0),                   // older: loses
      put_transform(6, 4, at({0, 0, 6}, 7)),    // 6 <-> 7 stays a cycle
      put_transform(7, 4, at({0, 7, 0}, 6)),
  };
  every_permutation_converges(messages, {{1, T(1, 0.5f, 0)},
                                         {2, T(1, 1.5f, 0)},
                                         {3, T(1, 1.5f, 1)},
                                         {6, T(0, 0, 6)},
                                         {7, T(0, 7, 0)}});
}

// The final state derived independently: the dead set, then per entity the winning Transform
// under (lamport, put over delete, data length, data bytes), then the spec's matrices.
WorldById oracle_world(const std::vector<CrdtMessage>& messages) {
  std::map<uint16_t, uint16_t> dead;
  for (const CrdtMessage& m : messages)
    if (m.type == CrdtMessageType::DeleteEntity) {
      auto [it, inserted] = dead.try_emplace(dcl_entity_number(m.entity), dcl_entity_version(m.entity));
      if (!inserted) it->second = std::max(it->second, dcl_entity_version(m.entity));
    }
  auto is_dead = [&](EntityId e) {
    auto it = dead.find(dcl_entity_number(e));
    return it != dead.end() && dcl_entity_version(e) <= it->second;
  };
  using Key = std::tuple<uint32_t, bool, size_t, std::vector<uint8_t>>;  // bool: is a put
  std::map<EntityId, Key> best;
  std::set<EntityId> live;
  for (const CrdtMessage& m : messages) {
    if (is_dead(m.entity)) continue;
    live.insert(m.entity);
    if (m.type == CrdtMessageType::DeleteEntity || m.component != kDclTransformComponentId) continue;
    const bool is_put = m.type == CrdtMessageType::PutComponent;
    Key k{m.lamport, is_put, is_put ? m.data.size() : 0, is_put ? m.data : std::vector<uint8_t>{}};
    auto it = best.find(m.entity);
    if (it == best.end() || it->second < k) best[m.entity] = k;
  }
  std::map<EntityId, DclTransform> transforms;
  for (const auto& [e, k] : best)
    if (std::get<1>(k)) transforms[e] = *decode_dcl_transform(std::get<3>(k));
  const dcl_test::Oracle oracle(transforms);
  WorldById out;
  for (EntityId e : live)
    if (e != 0) out[e] = oracle.world(e);
  return out;
}

TEST(DclConvergence, ShufflesOfLargeRandomSetsGiveIdenticalMatricesThatMatchTheOracle) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::vector<CrdtMessage> messages = random_messages(400, seed);
    const WorldById first = world_of(messages);
    const WorldById expected = oracle_world(messages);
    ASSERT_EQ(first.size(), expected.size()) << "seed " << seed;
    for (const auto& [id, m] : expected) {
      ASSERT_TRUE(first.count(id)) << "entity " << id;
      EXPECT_TRUE(near(first.at(id), m, 1e-3f)) << "seed " << seed << " entity " << id;
    }
    std::mt19937 rng(seed * 7919u);
    for (int shuffle = 0; shuffle < 15; ++shuffle) {
      std::shuffle(messages.begin(), messages.end(), rng);
      ASSERT_EQ(world_of(messages), first) << "seed " << seed << " shuffle " << shuffle;
    }
    // The same through the byte stream, in chunks of random size.
    std::shuffle(messages.begin(), messages.end(), rng);
    const std::vector<uint8_t> bytes = encode_crdt_messages(messages);
    DclScene dcl;
    for (size_t pos = 0; pos < bytes.size();) {
      const size_t chunk = std::min<size_t>(1 + rng() % 97, bytes.size() - pos);
      ASSERT_TRUE(dcl.feed(std::span<const uint8_t>(bytes).subspan(pos, chunk)));
      pos += chunk;
    }
    ASSERT_TRUE(dcl.finish());
    const auto streamed = world_matrices_by_id(dcl.store());
    EXPECT_EQ(WorldById(streamed.begin(), streamed.end()), first) << "seed " << seed;
    // The set exercises what it claims: cycles, unknown parents, deep attachments.
    const DepthOrder order = sort_by_depth(dcl.store());
    EXPECT_GT(order.cycles_broken, 0u) << "seed " << seed;
    EXPECT_GT(order.unknown_parents, 0u) << "seed " << seed;
    EXPECT_GT(order.level_count(), 3u) << "seed " << seed;
    EXPECT_GT(dcl.state().counts().dead_entity + dcl.state().counts().outdated, 0u);
  }
}

TEST(DclConvergence, ApplyingInFramesOrAllAtOnceGivesTheSameStore) {
  std::vector<CrdtMessage> messages = random_messages(300, 11);
  DclScene framed;
  for (size_t pos = 0; pos < messages.size(); pos += 97) {
    const size_t end = std::min(messages.size(), pos + 97);
    framed.apply(std::span<const CrdtMessage>(messages).subspan(pos, end - pos));
    (void)framed.store().take_changes();
  }
  const auto w = world_matrices_by_id(framed.store());
  EXPECT_EQ(WorldById(w.begin(), w.end()), world_of(messages));
}

}  // namespace
}  // namespace tprop
