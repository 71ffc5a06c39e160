#include "scene_json.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "id_map.h"
#include "json_syntax_error.h"

namespace tprop {
namespace {

using json = nlohmann::json;

// A scene of millions of entities with sloppy quaternions would otherwise bury the summary.
constexpr size_t kMaxQuaternionWarnings = 20;
constexpr double kUnitQuaternionTolerance = 1e-3;

// Builds the document from nlohmann's SAX events, and sees on the way what a plain DOM parse
// hides: where a syntax error is (as a byte offset), and a key that appears twice in one object
// (nlohmann keeps the last one without a word; a scene that says "Scale" twice is a mistake).
// nlohmann's parser callback could catch the duplicates too, but makes parsing quadratic in the
// number of values (3.11), so the DOM is built here.
class DocumentBuilder {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  explicit DocumentBuilder(json& root) : root_(root) {}

  // Why the parse stopped: a syntax error (malformed, at error_position, a 1-based byte offset)
  // or a duplicate key.
  bool malformed = false;
  size_t error_position = 0;
  std::string error;

  bool null() { return add(nullptr); }
  bool boolean(bool v) { return add(v); }
  bool number_integer(number_integer_t v) { return add(v); }
  bool number_unsigned(number_unsigned_t v) { return add(v); }
  bool number_float(number_float_t v, const string_t&) { return add(v); }
  bool string(string_t& v) { return add(std::move(v)); }
  bool binary(binary_t& v) { return add(std::move(v)); }

  bool start_object(std::size_t) {
    stack_.push_back(Frame{place(json::value_t::object), nullptr});
    return true;
  }
  bool key(string_t& k) {
    Frame& top = stack_.back();
    auto [it, inserted] = top.value->get_ref<json::object_t&>().try_emplace(std::move(k));
    if (!inserted) {
      error = "duplicate key \"" + it->first + "\" in " + path();
      return false;
    }
    top.key = &it->first;
    object_element_ = &it->second;
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    stack_.push_back(Frame{place(json::value_t::array), nullptr});
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }

  bool parse_error(std::size_t pos, const std::string& last_token,
                   const nlohmann::detail::exception& ex) {
    malformed = true;
    error_position = pos;
    // A number too large for a double is reported after the whole token was read: point at
    // its first character instead.
    if (ex.id == 406 && last_token.size() < pos) error_position = pos - last_token.size() + 1;
    error = ex.what();  // malformed_json_message() strips its prefix
    return false;
  }

 private:
  struct Frame {
    json* value;             // the object or array being filled
    const std::string* key;  // an object's current key (a node of its map, so stable)
  };

  // Where a new value goes: the root, the end of the current array, or the current key's slot.
  template <class V>
  json* place(V&& v) {
    if (stack_.empty()) {
      root_ = json(std::forward<V>(v));
      return &root_;
    }
    json& top = *stack_.back().value;
    if (top.is_array()) {
      top.get_ref<json::array_t&>().emplace_back(std::forward<V>(v));
      return &top.get_ref<json::array_t&>().back();
    }
    *object_element_ = json(std::forward<V>(v));
    return object_element_;
  }
  template <class V>
  bool add(V&& v) {
    place(std::forward<V>(v));
    return true;
  }

  // The place of the innermost object, "entities[3]": the path through every enclosing frame.
  std::string path() const {
    std::string p;
    for (size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (f.value->is_array()) p += "[" + std::to_string(f.value->size() - 1) + "]";
      else p += (p.empty() ? "" : ".") + *f.key;
    }
    return p.empty() ? "the top-level object" : p;
  }

  json& root_;
  std::vector<Frame> stack_;
  json* object_element_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Values.

// "an array of 2 values", "the string \"x\"": what the file holds where something else was due.
std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::string: {
      std::string s = v.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 40) + "...";
      return "the string \"" + s + "\"";
    }
    case json::value_t::array:
      return "an array of " + std::to_string(v.size()) + (v.size() == 1 ? " value" : " values");
    case json::value_t::object: return "an object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "the number " + v.dump();
    default: return v.type_name();
  }
}

// A JSON number as a float. JSON cannot spell inf or NaN, but it can spell a number no float
// holds (1e39): that is refused rather than turned into infinity. Values that round to the
// largest float are kept.
std::optional<float> as_float(const json& v) {
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  const double limit = double(std::numeric_limits<float>::max()) + std::ldexp(1.0, 103);
  if (!std::isfinite(d) || std::fabs(d) >= limit) return std::nullopt;
  const double clamped = std::clamp(d, -double(std::numeric_limits<float>::max()),
                                    double(std::numeric_limits<float>::max()));
  return static_cast<float>(clamped);
}

// Ids are JSON integers from 0 to 2^32 - 1 (nlohmann reads non-negative integers as unsigned).
std::optional<EntityId> as_id(const json& v) {
  if (!v.is_number_unsigned()) return std::nullopt;
  const uint64_t u = v.get<uint64_t>();
  if (u > std::numeric_limits<EntityId>::max()) return std::nullopt;
  return static_cast<EntityId>(u);
}

// Why a value is not a float, for the message: "got true", "1e+39 is too large for a float".
std::string not_a_float(const json& v) {
  if (!v.is_number()) return "got " + describe(v);
  return v.dump() + " is too large for a float";
}

// Reads an array of exactly n finite floats into out; on failure says what is wrong.
std::optional<std::string> read_floats(const json& v, size_t n, float* out) {
  if (!v.is_array() || v.size() != n) return "got " + describe(v);
  for (size_t i = 0; i < n; ++i) {
    const std::optional<float> f = as_float(v[i]);
    if (!f) return "element " + std::to_string(i) + ": " + not_a_float(v[i]);
    out[i] = *f;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Entities.

class SceneReader {
 public:
  explicit SceneReader(Scene& scene) : scene_(scene) {}

  Status read_entities(const json& entities) {
    scene_.store.reserve(entities.size());
    first_index_.reserve(entities.size());
    for (size_t i = 0; i < entities.size(); ++i) {
      Status s = read_entity(entities[i], i);
      if (!s) return s;
    }
    if (extra_quaternion_warnings_ > 0) {
      scene_.warnings.push_back(std::to_string(extra_quaternion_warnings_) +
                                " more quaternions are not of unit length (used as given)");
    }
    return ok_status();
  }

 private:
  std::string where(size_t index, std::optional<EntityId> id) const {
    std::string w = scene_.source + ": ";
    if (id) w += "entity " + std::to_string(*id) + " (entities[" + std::to_string(index) + "])";
    else w += "entities[" + std::to_string(index) + "]";
    return w;
  }

  Error fail(size_t index, std::optional<EntityId> id, const std::string& what) const {
    return Error{where(index, id) + ": " + what};
  }

  Status read_entity(const json& e, size_t index) {
    if (!e.is_object()) return fail(index, {}, "expected an entity object, got " + describe(e));
    const auto id_it = e.find("id");
    if (id_it == e.end()) return fail(index, {}, "missing \"id\"");
    const std::optional<EntityId> id = as_id(*id_it);
    if (!id) {
      return fail(index, {}, "\"id\" must be an integer from 0 to 4294967295, got " +
                                 describe(*id_it));
    }
    if (!scene_.store.create(*id)) {
      return fail(index, id, "duplicate id " + std::to_string(*id) + ", first used by entities[" +
                                 std::to_string(first_index_.find(*id)) + "]");
    }
    first_index_.set(*id, static_cast<uint32_t>(index));

    for (const auto& [key, value] : e.items()) {
      Status s = read_key(*id, index, key, value);
      if (!s) return s;
    }
    return ok_status();
  }

  Status read_key(EntityId id, size_t index, const std::string& key, const json& v) {
    EntityStore& store = scene_.store;
    if (key == "id") return ok_status();
    if (key == "name") {
      if (!v.is_string()) return fail(index, id, "\"name\" must be a string, got " + describe(v));
      scene_.names[id] = v.get<std::string>();
      return ok_status();
    }
    if (key == "parent") {
      const std::optional<EntityId> parent = as_id(v);
      if (!parent) {
        return fail(index, id, "\"parent\" must be an entity id (an integer from 0 to "
                               "4294967295), got " + describe(v));
      }
      store.set_parent(id, *parent);
      return ok_status();
    }
    if (key == "static" || key == "writeGroupOverride") {
      if (!v.is_boolean()) {
        return fail(index, id, "\"" + key + "\" must be true or false, got " + describe(v));
      }
      if (v.get<bool>()) {
        store.add(id, key == "static" ? Component::Static : Component::WriteGroupOverride);
      }
      return ok_status();
    }

    const std::optional<Component> c = component_from_name(key);
    if (!c) return fail(index, id, unknown_key_message(key));
    const std::string name(component_name(*c));
    switch (*c) {
      case Component::Parent:
      case Component::Static:
      case Component::WriteGroupOverride:
        return fail(index, id, "unknown key \"" + key + "\" (the scene format spells it \"" +
                                   lower_first(key) + "\")");
      case Component::Scale: {
        const std::optional<float> s = as_float(v);
        if (!s) return fail(index, id, "Scale must be a number: " + not_a_float(v));
        store.set_scale(id, *s);
        return ok_status();
      }
      case Component::Rotation:
      case Component::PostRotation: {
        float q[4];
        if (const auto problem = read_floats(v, 4, q)) {
          return fail(index, id,
                      name + " must be a quaternion [x, y, z, w] of 4 numbers: " + *problem);
        }
        const quat value = make_quat(q[0], q[1], q[2], q[3]);
        if (*c == Component::Rotation) store.set_rotation(id, value);
        else store.set_post_rotation(id, value);
        check_unit(index, id, name, q);
        return ok_status();
      }
      case Component::CompositeRotation:
      case Component::CompositeScale:
      case Component::ParentScaleInverse:
      case Component::LocalToParent:
      case Component::LocalToWorld: {
        const auto m = static_cast<MatrixComponent>(static_cast<int>(*c) -
                                                    static_cast<int>(Component::CompositeRotation));
        if (v.is_null()) {
          store.add(id, *c);
          return ok_status();
        }
        float f[16];
        if (const auto problem = read_floats(v, 16, f)) {
          return fail(index, id, name + " must be null or 16 numbers (column-major): " + *problem);
        }
        float4x4 value;
        for (int col = 0; col < 4; ++col)
          for (int row = 0; row < 4; ++row) value[col][row] = f[col * 4 + row];
        store.set_matrix(id, m, value);
        return ok_status();
      }
      default: break;
    }

    // Every remaining component is a float3.
    float f[3];
    if (const auto problem = read_floats(v, 3, f)) {
      return fail(index, id, name + " must be [x, y, z], 3 numbers: " + *problem);
    }
    const float3 value(f[0], f[1], f[2]);
    const ComponentMask b = bit(*c);
    const int i = static_cast<int>(*c);
    if (*c == Component::Translation) {
      store.set_translation(id, value);
    } else if (*c == Component::NonUniformScale) {
      store.set_non_uniform_scale(id, value);
    } else if (b & kRotationEulerMask) {
      store.set_rotation_euler(id, static_cast<EulerOrder>(i - int(Component::RotationEulerXYZ)),
                               value);
    } else if (b & kPostRotationEulerMask) {
      store.set_post_rotation_euler(
          id, static_cast<EulerOrder>(i - int(Component::PostRotationEulerXYZ)), value);
    } else {
      assert(i >= int(Component::RotationPivot) && i <= int(Component::ScalePivotTranslation));
      store.set_pivot(id, static_cast<PivotComponent>(i - int(Component::RotationPivot)), value);
    }
    return ok_status();
  }

  static std::string lower_first(std::string s) {
    if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
    return s;
  }

  // "unknown key "translation" (did you mean "Translation"?)": case slips are the common typo.
  static std::string unknown_key_message(const std::string& key) {
    std::string message = "unknown key \"" + key + "\"";
    auto same_ignoring_case = [&](std::string_view known) {
      return known.size() == key.size() &&
             std::equal(known.begin(), known.end(), key.begin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) ==
                      std::tolower(static_cast<unsigned char>(b));
             });
    };
    auto hint = [&](std::string_view known) {
      return message + " (did you mean \"" + std::string(known) + "\"?)";
    };
    // The derived components of the spec: a scene states Parent only.
    if (same_ignoring_case("Child")) {
      return message + " (Child lists are derived from Parent: give each child a \"parent\")";
    }
    if (same_ignoring_case("PreviousParent")) {
      return message + " (PreviousParent is derived: the Parent as of the last frame)";
    }
    for (std::string_view known : {"id", "name", "parent", "static", "writeGroupOverride"}) {
      if (same_ignoring_case(known)) return hint(known);
    }
    for (int c = 0; c < kComponentCount; ++c) {
      const std::string_view known = component_name(static_cast<Component>(c));
      if (same_ignoring_case(known)) return hint(known);
    }
    return message;
  }

  // NOTES.md: quaternions are used as given, never normalized; a loader only warns.
  void check_unit(size_t index, EntityId id, const std::string& name, const float* q) {
    const double norm = std::sqrt(double(q[0]) * q[0] + double(q[1]) * q[1] +
                                  double(q[2]) * q[2] + double(q[3]) * q[3]);
    if (std::fabs(norm - 1.0) <= kUnitQuaternionTolerance) return;
    if (quaternion_warnings_ == kMaxQuaternionWarnings) {
      ++extra_quaternion_warnings_;
      return;
    }
    ++quaternion_warnings_;
    char length[32];
    std::snprintf(length, sizeof length, "%.6g", norm);
    scene_.warnings.push_back(where(index, id) + ": " + name + " has length " + length +
                              ", not 1 (used as given, not normalized)");
  }

  Scene& scene_;
  IdMap first_index_;  // id -> index in "entities", for duplicate-id messages
  size_t quaternion_warnings_ = 0;
  size_t extra_quaternion_warnings_ = 0;
};

Result<Scene> read_document(std::string_view text, std::string source) {
  json doc;
  DocumentBuilder builder(doc);
  if (!json::sax_parse(text.data(), text.data() + text.size(), &builder)) {
    if (!builder.malformed) return Error{source + ": " + builder.error};
    return Error{malformed_json_message(source, text, builder.error_position, builder.error)};
  }

  if (!doc.is_object()) {
    return Error{source + ": expected a JSON object {\"entities\": [...]} at the top level, got " +
                 describe(doc)};
  }
  for (const auto& [key, value] : doc.items()) {
    if (key == "entities") continue;
    if (key == "description" && value.is_string()) continue;
    if (key == "description") {
      return Error{source + ": \"description\" must be a string, got " + describe(value)};
    }
    // A glTF text file reaches this loader when its name does not end in .gltf (a pipe).
    const bool gltf = key == "asset" || key == "nodes" || key == "scenes";
    return Error{source + ": unknown top-level key \"" + key +
                 "\" (expected \"entities\" and optionally \"description\")" +
                 (gltf ? "; glTF text is read from a file whose name ends in .gltf" : "")};
  }
  const auto entities = doc.find("entities");
  if (entities == doc.end()) return Error{source + ": missing the \"entities\" array"};
  if (!entities->is_array()) {
    return Error{source + ": \"entities\" must be an array, got " + describe(*entities)};
  }

  Scene scene;
  scene.source = std::move(source);
  SceneReader reader(scene);
  Status s = reader.read_entities(*entities);
  if (!s) return s.error();
  return scene;
}

}  // namespace

Result<Scene> parse_scene_json(std::string_view text, std::string source) {
  // nlohmann throws on allocation failure and on a few internal conversions; nothing may cross
  // tprop's API as an exception.
  try {
    const std::string name = source;
    try {
      return read_document(text, std::move(source));
    } catch (const std::exception& e) {
      return Error{name + ": " + e.what()};
    }
  } catch (const std::bad_alloc&) {  // the name's copy, or the message
    return out_of_memory_error("out of host memory reading a JSON scene");
  }
}

}  // namespace tprop
