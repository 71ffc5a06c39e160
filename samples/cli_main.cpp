// The `tprop` command: dispatches to a subcommand. Today there is one, `run`; the command is
// laid out so that others (a benchmark, a diff of two dumps) slot in beside it.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli_run.h"

namespace {

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: tprop <command> [options]\n"
               "\n"
               "Computes LocalToWorld matrices for entity hierarchies (Unity DOTS transform\n"
               "rules, Decentraland transforms) on the CPU or the GPU.\n"
               "\n"
               "commands:\n"
               "  run      load a scene, compute every entity's LocalToWorld, print a summary\n"
               "\n"
               "options:\n"
               "  -h, --help   print this help (`tprop run --help` for the command's own)\n"
               "\n"
               "exit status: 0 ok, 1 bad input or runtime failure, 2 usage error\n");
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
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "run") return run_command(args);
  std::fprintf(stderr, "tprop: unknown command '%s'\n\n", command.c_str());
  print_usage(stderr);
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  // The library reports errors as values; what can still escape here is std::bad_alloc.
  try {
    return dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tprop: %s\n", e.what());
    return tprop::cli::kExitFailure;
  }
}
