// The `tprop` command: dispatches to a subcommand (run, render, devices); others (a benchmark,
// a diff of two dumps) slot in beside them.
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli_backend.h"
#include "cli_render.h"
#include "cli_run.h"

#ifndef TPROP_VERSION
#error "TPROP_VERSION (the project version, from CMake) must be defined by the build"
#endif

namespace {

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: tprop <command> [options]\n"
               "\n"
               "Computes LocalToWorld matrices for entity hierarchies (Unity DOTS transform\n"
               "rules, Decentraland transforms) on the CPU or the GPU.\n"
               "\n"
               "commands:\n"
               "  run      load a scene, compute every entity's LocalToWorld (GPU or CPU),\n"
               "           print a summary; --validate compares the GPU with the CPU reference\n"
               "  render   propagate a scene on the GPU and draw it to a PNG\n"
               "  devices  list the Vulkan devices (for --device or TPROP_DEVICE)\n"
               "\n"
               "options:\n"
               "  -h, --help   print this help (`tprop COMMAND --help` for a command's own)\n"
               "  --version    print the version (tprop %s)\n"
               "\n"
               "exit status: 0 ok, 1 bad input or runtime failure, 2 usage error\n",
               TPROP_VERSION);
}

int dispatch(int argc, char** argv) {
  using namespace tprop::cli;
  if (argc < 2) {
    print_usage(stderr);
    return kExitUsage;
  }
  const std::string command = argv[1];
  if (command == "-h" || command == "--help" || command == "help") {
    print_usage(stdout);
    return kExitOk;
  }
  if (command == "--version") {
    std::printf("tprop %s\n", TPROP_VERSION);
    return kExitOk;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "run") return run_command(args);
  if (command == "render") return render_command(args);
  if (command == "devices") return devices_command(args);
  std::fprintf(stderr, "tprop: unknown command '%s'\n\n", command.c_str());
  print_usage(stderr);
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  // Past a file size limit (ulimit -f) a write then fails with EFBIG, which the dump and the PNG
  // writer report with exit status 1, instead of SIGXFSZ killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  // The library reports errors as values; what can still escape here is std::bad_alloc.
  try {
    return dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tprop: %s\n", e.what());
    return tprop::cli::kExitFailure;
  }
}
