// The bundled Decentraland stream assets/plaza.crdt: a small plaza written by the project's own
// encoder from the message list below. The test checks the file is exactly what the encoder
// writes and that loading it gives matrices worked out by hand. To regenerate the asset after
// changing the list:
//   TPROP_WRITE_PLAZA=assets/plaza.crdt build/tests/dcl_tests --gtest_filter='DclPlaza.*'
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "dcl_scene.h"
#include "dcl_test_support.h"
#include "reference.h"
#include "scene_input.h"
#include "test_files.h"

namespace tprop {
namespace {

using namespace dcl_test;  // messages, transforms and the oracle of dcl_test_support.h

constexpr uint32_t kMeshRenderer = 1018;
constexpr uint32_t kGltfContainer = 1041;

quat about_y(float degrees) {
  const float h = glm::radians(degrees) * 0.5f;
  return make_quat(0, std::sin(h), 0, std::cos(h));
}

CrdtMessage put_bytes(EntityId e, uint32_t component, uint32_t lamport, const std::string& text) {
  return CrdtMessage::put(e, component, lamport, std::vector<uint8_t>(text.begin(), text.end()));
}

std::vector<CrdtMessage> plaza_messages() {
  std::vector<CrdtMessage> m;
  // Ground and a fountain with a bowl (non-uniform scale) and a spout.
  m.push_back(put_transform(512, 1, transform({8, 0, 8}, quat(1, 0, 0, 0), {16, 0.1f, 16})));
  m.push_back(put_bytes(512, kMeshRenderer, 1, "box"));
  m.push_back(put_transform(513, 1, at({8, 0.25f, 8}, 0)));
  m.push_back(put_bytes(513, kGltfContainer, 1, "models/fountain.glb"));
  m.push_back(put_transform(514, 1, transform({0, 0.5f, 0}, quat(1, 0, 0, 0), {2, 0.5f, 2}, 513)));
  m.push_back(put_transform(515, 1, transform({0, 1.5f, 0}, quat(1, 0, 0, 0), {0.5f, 0.5f, 0.5f}, 513)));
  // Four lamp posts around the fountain, each turned to face it, with a lamp head on top.
  const float3 corners[] = {{5, 0, 5}, {-5, 0, 5}, {-5, 0, -5}, {5, 0, -5}};
  for (uint32_t i = 0; i < 4; ++i) {
    m.push_back(put_transform(516 + i, 1, transform(corners[i], about_y(225.0f - 90.0f * float(i)), {1, 1, 1}, 513)));
    m.push_back(put_transform(520 + i, 1, transform({0, 3, 0}, quat(1, 0, 0, 0), {0.4f, 0.4f, 0.4f}, 516 + i)));
  }
  // A carousel turned 30 degrees with four horses on it.
  m.push_back(put_transform(524, 1, transform({3, 0, 13}, about_y(30), {1, 1, 1})));
  const float3 seats[] = {{2, 0.5f, 0}, {0, 0.5f, 2}, {-2, 0.5f, 0}, {0, 0.5f, -2}};
  for (uint32_t i = 0; i < 4; ++i)
    m.push_back(put_transform(525 + i, 1, transform(seats[i], about_y(90.0f * float(i)), {1, 1, 1}, 524)));
  // Two benches.
  m.push_back(put_transform(529, 1, transform({12, 0, 4}, about_y(45), {1, 1, 1})));
  m.push_back(put_transform(530, 1, transform({13.5f, 0, 5.5f}, about_y(45), {1, 1, 1})));
  m.push_back(put_bytes(529, kGltfContainer, 1, "models/bench.glb"));
  m.push_back(put_bytes(530, kGltfContainer, 1, "models/bench.glb"));
  // A tree first planted at the root, then moved into a planter (a reparent, lamport 2), and a
  // stale put that loses.
  m.push_back(put_transform(532, 1, at({11, 0, 11}, 0)));
  m.push_back(put_transform(531, 1, at({11, 0, 11}, 0)));
  m.push_back(put_transform(531, 2, at({0, 0.3f, 0}, 532)));
  m.push_back(put_transform(531, 0, at({-50, 0, 0}, 0)));
  // A kite and its string form a temporary cycle, resolved at lamport 2.
  m.push_back(put_transform(533, 1, at({4, 6, 4}, 534)));
  m.push_back(put_transform(534, 1, at({0, 2, 0}, 533)));
  m.push_back(put_transform(533, 2, at({4, 6, 4}, 0)));
  // A kiosk whose Transform is deleted: it stands at the root as identity, its sign follows it.
  m.push_back(put_transform(535, 1, at({14, 0, 12}, 0)));
  m.push_back(put_transform(536, 1, at({0, 2.5f, 0}, 535)));
  m.push_back(dcl_test::delete_transform(535, 2));
  // A balloon that pops (DELETE_ENTITY) and a new one under the next version of its number.
  m.push_back(put_transform(537, 1, at({6, 4, 2}, 0)));
  m.push_back(CrdtMessage::delete_entity(537));
  m.push_back(put_transform(537, 3, at({6, 9, 2}, 0)));  // dead: ignored
  m.push_back(put_transform(dcl_entity_id(537, 1), 1, at({6, 4, 2}, 0)));
  // An entity with no Transform (identity at the root), and one shared over the network.
  m.push_back(put_bytes(538, kMeshRenderer, 1, "sphere"));
  CrdtMessage shared = put_transform(539, 1, at({2, 0, 2}, 0));
  shared.type = CrdtMessageType::PutComponentNetwork;
  shared.network_id = 7;
  m.push_back(shared);
  // Duplicates, as a real transport delivers them.
  m.push_back(m[2]);
  m.push_back(m[4]);
  return m;
}

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const std::string kAsset = std::string(TPROP_ASSETS_DIR) + "/plaza.crdt";

TEST(DclPlaza, BundledStreamIsExactlyWhatTheEncoderWrites) {
  const std::vector<uint8_t> bytes = encode_crdt_messages(plaza_messages());
  if (const char* out = std::getenv("TPROP_WRITE_PLAZA")) {
    std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               std::streamsize(bytes.size()));
  }
  EXPECT_EQ(read_all(kAsset), bytes) << kAsset << " is stale: regenerate it (see the file head)";
}

TEST(DclPlaza, LoadsWithHandCheckedMatrices) {
  auto scene = load_crdt_scene(kAsset);
  ASSERT_TRUE(scene) << scene.error().message;
  const auto w = world_matrices_by_id(scene->store);
  // 512..536 (25), 538, 539 and the new balloon; 537 is dead and the root is no entity.
  EXPECT_EQ(w.size(), 28u);
  EXPECT_FALSE(w.count(537));
  auto position = [&](EntityId e) { return float3(w.at(e)[3]); };
  auto expect_at = [&](EntityId e, float3 p) {
    const float3 got = position(e);
    EXPECT_NEAR(got.x, p.x, 1e-5f) << e;
    EXPECT_NEAR(got.y, p.y, 1e-5f) << e;
    EXPECT_NEAR(got.z, p.z, 1e-5f) << e;
  };
  expect_at(515, {8, 1.75f, 8});              // spout: base (8, .25, 8) + (0, 1.5, 0)
  expect_at(520, {13, 3.25f, 13});            // lamp head on the (5, 0, 5) post, 3 up
  expect_at(531, {11, 0.3f, 11});             // the tree in its planter
  expect_at(534, {4, 8, 4});                  // the kite string under the kite
  expect_at(536, {0, 2.5f, 0});               // the sign follows its identity kiosk
  expect_at(dcl_entity_id(537, 1), {6, 4, 2});
  EXPECT_TRUE(near(w.at(535), float4x4(1.0f)));
  EXPECT_TRUE(near(w.at(538), float4x4(1.0f)));
  // Horse 525 sits 2 units along the carousel's x, which is turned 30 degrees about +y:
  // x' = (cos 30, 0, -sin 30).
  const float c = std::cos(glm::radians(30.0f)), s = std::sin(glm::radians(30.0f));
  expect_at(525, {3 + 2 * c, 0.5f, 13 - 2 * s});
  // The bowl keeps its non-uniform scale: its x axis is 2 long, its y axis 0.5.
  EXPECT_NEAR(glm::length(float3(w.at(514)[0])), 2.0f, 1e-6f);
  EXPECT_NEAR(glm::length(float3(w.at(514)[1])), 0.5f, 1e-6f);
  ASSERT_FALSE(scene->warnings.empty());
  EXPECT_NE(scene->warnings[0].find("2 duplicates"), std::string::npos) << scene->warnings[0];
}

TEST(DclPlaza, LoadSceneDispatchesByExtensionAndByContent) {
  auto by_extension = load_scene(kAsset);
  ASSERT_TRUE(by_extension) << by_extension.error().message;
  EXPECT_EQ(by_extension->store.size(), 28u);
  // The same bytes under a name without an extension: the first header gives it away.
  const std::string bare = test::temp_path("plaza_without_extension");
  const std::vector<uint8_t> bytes = read_all(kAsset);
  test::write_file(bare, std::string(bytes.begin(), bytes.end()));
  auto by_content = load_scene(bare);
  ASSERT_TRUE(by_content) << by_content.error().message;
  EXPECT_EQ(by_content->store.size(), 28u);
}

}  // namespace
}  // namespace tprop
