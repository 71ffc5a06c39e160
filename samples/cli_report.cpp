#include "cli_report.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace tprop::cli {
namespace {

std::string format(const char* fmt, double a) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, fmt, a);
  return buffer;
}

// JSON has no infinity: an infinite error (a NaN against a number) is written as null.
nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nullptr; }

}  // namespace

double RunReport::ns_per_entity() const {
  if (entities == 0) return 0.0;
  const double ms = gpu_times ? gpu_times->total_ms() : evaluate_ms;
  return ms * 1e6 / entities;
}

std::string validation_line(const ValidationReport& v) {
  const Comparison& c = v.comparison;
  // The largest error relative to its tolerance and the largest absolute one are often in
  // different entities (the tolerance grows with depth and magnitude): each is named.
  std::string line = "max error " + format("%.3g", c.worst_ratio) + " of tolerance";
  if (c.worst_ratio > 0) line += " at entity " + std::to_string(v.worst_entity);
  line += ", max abs error " + format("%.3g", c.max_abs_error);
  if (c.max_abs_error > 0) line += " at entity " + std::to_string(v.max_abs_entity);
  line += c.within_tolerance() ? ": within" : ": ABOVE";
  line += " tolerance (" + format("%g", kPerLevelUlps) + " ulps per level, hierarchy/compare.h)";
  if (!c.within_tolerance()) line += "; " + std::to_string(c.mismatches) + " elements outside";
  return line;
}

void print_summary(std::FILE* out, const RunReport& r) {
  std::fprintf(out, "input            %s\n", r.input.c_str());
  std::fprintf(out, "entities         %u\n", r.entities);
  std::fprintf(out, "roots            %u\n", r.roots);
  std::fprintf(out, "levels           %u\n", r.levels);
  std::fprintf(out, "cycles broken    %u (%u entities on cycles, standing at the root)\n",
               r.cycles_broken, r.entities_on_cycles);
  std::fprintf(out, "unknown parents  %u (standing at the root)\n", r.unknown_parents);
  std::fprintf(out, "static           %llu\n", static_cast<unsigned long long>(r.statics));
  if (r.backend == "gpu") {
    std::fprintf(out, "backend          gpu (%s)\n", r.device.c_str());
  } else {
    std::fprintf(out, "backend          cpu (CPU reference)\n");
  }
  if (r.gpu_times) {
    const StageTimes& t = *r.gpu_times;
    std::fprintf(out,
                 "gpu time         upload %.3f ms, evaluate %.3f ms (%.3f ms, %.2f ns per entity)\n",
                 t.upload_ms, t.evaluate_ms, t.total_ms(), r.ns_per_entity());
  }
  if (r.backend == "gpu") {
    // The Propagator orders the scene inside its update(): the frame's wall time includes it.
    std::fprintf(out,
                 "time             load %.2f ms, frame %.2f ms (wall: depth order, upload, "
                 "submit, wait, read back)\n",
                 r.load_ms, r.evaluate_ms);
  } else {
    std::fprintf(out,
                 "time             load %.2f ms, depth sort %.2f ms, evaluate %.2f ms "
                 "(%.2f ns per entity)\n",
                 r.load_ms, r.sort_ms, r.evaluate_ms, r.ns_per_entity());
  }
  if (r.validation) std::fprintf(out, "validate         %s\n", validation_line(*r.validation).c_str());
  if (!r.dump.empty()) std::fprintf(out, "dump             %s (%.2f ms)\n", r.dump.c_str(), r.dump_ms);
}

std::string report_json(const RunReport& r) {
  nlohmann::json j;
  j["input"] = r.input;
  j["entities"] = r.entities;
  j["roots"] = r.roots;
  j["levels"] = r.levels;
  j["cycles_broken"] = r.cycles_broken;
  j["entities_on_cycles"] = r.entities_on_cycles;
  j["unknown_parents"] = r.unknown_parents;
  j["static"] = r.statics;
  j["warnings"] = r.warnings;
  j["backend"] = r.backend;
  j["device"] = r.device;
  j["fallback"] = r.fallback.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.fallback);
  j["output_layout"] =
      r.output_layout.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.output_layout);
  // On the GPU the Propagator sorts inside its update(): no time of its own, evaluate (the
  // frame's wall time) includes it.
  nlohmann::json times = {{"load", r.load_ms},
                          {"depth_sort", r.backend == "gpu" ? nlohmann::json(nullptr)
                                                            : nlohmann::json(r.sort_ms)},
                          {"evaluate", r.evaluate_ms}};
  j["time_ms"] = times;
  if (r.gpu_times) {
    const StageTimes& t = *r.gpu_times;
    j["gpu_time_ms"] = {
        {"upload", t.upload_ms}, {"evaluate", t.evaluate_ms}, {"total", t.total_ms()}};
  } else {
    j["gpu_time_ms"] = nullptr;
  }
  j["ns_per_entity"] = r.ns_per_entity();
  if (r.validation) {
    const Comparison& c = r.validation->comparison;
    j["validate"] = {{"max_error_in_tolerances", finite_or_null(c.worst_ratio)},
                     {"max_abs_error", finite_or_null(c.max_abs_error)},
                     {"worst_entity", r.validation->worst_entity},
                     {"max_abs_entity", r.validation->max_abs_entity},
                     {"elements_outside", c.mismatches},
                     {"tolerance_ulps_per_level", kPerLevelUlps},
                     {"within_tolerance", c.within_tolerance()}};
  } else {
    j["validate"] = nullptr;
  }
  j["dump"] = r.dump.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.dump);
  return j.dump();
}

}  // namespace tprop::cli
