#include "dump.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <utility>

namespace tprop {
namespace {

// The shortest decimal that reads back as the same float (std::to_chars' guarantee): "0.1",
// not "0.100000001", and several times faster than printf's "%.9g".
void append_number(std::string& out, float v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buffer[32];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof buffer, v);
  assert(r.ec == std::errc());
  out.append(buffer, r.ptr);
}

}  // namespace

// A JSON string literal: quotes, backslashes and control bytes escaped; other bytes (UTF-8)
// pass through as they are.
void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04x", c);
          out += escape;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

void append_dump_matrix(std::string& out, const float4x4& m) {
  out += '[';
  for (int col = 0; col < 4; ++col) {
    for (int row = 0; row < 4; ++row) {
      if (col + row > 0) out += ", ";
      append_number(out, m[col][row]);
    }
  }
  out += ']';
}

Status write_dump(std::FILE* out, const std::string& name, const Scene& scene,
                  const DepthOrder& order, const std::vector<float4x4>& local_to_world) {
  assert(local_to_world.size() == order.size());
  try {
    // (id, position) pairs sorted by id: the dump's order does not depend on slots or levels.
    std::vector<std::pair<EntityId, uint32_t>> by_id(order.size());
    for (uint32_t pos = 0; pos < order.size(); ++pos)
      by_id[pos] = {scene.store.id_at(order.slot[pos]), pos};
    std::sort(by_id.begin(), by_id.end());

    // Each entry is formatted into one string and written with one call: stdio's per-call
    // locking would otherwise dominate a dump of millions of entities.
    std::string entry;
    std::fputs("{\"entities\": [", out);
    for (size_t i = 0; i < by_id.size(); ++i) {
      const auto [id, pos] = by_id[i];
      entry.assign(i == 0 ? "\n  {\"id\": " : ",\n  {\"id\": ");
      entry += std::to_string(id);
      const auto name_it = scene.names.find(id);
      if (name_it != scene.names.end()) {
        entry += ", \"name\": ";
        append_json_string(entry, name_it->second);
      }
      entry += ", \"localToWorld\": ";
      append_dump_matrix(entry, local_to_world[pos]);
      entry += "}";
      std::fwrite(entry.data(), 1, entry.size(), out);
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
  return write_dump_file(path, [&](std::FILE* f) {
    return write_dump(f, path, scene, order, local_to_world);
  });
}

Status write_dump_file(const std::string& path, const std::function<Status(std::FILE*)>& write) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Error{"cannot open " + path + " for writing: " + std::strerror(errno)};
  // A big buffer: a 10-million-entity dump is about 2 GB of small writes.
  std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
  Status written = write(f);
  const int close_error = std::fclose(f) != 0 ? errno : 0;
  if (!written) return written;
  if (close_error != 0) {
    return Error{"cannot write " + path + ": " + std::strerror(close_error)};
  }
  return ok_status();
}

}  // namespace tprop
