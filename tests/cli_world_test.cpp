// `tprop run WORLD` as a user runs it: a generated world replayed for --frames N with a report
// per frame, the same world saved with --save-world and replayed from its folder, a manifest
// that loads and unloads scenes, and the errors of bad worlds and misplaced options.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_support.h"

namespace {

using namespace tprop::test::cli;
using nlohmann::json;

// A folder under TempDir, empty at the start and removed at the end of the test.
class CliWorld : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_path(std::string("world_") +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

json run_json(const std::string& args) {
  const Outcome o = run_tprop(args + " --json");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  return json::parse(o.out, nullptr, false);
}

TEST_F(CliWorld, GeneratedWorldReportsEveryFrame) {
  const json j = run_json("run gen:dclworld:3:1 --frames 4 --backend cpu");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["scenes"], 3);
  EXPECT_EQ(j["entities"], 3 * 201);  // 200 entities a parcel, and each scene's root
  ASSERT_EQ(j["frames"].size(), 4u);
  EXPECT_EQ(j["frames"][0]["loaded"], 3);
  for (const json& f : j["frames"]) {
    EXPECT_GT(f["bytes"].get<uint64_t>(), 0u);
    EXPECT_GE(f["ingest_ms"].get<double>(), 0.0);
    EXPECT_TRUE(f["gpu_time_ms"].is_null());  // the CPU backend
  }
  EXPECT_TRUE(j["median_ms"].contains("frame"));
  const Outcome text = run_tprop("run gen:dclworld:3:1 --frames 4 --backend cpu");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_CONTAINS(text.out, "median");
  EXPECT_CONTAINS(text.out, "frames           4");
}

TEST_F(CliWorld, SavedWorldReplaysFromItsFolderLikeTheGeneratedOne) {
  const json generated =
      run_json("run gen:dclworld:2:1 --frames 5 --seed 7 --backend cpu --save-world " +
               tprop::test::cli::quoted(dir_));
  ASSERT_TRUE(std::filesystem::exists(dir_ + "/world.json"));
  const json replayed = run_json("run " + tprop::test::cli::quoted(dir_) + " --backend cpu");
  ASSERT_EQ(replayed["frames"].size(), 5u);  // the manifest's frame offsets give the count
  for (size_t f = 0; f < 5; ++f) {
    EXPECT_EQ(replayed["frames"][f]["bytes"], generated["frames"][f]["bytes"]) << f;
    EXPECT_EQ(replayed["frames"][f]["entities"], generated["frames"][f]["entities"]) << f;
  }
}

TEST_F(CliWorld, ManifestLoadsAndUnloadsScenesBetweenFrames) {
  ASSERT_EQ(run_tprop("run gen:dclworld:3:1 --frames 2 --backend cpu --save-world " +
                      tprop::test::cli::quoted(dir_)).exit_code, 0);
  json manifest = json::parse(read_text(dir_ + "/world.json"));
  manifest["scenes"][1]["load"] = 2;
  manifest["scenes"][2]["unload"] = 3;
  write_file(dir_ + "/world.json", manifest.dump());
  const json j = run_json("run " + tprop::test::cli::quoted(dir_) + " --frames 5 --backend cpu");
  ASSERT_EQ(j["frames"].size(), 5u);
  const int scenes[5] = {2, 2, 3, 2, 2};
  for (int f = 0; f < 5; ++f) EXPECT_EQ(j["frames"][f]["scenes"], scenes[f]) << f;
  EXPECT_EQ(j["frames"][3]["unloaded"], 1);
  EXPECT_EQ(j["frames"][4]["bytes"], 0);  // every stream is spent
  EXPECT_EQ(j["entities"], 2 * 201);
}

TEST_F(CliWorld, BadWorldsFailNamingWhatIsWrong) {
  std::filesystem::create_directories(dir_);
  write_file(dir_ + "/world.json", R"({"scenes": [{"name": "a", "parcel": [1], "stream": "a.crdt"}]})");
  Outcome o = run_tprop("run " + tprop::test::cli::quoted(dir_));
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "scenes[0].parcel");
  // A stream cut inside a message: the scene and the offset are named.
  write_file(dir_ + "/a.crdt", std::string("\x30\x00\x00\x00\x01\x00\x00\x00\x01", 9));
  write_file(dir_ + "/world.json", R"({"scenes": [{"name": "a", "parcel": [1, 2], "stream": "a.crdt"}]})");
  o = run_tprop("run " + tprop::test::cli::quoted(dir_) + " --backend cpu");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "scene 'a'");
  EXPECT_CONTAINS(o.err, "offset 0");
  o = run_tprop("run gen:dclworld:0");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "SCENES must be");
  o = run_tprop("run gen:dclworld:1 --dump " + tprop::test::cli::quoted(dir_ + "/dump.json"));
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "--dump");
}

TEST_F(CliWorld, WorldOptionsOnAnythingElseAreUsageErrors) {
  Outcome o = run_tprop("run gen:chain:10 --frames 3");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_CONTAINS(o.err, "--frames and --save-world replay a world");
  o = run_tprop("run --save-world x");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_CONTAINS(o.err, "solar_system.json");  // the default scene is no world
  o = run_tprop("run gen:dclworld:2 --frames 0");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_CONTAINS(o.err, "--frames needs");
}

TEST_F(CliWorld, ValidateComparesTheGpuWithTheReferenceOnEveryFrame) {
  REQUIRE_DEVICE_OR_SKIP();
  const json j = run_json("run gen:dclworld:6:2 --frames 6 --validate");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["backend"], "gpu");
  EXPECT_TRUE(j["validate"]["within_tolerance"].get<bool>());
  for (const json& f : j["frames"]) EXPECT_TRUE(f["gpu_time_ms"].is_object());
}

}  // namespace
