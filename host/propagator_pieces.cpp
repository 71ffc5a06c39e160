// Arrays in pieces: every GPU array is split into pieces of a power-of-two number of elements,
// each its own buffer of at most max_buffer_bytes, so no array is bound by one allocation
// (maxMemoryAllocationSize) and a scene is limited by device memory alone. Growth keeps the full
// pieces where they are, so what the GPU holds stays: only a shorter last piece is replaced, and
// its contents are copied over on the GPU by the next record(). The shaders find a piece through
// the piece tables built here (shaders/scene_layout.h).
#include "propagator_state.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>

namespace tprop {

using namespace propagator_detail;

namespace {

// log2 of the most `stride`-byte elements a piece of at most `bytes` holds, a power of two.
// (At most 30: 31 tags a piece's own address, gpu::kPieceDirect.)
uint32_t piece_shift(VkDeviceSize bytes, VkDeviceSize stride) {
  const uint64_t elements = std::max<uint64_t>(bytes / stride, 1);
  return std::min<uint32_t>(static_cast<uint32_t>(std::bit_width(elements)) - 1,
                            gpu::kPieceDirect - 1);
}

std::string piece_name(const Pieced& m, uint32_t piece) {
  return piece == 0 ? m.name : m.name + "#" + std::to_string(piece);
}

}  // namespace

void Pieced::stage(uint32_t first, const void* from, uint32_t count) const {
  const auto* bytes = static_cast<const uint8_t*>(from);
  while (count) {
    const uint32_t at = index_in_piece(first);
    const uint32_t n =
        static_cast<uint32_t>(std::min<uint64_t>(count, (uint64_t(1) << shift) - at));
    std::memcpy(static_cast<uint8_t*>(staging[first >> shift].mapped()) + VkDeviceSize(at) * stride,
                bytes, VkDeviceSize(n) * stride);
    bytes += VkDeviceSize(n) * stride;
    first += n;
    count -= n;
  }
}

void Propagator::Impl::init_array(Pieced& m, VkDeviceSize stride, const char* name,
                                  bool mirrored, uint32_t shift) {
  m.stride = stride;
  m.name = name;
  m.mirrored = mirrored;
  m.shift = shift == UINT32_MAX ? piece_shift(max_buffer_bytes, stride) : shift;
  assert(m.shift <= gpu::kPieceShiftMask && "the shift must fit a piece table's tag");
}

void Propagator::Impl::init_pieced_arrays() {
  // The per-slot arrays split at the same slots, where a piece of LocalToWorld is full (in its
  // layout: 48-byte elements give the same power of two of slots as 64-byte ones under any
  // power-of-two cap, a quarter fewer bytes a piece).
  const VkDeviceSize world_stride = output_stride();
  slot_shift = piece_shift(max_buffer_bytes, world_stride);
  for (int a = 0; a < kArrays; ++a)
    init_array(arrays[a], kStride[a], kArrayName[a], false, slot_shift);  // make_mirrors
  init_array(world, world_stride, "tprop.local_to_world", false, slot_shift);
  init_array(dirty, sizeof(uint32_t), "tprop.dirty", false, slot_shift);
  // ValueWrites: where plain value changes are written in place, the arrays they land in are
  // memory the host writes too.
  const ValueWrites writes = options.value_writes;
  const VkPhysicalDeviceType type = s->properties.deviceType;
  const bool uma = type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                   type == VK_PHYSICAL_DEVICE_TYPE_CPU;
  in_place = device_mapped_memory(*s) &&
             (writes == ValueWrites::InPlace || (writes == ValueWrites::Auto && uma));
  if (in_place)
    for (Pieced* m : {&arrays[kTranslation], &arrays[kRotation], &arrays[kScale], &dirty})
      m->device_kind = BufferKind::DeviceMapped;
  // And where device memory is host memory, a full upload packs the other per-slot inputs where
  // they live too (they are written on the host by full packs only, by the scatter after that):
  // their mirrors and copies were 16 of the 20 bytes a slot that a lavapipe first frame copied.
  // Not on a discrete GPU: its host-visible device memory may be a 256 MiB window.
  packs_in_place = in_place && uma;
  if (packs_in_place)
    for (Array a : {Array::kFlags, Array::kParent, Array::kRareIndex, Array::kStaticIndex})
      arrays[a].device_kind = BufferKind::DeviceMapped;
  init_array(rare, sizeof(gpu::RareRecord), "tprop.rare", true);
  init_array(value_deltas, sizeof(gpu::ValueDelta), "tprop.value_deltas", true);
  init_array(deltas, sizeof(gpu::EntityDelta), "tprop.deltas", true);
  init_array(order_list, sizeof(uint32_t), "tprop.order", true);
  init_array(work_list, sizeof(uint32_t), "tprop.work_list", true);
  init_array(levels, 2 * sizeof(uint32_t), "tprop.levels", true);
  init_array(frozen, sizeof(float4x4), "tprop.frozen", false);
}

Result<Growth> Propagator::Impl::prepare_growth(Pieced& m, uint32_t needed,
                                                uint32_t wanted) const {
  Growth g;
  needed = std::max(needed, 1u);
  if (needed <= m.capacity && m) return g;
  const uint64_t piece = uint64_t(1) << m.shift;
  // Slack, but never into a piece that `needed` does not reach: a scene that fits one piece
  // keeps one (and with it descriptors), and a full piece is never followed by a nearly empty one.
  const uint64_t reach = (uint64_t(needed) + piece - 1) / piece * piece;
  const uint64_t capacity = std::min<uint64_t>(
      std::clamp<uint64_t>(wanted, needed, reach), UINT32_MAX);
  g.array = &m;
  g.capacity = static_cast<uint32_t>(capacity);
  g.first = m.capacity >> m.shift;  // the full pieces stay
  const uint32_t pieces = static_cast<uint32_t>((capacity - 1) >> m.shift) + 1;
  for (uint32_t p = g.first; p < pieces; ++p) {
    const uint64_t elements = std::min<uint64_t>(capacity - (uint64_t(p) << m.shift), piece);
    const VkDeviceSize bytes = elements * m.stride;
    auto device = Buffer::create(*s, bytes, m.device_kind, piece_name(m, p));
    if (!device) return device.error();
    g.device.push_back(std::move(*device));
    if (m.mirrored) {
      auto staging = Buffer::create(*s, bytes, BufferKind::Upload, piece_name(m, p) + ".staging");
      if (!staging) return staging.error();
      g.staging.push_back(std::move(*staging));
    }
  }
  return g;
}

void Propagator::Impl::apply_growth(Growth&& g, bool keep_device, bool keep_staging) {
  if (!g.array) return;
  Pieced& m = *g.array;
  for (uint32_t k = 0; k < g.device.size(); ++k) {
    const uint32_t p = g.first + k;
    if (p < m.pieces()) {  // the old, shorter last piece
      const VkDeviceSize old_bytes = VkDeviceSize(m.size_of(p)) * m.stride;
      if (keep_staging && m.mirrored)
        std::memcpy(g.staging[k].mapped(), m.staging[p].mapped(), old_bytes);
      // A copy into this piece still waiting for record() comes from the piece that holds the
      // values; the buffer replaced now was never written (nothing was recorded since).
      const bool waiting =
          std::any_of(piece_copies.begin(), piece_copies.end(),
                      [&](const PieceCopy& c) { return c.to == &m && c.piece == p; });
      if (keep_device && !waiting)
        piece_copies.push_back({std::move(m.device[p]), &m, p, old_bytes});
      m.device[p] = std::move(g.device[k]);
      if (m.mirrored) m.staging[p] = std::move(g.staging[k]);
    } else {
      m.device.push_back(std::move(g.device[k]));
      if (m.mirrored) m.staging.push_back(std::move(g.staging[k]));
    }
  }
  m.capacity = g.capacity;
  ++buffers_generation;
}

uint32_t Propagator::Impl::wanted_with_slack(uint32_t needed, Slack slack) {
  const uint64_t wanted = slack == Slack::PerFrame
                              ? std::max<uint64_t>(2 * uint64_t(needed), 4096)
                              : std::max<uint64_t>(uint64_t(needed) + needed / 8, 64);
  return static_cast<uint32_t>(std::min<uint64_t>(wanted, UINT32_MAX));
}

Status Propagator::Impl::grow(Pieced& m, uint32_t needed, bool keep_device, bool keep_staging,
                              Slack slack) {
  auto g = prepare_growth(m, needed, wanted_with_slack(needed, slack));
  if (!g) return g.error();
  apply_growth(std::move(*g), keep_device, keep_staging);
  return ok_status();
}

Status Propagator::Impl::grow_fresh(Pieced& m, uint32_t needed) {
  auto g = prepare_growth(m, needed, wanted_with_slack(needed, Slack::Eighth));
  if (!g) return g.error();
  for (uint32_t p = g->first; p < g->first + uint32_t(g->device.size()); ++p)
    fresh_pieces.push_back({&m, p});
  apply_growth(std::move(*g), false, false);
  return ok_status();
}

Status Propagator::Impl::ensure_slot_capacity(uint32_t n) {
  fresh_pieces.clear();
  if (n <= slot_capacity && world) return ok_status();
  // All or nothing: every per-slot array's new pieces are made first and put in use only when
  // all exist, so a failed growth leaves the old set whole and the next update() tries again.
  const uint64_t slack = std::max<uint64_t>(uint64_t(n) + n / 8, 64);
  const uint32_t wanted = static_cast<uint32_t>(std::min<uint64_t>(slack, UINT32_MAX));
  Pieced* all[kArrays + 2];
  for (int a = 0; a < kArrays; ++a) all[a] = &arrays[a];
  all[kArrays] = &world;
  all[kArrays + 1] = &dirty;
  Growth growth[kArrays + 2];
  for (int a = 0; a < kArrays + 2; ++a) {
    auto g = prepare_growth(*all[a], n, wanted);
    if (!g) return g.error();
    growth[a] = std::move(*g);
  }
  // The GPU's contents stay (a replaced piece is copied over); no mirror grows: frames after a
  // full upload send deltas, and a full upload packs every slot anew into mirrors made for it.
  for (int a = 0; a < kArrays + 2; ++a) {
    const uint32_t first = growth[a].first, made = uint32_t(growth[a].device.size());
    for (uint32_t p = first; p < first + made; ++p) fresh_pieces.push_back({all[a], p});
    apply_growth(std::move(growth[a]), true, false);
  }
  slot_capacity = world.capacity;
  for (int a = 0; a < kArrays + 2; ++a)
    assert(all[a]->capacity == slot_capacity && "the per-slot arrays share their pieces");
  return ok_status();
}

// On a CPU device, a full upload's fresh pieces (per-slot, and the order list's) and its mirrors
// are brought in on the prefaulter's thread while the host packs (buffer_prefaulter.h says what
// that saves): those the pack writes (the mirrors, the order's staging, the per-slot inputs
// written in place) populated, the others zeroed (LocalToWorld, the dirty marks, which the pack
// leaves alone, and the order's device pieces, which the record's copy fills). Elsewhere device
// memory is the device's own, or its pages are the driver's to make.
void Propagator::Impl::start_prefaulting() {
  zeroing_bytes = 0;
  zeroing_clears = false;
  if (s->properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) {
    fresh_pieces.clear();
    return;
  }
  std::vector<const Buffer*> written, zeroed;
  for (const Pieced& m : arrays)
    for (const Buffer& mirror : m.staging) written.push_back(&mirror);
  uint32_t world_pieces = 0, dirty_pieces = 0;
  for (const auto& [array, piece] : fresh_pieces) {
    if (array->mirrored) written.push_back(&array->staging[piece]);
    if (array->device_kind == BufferKind::DeviceMapped && array != &dirty) {
      written.push_back(&array->device[piece]);
      continue;
    }
    zeroed.push_back(&array->device[piece]);
    zeroing_bytes += array->device[piece].size();
    world_pieces += array == &world;
    dirty_pieces += array == &dirty;
  }
  fresh_pieces.clear();
  // Every piece of world and dirty made afresh: the zeros are the clear record() would record.
  zeroing_clears = world_pieces == world.pieces() && dirty_pieces == dirty.pieces();
  prefaulter.start(std::move(written), std::move(zeroed));
}

void Propagator::Impl::finish_prefaulting() {
  const bool zeroed = prefaulter.finish();
  if (zeroed) stats.zeroed_ahead_bytes = zeroing_bytes;
  // Unless a replaced piece's old contents are to be copied over the zeros.
  zeroed_clears = zeroed && zeroing_clears &&
                  std::none_of(piece_copies.begin(), piece_copies.end(), [&](const PieceCopy& c) {
                    return c.to == &world || c.to == &dirty;
                  });
  zeroing_bytes = 0;
  zeroing_clears = false;
}

Status Propagator::Impl::make_mirrors(uint32_t n) {
  assert(n <= slot_capacity && "ensure_slot_capacity first: the mirrors follow the arrays' pieces");
  // The last full upload's mirrors may still be on the reclaimer's thread: gone before new ones
  // are made, so that two sets never hold host memory at once (6.4 GB each at 10^8 entities).
  reclaimer.drain();
  const uint32_t pieces = n ? ((n - 1) >> slot_shift) + 1 : 0;
  std::vector<Buffer> made[kArrays];  // per array and piece; empty where the present one serves
  for (int a = 0; a < kArrays; ++a) {
    const Pieced& m = arrays[a];
    if (!mirrors(Array(a))) continue;  // written in place (packed_at)
    made[a].resize(pieces);
    for (uint32_t p = 0; p < pieces; ++p) {
      const VkDeviceSize bytes = VkDeviceSize(std::min(m.size_of(p), n - m.first_of(p))) * m.stride;
      if (p < m.staging.size() && m.staging[p].size() >= bytes) continue;
      auto b = Buffer::create(*s, bytes, BufferKind::Upload, piece_name(m, p) + ".staging");
      if (!b) return b.error();
      made[a][p] = std::move(*b);
    }
  }
  bool changed = false;
  for (int a = 0; a < kArrays; ++a) {
    Pieced& m = arrays[a];
    if (!mirrors(Array(a))) continue;
    changed |= m.staging.size() != pieces;
    m.staging.resize(pieces);
    for (uint32_t p = 0; p < pieces; ++p)
      if (made[a][p]) {
        m.staging[p] = std::move(made[a][p]);
        changed = true;
      }
  }
  if (changed) ++mirrors_generation;
  return ok_status();
}

bool Propagator::Impl::release_mirrors(bool now) {
  bool any = false;
  for (const Pieced& m : arrays) any |= !m.staging.empty();
  if (!any) return false;
  ++mirrors_generation;
  if (now) {
    // From run_staged(), which must not allocate: destroyed where they stand.
    for (Pieced& m : arrays) m.staging.clear();
    return true;
  }
  std::vector<Buffer> freed;
  for (Pieced& m : arrays) {
    for (Buffer& b : m.staging) freed.push_back(std::move(b));
    m.staging.clear();
  }
  reclaimer.free_later(freed);
  return true;
}

void Propagator::Impl::copy(VkCommandBuffer c, const Pieced& m, std::span<const Range> ranges) {
  // Each range cut at piece boundaries, then one copy command per piece (or per batch of
  // regions): the ranges come sorted and apart (coalesce(), or one), so the pieces they fall in
  // never go back, and record() allocates nothing.
  constexpr uint32_t kBatch = 64;
  VkBufferCopy batch[kBatch];
  uint32_t batched = 0, batch_piece = 0;
  auto flush = [&] {
    if (!batched) return;
    s->vk.vkCmdCopyBuffer(c, m.staging[batch_piece].handle(), m.device[batch_piece].handle(),
                          batched, batch);
    stats.copy_regions += batched;
    batched = 0;
  };
  for (size_t k = 0; k < ranges.size(); ++k) {
    const Range& r = ranges[k];
    assert((k == 0 || ranges[k - 1].end <= r.begin) && "copy ranges sorted and apart");
    for (uint32_t i = r.begin; i < r.end;) {
      const uint32_t p = i >> m.shift;
      const uint32_t end = static_cast<uint32_t>(
          std::min<uint64_t>(r.end, uint64_t(m.first_of(p)) + m.size_of(p)));
      const VkDeviceSize off = VkDeviceSize(m.index_in_piece(i)) * m.stride;
      if (batched == kBatch || (batched && p != batch_piece)) flush();
      batch_piece = p;
      batch[batched++] = {off, off, VkDeviceSize(end - i) * m.stride};
      stats.upload_bytes += VkDeviceSize(end - i) * m.stride;
      i = end;
    }
  }
  flush();
}

void Propagator::Impl::fill_zero(VkCommandBuffer c, const Pieced& m, uint32_t first,
                                 uint32_t end) {
  for (uint32_t i = first; i < end;) {
    const uint32_t p = i >> m.shift;
    const uint32_t stop = static_cast<uint32_t>(
        std::min<uint64_t>(end, uint64_t(m.first_of(p)) + m.size_of(p)));
    s->vk.vkCmdFillBuffer(c, m.device[p].handle(), VkDeviceSize(m.index_in_piece(i)) * m.stride,
                          VkDeviceSize(stop - i) * m.stride, 0);
    i = stop;
  }
}

Status Propagator::Impl::build_piece_tables() {
  if (tables && tables_generation == buffers_generation) return ok_status();
  const auto all = all_pieced();
  // Each table at an address aligned to kPieceTableAlign, so that its low bits carry the shift.
  constexpr VkDeviceSize kAlign = gpu::kPieceTableAlign;
  VkDeviceSize bytes = kAlign;
  for (const Pieced* m : all)
    bytes += (VkDeviceSize(m->pieces()) * sizeof(uint64_t) + kAlign - 1) / kAlign * kAlign;
  if (!tables || tables.size() < bytes) {
    auto device = Buffer::create(*s, 2 * bytes, BufferKind::DeviceStorage, "tprop.piece_tables");
    if (!device) return device.error();
    auto staging = Buffer::create(*s, 2 * bytes, BufferKind::Upload, "tprop.piece_tables.staging");
    if (!staging) return staging.error();
    tables = std::move(*device);
    tables_staging = std::move(*staging);
    ++buffers_generation;  // for describe_buffers(); the tables are rebuilt just below anyway
  }
  const VkDeviceAddress base = tables.address();
  VkDeviceSize at = (base + kAlign - 1) / kAlign * kAlign - base;
  auto* words = static_cast<uint8_t*>(tables_staging.mapped());
  bool written = false;
  for (Pieced* m : all) {
    if (!*m) continue;
    const uint64_t first = m->device[0].address();
    if (m->pieces() == 1 && (first & gpu::kPieceShiftMask) == 0) {
      m->table = first | gpu::kPieceDirect;  // no table to read (scene_layout.h)
      continue;
    }
    written = true;
    m->table = (base + at) | m->shift;
    for (uint32_t p = 0; p < m->pieces(); ++p) {
      const uint64_t address = m->device[p].address();
      std::memcpy(words + at + p * sizeof(uint64_t), &address, sizeof(address));
    }
    at += (VkDeviceSize(m->pieces()) * sizeof(uint64_t) + kAlign - 1) / kAlign * kAlign;
  }
  // An array without pieces yet is never read (no flag, count or step points into it); its
  // field still names a valid table.
  for (Pieced* m : all)
    if (!*m) m->table = arrays[kFlags].table;
  tables_bytes = at;
  tables_pending = written;  // (every array of one piece, tagged direct: no table to copy)
  tables_generation = buffers_generation;
  return ok_status();
}

void Propagator::Impl::describe_buffers() {
  count_buffers();
  if (described_buffers == buffers_generation && described_slots == slots) return;
  // Built apart and swapped in: out of memory (std::bad_alloc, which update() reports), the
  // last description stays whole and is made again by the next call.
  std::vector<OutputPiece> pieces;
  for (uint32_t p = 0; p < world.pieces() && world.first_of(p) < slots; ++p) {
    OutputPiece piece;
    piece.buffer = world.device[p].handle();
    piece.first_slot = world.first_of(p);
    piece.slots = std::min(world.size_of(p), slots - piece.first_slot);
    piece.range = VkDeviceSize(piece.slots) * world.stride;
    piece.address = world.device[p].address();
    pieces.push_back(piece);
  }
  output_pieces.swap(pieces);
  described_buffers = buffers_generation;
  described_slots = slots;
}

void Propagator::Impl::count_buffers() {
  if (counted_buffers == buffers_generation && counted_mirrors == mirrors_generation) return;
  counted_buffers = buffers_generation;
  counted_mirrors = mirrors_generation;
  FrameStats& fs = buffer_stats;
  fs = FrameStats{};
  auto add = [&](const Buffer& b, bool device, bool piece = true) {
    if (!b) return;
    (device ? fs.device_bytes : fs.staging_bytes) += b.size();
    fs.device_buffers += device;
    if (piece) fs.largest_buffer_bytes = std::max<uint64_t>(fs.largest_buffer_bytes, b.size());
  };
  for (const Pieced* m : all_pieced()) {
    for (const Buffer& b : m->device) add(b, true);
    for (const Buffer& b : m->staging) add(b, false);
  }
  add(jump, true);
  add(progress, true, false);
  add(tables, true, false);
  add(tables_staging, false, false);
  for (const Pieced& m : arrays)
    for (const Buffer& b : m.staging) fs.mirror_bytes += b.size();
  fs.slot_pieces = world.pieces();
}

}  // namespace tprop
