#include "dcl_world_gen.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <set>

#include <nlohmann/json.hpp>

#include "dcl_crdt.h"
#include "dcl_transform.h"
#include "dcl_world_walk.h"
#include "dump.h"
#include "generator_support.h"
#include "scene_generators.h"
#include "scene_input.h"

namespace tprop {

namespace {

constexpr uint16_t kFirstUserEntity = 512;  // where SDK7 numbers its scene entities
constexpr uint32_t kMaxParcels = (65536 - kFirstUserEntity) / kDclWorldEntitiesPerParcel;
constexpr uint32_t kCityRow = 300;  // parcels a row when laying scenes out through the city
constexpr int32_t kCityCorner = -150;
constexpr uint8_t kMaxDepth = 4;
constexpr uint64_t kMaxView = 300;  // the city is 301 parcels across

// One scene's stream as the generator writes it, frame after frame.
class SceneStreamGenerator {
 public:
  SceneStreamGenerator(DclWorldScene& out, uint64_t seed, uint32_t parcels, DclWorldEdits edits)
      : out_(out), rng_(seed), width_(kDclParcelSize * float(parcels)), edits_(edits) {}

  void create_all(uint32_t entities) {
    std::vector<uint8_t> depth(size_t(kFirstUserEntity) + entities, 0);
    for (uint32_t k = 0; k < entities; ++k) {
      const uint16_t n = uint16_t(kFirstUserEntity + k);
      EntityId parent = kDclRootEntity;
      depth[n] = 1;
      if (k > 0 && rng_.unit() >= 0.5) {
        const uint16_t m = uint16_t(kFirstUserEntity + rng_.below(k));
        if (depth[m] < kMaxDepth) {
          parent = id(m);
          depth[n] = uint8_t(depth[m] + 1);
        }
      }
      create(n, parent);
    }
    next_number_ = uint32_t(kFirstUserEntity) + entities;
  }

  void next_frame(uint32_t frame) {
    out_.frame_starts.push_back(out_.stream.size());
    undo_cycle();
    const size_t moves = std::max<size_t>(1, live_.size() / 100);
    for (size_t i = 0; i < moves && !live_.empty(); ++i) move(random_live());
    if (edits_ == DclWorldEdits::Moves) return;
    const size_t churn = std::max<size_t>(1, live_.size() / 1000);
    for (size_t i = 0; i < churn && live_.size() > 1; ++i) destroy(random_live());
    for (size_t i = 0; i < churn; ++i) create_one();
    if (edits_ == DclWorldEdits::All && frame % 4 == 1 && live_.size() >= 2) tie_cycle();
  }

 private:
  struct Entity {
    DclTransform transform;
    uint32_t lamport = 0;
    uint16_t version = 0;
    uint32_t live_index = 0;
  };

  EntityId id(uint16_t n) const { return dcl_entity_id(n, entities_[n].version); }

  DclTransform random_transform(uint16_t n, EntityId parent) {
    DclTransform t;
    t.parent = parent;
    t.position = parent == kDclRootEntity
                     ? rng_.point(float3(0), float3(width_, 4, kDclParcelSize))
                     : rng_.point(float3(-1, 0, -1), float3(1, 1.5f, 1));
    t.rotation = rng_.yaw();
    if (n % 8 == 7) {
      t.scale = rng_.point(0.5f, 2.0f);
    } else {
      t.scale = float3(rng_.range(0.5, 1.5));
    }
    return t;
  }

  void put(uint16_t n) {
    Entity& e = entities_[n];
    std::vector<uint8_t> data;
    append_dcl_transform(e.transform, data);
    append_crdt_message(CrdtMessage::put(id(n), kDclTransformComponentId, ++e.lamport,
                                         std::move(data)),
                        out_.stream);
  }

  void create(uint16_t n, EntityId parent) {
    if (n >= entities_.size()) entities_.resize(size_t(n) + 1);
    Entity& e = entities_[n];
    e.lamport = 0;
    e.live_index = uint32_t(live_.size());
    live_.push_back(n);
    e.transform = random_transform(n, parent);
    put(n);
  }

  uint16_t random_live() { return live_[rng_.below(live_.size())]; }

  // A parent of a lower number keeps the generated links acyclic (but for tie_cycle's).
  EntityId random_parent_below(uint16_t n) {
    if (live_.empty() || rng_.unit() < 0.5) return kDclRootEntity;
    const uint16_t m = random_live();
    return m < n ? id(m) : kDclRootEntity;
  }

  void move(uint16_t n) {
    EntityId parent = entities_[n].transform.parent;
    if (edits_ == DclWorldEdits::All && rng_.unit() < 0.1) parent = random_parent_below(n);
    entities_[n].transform = random_transform(n, parent);
    put(n);
  }

  void destroy(uint16_t n) {
    append_crdt_message(CrdtMessage::delete_entity(id(n)), out_.stream);
    const uint32_t at = entities_[n].live_index;
    live_[at] = live_.back();
    entities_[live_[at]].live_index = at;
    live_.pop_back();
    if (entities_[n].version < 0xffff) freed_.push_back(n);
  }

  void create_one() {
    uint16_t n;
    if (!freed_.empty() && (rng_.unit() < 0.5 || next_number_ > 0xffff)) {
      const size_t i = rng_.below(freed_.size());
      n = freed_[i];
      freed_[i] = freed_.back();
      freed_.pop_back();
      ++entities_[n].version;
    } else if (next_number_ <= 0xffff) {
      n = uint16_t(next_number_++);
    } else {
      return;  // every number is live
    }
    create(n, random_parent_below(n));
  }

  void tie_cycle() {
    const uint16_t a = random_live();
    uint16_t b = random_live();
    if (a == b) return;
    cycle_ = {{a, entities_[a].version, entities_[a].transform.parent},
              {b, entities_[b].version, entities_[b].transform.parent}};
    entities_[a].transform.parent = id(b);
    entities_[b].transform.parent = id(a);
    put(a);
    put(b);
  }

  void undo_cycle() {
    for (const CycleLink& link : cycle_) {
      Entity& e = entities_[link.number];
      const bool live = e.live_index < live_.size() && live_[e.live_index] == link.number;
      if (!live || e.version != link.version) continue;
      e.transform.parent = link.parent;
      put(link.number);
    }
    cycle_.clear();
  }

  struct CycleLink {
    uint16_t number;
    uint16_t version;
    EntityId parent;
  };

  DclWorldScene& out_;
  SeededRandom rng_;
  float width_;
  DclWorldEdits edits_;
  std::vector<Entity> entities_;  // by number
  std::vector<uint16_t> live_;
  std::vector<uint16_t> freed_;   // deleted numbers, reusable at the next version
  uint32_t next_number_ = kFirstUserEntity;
  std::vector<CycleLink> cycle_;  // tied this frame, undone the next
};

}  // namespace

std::span<const uint8_t> DclWorldScene::chunk(uint32_t k) const {
  if (k > frame_starts.size()) return {};
  const uint64_t begin = k == 0 ? 0 : frame_starts[k - 1];
  const uint64_t end = k == frame_starts.size() ? stream.size() : frame_starts[k];
  return std::span<const uint8_t>(stream).subspan(begin, end - begin);
}

uint32_t DclWorldStreams::frame_count() const {
  uint32_t n = 0;
  for (const DclWorldScene& s : scenes) n = std::max(n, s.load_frame + s.chunk_count());
  return n;
}

bool is_dcl_world_spec(std::string_view spec) { return spec.starts_with("gen:dclworld"); }

Result<DclWorldStreams> generate_dcl_world(std::string_view spec, uint32_t frames,
                                           uint64_t seed) {
  const std::vector<std::string_view> f = split_spec(spec);
  if (f.size() < 3 || f.size() > 6 || f[0] != "gen" || f[1] != "dclworld")
    return spec_error(spec, "expected " + std::string(kDclWorldSpecForm));
  auto scenes = parse_spec_number(spec, f[2], "SCENES", 1, DclWorld::kMaxScenes);
  if (!scenes) return scenes.error();
  uint64_t parcels = kDclWorldDefaultParcels;
  std::optional<DclWalk> walk;
  std::optional<DclWorldEdits> edits;
  for (size_t k = 3; k < f.size(); ++k) {
    if (f[k].starts_with("edits=")) {
      if (edits) return spec_error(spec, "edits=KINDS is given twice");
      const std::string_view kinds = f[k].substr(6);
      if (kinds == "all") {
        edits = DclWorldEdits::All;
      } else if (kinds == "spawn") {
        edits = DclWorldEdits::Spawns;
      } else if (kinds == "move") {
        edits = DclWorldEdits::Moves;
      } else {
        return spec_error(spec, "edits='" + std::string(kinds) +
                                    "' is not one of all, spawn, move");
      }
    } else if (f[k].starts_with("walk=")) {
      if (walk) return spec_error(spec, "walk=VIEW is given twice");
      auto view = parse_spec_number(spec, f[k].substr(5), "VIEW", 0, kMaxView);
      if (!view) return view.error();
      walk = DclWalk{{kCityCorner, kCityCorner}, uint32_t(*view)};
    } else if (k == 3) {
      auto p = parse_spec_number(spec, f[k], "PARCELS", 1, kMaxParcels);
      if (!p) return p.error();
      parcels = *p;
    } else {
      return spec_error(spec, "'" + std::string(f[k]) + "' is neither walk=VIEW nor edits=KINDS " +
                                  "(expected " + kDclWorldSpecForm + ")");
    }
  }
  const uint64_t entities = parcels * kDclWorldEntitiesPerParcel;
  if (*scenes * entities > kMaxGeneratedEntities)
    return spec_error(spec, std::to_string(*scenes) + " scenes of " + std::to_string(entities) +
                                " entities are more than the " +
                                std::to_string(kMaxGeneratedEntities) + " a generator makes");
  if (frames == 0) return spec_error(spec, "a world needs at least one frame");

  try {
    DclWorldStreams world;
    world.source = std::string(spec);
    for (uint64_t i = 0; i < *scenes; ++i) {
      const uint64_t at = i * parcels;
      const DclParcel parcel{int32_t(kCityCorner + int64_t(at % kCityRow)),
                             int32_t(kCityCorner + int64_t(at / kCityRow))};
      // Without a walk every scene is loaded from frame 0 on; with one, a scene the player
      // never sees in these frames is not generated at all.
      std::optional<DclViewSpan> span = DclViewSpan{};
      if (walk) span = dcl_view_span(*walk, parcel, uint32_t(parcels), frames);
      if (!span) continue;
      DclWorldScene& s = world.scenes.emplace_back();
      s.name = "scene" + std::to_string(i);
      s.parcel = parcel;
      s.load_frame = span->first;
      s.unload_frame = span->end;
      // A seed per scene: a scene's stream does not depend on how many scenes come before it,
      // nor on when it loads (its frames count from its load, as an explorer runs a scene that
      // comes into view from its start).
      SceneStreamGenerator gen(s, seed * 0x9E3779B97F4A7C15ull + i, uint32_t(parcels),
                               edits.value_or(DclWorldEdits::All));
      gen.create_all(uint32_t(entities));
      const uint32_t chunks = span->end.value_or(frames) - span->first;
      for (uint32_t frame = 1; frame < chunks; ++frame) gen.next_frame(frame);
    }
    return world;
  } catch (const std::exception& e) {  // std::bad_alloc
    return spec_error(spec, e.what());
  }
}

bool is_dcl_world_folder(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         stat((path + "/world.json").c_str(), &st) == 0;
}

namespace {

using nlohmann::json;

Result<DclWorldScene> parse_manifest_scene(const json& j, const std::string& where,
                                           const std::string& folder) {
  if (!j.is_object()) return Error{where + " must be an object"};
  DclWorldScene s;
  if (!j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty())
    return Error{where + ".name must be a non-empty string"};
  s.name = j["name"].get<std::string>();
  const json* p = j.contains("parcel") ? &j["parcel"] : nullptr;
  if (!p || !p->is_array() || p->size() != 2 || !(*p)[0].is_number_integer() ||
      !(*p)[1].is_number_integer())
    return Error{where + ".parcel must be [x, y], two integers"};
  const int64_t x = (*p)[0].get<int64_t>(), y = (*p)[1].get<int64_t>();
  if (x < INT32_MIN || x > INT32_MAX || y < INT32_MIN || y > INT32_MAX)
    return Error{where + ".parcel is out of the 32-bit range"};
  s.parcel = {int32_t(x), int32_t(y)};
  if (!j.contains("stream") || !j["stream"].is_string())
    return Error{where + ".stream must be the file name of the scene's .crdt stream"};
  const std::string stream = j["stream"].get<std::string>();
  const std::string path = !stream.empty() && stream[0] == '/' ? stream : folder + "/" + stream;
  Result<std::string> bytes = read_file_bytes(path);
  if (!bytes) return Error{where + ".stream: " + bytes.error().message};
  s.stream.assign(bytes->begin(), bytes->end());
  auto frame_number = [&](const char* key) -> Result<std::optional<uint32_t>> {
    if (!j.contains(key)) return std::optional<uint32_t>();
    const json& v = j[key];
    if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
      return Error{where + "." + key + " must be a frame number (a whole number >= 0)"};
    return std::optional<uint32_t>(v.get<uint32_t>());
  };
  auto load = frame_number("load");
  if (!load) return load.error();
  auto unload = frame_number("unload");
  if (!unload) return unload.error();
  s.load_frame = load->value_or(0);
  s.unload_frame = *unload;
  if (s.unload_frame && *s.unload_frame <= s.load_frame)
    return Error{where + ".unload (" + std::to_string(*s.unload_frame) +
                 ") must come after load (" + std::to_string(s.load_frame) + ")"};
  if (j.contains("frames")) {
    const json& fr = j["frames"];
    if (!fr.is_array()) return Error{where + ".frames must be an array of byte offsets"};
    uint64_t last = 0;
    for (size_t k = 0; k < fr.size(); ++k) {
      const std::string at = where + ".frames[" + std::to_string(k) + "]";
      if (!fr[k].is_number_unsigned()) return Error{at + " must be a byte offset (>= 0)"};
      const uint64_t offset = fr[k].get<uint64_t>();
      if (offset < last || offset > s.stream.size())
        return Error{at + " = " + std::to_string(offset) +
                     " must not be below the offset before it nor beyond the stream's " +
                     std::to_string(s.stream.size()) + " bytes"};
      s.frame_starts.push_back(offset);
      last = offset;
    }
  }
  return s;
}

}  // namespace

Result<DclWorldStreams> read_dcl_world(const std::string& folder) {
  const std::string manifest_path = folder + "/world.json";
  Result<std::string> text = read_file_bytes(manifest_path);
  if (!text) return text.error();
  try {
    const json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Error{manifest_path + ": not valid JSON"};
    if (!j.is_object() || !j.contains("scenes") || !j["scenes"].is_array())
      return Error{manifest_path + ": expected {\"scenes\": [...]}"};
    DclWorldStreams world;
    world.source = folder;
    std::set<std::string> names;
    for (size_t i = 0; i < j["scenes"].size(); ++i) {
      const std::string where = manifest_path + ": scenes[" + std::to_string(i) + "]";
      Result<DclWorldScene> s = parse_manifest_scene(j["scenes"][i], where, folder);
      if (!s) return s.error();
      if (!names.insert(s->name).second)
        return Error{where + ".name '" + s->name + "' names another scene too"};
      world.scenes.push_back(std::move(*s));
    }
    return world;
  } catch (const std::exception& e) {  // std::bad_alloc, or a number of the wrong type
    return Error{manifest_path + ": " + e.what()};
  }
}

namespace {

// The close checked too: a full disk often shows only there, and a saved world must not be cut
// short silently.
Status write_bytes(const std::string& path, const void* data, size_t size) {
  return write_dump_file(path, [&](std::FILE* f) -> Status {
    if (std::fwrite(data, 1, size, f) != size)
      return Error{"cannot write " + path + ": " + std::strerror(errno)};
    return ok_status();
  });
}

}  // namespace

Status write_dcl_world(const std::string& folder, const DclWorldStreams& world) {
  json scenes = json::array();
  for (const DclWorldScene& s : world.scenes) {
    const std::string file = s.name + ".crdt";
    const std::string path = folder + "/" + file;
    if (Status st = write_bytes(path, s.stream.data(), s.stream.size()); !st) return st;
    json entry = {{"name", s.name}, {"parcel", {s.parcel.x, s.parcel.y}}, {"stream", file}};
    if (!s.frame_starts.empty()) entry["frames"] = s.frame_starts;
    if (s.load_frame) entry["load"] = s.load_frame;
    if (s.unload_frame) entry["unload"] = *s.unload_frame;
    scenes.push_back(std::move(entry));
  }
  const std::string manifest = json{{"scenes", std::move(scenes)}}.dump(1) + "\n";
  const std::string path = folder + "/world.json";
  return write_bytes(path, manifest.data(), manifest.size());
}

}  // namespace tprop
