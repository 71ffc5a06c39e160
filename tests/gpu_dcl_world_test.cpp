// A Decentraland world on the GPU path against the CPU reference, frame by frame: generated
// scenes that move, re-parent, tie and untie cycles, delete and create entities, while scenes
// load and unload (their store entities destroyed in bulk), then a frame that only moves.
#include "dcl_test_support.h"
#include "dcl_world.h"
#include "dcl_world_gen.h"
#include "gpu_test_support.h"

namespace tprop::test {
namespace {

class GpuDclWorld : public GpuTest {
 protected:
  // Replays a generated world for 12 frames, a quarter of its scenes loading at frame 3 and
  // another quarter unloading at frame 5, each frame against the reference; returns how many
  // frames put a level back in slot order.
  uint32_t replay(DclWorld& world, Propagator& gpu) {
    Result<DclWorldStreams> streams = generate_dcl_world("gen:dclworld:24:3", 10, 8);
    EXPECT_TRUE(streams);
    if (!streams) return 0;
    for (size_t i = 0; i < streams->scenes.size(); i += 4) streams->scenes[i].load_frame = 3;
    for (size_t i = 1; i < streams->scenes.size(); i += 4) streams->scenes[i].unload_frame = 5;
    std::vector<std::optional<DclWorld::SceneId>> ids(streams->scenes.size());
    CpuReference cpu;
    uint32_t sorted_frames = 0;
    for (uint32_t f = 0; f < 12; ++f) {
      SCOPED_TRACE(testing::Message() << "frame " << f);
      for (size_t i = 0; i < streams->scenes.size(); ++i) {
        const DclWorldScene& sc = streams->scenes[i];
        if (ids[i] && sc.unload_frame == f) {
          EXPECT_TRUE(world.remove_scene(*ids[i]));
          ids[i].reset();
        }
        if (f == sc.load_frame) ids[i] = world.add_scene(sc.name, sc.parcel).value();
        if (!ids[i]) continue;
        EXPECT_TRUE(world.feed(*ids[i], sc.chunk(f - sc.load_frame)));
      }
      EXPECT_LE(frame_and_compare(gpu, cpu, world.store(), "world frame"), 1.0);
      EXPECT_EQ(gpu.last_frame().entities, world.store().size());
      if (gpu.last_frame().slot_ordered_entities) ++sorted_frames;
    }
    EXPECT_EQ(world.scene_count(), 18u);
    return sorted_frames;
  }
};

TEST_F(GpuDclWorld, ReplayedWorldWithScenesComingAndGoingMatchesTheReference) {
  DclWorld world;
  Propagator gpu = make_propagator(ctx());
  replay(world, gpu);
  CpuReference cpu;

  // Values only: one entity a scene moves under the same parent; nothing is re-sorted.
  uint32_t moved = 0;
  for (DclWorld::SceneId s : world.scenes()) {
    const EntityId e = world.state(s).entities().back();
    const LwwEntry* entry = world.state(s).find(e, kDclTransformComponentId);
    ASSERT_TRUE(entry);
    std::optional<DclTransform> t = decode_dcl_transform(entry->data);
    ASSERT_TRUE(t);
    t->position += float3(0, 2, 0);
    ASSERT_TRUE(world.apply(s, dcl_test::put_transform(e, entry->lamport + 1, *t)));
    ++moved;
  }
  EXPECT_LE(frame_and_compare(gpu, cpu, world.store(), "values frame"), 1.0);
  EXPECT_FALSE(gpu.last_frame().hierarchy_changed);
  EXPECT_EQ(gpu.last_frame().staged_entities, moved);
}

// The same world with its wide levels put back in slot order (forced, from 512 entries, so that
// this small world sorts): the sorts land amid the cycles tied and untied, the re-parents, the
// deletions and the scenes unloaded in bulk that scatter the levels, and every frame still
// matches the reference.
TEST_F(GpuDclWorld, WorldLevelsPutBackInSlotOrderMatchTheReference) {
  PropagatorOptions options;
  options.slot_order = SlotOrder::Restore;
  options.slot_order_min_entries = 512;
  DclWorld world;
  Propagator gpu = make_propagator(ctx(), options);
  EXPECT_GE(replay(world, gpu), 2u) << "the replay sorted no level: the test covers nothing";
}

}  // namespace
}  // namespace tprop::test
