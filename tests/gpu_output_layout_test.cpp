// The Affine3x4 output (PropagatorOptions::output_layout, shaders/output_layout.h): every pass
// that writes or reads LocalToWorld must do it as three rows of 48 bytes, under every strategy
// the Propagator can take, over frames of every kind of edit; read_back() must give the float4x4
// the reference computes; the bytes in the buffers must be the documented rows; and a scene that
// is not affine must be refused by name, never written as garbage.
#include "gpu_test_support.h"

#include <cstring>

#include <vulkan/vulkan.h>

#include "vk_buffer.h"

namespace tprop::test {
namespace {

PropagatorOptions affine(PropagatorOptions o) {
  o.output_layout = OutputLayout::Affine3x4;
  return o;
}

struct Strategy {
  const char* name;
  PropagatorOptions options;
};

class GpuAffineOutput : public GpuTest, public ::testing::WithParamInterface<Strategy> {};

// Mixed edits over frames (structural edits, cycles, Static and override toggles), then deep
// runs walked as the strategy walks them (chains, bundles, pointer jumping): the 3x4 output read
// back is the reference's float4x4 in every frame.
TEST_P(GpuAffineOutput, AffineOutputMatchesTheReferenceOnEveryStrategy) {
  const PropagatorOptions options = affine(GetParam().options);
  {
    SCOPED_TRACE("mixed edits");
    EntityStore store;
    ValueSource v(57);
    EntityId next = 1200;
    build_random_scene(store, next, 12, v);
    Propagator gpu = make_propagator(ctx(), options);
    CpuReference cpu;
    ASSERT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    EXPECT_EQ(gpu.output().layout, OutputLayout::Affine3x4);
    uint32_t structural = 0, statics = 0;
    for (int frame = 1; frame <= 60; ++frame) {
      if (frame % 10 >= 2) next = mixed_edit_frame(store, next, v);
      for (uint32_t s = 0; s < store.slot_capacity(); ++s)
        statics += store.alive_at(s) && store.has_at(s, Component::Static);
      const std::string what = "frame " + std::to_string(frame);
      ASSERT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      structural += gpu.last_frame().hierarchy_changed;
    }
    EXPECT_GE(structural, 30u);
    EXPECT_GT(statics, 0u);
    if (options.max_buffer_bytes) {
      EXPECT_GE(gpu.last_frame().slot_pieces, 5u);
      EXPECT_LE(gpu.last_frame().largest_buffer_bytes, options.max_buffer_bytes);
    }
  }
  {
    SCOPED_TRACE("deep runs");
    // Below one root, a chain of 300 (one entity a level), a bundle of 4 parallel chains of 200
    // below its end and a random tail of 400 below the bundle's first chain (levels of 1 to 3
    // entities): one run of 900 narrow levels. Every entity has a rotation and a scale.
    EntityStore store;
    ValueSource v(58);
    EntityId next = 0;
    constexpr EntityId kNoEntity = UINT32_MAX;  // add(): a root
    auto add = [&](EntityId parent) {
      const EntityId e = next++;
      store.create(e);
      add_features(store, e, kTranslation | kRotation | kScale, v);
      if (parent != kNoEntity) store.set_parent(e, parent);
      return e;
    };
    EntityId above = add(kNoEntity);
    for (int k = 0; k < 300; ++k) above = add(above);
    EntityId tips[4] = {above, above, above, above};
    for (int level = 0; level < 200; ++level)
      for (EntityId& tip : tips) tip = add(tip);
    above = tips[0];
    for (int k = 0; k < 400; ++k) above = add(v.below(3) ? above : next - 1 - v.below(3));
    Propagator gpu = make_propagator(ctx(), options);
    CpuReference cpu;
    ASSERT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    uint32_t chains = gpu.last_frame().chain_steps, bundles = gpu.last_frame().bundle_steps;
    uint32_t jumps = gpu.last_frame().jump_runs, scans = gpu.last_frame().scan_runs;
    for (int frame = 1; frame <= 6; ++frame) {
      for (int k = 0; k < 20; ++k) store.set_translation(v.below(next), v.vec(5));
      if (frame == 2)
        for (int k = 0; k < 10; ++k) store.add(v.below(next), Component::Static);
      if (frame == 4) store.set_parent(1000, 150);  // a bundle's lower part moves up
      const std::string what = "deep frame " + std::to_string(frame);
      ASSERT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      chains += gpu.last_frame().chain_steps;
      bundles += gpu.last_frame().bundle_steps;
      jumps += gpu.last_frame().jump_runs;
      scans += gpu.last_frame().scan_runs;
    }
    // What ran: the walk this strategy asked for.
    const NarrowWalk walk = options.narrow_walk;
    if (options.scan_runs == ScanRuns::Always) {
      EXPECT_GT(scans, 0u);
    }
    if (walk == NarrowWalk::Jump && options.scan_runs == ScanRuns::Never) {
      EXPECT_GT(jumps, 0u);
    }
    if (walk == NarrowWalk::Jump) {
      EXPECT_GT(jumps + scans, 0u);
    }
    if (walk == NarrowWalk::SingleInvocation && options.subgroup_chains) {
      EXPECT_GT(chains, 0u);
      EXPECT_GT(bundles, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, GpuAffineOutput,
    ::testing::Values(
        Strategy{"Default", {}}, Strategy{"WorkListAlways", {.work_list_max = UINT32_MAX}},
        Strategy{"WholeOrderSkippingTheUnchanged", {.work_list_max = 0}},
        Strategy{"DeviceAddresses", {.prefer_descriptors = false}},
        Strategy{"DeviceAddressesWithTexelReads",
                 {.prefer_descriptors = false, .texel_reads = TexelReads::Always}},
        Strategy{"WorkgroupNarrowWalk", {.narrow_walk = NarrowWalk::Workgroup}},
        Strategy{"PointerJumping", {.narrow_walk = NarrowWalk::Jump}},
        Strategy{"PointerJumpingWithoutScans",
                 {.narrow_walk = NarrowWalk::Jump, .scan_runs = ScanRuns::Never}},
        Strategy{"ScannedRunsSingleInvocation",
                 {.narrow_walk = NarrowWalk::SingleInvocation, .scan_runs = ScanRuns::Always}},
        Strategy{"SingleInvocationWithChainsAndBundles",
                 {.narrow_walk = NarrowWalk::SingleInvocation}},
        Strategy{"SingleInvocationWithoutSubgroupChains",
                 {.narrow_walk = NarrowWalk::SingleInvocation, .subgroup_chains = false}},
        Strategy{"GeneralShaders", {.specialize = false}},
        Strategy{"FusedLevelsPointerJumping",
                 {.narrow_walk = NarrowWalk::Jump, .level_passes = LevelPasses::Fused}},
        Strategy{"ClimbedTopLevels", {.climb_top = ClimbTop::Always}},
        Strategy{"SeparateLevelPassesPointerJumping",
                 {.narrow_walk = NarrowWalk::Jump, .level_passes = LevelPasses::Separate}},
        // The wide passes asked to store through shared memory: the 3x4 layout stores directly.
        Strategy{"SharedWideStores", {.wide_stores = WideStores::Shared}},
        // Rows stored as 64-bit words (a CPU device's default) and as 4-float rows (a GPU's).
        Strategy{"RowsStoredAsWords", {.world_writes = WorldWrites::Words}},
        Strategy{"RowsStoredAsFloatVectors", {.world_writes = WorldWrites::Vectors}},
        Strategy{"TinyPiecesRowsStoredAsWords",
                 {.world_writes = WorldWrites::Words, .max_buffer_bytes = kMinBufferBytes}},
        // 256 slots a piece: device addresses through the piece tables.
        Strategy{"TinyPieces", {.max_buffer_bytes = kMinBufferBytes}},
        Strategy{"TinyPiecesWholeOrderSkippingTheUnchanged",
                 {.work_list_max = 0, .max_buffer_bytes = kMinBufferBytes}},
        Strategy{"TinyPiecesPointerJumping",
                 {.narrow_walk = NarrowWalk::Jump, .max_buffer_bytes = kMinBufferBytes}},
        Strategy{"TinyPiecesScannedRuns",
                 {.scan_runs = ScanRuns::Always, .max_buffer_bytes = kMinBufferBytes}},
        Strategy{"TinyPiecesSingleInvocation",
                 {.narrow_walk = NarrowWalk::SingleInvocation,
                  .max_buffer_bytes = kMinBufferBytes}}),
    [](const ::testing::TestParamInfo<Strategy>& param) { return param.param.name; });

class GpuAffineLayout : public GpuTest {
 protected:
  // The bytes of every output piece, copied raw (no read_back()), through a barrier from the
  // stage and access OutputBinding names, as a renderer would order its reads.
  std::vector<std::vector<uint8_t>> raw_pieces(const OutputBinding& out) {
    std::vector<std::vector<uint8_t>> bytes;
    const VkDevice device = ctx().device();
    VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpci.queueFamilyIndex = ctx().queue_family();
    VkCommandPool pool = VK_NULL_HANDLE;
    EXPECT_EQ(vkCreateCommandPool(device, &cpci, nullptr, &pool), VK_SUCCESS);
    VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cbai.commandPool = pool;
    cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    EXPECT_EQ(vkAllocateCommandBuffers(device, &cbai, &cmd), VK_SUCCESS);
    for (const OutputPiece& piece : out.pieces) {
      auto host = Buffer::create(ctx(), piece.range, BufferKind::Readback, "test.raw_output");
      EXPECT_TRUE(host.ok());
      if (!host) break;
      VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      vkBeginCommandBuffer(cmd, &begin);
      VkMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
      barrier.srcStageMask = out.written_stage;
      barrier.srcAccessMask = out.written_access;
      barrier.dstStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
      barrier.dstAccessMask = VK_ACCESS_2_TRANSFER_READ_BIT;
      VkMemoryBarrier2 to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
      to_host.srcStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
      to_host.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
      to_host.dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT;
      to_host.dstAccessMask = VK_ACCESS_2_HOST_READ_BIT;
      VkDependencyInfo dependency{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
      dependency.memoryBarrierCount = 1;
      dependency.pMemoryBarriers = &barrier;
      vkCmdPipelineBarrier2(cmd, &dependency);
      const VkBufferCopy region{piece.offset, 0, piece.range};
      vkCmdCopyBuffer(cmd, piece.buffer, host->handle(), 1, &region);
      dependency.pMemoryBarriers = &to_host;
      vkCmdPipelineBarrier2(cmd, &dependency);
      vkEndCommandBuffer(cmd);
      VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      si.commandBufferCount = 1;
      si.pCommandBuffers = &cmd;
      EXPECT_EQ(vkQueueSubmit(ctx().queue(), 1, &si, VK_NULL_HANDLE), VK_SUCCESS);
      EXPECT_EQ(vkQueueWaitIdle(ctx().queue()), VK_SUCCESS);
      host->invalidate();
      const auto* data = static_cast<const uint8_t*>(host->mapped());
      bytes.emplace_back(data, data + piece.range);
      vkResetCommandBuffer(cmd, 0);
    }
    vkDestroyCommandPool(device, pool, nullptr);
    return bytes;
  }
};

// Entity i at (i, 2, 3) scaled by (2, 3, 4), and a child of entity 0 one unit further along x:
// matrices known exactly, so each slot's 48 bytes must be the rows (2, 0, 0, x), (0, 3, 0, 2),
// (0, 0, 4, 3), row-major floats, slot s at s * 48 of its piece; 1,000 slots in 16 KiB pieces.
TEST_F(GpuAffineLayout, TheBuffersHoldThreeRowsOfEachMatrixAt48BytesASlotInEveryPiece) {
  EntityStore store;
  for (EntityId id = 0; id < 1000; ++id) {
    store.create(id);
    store.set_translation(id, float3(float(id), 2, 3));
    store.set_non_uniform_scale(id, float3(2, 3, 4));
  }
  store.create(5000);
  store.set_translation(5000, float3(1, 0, 0));
  store.set_parent(5000, 0);  // world: (2, 0, 0, 2), (0, 3, 0, 2), (0, 0, 4, 3)
  Propagator gpu =
      make_propagator(ctx(), {.max_buffer_bytes = kMinBufferBytes,
                              .output_layout = OutputLayout::Affine3x4});
  ASSERT_TRUE(gpu.run(store).ok());
  // A dead slot: destroyed after the first frame, so its 48 bytes were written once.
  store.destroy(500);
  ASSERT_TRUE(gpu.run(store).ok());

  const OutputBinding out = gpu.output();
  EXPECT_EQ(out.layout, OutputLayout::Affine3x4);
  EXPECT_EQ(out.stride, 48u);
  EXPECT_EQ(out.stride, sizeof(gpu::Affine3x4));
  // 16 KiB hold 341 elements of 48 bytes: pieces of 256 slots, the power of two below.
  ASSERT_EQ(out.slots_per_piece, 256u);
  ASSERT_EQ(out.pieces.size(), 4u);
  EXPECT_EQ(out.range, 256u * 48u);
  uint32_t slots = 0;
  for (const OutputPiece& piece : out.pieces) {
    EXPECT_EQ(piece.first_slot, slots);
    EXPECT_EQ(piece.range, uint64_t(piece.slots) * 48u);
    slots += piece.slots;
  }
  EXPECT_EQ(slots, store.slot_capacity());

  const auto raw = raw_pieces(out);
  ASSERT_EQ(raw.size(), out.pieces.size());
  auto row_floats = [&](uint32_t slot) {
    const uint32_t p = slot / out.slots_per_piece, k = slot % out.slots_per_piece;
    std::vector<float> f(12);
    std::memcpy(f.data(), raw[p].data() + size_t(k) * 48, 48);
    return f;
  };
  for (EntityId id : {0u, 1u, 255u, 256u, 511u, 512u, 767u, 768u, 999u}) {
    const float x = float(id);
    EXPECT_EQ(row_floats(store.slot_of(id)),
              (std::vector<float>{2, 0, 0, x, 0, 3, 0, 2, 0, 0, 4, 3}))
        << "entity " << id;
  }
  EXPECT_EQ(row_floats(store.slot_of(5000)),
            (std::vector<float>{2, 0, 0, 2, 0, 3, 0, 2, 0, 0, 4, 3}));
  EXPECT_EQ(row_floats(500), std::vector<float>(12, 0.0f)) << "a dead slot is all zeros";

  // read_back(): the same matrices as float4x4, last row (0, 0, 0, 1); zeros where no entity.
  auto back = gpu.read_back();
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), store.slot_capacity());
  const float4x4 expected(float4(2, 0, 0, 0), float4(0, 3, 0, 0), float4(0, 0, 4, 0),
                          float4(999, 2, 3, 1));
  EXPECT_EQ((*back)[store.slot_of(999)], expected);
  EXPECT_EQ((*back)[500], float4x4(0.0f));
}

// Words or vectors (WorldWrites) are two ways to store the same bytes: a random scene with
// every rule, in both layouts, by descriptors and in pieces by device address, evaluated whole
// and then by work list, leaves the same bytes in every output piece either way (64-bit words
// whose halves came out swapped would move every other float).
TEST_F(GpuAffineLayout, MatricesStoredAsWordsLeaveTheBytesOfFloatVectors) {
  for (const OutputLayout layout : {OutputLayout::Float4x4, OutputLayout::Affine3x4})
    for (const uint64_t pieces : {uint64_t(0), uint64_t(kMinBufferBytes)}) {
      SCOPED_TRACE(std::string(layout == OutputLayout::Affine3x4 ? "3x4" : "4x4") +
                   (pieces ? ", pieces" : ", one buffer"));
      std::vector<std::vector<uint8_t>> bytes[2];
      for (const WorldWrites writes : {WorldWrites::Words, WorldWrites::Vectors}) {
        EntityStore store;
        ValueSource v(71);
        build_random_scene(store, 900, 10, v);
        Propagator gpu = make_propagator(
            ctx(), {.world_writes = writes, .max_buffer_bytes = pieces, .output_layout = layout});
        ASSERT_TRUE(gpu.run(store).ok());
        EXPECT_EQ(gpu.last_frame().word_stores, writes == WorldWrites::Words);
        for (EntityId id = 0; id < 900; id += 23) store.set_translation(id, v.vec(5));
        ASSERT_TRUE(gpu.run(store).ok());
        EXPECT_GT(gpu.last_frame().evaluated_entities, 0u);
        bytes[writes == WorldWrites::Words] = raw_pieces(gpu.output());
      }
      ASSERT_EQ(bytes[0].size(), bytes[1].size());
      for (size_t p = 0; p < bytes[0].size(); ++p)
        EXPECT_TRUE(bytes[0][p] == bytes[1][p]) << "piece " << p;
    }
}

TEST_F(GpuAffineLayout, TheDefaultOutputStaysAFloat4x4Of64Bytes) {
  EntityStore store;
  for (EntityId id = 0; id < 10; ++id) store.create(id);
  Propagator gpu = make_propagator(ctx());
  ASSERT_TRUE(gpu.run(store).ok());
  EXPECT_EQ(gpu.output().layout, OutputLayout::Float4x4);
  EXPECT_EQ(gpu.output().stride, 64u);
  EXPECT_EQ(gpu.output().range, 10u * 64u);
}

// A matrix with a last row other than (0, 0, 0, 1) cannot be written as 3 rows: update() says
// which entity and which component, records nothing, and the Propagator goes on once the matrix
// is affine again, Statics frozen before the refused frame still frozen.
TEST_F(GpuAffineLayout, ANonAffineMatrixIsRefusedNamingTheEntityAndTheComponent) {
  float4x4 projective(1.0f);
  projective[0][3] = 0.25f;  // last row (0.25, 0, 0, 1)
  struct Case {
    const char* component;
    void (*make)(EntityStore&, const float4x4&);
  };
  const Case cases[] = {
      {"LocalToParent",
       [](EntityStore& s, const float4x4& m) {
         s.set_matrix(42, MatrixComponent::LocalToParent, m);
       }},
      {"LocalToWorld",
       [](EntityStore& s, const float4x4& m) {
         s.add(42, Component::WriteGroupOverride);
         s.set_matrix(42, MatrixComponent::LocalToWorld, m);
       }},
      {"CompositeRotation",
       [](EntityStore& s, const float4x4& m) {
         s.set_matrix(42, MatrixComponent::CompositeRotation, m);  // no Rotation: kept
       }},
      {"CompositeScale",
       [](EntityStore& s, const float4x4& m) {
         s.set_matrix(42, MatrixComponent::CompositeScale, m);  // no Scale: kept
       }},
      {"ParentScaleInverse",
       [](EntityStore& s, const float4x4& m) {
         s.set_matrix(42, MatrixComponent::ParentScaleInverse, m);  // the parent has no scale
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.component);
    EntityStore store;
    for (EntityId id = 0; id < 100; ++id) {
      store.create(id);
      store.set_translation(id, float3(float(id), 0, 0));
      if (id > 0) store.set_parent(id, id - 1);
    }
    store.add(10, Component::Static);
    Propagator gpu = make_propagator(ctx(), {.output_layout = OutputLayout::Affine3x4});
    CpuReference cpu;
    ASSERT_LE(frame_and_compare(gpu, cpu, store, "affine"), 1.0);
    const float4x4 frozen = (*gpu.read_back())[store.slot_of(10)];

    store.set_translation(10, float3(-7, 0, 0));  // must not move: frozen
    store.add(60, Component::Static);             // new this frame: computed once accepted
    c.make(store, projective);
    const Status refused = gpu.update(store);
    ASSERT_FALSE(refused.ok());
    const std::string& message = refused.error().message;
    EXPECT_NE(message.find("entity 42 "), std::string::npos) << message;
    EXPECT_NE(message.find(c.component), std::string::npos) << message;
    EXPECT_NE(message.find("(0.25, 0, 0, 1)"), std::string::npos) << message;
    EXPECT_NE(message.find("Affine3x4"), std::string::npos) << message;

    // The same scene in the Float4x4 layout is fine.
    {
      EntityStore copy;
      for (EntityId id = 0; id < 100; ++id) {
        copy.create(id);
        if (id > 0) copy.set_parent(id, id - 1);
      }
      c.make(copy, projective);
      Propagator full = make_propagator(ctx());
      EXPECT_TRUE(full.run(copy).ok());
    }

    // Affine again: the next frame runs (nothing of the refused one was recorded) and matches
    // the reference, which saw no frame in between either.
    c.make(store, float4x4(1.0f));
    ASSERT_LE(frame_and_compare(gpu, cpu, store, "affine again"), 1.0);
    EXPECT_EQ((*gpu.read_back())[store.slot_of(10)], frozen) << "frozen before: still frozen";
  }
}

// A CompositeScale that is affine has an affine inverse, but glm::inverse rounds the inverse's
// [3][3] off 1 for about one affine matrix in seven: its children's ParentScaleInverse must not
// get the scene refused (only what the user wrote counts), and the results stay within the
// reference's tolerance.
TEST_F(GpuAffineLayout, AnAffineCompositeScaleWhoseInverseRoundsOffOneIsAccepted) {
  ValueSource v(5);
  float4x4 scale(1.0f);
  for (int tries = 0; tries < 1000; ++tries) {
    scale = v.affine();
    if (glm::inverse(scale)[3][3] != 1.0f) break;
  }
  ASSERT_NE(glm::inverse(scale)[3][3], 1.0f) << "no such matrix among 1,000";
  EntityStore store;
  store.create(1);
  store.set_matrix(1, MatrixComponent::CompositeScale, scale);
  for (EntityId id = 2; id < 20; ++id) {
    store.create(id);
    store.set_parent(id, 1);
    store.set_translation(id, v.vec(3));
    store.set_matrix(id, MatrixComponent::ParentScaleInverse, float4x4(1.0f));
  }
  Propagator gpu = make_propagator(ctx(), {.output_layout = OutputLayout::Affine3x4});
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "composite scale"), 1.0);
}

}  // namespace
}  // namespace tprop::test
