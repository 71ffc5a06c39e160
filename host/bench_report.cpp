#include "bench_report.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "median.h"
#include "output_layout_arg.h"

namespace tprop::bench {

namespace {

const char* const kByteModel =
    "per entity: the input components it reads at their size in the store (Translation 12 B, "
    "Rotation 16, Scale 4, NonUniformScale 12, parent index 4) plus the LocalToWorld it writes "
    "(64 bytes; 48 with --output-layout 3x4); GB/s = those bytes / GPU total time";

double mib(uint64_t bytes) { return double(bytes) / (1024.0 * 1024.0); }

// "-" where a figure is missing (no timestamps).
std::string figure(const std::optional<double>& v, const char* format) {
  if (!v) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, *v);
  return buffer;
}

nlohmann::json or_null(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json summary_json(const FrameSummary& s) {
  return {{"frame", frame_kind_name(s.kind)},
          {"runs", s.runs},
          {"host_update_ms", {{"median", s.update_median_ms},
                              {"min", s.update_min_ms},
                              {"max", s.update_max_ms}}},
          {"gpu_time_ms_median", or_null(s.gpu_median_ms)},
          {"gpu_over_loop_median", or_null(s.gpu_over_loop_median)}};
}

nlohmann::json stages_json(const FrameStats::HostTimes& times) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, ms] : times.named()) out[name] = ms;
  return out;
}

nlohmann::json frame_json(const FrameRecord& f) {
  nlohmann::json gpu = nullptr;
  if (f.gpu_total_ms) {
    gpu = nlohmann::json::object();
    for (const GpuStage& stage : f.gpu_stages) gpu[stage.name] = stage.ms;
    gpu["total"] = *f.gpu_total_ms;
  }
  nlohmann::json check = nullptr;
  if (f.check) {
    check = {{"gpu_max_error_in_tolerances", f.check->gpu_worst},
             {"gpu_max_abs_error", f.check->gpu_max_abs},
             {"loop_max_error_in_tolerances", f.check->loop_worst},
             {"within_tolerance", true}};
  }
  return {{"frame", frame_kind_name(f.kind)},
          {"run", f.run},
          {"edit", f.edit.what},
          {"edited_entities", f.edit.entities},
          {"entities", f.entities},
          {"levels", f.levels},
          {"hierarchy_changed", f.hierarchy_changed},
          {"evaluated_entities", f.evaluated_entities},
          {"work_list_walked", f.work_list_walked},
          {"staged_entities", f.staged_entities},
          {"values_only_entities", f.values_only_entities},
          {"values_in_place", f.values_in_place},
          {"moved_entities", f.moved_entities},
          {"compacted_entities", f.compacted_entities},
          {"slot_ordered_entities", f.slot_ordered_entities},
          {"host_update_ms", f.host_update_ms},
          {"host_update_stages_ms", stages_json(f.update_stages)},
          {"update_page_faults", f.update_page_faults},
          {"pipelines_created", f.pipelines_created},
          {"frame_wall_ms", f.frame_wall_ms},
          {"edit_ms", f.edit_ms},
          {"upload_bytes", f.upload_bytes},
          {"in_place_bytes", f.in_place_bytes},
          {"dispatches", f.dispatches},
          {"jump_runs", f.jump_runs},
          {"scan_runs", f.scan_runs},
          {"climbed_levels", f.climbed_levels},
          {"shared_wide_stores", f.shared_wide_stores},
          {"word_stores", f.word_stores},
          {"slot_order", f.slot_order},
          {"zeroed_ahead_bytes", f.zeroed_ahead_bytes},
          {"addressing", f.addressing},
          {"gpu_time_ms", gpu},
          {"gpu_times_error", f.gpu_times_error.empty() ? nlohmann::json(nullptr)
                                                        : nlohmann::json(f.gpu_times_error)},
          {"model_bytes", f.model_bytes},
          {"gb_per_s", or_null(f.gb_per_s())},
          {"loop_ms", f.loop_ms},
          {"gpu_over_loop", or_null(f.gpu_over_loop())},
          {"validate", check}};
}

}  // namespace

std::vector<FrameSummary> summarize_runs(const std::vector<FrameRecord>& frames) {
  std::vector<FrameSummary> out;
  std::vector<FrameKind> kinds;
  for (const FrameRecord& f : frames)
    if (std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end()) kinds.push_back(f.kind);
  for (FrameKind kind : kinds) {
    std::vector<double> update, gpu, ratio;
    for (const FrameRecord& f : frames) {
      if (f.kind != kind) continue;
      update.push_back(f.host_update_ms);
      if (f.gpu_total_ms) gpu.push_back(*f.gpu_total_ms);
      if (const std::optional<double> r = f.gpu_over_loop()) ratio.push_back(*r);
    }
    FrameSummary s;
    s.kind = kind;
    s.runs = static_cast<uint32_t>(update.size());
    s.update_median_ms = *median(update);
    s.update_min_ms = *std::min_element(update.begin(), update.end());
    s.update_max_ms = *std::max_element(update.begin(), update.end());
    s.gpu_median_ms = median(gpu);
    s.gpu_over_loop_median = median(ratio);
    out.push_back(s);
  }
  return out;
}

void print_text_header(std::FILE* out, const std::string& device, OutputLayout layout,
                       const Result<CopyCeiling>& ceiling,
                       const Result<HostMemoryFloor>& host_floor) {
  std::fprintf(out, "device      %s\noutput      LocalToWorld %s\n", device.c_str(),
               output_layout_name(layout));
  if (ceiling) {
    std::fprintf(out,
                 "ceiling     %.1f GB/s: a device-local copy of %.0f MiB (read + written) in "
                 "%.3f ms by %s (%s: %.1f GB/s), this run\n",
                 ceiling->gb_per_s, double(ceiling->bytes) / double(1 << 20), ceiling->ms,
                 ceiling->by_shader ? "a compute shader" : "vkCmdCopyBuffer",
                 ceiling->by_shader ? "vkCmdCopyBuffer" : "the shader",
                 ceiling->by_shader ? ceiling->command_gb_per_s : ceiling->shader_gb_per_s);
  } else {
    std::fprintf(out, "ceiling     none: %s\n", ceiling.error().message.c_str());
  }
  if (host_floor) {
    std::fprintf(out,
                 "host floor  %.1f ns a random line of host memory alone, %.1f ns a line with %u "
                 "walks in flight (%u lines over %.0f MiB), this run\n",
                 host_floor->latency_ns, host_floor->ns_per_line, host_floor->walks,
                 host_floor->lines, double(host_floor->bytes) / double(1 << 20));
  } else {
    std::fprintf(out, "host floor  none: %s\n", host_floor.error().message.c_str());
  }
  std::fprintf(out, "byte model  %s\n", kByteModel);
}

void print_text_scene(std::FILE* out, const SceneRecord& scene) {
  std::fprintf(out, "\n%s (%s): %u entities, %u level%s, generated in %.0f ms\n",
               scene.plan.spec.c_str(), scene.plan.kind.c_str(), scene.entities, scene.levels,
               scene.levels == 1 ? "" : "s", scene.generate_ms);
  std::fprintf(out, "  %-14s %-28s %10s %10s %6s", "frame", "edit", "update ms", "upload MiB",
               "disp");
  for (const std::string& stage : gpu_stage_names())
    std::fprintf(out, " %12s", (stage + " ms").c_str());
  std::fprintf(out, " %10s %7s %9s %8s %s\n", "gpu ms", "GB/s", "loop ms", "gpu/loop", "check");
}

void print_text_frame(std::FILE* out, const FrameRecord& f) {
  std::fprintf(out, "  %-14s %-28s %10.3f %10.3f %6u", frame_kind_name(f.kind),
               f.edit.what.c_str(), f.host_update_ms, mib(f.upload_bytes), f.dispatches);
  for (size_t i = 0; i < gpu_stage_names().size(); ++i) {
    const std::optional<double> ms =
        i < f.gpu_stages.size() ? std::optional<double>(f.gpu_stages[i].ms) : std::nullopt;
    std::fprintf(out, " %12s", figure(ms, "%.3f").c_str());
  }
  const std::string check =
      f.check ? figure(f.check->gpu_worst, "%.3f") + " tol" : std::string("-");
  std::fprintf(out, " %10s %7s %9.3f %8s %s\n", figure(f.gpu_total_ms, "%.3f").c_str(),
               figure(f.gb_per_s(), "%.2f").c_str(), f.loop_ms,
               figure(f.gpu_over_loop(), "%.2f").c_str(), check.c_str());
  if (!f.gpu_times_error.empty()) std::fprintf(out, "    no GPU times: %s\n", f.gpu_times_error.c_str());
  // (Every frame's in --json; a scene's frames change it only where a frame's data outgrows
  // one binding or a view.)
  if (f.kind == FrameKind::Full) std::fprintf(out, "    addressing: %s\n", f.addressing);
  std::fputs("    update ms:", out);
  const char* separator = " ";
  for (const auto& [name, ms] : f.update_stages.named()) {
    std::fprintf(out, "%s%s %.3f", separator, name, ms);
    separator = ", ";
  }
  std::fprintf(out, "; the edits before it %.3f ms\n", f.edit_ms);
  // The upload column counts copies; where update() wrote into device memory itself, say so.
  if (f.in_place_bytes)
    std::fprintf(out, "    written in place by update(): %.3f MiB\n", mib(f.in_place_bytes));
  std::fflush(out);
}

void print_text_summary(std::FILE* out, const SceneRecord& scene) {
  const std::vector<FrameSummary> summaries = summarize_runs(scene.frames);
  if (std::none_of(summaries.begin(), summaries.end(),
                   [](const FrameSummary& s) { return s.runs > 1; }))
    return;
  std::fprintf(out, "  %-14s %5s %10s %10s %10s %10s %8s\n", "over runs", "runs",
               "update ms", "least", "most", "gpu ms", "gpu/loop");
  for (const FrameSummary& s : summaries) {
    if (s.runs < 2) continue;
    std::fprintf(out, "  %-14s %5u %10.3f %10.3f %10.3f %10s %8s\n", frame_kind_name(s.kind),
                 s.runs, s.update_median_ms, s.update_min_ms, s.update_max_ms,
                 figure(s.gpu_median_ms, "%.3f").c_str(),
                 figure(s.gpu_over_loop_median, "%.2f").c_str());
  }
  std::fflush(out);
}

std::string json_report(const std::string& device, const BenchOptions& options,
                        const Result<CopyCeiling>& ceiling,
                        const Result<HostMemoryFloor>& host_floor,
                        const std::vector<SceneRecord>& scenes) {
  nlohmann::json doc;
  doc["tool"] = "tprop_bench";
  doc["device"] = device;
  doc["seed"] = options.seed;
  doc["validate"] = options.validate;
  doc["byte_model"] = kByteModel;
  doc["output_layout"] = output_layout_name(options.propagator.output_layout);
  doc["warm_gpu_ms"] = options.warm_gpu_ms;
  doc["repeat"] = options.repeat;
  // --frames: the kinds asked for beside the full frame; null when every kind runs.
  nlohmann::json chosen = nullptr;
  for (FrameKind kind : options.frames) chosen.push_back(frame_kind_name(kind));
  doc["frames_chosen"] = chosen;
  doc["copy_ceiling"] =
      ceiling ? nlohmann::json{{"gb_per_s", ceiling->gb_per_s},
                               {"bytes", ceiling->bytes},
                               {"ms", ceiling->ms},
                               {"by", ceiling->by_shader ? "shader" : "copy_command"},
                               {"copy_command_gb_per_s", ceiling->command_gb_per_s},
                               {"shader_gb_per_s", ceiling->shader_gb_per_s}}
              : nlohmann::json(nullptr);
  doc["host_memory_floor"] =
      host_floor ? nlohmann::json{{"latency_ns", host_floor->latency_ns},
                                  {"ns_per_line", host_floor->ns_per_line},
                                  {"walks", host_floor->walks},
                                  {"lines", host_floor->lines},
                                  {"bytes", host_floor->bytes}}
                 : nlohmann::json(nullptr);
  doc["scenes"] = nlohmann::json::array();
  for (const SceneRecord& s : scenes) {
    nlohmann::json frames = nlohmann::json::array();
    for (const FrameRecord& f : s.frames) frames.push_back(frame_json(f));
    nlohmann::json summaries = nlohmann::json::array();
    for (const FrameSummary& summary : summarize_runs(s.frames))
      summaries.push_back(summary_json(summary));
    doc["scenes"].push_back({{"kind", s.plan.kind},
                             {"spec", s.plan.spec},
                             {"size", s.plan.size},
                             {"entities", s.entities},
                             {"levels", s.levels},
                             {"generate_ms", s.generate_ms},
                             {"frames", frames},
                             {"over_runs", summaries}});
  }
  return doc.dump(2) + "\n";
}

}  // namespace tprop::bench
