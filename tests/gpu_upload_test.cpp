// What a frame sends to the GPU and how the passes reach it: values alone as 48-byte records (or
// nothing, written in place where device memory is host memory), other changed entities as
// 64-byte ones, the order entries a structural edit rewrites, the
// level table only in the frame that planned it, nothing again when an update() is recorded a
// second time; and descriptors wherever the data a frame uses fits one binding, however large
// its buffers grew. Every frame is checked against the CPU reference.
#include "gpu_test_support.h"

#include <chrono>

#include "vk_buffer.h"

#include "../shaders/scene_layout.h"

namespace tprop::test {
namespace {

class GpuUploads : public GpuTest {};

// Entities 0..n-1, each translated and turned, entity i > 0 the child of i / 2.
void build_binary_tree(EntityStore& store, ValueSource& v, EntityId n) {
  for (EntityId id = 0; id < n; ++id) {
    store.create(id);
    store.set_translation(id, v.vec(3));
    store.set_rotation(id, v.unit_quat());
    if (id > 0) store.set_parent(id, id / 2);
  }
}

// Whether a frame binds descriptors is decided by the data that frame uses, not by the size its
// buffers grew to: a buffer larger than one binding is bound through its first bytes while they
// hold what the frame reaches. Bindings capped at 2,000 LocalToWorlds of 48 bytes (the affine
// layout): the per-slot arrays carry an eighth of slack beyond the 2,000 slots in use, and the
// deltas room for 4,096 records of each kind from the first frame on, so every frame here
// has buffers past the cap. New values for all 2,000 entities fill one binding exactly (48
// bytes each); a Scale added to each of them needs whole records, 128,000 bytes, more than one
// binding: that frame alone takes device addresses, still with texel reads (the evaluate passes
// read no records, and the arrays they read fit their views).
TEST_F(GpuUploads, EachFrameBindsDescriptorsWhereItsOwnDataFitsOneBinding) {
  EntityStore store;
  ValueSource v(7);
  build_binary_tree(store, v, 2000);
  Propagator gpu = make_propagator(ctx(), {.max_binding_bytes = 2000 * 48,
                                           .texel_reads = TexelReads::Always,
                                           .value_writes = ValueWrites::Staged,
                                           .output_layout = OutputLayout::Affine3x4});
  CpuReference cpu;
  auto change = [&](EntityId stride) {
    for (EntityId id = 0; id < 2000; id += stride) store.set_translation(id, v.vec(3));
  };
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
  EXPECT_TRUE(gpu.last_frame().descriptors);
  EXPECT_TRUE(gpu.last_frame().texel_reads);
  change(100);
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "1% values"), 1.0);
  EXPECT_TRUE(gpu.last_frame().descriptors);
  change(1);
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "all values"), 1.0);
  EXPECT_EQ(gpu.last_frame().values_only_entities, 2000u);
  EXPECT_TRUE(gpu.last_frame().descriptors);
  for (EntityId id = 0; id < 2000; ++id) store.set_scale(id, 0.5f + float(id % 3));
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "a Scale for all"), 1.0);
  EXPECT_EQ(gpu.last_frame().staged_entities, 2000u);
  EXPECT_EQ(gpu.last_frame().values_only_entities, 0u);
  EXPECT_FALSE(gpu.last_frame().descriptors);
  EXPECT_TRUE(gpu.last_frame().texel_reads);
  change(100);
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "1% values again"), 1.0);
  EXPECT_TRUE(gpu.last_frame().descriptors);
  EXPECT_TRUE(gpu.last_frame().texel_reads);
  // One more entity than a binding holds: device addresses from here on, every frame, and no
  // texel reads either (the LocalToWorlds no longer fit a view capped the same).
  store.create(2000);
  store.set_parent(2000, 7);
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "past one binding"), 1.0);
  EXPECT_FALSE(gpu.last_frame().descriptors);
  EXPECT_FALSE(gpu.last_frame().texel_reads);
}

TEST_F(GpuUploads, ValueOnlyFramesMoveOnlyTheChangedEntitiesBytes) {
  EntityStore store;
  for (EntityId id = 0; id < 1000; ++id) {
    store.create(id);
    store.set_translation(id, float3(float(id), 0, 0));
    if (id > 0) store.set_parent(id, id / 2);
  }
  // A level table of one entry a level, as separate level passes use (LevelPasses::Fused sends
  // a chunk table beside it: 8 bytes a level more).
  Propagator gpu = make_propagator(
      ctx(), {.value_writes = ValueWrites::Staged, .level_passes = LevelPasses::Separate});
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
  EXPECT_TRUE(gpu.last_frame().full_upload);

  // Three entities: two leaves (600 and 601, level 10: the parent of id is id / 2) and entity 10
  // (level 4), whose subtree holds 1 + 2 + 4 + ... + 64 = 127 entities (ids 10, 20-21, ...,
  // 640-703).
  store.set_translation(600, float3(1, 2, 3));
  store.set_translation(601, float3(4, 5, 6));
  store.set_rotation(10, make_quat(0, 0, 1, 0));
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "values"), 1.0);
  const FrameStats& fs = gpu.last_frame();
  EXPECT_FALSE(fs.hierarchy_changed);
  EXPECT_FALSE(fs.full_pass);
  EXPECT_EQ(fs.staged_entities, 3u);
  EXPECT_EQ(fs.dirty_entities, 3u);
  EXPECT_EQ(fs.evaluated_entities, 127u + 2u);
  // 600 and 601 as value records (48 bytes), 10 whole (64: it gains a Rotation), the work list
  // (4 bytes an entry) and its table of levels 0..10, a copy region each.
  EXPECT_EQ(fs.values_only_entities, 2u);
  EXPECT_EQ(sizeof(gpu::ValueDelta), 48u);
  EXPECT_EQ(fs.upload_bytes,
            2u * sizeof(gpu::ValueDelta) + sizeof(gpu::EntityDelta) + 129u * 4u + 11u * 8u);
  EXPECT_EQ(fs.copy_regions, 4u);

  EXPECT_LE(frame_and_compare(gpu, cpu, store, "unchanged"), 1.0);
  EXPECT_EQ(gpu.last_frame().upload_bytes, 0u);
}

// A work list holds each changed entity once, however the changes nest: entity 10's subtree
// (127 entities) holds the changed 20 and 641 too, and 600 stands apart; 641 also gains a Scale,
// so it is packed whole beside its value change (named more than once among the seeds).
TEST_F(GpuUploads, NestedChangesPutEachSubtreeInTheWorkListOnce) {
  EntityStore store;
  ValueSource v(29);
  build_binary_tree(store, v, 1000);
  Propagator gpu = make_propagator(ctx(), {.work_list_max = UINT32_MAX});
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
  store.set_rotation(10, make_quat(0, 0, 1, 0));
  store.set_translation(20, float3(3, 2, 1));
  store.set_translation(641, float3(1, 1, 1));
  store.set_scale(641, 2.0f);
  store.set_translation(600, float3(0, 0, 5));
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "nested"), 1.0);
  const FrameStats& fs = gpu.last_frame();
  EXPECT_FALSE(fs.full_pass);
  EXPECT_EQ(fs.evaluated_entities, 127u + 1u);
  EXPECT_EQ(fs.dirty_entities, 4u);
}

// A work list the last walk found too small for its seeds is not walked again: the frame follows
// the whole order at once (FrameStats::work_list_walked), fewer seeds walk again, and so does
// every fifth frame in a row that would skip.
TEST_F(GpuUploads, SubtreesTooLargeForAWorkListAreNotWalkedTwice) {
  EntityStore store;
  // 200 roots with 10 children each: a root's subtree holds 11 entities.
  for (EntityId r = 0; r < 200; ++r) {
    store.create(r);
    store.set_translation(r, float3(float(r), 0, 0));
    for (EntityId k = 0; k < 10; ++k) {
      const EntityId c = 200 + r * 10 + k;
      store.create(c);
      store.set_translation(c, float3(0, float(k), 0));
      store.set_parent(c, r);
    }
  }
  Propagator gpu = make_propagator(ctx(), {.work_list_max = 1000});
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
  float y = 0;
  const auto move_roots = [&](EntityId count, const char* what) {
    y += 1;
    for (EntityId r = 0; r < count; ++r) store.set_translation(r, float3(float(r), y, 0));
    EXPECT_LE(frame_and_compare(gpu, cpu, store, what), 1.0);
    return gpu.last_frame().work_list_walked;
  };
  // 100 roots, 1,100 entities below them: the walk gives up at 1,000, in the 91st subtree.
  EXPECT_EQ(move_roots(100, "100 roots"), 1000u);
  EXPECT_TRUE(gpu.last_frame().full_pass);
  // The same again: 11 a seed, as the last walk found, is more than 1,000 for 100.
  EXPECT_EQ(move_roots(100, "100 roots again"), 0u);
  EXPECT_TRUE(gpu.last_frame().full_pass);
  EXPECT_EQ(world_of(gpu, store, 200)[3], float4(0, 2, 0, 1)) << "below root 0, at y 2";
  // 50 roots fit: walked, and followed as a work list.
  EXPECT_EQ(move_roots(50, "50 roots"), 550u);
  EXPECT_FALSE(gpu.last_frame().full_pass);
  EXPECT_EQ(gpu.last_frame().evaluated_entities, 550u);
  // 50 seeds are too few to estimate from: 100 walk (and give up) once more, then four frames
  // skip the walk and the fifth tries again.
  EXPECT_EQ(move_roots(100, "100 roots after 50"), 1000u);
  for (int f = 0; f < 4; ++f) EXPECT_EQ(move_roots(100, "skipped"), 0u) << f;
  EXPECT_EQ(move_roots(100, "tried again"), 1000u);
}

// FrameStats::host: each stage update() ran is timed, within update()'s own time as the caller
// measures it, and a stage the frame did not run reads zero (the order and compaction in a
// frame of values alone, compaction in a full upload).
TEST_F(GpuUploads, UpdateTimesTheStagesItRanAndNoOthers) {
  EntityStore store;
  ValueSource v(31);
  build_binary_tree(store, v, 4000);
  Propagator gpu = make_propagator(ctx());
  CpuReference cpu;
  auto timed_frame = [&](const char* what) {
    double ms = 0;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, what,
                                [&]() -> Status {
                                  const auto t0 = std::chrono::steady_clock::now();
                                  const Status st = gpu.update(store);
                                  ms = std::chrono::duration<double, std::milli>(
                                           std::chrono::steady_clock::now() - t0)
                                           .count();
                                  return st ? gpu.run_staged(store) : st;
                                }),
              1.0);
    const FrameStats::HostTimes& h = gpu.last_frame().host;
    for (double stage : {h.take_changes_ms, h.order_ms, h.compact_ms, h.pack_ms, h.plan_ms})
      EXPECT_GE(stage, 0.0) << what;
    EXPECT_LE(h.take_changes_ms + h.order_ms + h.compact_ms + h.pack_ms + h.plan_ms, ms) << what;
    return h;
  };

  const FrameStats::HostTimes full = timed_frame("first");
  EXPECT_TRUE(gpu.last_frame().full_upload);
  EXPECT_GT(full.order_ms, 0.0);  // rebuilt
  EXPECT_GT(full.pack_ms, 0.0);
  EXPECT_GT(full.plan_ms, 0.0);
  EXPECT_EQ(full.compact_ms, 0.0);

  for (EntityId id = 0; id < 4000; id += 40) store.set_translation(id, float3(1, 2, 3));
  const FrameStats::HostTimes values = timed_frame("values");
  EXPECT_FALSE(gpu.last_frame().hierarchy_changed);
  EXPECT_EQ(values.order_ms, 0.0);
  EXPECT_EQ(values.compact_ms, 0.0);
  EXPECT_GT(values.pack_ms, 0.0);
  EXPECT_GT(values.plan_ms, 0.0);

  for (EntityId id = 10; id < 4000; id += 97) store.destroy(id);
  for (EntityId id = 5000; id < 5040; ++id) {
    store.create(id);
    store.set_parent(id, id % 400);
  }
  const FrameStats::HostTimes structural = timed_frame("structural");
  EXPECT_TRUE(gpu.last_frame().hierarchy_changed);
  EXPECT_GT(structural.order_ms, 0.0);
  EXPECT_GT(structural.compact_ms, 0.0);
  EXPECT_GT(structural.pack_ms, 0.0);
}

TEST_F(GpuUploads, ScatteredValueChangesUploadOnlyTheirOwnRecords) {
  EntityStore store;
  for (EntityId id = 0; id < 3000; ++id) {
    store.create(id);
    store.set_translation(id, float3(float(id), 0, 0));
    if (id > 0) store.set_parent(id, (id - 1) / 3);
  }
  // Work lists of at most 1000 entities: the subtrees below the changes hold all 3000.
  Propagator gpu = make_propagator(ctx(), {.value_writes = ValueWrites::Staged,
                                           .work_list_max = 1000,
                                           .level_passes = LevelPasses::Separate});  // one table
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);

  // Every third entity: 1000 runs, far too many for copy regions.
  for (EntityId id = 0; id < 3000; id += 3) store.set_translation(id, float3(0, float(id), 1));
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "scattered"), 1.0);
  const FrameStats& fs = gpu.last_frame();
  EXPECT_FALSE(fs.hierarchy_changed);
  EXPECT_EQ(fs.staged_entities, 1000u);
  // Their subtrees are more than a work list takes: the whole order is followed, the GPU
  // recomputing the changed chains (here, below the root, all of them).
  EXPECT_TRUE(fs.full_pass);
  EXPECT_TRUE(fs.skip_unchanged);
  EXPECT_EQ(fs.dirty_entities, 1000u);
  EXPECT_EQ(fs.evaluated_entities, 3000u);
  // One 48-byte value record each, nothing else: the first frame's plan and table of levels
  // (3000 entities in 8 levels), which the GPU holds, serve again.
  EXPECT_TRUE(fs.plan_reused);
  EXPECT_EQ(fs.upload_bytes, 1000u * sizeof(gpu::ValueDelta));
  EXPECT_EQ(fs.copy_regions, 1u);
  const float4x4 w = world_of(gpu, store, 3);  // parent 0 at (0, 0, 1), itself at (0, 3, 1)
  EXPECT_EQ(w[3], float4(0, 3, 2, 1));

  // The next frame is quiet, then a contiguous change goes back to plain regions.
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "quiet"), 1.0);
  EXPECT_EQ(gpu.last_frame().upload_bytes, 0u);
}

// Structural edits all over a large order: the order entries they rewrite go up as (entry, slot)
// pairs for the scatter pass, so the bytes follow the edits, not the span between them.
TEST_F(GpuUploads, ScatteredStructuralEditsSendOnlyTheOrderEntriesTheyRewrite) {
  EntityStore store;
  for (EntityId id = 0; id < 20000; ++id) {
    store.create(id);
    store.set_translation(id, float3(1, 0, 0));
    if (id >= 100) store.set_parent(id, id % 100);  // 100 roots with 199 leaves each
  }
  Propagator gpu = make_propagator(ctx());
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
  // 600 leaves change roots: each keeps its level, and with it its entry: nothing of the order
  // is sent, only the leaves' own records.
  for (EntityId id = 200; id < 20000; id += 33) store.set_parent(id, (id + 1) % 100);
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "re-parented"), 1.0);
  EXPECT_EQ(gpu.last_frame().order_entries_uploaded, 0u);
  EXPECT_FALSE(gpu.last_frame().order_scattered);
  // 600 leaves go below another leaf: each leaves its level-1 segment (one entry rewritten, the
  // last one moved into its place) and joins level 2 (one entry), at most 2 entries each.
  for (EntityId id = 201; id < 20000; id += 33) store.set_parent(id, id - 1);
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "moved deeper"), 1.0);
  const FrameStats& fs = gpu.last_frame();
  EXPECT_TRUE(fs.order_scattered);
  EXPECT_LE(fs.order_entries_uploaded, 2u * 600u);
  EXPECT_LT(fs.upload_bytes, 200u * 1024u) << "the order is 80 KB; 600 re-parents move far less";
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "quiet"), 1.0);
  EXPECT_EQ(gpu.last_frame().order_entries_uploaded, 0u);
}

// The rare records (384 bytes each) are the array whose part in use can pass one binding while
// the per-slot arrays fit. Bindings capped at 2,000 LocalToWorlds: 320 records fit (122,880
// bytes, in a table that has grown to 357 by eighths), 340 do not. The evaluate passes read no
// record through a texel view, so theirs stay (device addresses with texel reads).
TEST_F(GpuUploads, RareRecordsTakeDeviceAddressesOnlyWhenThoseInUsePassOneBinding) {
  EntityStore store;
  ValueSource v(5);
  build_binary_tree(store, v, 2000);
  for (EntityId id = 0; id < 5 * 320; id += 5) store.add(id, Component::CompositeRotation);
  Propagator gpu = make_propagator(
      ctx(), {.max_binding_bytes = 2000 * 64, .texel_reads = TexelReads::Always});
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "320 rare records"), 1.0);
  EXPECT_TRUE(gpu.last_frame().descriptors);
  EXPECT_TRUE(gpu.last_frame().texel_reads);
  for (EntityId id = 1; id < 5 * 20; id += 5) store.add(id, Component::CompositeRotation);
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "340 rare records"), 1.0);
  EXPECT_FALSE(gpu.last_frame().descriptors);
  EXPECT_TRUE(gpu.last_frame().texel_reads);
}

// record() twice for one update() (a frame recorded into a second command buffer): the second
// sends nothing and scatters nothing; its passes, under a new frame number, find no change to
// recompute, and the results stay.
TEST_F(GpuUploads, RecordingAnUpdateTwiceSendsAndScattersItOnce) {
  for (ValueWrites writes : {ValueWrites::Staged, ValueWrites::InPlace}) {
    const bool staged = writes == ValueWrites::Staged;
    SCOPED_TRACE(staged ? "values staged" : "values in place (where the device allows)");
    EntityStore store;
    ValueSource v(11);
    for (EntityId id = 0; id < 3000; ++id) {
      store.create(id);
      store.set_translation(id, v.vec(2));
      if (id > 0) store.set_parent(id, (id - 1) / 3);
    }
    // The whole order, skipping the unchanged.
    Propagator gpu = make_propagator(ctx(), {.value_writes = writes, .work_list_max = 0});
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
    // Values alone, a Scale added (a whole record), a spawn (an order entry).
    for (EntityId id = 5; id < 3000; id += 10) store.set_translation(id, v.vec(2));
    store.set_scale(7, 2.0f);
    store.create(5000);
    store.set_translation(5000, v.vec(1));
    store.set_parent(5000, 100);
    FrameStats once, twice;
    auto recorded_twice = [&]() -> Status {
      if (Status st = gpu.update(store); !st) return st;
      if (Status st = gpu.run_staged(store); !st) return st;
      once = gpu.last_frame();
      if (Status st = gpu.run_staged(store); !st) return st;
      twice = gpu.last_frame();
      return ok_status();
    };
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "recorded twice", recorded_twice), 1.0);
    EXPECT_EQ(once.values_only_entities, 300u);
    EXPECT_EQ(once.staged_entities, 302u);  // 7 and 5000 whole
    const uint32_t staged_values = once.values_only_entities - once.values_in_place;
    if (staged) {
      EXPECT_EQ(staged_values, 300u);
    }
    EXPECT_GE(once.upload_bytes,
              staged_values * sizeof(gpu::ValueDelta) + 2u * sizeof(gpu::EntityDelta));
    EXPECT_EQ(twice.upload_bytes, 0u);
    EXPECT_EQ(twice.copy_regions, 0u);
    // The scatters (one per kind of record sent), once.
    EXPECT_EQ(once.dispatches, twice.dispatches + (staged_values ? 2 : 1));
  }
}

// On a CPU device, device memory is host memory whose pages do not exist until written: a full
// upload into fresh buffers has a helper thread write zeros over the per-slot arrays while
// update() packs (host/buffer_prefaulter.h), and its record() then clears nothing. Slots without an
// entity (despawned before the first frame) must read zeros all the same. Only such a frame
// zeroes, and only on a CPU device; a full upload into buffers an earlier scene wrote (another
// store, within the room the first made) zeroes nothing and clears them as before: its empty
// slots read zeros, not the matrices the first scene left there.
TEST_F(GpuUploads, AFreshSceneIsZeroedAheadOnACpuDeviceAndItsEmptySlotsReadZeros) {
  VkPhysicalDeviceProperties props{};
  vkGetPhysicalDeviceProperties(ctx().physical_device(), &props);
  const bool cpu_device = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  auto empty_slots_read_zeros = [&](Propagator& gpu, const EntityStore& store, const char* what) {
    auto back = gpu.read_back();
    ASSERT_TRUE(back.ok()) << what;
    uint32_t empty = 0;
    for (uint32_t slot = 0; slot < store.slot_capacity(); ++slot) {
      if (store.alive_at(slot)) continue;
      ++empty;
      EXPECT_EQ((*back)[slot], float4x4(0.0f)) << what << ": empty slot " << slot;
    }
    EXPECT_GT(empty, 300u) << what;
  };
  EntityStore a;
  ValueSource v(11);
  build_binary_tree(a, v, 3000);
  for (EntityId id = 100; id < 3000; id += 7) a.destroy(id);
  Propagator gpu = make_propagator(ctx());
  CpuReference cpu;
  ASSERT_LE(frame_and_compare(gpu, cpu, a, "first frame"), 1.0);
  const FrameStats first = gpu.last_frame();
  EXPECT_TRUE(first.full_upload);
  if (cpu_device) {
    // LocalToWorld (64 bytes a slot) and the dirty marks (4), for every slot and the room
    // beyond, and flags, parent, rare and static indices (4 each) where the full pack does not
    // write them in place; and the order list (4 bytes an entity), which the record's copy fills.
    const uint64_t per_slot = 64 + 4 + (first.in_place_inputs ? 0 : 4 * 4);
    EXPECT_GE(first.zeroed_ahead_bytes, a.slot_capacity() * per_slot + a.size() * 4);
    EXPECT_LE(first.zeroed_ahead_bytes, first.device_bytes);
  } else {
    EXPECT_EQ(first.zeroed_ahead_bytes, 0u);
  }
  empty_slots_read_zeros(gpu, a, "first frame");
  for (EntityId id = 0; id < 3000; id += 5)
    if (a.contains(id)) a.set_translation(id, v.vec(2));
  ASSERT_LE(frame_and_compare(gpu, cpu, a, "values"), 1.0);
  EXPECT_EQ(gpu.last_frame().zeroed_ahead_bytes, 0u);

  // Another store's first frame: a binary tree of n entities, all but every keep-th of the
  // first `emptied` despawned; what it zeroed ahead.
  auto another_store = [&](EntityId n, EntityId emptied, EntityId keep, const char* what) {
    EntityStore other;  // (perhaps where the last one lived: a store is known by its identity)
    build_binary_tree(other, v, n);
    for (EntityId id = 0; id < emptied; ++id)
      if (id % keep != 0) other.destroy(id);
    CpuReference reference;
    EXPECT_LE(frame_and_compare(gpu, reference, other, what), 1.0);
    EXPECT_TRUE(gpu.last_frame().full_upload) << what;
    empty_slots_read_zeros(gpu, other, what);
    return gpu.last_frame().zeroed_ahead_bytes;
  };
  // Every slot of it live in the first, two in three of them empty here.
  EXPECT_EQ(another_store(2400, 2400, 3, "another store"), 0u) << "its buffers are not fresh";
  // Past the room of the first: its per-slot pieces are made afresh (zeroed ahead on a CPU
  // device), and the old pieces' contents are copied into them on the GPU (the growth of a live
  // scene keeps what the GPU holds), so the clears must run all the same.
  const uint64_t larger = another_store(6000, 3500, 4, "a larger store");
  if (cpu_device) {
    EXPECT_GT(larger, 0u);
  }
}

// Where the device has memory that is device-local and host-visible at once (integrated GPUs
// and CPU devices, whose device memory is host memory; ValueWrites::Auto uses it there for
// frames that change a quarter of the slots or more), update() writes plain value changes
// straight into the per-slot arrays with their dirty marks: nothing is sent or scattered for
// them, whole order or work list. A frame whose growth
// replaced a piece of those arrays (copied over on the GPU by its record, which would overwrite
// what was written) stages its values instead.
TEST_F(GpuUploads, ValuesWrittenInPlaceAreNeitherSentNorScattered) {
  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(ctx().physical_device(), &mem);
  // The Propagator's own rule (device-local, host-visible, coherent, in the largest device-local
  // heap), so the test skips exactly where in-place writes are refused.
  const bool shared = device_mapped_types(mem) != 0;
  if (!shared) GTEST_SKIP() << "no device-local host-visible memory in the main heap";
  for (uint32_t work_list_max : {0u, UINT32_MAX}) {
    SCOPED_TRACE(work_list_max ? "work lists" : "the whole order, skipping the unchanged");
    EntityStore store;
    ValueSource v(3);
    build_binary_tree(store, v, 3000);
    Propagator gpu = make_propagator(
        ctx(), {.value_writes = ValueWrites::InPlace, .work_list_max = work_list_max});
    CpuReference cpu;
    ASSERT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
    for (EntityId id = 0; id < 3000; id += 10) store.set_translation(id, v.vec(2));
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "values"), 1.0);
    const FrameStats values = gpu.last_frame();
    EXPECT_EQ(values.values_only_entities, 300u);
    EXPECT_EQ(values.values_in_place, 300u);
    // Translation, rotation and scale (16 bytes each) and the dirty mark, written by update().
    EXPECT_EQ(values.in_place_bytes, 300u * (3 * 16 + 4));
    if (!work_list_max) {  // the plan and its table serve again: nothing at all to send
      EXPECT_TRUE(values.plan_reused);
      EXPECT_EQ(values.upload_bytes, 0u);
    }
    // 500 spawned past the arrays' room (an eighth above 3,000 slots) beside 100 new values.
    for (EntityId id = 5000; id < 5500; ++id) {
      store.create(id);
      store.set_translation(id, v.vec(1));
      store.set_parent(id, id - 5000);
    }
    for (EntityId id = 1; id < 1000; id += 10) store.set_translation(id, v.vec(2));
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "grown"), 1.0);
    EXPECT_EQ(gpu.last_frame().values_only_entities, 100u);
    EXPECT_EQ(gpu.last_frame().values_in_place, 0u) << "staged behind the piece copy";
    EXPECT_EQ(gpu.last_frame().in_place_bytes, 0u);
    for (EntityId id = 2; id < 3000; id += 10) store.set_translation(id, v.vec(2));
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "values after growth"), 1.0);
    EXPECT_EQ(gpu.last_frame().values_in_place, 300u);
  }
  // Staged on request: the same frames, the values as records.
  EntityStore store;
  ValueSource v(3);
  build_binary_tree(store, v, 3000);
  Propagator staged = make_propagator(ctx(), {.value_writes = ValueWrites::Staged});
  CpuReference cpu;
  ASSERT_LE(frame_and_compare(staged, cpu, store, "first"), 1.0);
  for (EntityId id = 0; id < 3000; id += 10) store.set_translation(id, v.vec(2));
  EXPECT_LE(frame_and_compare(staged, cpu, store, "values"), 1.0);
  EXPECT_EQ(staged.last_frame().values_in_place, 0u);
  EXPECT_EQ(staged.last_frame().in_place_bytes, 0u);
  EXPECT_GE(staged.last_frame().upload_bytes, 300u * sizeof(gpu::ValueDelta));
}

}  // namespace
}  // namespace tprop::test
