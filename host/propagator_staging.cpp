// Staging: packs entities into the persistently mapped staging mirrors at their slots and stages
// the depth order's rewritten entries, so that a frame moves only what changed (a store the
// Propagator has not seen packs everything; growth adds pieces to the arrays and keeps what the
// GPU holds, see propagator_pieces.cpp); propagator_plan.cpp then chooses what the passes
// evaluate.
#include "propagator_state.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <span>

#include "gpu_pack.h"
#include "prefetch.h"
#include "stream_store.h"

namespace tprop {

using namespace propagator_detail;
using gpu::kNoIndex;

namespace {

// At most this many copy regions per buffer and frame. Thousands of tiny regions cost more to
// record and execute than a few larger ones (measured: the synchronization validation layer
// takes 20 times longer on a frame of 4096 regions per array than on one of 256). Merging runs
// across gaps is harmless, since the staging mirror holds every current byte.
constexpr size_t kMaxRegions = 256;

// Rewritten order entries in a run at least this long go up as a copy region (4 bytes an entry
// and a region's fixed cost), shorter runs as scattered pairs (8 bytes an entry).
constexpr uint32_t kCopyRunMin = 16;

// How far ahead a pass over scattered slots prefetches: enough misses in flight to cover a
// memory latency, few enough that the lines are still there when their turn comes.
constexpr uint32_t kPrefetchAhead = 16;

// Ranges -> sorted, disjoint ranges, the closest merged until at most `most` remain.
std::vector<Range> coalesce(std::vector<Range> ranges, size_t most = kMaxRegions) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  std::vector<Range> out;
  for (uint32_t gap = 0;; gap = gap ? gap * 2 : 1) {
    out.clear();
    for (const Range& r : ranges) {
      if (!out.empty() && r.begin <= out.back().end + gap) {
        out.back().end = std::max(out.back().end, r.end);
      } else {
        out.push_back(r);
      }
    }
    if (out.size() <= most) return out;
  }
}

// The store's copy of a slot's values (StoreChanges::value_records) against its record, bit for
// bit (assertions only).
[[maybe_unused]] bool same_values(const ValueSnapshot& a, const ValueSnapshot& b) {
  return a.components() == b.components() &&
         std::memcmp(&a.translation, &b.translation, sizeof a.translation) == 0 &&
         std::memcmp(&a.rotation, &b.rotation, sizeof a.rotation) == 0 &&
         std::memcmp(&a.non_uniform_scale, &b.non_uniform_scale, sizeof a.non_uniform_scale) == 0 &&
         std::memcmp(&a.scale, &b.scale, sizeof a.scale) == 0;
}

// A delta written once, field by field from registers, by streamed stores (the staging memory is
// only written here and read by the GPU; it may be uncached on a GPU's host).
void stream_delta(gpu::EntityDelta* delta, uint32_t slot, uint32_t flags, uint32_t parent,
                  uint32_t rare_index, uint32_t static_index, const PackedEntity& e) {
  char* to = reinterpret_cast<char*>(delta);
  assert(reinterpret_cast<uintptr_t>(to) % 16 == 0 && "mapped memory is 64-byte aligned");
  static_assert(offsetof(gpu::EntityDelta, static_index) == 16 &&
                offsetof(gpu::EntityDelta, translation_x) == 20 &&
                offsetof(gpu::EntityDelta, rotation) == 32 && sizeof(gpu::EntityDelta) == 64);
  stream_row(to, slot, flags, parent, rare_index);
  stream_row(to + 16, static_index, std::bit_cast<uint32_t>(e.translation.x),
             std::bit_cast<uint32_t>(e.translation.y), std::bit_cast<uint32_t>(e.translation.z));
  stream_row(to + 32, e.rotation.x, e.rotation.y, e.rotation.z, e.rotation.w);
  stream_row(to + 48, e.scale.x, e.scale.y, e.scale.z, e.scale.w);
}

// A value delta, the same way: the translation's floats and the slot as one row of bits.
void stream_value_delta(gpu::ValueDelta* delta, uint32_t slot, const PackedValues& e) {
  char* to = reinterpret_cast<char*>(delta);
  assert(reinterpret_cast<uintptr_t>(to) % 16 == 0 && "mapped memory is 64-byte aligned");
  static_assert(offsetof(gpu::ValueDelta, slot) == 12 && offsetof(gpu::ValueDelta, rotation) == 16 &&
                sizeof(gpu::ValueDelta) == 48);
  stream_row(to, std::bit_cast<uint32_t>(e.translation.x), std::bit_cast<uint32_t>(e.translation.y),
             std::bit_cast<uint32_t>(e.translation.z), slot);
  stream_row(to + 16, e.rotation.x, e.rotation.y, e.rotation.z, e.rotation.w);
  stream_row(to + 32, e.scale.x, e.scale.y, e.scale.z, e.scale.w);
}

}  // namespace

void Propagator::Impl::write_values_in_place(uint32_t slot, const PackedValues& e,
                                             uint32_t frame) {
  // Plain stores: streamed ones, each a part of a line, made a frame of a million changes take
  // 28 to 31 ms of host update on lavapipe, plain ones 13 to 14.
  arrays[kTranslation].in_device<float4>(slot) = e.translation;
  arrays[kRotation].in_device<float4>(slot) = e.rotation;
  arrays[kScale].in_device<float4>(slot) = e.scale;
  dirty.in_device<uint32_t>(slot) = frame;
}

// Its own function, out of incremental_pack()'s: there the loop kept its state on the stack
// (a register for each of a dozen live values it has not), a store and a load each.
void Propagator::Impl::stage_values(const EntityStore& store, const StoreChanges& changes,
                                    bool write_in_place, uint32_t frame,
                                    std::vector<uint32_t>& not_alone) {
  // The staged deltas go one after the other: written through a cursor in the piece at hand,
  // not a piece look-up each.
  gpu::ValueDelta* cursor = nullptr;
  uint32_t room = 0;  // deltas left in the cursor's piece
  const uint32_t* const listed = changes.values.data();
  const size_t n = changes.values.size();
  // The store's copies of the values, in the list's order, where it kept them: then no record
  // is read (at 10M entities a 1% values frame spent 60% of its update in those misses).
  const ValueSnapshot* const logged =
      changes.value_records.size() == n ? changes.value_records.data() : nullptr;
  for (size_t k = 0; k < n; ++k) {
    if (!logged && k + kPrefetchAhead < n) store.prefetch(listed[k + kPrefetchAhead]);
    const uint32_t slot = listed[k];
    assert(slot < slots && store.alive_at(slot) && order.contains(slot));
    const ValueSnapshot& v = logged ? logged[k] : store.values_at(slot);
    assert(same_values(v, store.values_at(slot)) && "the store's copy is its record's");
    if (!values_alone_suffice(v.components())) {
      not_alone.push_back(slot);
      continue;
    }
    const PackedValues e = pack_values(v);
    if (write_in_place) {
      write_values_in_place(slot, e, frame);
      in_place_slots.push_back(slot);
    } else {
      if (room == 0) {
        cursor = &value_deltas.staged<gpu::ValueDelta>(value_count);
        room = value_deltas.size_of(value_count >> value_deltas.shift) -
               value_deltas.index_in_piece(value_count);
      }
      stream_value_delta(cursor++, slot, e);
      --room;
      ++value_count;
    }
  }
}

Result<uint32_t> Propagator::Impl::allocate_rare() {
  if (!rare_free.empty()) {
    const uint32_t r = rare_free.back();
    rare_free.pop_back();
    return r;
  }
  if (rare_count >= rare.capacity || !rare) {
    const uint32_t old_count = rare_count;
    // The mirror keeps its records; the replaced last piece's are uploaded again, with the rest
    // staged so far (a growth is rare, one piece at most is new).
    if (Status st = grow(rare, rare_count + 1, false, true); !st) return st.error();
    if (old_count) dirty_rare.push_back({0, old_count});
  }
  return rare_count++;
}

void Propagator::Impl::release_rare(uint32_t slot) {
  if (side[slot].rare == kNoIndex) return;
  rare_free.push_back(side[slot].rare);
  side[slot].rare = kNoIndex;
}

Result<uint32_t> Propagator::Impl::static_index_for(uint32_t slot) {
  if (side[slot].static_index != kNoIndex) return side[slot].static_index;
  uint32_t idx;
  if (!static_free.empty()) {
    idx = static_free.back();
    static_free.pop_back();
  } else {
    if (static_count >= frozen.capacity || !frozen) {
      // Doubling; the frozen values stay on the GPU (a replaced piece is copied over).
      const uint64_t wanted = std::max<uint64_t>(64u, uint64_t(frozen.capacity) * 2);
      auto g = prepare_growth(frozen, static_count + 1,
                              static_cast<uint32_t>(std::min<uint64_t>(wanted, UINT32_MAX)));
      if (!g) return g.error();
      apply_growth(std::move(*g), true, false);
      static_valid.resize(frozen.capacity, 0);
    }
    idx = static_count++;
  }
  static_valid[idx] = 0;
  side[slot].static_index = idx;
  return idx;
}

void Propagator::Impl::release_static(uint32_t slot) {
  if (side[slot].static_index == kNoIndex) return;
  static_valid[side[slot].static_index] = 0;
  static_free.push_back(side[slot].static_index);
  side[slot].static_index = kNoIndex;
}

Status Propagator::Impl::pack(const EntityStore& store, uint32_t slot, gpu::EntityDelta* delta) {
  PackedEntity e;
  e.flags = 0;  // a dead slot: scatter.comp clears its LocalToWorld
  uint32_t parent = kNoIndex, rare_index = kNoIndex, static_index = kNoIndex;
  if (store.alive_at(slot) && order.contains(slot)) {
    parent = order.parent_of(slot);
    StaticMode mode = StaticMode::NotStatic;
    if (store.has_at(slot, Component::Static)) {
      auto idx = static_index_for(slot);
      if (!idx) return idx.error();
      static_index = *idx;
      // As CpuReference: frozen once baked, unless this backend never computed it.
      if (store.static_baked_at(slot) && static_valid[static_index]) {
        mode = StaticMode::Frozen;
      } else {
        mode = StaticMode::Store;
        // Listed first: should listing it run out of memory, it is not marked either.
        pending_statics.push_back(slot);
        static_valid[static_index] = 1;  // the frame about to be recorded computes it
      }
    } else {
      release_static(slot);
    }
    e = pack_entity(store, slot, parent != kNoIndex, mode);
    if (e.needs_rare) {
      if (side[slot].rare == kNoIndex) {
        auto r = allocate_rare();
        if (!r) return r.error();
        side[slot].rare = *r;
      }
      rare_index = side[slot].rare;
      staged_rare(rare_index) = pack_rare(store, slot);
      dirty_rare.push_back({rare_index, rare_index + 1});
    } else {
      release_rare(slot);
    }
  } else {
    release_static(slot);
    release_rare(slot);
  }

  note_features(slot, e, parent != kNoIndex,
                rare_index != kNoIndex ? &staged_rare(rare_index) : nullptr);

  // A frame after the first uploads deltas only, and any full upload packs every slot anew, so
  // the mirrors are written only for full uploads (seven fewer scattered writes per change), and
  // exist only then (and not for the arrays written in place: packed_at()).
  if (!delta) {
    packed_at<uint32_t>(kFlags, slot) = e.flags;
    packed_at<float4>(kTranslation, slot) = e.translation;
    packed_at<float4>(kRotation, slot) = e.rotation;
    packed_at<float4>(kScale, slot) = e.scale;
    packed_at<uint32_t>(kParent, slot) = parent;
    packed_at<uint32_t>(kRareIndex, slot) = rare_index;
    packed_at<uint32_t>(kStaticIndex, slot) = static_index;
  } else {
    stream_delta(delta, slot, e.flags, parent, rare_index, static_index, e);
  }
  return ok_status();
}

// The order's entries the GPU lacks: all of them after growth or a full upload, else the entries
// LevelOrder rewrote: runs (relocated segments, appends to one level) as copy regions, single
// entries (a swap-remove's, an insertion's) as (entry, slot) pairs that the scatter pass writes.
// Nothing is sorted: a frame of thousands of moves rewrites thousands of scattered entries, and
// sorting them cost more than all the order's other work. An entry may be listed twice, or in a
// run and as a pair: every copy carries its final value, so the order of the writes is moot.
Status Propagator::Impl::stage_order() {
  const std::span<const uint32_t> entries = order.entries();
  const uint32_t n = static_cast<uint32_t>(entries.size());
  dirty_order.clear();
  order_changes.clear();
  if (full_upload || !order_list) {
    if (Status st = grow(order_list, std::max(n, 1u), false, false); !st) return st;
    if (n) {
      order_list.stage(0, entries.data(), n);
      dirty_order.push_back({0, n});
    }
    stats.order_entries_uploaded += n;
    return ok_status();
  }
  // Grown past its room (spawns, a relocated level): the GPU keeps what it holds (a replaced
  // piece is copied over by the next record()) and this frame sends what was rewritten, as any
  // other; sending the whole order again cost such a frame 4 MB of upload at 1M entities.
  if (n > order_list.capacity)
    if (Status st = grow(order_list, n, true, false); !st) return st;
  std::vector<Range> runs;
  // Thousands of scattered entries, most of them rewritten early in the update and gone from
  // the core's cache since: asked for ahead.
  const std::vector<std::pair<uint32_t, uint32_t>>& rewritten = order.rewritten();
  for (size_t i = 0; i < rewritten.size(); ++i) {
    if (i + kPrefetchAhead < rewritten.size() && rewritten[i + kPrefetchAhead].first < n)
      prefetch_line(&entries[rewritten[i + kPrefetchAhead].first]);
    auto [b, e] = rewritten[i];
    e = std::min(e, n);
    if (b >= e) continue;
    stats.order_entries_uploaded += e - b;
    if (e - b >= kCopyRunMin) {
      runs.push_back({b, e});
      continue;
    }
    for (uint32_t k = b; k < e; ++k) {
      order_changes.push_back(k);
      order_changes.push_back(entries[k]);
    }
  }
  stats.order_scattered = !order_changes.empty();
  // Sorted and merged (across gaps where there are too many), then staged from the order itself:
  // a merged range's gaps get their current entries too, and the scattered pairs never touch the
  // mirror (one cache and TLB miss an entry saved).
  dirty_order = coalesce(std::move(runs));
  for (const Range& r : dirty_order)
    order_list.stage(r.begin, entries.data() + r.begin, r.end - r.begin);
  return ok_status();
}

Status Propagator::Impl::full_pack(const EntityStore& store) {
  if (Status st = ensure_slot_capacity(std::max(store.slot_capacity(), 1u)); !st) return st;
  slots = store.slot_capacity();
  if (Status st = make_mirrors(slots); !st) return st;
  // The order is known before the pack: its room made now, so that the pieces made for it join
  // the prefaulter's batch (on lavapipe, the record's copy into a 1M scene's fresh 4 MB of order
  // faulted it in page by page: most of what was left of a first frame's upload stage).
  if (Status st = grow_fresh(order_list, std::max(uint32_t(order.entries().size()), 1u)); !st)
    return st;
  // No per-slot piece or mirror is made or replaced from here to the end of update(), which
  // finishes this; the pack below writes the mirrors and the arrays written in place meanwhile.
  start_prefaulting();
  // A replaced piece of an array written in place is not copied into its successor: the pack
  // below writes every slot of translation, rotation and scale there, and the copy, recorded
  // after it, would undo that (the dirty marks' are cleared by the full upload's record anyway).
  for (size_t k = 0; k < piece_copies.size();) {
    if (piece_copies[k].to->device_kind != BufferKind::DeviceMapped) {
      ++k;
      continue;
    }
    retired.push_back(std::move(piece_copies[k].from));
    piece_copies.erase(piece_copies.begin() + std::ptrdiff_t(k));
  }
  side.resize(slots);
  // Static indices of slots that are gone or no longer Static go back to the free list.
  for (uint32_t slot = 0; slot < slots; ++slot)
    if (side[slot].static_index != kNoIndex &&
        (!store.alive_at(slot) || !store.has_at(slot, Component::Static)))
      release_static(slot);
  for (SlotSide& e : side) e.rare = kNoIndex;
  reset_features();
  rare_free.clear();
  rare_count = 0;
  dirty_rare.clear();
  pending_statics.clear();
  full_upload = true;
  for (uint32_t slot = 0; slot < slots; ++slot)
    if (Status st = pack(store, slot); !st) return st;
  for (int a = 0; a < kArrays; ++a)
    if (!mirrors(Array(a))) stats.in_place_bytes += uint64_t(slots) * kStride[a];
  value_count = 0;
  delta_count = 0;
  in_place_slots.clear();
  dirty_rare.clear();
  if (rare_count) dirty_rare.push_back({0, rare_count});
  if (Status st = stage_order(); !st) return st;
  // Room for the deltas of the frames to come (values for one in 64 slots, whole records for one
  // in 256: spawns and re-parents are rarer), made and its pages brought in with the full frame:
  // the first frame that changed 10,000 of a million entities spent 0.5 ms of its 0.7 on them.
  if (Status st = grow(value_deltas, std::max(1024u, slots / 64), false, false, Slack::PerFrame);
      !st)
    return st;
  if (Status st = grow(deltas, std::max(1024u, slots / 256), false, false, Slack::PerFrame); !st)
    return st;
  for (const Pieced* m : {&value_deltas, &deltas})
    for (const Buffer& piece : m->staging) std::memset(piece.mapped(), 0, piece.size());
  // And for the level table with a structural frame's order changes (one in 64 slots) and a
  // work list as long as work_list_max allows: each growth is two allocations, a millisecond or
  // more on an NVIDIA GPU in the frame that needs it.
  if (Status st = grow(levels, std::max(4096u, slots / 64), false, false, Slack::PerFrame); !st)
    return st;
  // (At most 65,536 ahead: a work list allowed to hold the whole scene grows when it must.)
  if (Status st = grow(work_list, std::min({options.work_list_max, std::max(slots, 1u), 65536u}),
                       false, false, Slack::PerFrame);
      !st)
    return st;
  stats.full_upload = true;
  stats.staged_entities = order.size();
  stats.moved_entities = order.size();
  return plan_work(store, {}, 0, true);
}

Status Propagator::Impl::incremental_pack(const EntityStore& store, const StoreChanges& changes,
                                          const std::vector<uint32_t>& computed_statics) {
  // More slots than the arrays hold: more pieces (or a longer last one), what the GPU holds
  // stays, and the new slots read as zeros until their entities' deltas arrive.
  if (Status st = ensure_slot_capacity(std::max(store.slot_capacity(), 1u)); !st) return st;
  slots = store.slot_capacity();
  side.resize(slots);
  next_frame_mark();
  full_upload = false;
  dirty_rare.clear();

  // What to pack whole: slots changed beyond their plain values, entities whose attached parent
  // may have changed, and the Statics computed last frame, which are baked now (their flags
  // switch to ReadFrozen).
  std::vector<uint32_t> to_pack;
  to_pack.reserve(changes.slots.size() + order.relinked().size() + computed_statics.size());
  auto add = [&](uint32_t slot) {
    if (slot < slots && side[slot].seen != frame_mark) {
      side[slot].seen = frame_mark;
      to_pack.push_back(slot);
    }
  };
  // Scattered bookkeeping lines (a world frame lists some 3,500 slots): asked for ahead.
  auto add_all = [&](std::span<const uint32_t> list) {
    for (size_t k = 0; k < list.size(); ++k) {
      if (k + kPrefetchAhead < list.size() && list[k + kPrefetchAhead] < slots)
        prefetch_line(&side[list[k + kPrefetchAhead]]);
      add(list[k]);
    }
  };
  add_all(changes.slots);
  add_all(order.relinked());
  for (uint32_t slot : computed_statics) add(slot);

  // Each slot of changes.values gets a value delta, or joins the slots packed whole. (A slot
  // packed whole for another reason may get both: the values agree, and the scatter of whole
  // deltas runs after the values' one.)
  value_count = 0;
  delta_count = 0;
  in_place_slots.clear();
  const std::vector<uint32_t>& values = changes.values;
  // Written in place (ValueWrites) where that pays, unless a piece copy this frame's record()
  // makes would overwrite what lands in a replaced piece of those arrays: staged then.
  const bool write_in_place =
      in_place && (options.value_writes == ValueWrites::InPlace || dense_values(values.size())) &&
      std::none_of(piece_copies.begin(), piece_copies.end(), [&](const PieceCopy& c) {
        return c.to == &arrays[kTranslation] || c.to == &arrays[kRotation] ||
               c.to == &arrays[kScale] || c.to == &dirty;
      });
  const uint32_t frame = next_frame_number();  // the mark the passes look for
  if (!values.empty() && !write_in_place)
    if (Status st = grow(value_deltas, uint32_t(values.size()), false, false, Slack::PerFrame); !st)
      return st;
  // Plain value changes, most of a frame's: the values alone, one record line each (which
  // take_changes() leaves unread), without the slot's bookkeeping here or in the order (two
  // fewer scattered lines a change), unless more of the entity depends on them.
  std::vector<uint32_t> not_alone;
  stage_values(store, changes, write_in_place, frame, not_alone);
  for (const uint32_t slot : not_alone) add(slot);
  stats.values_in_place = static_cast<uint32_t>(in_place_slots.size());
  // Translation, rotation, scale and the dirty mark (write_values_in_place).
  stats.in_place_bytes += uint64_t(stats.values_in_place) *
                          (kStride[kTranslation] + kStride[kRotation] + kStride[kScale] + 4);
  stats.values_only_entities = value_count + stats.values_in_place;
  if (!to_pack.empty())
    if (Status st = grow(deltas, uint32_t(to_pack.size()), false, false, Slack::PerFrame); !st)
      return st;
  for (size_t k = 0; k < to_pack.size(); ++k) {
    // The slots are scattered: ask for the ones a few entities ahead now, so that their cache
    // misses overlap with this one's work.
    if (k + kPrefetchAhead < to_pack.size()) {
      const uint32_t ahead = to_pack[k + kPrefetchAhead];
      store.prefetch(ahead);
      order.prefetch(ahead);
      prefetch_line(&side[ahead]);
    }
    if (Status st = pack(store, to_pack[k], &deltas.staged<gpu::EntityDelta>(delta_count)); !st)
      return st;
    ++delta_count;
  }
  stream_fence();
  std::vector<Range> rare_ranges = std::move(dirty_rare);
  dirty_rare = rare_ranges.empty() ? std::vector<Range>{} : coalesce(std::move(rare_ranges));
  if (Status st = stage_order(); !st) return st;
  stats.staged_entities = value_count + delta_count + stats.values_in_place;
  stats.moved_entities = static_cast<uint32_t>(order.moved().size());

  // Recompute below everything packed (values or parents changed) and everything moved: from a
  // work list of their subtrees while they are few, else over the whole order, for which their
  // count is all the plan needs (gathered anyway, a 10M values frame copied 400 KB of slots, and
  // a 10M everything-moves frame 40 MB of fresh pages, only to be counted).
  const size_t seed_count = to_pack.size() + changes.values.size() + order.moved().size();
  std::vector<uint32_t> seeds;
  if (seed_count <= options.work_list_max) {
    seeds = std::move(to_pack);
    seeds.insert(seeds.end(), changes.values.begin(), changes.values.end());
    seeds.insert(seeds.end(), order.moved().begin(), order.moved().end());
  }
  return plan_work(store, seeds, seed_count, false);
}

}  // namespace tprop
