// Decentraland scenes on the GPU path against the CPU reference: a 100,000-entity CRDT stream
// (reparenting, cycles, unknown parents, deletes, duplicates) fed frame by frame through
// DclScene, then a frame that only moves entities and must not re-sort.
#include "dcl_scene.h"
#include "dcl_test_support.h"
#include "gpu_test_support.h"

namespace tprop::test {
namespace {

class GpuDecentraland : public GpuTest {};

TEST_F(GpuDecentraland, StreamFramesOfAHundredThousandEntitiesMatchTheReference) {
  const std::vector<CrdtMessage> messages = dcl_test::random_messages(100000, 21);
  DclScene dcl;
  Propagator gpu = make_propagator(ctx());
  CpuReference cpu;

  // Frame 0 takes the first 60% of the stream; four more frames bring the rest.
  const size_t first = messages.size() * 6 / 10;
  dcl.apply(std::span<const CrdtMessage>(messages).first(first));
  EXPECT_LE(frame_and_compare(gpu, cpu, dcl.store(), "frame 0"), 1.0);
  EXPECT_GE(gpu.last_frame().entities, 50000u);
  EXPECT_GT(gpu.last_frame().levels, 2u);
  const size_t rest = messages.size() - first;
  for (int f = 1; f <= 4; ++f) {
    SCOPED_TRACE(testing::Message() << "frame " << f);
    const size_t begin = first + rest * size_t(f - 1) / 4, end = first + rest * size_t(f) / 4;
    dcl.apply(std::span<const CrdtMessage>(messages).subspan(begin, end - begin));
    EXPECT_LE(frame_and_compare(gpu, cpu, dcl.store(), "stream frame"), 1.0);
    EXPECT_TRUE(gpu.last_frame().hierarchy_changed) << "these batches reparent entities";
  }

  // Values only: every 10th entity with a Transform moves, same parent, a newer lamport.
  size_t moved = 0;
  for (EntityId e : dcl.state().entities()) {
    std::optional<DclTransform> t = dcl.transform(e);
    if (!t || e % 10 != 0) continue;
    t->position += float3(0.5f, 0, 0);
    dcl.apply(dcl_test::put_transform(e, 1000, *t));
    ++moved;
  }
  ASSERT_GT(moved, 1000u);
  EXPECT_LE(frame_and_compare(gpu, cpu, dcl.store(), "values frame"), 1.0);
  EXPECT_FALSE(gpu.last_frame().hierarchy_changed);
  EXPECT_EQ(gpu.last_frame().staged_entities, moved);
}

}  // namespace
}  // namespace tprop::test
