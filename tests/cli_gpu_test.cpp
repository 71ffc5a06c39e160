// `tprop run` on both backends, as a user runs it: the GPU and CPU dumps agree within the
// tolerance, --validate, --json, and what happens without a device (TPROP_DEVICE naming none).
// Tests that need a device skip without one, and fail when TPROP_REQUIRE_GPU=1 (as in CI).
#include <algorithm>
#include <cmath>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "compare.h"
#include "math.h"

#ifndef TPROP_ASSETS_DIR
#error "TPROP_ASSETS_DIR (the absolute path of assets/) must be defined by the build"
#endif

namespace {

using namespace tprop::test::cli;

constexpr const char* kNoDevice = "TPROP_DEVICE=no-such-device";

nlohmann::json parse_file(const std::string& path) {
  return nlohmann::json::parse(read_text(path), nullptr, false);
}

tprop::float4x4 matrix_of(const nlohmann::json& entry) {
  tprop::float4x4 m;
  const nlohmann::json& v = entry.at("localToWorld");
  for (int i = 0; i < 16; ++i) m[i / 4][i % 4] = v.at(i).get<float>();
  return m;
}

// Dumps SCENE on both backends and compares every entity's matrix. The dump has no levels, so
// every entity is judged at the deepest level the summary reports (a looser bound for
// shallower ones, the same tolerance model as --validate: hierarchy/compare.h).
void expect_backends_agree(const std::string& scene) {
  const std::string cpu_dump = temp_path("agree_cpu.json");
  const std::string gpu_dump = temp_path("agree_gpu.json");
  const Outcome cpu = run_tprop("run " + scene + " --backend cpu --dump " + quoted(cpu_dump));
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  const Outcome gpu = run_tprop("run " + scene + " --backend gpu --json --dump " + quoted(gpu_dump));
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  const nlohmann::json report = nlohmann::json::parse(gpu.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << gpu.out;
  EXPECT_EQ(report.at("backend"), "gpu");
  const uint32_t deepest = report.at("levels").get<uint32_t>() - 1;

  const nlohmann::json a = parse_file(cpu_dump), b = parse_file(gpu_dump);
  ASSERT_FALSE(a.is_discarded());
  ASSERT_FALSE(b.is_discarded());
  const nlohmann::json &ea = a.at("entities"), &eb = b.at("entities");
  ASSERT_EQ(ea.size(), eb.size());
  ASSERT_GT(ea.size(), 0u);
  int reported = 0;
  for (size_t i = 0; i < ea.size(); ++i) {
    ASSERT_EQ(ea[i].at("id"), eb[i].at("id"));
    const tprop::float4x4 expected = matrix_of(ea[i]), got = matrix_of(eb[i]);
    const float tol = tprop::local_to_world_tolerance(expected, deepest);
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r)
        if (!(std::fabs(expected[c][r] - got[c][r]) <= tol) && reported++ < 8)
          ADD_FAILURE() << scene << ": entity " << ea[i].at("id") << " [" << c << "][" << r
                        << "] GPU " << got[c][r] << " vs CPU " << expected[c][r];
  }
}

TEST(CliGpu, CpuAndGpuDumpsAgreeOnTheDefaultScene) {
  REQUIRE_DEVICE_OR_SKIP();
  expect_backends_agree("");
}

TEST(CliGpu, CpuAndGpuDumpsAgreeOnAGeneratedForest) {
  REQUIRE_DEVICE_OR_SKIP();
  expect_backends_agree("gen:forest:3000:3 --seed 11");
}

TEST(CliGpu, ValidateSucceedsOnEveryKindOfInput) {
  REQUIRE_DEVICE_OR_SKIP();
  const std::string assets = TPROP_ASSETS_DIR;
  for (const std::string& scene :
       {std::string(), quoted(assets + "/robot_arm.gltf"), quoted(assets + "/plaza.crdt"),
        std::string("gen:dcl:3:40"), std::string("gen:chain:300")}) {
    const Outcome o = run_tprop("run " + scene + " --validate");
    EXPECT_EQ(o.exit_code, 0) << scene << ": " << o.err;
    EXPECT_CONTAINS(o.out, "validate         max error ");
    EXPECT_CONTAINS(o.out, ": within tolerance (16 ulps per level");
  }
}

// With 16 KiB buffers every array of the GPU path is in pieces (256 slots each): a scene and a
// world replayed over frames still match the CPU reference.
TEST(CliGpu, ValidateSucceedsWithTheArraysInPieces) {
  REQUIRE_DEVICE_OR_SKIP();
  for (const std::string& input :
       {std::string("gen:forest:3000:3"), std::string("gen:mixed:3000"),
        std::string("gen:dclworld:3:2 --frames 3")}) {
    const Outcome o = run_tprop("run " + input + " --validate --max-buffer-bytes 16K");
    EXPECT_EQ(o.exit_code, 0) << input << ": " << o.err;
    EXPECT_CONTAINS(o.out, ": within tolerance (16 ulps per level");
  }
}

// --output-layout 3x4: the GPU path writes three affine rows an entity; --validate and the dump
// read them back as the same float4x4 the CPU reference gives.
TEST(CliGpu, TheAffineOutputLayoutValidatesAndDumpsTheSameMatrices) {
  REQUIRE_DEVICE_OR_SKIP();
  for (const std::string& input :
       {std::string(), std::string("gen:mixed:3000 --max-buffer-bytes 16K"),
        std::string("gen:dclworld:3:2 --frames 3")}) {
    const Outcome o = run_tprop("run " + input + " --validate --output-layout 3x4");
    EXPECT_EQ(o.exit_code, 0) << input << ": " << o.err;
    EXPECT_CONTAINS(o.out, ": within tolerance (16 ulps per level");
  }
  const std::string rows = temp_path("layout_3x4.json"), full = temp_path("layout_4x4.json");
  ASSERT_EQ(run_tprop("run gen:forest:500 --backend gpu --output-layout 3x4 --dump " + rows)
                .exit_code, 0);
  ASSERT_EQ(run_tprop("run gen:forest:500 --backend gpu --dump " + full).exit_code, 0);
  EXPECT_EQ(read_text(rows), read_text(full)) << "the same products, bit for bit";
}

// A matrix whose last row is not (0, 0, 0, 1) cannot be written as three rows: exit 1 naming
// the entity; a layout other than 4x4 or 3x4 is a usage error.
TEST(CliGpu, TheAffineOutputLayoutRefusesANonAffineSceneNamingTheEntity) {
  REQUIRE_DEVICE_OR_SKIP();
  const std::string scene = temp_path("projective.json");
  write_file(scene,
             R"({"entities": [{"id": 1, "Translation": [1, 2, 3]},
                {"id": 7, "parent": 1,
                 "LocalToParent": [1, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]}]})");
  const Outcome refused = run_tprop("run " + scene + " --backend gpu --output-layout 3x4");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_CONTAINS(refused.err, "entity 7 carries a LocalToParent whose last row is (0.5, 0, 0, 1)");
  EXPECT_EQ(run_tprop("run " + scene + " --backend gpu").exit_code, 0);
  const Outcome usage = run_tprop("run " + scene + " --output-layout 4x3");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_CONTAINS(usage.err, "--output-layout needs 4x4");
}

TEST(CliGpu, JsonReportIsOneObjectWithTheSummaryAndGpuTimes) {
  REQUIRE_DEVICE_OR_SKIP();
  const Outcome o = run_tprop("run gen:chain:20 --backend gpu --validate --json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << o.out;
  EXPECT_EQ(j.at("input"), "gen:chain:20");
  EXPECT_EQ(j.at("entities"), 20);
  EXPECT_EQ(j.at("roots"), 1);
  EXPECT_EQ(j.at("levels"), 20);
  EXPECT_EQ(j.at("cycles_broken"), 0);
  EXPECT_EQ(j.at("unknown_parents"), 0);
  EXPECT_EQ(j.at("backend"), "gpu");
  EXPECT_FALSE(j.at("device").get<std::string>().empty());
  for (const char* stage : {"upload", "evaluate", "total"})
    EXPECT_GE(j.at("gpu_time_ms").at(stage).get<double>(), 0.0) << stage;
  EXPECT_GT(j.at("ns_per_entity").get<double>(), 0.0);
  EXPECT_GE(j.at("time_ms").at("load").get<double>(), 0.0);
  EXPECT_EQ(j.at("validate").at("within_tolerance"), true);
  EXPECT_LE(j.at("validate").at("max_error_in_tolerances").get<double>(), 1.0);
}

TEST(CliGpu, SummaryNamesTheDeviceAndTheStageTimes) {
  REQUIRE_DEVICE_OR_SKIP();
  const Outcome o = run_tprop("run gen:flat:10 --backend gpu");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_CONTAINS(o.out, "backend          gpu (");
  EXPECT_CONTAINS(o.out, "gpu time         upload ");
  EXPECT_CONTAINS(o.out, " ns per entity)");
  EXPECT_TRUE(o.err.empty()) << o.err;
}

TEST(CliNoDevice, GpuBackendFailsWithOneAndSaysWhy) {
  const Outcome o = run_tprop("run gen:flat:3 --backend gpu", kNoDevice);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "--backend gpu: no usable Vulkan device");
  EXPECT_CONTAINS(o.err, "no-such-device");
  EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(CliNoDevice, AutoFallsBackToTheCpuWithAOneLineNotice) {
  const Outcome o = run_tprop("run gen:chain:4", kNoDevice);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_CONTAINS(o.out, "backend          cpu (CPU reference)");
  EXPECT_CONTAINS(o.out, "levels           4\n");
  EXPECT_CONTAINS(o.err, "no usable Vulkan device (");
  EXPECT_CONTAINS(o.err, "running the CPU reference");
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

TEST(CliNoDevice, JsonStaysTheOnlyThingOnStdoutAndRecordsTheFallback) {
  const Outcome o = run_tprop("run gen:flat:5 --json", kNoDevice);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << o.out;
  EXPECT_EQ(j.at("backend"), "cpu");
  EXPECT_EQ(j.at("entities"), 5);
  EXPECT_TRUE(j.at("gpu_time_ms").is_null());
  EXPECT_CONTAINS(j.at("fallback").get<std::string>(), "no-such-device");
  EXPECT_CONTAINS(o.err, "no usable Vulkan device");
}

TEST(CliNoDevice, ValidateNeedsADevice) {
  const Outcome o = run_tprop("run gen:flat:3 --validate", kNoDevice);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "--validate needs a Vulkan device");
}

// An explicit --device is binding: no silent CPU fallback under auto, and checked under cpu.
TEST(CliNoDevice, DeviceOptionNamingNoDeviceFailsForEveryBackend) {
  for (const std::string backend : {"", " --backend auto", " --backend cpu"}) {
    const Outcome o = run_tprop("run gen:flat:3 --device no-such-device" + backend);
    EXPECT_EQ(o.exit_code, 1) << backend << ": " << o.err;
    EXPECT_CONTAINS(o.err, "'no-such-device'");
    EXPECT_EQ(o.err.find("running the CPU reference"), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
}

TEST(CliNoDevice, DeviceOptionNamingADeviceRunsOnTheCpuBackend) {
  REQUIRE_DEVICE_OR_SKIP();
  const Outcome o = run_tprop("run gen:flat:3 --backend cpu --device 0");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_CONTAINS(o.out, "backend          cpu (CPU reference)");
}

TEST(CliNoDevice, DeviceOptionNamingNoDeviceFailsForTheGpuBackend) {
  const Outcome o = run_tprop("run gen:flat:3 --backend gpu --device no-such-device");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "no-such-device");
}

}  // namespace
