// Decentraland semantics on the store, checked through the CPU reference against world matrices
// worked out by hand: world = parent world * T(position) * R(rotation) * S(scale), entity 0 the
// root, no Transform = identity at the root, the spec's A..F example, cycles at the root.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dcl_scene.h"
#include "dcl_test_support.h"
#include "depth_order.h"
#include "reference.h"

namespace tprop {
namespace {

using namespace dcl_test;  // messages, transforms and the oracle of dcl_test_support.h

float4x4 T(float x, float y, float z) { return translation_matrix(float3(x, y, z)); }

std::unordered_map<EntityId, float4x4> world(const DclScene& dcl) {
  return world_matrices_by_id(dcl.store());
}

TEST(DclScene, EntityWithoutTransformIsIdentityAtTheRoot) {
  DclScene dcl;
  dcl.apply(CrdtMessage::put(7, 1099, 1, {0x01, 0x02}));  // some other component
  ASSERT_TRUE(dcl.store().contains(7));
  EXPECT_FALSE(dcl.store().parent(7));
  EXPECT_TRUE(near(world(dcl).at(7), float4x4(1.0f)));
}

TEST(DclScene, TransformMapsToTranslationRotationScaleAndParent) {
  DclScene dcl;
  const float s = std::sqrt(0.5f);
  dcl.apply(put_transform(2, 1, dcl_test::transform({1, 2, 3}, make_quat(0, s, 0, s), {1, 2, 3}, 9)));
  const EntityStore& store = dcl.store();
  const uint32_t slot = store.slot_of(2);
  EXPECT_EQ(store.translation_at(slot), float3(1, 2, 3));
  EXPECT_EQ(store.rotation_at(slot), make_quat(0, s, 0, s));
  ASSERT_TRUE(store.has(2, Component::NonUniformScale));
  EXPECT_EQ(store.non_uniform_scale_at(slot), float3(1, 2, 3));
  EXPECT_FALSE(store.has(2, Component::Scale));
  EXPECT_EQ(store.parent(2), std::optional<EntityId>(9));
  // A uniform scale is the same matrix as Scale: it needs no rare record.
  dcl.apply(put_transform(2, 2, dcl_test::transform({1, 2, 3}, make_quat(0, 0, 0, 1), {2, 2, 2})));
  EXPECT_TRUE(store.has(2, Component::Scale));
  EXPECT_EQ(store.scale_at(slot), 2.0f);
  EXPECT_FALSE(store.has(2, Component::NonUniformScale));
  EXPECT_EQ(store.rare_at(slot), nullptr);
  EXPECT_FALSE(store.parent(2));  // parent 0 is the root: no Parent
}

TEST(DclScene, WorldIsParentWorldTimesTranslationRotationScale) {
  DclScene dcl;
  const float s = std::sqrt(0.5f);
  // Parent at (0, 0, 5), a quarter turn about +y (x goes to -z), uniform scale 2.
  dcl.apply(put_transform(1, 1, dcl_test::transform({0, 0, 5}, make_quat(0, s, 0, s), {2, 2, 2})));
  // Child at (1, 0, 0) in the parent's space: 2 units along the parent's x, which is world -z.
  dcl.apply(put_transform(2, 1, at({1, 0, 0}, 1)));
  // Grandchild under a non-uniform scale (1, 2, 3) at (1, 1, 1).
  dcl.apply(put_transform(3, 1, dcl_test::transform({0, 0, 0}, make_quat(0, 0, 0, 1), {1, 2, 3}, 0)));
  dcl.apply(put_transform(4, 1, at({1, 1, 1}, 3)));
  const auto w = world(dcl);
  const float4 p2 = w.at(2) * float4(0, 0, 0, 1);
  EXPECT_NEAR(p2.x, 0.0f, 1e-6f);
  EXPECT_NEAR(p2.y, 0.0f, 1e-6f);
  EXPECT_NEAR(p2.z, 3.0f, 1e-6f);
  // S(1, 2, 3) * T(1, 1, 1): the position lands at (1, 2, 3) and the scale carries over.
  EXPECT_TRUE(near(w.at(4), T(1, 2, 3) * scale_matrix(float3(1, 2, 3))));
}

TEST(DclScene, UnknownParentLeavesTheChildAtTheRootWithItsLocalMatrix) {
  DclScene dcl;
  dcl.apply(put_transform(2, 1, at({1, 2, 3}, 77)));
  EXPECT_TRUE(near(world(dcl).at(2), T(1, 2, 3)));
  EXPECT_FALSE(dcl.store().contains(77));
  // The parent appears: the child follows it.
  dcl.apply(put_transform(77, 1, at({10, 0, 0}, 0)));
  EXPECT_TRUE(near(world(dcl).at(2), T(11, 2, 3)));
}

TEST(DclScene, ParentWithoutTransformIsIdentityAtTheRootAndItsChildrenFollowIt) {
  DclScene dcl;
  dcl.apply(CrdtMessage::put(5, 1099, 1, {0x00}));  // entity 5 exists, no Transform
  dcl.apply(put_transform(6, 1, at({0, 1, 0}, 5)));
  dcl.apply(put_transform(7, 1, at({0, 0, 1}, 6)));
  auto w = world(dcl);
  EXPECT_TRUE(near(w.at(5), float4x4(1.0f)));
  EXPECT_TRUE(near(w.at(6), T(0, 1, 0)));
  EXPECT_TRUE(near(w.at(7), T(0, 1, 1)));
  EXPECT_EQ(dcl.store().parent(6), std::optional<EntityId>(5));  // attached to it, not detached
  dcl.apply(put_transform(5, 1, at({10, 0, 0}, 0)));
  w = world(dcl);
  EXPECT_TRUE(near(w.at(6), T(10, 1, 0)));
  EXPECT_TRUE(near(w.at(7), T(10, 1, 1)));
}

// The spec's example: A..F chained, each one unit along x from its parent; removing D's
// Transform puts D at the root as identity and E, F follow D.
TEST(DclScene, RemovingATransformPutsItAtTheRootAndItsChildrenFollow) {
  DclScene dcl;
  const EntityId A = 11, B = 12, C = 13, D = 14, E = 15, F = 16;
  const EntityId chain[] = {A, B, C, D, E, F};
  for (int i = 0; i < 6; ++i) dcl.apply(put_transform(chain[i], 1, at({1, 0, 0}, i ? chain[i - 1] : 0)));
  auto w = world(dcl);
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(near(w.at(chain[i]), T(float(i + 1), 0, 0))) << i;

  dcl.apply(delete_transform(D, 2));
  w = world(dcl);
  EXPECT_TRUE(near(w.at(A), T(1, 0, 0)));
  EXPECT_TRUE(near(w.at(B), T(2, 0, 0)));
  EXPECT_TRUE(near(w.at(C), T(3, 0, 0)));
  EXPECT_TRUE(near(w.at(D), float4x4(1.0f)));
  EXPECT_TRUE(near(w.at(E), T(1, 0, 0)));
  EXPECT_TRUE(near(w.at(F), T(2, 0, 0)));
  EXPECT_FALSE(dcl.store().parent(D));
  EXPECT_EQ(dcl.store().parent(E), std::optional<EntityId>(D));

  // An older put does not bring it back; a newer one does.
  dcl.apply(put_transform(D, 1, at({1, 0, 0}, C)));
  EXPECT_TRUE(near(world(dcl).at(F), T(2, 0, 0)));
  dcl.apply(put_transform(D, 3, at({1, 0, 0}, C)));
  EXPECT_TRUE(near(world(dcl).at(F), T(6, 0, 0)));
}

TEST(DclScene, CycleMembersStandAtTheRootUntilResolvedAndEntitiesBelowKeepTheirParent) {
  DclScene dcl;
  dcl.apply(put_transform(1, 1, at({1, 0, 0}, 2)));
  dcl.apply(put_transform(2, 1, at({0, 1, 0}, 1)));
  dcl.apply(put_transform(3, 1, at({0, 0, 1}, 2)));
  dcl.apply(put_transform(4, 1, at({0, 0, 7}, 4)));  // its own parent
  auto w = world(dcl);
  EXPECT_TRUE(near(w.at(1), T(1, 0, 0)));
  EXPECT_TRUE(near(w.at(2), T(0, 1, 0)));
  EXPECT_TRUE(near(w.at(3), T(0, 1, 1)));
  EXPECT_TRUE(near(w.at(4), T(0, 0, 7)));
  // 1 moves to the root: the cycle is resolved, 2 hangs below 1 again.
  dcl.apply(put_transform(1, 2, at({1, 0, 0}, 0)));
  w = world(dcl);
  EXPECT_TRUE(near(w.at(2), T(1, 1, 0)));
  EXPECT_TRUE(near(w.at(3), T(1, 1, 1)));
}

TEST(DclScene, DeletedEntityLeavesTheStoreAndItsChildrenStandAtTheRoot) {
  DclScene dcl;
  const EntityId parent = dcl_entity_id(9, 0), child = dcl_entity_id(10, 0);
  dcl.apply(put_transform(parent, 1, at({5, 0, 0}, 0)));
  dcl.apply(put_transform(child, 1, at({0, 1, 0}, parent)));
  EXPECT_TRUE(near(world(dcl).at(child), T(5, 1, 0)));
  dcl.apply(CrdtMessage::delete_entity(parent));
  EXPECT_FALSE(dcl.store().contains(parent));
  EXPECT_EQ(dcl.store().parent(child), std::optional<EntityId>(parent));  // still names it
  EXPECT_TRUE(near(world(dcl).at(child), T(0, 1, 0)));
  // The dead entity never comes back; a new version of its number is another entity.
  dcl.apply(put_transform(parent, 100, at({7, 0, 0}, 0)));
  EXPECT_FALSE(dcl.store().contains(parent));
  const EntityId reborn = dcl_entity_id(9, 1);
  dcl.apply(put_transform(reborn, 1, at({7, 0, 0}, 0)));
  EXPECT_TRUE(near(world(dcl).at(reborn), T(7, 0, 0)));
  EXPECT_TRUE(near(world(dcl).at(child), T(0, 1, 0)));
}

TEST(DclScene, RootEntityIsNoStoreEntity) {
  DclScene dcl;
  dcl.apply(put_transform(0, 1, at({3, 3, 3}, 0)));
  dcl.apply(put_transform(1, 1, at({1, 0, 0}, 0)));
  EXPECT_FALSE(dcl.store().contains(0));
  EXPECT_EQ(dcl.store().size(), 1u);
  EXPECT_TRUE(near(world(dcl).at(1), T(1, 0, 0)));  // the root stays identity
}

TEST(DclScene, TransformWithMalformedDataIsIdentityAtTheRootAndChildrenFollow) {
  DclScene dcl;
  dcl.apply(CrdtMessage::put(1, kDclTransformComponentId, 1, std::vector<uint8_t>(40, 0x41)));
  dcl.apply(put_transform(2, 1, at({0, 2, 0}, 1)));
  const auto w = world(dcl);
  EXPECT_TRUE(near(w.at(1), float4x4(1.0f)));
  EXPECT_TRUE(near(w.at(2), T(0, 2, 0)));
  EXPECT_EQ(dcl.transform(1), std::nullopt);
}

TEST(DclScene, FramesReSortOnlyWhenAParentChanged) {
  DclScene dcl;
  dcl.apply(put_transform(1, 1, at({1, 0, 0}, 0)));
  dcl.apply(put_transform(2, 1, at({0, 1, 0}, 1)));
  dcl.apply(put_transform(3, 1, at({0, 0, 1}, 0)));
  EntityStore& store = dcl.store();
  StoreChanges first = store.take_changes();
  EXPECT_TRUE(first.hierarchy);
  store.mark_statics_baked();

  // Values only: entity 2 moves, same parent.
  dcl.apply(put_transform(2, 2, at({0, 5, 0}, 1)));
  StoreChanges values = store.take_changes();
  EXPECT_FALSE(values.hierarchy);
  EXPECT_TRUE(values.slots.empty());
  EXPECT_EQ(values.values, std::vector<uint32_t>{store.slot_of(2)});

  // Outdated and duplicate messages change nothing at all.
  dcl.apply(put_transform(2, 1, at({9, 9, 9}, 3)));
  dcl.apply(put_transform(2, 2, at({0, 5, 0}, 1)));
  StoreChanges none = store.take_changes();
  EXPECT_FALSE(none.hierarchy);
  EXPECT_TRUE(none.slots.empty());
  EXPECT_TRUE(none.values.empty());

  // A reparent changes the hierarchy.
  dcl.apply(put_transform(2, 3, at({0, 5, 0}, 3)));
  EXPECT_TRUE(store.take_changes().hierarchy);
  EXPECT_TRUE(near(world(dcl).at(2), T(0, 5, 1)));
  // So does a deleted Transform (the Parent goes) and a deleted entity.
  dcl.apply(delete_transform(2, 4));
  EXPECT_TRUE(store.take_changes().hierarchy);
  dcl.apply(CrdtMessage::delete_entity(3));
  EXPECT_TRUE(store.take_changes().hierarchy);
}

TEST(DclScene, FrameByFrameEvaluationMatchesAFreshLoadOfAllMessages) {
  // Three frames through one CpuReference with the frame protocol, against a scene built from
  // every message at once.
  const std::vector<std::vector<CrdtMessage>> frames = {
      {put_transform(1, 1, at({1, 0, 0}, 0)), put_transform(2, 1, at({0, 1, 0}, 1)),
       put_transform(3, 1, at({0, 0, 1}, 2))},
      {put_transform(1, 2, at({2, 0, 0}, 0)), put_transform(2, 2, at({0, 1, 0}, 3))},  // a cycle
      {put_transform(3, 2, at({0, 0, 1}, 1)), delete_transform(1, 3)},
  };
  DclScene live;
  CpuReference reference;
  DepthOrder order;
  std::vector<float4x4> ltw;
  std::vector<CrdtMessage> all;
  for (const auto& batch : frames) {
    live.apply(batch);
    all.insert(all.end(), batch.begin(), batch.end());
    const StoreChanges changes = live.store().take_changes();
    if (changes.hierarchy || order.size() == 0) order = sort_by_depth(live.store());
    reference.evaluate(live.store(), order, ltw);
    live.store().mark_statics_baked();
  }
  DclScene fresh;
  fresh.apply(all);
  const auto want = world(fresh);
  ASSERT_EQ(want.size(), order.size());
  for (uint32_t pos = 0; pos < order.size(); ++pos)
    EXPECT_EQ(ltw[pos], want.at(live.store().id_at(order.slot[pos])));
  // Hand check of the last frame: 1 is identity at the root, 3 under 1, 2 under 3.
  EXPECT_TRUE(near(want.at(1), float4x4(1.0f)));
  EXPECT_TRUE(near(want.at(3), T(0, 0, 1)));
  EXPECT_TRUE(near(want.at(2), T(0, 1, 1)));
}

TEST(DclScene, FeedAppliesWhatPrecedesAMalformedMessage) {
  std::vector<uint8_t> bytes = encode_crdt_messages(
      std::vector<CrdtMessage>{put_transform(1, 1, at({1, 0, 0}, 0)), put_transform(2, 1, at({0, 1, 0}, 1))});
  const size_t bad_at = bytes.size();
  bytes.insert(bytes.end(), {0x0c, 0, 0, 0, 0x09, 0, 0, 0, 1, 0, 0, 0});  // type 9
  DclScene dcl;
  const Status s = dcl.feed(bytes);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("byte offset " + std::to_string(bad_at)), std::string::npos)
      << s.error().message;
  EXPECT_TRUE(near(world(dcl).at(2), T(1, 1, 0)));
  EXPECT_FALSE(dcl.feed(std::vector<uint8_t>{}));  // stays failed
}

TEST(DclScene, LoadFromBytesReportsCountsAndErrorsNameTheSourceAndOffset) {
  std::vector<CrdtMessage> messages = {put_transform(1, 1, at({1, 0, 0}, 0)),
                                       put_transform(1, 1, at({1, 0, 0}, 0)),
                                       CrdtMessage::put(1, 1099, 1, {0x01}),
                                       put_transform(2, 1, dcl_test::transform({0, 0, 0}, make_quat(0, 0, 0, 2)))};
  const std::vector<uint8_t> bytes = encode_crdt_messages(messages);
  auto scene = load_crdt_scene_from_bytes(bytes, "mem.crdt");
  ASSERT_TRUE(scene) << scene.error().message;
  EXPECT_EQ(scene->source, "mem.crdt");
  EXPECT_EQ(scene->store.size(), 2u);
  ASSERT_EQ(scene->warnings.size(), 2u);
  EXPECT_NE(scene->warnings[0].find("4 messages"), std::string::npos) << scene->warnings[0];
  EXPECT_NE(scene->warnings[0].find("PUT_COMPONENT 4"), std::string::npos) << scene->warnings[0];
  EXPECT_NE(scene->warnings[0].find("1 duplicate,"), std::string::npos) << scene->warnings[0];
  EXPECT_NE(scene->warnings[1].find("1 Transform rotation is not a unit quaternion"),
            std::string::npos)
      << scene->warnings[1];
  EXPECT_NE(scene->warnings[1].find("0x00000002"), std::string::npos);

  const std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 3);
  auto bad = load_crdt_scene_from_bytes(cut, "mem.crdt");
  ASSERT_FALSE(bad);
  const size_t last = bytes.size() - crdt_encoded_size(messages.back());
  EXPECT_EQ(bad.error().message.rfind("mem.crdt: ", 0), 0u) << bad.error().message;
  EXPECT_NE(bad.error().message.find("byte offset " + std::to_string(last)), std::string::npos)
      << bad.error().message;
}

TEST(DclScene, NonFiniteTransformValuesAreWarnedAndUsedAsGiven) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<CrdtMessage> messages = {
      put_transform(1, 1, at({1, 0, 0}, 0)),
      put_transform(2, 1, at({inf, 0, 0}, 0)),
      put_transform(3, 1,
                    dcl_test::transform({0, 0, 0}, make_quat(0, 0, 0, 1), float3(1, nan, 1)))};
  auto scene = load_crdt_scene_from_bytes(encode_crdt_messages(messages), "odd.crdt");
  ASSERT_TRUE(scene) << scene.error().message;
  EXPECT_EQ(scene->store.size(), 3u);
  // Nothing was ignored: the summary is a note, not a warning.
  ASSERT_EQ(scene->notes.size(), 1u);
  ASSERT_EQ(scene->warnings.size(), 1u);
  EXPECT_EQ(scene->warnings[0],
            "2 Transforms hold a NaN or an infinity, used as given (first: entity 0x00000002)");
  const uint32_t slot = scene->store.slot_of(2);
  ASSERT_NE(slot, EntityStore::kNoSlot);
  EXPECT_EQ(scene->store.translation_at(slot).x, inf);
}

TEST(DclScene, EmptyStreamIsAnEmptySceneSummedUpAsNoMessages) {
  auto scene = load_crdt_scene_from_bytes({}, "empty.crdt");
  ASSERT_TRUE(scene) << scene.error().message;
  EXPECT_EQ(scene->store.size(), 0u);
  EXPECT_TRUE(scene->warnings.empty());
  ASSERT_EQ(scene->notes.size(), 1u);
  EXPECT_EQ(scene->notes[0].rfind("crdt: 0 messages; ignored: ", 0), 0u) << scene->notes[0];
}

// A clean stream is summed up as a note, in the singular where there is one; a message for
// entity 0 (the scene root) is counted as ignored, which makes the summary a warning, and its
// Transform draws no other warning.
TEST(DclScene, SummaryIsANoteUnlessSomethingWasIgnoredAndCountsInTheRightNumber) {
  const std::vector<CrdtMessage> one = {put_transform(1, 1, at({1, 0, 0}, 0))};
  auto clean = load_crdt_scene_from_bytes(encode_crdt_messages(one), "one.crdt");
  ASSERT_TRUE(clean) << clean.error().message;
  EXPECT_TRUE(clean->warnings.empty());
  ASSERT_EQ(clean->notes.size(), 1u);
  EXPECT_EQ(clean->notes[0],
            "crdt: 1 message (PUT_COMPONENT 1); ignored: 0 outdated, 0 duplicates, 0 for dead "
            "entities, 0 for entity 0 (the scene root, no entity); 0 for components other than "
            "Transform; 1 live entity");

  const std::vector<CrdtMessage> with_root = {
      put_transform(0, 1, dcl_test::transform({0, 0, 0}, make_quat(0, 0, 0, 2))),
      put_transform(1, 1, at({1, 0, 0}, 0)), put_transform(1, 1, at({1, 0, 0}, 0))};
  auto rooted = load_crdt_scene_from_bytes(encode_crdt_messages(with_root), "root.crdt");
  ASSERT_TRUE(rooted) << rooted.error().message;
  EXPECT_EQ(rooted->store.size(), 1u);
  EXPECT_TRUE(rooted->notes.empty());
  ASSERT_EQ(rooted->warnings.size(), 1u) << rooted->warnings.back();
  EXPECT_NE(rooted->warnings[0].find("1 duplicate, 0 for dead entities, 1 for entity 0 (the scene "
                                     "root, no entity)"),
            std::string::npos)
      << rooted->warnings[0];
  EXPECT_NE(rooted->warnings[0].find("; 1 live entity"), std::string::npos) << rooted->warnings[0];
}

TEST(DclScene, LoadFileErrorNamesThePath) {
  auto missing = load_crdt_scene("/nonexistent/scene.crdt");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent/scene.crdt"), std::string::npos);
  // A directory opens on Linux and fails on reading: an error, not an empty scene.
  auto directory = load_crdt_scene(::testing::TempDir());
  EXPECT_FALSE(directory);
}

TEST(DclScene, SniffsAPlausibleFirstHeader) {
  const std::vector<uint8_t> stream = encode_crdt_messages(std::vector<CrdtMessage>{
      put_transform(1, 1, at({1, 0, 0}, 0))});
  EXPECT_TRUE(looks_like_crdt_stream(stream));
  const std::string json = "{\n  \"entities\": []\n}\n";
  EXPECT_FALSE(looks_like_crdt_stream(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(json.data()), json.size())));
  EXPECT_FALSE(looks_like_crdt_stream(std::vector<uint8_t>{0x0c, 0, 0}));
}

}  // namespace
}  // namespace tprop
