// Propagator::update() out of host memory (its own binary, gpu_oom_tests: alloc_failure.cpp
// replaces the global operator new with one that fails on demand). Each allocation of a frame's
// update() is made to fail in turn: update() returns an error naming the memory instead of
// throwing, and the next frame matches the CPU reference; so does read_back(), and stage_times()
// answers with an error, not an exception. record() and run_staged() allocate nothing at all.
#include <gtest/gtest.h>

#include <climits>
#include <optional>
#include <string>

#include "alloc_failure.h"
#include "gpu_test_support.h"

namespace tprop::test {
namespace {

// Without the validation layer, which allocates in every Vulkan call: a failure made there
// would be the layer's, not tprop's. (lavapipe's own calls allocate with malloc, and the
// pipeline variants, whose compiler does not, are made in the warm-up frames.)
class GpuOutOfMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<VulkanContext> made = VulkanContext::create_headless({});
    if (!made) {
      if (gpu_required())
        FAIL() << "TPROP_REQUIRE_GPU=1 but no Vulkan device: " << made.error().message;
      GTEST_SKIP() << "no usable Vulkan device (" << made.error().message << ")";
    }
    ctx_.emplace(std::move(*made));
  }
  std::optional<VulkanContext> ctx_;
};

TEST_F(GpuOutOfMemory, AnUpdateOutOfHostMemoryFailsAndTheNextFrameMatchesTheReference) {
  VulkanContext& ctx = *ctx_;
  EntityStore store;
  ValueSource v(17);
  build_random_scene(store, 600, 12, v);
  EntityId next = 600;
  Propagator gpu = make_propagator(ctx);
  CpuReference cpu;
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
  // Warm: the pipeline variants of such frames compiled, the buffers grown.
  for (int f = 0; f < 4; ++f) {
    next = mixed_edit_frame(store, next, v);
    ASSERT_LE(frame_and_compare(gpu, cpu, store, "warm-up"), 1.0);
  }

  uint32_t failed = 0, structural = 0, beyond = 0;
  long allocations = 0;
  for (long k = 0; k < 2000 && beyond < 8; ++k) {
    // Spawns, despawns, re-parents, cycles, values, Static toggles: the order, the packing and
    // the plan all allocate.
    next = mixed_edit_frame(store, next, v);
    alloc_failure::arm(k, false);
    const Status st = gpu.update(store);
    allocations = alloc_failure::count();
    alloc_failure::disarm();
    const std::string what = "after allocation " + std::to_string(k) + " failed";
    if (!st) {
      ++failed;
      structural += gpu.last_frame().hierarchy_changed;
      EXPECT_NE(st.error().message.find("out of host memory"), std::string::npos)
          << what << ": " << st.error().message;
    }
    // Failed or not (an update never recorded is packed again), the next frame is whole.
    ASSERT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
    // Frames differ in how much they allocate: done once eight in a row had no allocation k.
    beyond = st && allocations <= k ? beyond + 1 : 0;
  }
  EXPECT_EQ(beyond, 8u) << "every allocation of such frames tried";
  EXPECT_GE(failed, 40u) << "allocations of an update() made to fail";
  EXPECT_GE(structural, 1u) << "a failure with the order's edits made";

  // Reading back: its matrices' array is the first allocation.
  alloc_failure::arm(0, false);
  const Result<std::vector<float4x4>> none = gpu.read_back();
  alloc_failure::disarm();
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("out of host memory reading back"), std::string::npos)
      << none.error().message;
  const Result<std::vector<float4x4>> all = gpu.read_back();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), store.slot_capacity());
}

TEST_F(GpuOutOfMemory, RecordingAndRunningAFrameAllocateNoHostMemory) {
  // record() returns nothing, so it must not be able to fail: whatever room it needs, update()
  // made. Frames of every kind of edit, in small pieces (256 slots of LocalToWorld each), with
  // bursts of spawns that grow the arrays by pieces (whose old contents record() copies over)
  // and full uploads; each frame's run_staged() (record, submit, wait, the mirrors freed)
  // counted allocation by allocation.
  VulkanContext& ctx = *ctx_;
  EntityStore store;
  ValueSource v(29);
  build_random_scene(store, 600, 12, v);
  EntityId next = 600;
  Propagator gpu = make_propagator(ctx, {.max_buffer_bytes = kMinBufferBytes});
  CpuReference cpu;
  long most = 0;
  uint32_t grown = 0, full = 0, copies = 0;
  auto counted_frame = [&]() -> Status {
    if (Status st = gpu.update(store); !st) return st;
    alloc_failure::arm(LONG_MAX, false);
    const Status st = gpu.run_staged(store);
    most = std::max(most, alloc_failure::count());
    alloc_failure::disarm();
    return st;
  };
  for (int f = 0; f < 60; ++f) {
    const uint32_t pieces_before = gpu.last_frame().slot_pieces;
    next = mixed_edit_frame(store, next, v);
    if (f % 10 == 3)
      for (int k = 0; k < 300; ++k) store.create(next++);  // past a piece or two
    if (f % 20 == 11) {
      ASSERT_TRUE(gpu.update(store).ok());  // never recorded: the next frame uploads everything
    }
    const std::string what = "frame " + std::to_string(f);
    ASSERT_LE(frame_and_compare(gpu, cpu, store, what.c_str(), counted_frame), 1.0);
    grown += gpu.last_frame().slot_pieces > pieces_before && pieces_before;
    full += gpu.last_frame().full_upload;
    copies += gpu.last_frame().copy_regions;
  }
  EXPECT_EQ(most, 0) << "allocations in one run_staged()";
  EXPECT_GE(grown, 2u) << "frames that added pieces";
  EXPECT_GE(full, 3u) << "full uploads";
  EXPECT_GE(copies, 60u) << "copy regions recorded";
}

TEST_F(GpuOutOfMemory, AskingForTheGpuTimesOutOfHostMemoryIsAnErrorNotAnException) {
  // Before any frame its answer is an error whose message does not fit a string's own room:
  // with every allocation failing, an error still (the short "out of memory"), never a throw.
  // After a completed frame the times themselves need no allocation.
  Propagator gpu = make_propagator(*ctx_);
  auto ask = [&](bool& threw) -> std::optional<Result<StageTimes>> {
    alloc_failure::arm(0, true);
    std::optional<Result<StageTimes>> times;
    threw = false;
    try {
      times.emplace(gpu.stage_times());
    } catch (...) {
      threw = true;
    }
    alloc_failure::disarm();
    return times;
  };
  bool threw = false;
  std::optional<Result<StageTimes>> before = ask(threw);
  ASSERT_FALSE(threw) << "stage_times() threw before any frame";
  ASSERT_TRUE(before.has_value());
  ASSERT_FALSE(before->ok());
  EXPECT_EQ(before->error().message, "out of memory");
  const Result<StageTimes> told = gpu.stage_times();
  ASSERT_FALSE(told.ok());
  EXPECT_NE(told.error().message.find("no frame"), std::string::npos) << told.error().message;

  EntityStore store;
  ValueSource v(31);
  build_random_scene(store, 200, 6, v);
  ASSERT_TRUE(gpu.run(store).ok());
  std::optional<Result<StageTimes>> after = ask(threw);
  ASSERT_FALSE(threw) << "stage_times() threw after a frame";
  ASSERT_TRUE(after.has_value());
  ASSERT_TRUE(after->ok()) << after->error().message;
  EXPECT_GT((*after)->total_ms(), 0.0);
}

TEST_F(GpuOutOfMemory, MakingAPropagatorOutOfHostMemoryIsAnError) {
  // Each allocation of its making fails in turn, and then every one from it on: an error that
  // says so (the short "out of memory" where even the message cannot be allocated), or, where
  // the allocation was one it goes on without, a Propagator; never an exception. (A context is not tried: the driver's own allocations on
  // this thread would fail too, and an exception through the Vulkan loader leaves its lock held.)
  alloc_failure::arm(LONG_MAX, false);
  ASSERT_TRUE(Propagator::create(*ctx_).ok());
  const long total = alloc_failure::count();
  alloc_failure::disarm();
  ASSERT_GT(total, 0);
  uint32_t errors = 0;
  for (const bool every_later : {false, true}) {
    for (long k = 0; k < total; ++k) {
      const std::string what = "allocation " + std::to_string(k) + (every_later ? " on" : "");
      alloc_failure::arm(k, every_later);
      std::string message;
      bool threw = false, made = false;
      try {
        Result<Propagator> p = Propagator::create(*ctx_);
        made = p.ok();
        if (!made) message = p.error().message;
      } catch (...) {
        threw = true;
      }
      alloc_failure::disarm();
      EXPECT_FALSE(threw) << what;
      if (!made) {
        ++errors;
        EXPECT_NE(message.find("out of"), std::string::npos) << what << ": '" << message << "'";
      }
      if (every_later && k == 0) {
        EXPECT_FALSE(made) << "nothing allocated at all";
      }
    }
  }
  EXPECT_GE(errors, 2u);
}

}  // namespace
}  // namespace tprop::test
