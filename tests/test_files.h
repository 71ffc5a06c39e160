// Files for tests that go through the file system (the scene loaders, the dump, the `tprop`
// command): temporary paths unique to the test process and removed when it exits, so that
// concurrent suites in several build trees never share a file; whole-file reads and writes; and
// EXPECT_CONTAINS for the messages that name them.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace tprop::test {

// TempDir()/tprop_test_PID_NAME; every path handed out is removed when the test binary exits.
inline std::string temp_path(const std::string& name) {
  struct Cleanup {
    std::set<std::string> paths;
    ~Cleanup() {
      for (const std::string& p : paths) std::remove(p.c_str());
    }
  };
  static Cleanup cleanup;
  const std::string path =
      ::testing::TempDir() + "tprop_test_" + std::to_string(getpid()) + "_" + name;
  cleanup.paths.insert(path);
  return path;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace tprop::test

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "in: " << (haystack)
