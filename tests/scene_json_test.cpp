// The JSON scene loader, load_scene's file handling and the dump. Expected values are the
// literals written in each test's scene text, or hand-computed from them.
#include "scene_json.h"

#include <cmath>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "depth_order.h"
#include "dump.h"
#include "reference.h"
#include "scene_input.h"
#include "test_files.h"

namespace tprop {
namespace {

Scene load(const std::string& text) {
  Result<Scene> r = parse_scene_json(text, "test.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (!r.ok()) return Scene{};
  return std::move(r).value();
}

// The error message of a scene that must fail to load.
std::string error_of(const std::string& text) {
  Result<Scene> r = parse_scene_json(text, "test.json");
  EXPECT_FALSE(r.ok()) << "loaded, but should have failed: " << text;
  return r.ok() ? std::string() : r.error().message;
}

std::string one_entity(const std::string& body) {
  return R"({"entities": [{"id": 7, )" + body + "}]}";
}

using test::read_text;
using test::temp_path;
using test::write_file;

// ---------------------------------------------------------------------------------------------
// Values land in the store exactly.

TEST(SceneJson, CommonComponentsLandInTheStoreExactly) {
  Scene scene = load(R"({"entities": [
    {"id": 4294967295, "name": "far", "Translation": [1.5, -2, 3.25],
     "Rotation": [0, 0.6, 0, 0.8], "Scale": 2.5, "parent": 12}
  ]})");
  ASSERT_EQ(scene.store.size(), 1u);
  const uint32_t s = scene.store.slot_of(4294967295u);
  ASSERT_NE(s, EntityStore::kNoSlot);
  EXPECT_EQ(scene.store.translation_at(s), float3(1.5f, -2.0f, 3.25f));
  const quat q = scene.store.rotation_at(s);
  EXPECT_EQ(q.x, 0.0f);
  EXPECT_EQ(q.y, 0.6f);
  EXPECT_EQ(q.z, 0.0f);
  EXPECT_EQ(q.w, 0.8f);
  EXPECT_EQ(scene.store.scale_at(s), 2.5f);
  EXPECT_EQ(scene.store.parent(4294967295u), std::optional<EntityId>(12u));
  EXPECT_EQ(scene.names.at(4294967295u), "far");
  EXPECT_EQ(scene.source, "test.json");
  EXPECT_TRUE(scene.warnings.empty());
  EXPECT_EQ(scene.store.mask_at(s), bit(Component::Translation) | bit(Component::Rotation) |
                                        bit(Component::Scale) | bit(Component::Parent));
}

TEST(SceneJson, RareComponentsLandInTheStoreExactly) {
  Scene scene = load(one_entity(R"(
    "NonUniformScale": [1, 2, 3],
    "RotationEulerXYZ": [0.1, 0.2, 0.3], "RotationEulerXZY": [1, 0, 0],
    "RotationEulerYXZ": [2, 0, 0], "RotationEulerYZX": [3, 0, 0],
    "RotationEulerZXY": [4, 0, 0], "RotationEulerZYX": [5, 0, 0],
    "PostRotation": [1, 0, 0, 0],
    "PostRotationEulerXYZ": [6, 0, 0], "PostRotationEulerXZY": [7, 0, 0],
    "PostRotationEulerYXZ": [8, 0, 0], "PostRotationEulerYZX": [9, 0, 0],
    "PostRotationEulerZXY": [10, 0, 0], "PostRotationEulerZYX": [11, 0, 0.5],
    "RotationPivot": [1, 0, 0], "RotationPivotTranslation": [0, 2, 0],
    "ScalePivot": [0, 0, 3], "ScalePivotTranslation": [4, 4, 4])"));
  const uint32_t s = scene.store.slot_of(7);
  const RareComponents* r = scene.store.rare_at(s);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(scene.store.non_uniform_scale_at(s), float3(1, 2, 3));
  EXPECT_EQ(r->rotation_euler[int(EulerOrder::XYZ)], float3(0.1f, 0.2f, 0.3f));
  EXPECT_EQ(r->rotation_euler[int(EulerOrder::XZY)], float3(1, 0, 0));
  EXPECT_EQ(r->rotation_euler[int(EulerOrder::YXZ)], float3(2, 0, 0));
  EXPECT_EQ(r->rotation_euler[int(EulerOrder::YZX)], float3(3, 0, 0));
  EXPECT_EQ(r->rotation_euler[int(EulerOrder::ZXY)], float3(4, 0, 0));
  EXPECT_EQ(r->rotation_euler[int(EulerOrder::ZYX)], float3(5, 0, 0));
  EXPECT_EQ(r->post_rotation.x, 1.0f);
  EXPECT_EQ(r->post_rotation.w, 0.0f);
  EXPECT_EQ(r->post_rotation_euler[int(EulerOrder::XYZ)], float3(6, 0, 0));
  EXPECT_EQ(r->post_rotation_euler[int(EulerOrder::XZY)], float3(7, 0, 0));
  EXPECT_EQ(r->post_rotation_euler[int(EulerOrder::YXZ)], float3(8, 0, 0));
  EXPECT_EQ(r->post_rotation_euler[int(EulerOrder::YZX)], float3(9, 0, 0));
  EXPECT_EQ(r->post_rotation_euler[int(EulerOrder::ZXY)], float3(10, 0, 0));
  EXPECT_EQ(r->post_rotation_euler[int(EulerOrder::ZYX)], float3(11, 0, 0.5f));
  EXPECT_EQ(r->pivot[int(PivotComponent::RotationPivot)], float3(1, 0, 0));
  EXPECT_EQ(r->pivot[int(PivotComponent::RotationPivotTranslation)], float3(0, 2, 0));
  EXPECT_EQ(r->pivot[int(PivotComponent::ScalePivot)], float3(0, 0, 3));
  EXPECT_EQ(r->pivot[int(PivotComponent::ScalePivotTranslation)], float3(4, 4, 4));
  for (Component c : {Component::NonUniformScale, Component::RotationEulerZYX,
                      Component::PostRotation, Component::PostRotationEulerXYZ,
                      Component::RotationPivot, Component::ScalePivotTranslation})
    EXPECT_TRUE(scene.store.has_at(s, c)) << component_name(c);
  // An Euler component does not add the Rotation component itself (compose.h derives it).
  EXPECT_FALSE(scene.store.has_at(s, Component::Rotation));
}

TEST(SceneJson, NullMatrixIsPresentIdentityAndSixteenNumbersAreColumnMajor) {
  Scene scene = load(one_entity(R"(
    "CompositeRotation": null, "CompositeScale": null, "ParentScaleInverse": null,
    "LocalToParent": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
    "LocalToWorld": [2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 7, 8, 9, 1])"));
  const uint32_t s = scene.store.slot_of(7);
  const RareComponents* r = scene.store.rare_at(s);
  ASSERT_NE(r, nullptr);
  for (MatrixComponent m : {MatrixComponent::CompositeRotation, MatrixComponent::CompositeScale,
                            MatrixComponent::ParentScaleInverse}) {
    EXPECT_TRUE(scene.store.has_at(s, component_of(m)));
    EXPECT_EQ(r->matrix[int(m)], float4x4(1.0f));
  }
  const float4x4& ltp = r->matrix[int(MatrixComponent::LocalToParent)];
  EXPECT_EQ(ltp[0][0], 1.0f);   // column 0, row 0
  EXPECT_EQ(ltp[0][1], 2.0f);   // column 0, row 1
  EXPECT_EQ(ltp[1][0], 5.0f);   // column 1, row 0
  EXPECT_EQ(ltp[3][0], 13.0f);  // column 3 (translation), row 0
  EXPECT_EQ(ltp[3][3], 16.0f);
  const float4x4& ltw = r->matrix[int(MatrixComponent::LocalToWorld)];
  EXPECT_EQ(ltw[3], float4(7, 8, 9, 1));
  EXPECT_EQ(ltw[1], float4(0, 2, 0, 0));
  EXPECT_TRUE(scene.store.has_at(s, Component::LocalToWorld));
}

TEST(SceneJson, TagsAreSetOnlyWhenTrue) {
  Scene scene = load(R"({"entities": [
    {"id": 1, "static": true, "writeGroupOverride": true},
    {"id": 2, "static": false, "writeGroupOverride": false}
  ]})");
  EXPECT_TRUE(scene.store.has(1, Component::Static));
  EXPECT_TRUE(scene.store.has(1, Component::WriteGroupOverride));
  EXPECT_FALSE(scene.store.has(2, Component::Static));
  EXPECT_FALSE(scene.store.has(2, Component::WriteGroupOverride));
  EXPECT_TRUE(scene.names.empty());
}

TEST(SceneJson, UnknownParentLoadsAndStandsAtTheRoot) {
  Scene scene = load(R"({"entities": [{"id": 1, "parent": 99}, {"id": 2, "parent": 1}]})");
  const DepthOrder order = sort_by_depth(scene.store);
  EXPECT_EQ(order.unknown_parents, 1u);
  EXPECT_EQ(order.roots, 1u);
  EXPECT_EQ(order.level_count(), 2u);
}

TEST(SceneJson, EmptyEntityListIsAnEmptyScene) {
  Scene scene = load(R"({"description": "nothing", "entities": []})");
  EXPECT_EQ(scene.store.size(), 0u);
}

TEST(SceneJson, NumbersAtTheEdgeOfFloatRangeAreKept) {
  // 3.40282347e+38 is how %.9g prints the largest float: it must load back.
  Scene scene = load(one_entity(R"("Translation": [3.40282347e+38, -3.40282347e+38, 1e-50])"));
  const float3 t = scene.store.translation_at(scene.store.slot_of(7));
  EXPECT_EQ(t.x, std::numeric_limits<float>::max());
  EXPECT_EQ(t.y, -std::numeric_limits<float>::max());
  EXPECT_EQ(t.z, 0.0f);
}

// ---------------------------------------------------------------------------------------------
// Warnings.

TEST(SceneJson, WarnsAboutQuaternionsOffUnitLengthAndKeepsThemAsGiven) {
  Scene scene = load(R"({"entities": [
    {"id": 3, "Rotation": [0, 0, 0, 2]},
    {"id": 4, "PostRotation": [0, 0, 0, 1.0005]},
    {"id": 5, "PostRotation": [0.5, 0.5, 0.5, 0.5]}
  ]})");
  ASSERT_EQ(scene.warnings.size(), 1u);
  EXPECT_CONTAINS(scene.warnings[0], "entity 3");
  EXPECT_CONTAINS(scene.warnings[0], "Rotation");
  EXPECT_CONTAINS(scene.warnings[0], "length 2");
  EXPECT_EQ(scene.store.rotation_at(scene.store.slot_of(3)).w, 2.0f);
}

TEST(SceneJson, QuaternionWarningsAreCappedWithACount) {
  std::string text = R"({"entities": [)";
  for (int i = 0; i < 25; ++i) text += (i ? "," : "") + std::string(R"({"id": )") +
                                       std::to_string(i) + R"(, "Rotation": [0, 0, 0, 0]})";
  text += "]}";
  Scene scene = load(text);
  ASSERT_EQ(scene.warnings.size(), 21u);
  EXPECT_CONTAINS(scene.warnings.back(), "5 more");
}

// ---------------------------------------------------------------------------------------------
// Errors: each names what is wrong and where.

TEST(SceneJson, MalformedJsonNamesLineAndColumn) {
  // Line 3 is `  {"id": 1,, }`: the second comma is its 12th character.
  const std::string e = error_of("{\n \"entities\": [\n  {\"id\": 1,, }\n]}");
  EXPECT_CONTAINS(e, "test.json:3:12:");
  EXPECT_CONTAINS(e, "malformed JSON");
}

TEST(SceneJson, TruncatedAndEmptyDocumentsAreMalformed) {
  EXPECT_CONTAINS(error_of(""), "test.json:1:1:");
  EXPECT_CONTAINS(error_of("{\"entities\": [\n"), "test.json:2:");
  EXPECT_CONTAINS(error_of("{\"entities\": []} x"), "test.json:1:18:");
}

TEST(SceneJson, NumberTooLargeForADoubleIsMalformedAtItsFirstCharacter) {
  // 1e999 would be infinity; it starts at column 37.
  const std::string e = error_of(R"({"entities":[{"id":1,"Translation":[1e999,0,0]}]})");
  EXPECT_CONTAINS(e, "test.json:1:37:");
  EXPECT_CONTAINS(e, "1e999");
}

TEST(SceneJson, NanAndInfinityLiteralsAreMalformedAtTheirFirstCharacter) {
  // JSON has neither; `{"entities":[{"id":1,"Scale":` is 29 characters.
  EXPECT_CONTAINS(error_of(R"({"entities":[{"id":1,"Scale":NaN}]})"),
                  "test.json:1:30: malformed JSON");
  EXPECT_CONTAINS(error_of(R"({"entities":[{"id":1,"Scale":Infinity}]})"),
                  "test.json:1:30: malformed JSON");
}

TEST(SceneJson, NumberTooLargeForAFloatNamesComponentAndElement) {
  const std::string e = error_of(one_entity(R"("Translation": [0, 1e39, 0])"));
  EXPECT_CONTAINS(e, "entity 7 (entities[0])");
  EXPECT_CONTAINS(e, "Translation");
  EXPECT_CONTAINS(e, "element 1");
  EXPECT_CONTAINS(e, "too large for a float");
  EXPECT_CONTAINS(error_of(one_entity(R"("Scale": -1e300)")), "Scale");
}

TEST(SceneJson, TopLevelMustBeAnObjectWithAnEntitiesArray) {
  EXPECT_CONTAINS(error_of("[1, 2]"), "top level");
  EXPECT_CONTAINS(error_of("{}"), "missing the \"entities\" array");
  EXPECT_CONTAINS(error_of(R"({"entities": {"id": 1}})"), "\"entities\" must be an array");
  EXPECT_CONTAINS(error_of(R"({"entities": [], "units": "m"})"), "unknown top-level key \"units\"");
  // glTF text under another name (a pipe) is pointed to the .gltf extension.
  EXPECT_CONTAINS(error_of(R"({"asset": {"version": "2.0"}, "nodes": []})"),
                  "glTF text is read from a file whose name ends in .gltf");
}

TEST(SceneJson, EntityMustBeAnObject) {
  const std::string e = error_of(R"({"entities": [{"id": 1}, 5]})");
  EXPECT_CONTAINS(e, "entities[1]");
  EXPECT_CONTAINS(e, "expected an entity object, got the number 5");
}

TEST(SceneJson, UnknownKeyNamesTheKeyAndTheEntity) {
  const std::string e =
      error_of(R"({"entities": [{"id": 1}, {"id": 42, "Translaton": [0, 0, 0]}]})");
  EXPECT_CONTAINS(e, "entity 42 (entities[1])");
  EXPECT_CONTAINS(e, "unknown key \"Translaton\"");
  EXPECT_CONTAINS(error_of(one_entity(R"("translation": [0, 0, 0])")),
                  "did you mean \"Translation\"?");
  EXPECT_CONTAINS(error_of(one_entity(R"("Parent": 3)")), "spells it \"parent\"");
  EXPECT_CONTAINS(error_of(one_entity(R"("Static": true)")), "spells it \"static\"");
  // The spec's derived components are not written by a scene.
  EXPECT_CONTAINS(error_of(one_entity(R"("Child": [1])")),
                  "unknown key \"Child\" (Child lists are derived from Parent");
  EXPECT_CONTAINS(error_of(one_entity(R"("PreviousParent": 1)")),
                  "unknown key \"PreviousParent\" (PreviousParent is derived");
}

TEST(SceneJson, WrongShapeNamesComponentEntityAndExpectation) {
  std::string e = error_of(one_entity(R"("Translation": [1, 2])"));
  EXPECT_CONTAINS(e, "entity 7");
  EXPECT_CONTAINS(e, "Translation must be [x, y, z]");
  EXPECT_CONTAINS(e, "an array of 2 values");

  e = error_of(one_entity(R"("Rotation": [0, 0, 1])"));
  EXPECT_CONTAINS(e, "Rotation must be a quaternion [x, y, z, w]");

  e = error_of(one_entity(R"("RotationEulerZXY": [0, "1", 0])"));
  EXPECT_CONTAINS(e, "RotationEulerZXY");
  EXPECT_CONTAINS(e, "element 1: got the string \"1\"");

  e = error_of(one_entity(R"("Scale": [2])"));
  EXPECT_CONTAINS(e, "Scale must be a number");

  e = error_of(one_entity(R"("LocalToWorld": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0])"));
  EXPECT_CONTAINS(e, "LocalToWorld must be null or 16 numbers");
  EXPECT_CONTAINS(e, "an array of 15 values");

  e = error_of(one_entity(R"("CompositeScale": true)"));
  EXPECT_CONTAINS(e, "CompositeScale");

  EXPECT_CONTAINS(error_of(one_entity(R"("name": 3)")), "\"name\" must be a string");
  EXPECT_CONTAINS(error_of(one_entity(R"("static": 1)")), "\"static\" must be true or false");
  EXPECT_CONTAINS(error_of(one_entity(R"("parent": "sun")")), "\"parent\" must be an entity id");
  EXPECT_CONTAINS(error_of(one_entity(R"("parent": -1)")), "\"parent\" must be an entity id");
}

TEST(SceneJson, IdMustBeAnIntegerInRange) {
  EXPECT_CONTAINS(error_of(R"({"entities": [{"name": "x"}]})"), "entities[0]: missing \"id\"");
  for (const char* bad : {"4294967296", "-1", "1.5", "\"3\"", "null", "1e3"}) {
    const std::string e = error_of(std::string(R"({"entities": [{"id": )") + bad + "}]}");
    EXPECT_CONTAINS(e, "entities[0]");
    EXPECT_CONTAINS(e, "\"id\" must be an integer from 0 to 4294967295");
  }
}

TEST(SceneJson, DuplicateIdNamesItAndBothIndices) {
  const std::string e = error_of(R"({"entities": [{"id": 9}, {"id": 1}, {"id": 9}]})");
  EXPECT_CONTAINS(e, "duplicate id 9");
  EXPECT_CONTAINS(e, "entities[2]");
  EXPECT_CONTAINS(e, "entities[0]");
}

TEST(SceneJson, DuplicateKeyIsAnErrorNotASilentOverwrite) {
  const std::string e =
      error_of(R"({"entities": [{"id": 1}, {"id": 2, "Scale": 1, "Scale": 2}]})");
  EXPECT_CONTAINS(e, "duplicate key \"Scale\" in entities[1]");
}

// ---------------------------------------------------------------------------------------------
// load_scene: files.

TEST(LoadScene, MissingFileNamesThePathAndTheReason) {
  const std::string path = temp_path("does_not_exist.json");
  Result<Scene> r = load_scene(path);
  ASSERT_FALSE(r.ok());
  EXPECT_CONTAINS(r.error().message, path);
  EXPECT_CONTAINS(r.error().message, "No such file or directory");
}

TEST(LoadScene, DirectoryIsAnError) {
  Result<Scene> r = load_scene(::testing::TempDir());
  ASSERT_FALSE(r.ok());
  EXPECT_CONTAINS(r.error().message, "Is a directory");
}

TEST(LoadScene, DeviceIsAnErrorNotAnEndlessRead) {
  // /dev/zero never ends: reading it would only stop when memory runs out.
  Result<Scene> r = load_scene("/dev/zero");
  ASSERT_FALSE(r.ok());
  EXPECT_CONTAINS(r.error().message, "cannot read /dev/zero: a device");
}

TEST(LoadScene, JsonFileLoadsByExtensionOrByContent) {
  const std::string with_ext = temp_path("scene.json");
  const std::string without_ext = temp_path("scene_no_extension");
  write_file(with_ext, R"({"entities": [{"id": 1}, {"id": 2, "parent": 1}]})");
  write_file(without_ext, "\n  {\"entities\": [{\"id\": 5}]}");
  Result<Scene> a = load_scene(with_ext);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->store.size(), 2u);
  EXPECT_EQ(a->source, with_ext);
  Result<Scene> b = load_scene(without_ext);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_TRUE(b->store.contains(5));
}

TEST(LoadScene, ByteOrderMarkIsSkippedByExtensionAndByContent) {
  const std::string text = "\xEF\xBB\xBF{\"entities\": [{\"id\": 8}]}";
  for (const std::string& path : {temp_path("bom.json"), temp_path("bom_no_extension")}) {
    write_file(path, text);
    Result<Scene> r = load_scene(path);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->store.contains(8)) << path;
  }
}

TEST(LoadScene, MalformedFileNamesPathLineAndColumn) {
  const std::string path = temp_path("malformed.json");
  write_file(path, "{\"entities\": [\n  {\"id\": 1}\n  {\"id\": 2}\n]}");
  Result<Scene> r = load_scene(path);
  ASSERT_FALSE(r.ok());
  EXPECT_CONTAINS(r.error().message, path + ":3:3:");
}

TEST(LoadScene, UnrecognizedContentIsAnError) {
  const std::string path = temp_path("mystery.bin");
  write_file(path, "\x01\x02 not a scene");
  Result<Scene> r = load_scene(path);
  ASSERT_FALSE(r.ok());
  EXPECT_CONTAINS(r.error().message, "unknown scene format");
}

// ---------------------------------------------------------------------------------------------
// The dump.

nlohmann::json dump_of(Scene& scene, const std::string& file) {
  const DepthOrder order = sort_by_depth(scene.store);
  CpuReference reference;
  std::vector<float4x4> ltw;
  reference.evaluate(scene.store, order, ltw);
  const std::string path = temp_path(file);
  Status s = write_dump(path, scene, order, ltw);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return nlohmann::json::parse(read_text(path));
}

TEST(Dump, ListsEntitiesInIdOrderWithNamesOnlyWhereGiven) {
  // The parent (id 10) is translated by (1, 2, 3), its child (id 3) by (1, 0, 0): the child's
  // world translation is (2, 2, 3). Id 5 has no name and no components: identity.
  Scene scene = load(R"({"entities": [
    {"id": 10, "name": "parent", "Translation": [1, 2, 3]},
    {"id": 3, "name": "child", "parent": 10, "Translation": [1, 0, 0]},
    {"id": 5}
  ]})");
  const nlohmann::json dump = dump_of(scene, "dump_order.json");
  ASSERT_TRUE(dump.is_object());
  ASSERT_EQ(dump.size(), 1u);
  const nlohmann::json& entities = dump.at("entities");
  ASSERT_EQ(entities.size(), 3u);
  EXPECT_EQ(entities[0].at("id"), 3);
  EXPECT_EQ(entities[0].at("name"), "child");
  EXPECT_EQ(entities[0].at("localToWorld"),
            nlohmann::json({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 2, 2, 3, 1}));
  EXPECT_EQ(entities[1].at("id"), 5);
  EXPECT_FALSE(entities[1].contains("name"));
  EXPECT_EQ(entities[1].at("localToWorld"),
            nlohmann::json({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(entities[2].at("id"), 10);
  EXPECT_EQ(entities[2].at("name"), "parent");
  EXPECT_EQ(entities[2].at("localToWorld"),
            nlohmann::json({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 2, 3, 1}));
}

TEST(Dump, NumbersRoundTripToTheSameFloat) {
  // A user-written LocalToWorld is dumped as given: every element must read back bit-exact.
  Scene scene = load(one_entity(R"("writeGroupOverride": true, "LocalToWorld":
      [0.1, 0.2, 0.3, 0, 0.333333343, 1e-7, 3.40282347e+38, 0, -1.17549435e-38, 7, 8, 0,
       123456.789, -0.000123, 1.5, 1])"));
  const nlohmann::json dump = dump_of(scene, "dump_roundtrip.json");
  const float expected[16] = {0.1f, 0.2f, 0.3f, 0, 0.333333343f, 1e-7f, 3.40282347e+38f, 0,
                              -1.17549435e-38f, 7, 8, 0, 123456.789f, -0.000123f, 1.5f, 1};
  const nlohmann::json& m = dump.at("entities")[0].at("localToWorld");
  ASSERT_EQ(m.size(), 16u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(static_cast<float>(m[i].get<double>()), expected[i]) << i;
  // The shortest form that round-trips: 0.1f is written "0.1", not "0.100000001".
  EXPECT_CONTAINS(read_text(temp_path("dump_roundtrip.json")),
                  "[0.1, 0.2, 0.3, 0, 0.33333334, 1e-07,");
}

TEST(Dump, NamesAreEscapedIntoValidJson) {
  Scene scene = load(R"({"entities": [{"id": 1, "name": "a \"quoted\"\\ name\n\t\u0001 é"}]})");
  const nlohmann::json dump = dump_of(scene, "dump_names.json");
  EXPECT_EQ(dump.at("entities")[0].at("name"), "a \"quoted\"\\ name\n\t\x01 \xc3\xa9");
}

TEST(Dump, NonFiniteResultsAreWrittenAsNull) {
  // 3e38 * 3e38 overflows a float: the child's scale column is infinite.
  Scene scene = load(R"({"entities": [
    {"id": 1, "Scale": 3e38}, {"id": 2, "parent": 1, "Scale": 3e38}]})");
  const nlohmann::json dump = dump_of(scene, "dump_inf.json");
  const nlohmann::json& child = dump.at("entities")[1].at("localToWorld");
  EXPECT_TRUE(child[0].is_null());
  EXPECT_EQ(child[1], 0);
  EXPECT_EQ(child[15], 1);
}

TEST(Dump, EmptySceneIsAnEmptyList) {
  Scene scene = load(R"({"entities": []})");
  const nlohmann::json dump = dump_of(scene, "dump_empty.json");
  EXPECT_EQ(dump, nlohmann::json::parse(R"({"entities": []})"));
}

TEST(Dump, UnwritablePathIsAnErrorNamingIt) {
  Scene scene = load(R"({"entities": []})");
  const DepthOrder order = sort_by_depth(scene.store);
  Status s = write_dump("/nonexistent-dir/dump.json", scene, order, {});
  ASSERT_FALSE(s.ok());
  EXPECT_CONTAINS(s.error().message, "/nonexistent-dir/dump.json");
  EXPECT_CONTAINS(s.error().message, "No such file or directory");
}

}  // namespace
}  // namespace tprop
