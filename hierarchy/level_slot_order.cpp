// LevelOrder's slot order (restore_slot_order(), level_order.h): edits scatter a level's entries,
// counted as they are placed; a wide level scattered enough is radix-sorted back into slot
// order, so that the passes read the per-slot arrays forward again.
#include "level_order.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace tprop {

void LevelOrder::note_scattered(uint32_t level) {
  uint32_t& n = scattered_[level];
  if (n == 0) scattered_levels_.push_back(level);
  if (n != UINT32_MAX) ++n;  // a level never sorted does not wrap back to 0 (and a second listing)
}

uint32_t LevelOrder::restore_slot_order(uint32_t divisor, uint32_t min_entries) {
  if (divisor == 0) return 0;
  // The most scattered level past the threshold, relative to its size, among the levels with
  // any entry scattered (a 10M chain has 10M levels, none of them ever scattered).
  uint32_t pick = kNone;
  size_t listed = 0;
  for (size_t k = 0; k < scattered_levels_.size(); ++k) {
    const uint32_t l = scattered_levels_[k];
    const uint64_t count = levels_[l].count, scattered = scattered_[l];
    if (count == 0 || count < min_entries || scattered * divisor < count) continue;
    if (pick == kNone || scattered * levels_[pick].count > scattered_[pick] * count) {
      pick = l;
      listed = k;
    }
  }
  if (pick == kNone) return 0;
  scattered_levels_[listed] = scattered_levels_.back();
  scattered_levels_.pop_back();
  Segment& seg = levels_[pick];
  uint32_t* const entries = entries_.data() + seg.begin;
  const uint32_t n = seg.count;
  // LSD radix sort, 11 bits a pass, as many passes as the slots need (two up to 4 million
  // slots): O(n) whatever the disorder, where a comparison sort of a 10M scene's widest level
  // would cost the frame seconds.
  constexpr uint32_t kBits = 11, kBuckets = 1u << kBits;
  uint32_t widest = 0;
  for (uint32_t k = 0; k < n; ++k) widest |= entries[k];
  sort_scratch_.resize(n);
  uint32_t* from = entries;
  uint32_t* to = sort_scratch_.data();
  std::vector<uint32_t> at(kBuckets);
  for (uint32_t shift = 0; shift < 32 && (widest >> shift) != 0; shift += kBits) {
    std::fill(at.begin(), at.end(), 0u);
    for (uint32_t k = 0; k < n; ++k) ++at[(from[k] >> shift) & (kBuckets - 1)];
    uint32_t sum = 0;
    for (uint32_t& a : at) sum += std::exchange(a, sum);
    for (uint32_t k = 0; k < n; ++k) to[at[(from[k] >> shift) & (kBuckets - 1)]++] = from[k];
    std::swap(from, to);
  }
  if (from != entries) std::copy_n(from, n, entries);
  // In slot order, these writes walk the nodes forward.
  for (uint32_t k = 0; k < n; ++k) node_[entries[k]].entry = seg.begin + k;
  scattered_[pick] = 0;
  note_rewritten(seg.begin, seg.begin + n);
  ++version_;
  if (aligning_) {
    // Every position of the level moved: its fits and those of the level below are counted
    // afresh when asked about.
    misfit_count_[pick] = kNone;
    if (pick + 1 < misfit_count_.size()) misfit_count_[pick + 1] = kNone;
  }
  return n;
}

}  // namespace tprop
