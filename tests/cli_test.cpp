// The built `tprop` binary, run as a user would: exit codes, where messages go, the dump file.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_support.h"

namespace {

using namespace tprop::test::cli;

TEST(Cli, RunsTheBundledDefaultScene) {
  const Outcome o = run_tprop("run --backend cpu");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_CONTAINS(o.out, "solar_system.json");
  EXPECT_CONTAINS(o.out, "entities");
  EXPECT_CONTAINS(o.out, "cycles broken");
  EXPECT_CONTAINS(o.out, "unknown parents");
  EXPECT_TRUE(o.err.empty()) << o.err;  // the bundled scene is clean: no warnings
}

TEST(Cli, MissingFileFailsNamingThePathAndTheReason) {
  const std::string path = temp_path("missing.json");
  const Outcome o = run_tprop("run " + quoted(path));
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, path);
  EXPECT_CONTAINS(o.err, "No such file or directory");
}

TEST(Cli, MalformedJsonFailsWithLineAndColumnOnStderr) {
  const std::string path = temp_path("malformed.json");
  // Line 2 is ` [{"id": 1}}`: the stray '}' is its 12th character.
  write_file(path, "{\"entities\":\n [{\"id\": 1}}\n");
  const Outcome o = run_tprop("run " + quoted(path));
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, path + ":2:12:");
  EXPECT_TRUE(o.out.empty()) << o.out;
}

std::string u32_le(uint32_t v) {
  std::string out;
  for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
  return out;
}

// Each kind of bad input a user may hand `tprop run`: exit 1, nothing on stdout, one message on
// stderr that names the file and what is wrong where.
TEST(Cli, BadInputOfEveryKindFailsWithOneNamingWhatAndWhere) {
  struct Case {
    const char* file;     // written with `bytes` under the temporary folder; "" = no file
    std::string bytes;
    std::string spec;     // the SCENE argument when there is no file
    std::vector<std::string> expected;  // parts of the message
  };
  const std::vector<Case> cases = {
      {"", "", ::testing::TempDir(), {"cannot read", "Is a directory"}},
      // A .glb header that claims 100 bytes in a file of 12.
      {"cut.glb", "glTF" + u32_le(2) + u32_le(100), "", {"cut.glb", "truncated .glb"}},
      {"noise.glb", std::string("\x93\x01\x7f\0", 4), "", {"noise.glb", "not a .glb file"}},
      {"typo.json", R"({"entities": [{"id": 4, "Tranlation": [1, 2, 3]}]})", "",
       {"typo.json", "entity 4 (entities[0])", "unknown key \"Tranlation\""}},
      {"short.json", R"({"entities": [{"id": 4, "Translation": [1, 2]}]})", "",
       {"short.json", "entity 4 (entities[0])", "Translation", "3 numbers"}},
      {"twice.json", R"({"entities": [{"id": 4}, {"id": 4}]})", "",
       {"twice.json", "duplicate id 4", "entities[0]"}},
      {"huge.json", R"({"entities": [{"id": 4, "Scale": 1e39}]})", "",
       {"huge.json", "Scale", "too large for a float"}},
      {"", "", "gen:chain:-1", {"gen:chain:-1", "N must be a whole number"}},
      // A complete DELETE_ENTITY (12 bytes), then a PUT_COMPONENT whose length (64) runs past
      // the 12 bytes left: the cut message starts at byte 12.
      {"cut.crdt",
       u32_le(12) + u32_le(3) + u32_le(5) + u32_le(64) + u32_le(1) + u32_le(5) + u32_le(1), "",
       {"cut.crdt", "byte offset 12", "runs past the end"}},
      {"noise", std::string("\x01\x02\x03", 3), "", {"noise", "unknown scene format"}},
  };
  for (const Case& c : cases) {
    const std::string spec = *c.file ? temp_path(c.file) : c.spec;
    if (*c.file) write_file(spec, c.bytes);
    SCOPED_TRACE(spec);
    const Outcome o = run_tprop("run " + quoted(spec) + " --backend cpu");
    EXPECT_EQ(o.exit_code, 1);
    EXPECT_TRUE(o.out.empty()) << o.out;
    EXPECT_EQ(o.err.rfind("tprop run: ", 0), 0u) << o.err;
    for (const std::string& part : c.expected) EXPECT_CONTAINS(o.err, part);
  }
}

TEST(Cli, DumpWritesEveryEntityAsParseableJson) {
  const std::string scene = temp_path("tiny.json");
  const std::string dump = temp_path("tiny_dump.json");
  std::remove(dump.c_str());
  write_file(scene, R"({"entities": [
    {"id": 2, "name": "child", "parent": 1, "Translation": [1, 0, 0]},
    {"id": 1, "name": "parent", "Translation": [1, 2, 3]}]})");
  const Outcome o = run_tprop("run " + quoted(scene) + " --backend cpu --dump " + quoted(dump));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json d = nlohmann::json::parse(read_text(dump), nullptr, false);
  ASSERT_FALSE(d.is_discarded());
  const nlohmann::json& e = d.at("entities");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].at("id"), 1);
  EXPECT_EQ(e[1].at("id"), 2);
  EXPECT_EQ(e[1].at("name"), "child");
  // (1, 2, 3) + (1, 0, 0).
  EXPECT_EQ(e[1].at("localToWorld"),
            nlohmann::json({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 2, 2, 3, 1}));
}

TEST(Cli, DumpOfTheDefaultSceneHasOneEntryPerEntity) {
  const std::string dump = temp_path("default_dump.json");
  const Outcome o = run_tprop("run --dump=" + quoted(dump));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json d = nlohmann::json::parse(read_text(dump), nullptr, false);
  ASSERT_FALSE(d.is_discarded());
  // The generator writes ids 1..N in order.
  const nlohmann::json& e = d.at("entities");
  ASSERT_GT(e.size(), 100u);
  for (size_t i = 0; i < e.size(); ++i) ASSERT_EQ(e[i].at("id"), i + 1);
  EXPECT_CONTAINS(o.out, "entities         " + std::to_string(e.size()));
}

TEST(Cli, SummaryCountsRootsLevelsCyclesAndUnknownParents) {
  // 1 <-> 2 is a cycle and 3 its own parent: 2 cycles, 3 entities on them, all roots. 4 hangs
  // below the cycle (level 1); 5 names no entity (a root).
  const std::string scene = temp_path("cycles.json");
  write_file(scene, R"({"entities": [{"id": 1, "parent": 2}, {"id": 2, "parent": 1},
    {"id": 3, "parent": 3}, {"id": 4, "parent": 1}, {"id": 5, "parent": 77}]})");
  const Outcome o = run_tprop("run " + quoted(scene));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_CONTAINS(o.out, "entities         5\n");
  EXPECT_CONTAINS(o.out, "roots            4\n");
  EXPECT_CONTAINS(o.out, "levels           2\n");
  EXPECT_CONTAINS(o.out, "cycles broken    2 (3 entities on cycles");
  EXPECT_CONTAINS(o.out, "unknown parents  1 ");
}

TEST(Cli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(run_tprop("").exit_code, 2);
  EXPECT_EQ(run_tprop("frobnicate").exit_code, 2);
  const Outcome bad_option = run_tprop("run --frob");
  EXPECT_EQ(bad_option.exit_code, 2);
  EXPECT_CONTAINS(bad_option.err, "unknown option '--frob'");
  EXPECT_EQ(run_tprop("run --backend quantum").exit_code, 2);
  EXPECT_EQ(run_tprop("run --dump").exit_code, 2);
  EXPECT_EQ(run_tprop("run a.json b.json").exit_code, 2);
  EXPECT_EQ(run_tprop("run gen:chain:3 --seed -1").exit_code, 2);
  EXPECT_EQ(run_tprop("run gen:chain:3 --seed 12x").exit_code, 2);
}

TEST(Cli, HelpPrintsUsageAndSucceeds) {
  const Outcome top = run_tprop("--help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_CONTAINS(top.out, "usage: tprop");
  const Outcome run = run_tprop("run --help");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_CONTAINS(run.out,
                  "usage: tprop run [SCENE] [--backend cpu|gpu|auto] [--seed N] [--dump FILE]");
}

TEST(Cli, VersionPrintsTheProjectVersion) {
  const Outcome o = run_tprop("--version");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, std::string("tprop ") + TPROP_PROJECT_VERSION + "\n");
  EXPECT_CONTAINS(run_tprop("--help").out, "--version");
}

// "-" reads the scene from standard input, its format told by its first bytes.
TEST(Cli, DashReadsTheSceneFromStandardInput) {
  const std::string scene = temp_path("stdin.json");
  write_file(scene, R"({"entities":[{"id":1,"Translation":[1,2,3]},{"id":2,"parent":1}]})");
  const std::string dump = temp_path("stdin_dump.json");
  const Outcome o =
      run_tprop("run - --backend cpu --dump " + quoted(dump) + " < " + quoted(scene));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_CONTAINS(o.out, "input            <stdin>\n");
  EXPECT_CONTAINS(o.out, "entities         2\n");
  EXPECT_CONTAINS(read_text(dump),
                  R"("id": 2, "localToWorld": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 2, 3, 1])");
  const Outcome crdt =
      run_tprop("run - --backend cpu < " + quoted(TPROP_ASSETS_DIR "/plaza.crdt"));
  EXPECT_EQ(crdt.exit_code, 0) << crdt.err;
  EXPECT_CONTAINS(crdt.err, "crdt: ");
  write_file(scene, "{\"entities\": [");
  const Outcome bad = run_tprop("run - < " + quoted(scene));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_CONTAINS(bad.err, "<stdin>:1:");
}

TEST(Cli, GeneratorSpecsRunWithASeed) {
  // gen:chain:N is one chain: N entities on N levels, a single root.
  const Outcome o = run_tprop("run gen:chain:50 --seed 7");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_CONTAINS(o.out, "input            gen:chain:50");
  EXPECT_CONTAINS(o.out, "entities         50\n");
  EXPECT_CONTAINS(o.out, "roots            1\n");
  EXPECT_CONTAINS(o.out, "levels           50\n");
  EXPECT_EQ(run_tprop("run gen:nope:3").exit_code, 1);
}

TEST(Cli, UnwritableDumpFailsWithOne) {
  const Outcome o = run_tprop("run --dump /nonexistent-dir/out.json");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "/nonexistent-dir/out.json");
}

}  // namespace
