#include "cli_args.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

#include "byte_count.h"
#include "output_layout_arg.h"

namespace tprop::cli {
namespace {

// The value of --seed (nullopt: the option came last, without one).
Result<uint64_t> parse_seed(const std::optional<std::string>& value) {
  if (!value) return Error{"--seed needs a value"};
  const std::string& v = *value;
  uint64_t seed = 0;
  const char* end = v.data() + v.size();
  const auto [ptr, ec] = std::from_chars(v.data(), end, seed);
  if (v.empty() || ec != std::errc() || ptr != end)
    return Error{"--seed must be an integer from 0 to 18446744073709551615, got '" + v + "'"};
  return seed;
}

// Walks the arguments: options as "--name VALUE" or "--name=VALUE", "--" ends the options, and
// everything else is a positional argument. `on_option` returns false for an unknown option.
class ArgWalker {
 public:
  explicit ArgWalker(const std::vector<std::string>& args) : args_(args) {}

  bool next() {
    if (++i_ >= args_.size()) return false;
    const std::string& a = args_[i_];
    if (!options_done_ && a == "--") {
      options_done_ = true;
      return next();
    }
    return true;
  }
  const std::string& arg() const { return args_[i_]; }
  bool is_option() const { return !options_done_ && arg().size() > 1 && arg()[0] == '-'; }
  // Whether the current argument is `name` (alone or as name=VALUE).
  bool is(const std::string& name) const {
    return is_option() && (arg() == name || arg().rfind(name + "=", 0) == 0);
  }
  // The value of the option `name`: the text after '=' or the next argument.
  std::optional<std::string> value(const std::string& name) {
    if (arg() == name) {
      if (i_ + 1 == args_.size()) return std::nullopt;
      return args_[++i_];
    }
    return arg().substr(name.size() + 1);
  }

 private:
  const std::vector<std::string>& args_;
  size_t i_ = size_t(-1);
  bool options_done_ = false;
};

Status take_scene(std::string& scene, const std::string& a) {
  if (a.empty()) return Error{"the SCENE argument is empty"};
  if (!scene.empty()) return Error{"more than one SCENE given ('" + scene + "' and '" + a + "')"};
  scene = a;
  return ok_status();
}

}  // namespace

std::optional<int> usage_or_help(const char* command, const Error* usage_error, bool help,
                                 const char* usage) {
  if (usage_error) {
    std::fprintf(stderr, "tprop %s: %s\n\n%s", command, usage_error->message.c_str(), usage);
    return kExitUsage;
  }
  if (help) {
    std::fputs(usage, stdout);
    return kExitOk;
  }
  return std::nullopt;
}

Result<std::pair<uint32_t, uint32_t>> parse_size(const std::string& text) {
  const size_t x = text.find_first_of("xX");
  auto number = [](const std::string& s) -> std::optional<uint32_t> {
    uint32_t n = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
    return n;
  };
  if (x != std::string::npos) {
    const std::optional<uint32_t> w = number(text.substr(0, x));
    const std::optional<uint32_t> h = number(text.substr(x + 1));
    if (w && h) return std::pair{*w, *h};
  }
  return Error{"--size must be WIDTHxHEIGHT, e.g. 960x540, got '" + text + "'"};
}

Result<RunOptions> parse_run_args(const std::vector<std::string>& args) {
  RunOptions o;
  ArgWalker w(args);
  while (w.next()) {
    if (w.is("-h") || w.is("--help")) {
      o.help = true;
    } else if (w.is("--backend")) {
      const std::optional<std::string> v = w.value("--backend");
      if (!v) return Error{"--backend needs a value: cpu, gpu or auto"};
      if (*v == "cpu") o.backend = Backend::Cpu;
      else if (*v == "gpu") o.backend = Backend::Gpu;
      else if (*v == "auto") o.backend = Backend::Auto;
      else return Error{"unknown backend '" + *v + "' (expected cpu, gpu or auto)"};
    } else if (w.is("--device")) {
      const std::optional<std::string> v = w.value("--device");
      if (!v || v->empty()) return Error{"--device needs a device name or index (tprop devices)"};
      o.device = *v;
    } else if (w.is("--dump")) {
      const std::optional<std::string> v = w.value("--dump");
      if (!v || v->empty()) return Error{"--dump needs a file name"};
      o.dump = *v;
    } else if (w.is("--seed")) {
      Result<uint64_t> seed = parse_seed(w.value("--seed"));
      if (!seed) return seed.error();
      o.seed = *seed;
    } else if (w.is("--frames")) {
      const std::optional<std::string> v = w.value("--frames");
      uint32_t n = 0;
      const char* end = v ? v->data() + v->size() : nullptr;
      if (!v || v->empty() || std::from_chars(v->data(), end, n).ptr != end || n == 0 ||
          n > 1'000'000)
        return Error{"--frames needs a number of frames from 1 to 1000000"};
      o.frames = n;
    } else if (w.is("--save-world")) {
      const std::optional<std::string> v = w.value("--save-world");
      if (!v || v->empty()) return Error{"--save-world needs a folder"};
      o.save_world = *v;
    } else if (w.is("--max-buffer-bytes")) {
      Result<uint64_t> bytes = parse_buffer_bytes(w.value("--max-buffer-bytes"));
      if (!bytes) return bytes.error();
      o.max_buffer_bytes = *bytes;
    } else if (w.is("--output-layout")) {
      Result<OutputLayout> layout = parse_output_layout(w.value("--output-layout"));
      if (!layout) return layout.error();
      o.output_layout = *layout;
    } else if (w.is("--slot-order")) {
      const std::optional<std::string> v = w.value("--slot-order");
      if (v == "auto") {
        o.slot_order = SlotOrder::Auto;
      } else if (v == "restore") {
        o.slot_order = SlotOrder::Restore;
      } else if (v == "keep") {
        o.slot_order = SlotOrder::Keep;
      } else {
        return Error{"--slot-order needs auto, restore or keep" +
                     (v ? ", not '" + *v + "'" : std::string())};
      }
    } else if (w.arg() == "--validate" && w.is_option()) {
      o.validate = true;
    } else if (w.arg() == "--json" && w.is_option()) {
      o.json = true;
    } else if (w.is_option()) {
      return Error{"unknown option '" + w.arg() + "'"};
    } else if (Status s = take_scene(o.scene, w.arg()); !s) {
      return s.error();
    }
  }
  return o;
}

Result<RenderCommandOptions> parse_render_args(const std::vector<std::string>& args) {
  RenderCommandOptions o;
  ArgWalker w(args);
  bool have_output = false;
  while (w.next()) {
    if (w.is("-h") || w.is("--help")) {
      o.help = true;
    } else if (w.is("--output-layout")) {
      Result<OutputLayout> layout = parse_output_layout(w.value("--output-layout"));
      if (!layout) return layout.error();
      o.output_layout = *layout;
    } else if (w.is("-o") || w.is("--output")) {
      const std::string name = w.arg().rfind("--output", 0) == 0 ? "--output" : "-o";
      const std::optional<std::string> v = w.value(name);
      if (!v || v->empty()) return Error{"-o needs an output file name (a .png)"};
      o.output = *v;
      have_output = true;
    } else if (w.is("--size")) {
      const std::optional<std::string> v = w.value("--size");
      if (!v) return Error{"--size needs WIDTHxHEIGHT, e.g. 960x540"};
      auto size = parse_size(*v);
      if (!size) return size.error();
      o.width = size->first;
      o.height = size->second;
    } else if (w.is("--seed")) {
      Result<uint64_t> seed = parse_seed(w.value("--seed"));
      if (!seed) return seed.error();
      o.seed = *seed;
    } else if (w.is("--cube-size")) {
      const std::optional<std::string> v = w.value("--cube-size");
      float size = 0.0f;
      const char* end = v ? v->data() + v->size() : nullptr;
      if (!v || v->empty() || std::from_chars(v->data(), end, size).ptr != end ||
          !std::isfinite(size) || size <= 0.0f)
        return Error{"--cube-size needs a positive number (half the cube's edge in local units)"};
      o.cube_size = size;
    } else if (w.is("--max-buffer-bytes")) {
      Result<uint64_t> bytes = parse_buffer_bytes(w.value("--max-buffer-bytes"));
      if (!bytes) return bytes.error();
      o.max_buffer_bytes = *bytes;
    } else if (w.is_option()) {
      return Error{"unknown option '" + w.arg() + "'"};
    } else if (Status s = take_scene(o.scene, w.arg()); !s) {
      return s.error();
    }
  }
  if (!have_output && !o.help) return Error{"-o FILE is required (where to write the PNG)"};
  return o;
}

}  // namespace tprop::cli
