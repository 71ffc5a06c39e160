// A world of Decentraland scenes in one store: every scene's LocalToWorld must be what the
// single-scene path (DclScene on its own store) gives for the same stream, multiplied by the
// scene's parcel translation, whatever the frames, the chunking, the loading and unloading.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

#include "compare.h"
#include "dcl_scene.h"
#include "dcl_test_support.h"
#include "dcl_world.h"
#include "dcl_world_gen.h"
#include "depth_order.h"
#include "reference.h"

namespace tprop {
namespace {

using namespace dcl_test;
using SceneId = DclWorld::SceneId;

float4x4 T(float x, float y, float z) { return translation_matrix(float3(x, y, z)); }

struct Evaluated {
  DepthOrder order;
  std::vector<float4x4> local_to_world;

  explicit Evaluated(const EntityStore& store) : local_to_world(evaluate_once(store, &order)) {}
  float4x4 of(const EntityStore& store, EntityId id) const {
    return local_to_world[order.position[store.slot_of(id)]];
  }
};

// Applies m to scene s, which must take it (only a scene that failed refuses a message).
void apply(DclWorld& w, SceneId s, const CrdtMessage& m) {
  const Result<CrdtApplyResult> r = w.apply(s, m);
  ASSERT_TRUE(r) << r.error().message;
}

float4x4 world_of(const DclWorld& w, SceneId s, EntityId e) {
  const std::optional<EntityId> id = w.store_id(s, e);
  EXPECT_TRUE(id) << "scene " << s << " holds no entity " << e;
  return id ? Evaluated(w.store()).of(w.store(), *id) : float4x4(0.0f);
}

// Every live entity of `single` is in scene s of the world at the parcel offset, the scene has
// no other store entity than those and its root, and the world leaves no cycle nor unknown
// parent to the depth sort (it resolves them at the scene root itself).
::testing::AssertionResult scene_matches(const DclWorld& w, const Evaluated& ev, SceneId s,
                                         const DclScene& single) {
  if (ev.order.cycles_broken != 0 || ev.order.unknown_parents != 0)
    return ::testing::AssertionFailure() << "the world store has " << ev.order.cycles_broken
                                         << " cycles and " << ev.order.unknown_parents
                                         << " unknown parents";
  const auto expected = world_matrices_by_id(single.store());
  const float4x4 offset = translation_matrix(dcl_parcel_position(w.parcel(s)));
  size_t in_scene = 0;
  for (uint32_t slot = 0; slot < w.store().slot_capacity(); ++slot)
    in_scene += w.store().alive_at(slot) && (w.store().id_at(slot) >> 16) == s;
  if (in_scene != single.store().size() + 1)
    return ::testing::AssertionFailure() << "scene " << s << " has " << in_scene
                                         << " store entities, the single scene "
                                         << single.store().size() << " plus the root";
  for (const auto& [e, matrix] : expected) {
    const std::optional<EntityId> id = w.store_id(s, e);
    if (!id) return ::testing::AssertionFailure() << "scene " << s << " lacks entity " << e;
    const float4x4 want = offset * matrix;
    const float4x4 got = ev.of(w.store(), *id);
    const float tolerance = local_to_world_tolerance(want, 8);
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r)
        if (!(std::fabs(got[c][r] - want[c][r]) <= tolerance))
          return ::testing::AssertionFailure()
                 << "scene " << s << " entity " << e << " [" << c << "][" << r << "]: world "
                 << got[c][r] << ", single scene offset by its parcel " << want[c][r];
  }
  return ::testing::AssertionSuccess();
}

TEST(DclWorld, RootStandsAtItsParcelAndEntitiesWithoutTransformHangBelowIt) {
  DclWorld w;
  const SceneId s = w.add_scene("a", {-3, 7}).value();
  EXPECT_EQ(dcl_parcel_position({-3, 7}), float3(-48, 0, 112));
  apply(w, s, CrdtMessage::put(600, 1099, 1, {0x01}));    // another component only
  apply(w, s, put_transform(601, 1, at({1, 2, 3}, 0)));  // parent 0: the scene root
  EXPECT_TRUE(near(world_of(w, s, 0), T(-48, 0, 112)));
  EXPECT_TRUE(near(world_of(w, s, 600), T(-48, 0, 112)));
  EXPECT_TRUE(near(world_of(w, s, 601), T(-47, 2, 115)));
  EXPECT_EQ(w.store().size(), 3u);
}

TEST(DclWorld, TheSameNumbersInTwoScenesAreDistinctEntities) {
  DclWorld w;
  const SceneId a = w.add_scene("a", {0, 0}).value();
  const SceneId b = w.add_scene("b", {2, -1}).value();
  for (SceneId s : {a, b}) {
    apply(w, s, put_transform(512, 1, at({1, 0, 0}, 0)));
    apply(w, s, put_transform(513, 1, at({0, 1, 0}, 512)));
  }
  EXPECT_NE(*w.store_id(a, 513), *w.store_id(b, 513));
  EXPECT_TRUE(near(world_of(w, a, 513), T(1, 1, 0)));
  EXPECT_TRUE(near(world_of(w, b, 513), T(33, 1, -16)));
  apply(w, b, put_transform(513, 2, at({0, 5, 0}, 512)));  // moves b's only
  EXPECT_TRUE(near(world_of(w, a, 513), T(1, 1, 0)));
  EXPECT_TRUE(near(world_of(w, b, 513), T(33, 5, -16)));
}

TEST(DclWorld, ParentSeenLaterWaitsAtTheSceneRootThenAttaches) {
  DclWorld w;
  const SceneId s = w.add_scene("a", {1, 1}).value();
  apply(w, s, put_transform(700, 1, at({0, 1, 0}, 701)));
  // Not at the world origin: at the scene root, as the single-scene path puts it at its root.
  EXPECT_TRUE(near(world_of(w, s, 700), T(16, 1, 16)));
  apply(w, s, put_transform(701, 1, at({5, 0, 0}, 0)));
  EXPECT_TRUE(near(world_of(w, s, 700), T(21, 1, 16)));
  // Another version of the parent's number is another entity: 702 waits for (701, v1) only.
  apply(w, s, put_transform(702, 1, at({0, 0, 2}, dcl_entity_id(701, 1))));
  EXPECT_TRUE(near(world_of(w, s, 702), T(16, 0, 18)));
}

TEST(DclWorld, CycleMembersStandAtTheSceneRootUntilResolved) {
  DclWorld w;
  const SceneId s = w.add_scene("a", {0, 2}).value();
  apply(w, s, put_transform(1, 1, at({1, 0, 0}, 2)));
  apply(w, s, put_transform(2, 1, at({0, 1, 0}, 1)));
  apply(w, s, put_transform(3, 1, at({0, 0, 1}, 1)));  // below the cycle: keeps its parent
  apply(w, s, put_transform(4, 1, at({2, 0, 0}, 4)));  // its own parent
  const Evaluated ev(w.store());
  EXPECT_EQ(ev.order.cycles_broken, 0u);
  EXPECT_TRUE(near(ev.of(w.store(), *w.store_id(s, 1)), T(1, 0, 32)));
  EXPECT_TRUE(near(ev.of(w.store(), *w.store_id(s, 2)), T(0, 1, 32)));
  EXPECT_TRUE(near(ev.of(w.store(), *w.store_id(s, 3)), T(1, 0, 33)));
  EXPECT_TRUE(near(ev.of(w.store(), *w.store_id(s, 4)), T(2, 0, 32)));
  EXPECT_TRUE(near(ev.local_to_world[ev.order.position[*w.store_slot(s, 4)]], T(2, 0, 32)));
  EXPECT_FALSE(w.store_slot(s, 5));
  apply(w, s, put_transform(2, 2, at({0, 1, 0}, 0)));  // resolved: 1 hangs below 2 again
  EXPECT_TRUE(near(world_of(w, s, 1), T(1, 1, 32)));
  EXPECT_TRUE(near(world_of(w, s, 3), T(1, 1, 33)));
}

TEST(DclWorld, DeadParentLeavesChildrenAtTheSceneRootEvenWhenItsNumberIsReused) {
  DclWorld w;
  const SceneId s = w.add_scene("a", {0, 0}).value();
  apply(w, s, put_transform(10, 1, at({5, 0, 0}, 0)));
  apply(w, s, put_transform(11, 1, at({0, 1, 0}, 10)));
  EXPECT_TRUE(near(world_of(w, s, 11), T(5, 1, 0)));
  apply(w, s, CrdtMessage::delete_entity(10));
  EXPECT_FALSE(w.store_id(s, 10));
  EXPECT_TRUE(near(world_of(w, s, 11), T(0, 1, 0)));
  // The SDK reuses number 10 at version 1: 11 still names (10, v0), which stays dead.
  apply(w, s, put_transform(dcl_entity_id(10, 1), 1, at({7, 0, 0}, 0)));
  EXPECT_TRUE(near(world_of(w, s, 11), T(0, 1, 0)));
  EXPECT_TRUE(near(world_of(w, s, dcl_entity_id(10, 1)), T(7, 0, 0)));
}

TEST(DclWorld, SecondLiveVersionIsShadowedUntilTheHeldOneDies) {
  DclWorld w;
  const SceneId s = w.add_scene("a", {0, 0}).value();
  const EntityId v0 = dcl_entity_id(20, 0), v3 = dcl_entity_id(20, 3);
  apply(w, s, put_transform(v0, 1, at({1, 0, 0}, 0)));
  apply(w, s, put_transform(v3, 1, at({3, 0, 0}, 0)));
  apply(w, s, put_transform(21, 1, at({0, 1, 0}, v3)));
  EXPECT_EQ(w.shadowed(s), 1u);
  EXPECT_FALSE(w.store_id(s, v3));
  EXPECT_TRUE(near(world_of(w, s, 21), T(0, 1, 0)));  // waits for v3
  apply(w, s, CrdtMessage::delete_entity(v0));         // kills v0 only
  EXPECT_EQ(w.shadowed(s), 0u);
  EXPECT_TRUE(near(world_of(w, s, v3), T(3, 0, 0)));
  EXPECT_TRUE(near(world_of(w, s, 21), T(3, 1, 0)));
}

TEST(DclWorld, RemovingASceneDestroysExactlyItsEntitiesAndItsSlotIsReused) {
  DclWorld w;
  const SceneId a = w.add_scene("a", {0, 0}).value();
  const SceneId b = w.add_scene("b", {4, 0}).value();
  for (EntityId e = 512; e < 612; ++e) {
    apply(w, a, put_transform(e, 1, at({1, 0, 0}, e == 512 ? 0 : e - 1)));
    apply(w, b, put_transform(e, 1, at({0, 1, 0}, e == 512 ? 0 : e - 1)));
  }
  apply(w, a, put_transform(700, 1, at({0, 0, 1}, 701)));  // waiting
  apply(w, a, put_transform(702, 1, at({0, 0, 1}, 702)));  // on a cycle
  EXPECT_EQ(w.store().size(), 2u + 200u + 2u);
  (void)w.store().take_changes();
  ASSERT_TRUE(w.remove_scene(a));
  EXPECT_FALSE(w.has_scene(a));
  EXPECT_EQ(w.store().size(), 101u);
  EXPECT_TRUE(w.store().take_changes().hierarchy);
  EXPECT_TRUE(near(world_of(w, b, 611), T(64, 100, 0)));
  const SceneId c = w.add_scene("c", {0, 9}).value();
  EXPECT_EQ(c, a);  // the freed slot
  apply(w, c, put_transform(701, 1, at({0, 0, 0}, 0)));
  EXPECT_FALSE(w.store_id(c, 700));  // nothing of a's stream lives on in c
  EXPECT_TRUE(near(world_of(w, c, 701), T(0, 0, 144)));
  EXPECT_EQ(w.scenes(), (std::vector<SceneId>{a, b}));
}

// feed() applies messages some way behind reading them (in batches): the ones before a
// malformed message are applied all the same, and the error names the scene and the offset.
TEST(DclWorld, MessagesBeforeAMalformedOneAreAppliedAndTheErrorNamesTheScene) {
  DclWorld w;
  const SceneId s = w.add_scene("broken", {0, 0}).value();
  std::vector<CrdtMessage> good;
  for (EntityId e = 512; e < 552; ++e) good.push_back(put_transform(e, 1, at({1, 0, 0}, 0)));
  std::vector<uint8_t> bytes = encode_crdt_messages(good);
  const size_t offset = bytes.size();
  const std::vector<uint8_t> bad = hex("0c 00 00 00  09 00 00 00  05 00 00 00");
  bytes.insert(bytes.end(), bad.begin(), bad.end());
  const Status st = w.feed(s, bytes);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("scene 'broken'"), std::string::npos) << st.error().message;
  EXPECT_NE(st.error().message.find("offset " + std::to_string(offset)), std::string::npos)
      << st.error().message;
  EXPECT_EQ(w.store().size(), 41u);  // the 40 entities and the root
  EXPECT_TRUE(near(world_of(w, s, 551), T(1, 0, 0)));
}

// Every store slot holds the same entity with the same values in both stores.
::testing::AssertionResult same_store(const EntityStore& a, const EntityStore& b) {
  if (a.slot_capacity() != b.slot_capacity())
    return ::testing::AssertionFailure() << a.slot_capacity() << " vs " << b.slot_capacity();
  for (uint32_t s = 0; s < a.slot_capacity(); ++s) {
    if (a.alive_at(s) != b.alive_at(s)) return ::testing::AssertionFailure() << "slot " << s;
    if (!a.alive_at(s)) continue;
    if (a.id_at(s) != b.id_at(s) || a.mask_at(s) != b.mask_at(s) ||
        a.parent_at(s) != b.parent_at(s) || a.translation_at(s) != b.translation_at(s) ||
        a.rotation_at(s) != b.rotation_at(s) || a.scale_at(s) != b.scale_at(s) ||
        a.non_uniform_scale_at(s) != b.non_uniform_scale_at(s))
      return ::testing::AssertionFailure() << "slot " << s << " (entity " << a.id_at(s) << ")";
  }
  return ::testing::AssertionSuccess();
}

// The feed of many chunks at once does what feeding them one by one does, to the store slot,
// and reports each chunk's own status: a malformed stream fails its scene alone.
TEST(DclWorld, FeedingManyChunksAtOnceEqualsFeedingThemOneByOne) {
  Result<DclWorldStreams> streams = generate_dcl_world("gen:dclworld:6:1", 8, 5);
  ASSERT_TRUE(streams);
  DclWorld one_by_one, at_once;
  std::vector<SceneId> ids;
  for (const DclWorldScene& sc : streams->scenes) {
    ids.push_back(one_by_one.add_scene(sc.name, sc.parcel).value());
    ASSERT_EQ(at_once.add_scene(sc.name, sc.parcel).value(), ids.back());
  }
  const std::vector<uint8_t> bad = hex("0c 00 00 00  09 00 00 00  05 00 00 00");
  for (uint32_t f = 0; f < 8; ++f) {
    std::vector<DclWorld::Chunk> chunks;
    for (size_t i = 0; i < ids.size(); ++i) {
      // Scene 2's stream breaks in frame 5, and scene 4 comes twice in frame 3.
      const bool broken = i == 2 && f == 5;
      chunks.push_back({ids[i], broken ? std::span<const uint8_t>(bad)
                                       : streams->scenes[i].chunk(f)});
      if (i == 4 && f == 3) chunks.push_back({ids[i], {}});
    }
    const std::vector<Status> statuses = at_once.feed(chunks);
    ASSERT_EQ(statuses.size(), chunks.size());
    for (size_t c = 0; c < chunks.size(); ++c) {
      const Status expected = one_by_one.feed(chunks[c].scene, chunks[c].bytes);
      ASSERT_EQ(bool(statuses[c]), bool(expected)) << "frame " << f << ", chunk " << c;
      if (!expected) {
        EXPECT_EQ(statuses[c].error().message, expected.error().message);
        EXPECT_NE(expected.error().message.find("scene '" + streams->scenes[2].name + "'"),
                  std::string::npos)
            << expected.error().message;
      }
    }
    ASSERT_TRUE(same_store(at_once.store(), one_by_one.store())) << "frame " << f;
  }
  EXPECT_GT(at_once.store().size(), 1000u);  // the streams did fill the store
}

// A feed applies its messages in batches, a move of a held entity by a shorter path chosen when
// the batch is read: an earlier message of the same batch that re-parents, kills or re-creates
// that entity, or a move that loses to the value held, must leave what applying one message at
// a time leaves.
TEST(DclWorld, MovesBehindAnEditOfTheirEntityInOneFeedEndAsAppliedOneByOne) {
  std::vector<uint8_t> setup, frame;
  for (const CrdtMessage& m : {put_transform(10, 1, at({5, 0, 0}, 0)),
                               put_transform(11, 1, at({0, 7, 0}, 0)),
                               put_transform(12, 1, at({0, 0, 1}, 10)),
                               put_transform(13, 1, at({3, 0, 0}, 0)),
                               put_transform(14, 1, at({0, 4, 0}, 0))})
    append_crdt_message(m, setup);
  for (const CrdtMessage& m : {
           put_transform(12, 2, at({0, 0, 2}, 11)),  // re-parented under 11...
           put_transform(12, 3, at({1, 2, 3}, 10)),  // ...and back under 10 in the same batch
           CrdtMessage::delete_entity(13),
           put_transform(13, 5, at({9, 9, 9}, 0)),  // its entity is dead: ignored
           CrdtMessage::delete_entity(14),
           put_transform(dcl_entity_id(14, 1), 1, at({0, 0, 6}, 0)),  // the number reused...
           put_transform(dcl_entity_id(14, 1), 2, at({0, 0, 8}, 11)),  // ...and re-parented
           put_transform(11, 0, at({4, 4, 4}, 0)),   // an older lamport: loses
           put_transform(10, 2, at({6, 0, 0}, 0))})  // a plain move
    append_crdt_message(m, frame);
  DclWorld w;
  const SceneId s = w.add_scene("a", {2, 0}).value();
  DclScene single;
  for (const std::vector<uint8_t>* bytes : {&setup, &frame}) {
    ASSERT_TRUE(w.feed(s, *bytes));
    ASSERT_TRUE(single.feed(*bytes));
  }
  const Evaluated ev(w.store());
  EXPECT_TRUE(scene_matches(w, ev, s, single));
  EXPECT_TRUE(near(ev.of(w.store(), *w.store_id(s, 12)), T(32 + 6 + 1, 2, 3)));
  EXPECT_FALSE(w.store_id(s, 13));
  EXPECT_FALSE(w.store_id(s, 14));
  EXPECT_TRUE(near(ev.of(w.store(), *w.store_id(s, dcl_entity_id(14, 1))), T(32, 7, 8)));
  EXPECT_TRUE(near(ev.of(w.store(), *w.store_id(s, 11)), T(32, 7, 0)));
}

TEST(DclWorld, AddingBeyondTheSlotLimitIsAClearError) {
  DclWorld w;
  for (uint32_t i = 0; i < DclWorld::kMaxScenes; ++i) ASSERT_TRUE(w.add_scene("s", {0, 0}));
  Result<SceneId> more = w.add_scene("one too many", {0, 0});
  ASSERT_FALSE(more);
  EXPECT_NE(more.error().message.find("65536"), std::string::npos) << more.error().message;
  ASSERT_TRUE(w.remove_scene(77));
  EXPECT_EQ(w.add_scene("again", {0, 0}).value(), 77u);
}

// Replays `streams` frame by frame into a world and into one DclScene per scene (re-created
// when the scene loads again), comparing every loaded scene after every frame.
void replay_and_compare(const DclWorldStreams& streams, uint32_t frames) {
  DclWorld w;
  std::vector<std::optional<SceneId>> ids(streams.scenes.size());
  std::vector<std::unique_ptr<DclScene>> singles(streams.scenes.size());
  for (uint32_t f = 0; f < frames; ++f) {
    for (size_t i = 0; i < streams.scenes.size(); ++i) {
      const DclWorldScene& sc = streams.scenes[i];
      if (ids[i] && sc.unload_frame == f) {
        ASSERT_TRUE(w.remove_scene(*ids[i]));
        ids[i].reset();
        singles[i].reset();
      }
      if (f == sc.load_frame) {
        ids[i] = w.add_scene(sc.name, sc.parcel).value();
        singles[i] = std::make_unique<DclScene>();
      }
      if (!ids[i]) continue;
      ASSERT_TRUE(w.feed(*ids[i], sc.chunk(f - sc.load_frame)));
      ASSERT_TRUE(singles[i]->feed(sc.chunk(f - sc.load_frame)));
    }
    const Evaluated ev(w.store());
    size_t expected_size = 0;
    for (size_t i = 0; i < streams.scenes.size(); ++i) {
      if (!ids[i]) continue;
      expected_size += singles[i]->store().size() + 1;
      ASSERT_TRUE(scene_matches(w, ev, *ids[i], *singles[i])) << "frame " << f;
      EXPECT_EQ(w.shadowed(*ids[i]), 0u);
    }
    EXPECT_EQ(w.store().size(), expected_size) << "frame " << f;
  }
}

TEST(DclWorld, GeneratedWorldMatchesSingleScenesFrameByFrame) {
  Result<DclWorldStreams> streams = generate_dcl_world("gen:dclworld:4:1", 10, 3);
  ASSERT_TRUE(streams);
  // The generator ties cycles on frames 1, 5, 9: the single-scene path must see them.
  DclScene probe;
  const DclWorldScene& first = streams->scenes[0];
  ASSERT_TRUE(probe.feed(first.chunk(0)));
  ASSERT_TRUE(probe.feed(first.chunk(1)));
  DepthOrder order;
  (void)evaluate_once(probe.store(), &order);
  EXPECT_EQ(order.cycles_broken, 1u);
  replay_and_compare(*streams, 10);
}

// Issue 10's frame (moves keeping their parents, deletions and creations): no cycle, no
// re-parent but those of the children of deleted entities.
TEST(DclWorld, GeneratedWorldOfSpawnsMatchesSingleScenesFrameByFrame) {
  Result<DclWorldStreams> streams = generate_dcl_world("gen:dclworld:4:1:edits=spawn", 10, 3);
  ASSERT_TRUE(streams);
  replay_and_compare(*streams, 10);
}

TEST(DclWorld, ScenesLoadedAndUnloadedMidStreamMatchSingleScenes) {
  Result<DclWorldStreams> streams = generate_dcl_world("gen:dclworld:5:1", 8, 11);
  ASSERT_TRUE(streams);
  streams->scenes[1].load_frame = 2;     // arrives late
  streams->scenes[2].unload_frame = 3;   // leaves mid-stream
  streams->scenes[3].load_frame = 1;     // comes, goes, comes back from its start
  streams->scenes[3].unload_frame = 4;
  DclWorldScene again = streams->scenes[3];
  again.load_frame = 5;
  again.unload_frame.reset();
  again.name = "again";
  streams->scenes.push_back(std::move(again));
  replay_and_compare(*streams, 12);
}

// Any cut of the streams, interleaved across scenes, gives the same world as the single scenes.
TEST(DclWorld, StreamsArrivingInRandomChunksMatchSingleScenes) {
  Result<DclWorldStreams> streams = generate_dcl_world("gen:dclworld:3:1", 6, 5);
  ASSERT_TRUE(streams);
  std::mt19937 rng(17);
  for (DclWorldScene& sc : streams->scenes) {
    sc.frame_starts.clear();
    for (uint64_t at = rng() % 300; at < sc.stream.size(); at += 1 + rng() % 3000)
      sc.frame_starts.push_back(at);
  }
  replay_and_compare(*streams, streams->frame_count());
}

// The random message sets of the convergence tests (cycles, self-parents, unknown parents,
// Transform deletes, entity deletes, other components, duplicates, shuffled lamports), with one
// version a number so that the world holds every live entity.
TEST(DclWorld, RandomMessagesMatchSingleScenes) {
  DclWorldStreams streams;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    DclWorldScene sc;
    sc.name = "random" + std::to_string(seed);
    sc.parcel = {int32_t(seed) * 3 - 6, int32_t(seed)};
    for (CrdtMessage m : random_messages(300, seed)) {
      m.entity = dcl_entity_number(m.entity);
      if (m.component == kDclTransformComponentId && crdt_type_has_data(m.type)) {
        if (std::optional<DclTransform> t = decode_dcl_transform(m.data)) {
          t->parent = dcl_entity_number(t->parent);
          const auto bytes = encode_dcl_transform(*t);
          m.data.assign(bytes.begin(), bytes.end());
        }
      }
      if (sc.stream.size() > 0 && m.entity % 97 == 0) sc.frame_starts.push_back(sc.stream.size());
      append_crdt_message(m, sc.stream);
    }
    streams.scenes.push_back(std::move(sc));
  }
  replay_and_compare(streams, streams.frame_count());
}

// A player walking east from the city's corner one parcel a frame, with a view of 2 parcels:
// each scene (a strip of 4 parcels along x) is loaded exactly in the frames where one of its
// parcels lies within 2 parcels of the player along x and y, found here parcel by parcel.
TEST(DclWorldGen, WalkingPlayerLoadsScenesInViewAndUnloadsThemBehind) {
  constexpr uint32_t kFrames = 40, kParcels = 4, kView = 2;
  Result<DclWorldStreams> streams = generate_dcl_world("gen:dclworld:160:4:walk=2", kFrames, 6);
  ASSERT_TRUE(streams) << streams.error().message;
  std::map<std::string, const DclWorldScene*> generated;
  for (const DclWorldScene& sc : streams->scenes) generated[sc.name] = &sc;
  size_t mid_run_loads = 0, unloads = 0;
  for (uint32_t i = 0; i < 160; ++i) {
    const int32_t x = -150 + int32_t(i * kParcels % 300), y = -150 + int32_t(i * kParcels / 300);
    std::vector<uint32_t> seen;
    for (uint32_t f = 0; f < kFrames; ++f) {
      const int32_t px = -150 + int32_t(f), py = -150;
      bool in_view = false;
      for (int32_t k = 0; k < int32_t(kParcels); ++k)
        in_view |= std::abs(x + k - px) <= int32_t(kView) && std::abs(y - py) <= int32_t(kView);
      if (in_view) seen.push_back(f);
    }
    const std::string name = "scene" + std::to_string(i);
    SCOPED_TRACE(name);
    if (seen.empty()) {
      EXPECT_EQ(generated.count(name), 0u);  // never in view: not generated
      continue;
    }
    ASSERT_EQ(generated.count(name), 1u);
    const DclWorldScene& sc = *generated[name];
    EXPECT_EQ(sc.parcel, (DclParcel{x, y}));
    EXPECT_EQ(sc.load_frame, seen.front());
    ASSERT_EQ(seen.back() - seen.front() + 1, seen.size());  // one run of frames
    if (seen.back() + 1 < kFrames) {
      ASSERT_TRUE(sc.unload_frame);
      EXPECT_EQ(*sc.unload_frame, seen.back() + 1);
      ++unloads;
    } else {
      EXPECT_FALSE(sc.unload_frame);
    }
    EXPECT_EQ(sc.chunk_count(), seen.size());  // a chunk for every frame it is loaded
    mid_run_loads += sc.load_frame > 0;
  }
  EXPECT_GT(mid_run_loads, 10u);
  EXPECT_GT(unloads, 10u);
  // A scene's stream starts from its creation whenever it loads: the same bytes as the
  // scene's first frames in a world without a walk.
  Result<DclWorldStreams> still = generate_dcl_world("gen:dclworld:160:4", 3, 6);
  ASSERT_TRUE(still);
  const DclWorldScene& late = *generated["scene5"];
  ASSERT_GT(late.load_frame, 0u);
  EXPECT_EQ(std::vector<uint8_t>(late.chunk(0).begin(), late.chunk(0).end()),
            std::vector<uint8_t>(still->scenes[5].chunk(0).begin(),
                                 still->scenes[5].chunk(0).end()));
}

// Loads and unloads mid-run, as the walk drives them, leave every loaded scene equal to the
// single-scene path (a new DclScene at each load) offset by its parcel, frame after frame.
TEST(DclWorldGen, WalkingWorldMatchesSingleScenesFrameByFrame) {
  Result<DclWorldStreams> streams = generate_dcl_world("gen:dclworld:90:2:walk=1", 24, 4);
  ASSERT_TRUE(streams) << streams.error().message;
  replay_and_compare(*streams, 24);
}

TEST(DclWorldGen, SameSpecFramesAndSeedGiveTheSameBytes) {
  auto a = generate_dcl_world("gen:dclworld:3:2", 5, 9);
  auto b = generate_dcl_world("gen:dclworld:3:2", 5, 9);
  auto c = generate_dcl_world("gen:dclworld:3:2", 5, 10);
  ASSERT_TRUE(a && b && c);
  ASSERT_EQ(a->scenes.size(), 3u);
  EXPECT_EQ(a->frame_count(), 5u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a->scenes[i].stream, b->scenes[i].stream);
    EXPECT_NE(a->scenes[i].stream, c->scenes[i].stream);
    EXPECT_EQ(a->scenes[i].frame_starts.size(), 4u);
  }
  // Two-parcel scenes side by side from the city's corner: 400 entities each.
  EXPECT_EQ(a->scenes[1].parcel, (DclParcel{-148, -150}));
  DclScene one;
  ASSERT_TRUE(one.feed(a->scenes[0].chunk(0)));
  EXPECT_EQ(one.store().size(), 400u);
}

TEST(DclWorldGen, BadSpecsNameWhatIsWrong) {
  for (const char* spec :
       {"gen:dclworld", "gen:dclworld:0", "gen:dclworld:2:326", "gen:dclworld:x",
        "gen:dclworld:1:2:3", "gen:dclworld:65537", "gen:dclworld:2:walk=x",
        "gen:dclworld:2:walk=301", "gen:dclworld:2:walk=1:walk=2", "gen:dclworld:2:3:walk=1:4",
        "gen:dclworld:2:walk=-1", "gen:dclworld:2:walk="}) {
    Result<DclWorldStreams> r = generate_dcl_world(spec, 1, 1);
    ASSERT_FALSE(r) << spec;
    EXPECT_NE(r.error().message.find(spec), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(generate_dcl_world("gen:dclworld:1", 0, 1));
}

class DclWorldFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tprop_world_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write_manifest(const std::string& text) {
    std::FILE* f = std::fopen((dir_ / "world.json").c_str(), "wb");
    ASSERT_TRUE(f);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  std::filesystem::path dir_;
};

TEST_F(DclWorldFolder, WrittenWorldReadsBackTheSame) {
  auto world = generate_dcl_world("gen:dclworld:2:1", 3, 4);
  ASSERT_TRUE(world);
  world->scenes[1].load_frame = 1;
  world->scenes[1].unload_frame = 3;
  ASSERT_TRUE(write_dcl_world(dir_.string(), *world));
  EXPECT_TRUE(is_dcl_world_folder(dir_.string()));
  auto back = read_dcl_world(dir_.string());
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->scenes.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back->scenes[i].name, world->scenes[i].name);
    EXPECT_EQ(back->scenes[i].parcel, world->scenes[i].parcel);
    EXPECT_EQ(back->scenes[i].stream, world->scenes[i].stream);
    EXPECT_EQ(back->scenes[i].frame_starts, world->scenes[i].frame_starts);
    EXPECT_EQ(back->scenes[i].load_frame, world->scenes[i].load_frame);
    EXPECT_EQ(back->scenes[i].unload_frame, world->scenes[i].unload_frame);
  }
  EXPECT_EQ(back->frame_count(), 4u);
}

TEST_F(DclWorldFolder, BadManifestsNameTheFieldAtFault) {
  const std::pair<const char*, const char*> cases[] = {
      {"{\"scenes\": 3}", "expected {\"scenes\""},
      {"{\"scenes\": [{\"parcel\": [0, 0], \"stream\": \"a.crdt\"}]}", "scenes[0].name"},
      {"{\"scenes\": [{\"name\": \"a\", \"parcel\": [0], \"stream\": \"a.crdt\"}]}",
       "scenes[0].parcel"},
      {"{\"scenes\": [{\"name\": \"a\", \"parcel\": [0, 0], \"stream\": \"missing.crdt\"}]}",
       "missing.crdt"},
      {"{\"scenes\": [", "not valid JSON"},
  };
  for (const auto& [text, expected] : cases) {
    write_manifest(text);
    auto r = read_dcl_world(dir_.string());
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().message.find(expected), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("world.json"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace tprop
