// Shared by the cli_tests and bench_tests binaries: runs the built `tprop` binary (or
// tprop_bench) as a user would, capturing its exit code, stdout and stderr (a file, so never a
// terminal), with temporary files per process.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "test_files.h"

#ifndef TPROP_CLI_PATH
#error "TPROP_CLI_PATH (the built tprop binary) must be defined by the build"
#endif

namespace tprop::test::cli {

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// The temporary files of test_files.h, unique per process and removed at exit.
using ::tprop::test::read_text;
using ::tprop::test::temp_path;
using ::tprop::test::write_file;

// Single quotes for the shell; the paths here come from TempDir and the build, but be safe.
inline std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `[ENV] PROGRAM ARGS` with stdout captured through the pipe and stderr through a file.
// `env` is a shell prefix such as "TPROP_DEVICE=no-such-device".
inline Outcome run_program(const std::string& program, const std::string& args,
                           const std::string& env = "") {
  const std::string err_path = temp_path("stderr.txt");
  const std::string command =
      env + (env.empty() ? "" : " ") + quoted(program) + " " + args + " 2>" + quoted(err_path);
  Outcome o;
  std::FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return o;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) o.out.append(buffer, n);
  const int status = pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.err = read_text(err_path);
  return o;
}

// The built `tprop` command.
inline Outcome run_tprop(const std::string& args, const std::string& env = "") {
  return run_program(TPROP_CLI_PATH, args, env);
}

inline bool gpu_required() {
  const char* v = std::getenv("TPROP_REQUIRE_GPU");
  return v && std::string(v) == "1";
}

// Whether `tprop devices` finds a Vulkan device (asked once per test binary).
inline bool have_device() {
  static const bool have = run_tprop("devices").exit_code == 0;
  return have;
}

}  // namespace tprop::test::cli

// In a test that needs a Vulkan device: skip without one, or fail when TPROP_REQUIRE_GPU=1 (CI).
#define REQUIRE_DEVICE_OR_SKIP()                                                         \
  do {                                                                                   \
    if (!::tprop::test::cli::have_device()) {                                            \
      if (::tprop::test::cli::gpu_required())                                            \
        FAIL() << "TPROP_REQUIRE_GPU=1 but `tprop devices` finds no Vulkan device";      \
      GTEST_SKIP() << "no Vulkan device (`tprop devices` fails); set TPROP_REQUIRE_GPU=1 " \
                      "to make this a failure";                                          \
    }                                                                                    \
  } while (0)
