// `tprop render` and the progress line, run as a user would.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "cli_test_support.h"

namespace {

using namespace tprop::test::cli;

uint32_t big_endian(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

TEST(CliRender, WritesAPngOfTheRequestedSize) {
  REQUIRE_DEVICE_OR_SKIP();
  const std::string png = temp_path("render.png");
  std::remove(png.c_str());
  const Outcome o = run_tprop("render gen:forest:200 -o " + quoted(png) + " --size 64x48");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string bytes = read_text(png);
  // The PNG signature, then the IHDR chunk: length (4), "IHDR", width, height (big-endian).
  ASSERT_GE(bytes.size(), 24u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(bytes.substr(12, 4), "IHDR");
  EXPECT_EQ(big_endian(bytes, 16), 64u);
  EXPECT_EQ(big_endian(bytes, 20), 48u);
  EXPECT_CONTAINS(o.out, "rendered ");
}

TEST(CliRender, SizeOutOfRangeFailsWithOne) {
  const Outcome zero = run_tprop("render -o " + quoted(temp_path("zero.png")) + " --size 0x0");
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_CONTAINS(zero.err, "image size 0x0 is out of range");
  const Outcome huge = run_tprop("render -o " + quoted(temp_path("huge.png")) + " --size 20000x10");
  EXPECT_EQ(huge.exit_code, 1);
}

TEST(CliRender, UnwritableOutputFailsWithOneNamingThePath) {
  const Outcome o = run_tprop("render -o /nonexistent-dir/out.png --size 8x8");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "/nonexistent-dir/out.png");
}

// The PNG's writes are checked: a full device or a file size limit is exit 1 with the reason,
// never "rendered".
TEST(CliRender, AFailedPngWriteFailsWithOneAndSaysWhy) {
  REQUIRE_DEVICE_OR_SKIP();
  const Outcome full = run_tprop("render gen:forest:50 -o /dev/full --size 64x48");
  EXPECT_EQ(full.exit_code, 1) << full.err;
  EXPECT_CONTAINS(full.err, "cannot write PNG '/dev/full': No space left on device");
  EXPECT_EQ(full.out.find("rendered"), std::string::npos) << full.out;
  // 1 KiB (ulimit -f counts 512-byte blocks): room for the messages, not for the image.
  const std::string png = temp_path("limited.png");
  const Outcome limited =
      run_tprop("render gen:forest:2000 -o " + quoted(png) + " --size 512x512", "ulimit -f 2;");
  EXPECT_EQ(limited.exit_code, 1) << limited.err;
  EXPECT_CONTAINS(limited.err, "File too large");
  EXPECT_EQ(limited.out.find("rendered"), std::string::npos) << limited.out;
}

TEST(CliRender, OutputThatIsAFolderFailsBeforeRendering) {
  // Checked before the scene is loaded or a device opened, so no device is needed.
  const std::string folder = ::testing::TempDir();
  const Outcome o = run_tprop("render no-such-scene.json -o " + quoted(folder) + ".");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_CONTAINS(o.err, "it is a folder");
  EXPECT_EQ(o.err.find("no-such-scene.json"), std::string::npos) << o.err;
}

TEST(CliRender, UsageErrorsExitWithTwo) {
  EXPECT_EQ(run_tprop("render").exit_code, 2);  // no -o
  EXPECT_EQ(run_tprop("render -o x.png --size big").exit_code, 2);
  EXPECT_EQ(run_tprop("render -o x.png --frob").exit_code, 2);
  EXPECT_EQ(run_tprop("render a.json b.json -o x.png").exit_code, 2);
  EXPECT_EQ(run_tprop("render --help").exit_code, 0);
}

TEST(CliProgress, PipedStderrGetsNoProgressOutput) {
  // The ticker would draw from its first tick (100 ms) on a terminal with no delay; a chain of
  // 200,000 takes longer than that to generate and evaluate, yet stderr is a file here.
  const Outcome o = run_tprop("run gen:chain:200000 --backend cpu", "TPROP_PROGRESS_DELAY_MS=0");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(o.err.empty()) << o.err;
  EXPECT_EQ(o.out.find('\r'), std::string::npos);
}

TEST(CliProgress, ATerminalGetsTheProgressLineAndItIsErased) {
  // The counterpart that shows the test above can fail: script(1) gives tprop a terminal.
  if (std::system("script --version >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "script(1) from util-linux is not installed";
  const std::string typescript = temp_path("typescript.txt");
  // Loading must outlast the ticker's first tick (100 ms): 2,000,000 entities take about 250 ms
  // here (500,000 took 60 ms once ids stopped being hashed, and the line was never drawn).
  const std::string inner = quoted(TPROP_CLI_PATH) + " run gen:chain:2000000 --backend cpu";
  const std::string command = "TPROP_PROGRESS_DELAY_MS=0 script -qec " + quoted(inner) + " " +
                              quoted(typescript) + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::string text = read_text(typescript);
  EXPECT_CONTAINS(text, "\r\033[Kloading gen:chain:2000000  ");
  EXPECT_CONTAINS(text, "\r\033[K");
}

}  // namespace
