// LevelOrder's alignment bookkeeping (aligned(), level_order.h): per entry of the order, whether
// it is the attached child of the entry at its position one level up, kept up to date from the
// positions edits touch, so that a structural frame's plan asks about every level of its deep
// runs at the cost of what changed.
#include "level_order.h"

#include <algorithm>
#include <cassert>

namespace tprop {

// Positions stay positions when a segment moves: so do their misfits.
void LevelOrder::move_misfits(uint32_t from, uint32_t to, uint32_t count) {
  for (uint32_t k = 0; k < count; ++k) {
    misfit_[to + k] = misfit_[from + k];
    misfit_[from + k] = 0;
  }
}

// A position of `level` whose fit an edit may have changed (any position, live or not: the
// check skips those beyond the count). A level wider than kAlignedTrackedMax stops being kept
// instead: edits to wide levels cost nothing, and none is asked about while wide.
void LevelOrder::touch(uint32_t level, uint32_t position) {
  if (level == 0 || level >= levels_.size() || misfit_count_[level] == kNone) return;
  if (levels_[level].count > kAlignedTrackedMax) {
    misfit_count_[level] = kNone;
    return;
  }
  if (touched_.size() >= entries_.size() + 65536) {
    // Not asked for a long while (frames planned from work lists): start afresh rather than
    // hold more touches than entries.
    std::fill(misfit_count_.begin(), misfit_count_.end(), kNone);
    touched_.clear();
    return;
  }
  touched_.push_back({level, position});
}

bool LevelOrder::misfits(uint32_t level, uint32_t position) {
  ++alignment_checks_;
  const Segment& above = levels_[level - 1];
  if (position >= above.count) return true;
  const uint32_t entry = entries_[levels_[level].begin + position];
  return node_[entry].parent != entries_[above.begin + position];
}

bool LevelOrder::aligned(uint32_t level) {
  assert(level > 0 && level < levels_.size());
  if (!aligning_) {
    aligning_ = true;
    misfit_.reserve(entries_.capacity());
    misfit_.assign(entries_.size(), 0);
    misfit_count_.assign(levels_.size(), kNone);
  }
  for (const auto& [l, p] : touched_) {
    if (l >= levels_.size() || misfit_count_[l] == kNone || p >= levels_[l].count) continue;
    uint8_t& was = misfit_[levels_[l].begin + p];
    const uint8_t now = misfits(l, p);
    if (now != was) now ? ++misfit_count_[l] : --misfit_count_[l];
    was = now;
  }
  touched_.clear();
  if (misfit_count_[level] == kNone) {
    const Segment& seg = levels_[level];
    uint32_t count = 0;
    for (uint32_t p = 0; p < seg.count; ++p) {
      const uint8_t now = misfits(level, p);
      misfit_[seg.begin + p] = now;
      count += now;
    }
    misfit_count_[level] = count;
  }
  return levels_[level].count == levels_[level - 1].count && misfit_count_[level] == 0;
}

}  // namespace tprop
