// The CLI's pure parts as units: the progress line, the argument parsing, the GPU-versus-CPU
// comparison (hierarchy/compare.h) and the JSON report. Expected values are worked out by hand.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "cli_progress.h"
#include "cli_report.h"
#include "compare.h"
#include "depth_order.h"
#include "entity_store.h"

namespace tprop::cli {
namespace {

TEST(ProgressLine, KnownFractionDrawsABarPercentAndElapsedTime) {
  EXPECT_EQ(format_progress_line("loading x", 0.5, 2.0, 10), "loading x [#####-----]  50%  2.0 s");
  EXPECT_EQ(format_progress_line("v", 1.0, 0.04, 4), "v [####] 100%  0.0 s");
  // 0.99 of 10 cells is 9 full cells; the percent rounds down, never claiming 100 early.
  EXPECT_EQ(format_progress_line("v", 0.999, 12.0, 10), "v [#########-]  99%  12.0 s");
}

TEST(ProgressLine, FractionOutsideZeroToOneIsClamped) {
  EXPECT_EQ(format_progress_line("a", -0.5, 1.0, 4), "a [----]   0%  1.0 s");
  EXPECT_EQ(format_progress_line("a", 7.0, 1.0, 4), "a [####] 100%  1.0 s");
}

TEST(ProgressLine, UnknownFractionShowsOnlyTheLabelAndElapsedTime) {
  EXPECT_EQ(format_progress_line("loading gen:chain:9", std::nullopt, 3.5), "loading gen:chain:9  3.5 s");
}

TEST(ProgressLine, DisabledProgressWritesNothing) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p(f, /*enabled=*/false, std::chrono::milliseconds(0));
    p.phase("x");
    p.set_fraction(0.5);
    p.done();
  }
  EXPECT_EQ(std::ftell(f), 0);
  std::fclose(f);
}

TEST(ProgressLine, EnabledProgressDrawsAfterTheDelayAndErasesItsLine) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p(f, /*enabled=*/true, std::chrono::milliseconds(0));
    p.phase("busy");
    p.set_fraction(0.25);
    std::this_thread::sleep_for(std::chrono::milliseconds(350));
    p.done();
  }
  std::rewind(f);
  std::string text;
  char buffer[256];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
  std::fclose(f);
  EXPECT_NE(text.find("\r\033[Kbusy [#######-----------------------]  25%"), std::string::npos)
      << text;
  // The last thing written erases the line.
  ASSERT_GE(text.size(), 4u);
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K");
}

TEST(CliArgs, SizeIsWidthByHeight) {
  auto s = parse_size("960x540");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->first, 960u);
  EXPECT_EQ(s->second, 540u);
  EXPECT_TRUE(parse_size("0x0").ok());  // syntax only: the range is judged by the command
  EXPECT_FALSE(parse_size("960").ok());
  EXPECT_FALSE(parse_size("x540").ok());
  EXPECT_FALSE(parse_size("960x").ok());
  EXPECT_FALSE(parse_size("-1x5").ok());
  EXPECT_FALSE(parse_size("99999999999x5").ok());
}

TEST(CliArgs, RunOptionsTakeValuesInBothSpellings) {
  auto o = parse_run_args({"s.json", "--backend=gpu", "--device", "1", "--validate", "--json"});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->scene, "s.json");
  EXPECT_EQ(o->backend, Backend::Gpu);
  EXPECT_EQ(o->device, "1");
  EXPECT_TRUE(o->validate);
  EXPECT_TRUE(o->json);
  EXPECT_FALSE(parse_run_args({"--device"}).ok());
  EXPECT_FALSE(parse_run_args({"--validate=yes"}).ok());
  // After "--" a leading dash is a scene name.
  auto dashed = parse_run_args({"--", "-odd.json"});
  ASSERT_TRUE(dashed.ok());
  EXPECT_EQ(dashed->scene, "-odd.json");
}

TEST(CliArgs, MaxBufferBytesTakesSuffixesAndRefusesLessThan16K) {
  auto run = parse_run_args({"--max-buffer-bytes", "16K"});
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->max_buffer_bytes, 16384u);
  auto giga = parse_run_args({"--max-buffer-bytes=1G"});
  ASSERT_TRUE(giga.ok());
  EXPECT_EQ(giga->max_buffer_bytes, uint64_t(1) << 30);
  EXPECT_EQ(parse_run_args({"--max-buffer-bytes", "20000"})->max_buffer_bytes, 20000u);
  EXPECT_EQ(parse_run_args({})->max_buffer_bytes, 0u);  // the device's limit
  for (const char* bad : {"16383", "1k0", "M", "", "-5", "99999999999G"}) {
    auto o = parse_run_args({"--max-buffer-bytes", bad});
    ASSERT_FALSE(o.ok()) << bad;
    EXPECT_NE(o.error().message.find("at least 16K"), std::string::npos) << o.error().message;
  }
  EXPECT_FALSE(parse_run_args({"--max-buffer-bytes"}).ok());
  auto render = parse_render_args({"-o", "a.png", "--max-buffer-bytes", "64M"});
  ASSERT_TRUE(render.ok());
  EXPECT_EQ(render->max_buffer_bytes, uint64_t(64) << 20);
}

TEST(CliArgs, RenderNeedsAnOutput) {
  EXPECT_FALSE(parse_render_args({"scene.json"}).ok());
  auto o = parse_render_args({"-o", "a.png", "--size=64x32", "--seed", "5"});
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->output, "a.png");
  EXPECT_EQ(o->width, 64u);
  EXPECT_EQ(o->height, 32u);
  EXPECT_EQ(o->seed, 5u);
  EXPECT_TRUE(o->scene.empty());
  EXPECT_FALSE(o->cube_size.has_value());
  EXPECT_TRUE(parse_render_args({"--help"}).ok());
  auto sized = parse_render_args({"-o", "a.png", "--cube-size", "1.5"});
  ASSERT_TRUE(sized.ok());
  EXPECT_EQ(sized->cube_size, 1.5f);
  EXPECT_FALSE(parse_render_args({"-o", "a.png", "--cube-size", "0"}).ok());
  EXPECT_FALSE(parse_render_args({"-o", "a.png", "--cube-size", "-1"}).ok());
  EXPECT_FALSE(parse_render_args({"-o", "a.png", "--cube-size", "big"}).ok());
  EXPECT_FALSE(parse_render_args({"-o", "a.png", "--cube-size", "inf"}).ok());
}

// Entity 1 at the root, entity 2 its child: positions 0 (level 0) and 1 (level 1).
DepthOrder two_level_order() {
  EntityStore store;
  store.create(1);
  store.create(2);
  store.set_parent(2, 1);
  return sort_by_depth(store);
}

TEST(Compare, ErrorsAreMeasuredInUnitsOfTheLevelsTolerance) {
  const DepthOrder order = two_level_order();
  ASSERT_EQ(order.level_count(), 2u);
  std::vector<float4x4> reference(2, float4x4(1.0f));
  reference[1][3] = float4(8.0f, 0.0f, 0.0f, 1.0f);  // max |element| 8
  std::vector<float4x4> got = reference;
  // Root: tolerance 16 * 2^-23 * 1 * 1 = 2^-19; an error of 2^-20 is half of it.
  got[0][0][0] = 1.0f + std::ldexp(1.0f, -20);
  EXPECT_FLOAT_EQ(local_to_world_tolerance(reference[0], 0), std::ldexp(1.0f, -19));
  auto within = compare_local_to_world(order, reference, got);
  ASSERT_TRUE(within.ok());
  EXPECT_DOUBLE_EQ(within->worst_ratio, 0.5);
  EXPECT_DOUBLE_EQ(within->max_abs_error, std::ldexp(1.0, -20));
  EXPECT_EQ(within->worst_position, 0u);
  EXPECT_TRUE(within->within_tolerance());
  EXPECT_EQ(within->mismatches, 0u);

  // Child: tolerance 16 * 2^-23 * 2 * 8 = 2^-15; an error of 2^-13 is four of them.
  got[1][3][0] = 8.0f + std::ldexp(1.0f, -13);
  auto above = compare_local_to_world(order, reference, got);
  ASSERT_TRUE(above.ok());
  EXPECT_DOUBLE_EQ(above->worst_ratio, 4.0);
  EXPECT_DOUBLE_EQ(above->max_abs_error, std::ldexp(1.0, -13));
  EXPECT_EQ(above->worst_position, 1u);
  EXPECT_FALSE(above->within_tolerance());
  ASSERT_EQ(above->mismatches, 1u);
  ASSERT_EQ(above->first.size(), 1u);
  EXPECT_EQ(above->first[0].position, 1u);
  EXPECT_EQ(above->first[0].level, 1u);
  EXPECT_EQ(above->first[0].column, 3);
  EXPECT_EQ(above->first[0].row, 0);
}

// The root's error is small but half its tight tolerance; the child's is four times larger in
// absolute terms but a quarter of its (level 1, magnitude 8) tolerance: two different entities.
TEST(Compare, LargestRelativeAndLargestAbsoluteErrorsAreLocatedSeparately) {
  const DepthOrder order = two_level_order();
  std::vector<float4x4> reference(2, float4x4(1.0f));
  reference[1][3] = float4(8.0f, 0.0f, 0.0f, 1.0f);
  std::vector<float4x4> got = reference;
  got[0][0][0] = 1.0f + std::ldexp(1.0f, -20);  // 2^-20 of 2^-19: ratio 0.5
  got[1][3][0] = 8.0f + std::ldexp(1.0f, -17);  // 2^-17 of 2^-15: ratio 0.25
  auto c = compare_local_to_world(order, reference, got);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c->worst_ratio, 0.5);
  EXPECT_EQ(c->worst_position, 0u);
  EXPECT_DOUBLE_EQ(c->max_abs_error, std::ldexp(1.0, -17));
  EXPECT_EQ(c->max_abs_position, 1u);

  ValidationReport v;
  v.comparison = *c;
  v.worst_entity = 1;
  v.max_abs_entity = 2;
  const std::string line = validation_line(v);
  EXPECT_NE(line.find("max error 0.5 of tolerance at entity 1, max abs error 7.63e-06 at entity 2: "
                      "within tolerance"),
            std::string::npos)
      << line;
}

TEST(Compare, TwoNansAgreeButANanAgainstANumberIsInfinitelyWrong) {
  const DepthOrder order = two_level_order();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float4x4> reference(2, float4x4(1.0f));
  reference[0][0][0] = nan;
  std::vector<float4x4> got = reference;
  auto both = compare_local_to_world(order, reference, got);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->worst_ratio, 0.0);
  got[1][2][2] = nan;
  auto one = compare_local_to_world(order, reference, got);
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(std::isinf(one->worst_ratio));
  EXPECT_FALSE(one->within_tolerance());
}

TEST(Compare, ArraysOfTheWrongSizeAreAnError) {
  const DepthOrder order = two_level_order();
  std::vector<float4x4> two(2, float4x4(1.0f)), one(1, float4x4(1.0f));
  EXPECT_FALSE(compare_local_to_world(order, two, one).ok());
}

TEST(Report, JsonHoldsTheSummaryFields) {
  RunReport r;
  r.input = "gen:chain:4";
  r.entities = 4;
  r.roots = 1;
  r.levels = 4;
  r.backend = "gpu";
  r.device = "llvmpipe";
  r.gpu_times = StageTimes{0.001, 0.007};  // 0.008 ms for 4 entities: 2000 ns each
  const nlohmann::json j = nlohmann::json::parse(report_json(r));
  EXPECT_EQ(j.at("input"), "gen:chain:4");
  EXPECT_EQ(j.at("entities"), 4);
  EXPECT_EQ(j.at("levels"), 4);
  EXPECT_EQ(j.at("backend"), "gpu");
  EXPECT_DOUBLE_EQ(j.at("gpu_time_ms").at("evaluate").get<double>(), 0.007);
  EXPECT_NEAR(j.at("ns_per_entity").get<double>(), 2000.0, 1e-9);
  EXPECT_TRUE(j.at("validate").is_null());
  EXPECT_TRUE(j.at("fallback").is_null());
  // The GPU frame sorts inside its wall time: no depth sort time of its own.
  EXPECT_TRUE(j.at("time_ms").at("depth_sort").is_null());
}

TEST(Report, CpuJsonTimesTheDepthSortApart) {
  RunReport r;
  r.entities = 2;
  r.backend = "cpu";
  r.device = "CPU reference";
  r.load_ms = 1.5;
  r.sort_ms = 0.25;
  r.evaluate_ms = 0.5;  // 0.5 ms for 2 entities: 250000 ns each
  const nlohmann::json j = nlohmann::json::parse(report_json(r));
  EXPECT_DOUBLE_EQ(j.at("time_ms").at("load").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j.at("time_ms").at("depth_sort").get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j.at("time_ms").at("evaluate").get<double>(), 0.5);
  EXPECT_TRUE(j.at("gpu_time_ms").is_null());
  EXPECT_NEAR(j.at("ns_per_entity").get<double>(), 250000.0, 1e-6);
}

}  // namespace
}  // namespace tprop::cli
