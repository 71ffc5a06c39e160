// Result misuse is a programming error that must stop the program with a message naming the
// misuse and the error, in every build type, and never become an exception
// (std::bad_variant_access) crossing tprop's API.
#include "result.h"

#include <string>

#include <gtest/gtest.h>

namespace tprop {
namespace {

Result<int> failing() { return Error{"scene.json:3:12: malformed JSON"}; }

TEST(ResultDeathTest, UsingTheValueOfAnErrorStopsWithTheErrorMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Result<int> r = failing();
        std::printf("%d\n", *r);
      },
      "value of an error Result was used.*scene.json:3:12: malformed JSON");
  EXPECT_DEATH(
      {
        Result<std::string> r = Error{"no Vulkan device"};
        std::printf("%zu\n", r->size());
      },
      "value of an error Result.*no Vulkan device");
  EXPECT_DEATH(
      {
        Status s = Error{"disk full"};
        std::move(s).value();
      },
      "value of an error Result.*disk full");
}

TEST(ResultDeathTest, AskingAGoodResultForItsErrorStops) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        const Result<int> r = 5;
        std::printf("%s\n", r.error().message.c_str());
      },
      "error\\(\\) called on a Result that holds a value");
}

TEST(Result, AGoodResultGivesItsValueAndAnErrorItsMessage) {
  Result<std::string> good = std::string("abc");
  ASSERT_TRUE(good);
  EXPECT_EQ(good->size(), 3u);
  EXPECT_EQ(*good, "abc");
  EXPECT_EQ(std::move(good).value(), "abc");
  const Result<int> bad = failing();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "scene.json:3:12: malformed JSON");
}

}  // namespace
}  // namespace tprop
