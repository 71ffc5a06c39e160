#include "dump.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <utility>

namespace tprop {
namespace {

// A JSON string literal: quotes, backslashes and control bytes escaped; other bytes (UTF-8)
// pass through as they are.
void write_json_string(std::FILE* out, const std::string& s) {
  std::fputc('"', out);
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': std::fputs("\\\"", out); break;
      case '\\': std::fputs("\\\\", out); break;
      case '\n': std::fputs("\\n", out); break;
      case '\r': std::fputs("\\r", out); break;
      case '\t': std::fputs("\\t", out); break;
      default:
        if (c < 0x20) std::fprintf(out, "\\u%04x", c);
        else std::fputc(ch, out);
    }
  }
  std::fputc('"', out);
}

void write_number(std::FILE* out, float v) {
  if (std::isfinite(v)) std::fprintf(out, "%.9g", static_cast<double>(v));
  else std::fputs("null", out);
}

}  // namespace

Status write_dump(std::FILE* out, const std::string& name, const Scene& scene,
                  const DepthOrder& order, const std::vector<float4x4>& local_to_world) {
  assert(local_to_world.size() == order.size());
  try {
    // (id, position) pairs sorted by id: the dump's order does not depend on slots or levels.
    std::vector<std::pair<EntityId, uint32_t>> by_id(order.size());
    for (uint32_t pos = 0; pos < order.size(); ++pos)
      by_id[pos] = {scene.store.id_at(order.slot[pos]), pos};
    std::sort(by_id.begin(), by_id.end());

    std::fputs("{\"entities\": [", out);
    for (size_t i = 0; i < by_id.size(); ++i) {
      const auto [id, pos] = by_id[i];
      std::fprintf(out, "%s\n  {\"id\": %u", i == 0 ? "" : ",", static_cast<unsigned>(id));
      const auto name_it = scene.names.find(id);
      if (name_it != scene.names.end()) {
        std::fputs(", \"name\": ", out);
        write_json_string(out, name_it->second);
      }
      std::fputs(", \"localToWorld\": [", out);
      const float4x4& m = local_to_world[pos];
      for (int col = 0; col < 4; ++col) {
        for (int row = 0; row < 4; ++row) {
          if (col + row > 0) std::fputs(", ", out);
          write_number(out, m[col][row]);
        }
      }
      std::fputs("]}", out);
    }
    std::fputs(by_id.empty() ? "]}\n" : "\n]}\n", out);
  } catch (const std::exception& e) {  // std::bad_alloc for the sort buffer
    return Error{"cannot write the dump " + name + ": " + e.what()};
  }
  if (std::fflush(out) != 0 || std::ferror(out)) {
    return Error{"cannot write the dump " + name + ": " + std::strerror(errno)};
  }
  return ok_status();
}

Status write_dump(const std::string& path, const Scene& scene, const DepthOrder& order,
                  const std::vector<float4x4>& local_to_world) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Error{"cannot open " + path + " for writing: " + std::strerror(errno)};
  // A big buffer: a 10-million-entity dump is about 2 GB of small writes.
  std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
  Status written = write_dump(f, path, scene, order, local_to_world);
  const int close_error = std::fclose(f) != 0 ? errno : 0;
  if (!written) return written;
  if (close_error != 0) return Error{"cannot write the dump " + path + ": " + std::strerror(close_error)};
  return ok_status();
}

}  // namespace tprop
