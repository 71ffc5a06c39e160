// tprop_bench as a process: the command line, and a small validated run as a smoke test (it
// must run, cover every scene kind and frame kind and agree with the CPU reference; no time is
// ever asserted).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_support.h"

#ifndef TPROP_BENCH_PATH
#error "TPROP_BENCH_PATH (the built tprop_bench) must be defined by the build"
#endif

namespace tprop::test::cli {
namespace {

Outcome run_bench(const std::string& args) { return run_program(TPROP_BENCH_PATH, args); }

// The JSON report of a run. Its copy ceiling copies 1 MiB and its host floor spreads its lines
// over 4 MiB unless `args` ask otherwise: the default 32 MiB buffers (on lavapipe) were most of
// a small run's time under the sanitizers, and only the tests of the two themselves need them.
nlohmann::json bench_json(const std::string& args) {
  std::string small;
  if (args.find("--ceiling-bytes") == std::string::npos) small += " --ceiling-bytes 1M";
  if (args.find("--host-floor-bytes") == std::string::npos) small += " --host-floor-bytes 4M";
  const Outcome o = run_bench(args + small + " --json");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  nlohmann::json doc = nlohmann::json::parse(o.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << "not one JSON document:\n" << o.out;
  return doc;
}

std::vector<std::string> frame_names(const nlohmann::json& scene) {
  std::vector<std::string> names;
  for (const auto& f : scene.at("frames")) names.push_back(f.at("frame").get<std::string>());
  return names;
}

const std::vector<std::string> kPlainFrames = {"full", "steady", "values_1pct", "values_all"};
const std::vector<std::string> kStructuralFrames = {
    "full", "steady",   "values_1pct", "values_all", "spawn_despawn",
    "reparent", "churn", "subtree_move"};

TEST(Bench, HelpPrintsUsageOnStdoutAndExitsZero) {
  const Outcome o = run_bench("--help");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_CONTAINS(o.out, "usage: tprop_bench");
  EXPECT_CONTAINS(o.out, "--sizes");
  EXPECT_TRUE(o.err.empty()) << o.err;
}

TEST(Bench, UsageErrorsExitTwoWithUsageOnStderr) {
  const std::map<std::string, std::string> cases = {
      {"--sizes 0", "not '0'"},
      {"--sizes 1M,abc", "not 'abc'"},
      {"--sizes 200M", "not '200M'"},
      {"--sizes", "--sizes needs a value"},
      {"--scenes forest4,tree", "unknown scene kind 'tree'"},
      {"--seed -1", "--seed must be"},
      {"--frobnicate", "unknown option '--frobnicate'"},
      {"--sizes 1k gen:flat:10", "SPECs replace --sizes and --scenes"},
      {"--max-buffer-bytes 100", "at least 16K (K, M and G suffixes: powers of 1024), got '100'"},
      {"--ceiling-bytes 100", "--ceiling-bytes needs a whole number of MiB from 1M to 4G"},
      {"--ceiling-bytes 1536K", "got '1536K'"},
      {"--ceiling-bytes 5G", "got '5G'"},
      {"--ceiling-bytes", "--ceiling-bytes needs a value"},
      {"--host-floor-bytes 3M", "--host-floor-bytes needs a whole number of MiB from 4M to 4G"},
      {"--host-floor-bytes 5G", "got '5G'"},
      {"--host-floor-bytes", "--host-floor-bytes needs a value"},
      {"--addressing nope", "'nope' is not auto, texels, descriptors, addresses or address-texels"},
      {"--output-layout 3x3", "--output-layout needs 4x4"},
      {"--warm-gpu lots", "--warm-gpu must be a number of milliseconds from 0 to 10000, not 'lots'"},
      {"--warm-gpu 10001", "not '10001'"},
      {"--level-passes nope", "'nope' is not auto, separate or fused"},
      {"--scan-runs nope", "--scan-runs: 'nope' is not auto, always or never"},
      {"--climb-top up", "--climb-top: 'up' is not auto, always or never"},
      {"--climb-levels 1", "--climb-levels must be a number of levels from 2 to 16, not '1'"},
      {"--climb-levels 17", "not '17'"},
      {"--climb-level-work 0", "--climb-level-work: a size must be a whole number"},
      {"--wide-stores always", "--wide-stores: 'always' is not auto, shared or direct"},
      {"--value-writes later", "--value-writes: 'later' is not auto, staged or in-place"},
      {"--slot-order sorted", "--slot-order: 'sorted' is not auto, restore or keep"},
      {"--narrow-walk hop", "--narrow-walk: 'hop' is not auto, workgroup, single or jump"},
      {"--repeat 0", "--repeat must be a number of runs from 1 to 100, not '0'"},
      {"--repeat 101", "not '101'"},
      {"--repeat", "--repeat needs a value"},
      {"--memory --repeat 2", "--repeat runs frames again, and --memory runs none"},
      {"--frames churn,jump", "--frames: 'jump' is not steady, values_1pct, values_all"},
      {"--frames full", "--frames: 'full' is not steady"},
      {"--frames", "--frames needs a value"},
      {"--memory --frames steady", "--frames chooses frames, and --memory runs none"},
  };
  for (const auto& [args, message] : cases) {
    const Outcome o = run_bench(args);
    EXPECT_EQ(o.exit_code, 2) << args;
    EXPECT_CONTAINS(o.err, message);
    EXPECT_CONTAINS(o.err, "usage: tprop_bench");
    EXPECT_TRUE(o.out.empty()) << args << ": " << o.out;
  }
}

TEST(Bench, ASpecThatIsNoGeneratorExitsOneNamingIt) {
  const Outcome o = run_bench("scene.json");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "'scene.json' is not a generator spec");
}

// Every spec is judged before the first one runs: nothing is printed of the well-formed one.
TEST(Bench, AMalformedGeneratorSpecExitsOneNamingItBeforeAnySceneRuns) {
  const Outcome o = run_bench("gen:forest:100 gen:nope:3");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_EQ(o.out, "");
  EXPECT_CONTAINS(o.err, "'gen:nope:3'");
  EXPECT_CONTAINS(o.err, "unknown generator 'nope'");
}

// The smoke test: every scene kind at 2,000 entities, validated against the CPU reference.
TEST(Bench, SmallValidatedRunCoversEverySceneAndFrameKind) {
  REQUIRE_DEVICE_OR_SKIP();
  const nlohmann::json doc = bench_json("--sizes 2k --validate --ceiling-bytes 2M");
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.at("tool"), "tprop_bench");
  EXPECT_TRUE(doc.at("validate").get<bool>());
  // The device's copy rate, measured in the same run (lavapipe has timestamps): a copy of the
  // buffer asked for, read and written, in the time it took, the faster of vkCmdCopyBuffer and
  // the copy shader (whose samples the bench checks: a null ceiling here when it copied wrong).
  const nlohmann::json& ceiling = doc.at("copy_ceiling");
  ASSERT_TRUE(ceiling.is_object());
  EXPECT_EQ(ceiling.at("bytes"), 2u << 20);
  EXPECT_GT(ceiling.at("ms").get<double>(), 0.0);
  EXPECT_NEAR(ceiling.at("gb_per_s").get<double>(),
              2.0 * ceiling.at("bytes").get<double>() / (ceiling.at("ms").get<double>() * 1e6),
              1e-6 * ceiling.at("gb_per_s").get<double>());
  const double command = ceiling.at("copy_command_gb_per_s").get<double>();
  const double shader = ceiling.at("shader_gb_per_s").get<double>();
  EXPECT_GT(shader, 0.0);
  EXPECT_DOUBLE_EQ(ceiling.at("gb_per_s").get<double>(), std::max(command, shader));
  EXPECT_EQ(ceiling.at("by"), shader > command ? "shader" : "copy_command");
  const std::map<std::string, std::string> specs = {{"flat", "gen:flat:2000"},
                                                    {"forest4", "gen:forest:2000:4"},
                                                    {"forest32", "gen:forest:2000:32"},
                                                    {"chain", "gen:chain:2000"},
                                                    {"mixed", "gen:mixed:2000"}};
  std::map<std::string, nlohmann::json> by_kind;
  for (const auto& scene : doc.at("scenes")) by_kind[scene.at("kind")] = scene;
  ASSERT_EQ(by_kind.size(), specs.size());
  for (const auto& [kind, spec] : specs) {
    SCOPED_TRACE(kind);
    const nlohmann::json& scene = by_kind.at(kind);
    EXPECT_EQ(scene.at("spec"), spec);
    EXPECT_EQ(scene.at("entities"), 2000);
    const bool structural = kind != "flat" && kind != "chain";
    EXPECT_EQ(frame_names(scene), structural ? kStructuralFrames : kPlainFrames);
    for (const auto& f : scene.at("frames")) {
      SCOPED_TRACE(f.at("frame").get<std::string>());
      EXPECT_TRUE(f.at("validate").at("within_tolerance").get<bool>());
      EXPECT_LE(f.at("validate").at("gpu_max_error_in_tolerances").get<double>(), 1.0);
      EXPECT_LE(f.at("validate").at("loop_max_error_in_tolerances").get<double>(), 1.0);
      // A frame with nothing changed evaluates nothing; every other frame does something.
      if (f.at("frame") == "steady") {
        EXPECT_EQ(f.at("dispatches").get<int>(), 0);
        EXPECT_EQ(f.at("evaluated_entities").get<int>(), 0);
      } else {
        EXPECT_GE(f.at("dispatches").get<int>(), 1);
      }
      EXPECT_GE(f.at("loop_ms").get<double>(), 0.0);
      EXPECT_GE(f.at("update_page_faults").get<int64_t>(), 0);
      EXPECT_GE(f.at("pipelines_created").get<int64_t>(), 0);
      // The edits are timed apart: a frame with none (the full and steady ones) takes next to
      // nothing, one that edits takes something.
      EXPECT_GE(f.at("edit_ms").get<double>(), 0.0);
      if (f.at("frame") != "full" && f.at("frame") != "steady") {
        EXPECT_GT(f.at("edit_ms").get<double>(), 0.0) << f.at("frame");
      }
      // update()'s stages (FrameStats::host): within its time; the order and compaction only
      // where the hierarchy changed or the scene was packed whole.
      const nlohmann::json& stages = f.at("host_update_stages_ms");
      double sum = 0;
      for (const char* stage : {"take_changes", "order", "compact", "pack", "plan"}) {
        EXPECT_GE(stages.at(stage).get<double>(), 0.0) << stage;
        sum += stages.at(stage).get<double>();
      }
      EXPECT_LE(sum, f.at("host_update_ms").get<double>());
      if (f.at("frame") == "steady" || f.at("frame") == "values_1pct" ||
          f.at("frame") == "values_all") {
        EXPECT_EQ(stages.at("order").get<double>(), 0.0);
        EXPECT_EQ(stages.at("compact").get<double>(), 0.0);
      }
      ASSERT_TRUE(f.at("gpu_time_ms").is_object());  // lavapipe and real GPUs have timestamps
      EXPECT_TRUE(f.at("gpu_time_ms").contains("total"));
    }
    const nlohmann::json& frames = scene.at("frames");
    // The first frame uploads the scene; a frame with nothing changed uploads nothing.
    EXPECT_GT(frames[0].at("upload_bytes").get<uint64_t>(), 0u);
    EXPECT_EQ(frames[1].at("upload_bytes").get<uint64_t>(), 0u);
    // Only a first frame has fresh buffers to zero ahead (and only on a CPU device).
    for (size_t k = 1; k < frames.size(); ++k)
      EXPECT_EQ(frames[k].at("zeroed_ahead_bytes").get<uint64_t>(), 0u);
    EXPECT_EQ(frames[2].at("edited_entities"), 20);  // every 100th of 2,000
    // ... each its new values alone, nothing moved in the order.
    EXPECT_EQ(frames[2].at("values_only_entities"), 20);
    EXPECT_EQ(frames[2].at("staged_entities"), 20);
    EXPECT_EQ(frames[2].at("moved_entities"), 0);
    // Every entity's values changed: all of them sent and the whole scene evaluated.
    EXPECT_EQ(frames[3].at("edited_entities"), 2000);
    EXPECT_EQ(frames[3].at("values_only_entities"), 2000);
    EXPECT_EQ(frames[3].at("evaluated_entities"), 2000);
    EXPECT_EQ(frames[3].at("moved_entities"), 0);
    if (structural) {
      // A tenth of 2,000 spawned and as many despawned; 100 re-parented.
      EXPECT_EQ(frames[4].at("edited_entities"), 400);
      EXPECT_EQ(frames[4].at("entities"), 2000);
      // The new and the orphaned move; the despawned parents' subtrees below them do not.
      EXPECT_GE(frames[4].at("moved_entities").get<int>(), 200);
      EXPECT_LE(frames[4].at("moved_entities").get<int>(), 400);
      EXPECT_EQ(frames[5].at("edited_entities"), 100);
      // The subtree nearest a tenth: a few hundred entities, never the whole scene.
      EXPECT_GT(frames[6].at("edited_entities").get<int>(), 0);
      EXPECT_LT(frames[6].at("edited_entities").get<int>(), 2000);
    }
  }
  // The byte model (bench_baseline.h) on scenes whose components are known: a flat entity
  // reads Translation (12), Rotation (16) and Scale (4) and writes 64 bytes; a chain link has no
  // Scale but, except the root, a parent index (4).
  EXPECT_EQ(by_kind.at("flat").at("frames")[0].at("model_bytes"), 2000 * (12 + 16 + 4 + 64));
  EXPECT_EQ(by_kind.at("chain").at("frames")[0].at("model_bytes"),
            2000 * (12 + 16 + 64) + 1999 * 4);
}

// --output-layout 3x4: every frame still validates, and the byte model counts the 48 bytes a
// LocalToWorld then takes instead of 64.
TEST(Bench, TheAffineOutputLayoutValidatesAndCounts48WrittenBytes) {
  REQUIRE_DEVICE_OR_SKIP();
  const nlohmann::json doc =
      bench_json("--sizes 2k --scenes flat,chain,mixed --validate --output-layout 3x4");
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.at("output_layout"), "3x4");
  std::map<std::string, nlohmann::json> by_kind;
  for (const auto& scene : doc.at("scenes")) by_kind[scene.at("kind")] = scene;
  ASSERT_EQ(by_kind.size(), 3u);
  for (const auto& [kind, scene] : by_kind)
    for (const auto& f : scene.at("frames")) {
      SCOPED_TRACE(kind + " " + f.at("frame").get<std::string>());
      EXPECT_TRUE(f.at("validate").at("within_tolerance").get<bool>());
    }
  EXPECT_EQ(by_kind.at("flat").at("frames")[0].at("model_bytes"), 2000 * (12 + 16 + 4 + 48));
  EXPECT_EQ(by_kind.at("chain").at("frames")[0].at("model_bytes"),
            2000 * (12 + 16 + 48) + 1999 * 4);
  EXPECT_EQ(bench_json("--sizes 2k --scenes flat").at("output_layout"), "4x4");
}

// --warm-gpu: the GPU busy with fills before each frame changes no result (every frame
// validates), and the report says for how long.
TEST(Bench, WarmUpFillsBeforeEachFrameLeaveTheResultsAlone) {
  REQUIRE_DEVICE_OR_SKIP();
  const nlohmann::json doc = bench_json("--sizes 2k --scenes forest4 --validate --warm-gpu 2");
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.at("warm_gpu_ms"), 2);
  ASSERT_EQ(doc.at("scenes").size(), 1u);
  EXPECT_EQ(doc.at("scenes")[0].at("frames").size(), kStructuralFrames.size());
  for (const auto& f : doc.at("scenes")[0].at("frames")) {
    SCOPED_TRACE(f.at("frame").get<std::string>());
    EXPECT_TRUE(f.at("validate").at("within_tolerance").get<bool>());
  }
  EXPECT_EQ(bench_json("--sizes 2k --scenes flat").at("warm_gpu_ms"), 0);
}

// --scan-runs: the chain and the mixed scene's parallel chains scanned, or not, and every frame
// still validates.
TEST(Bench, ScanRunsAreWhatTheCommandLineAsksFor) {
  REQUIRE_DEVICE_OR_SKIP();
  for (const std::string scan : {"always", "never"}) {
    SCOPED_TRACE(scan);
    const nlohmann::json doc =
        bench_json("--sizes 2k --scenes chain,mixed --validate --scan-runs " + scan);
    ASSERT_EQ(doc.at("scenes").size(), 2u);
    for (const auto& scene : doc.at("scenes")) {
      SCOPED_TRACE(scene.at("kind").get<std::string>());
      const nlohmann::json& full = scene.at("frames")[0];
      if (scan == "always") {
        EXPECT_GE(full.at("scan_runs").get<int>(), 1);
      } else {
        EXPECT_EQ(full.at("scan_runs").get<int>(), 0);
      }
      for (const auto& f : scene.at("frames")) {
        SCOPED_TRACE(f.at("frame").get<std::string>());
        EXPECT_TRUE(f.at("validate").at("within_tolerance").get<bool>());
      }
    }
  }
}

// --climb-top, --climb-levels, --climb-level-work: a forest's top levels in one climb step, as
// many as the limits allow, or none; every frame still validates.
TEST(Bench, ClimbedTopLevelsAreWhatTheCommandLineAsksFor) {
  REQUIRE_DEVICE_OR_SKIP();
  // gen:forest:5000:4: one root, 2 to 4 children each, 9 levels. The first five (up to 64
  // entities each) are one walk, each wider level one dispatch, and the climb takes whole steps,
  // two at least; a level of w entities at level l adds w * (l + 1) steps: the sixth adds under
  // 1,000, the seventh more, and the walk alone is one step.
  const struct {
    std::string args;
    int climbed;  // levels of the full frame
  } cases[] = {
      {"--climb-top never", 0},
      {"--climb-top always", 9},
      {"--climb-top always --climb-levels 7", 7},
      {"--climb-top always --climb-level-work 1000", 6},
      {"--climb-top always --climb-level-work 400", 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    const nlohmann::json doc = bench_json("--validate " + c.args + " gen:forest:5000:4");
    const nlohmann::json& frames = doc.at("scenes")[0].at("frames");
    EXPECT_EQ(frames[0].at("climbed_levels").get<int>(), c.climbed);
    for (const auto& f : frames) {
      SCOPED_TRACE(f.at("frame").get<std::string>());
      EXPECT_TRUE(f.at("validate").at("within_tolerance").get<bool>());
    }
  }
}

// --wide-stores, --world-writes and --slot-order: the wide passes built to store through shared
// memory or not, the matrices stored as 64-bit words or as float vectors, scattered levels put
// back in slot order or not, as the report says frame by frame, and every frame still
// validates.
TEST(Bench, StoresAreWhatTheCommandLineAsksFor) {
  REQUIRE_DEVICE_OR_SKIP();
  struct Case {
    std::string args;
    const char* field;
    bool expected;
  };
  const Case cases[] = {{"--wide-stores shared", "shared_wide_stores", true},
                        {"--wide-stores direct", "shared_wide_stores", false},
                        {"--world-writes words", "word_stores", true},
                        {"--world-writes vectors", "word_stores", false},
                        {"--slot-order restore", "slot_order", true},
                        {"--slot-order keep", "slot_order", false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const nlohmann::json doc = bench_json("--sizes 2k --scenes flat,forest4 --validate " + c.args);
    ASSERT_EQ(doc.at("scenes").size(), 2u);
    for (const auto& scene : doc.at("scenes")) {
      for (const auto& f : scene.at("frames")) {
        SCOPED_TRACE(f.at("frame").get<std::string>());
        EXPECT_EQ(f.at(c.field).get<bool>(), c.expected);
        EXPECT_TRUE(f.at("validate").at("within_tolerance").get<bool>());
      }
    }
  }
  // Without the options both follow the device: words and slot order on a CPU device alone.
  const nlohmann::json doc = bench_json("--sizes 2k --scenes forest4");
  for (const auto& f : doc.at("scenes")[0].at("frames"))
    EXPECT_EQ(f.at("slot_order").get<bool>(), f.at("word_stores").get<bool>());
}

// --addressing: the passes reach the arrays as the command line asks (a 2k scene fits one
// binding and one view on any device), as the report says frame by frame, every frame
// validating.
TEST(Bench, AddressingIsWhatTheCommandLineAsksFor) {
  REQUIRE_DEVICE_OR_SKIP();
  for (const std::string addressing : {"texels", "descriptors", "addresses", "address-texels"}) {
    SCOPED_TRACE(addressing);
    const nlohmann::json doc =
        bench_json("--sizes 2k --scenes forest4 --validate --addressing " + addressing);
    ASSERT_EQ(doc.at("scenes").size(), 1u);
    for (const auto& f : doc.at("scenes")[0].at("frames")) {
      SCOPED_TRACE(f.at("frame").get<std::string>());
      EXPECT_EQ(f.at("addressing").get<std::string>(), addressing);
      EXPECT_TRUE(f.at("validate").at("within_tolerance").get<bool>());
    }
  }
}

// --value-writes: the values frames' changes staged as records or written in place (where the
// device has memory for it: a CPU device's is host memory), every frame validating.
TEST(Bench, ValueWritesAreWhatTheCommandLineAsksFor) {
  REQUIRE_DEVICE_OR_SKIP();
  const nlohmann::json staged = bench_json("--sizes 2k --scenes flat --validate --value-writes staged");
  ASSERT_TRUE(staged.is_object());
  for (const auto& f : staged.at("scenes")[0].at("frames")) {
    SCOPED_TRACE(f.at("frame").get<std::string>());
    EXPECT_EQ(f.at("values_in_place"), 0);
    EXPECT_TRUE(f.at("validate").at("within_tolerance").get<bool>());
  }
  const nlohmann::json in_place =
      bench_json("--sizes 2k --scenes flat --validate --value-writes in-place");
  ASSERT_TRUE(in_place.is_object());
  const nlohmann::json& frames = in_place.at("scenes")[0].at("frames");
  for (const auto& f : frames) {
    SCOPED_TRACE(f.at("frame").get<std::string>());
    EXPECT_TRUE(f.at("validate").at("within_tolerance").get<bool>());
  }
  if (in_place.at("device").get<std::string>().find("llvmpipe") != std::string::npos) {
    EXPECT_EQ(frames[2].at("values_in_place"), 20);    // values_1pct
    EXPECT_EQ(frames[3].at("values_in_place"), 2000);  // values_all
    // By default on this CPU device: in place only a frame that changes a quarter of the slots.
    const nlohmann::json automatic = bench_json("--sizes 2k --scenes flat");
    const nlohmann::json& by_default = automatic.at("scenes")[0].at("frames");
    EXPECT_EQ(by_default[2].at("values_in_place"), 0);
    EXPECT_EQ(by_default[3].at("values_in_place"), 2000);
  }
}

TEST(Bench, TextReportNamesEveryFrameOfTheScene) {
  REQUIRE_DEVICE_OR_SKIP();
  const Outcome o = run_bench("--scenes forest4 --sizes 1k");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_CONTAINS(o.out, "gen:forest:1000:4 (forest4): 1000 entities");
  for (const std::string& frame : kStructuralFrames) EXPECT_CONTAINS(o.out, "  " + frame + " ");
  EXPECT_CONTAINS(o.out, "gpu/loop");
  EXPECT_CONTAINS(o.out, "    update ms: take_changes ");
  EXPECT_CONTAINS(o.out, "; the edits before it ");
  EXPECT_CONTAINS(o.out, "byte model");
  EXPECT_CONTAINS(o.out, "ceiling     ");
  EXPECT_CONTAINS(o.out, "GB/s: a device-local copy of 32 MiB");
  EXPECT_CONTAINS(o.out, "host floor  ");
  EXPECT_CONTAINS(o.out, "lines over 256 MiB), this run");
}

// The host's memory floor, measured in the same run: random lines of the memory asked for, one
// walk at a time and several side by side (the best of 4, 8, 16 and 32), a million lines at
// most, one every 64 bytes below that.
TEST(Bench, TheHostFloorWalksTheMemoryAskedFor) {
  REQUIRE_DEVICE_OR_SKIP();
  const nlohmann::json doc =
      bench_json("--sizes 1k --scenes flat --frames steady --host-floor-bytes 8M");
  const nlohmann::json& floor = doc.at("host_memory_floor");
  ASSERT_TRUE(floor.is_object());
  EXPECT_EQ(floor.at("bytes"), 8u << 20);
  EXPECT_EQ(floor.at("lines"), (8u << 20) / 64);
  EXPECT_GT(floor.at("latency_ns").get<double>(), 0.0);
  EXPECT_GT(floor.at("ns_per_line").get<double>(), 0.0);
  const int walks = floor.at("walks").get<int>();
  EXPECT_TRUE(walks == 4 || walks == 8 || walks == 16 || walks == 32) << walks;
}

// --repeat: every kind but the full frame runs that many times in a row, each checked against
// the reference, and the summary's median, least and most are those of the runs listed.
TEST(Bench, RepeatedFramesAreEachListedAndSummarizedPerKind) {
  REQUIRE_DEVICE_OR_SKIP();
  const nlohmann::json doc = bench_json("--scenes forest4 --sizes 1k --repeat 3 --validate");
  EXPECT_EQ(doc.at("repeat"), 3);
  EXPECT_TRUE(doc.at("frames_chosen").is_null());
  const nlohmann::json& scene = doc.at("scenes")[0];
  std::map<std::string, std::vector<double>> times;
  std::vector<std::string> order;
  for (const auto& f : scene.at("frames")) {
    const std::string name = f.at("frame").get<std::string>();
    EXPECT_EQ(f.at("run").get<size_t>(), times[name].size()) << name;
    EXPECT_TRUE(f.at("validate").at("within_tolerance").get<bool>()) << name;
    if (times[name].empty()) order.push_back(name);
    times[name].push_back(f.at("host_update_ms").get<double>());
  }
  EXPECT_EQ(order, kStructuralFrames);
  const nlohmann::json& summaries = scene.at("over_runs");
  ASSERT_EQ(summaries.size(), kStructuralFrames.size());
  for (size_t i = 0; i < summaries.size(); ++i) {
    const nlohmann::json& s = summaries[i];
    const std::string name = s.at("frame").get<std::string>();
    EXPECT_EQ(name, kStructuralFrames[i]);
    std::vector<double> t = times[name];
    ASSERT_EQ(s.at("runs").get<size_t>(), name == "full" ? 1u : 3u) << name;
    ASSERT_EQ(t.size(), s.at("runs").get<size_t>()) << name;
    std::sort(t.begin(), t.end());
    const nlohmann::json& update = s.at("host_update_ms");
    EXPECT_EQ(update.at("median").get<double>(), t[t.size() / 2]) << name;
    EXPECT_EQ(update.at("min").get<double>(), t.front()) << name;
    EXPECT_EQ(update.at("max").get<double>(), t.back()) << name;
  }

  const Outcome text = run_bench("--scenes forest4 --sizes 1k --repeat 2");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_CONTAINS(text.out, "over runs");
  EXPECT_CONTAINS(text.out, "  spawn_despawn      2 ");
  const Outcome once = run_bench("--scenes forest4 --sizes 1k");
  EXPECT_EQ(once.exit_code, 0) << once.err;
  EXPECT_EQ(once.out.find("over runs"), std::string::npos) << once.out;
}

// --frames: the full frame, then only the kinds named, in the bench's own order whatever the
// list's; a flat scene has no structural frames to keep.
TEST(Bench, FramesChosenByNameRunAloneAfterTheFullFrame) {
  REQUIRE_DEVICE_OR_SKIP();
  const nlohmann::json doc =
      bench_json("gen:forest:500:3 gen:flat:300 --frames churn,steady --repeat 2 --validate");
  ASSERT_EQ(doc.at("scenes").size(), 2u);
  EXPECT_EQ(doc.at("frames_chosen"), nlohmann::json({"churn", "steady"}));
  const std::vector<std::string> forest = {"full", "steady", "steady", "churn", "churn"};
  EXPECT_EQ(frame_names(doc.at("scenes")[0]), forest);
  const std::vector<std::string> flat = {"full", "steady", "steady"};
  EXPECT_EQ(frame_names(doc.at("scenes")[1]), flat);
  for (const auto& scene : doc.at("scenes"))
    for (const auto& f : scene.at("frames"))
      EXPECT_TRUE(f.at("validate").at("within_tolerance").get<bool>()) << f.at("frame");
}

TEST(Bench, SpecsRunInsteadOfKindsWithStructuralFramesWhenDeep) {
  REQUIRE_DEVICE_OR_SKIP();
  const nlohmann::json doc = bench_json("gen:flat:300 gen:forest:500:3");
  ASSERT_EQ(doc.at("scenes").size(), 2u);
  EXPECT_EQ(doc.at("scenes")[0].at("kind"), "spec");
  EXPECT_EQ(frame_names(doc.at("scenes")[0]), kPlainFrames);
  EXPECT_EQ(frame_names(doc.at("scenes")[1]), kStructuralFrames);
}

TEST(Bench, TheSameSeedMakesTheSameEdits) {
  REQUIRE_DEVICE_OR_SKIP();
  auto edits = [](const nlohmann::json& doc) {
    std::vector<std::string> out;
    for (const auto& f : doc.at("scenes")[0].at("frames"))
      out.push_back(f.at("edit").get<std::string>() + " / " + f.at("model_bytes").dump());
    return out;
  };
  const std::string args = "--scenes mixed --sizes 1k --seed 5";
  EXPECT_EQ(edits(bench_json(args)), edits(bench_json(args)));
}

// --memory: the Propagator's buffers counted, per entity, with the arrays in 16 KiB pieces
// (256 slots each) and the first frame checked against the CPU reference.
TEST(Bench, MemoryRunCountsTheBuffersOfEachScene) {
  REQUIRE_DEVICE_OR_SKIP();
  const nlohmann::json doc =
      bench_json("--memory --validate --max-buffer-bytes 16K gen:forest:3000:4");
  ASSERT_EQ(doc.at("scenes").size(), 1u);
  const nlohmann::json& m = doc.at("scenes")[0];
  EXPECT_EQ(m.at("entities"), 3000);
  EXPECT_EQ(m.at("slot_pieces"), 12);  // 3,000 slots in pieces of 256
  EXPECT_LE(m.at("largest_buffer_bytes").get<uint64_t>(), 16384u);
  // At least the 132 bytes a slot of the per-slot arrays, LocalToWorld included; the first
  // frame's staging holds their mirrors, exactly 64 bytes a slot (16 where translation, rotation
  // and scale are packed in place, none where every input is), and once it has completed they
  // are freed, all of them.
  EXPECT_GE(m.at("device_bytes").get<uint64_t>(), 3000u * 132u);
  const uint64_t mirrors = m.at("in_place_inputs").get<bool>()   ? 0u
                           : m.at("in_place_arrays").get<bool>() ? 3000u * 16u
                                                                 : 3000u * 64u;
  EXPECT_EQ(m.at("first_frame_mirror_bytes").get<uint64_t>(), mirrors);
  EXPECT_EQ(m.at("staging_bytes").get<uint64_t>(),
            m.at("first_frame_staging_bytes").get<uint64_t>() - mirrors);
  EXPECT_GE(m.at("device_buffers").get<uint32_t>(), 9u * 12u);
  EXPECT_LE(m.at("validate_max_error_in_tolerances").get<double>(), 1.0);
  const Outcome text = run_bench("--memory gen:flat:500");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_CONTAINS(text.out, "propagator device buffers");
  EXPECT_CONTAINS(text.out, "B/entity");
}

}  // namespace
}  // namespace tprop::test::cli
