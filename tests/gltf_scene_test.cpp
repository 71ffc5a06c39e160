#include "gltf_scene.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "depth_order.h"
#include "reference.h"
#include "scene_input.h"

namespace tprop {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed afterwards.
class GltfScene : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = fs::temp_directory_path() /
           ("tprop_gltf_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write(const std::string& name, const std::string& bytes) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }

  Result<Scene> load_text(const std::string& gltf_json) {
    return load_gltf_scene(write("scene.gltf", gltf_json));
  }

  // The message of the Error loading gltf_json gives (empty, and a failure, if it loads).
  std::string error_of(const std::string& gltf_json) {
    Result<Scene> scene = load_text(gltf_json);
    EXPECT_FALSE(scene.ok()) << gltf_json;
    return scene.ok() ? std::string() : scene.error().message;
  }

  fs::path dir_;
};

// A minimal valid document around the given nodes (and any extra top-level members).
std::string doc(const std::string& nodes, const std::string& extra = "") {
  return R"({"asset":{"version":"2.0"},"scenes":[{"nodes":[0]}],"nodes":)" + nodes + extra + "}";
}

void append_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

// A .glb: header, JSON chunk padded with spaces, and a BIN chunk when bin is not empty.
std::string glb(std::string json, const std::string& bin = "", uint32_t version = 2) {
  while (json.size() % 4) json.push_back(' ');
  std::string out = "glTF";
  append_u32(out, version);
  const size_t total = 12 + 8 + json.size() + (bin.empty() ? 0 : 8 + bin.size());
  append_u32(out, uint32_t(total));
  append_u32(out, uint32_t(json.size()));
  append_u32(out, 0x4E4F534Au);  // "JSON"
  out += json;
  if (!bin.empty()) {
    append_u32(out, uint32_t(bin.size()));
    append_u32(out, 0x004E4942u);  // "BIN\0"
    out += bin;
  }
  return out;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

#define EXPECT_CONTAINS(s, part) EXPECT_TRUE(contains((s), (part))) << "in: " << (s)

void expect_matrix(const float4x4& m, const float (&expected)[16]) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r)
      EXPECT_NEAR(m[c][r], expected[c * 4 + r], 1e-5f) << "column " << c << " row " << r;
}

TEST_F(GltfScene, RobotArmFixtureMapsEveryNode) {
  Result<Scene> loaded = load_gltf_scene(TPROP_ASSETS_DIR "/robot_arm.gltf");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const Scene& scene = *loaded;
  const EntityStore& store = scene.store;
  EXPECT_EQ(scene.source, TPROP_ASSETS_DIR "/robot_arm.gltf");
  EXPECT_TRUE(scene.warnings.empty());
  ASSERT_EQ(store.size(), 6u);
  const std::unordered_map<EntityId, std::string> names = {
      {0, "base"}, {1, "shoulder"}, {2, "upper_arm"}, {3, "forearm"}, {4, "lamp"}};
  EXPECT_EQ(scene.names, names);

  const auto mask = [&](EntityId e) { return store.mask_at(store.slot_of(e)); };
  const auto slot = [&](EntityId e) { return store.slot_of(e); };
  // base: translation and per-axis scale, a root.
  EXPECT_EQ(mask(0), bit(Component::Translation) | bit(Component::NonUniformScale));
  EXPECT_EQ(store.translation_at(slot(0)), float3(1, 0, 0));
  EXPECT_EQ(store.non_uniform_scale_at(slot(0)), float3(2, 2, 2));
  // shoulder: glTF rotation is x, y, z, w.
  EXPECT_EQ(mask(1),
            bit(Component::Translation) | bit(Component::Rotation) | bit(Component::Parent));
  EXPECT_EQ(store.parent(1), 0u);
  EXPECT_EQ(store.translation_at(slot(1)), float3(0, 1, 0));
  const quat q = store.rotation_at(slot(1));
  EXPECT_FLOAT_EQ(q.x, 0.0f);
  EXPECT_FLOAT_EQ(q.y, 0.0f);
  EXPECT_FLOAT_EQ(q.z, 0.70710678f);
  EXPECT_FLOAT_EQ(q.w, 0.70710678f);
  // upper_arm: a child's matrix is its LocalToParent (and its LocalToWorld should its parent
  // link ever break), column-major as in the file.
  EXPECT_EQ(mask(2),
            bit(Component::LocalToParent) | bit(Component::LocalToWorld) | bit(Component::Parent));
  EXPECT_EQ(store.parent(2), 1u);
  const float upper_arm[16] = {0.5f, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 2, 0, 1};
  expect_matrix(store.rare_at(slot(2))->matrix[int(MatrixComponent::LocalToParent)], upper_arm);
  expect_matrix(store.rare_at(slot(2))->matrix[int(MatrixComponent::LocalToWorld)], upper_arm);
  // forearm
  EXPECT_EQ(mask(3),
            bit(Component::Translation) | bit(Component::NonUniformScale) | bit(Component::Parent));
  EXPECT_EQ(store.parent(3), 2u);
  EXPECT_EQ(store.translation_at(slot(3)), float3(0, 1.5f, 0));
  EXPECT_EQ(store.non_uniform_scale_at(slot(3)), float3(1, 1, 0.5f));
  // lamp: a root's matrix is its LocalToWorld.
  EXPECT_EQ(mask(4), bit(Component::LocalToWorld));
  const float lamp[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 5, 6, 7, 1};
  expect_matrix(store.rare_at(slot(4))->matrix[int(MatrixComponent::LocalToWorld)], lamp);
  // Node 5 is in no scene and has nothing: still an entity, a root.
  EXPECT_EQ(mask(5), 0u);
}

TEST_F(GltfScene, WorldTransformsComposeAsGltfSays) {
  Result<Scene> loaded = load_gltf_scene(TPROP_ASSETS_DIR "/robot_arm.gltf");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const auto world = world_matrices_by_id(loaded->store);
  // Worked by hand: base = T(1,0,0) S(2); shoulder = base T(0,1,0) Rz(90deg);
  // upper_arm = shoulder T(0,2,0) S(0.5,1,1); forearm = upper_arm T(0,1.5,0) S(1,1,0.5).
  const float base[16] = {2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 1, 0, 0, 1};
  expect_matrix(world.at(0), base);
  const float shoulder[16] = {0, 2, 0, 0, -2, 0, 0, 0, 0, 0, 2, 0, 1, 2, 0, 1};
  expect_matrix(world.at(1), shoulder);
  const float upper_arm[16] = {0, 1, 0, 0, -2, 0, 0, 0, 0, 0, 2, 0, -3, 2, 0, 1};
  expect_matrix(world.at(2), upper_arm);
  const float forearm[16] = {0, 1, 0, 0, -2, 0, 0, 0, 0, 0, 1, 0, -6, 2, 0, 1};
  expect_matrix(world.at(3), forearm);
  const float lamp[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 5, 6, 7, 1};
  expect_matrix(world.at(4), lamp);
  const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  expect_matrix(world.at(5), identity);
}

TEST_F(GltfScene, GlbWithBinChunkLoadsNodes) {
  const std::string json =
      R"({"asset":{"version":"2.0"},"buffers":[{"byteLength":4}],"scenes":[{"nodes":[1]}],)"
      R"("nodes":[{"name":"wheel","translation":[0.5,0,-1]},)"
      R"({"name":"car","rotation":[0,1,0,0],"children":[0]}]})";
  const std::string path = write("car.glb", glb(json, std::string("\1\2\3\4", 4)));
  Result<Scene> scene = load_gltf_scene(path);
  ASSERT_TRUE(scene.ok()) << scene.error().message;
  const EntityStore& store = scene->store;
  ASSERT_EQ(store.size(), 2u);
  EXPECT_EQ(scene->names.at(0), "wheel");
  EXPECT_EQ(scene->names.at(1), "car");
  EXPECT_EQ(store.parent(0), 1u);
  EXPECT_FALSE(store.parent(1).has_value());
  EXPECT_EQ(store.translation_at(store.slot_of(0)), float3(0.5f, 0, -1));
  EXPECT_EQ(store.rotation_at(store.slot_of(1)), make_quat(0, 1, 0, 0));
  // The wheel's world position: the car turned half way round about Y.
  const auto world = world_matrices_by_id(store);
  EXPECT_NEAR(world.at(0)[3].x, -0.5f, 1e-6f);
  EXPECT_NEAR(world.at(0)[3].z, 1.0f, 1e-6f);
}

TEST_F(GltfScene, GlbIsRecognizedByItsMagicWhateverTheExtension) {
  const std::string path = write("no_extension", glb(doc(R"([{"translation":[1,2,3]}])")));
  Result<Scene> scene = load_gltf_scene(path);
  ASSERT_TRUE(scene.ok()) << scene.error().message;
  EXPECT_EQ(scene->store.translation_at(scene->store.slot_of(0)), float3(1, 2, 3));
}

TEST_F(GltfScene, GltfWithExternalBufferLoads) {
  write("data.bin", std::string("abcd"));
  Result<Scene> scene = load_text(doc("[{}]", R"(,"buffers":[{"uri":"data.bin","byteLength":4}])"));
  EXPECT_TRUE(scene.ok()) << scene.error().message;
}

TEST_F(GltfScene, MissingBufferFileIsAnErrorNamingIt) {
  EXPECT_CONTAINS(error_of(doc("[{}]", R"(,"buffers":[{"uri":"missing.bin","byteLength":4}])")),
                  "missing.bin");
}

// A buffer uri must stay inside the glTF file's folder: `..` (however deep) and symlinks out of
// it are refused before the target is looked at, so the message cannot leak its size or its
// existence.
TEST_F(GltfScene, BufferUriLeadingOutOfTheFolderIsRefused) {
  fs::create_directories(dir_ / "sub");
  write("secret.bin", "abcd");
  const auto load_sub = [&](const std::string& uri) {
    const std::string path =
        write("sub/scene.gltf",
              doc("[{}]", R"(,"buffers":[{"uri":")" + uri + R"(","byteLength":4}])"));
    return load_gltf_scene(path);
  };
  for (const std::string uri :
       {"../secret.bin", "../../../../../../etc/passwd", "x/../../secret.bin"}) {
    Result<Scene> scene = load_sub(uri);
    ASSERT_FALSE(scene.ok()) << uri;
    EXPECT_CONTAINS(scene.error().message, "leads outside the glTF file's folder");
    EXPECT_FALSE(contains(scene.error().message, "bytes")) << scene.error().message;
  }
  // A symlink to the file, and a symlinked folder, out of the folder.
  fs::create_symlink(dir_ / "secret.bin", dir_ / "sub" / "link.bin");
  fs::create_directory_symlink(dir_, dir_ / "sub" / "up");
  for (const std::string uri : {"link.bin", "up/secret.bin"}) {
    Result<Scene> scene = load_sub(uri);
    ASSERT_FALSE(scene.ok()) << uri;
    EXPECT_CONTAINS(scene.error().message, "buffers[0].uri \"" + uri + "\"");
    EXPECT_CONTAINS(scene.error().message, "leads outside the glTF file's folder");
  }
  // Inside it, `..` and symlinks are fine.
  write("sub/data.bin", "wxyz");
  fs::create_symlink("data.bin", dir_ / "sub" / "alias.bin");
  for (const std::string uri : {"alias.bin", "up/sub/data.bin", "../sub/data.bin"}) {
    Result<Scene> scene = load_sub(uri);
    EXPECT_TRUE(scene.ok()) << uri << ": " << scene.error().message;
  }
}

TEST_F(GltfScene, AbsoluteAndSchemeBufferUrisAreRefusedWithTheReason) {
  const auto error_for = [&](const std::string& uri) {
    return error_of(doc("[{}]", R"(,"buffers":[{"uri":")" + uri + R"(","byteLength":4}])"));
  };
  EXPECT_CONTAINS(error_for("/etc/passwd"), "an absolute path is refused");
  EXPECT_CONTAINS(error_for("%2Fetc%2Fpasswd"), "an absolute path is refused");
  EXPECT_CONTAINS(error_for("file:///etc/passwd"), "the scheme \"file:\" is refused");
  EXPECT_CONTAINS(error_for("https://example.com/a.bin"), "the scheme \"https:\" is refused");
  EXPECT_CONTAINS(error_for("bad%zz.bin"), "not followed by two hex digits");
}

TEST_F(GltfScene, BufferFilesAreCheckedBySizeAndPercentDecoded) {
  write("my data.bin", "abcd");
  Result<Scene> ok =
      load_text(doc("[{}]", R"(,"buffers":[{"uri":"my%20data.bin","byteLength":4}])"));
  EXPECT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_CONTAINS(error_of(doc("[{}]", R"(,"buffers":[{"uri":"my%20data.bin","byteLength":9}])")),
                  "buffers[0].uri \"my%20data.bin\": a file of 4 bytes, but byteLength says 9");
  fs::create_directories(dir_ / "folder.bin");
  EXPECT_CONTAINS(error_of(doc("[{}]", R"(,"buffers":[{"uri":"folder.bin","byteLength":4}])")),
                  "not a regular file");
  EXPECT_CONTAINS(error_of(doc("[{}]", R"(,"buffers":[{"byteLength":4}])")),
                  "buffers[0] has no uri");
  EXPECT_CONTAINS(error_of(doc("[{}]", R"(,"buffers":[{"uri":"a.bin"}])")),
                  "buffers[0].byteLength must be an integer of at least 1");
}

// A data URI is checked by counting its base64 (4 characters per 3 bytes, less the padding),
// never decoded; what is wrong with it is said in one short line, without echoing it.
TEST_F(GltfScene, DataUrisAreCheckedByLengthInOneShortLine) {
  const auto with_data = [](const std::string& payload, uint64_t length) {
    return doc("[{}]", R"(,"buffers":[{"uri":"data:application/octet-stream;base64,)" + payload +
                           R"(","byteLength":)" + std::to_string(length) + "}]");
  };
  // "AQIDBA==" is the 4 bytes 1 2 3 4; unpadded and gltf-buffer forms too.
  for (const std::string& text :
       {with_data("AQIDBA==", 4), with_data("AQIDBA", 4), with_data("AQID", 3),
        doc("[{}]", R"(,"buffers":[{"uri":"data:application/gltf-buffer;base64,AQIDBAU=",)"
                    R"("byteLength":5}])")}) {
    Result<Scene> scene = load_text(text);
    EXPECT_TRUE(scene.ok()) << text << ": " << scene.error().message;
  }
  const std::string megabyte(1 << 20, 'Q');  // 786,432 bytes of base64
  const std::string mismatch = error_of(with_data(megabyte, 1000));
  EXPECT_CONTAINS(mismatch,
                  "buffers[0].uri is a data URI of 786432 bytes, but byteLength says 1000");
  EXPECT_LT(mismatch.size(), 300u) << mismatch;
  const std::string undecodable = error_of(with_data(megabyte + "*" + megabyte, 1000));
  EXPECT_CONTAINS(undecodable, "not valid base64: byte " + std::to_string(37 + (1 << 20)));
  EXPECT_LT(undecodable.size(), 300u) << undecodable;
  EXPECT_CONTAINS(error_of(with_data("AQIDB", 4)), "not whole base64 groups");
  EXPECT_CONTAINS(
      error_of(doc("[{}]", R"(,"buffers":[{"uri":"data:text/plain,hello","byteLength":5}])")),
      "not base64");
}

TEST_F(GltfScene, GlbBufferLongerThanItsBinChunkIsAnError) {
  const std::string json =
      R"({"asset":{"version":"2.0"},"buffers":[{"byteLength":8}],"scenes":[{"nodes":[0]}],)"
      R"("nodes":[{}]})";
  Result<Scene> scene = load_gltf_scene(write("short.glb", glb(json, std::string("\1\2\3\4", 4))));
  ASSERT_FALSE(scene.ok());
  EXPECT_CONTAINS(scene.error().message,
                  "byteLength is 8, more than the 4 bytes of the .glb BIN chunk");
}

TEST_F(GltfScene, GlbBufferWithoutBinChunkIsAnError) {
  const std::string json =
      R"({"asset":{"version":"2.0"},"buffers":[{"byteLength":4}],"scenes":[{"nodes":[0]}],)"
      R"("nodes":[{}]})";
  Result<Scene> scene = load_gltf_scene(write("nobin.glb", glb(json)));
  ASSERT_FALSE(scene.ok());
  EXPECT_CONTAINS(scene.error().message, "nobin.glb");
  EXPECT_CONTAINS(scene.error().message, "BIN chunk");
}

TEST_F(GltfScene, BrokenGlbContainersAreErrors) {
  const std::string good = glb(doc("[{}]"));
  Result<Scene> v1 = load_gltf_scene(write("v1.glb", glb(doc("[{}]"), "", 1)));
  ASSERT_FALSE(v1.ok());
  EXPECT_CONTAINS(v1.error().message, "version 1, expected 2");
  Result<Scene> cut = load_gltf_scene(write("cut.glb", good.substr(0, good.size() - 8)));
  ASSERT_FALSE(cut.ok());
  EXPECT_CONTAINS(cut.error().message, "truncated .glb");
  Result<Scene> tiny = load_gltf_scene(write("tiny.glb", "glTF\2\0\0\0"));
  ASSERT_FALSE(tiny.ok());
  EXPECT_CONTAINS(tiny.error().message, "truncated .glb");
}

TEST_F(GltfScene, GlbNameWithoutTheMagicIsNotAGlbUnlessItIsGltfText) {
  Result<Scene> binary = load_gltf_scene(write("noise.glb", std::string("\x1e\x93\0\x07zz", 6)));
  ASSERT_FALSE(binary.ok());
  EXPECT_CONTAINS(binary.error().message, "noise.glb: not a .glb file");
  EXPECT_CONTAINS(binary.error().message, "\"glTF\" magic");
  // The content decides: glTF JSON text under a .glb name loads.
  Result<Scene> text = load_gltf_scene(write("text.glb", doc("[{}]")));
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text->store.size(), 1u);
}

// The same "FILE:LINE:COLUMN: malformed JSON: REASON" as a JSON scene file, without nlohmann's
// exception id: the column is that of the last character read, the unexpected "2.0"'s closing
// quote (line 2 is `  {"version" "2.0"}}`, the quote is its 18th character).
TEST_F(GltfScene, MalformedJsonNamesLineAndColumnLikeASceneFile) {
  const std::string message = error_of("{\"asset\":\n  {\"version\" \"2.0\"}}");
  EXPECT_CONTAINS(message, "scene.gltf:2:18: malformed JSON: syntax error while parsing object");
  EXPECT_FALSE(contains(message, "json.exception")) << message;
  // In a .glb the place is in the JSON chunk's text: `{"asset" {}}` stops at the second
  // `{`, its 10th character.
  Result<Scene> chunk = load_gltf_scene(write("bad.glb", glb("{\"asset\" {}}")));
  ASSERT_FALSE(chunk.ok());
  EXPECT_CONTAINS(chunk.error().message, "bad.glb (JSON chunk):1:10: malformed JSON: syntax error");
}

TEST_F(GltfScene, StructuralMistakesAreErrorsThatSayWhere) {
  EXPECT_CONTAINS(error_of(R"({"asset":)"), "malformed JSON");
  EXPECT_CONTAINS(error_of(""), "malformed JSON");
  EXPECT_CONTAINS(error_of("[1, 2]"), "the top level is not a JSON object but an array");
  EXPECT_CONTAINS(error_of(R"({"asset":{"version":"2.0"},"scenes":[{}]})"),
                  "no nodes at all ('nodes' is missing)");
  EXPECT_CONTAINS(error_of(doc("[]")), "no nodes at all ('nodes' is empty)");
  EXPECT_CONTAINS(error_of(doc("{}")), "'nodes' must be an array, not an object");
  EXPECT_CONTAINS(error_of(R"({"asset":{"version":"2.0"},"nodes":[{}]})"),
                  "no scene at all ('scenes' is missing)");
  EXPECT_CONTAINS(error_of(R"({"asset":{"version":"2.0"},"scenes":[],"nodes":[{}]})"),
                  "no scene at all ('scenes' is empty)");
  EXPECT_CONTAINS(error_of(doc("[{}]", R"(,"scene":3)")),
                  "'scene' = 3 must be the index of one of the 1 scenes");
  EXPECT_CONTAINS(error_of(R"({"asset":{"version":"2.0"},"scenes":[{"nodes":[9]}],"nodes":[{}]})"),
                  "scenes[0].nodes[0] = 9 is out of range: the file has 1 nodes");
  // tinygltf's own checks come through too: glTF requires asset.version.
  EXPECT_CONTAINS(error_of(R"({"scenes":[{"nodes":[0]}],"nodes":[{}]})"), "asset");
}

TEST_F(GltfScene, BadChildrenAreErrorsThatSayWhich) {
  EXPECT_CONTAINS(error_of(doc(R"([{"children":[5]},{}])")),
                  "nodes[0].children[0] = 5 is out of range: the file has 2 nodes (0..1)");
  EXPECT_CONTAINS(error_of(doc(R"([{"children":[-1]},{}])")),
                  "nodes[0].children[0] = -1 is out of range");
  EXPECT_CONTAINS(error_of(doc(R"([{"children":[1.5]},{}])")),
                  "nodes[0].children[0] must be a node index (an integer), not 1.5");
  EXPECT_CONTAINS(error_of(doc(R"([{"children":"1"},{}])")),
                  "nodes[0].children must be an array of node indices, not a string");
  EXPECT_CONTAINS(error_of(doc(R"([{"children":[2]},{"children":[2]},{}])")),
                  "node 2 is a child of two parents, node 0 and node 1");
  EXPECT_CONTAINS(error_of(doc(R"([{"children":[1,1]},{}])")),
                  "nodes[0].children lists node 1 twice");
}

TEST_F(GltfScene, WronglyTypedNodePropertiesAreErrors) {
  EXPECT_CONTAINS(error_of(doc(R"([5])")), "nodes[0] must be an object, not a number");
  EXPECT_CONTAINS(error_of(doc(R"([{"name":7}])")), "nodes[0].name must be a string, not a number");
  EXPECT_CONTAINS(error_of(doc(R"([{"translation":"up"}])")),
                  "nodes[0].translation must be an array of 3 numbers, not a string");
  EXPECT_CONTAINS(error_of(doc(R"([{"rotation":[0,0,1]}])")),
                  "nodes[0].rotation must be an array of 4 numbers, not an array of 3");
  EXPECT_CONTAINS(error_of(doc(R"([{"scale":[1,"2",1]}])")),
                  "nodes[0].scale[1] must be a number, not a string");
  EXPECT_CONTAINS(error_of(doc(R"([{"matrix":[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0]}])")),
                  "nodes[0].matrix must be an array of 16 numbers, not an array of 15");
  EXPECT_CONTAINS(error_of(doc(R"([{"translation":[1e39,0,0]}])")),
                  "nodes[0].translation[0] = 1e+39 does not fit in a 32-bit float");
}

TEST_F(GltfScene, AbsurdlyDeepJsonIsRefused) {
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  EXPECT_CONTAINS(error_of(doc(R"([{"extras":)" + deep + "}]")), "nested deeper than 128 levels");
}

TEST_F(GltfScene, UnreadablePathsAreErrors) {
  Result<Scene> missing = load_gltf_scene((dir_ / "nope.gltf").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_CONTAINS(missing.error().message, "cannot open");
  EXPECT_CONTAINS(missing.error().message, "nope.gltf");
  Result<Scene> folder = load_gltf_scene(dir_.string());
  ASSERT_FALSE(folder.ok());
  EXPECT_CONTAINS(folder.error().message, "not a regular file");
}

TEST_F(GltfScene, CycleInChildrenIsKeptBrokenAndWarned) {
  // 0 -> 1 -> 2 -> 0 is a cycle; 3 hangs below it.
  Result<Scene> scene =
      load_text(doc(R"([{"children":[1]},{"children":[2]},{"children":[0,3]},{}])"));
  ASSERT_TRUE(scene.ok()) << scene.error().message;
  // Two warnings: the cycle, and scenes[0] naming node 0 as a root although it has a parent.
  ASSERT_EQ(scene->warnings.size(), 2u);
  EXPECT_CONTAINS(scene->warnings[0],
                  "scenes[0] lists node 0 as a root, but it is a child of node 2");
  EXPECT_CONTAINS(scene->warnings[1], "nodes 0, 1, 2 are their own ancestors");
  EXPECT_EQ(scene->store.parent(1), 0u);
  EXPECT_EQ(scene->store.parent(2), 1u);
  EXPECT_EQ(scene->store.parent(0), 2u);
  EXPECT_EQ(scene->store.parent(3), 2u);
  const DepthOrder order = sort_by_depth(scene->store);
  EXPECT_EQ(order.cycles_broken, 1u);
  EXPECT_EQ(order.entities_on_cycles, 3u);
  EXPECT_EQ(order.level_count(), 2u);
}

TEST_F(GltfScene, NodeThatIsItsOwnChildIsWarned) {
  Result<Scene> scene =
      load_text(R"({"asset":{"version":"2.0"},"scenes":[{}],"nodes":[{"children":[0]}]})");
  ASSERT_TRUE(scene.ok()) << scene.error().message;
  ASSERT_EQ(scene->warnings.size(), 1u);
  EXPECT_CONTAINS(scene->warnings[0], "node 0 is its own parent");
  EXPECT_EQ(scene->store.parent(0), 0u);
}

TEST_F(GltfScene, MatrixChildOnACycleStillGetsItsMatrixAsWorld) {
  // Both nodes stand at the root while the cycle lasts: node 1's matrix is its world transform.
  Result<Scene> scene = load_text(
      doc(R"([{"children":[1]},{"matrix":[1,0,0,0,0,1,0,0,0,0,1,0,4,5,6,1],"children":[0]}])"));
  ASSERT_TRUE(scene.ok()) << scene.error().message;
  const auto world = world_matrices_by_id(scene->store);
  EXPECT_EQ(world.at(1)[3], float4(4, 5, 6, 1));
}

TEST_F(GltfScene, UnnormalizedRotationIsWarnedAndKeptAsGiven) {
  Result<Scene> scene = load_text(doc(R"([{"name":"spinner","rotation":[0,0,0,2]}])"));
  ASSERT_TRUE(scene.ok()) << scene.error().message;
  ASSERT_EQ(scene->warnings.size(), 1u);
  EXPECT_CONTAINS(scene->warnings[0], "node 0 ('spinner'): rotation has length 2.000000, not 1");
  EXPECT_EQ(scene->store.rotation_at(scene->store.slot_of(0)), make_quat(0, 0, 0, 2));
}

TEST_F(GltfScene, VersionOtherThanTwoIsWarned) {
  Result<Scene> old =
      load_text(R"({"asset":{"version":"1.0"},"scenes":[{"nodes":[0]}],"nodes":[{}]})");
  ASSERT_TRUE(old.ok()) << old.error().message;
  ASSERT_EQ(old->warnings.size(), 1u);
  EXPECT_CONTAINS(old->warnings[0], "asset.version is \"1.0\"; tprop reads glTF 2.0");
  Result<Scene> current = load_text(doc("[{}]"));
  ASSERT_TRUE(current.ok()) << current.error().message;
  EXPECT_TRUE(current->warnings.empty());
}

TEST_F(GltfScene, RotationWithinToleranceIsNotWarned) {
  Result<Scene> scene = load_text(doc(R"([{"rotation":[0,0,0,1.0009]}])"));
  ASSERT_TRUE(scene.ok()) << scene.error().message;
  EXPECT_TRUE(scene->warnings.empty());
}

TEST_F(GltfScene, MatrixWithTrsUsesTheMatrixAndWarns) {
  Result<Scene> scene =
      load_text(doc(R"([{"matrix":[1,0,0,0,0,1,0,0,0,0,1,0,4,5,6,1],"translation":[9,9,9]}])"));
  ASSERT_TRUE(scene.ok()) << scene.error().message;
  ASSERT_EQ(scene->warnings.size(), 1u);
  EXPECT_CONTAINS(scene->warnings[0], "has both a matrix and translation/rotation/scale");
  EXPECT_EQ(scene->store.mask_at(scene->store.slot_of(0)), bit(Component::LocalToWorld));
}

TEST_F(GltfScene, ManyWarningsOfOneKindAreSummarized) {
  std::string nodes = "[";
  for (int i = 0; i < 25; ++i) nodes += std::string(i ? "," : "") + R"({"rotation":[0,0,0,3]})";
  Result<Scene> scene = load_text(doc(nodes + "]"));
  ASSERT_TRUE(scene.ok()) << scene.error().message;
  ASSERT_EQ(scene->warnings.size(), 11u);
  EXPECT_CONTAINS(scene->warnings.back(), "and 15 more warnings");
}

TEST_F(GltfScene, EveryTruncationOfAValidFileFailsCleanly) {
  // Never a crash or a hang, whatever prefix of a valid .gltf or .glb arrives.
  std::ifstream in(TPROP_ASSETS_DIR "/robot_arm.gltf", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  const std::string binary = glb(text, std::string(8, '\0'));
  for (const std::string* whole : {&text, &binary}) {
    for (size_t n = 0; n < whole->size(); n += 7) {
      Result<Scene> scene = parse_gltf_scene(std::string_view(*whole).substr(0, n), "cut");
      EXPECT_FALSE(scene.ok()) << n;
    }
  }
}

TEST_F(GltfScene, LoadSceneDispatchesGltfByExtensionAndGlbByMagic) {
  Result<Scene> gltf = load_scene(TPROP_ASSETS_DIR "/robot_arm.gltf");
  ASSERT_TRUE(gltf.ok()) << gltf.error().message;
  EXPECT_EQ(gltf->store.size(), 6u);
  EXPECT_EQ(gltf->names.at(4), "lamp");
  Result<Scene> glb_file =
      load_scene(write("anything.bin", glb(doc(R"([{"name":"only","scale":[1,2,3]}])"))));
  ASSERT_TRUE(glb_file.ok()) << glb_file.error().message;
  EXPECT_EQ(glb_file->names.at(0), "only");
  // A broken .gltf reports the glTF loader's error, not the JSON scene loader's.
  Result<Scene> broken = load_scene(write("broken.gltf", doc(R"([{"children":[3]}])")));
  ASSERT_FALSE(broken.ok());
  EXPECT_CONTAINS(broken.error().message, "nodes[0].children[0] = 3 is out of range");
}

TEST_F(GltfScene, RecognizesGltfPathsAndGlbBytes) {
  EXPECT_TRUE(is_gltf_path("a/b/Robot.GLTF"));
  EXPECT_TRUE(is_gltf_path("x.glb"));
  EXPECT_FALSE(is_gltf_path("x.json"));
  EXPECT_FALSE(is_gltf_path("gltf"));
  EXPECT_TRUE(looks_like_glb("glTF\2\0\0\0"));
  EXPECT_FALSE(looks_like_glb("{\"asset\""));
}

}  // namespace
}  // namespace tprop
