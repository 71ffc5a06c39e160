// `tprop run WORLD` as a user runs it: a generated world replayed for --frames N with a report
// per frame, the same world saved with --save-world and replayed from its folder, a manifest
// that loads and unloads scenes, the dump by (scene, entity), and the errors of bad worlds and
// misplaced options.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
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

// tprop::test::cli::quoted, under a name that std::quoted cannot shadow through ADL.
std::string q(const std::string& path) { return tprop::test::cli::quoted(path); }

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
    EXPECT_TRUE(f["staged"].is_null());
  }
  EXPECT_TRUE(j["output_layout"].is_null());
  EXPECT_TRUE(j["median_ms"].contains("frame"));
  // Frames 1 to 3: the p90 of three is their largest, which is also the slowest frame.
  double slowest = 0;
  for (size_t f = 1; f < 4; ++f)
    slowest = std::max(slowest, j["frames"][f]["host_ms"].get<double>());
  EXPECT_EQ(j["max_host_ms"].get<double>(), slowest);
  EXPECT_EQ(j["p90_ms"]["host"].get<double>(), slowest);
  EXPECT_LE(j["median_ms"]["host"].get<double>(), j["p90_ms"]["host"].get<double>());
  const Outcome text = run_tprop("run gen:dclworld:3:1 --frames 4 --backend cpu");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_CONTAINS(text.out, "median");
  EXPECT_CONTAINS(text.out, "slowest host");
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
  o = run_tprop("run gen:dclworld:1 --backend cpu --dump " +
                tprop::test::cli::quoted(dir_ + "/no/such/folder/dump.json"));
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "no/such/folder/dump.json");
}

// The element of a dump's 16 numbers (column-major) at column c, row r.
float element(const json& m, int c, int r) { return m[size_t(c * 4 + r)].get<float>(); }

// {id: localToWorld} of a dump's entity list.
std::map<uint64_t, json> by_id(const json& entities) {
  std::map<uint64_t, json> out;
  for (const json& e : entities) out[e["id"].get<uint64_t>()] = e["localToWorld"];
  return out;
}

// The world dump against an independent path: each scene's stream replayed alone by the
// single-scene command (DclScene, its own store and depth sort), whose matrices, moved to the
// scene's parcel (16 m a parcel: a translation by (16x, 0, 16y)), must be the world's. `spec`
// is replayed for `frames` frames and saved to `dir`; the dump lists the scenes loaded at the
// end, each of which has then read its whole saved stream.
void expect_dump_matches_single_scenes(const std::string& spec, uint32_t frames,
                                       const std::string& dir) {
  const std::string dump = dir + "/world_dump.json";
  const Outcome run = run_tprop("run " + spec + " --frames " + std::to_string(frames) +
                                " --seed 5 --backend cpu --save-world " + q(dir) + " --dump " +
                                q(dump));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json world = json::parse(read_text(dump), nullptr, false);
  const json manifest = json::parse(read_text(dir + "/world.json"), nullptr, false);
  ASSERT_FALSE(world.is_discarded());
  ASSERT_FALSE(manifest.is_discarded());
  EXPECT_EQ(world["frames"], frames);
  std::vector<json> loaded_at_end;
  for (const json& listed : manifest["scenes"])
    if (!listed.contains("unload")) loaded_at_end.push_back(listed);
  ASSERT_EQ(world["scenes"].size(), loaded_at_end.size());
  for (size_t i = 0; i < loaded_at_end.size(); ++i) {
    const json& scene = world["scenes"][i];
    const json& listed = loaded_at_end[i];
    SCOPED_TRACE(listed["name"].get<std::string>());
    EXPECT_EQ(scene["name"], listed["name"]);
    ASSERT_EQ(scene["parcel"], listed["parcel"]);
    const float px = 16.0f * scene["parcel"][0].get<float>();
    const float pz = 16.0f * scene["parcel"][1].get<float>();

    const std::string single_dump = dir + "/single" + std::to_string(i) + ".json";
    const Outcome o = run_tprop("run " + q(dir + "/" + listed["stream"].get<std::string>()) +
                                " --backend cpu --dump " + q(single_dump));
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const std::map<uint64_t, json> single =
        by_id(json::parse(read_text(single_dump))["entities"]);
    std::map<uint64_t, json> in_world = by_id(scene["entities"]);
    ASSERT_EQ(in_world.count(0), 1u);  // the scene root, at its parcel
    const float root[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, px, 0, pz, 1};
    for (int k = 0; k < 16; ++k) EXPECT_EQ(in_world[0][size_t(k)].get<float>(), root[k]) << k;
    in_world.erase(0);
    ASSERT_EQ(in_world.size(), single.size());
    EXPECT_GT(single.size(), 150u);  // 200 a parcel created, a few deleted and created
    for (const auto& [id, m] : single) {
      ASSERT_EQ(in_world.count(id), 1u) << "entity " << id;
      const json& w = in_world[id];
      // The parcel translation times the single-scene matrix: rotation and scale columns are
      // the same, the translation column moves by (px, 0, pz).
      for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) {
          const float want = element(m, c, r) + (c == 3 && r == 0 ? px : c == 3 && r == 2 ? pz : 0);
          EXPECT_NEAR(element(w, c, r), want, 1e-5f * std::max(1.0f, std::fabs(want)))
              << "entity " << id << " [" << c << "][" << r << "]";
        }
    }
  }
}

TEST_F(CliWorld, DumpListsEachScenesEntitiesAtTheirSingleSceneMatricesMovedToTheParcel) {
  expect_dump_matches_single_scenes("gen:dclworld:3:1", 6, dir_);
  const json world = json::parse(read_text(dir_ + "/world_dump.json"));
  ASSERT_EQ(world["scenes"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(world["scenes"][i]["slot"], i);
}

// A walking player (walk=VIEW) loads scenes mid-run as they come into view and unloads those
// behind; the report shows it frame by frame, and the scenes loaded at the end still match the
// single-scene path.
TEST_F(CliWorld, WalkingPlayerLoadsAndUnloadsScenesMidRunAndTheDumpStillMatches) {
  const json j = run_json("run gen:dclworld:100:2:walk=1 --frames 16 --backend cpu");
  ASSERT_EQ(j["frames"].size(), 16u);
  // Scenes are strips of 2 parcels along the player's row; with a view of 1 parcel the player
  // at x sees x - 1 .. x + 1: scene k covers -150 + 2k .. -149 + 2k.
  std::vector<int> expected_scenes;
  uint64_t loads = 0, unloads = 0;
  for (int f = 0; f < 16; ++f) {
    const int px = -150 + f;
    int in_view = 0;
    for (int k = 0; k < 100; ++k)
      in_view += -150 + 2 * k <= px + 1 && -149 + 2 * k >= px - 1;
    EXPECT_EQ(j["frames"][size_t(f)]["scenes"], in_view) << "frame " << f;
    loads += j["frames"][size_t(f)]["loaded"].get<uint64_t>();
    unloads += j["frames"][size_t(f)]["unloaded"].get<uint64_t>();
  }
  EXPECT_EQ(loads, 9u);    // scenes 0 .. 8 come into view
  EXPECT_EQ(unloads, 7u);  // scenes 0 .. 6 fall behind
  expect_dump_matches_single_scenes("gen:dclworld:100:2:walk=1", 16, dir_);
  const Outcome help = run_tprop("run --help");
  EXPECT_CONTAINS(help.out, "walk=VIEW");
}

TEST_F(CliWorld, DumpFromTheGpuMatchesTheReferencesDump) {
  REQUIRE_DEVICE_OR_SKIP();
  const std::string cpu = dir_ + "_cpu.json", gpu = dir_ + "_gpu.json";
  ASSERT_EQ(run_tprop("run gen:dclworld:4:2 --frames 5 --backend cpu --dump " + q(cpu))
                .exit_code,
            0);
  ASSERT_EQ(run_tprop("run gen:dclworld:4:2 --frames 5 --backend gpu --dump " + q(gpu))
                .exit_code,
            0);
  const json a = json::parse(read_text(cpu)), b = json::parse(read_text(gpu));
  std::remove(cpu.c_str());
  std::remove(gpu.c_str());
  ASSERT_EQ(a["scenes"].size(), b["scenes"].size());
  size_t compared = 0;
  for (size_t s = 0; s < a["scenes"].size(); ++s) {
    const std::map<uint64_t, json> x = by_id(a["scenes"][s]["entities"]);
    std::map<uint64_t, json> y = by_id(b["scenes"][s]["entities"]);
    ASSERT_EQ(x.size(), y.size());
    for (const auto& [id, m] : x) {
      for (int k = 0; k < 16; ++k) {
        const float want = m[size_t(k)].get<float>();
        EXPECT_NEAR(y[id][size_t(k)].get<float>(), want, 1e-5f * std::max(1.0f, std::fabs(want)));
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, 4u * 401u);  // 400 entities a scene (deletions and creations balance)
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
  o = run_tprop("run gen:dclworld:2 --frames 2 --slot-order sorted");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_CONTAINS(o.err, "--slot-order needs auto, restore or keep, not 'sorted'");
}

// --slot-order reaches the Propagator: each frame's report says whether scattered levels are
// put back in slot order, and the replay validates either way.
TEST_F(CliWorld, SlotOrderIsWhatTheCommandLineAsksFor) {
  REQUIRE_DEVICE_OR_SKIP();
  for (const std::string order : {"restore", "keep"}) {
    SCOPED_TRACE(order);
    const json j = run_json("run gen:dclworld:4:2 --frames 3 --validate --slot-order " + order);
    ASSERT_FALSE(j.is_discarded());
    EXPECT_TRUE(j["validate"]["within_tolerance"].get<bool>());
    for (const json& f : j["frames"]) EXPECT_EQ(f["staged"]["slot_order"], order == "restore");
  }
}

TEST_F(CliWorld, ValidateComparesTheGpuWithTheReferenceOnEveryFrame) {
  REQUIRE_DEVICE_OR_SKIP();
  const json j = run_json("run gen:dclworld:6:2 --frames 6 --validate");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["backend"], "gpu");
  EXPECT_TRUE(j["validate"]["within_tolerance"].get<bool>());
  EXPECT_EQ(j["output_layout"], "4x4");
  for (const json& f : j["frames"]) EXPECT_TRUE(f["gpu_time_ms"].is_object());
  // What each update staged: everything in the frame that loads the world, then the changes,
  // most of them Transform values alone.
  const json& first = j["frames"][0]["staged"];
  EXPECT_EQ(first["entities"], j["frames"][0]["entities"]);
  EXPECT_EQ(first["values_only"], 0);
  EXPECT_GT(first["pipelines_created"].get<uint64_t>(), 0u);  // the passes the world needs
  uint64_t values_only = 0, staged = 0;
  for (size_t f = 1; f < j["frames"].size(); ++f) {
    const json& s = j["frames"][f]["staged"];
    EXPECT_LE(s["values_only"].get<uint64_t>(), s["entities"].get<uint64_t>()) << f;
    EXPECT_GT(s["upload_bytes"].get<uint64_t>(), 0u) << f;
    EXPECT_EQ(s["pipelines_created"], 0) << f << ": compiled with the first frame";
    // Where update()'s time went, within it; the order only where the hierarchy changed.
    const json& stages = s["update_stages_ms"];
    double sum = 0;
    for (const char* stage : {"take_changes", "order", "compact", "pack", "plan"})
      sum += stages[stage].get<double>();
    if (s["structural_changes"].get<uint64_t>() > 0) {
      EXPECT_GT(stages["order"].get<double>(), 0.0) << f;
    } else {
      EXPECT_EQ(stages["order"].get<double>(), 0.0) << f;
    }
    EXPECT_LE(sum, j["frames"][f]["update_ms"].get<double>()) << f;
    values_only += s["values_only"].get<uint64_t>();
    staged += s["entities"].get<uint64_t>();
  }
  EXPECT_GT(values_only, staged / 2);
}

}  // namespace
