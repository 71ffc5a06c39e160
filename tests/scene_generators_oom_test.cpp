// Generating scenes out of host memory (oom_tests: alloc_failure.cpp fails the allocation asked
// for): each allocation of a generation made to fail in turn, and then every allocation from one
// on, gives an error, never an exception. (JSON and glTF scenes are not tried: nlohmann::json,
// which both parse with, allocates while destroying a document, inside a noexcept destructor,
// so a failure there ends the process whatever tprop catches.)
#include <gtest/gtest.h>

#include <climits>

#include "alloc_failure.h"
#include "scene_generators.h"

namespace tprop {
namespace {

// `load` made to fail at each of its allocations in turn, and then at every one from there on:
// never an exception, and an error wherever the failure is not one that the store absorbs (its
// value log, given up for the frame: EntityStore).
template <class Load>
void fails_with_errors(const char* what, Load&& load) {
  alloc_failure::arm(LONG_MAX, false);
  const bool ok = load().ok();
  const long total = alloc_failure::count();
  alloc_failure::disarm();
  ASSERT_TRUE(ok) << what;
  ASSERT_GT(total, 0) << what;
  long failures = 0;
  for (const bool every_later : {false, true}) {
    for (long k = 0; k < total; ++k) {
      SCOPED_TRACE(testing::Message() << what << ", allocation " << k
                                      << (every_later ? " and every later one" : ""));
      alloc_failure::arm(k, every_later);
      bool threw = false, failed = false;
      try {
        failed = !load().ok();
      } catch (...) {
        threw = true;
      }
      alloc_failure::disarm();
      EXPECT_FALSE(threw);
      failures += failed;
      // Every allocation from here on fails: nothing can be absorbed far.
      if (every_later && k == 0) {
        EXPECT_TRUE(failed);
      }
    }
  }
  EXPECT_GE(failures, total) << what << ": most failures are errors";
}

TEST(SceneGeneratorsOutOfMemory, AGeneratedSceneThatCannotBeMadeIsAnError) {
  fails_with_errors("generate_scene", [] { return generate_scene("gen:forest:300:4", 7); });
}

}  // namespace
}  // namespace tprop
