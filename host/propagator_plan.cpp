// The plan of a frame's evaluation: what the passes follow (the whole order, or a work list of the
// subtrees below what changed), its level table, and the steps over the levels: wide levels a
// dispatch each, runs of narrow levels walked, deep runs jumped (jump.comp) or, where aligned,
// scanned (scan.comp), consecutive levels fused on request. Each choice names what it saves.
#include "propagator_state.h"

#include <algorithm>
#include <cassert>
#include <chrono>

namespace tprop {

using namespace propagator_detail;

bool Propagator::Impl::collect_subtrees(const EntityStore& store,
                                        const std::vector<uint32_t>& seeds, uint32_t most,
                                        std::vector<uint32_t>& work) {
  // side[].seen holds frame_mark for the packed slots; the walk marks with the next value.
  next_frame_mark();
  std::vector<uint32_t> stack;
  // The seeds are scattered slots, most of them leaves (spawned entities, moved values): their
  // nodes and marks are asked for kAhead seeds early, so that their misses overlap instead of
  // coming one after the other.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < seeds.size(); ++i) {
    if (i + kAhead < seeds.size()) {
      const uint32_t ahead = seeds[i + kAhead];
      order.prefetch(ahead);
      if (ahead < side.size()) prefetch_line(&side[ahead]);
    }
    const uint32_t seed = seeds[i];
    if (!order.contains(seed) || side[seed].seen == frame_mark) continue;
    side[seed].seen = frame_mark;
    stack.push_back(seed);
    while (!stack.empty()) {
      const uint32_t v = stack.back();
      stack.pop_back();
      if (work.size() == most) {
        // An average only over enough seeds: one large subtree says nothing of the next
        // frame's many small ones.
        work_per_seed = i + 1 >= kSeedsEstimated ? float(most) / float(i + 1) : 0.0f;
        return false;
      }
      work.push_back(v);
      for (uint32_t c = order.first_child(store, v); c != LevelOrder::kNone;
           c = order.next_sibling(store, c))
        if (side[c].seen != frame_mark) {
          side[c].seen = frame_mark;
          stack.push_back(c);
          // Its node and links are in (its sibling link was read): what its own children's
          // walk reads first is asked for now, while the entries above it on the stack are
          // walked.
          if (const uint32_t first = store.first_child_at(c); first != EntityStore::kNoSlot) {
            order.prefetch(first);
            store.prefetch_links(first);
          }
        }
    }
  }
  work_per_seed =
      seeds.size() >= kSeedsEstimated ? float(work.size()) / float(seeds.size()) : 0.0f;
  return true;
}

Status Propagator::Impl::plan_work(const EntityStore& store, const std::vector<uint32_t>& seeds,
                                   size_t seed_count, bool everything) {
  assert((seed_count > options.work_list_max || seeds.size() == seed_count) &&
         "the seeds are listed while a work list may follow them");
  // The plan's time, not the pack's that calls this (FrameStats::HostTimes), whichever way out.
  struct PlanClock {
    double& into;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~PlanClock() {
      into += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
    }
  } plan_clock{stats.host.plan_ms};
  const uint32_t n = order.size();
  std::vector<uint32_t> work;
  // The first frame, and any frame after growth, computes everything; a frame that changed
  // nothing computes nothing; else a work list while the subtrees are small, the whole order
  // skipping what did not change beyond that. Where nearly every entity changed (a scene that
  // animates everything), skipping would read and write two marks an entity to leave out the
  // few that did not: such a frame computes everything too, as a first frame's passes do.
  const uint64_t changed = uint64_t(value_count) + delta_count + in_place_slots.size();
  const bool all = everything || (n != 0 && changed * 8 >= uint64_t(n) * 7);  // 7/8 or more
  // A walk the last one says would not fit is not tried: abandoned at work_list_max, it cost a
  // 1M forest's spawn/despawn frame 0.1 ms (4,096 scattered nodes) to follow the whole order
  // anyway. At most kWalksSkipped frames in a row, so that a change of shape is found (a frame
  // whose seeds would have fit costs a whole-order pass meanwhile, on the GPU).
  bool walk = !all && seed_count != 0 && seed_count <= options.work_list_max;
  if (walk && options.work_list_max != UINT32_MAX && walks_skipped < kWalksSkipped &&
      double(seed_count) * work_per_seed >= options.work_list_max) {
    walk = false;
    ++walks_skipped;
  } else if (walk) {
    walks_skipped = 0;
  }
  use_work_list = walk && collect_subtrees(store, seeds, options.work_list_max, work);
  stats.work_list_walked = walk ? static_cast<uint32_t>(work.size()) : 0;
  skip_unchanged = !all && !use_work_list;
  mostly_changed = skip_unchanged && uint64_t(seed_count) * 4 >= n;
  const bool whole = all || (skip_unchanged && seed_count != 0);
  std::vector<uint32_t> counts, firsts;
  const uint32_t* list = order.entries().data();  // the slots the passes follow, by entry
  std::vector<uint32_t> sorted_work;              // the work list, when it is followed
  // A whole-order frame of an order that has not changed since the last one (values alone):
  // that plan, whose table the GPU holds, serves again. Planning is O(levels): 12.6 ms a
  // values frame of a 1M chain.
  const bool same_plan = whole && order_changes.empty() && order.version() == whole_plan.version;
  if (whole) {
    if (!same_plan)
      for (const LevelOrder::Segment& seg : order.levels()) {
        counts.push_back(seg.count);
        firsts.push_back(seg.begin);
      }
    stats.evaluated_entities = n;
  } else if (use_work_list) {
    // Group the work list by level: a counting sort, O(work + levels).
    for (uint32_t v : work) {
      const uint32_t l = order.level_of(v);
      if (counts.size() <= l) counts.resize(l + 1, 0);
      ++counts[l];
    }
    firsts.resize(counts.size());
    uint32_t at = 0;
    for (size_t l = 0; l < counts.size(); ++l) {
      firsts[l] = at;
      at += counts[l];
    }
    if (Status st = grow(work_list, at, false, false, Slack::PerFrame); !st) return st;
    // Sorted on the host first: plan_steps reads it back by entry to find chains, and the mirror
    // takes it as one copy per piece.
    sorted_work.resize(at);
    std::vector<uint32_t> cursor = firsts;
    for (uint32_t v : work) sorted_work[cursor[order.level_of(v)]++] = v;
    work_list.stage(0, sorted_work.data(), at);
    list = sorted_work.data();
    stats.evaluated_entities = at;
  }
  // The levels buffer: the table, the scattered order changes, then the jump runs' tables.
  const uint32_t pairs = static_cast<uint32_t>(order_changes.size() / 2);
  stats.plan_reused = same_plan;
  if (same_plan) {
    level_count = whole_plan.level_count;
    levels_used = whole_plan.levels_used;
    steps = whole_plan.steps;
  } else {
    if (Status st = plan_levels(counts, firsts, list, pairs); !st) {
      whole_plan.version = kNoPlan;
      return st;
    }
    if (whole && pairs == 0) {
      whole_plan = {order.version(), level_count, levels_used, steps};
    } else if (levels_used != 0) {
      whole_plan.version = kNoPlan;  // the GPU's levels buffer holds another table now
    }
  }
  stats.full_pass = whole;
  stats.skip_unchanged = whole && skip_unchanged;
  stats.dirty_entities =
      everything ? n : value_count + delta_count + static_cast<uint32_t>(in_place_slots.size());
  return ok_status();
}

Status Propagator::Impl::plan_levels(const std::vector<uint32_t>& counts,
                                     const std::vector<uint32_t>& firsts, const uint32_t* list,
                                     uint32_t pairs) {
  level_count = static_cast<uint32_t>(counts.size());
  std::vector<uint32_t> run_table;
  if (Status st = plan_steps(counts, firsts, list, level_count + pairs, run_table); !st) return st;
  levels_used = level_count + pairs + static_cast<uint32_t>(run_table.size() / 2);
  if (levels_used) {
    if (Status st = grow(levels, levels_used, false, false, Slack::PerFrame); !st) return st;
    std::vector<uint32_t> table(2 * size_t(level_count));
    for (uint32_t l = 0; l < level_count; ++l) {
      table[2 * l] = firsts[l];
      table[2 * l + 1] = counts[l];
    }
    levels.stage(0, table.data(), level_count);
    levels.stage(level_count, order_changes.data(), pairs);
    levels.stage(level_count + pairs, run_table.data(), uint32_t(run_table.size() / 2));
    levels_pending = true;
  }
  return ok_status();
}

Status Propagator::Impl::plan_steps(const std::vector<uint32_t>& counts,
                                    const std::vector<uint32_t>& firsts, const uint32_t* list,
                                    uint32_t table_base, std::vector<uint32_t>& run_table) {
  steps.clear();
  const bool chains = chain_walk();
  // The chain pass loops once per 8 levels, the bundle pass once per level, and llvmpipe ends
  // loops after 65,535 iterations.
  constexpr uint32_t kChainLevelsPerDispatch = 8 * 32768;
  constexpr uint32_t kBundleLevelsPerDispatch = 32768;
  const bool jumping = narrow_walk() == NarrowWalk::Jump;
  uint32_t longest_run = 0;  // entities
  uint32_t run_begin = 0, run_end = 0;  // narrow run [run_begin, run_end), empty when equal
  // Scratch per jumped entity: two matrices, two ancestors and a slot.
  constexpr VkDeviceSize kJumpBytes = 2 * 64 + 2 * 4 + 4;
  uint64_t piece_max = max_buffer_bytes / kJumpBytes;
  if (options.jump_run_max_entities)
    piece_max = std::min<uint64_t>(piece_max, options.jump_run_max_entities);
  piece_max = std::max<uint64_t>(piece_max, gpu::kNarrowLevelMax);
  // Whether level e (> 0) is aligned with the level above: as many entities, the one at position p
  // the child of the one at position p above (checked, not assumed: in a work list a one-entry
  // level's entity may hang below an unlisted one, and a level's entries are in any order).
  // The whole order's levels are the order's own: it keeps their alignment across frames
  // (LevelOrder::aligned), so a structural frame pays for what its edits touched.
  const bool whole_order = list == order.entries().data();
  auto aligned = [&](uint32_t e) {
    if (counts[e] != counts[e - 1]) return false;
    if (whole_order) return order.aligned(e);
    for (uint32_t p = 0; p < counts[e]; ++p)
      if (order.parent_of(list[firsts[e] + p]) != list[firsts[e - 1] + p]) return false;
    return true;
  };
  // Scans over runs of aligned levels (ScanRuns): their scratch, tile aggregates and prefixes.
  const bool scanning = scan_runs();
  constexpr VkDeviceSize kScanBytes = 2 * (64 + 4);
  VkDeviceSize scan_bytes = 0;
  // Narrow levels [begin, end) not jumped: walked by one workgroup (or invocation), their chains
  // and bundles by their own passes.
  auto walk_narrow = [&](uint32_t begin, uint32_t end) {
    auto walk = [&](uint32_t b, uint32_t e) {
      for (; b < e; b += gpu::kNarrowLevelsPerDispatch)
        steps.push_back({Step::Narrow, b, std::min(e - b, gpu::kNarrowLevelsPerDispatch), 0, b});
    };
    // Chains and bundles: consecutive aligned levels of k entities each (1 <= k <=
    // kNarrowLevelMax). Each level is looked at a bounded number of times, each look costs k
    // parent lookups. The first level finds its parents written by an earlier dispatch.
    uint32_t walked = begin;  // levels before it are planned
    for (uint32_t l = begin; l < end;) {
      const uint32_t k = counts[l];
      uint32_t e = l;
      if (chains && k >= 1)
        for (e = l + 1; e < end && counts[e] == k && aligned(e);) ++e;
      if (e - l < kChainMinLevels) {
        l = std::max(e, l + 1);
        continue;
      }
      walk(walked, l);
      const Step::Kind kind = k == 1 ? Step::Chain : Step::Bundle;
      const uint32_t per_dispatch = k == 1 ? kChainLevelsPerDispatch : kBundleLevelsPerDispatch;
      for (uint32_t b = l; b < e; b += per_dispatch)
        steps.push_back({kind, b, std::min(e - b, per_dispatch), k == 1 ? 0 : k, b});
      walked = l = e;
    }
    walk(walked, end);
  };
  // Pointer jumping's pieces of levels [begin, end): whole levels, at most piece_max entities
  // unless one level holds more; each piece(first level, end level, entities).
  auto jump_pieces = [&](uint32_t begin, uint32_t end, auto&& piece) {
    for (uint32_t l = begin; l < end;) {
      const uint32_t first_level = l;
      uint32_t entities = 0;
      while (l < end && (l == first_level || entities + counts[l] <= piece_max))
        entities += counts[l++];
      piece(first_level, l, entities);
    }
  };
  // Levels [begin, end) of a run: jumped when deep enough, else walked.
  auto jump_or_walk = [&](uint32_t begin, uint32_t end) {
    if (jumping && end - begin >= kJumpMinLevels) {
      // A piece's first level finds its parents final (the piece before wrote them), exactly as
      // the run's first level does.
      jump_pieces(begin, end, [&](uint32_t first_level, uint32_t end_level, uint32_t entities) {
        const uint32_t base = table_base + static_cast<uint32_t>(run_table.size() / 2);
        uint32_t before = 0;
        for (uint32_t l = first_level; l < end_level; before += counts[l++]) {
          run_table.push_back(before);
          run_table.push_back(l);
        }
        if (entities)
          steps.push_back({Step::Jump, base, end_level - first_level, entities, first_level});
        longest_run = std::max(longest_run, entities);
      });
    } else {
      // Too short to jump: a level wider than kNarrowLevelMax (a jump run gathers up to
      // run_width) is a dispatch of its own, the narrow ones between are walked.
      uint32_t b = begin;
      for (uint32_t l = begin; l < end; ++l) {
        if (counts[l] <= gpu::kNarrowLevelMax) continue;
        walk_narrow(b, l);
        steps.push_back({Step::Wide, firsts[l], counts[l], 0, l});
        b = l + 1;
      }
      walk_narrow(b, end);
    }
  };
  // Aligned stretches of at least kScanMinLevels levels are scanned, what lies between them
  // goes as before. Each level is looked at a bounded number of times.
  auto scan_or_else = [&](uint32_t begin, uint32_t end) {
    uint32_t done = begin;  // levels before it are planned
    for (uint32_t l = begin; l < end;) {
      const uint32_t k = counts[l];
      uint32_t e = l + 1;
      if (k >= 1)
        while (e < end && counts[e] == k && aligned(e)) ++e;
      // Its scratch in one buffer: pieces of whole tiles, each piece's first level finding its
      // parents final (the piece before wrote them), as the stretch's first level does.
      const uint64_t piece_tiles =
          k ? std::min<uint64_t>(max_buffer_bytes / (uint64_t(k) * kScanBytes),
                                 options.scan_tiles_max ? options.scan_tiles_max : UINT32_MAX)
            : 0;
      if (k == 0 || e - l < kScanMinLevels || piece_tiles == 0) {
        l = e;
        continue;
      }
      jump_or_walk(done, l);
      const uint64_t piece_levels = piece_tiles * gpu::scan_tile_levels(k);
      for (uint32_t b = l; b < e;) {
        const uint32_t piece = static_cast<uint32_t>(std::min<uint64_t>(e - b, piece_levels));
        steps.push_back({Step::Scan, b, piece, k, b});
        scan_bytes = std::max<VkDeviceSize>(scan_bytes,
                                            uint64_t(gpu::scan_tiles(k, piece)) * k * kScanBytes);
        b += piece;
      }
      done = l = e;
    }
    jump_or_walk(done, end);
  };
  // The dispatches of pointer jumping over `levels` levels: index, init, rounds, write
  // (propagator_record.cpp).
  auto jump_dispatches = [](uint32_t run_levels) {
    uint32_t rounds = 0;
    while ((uint64_t(1) << rounds) < run_levels) ++rounds;
    return uint64_t(3) + rounds;
  };
  auto flush = [&] {
    if (!scanning) {
      jump_or_walk(run_begin, run_end);
      run_begin = run_end = 0;
      return;
    }
    // Scanned; beside pointer jumping, unless edits broke the run's alignment in so many places
    // that the stretches and the levels between them take more dispatches than jumping the run
    // would (a dispatch and its barrier cost microseconds however little they hold; a scan moves
    // fewer bytes, so it wins ties). Jumping is counted, not planned: its run table alone is 8
    // bytes a level.
    const size_t mark = steps.size(), table_mark = run_table.size();
    const uint32_t longest_before = longest_run;
    const VkDeviceSize scan_bytes_before = scan_bytes;
    scan_or_else(run_begin, run_end);
    uint64_t scanned = 0;
    bool scans = false;
    for (size_t i = mark; i < steps.size(); ++i) {
      scans = scans || steps[i].kind == Step::Scan;
      scanned += steps[i].kind == Step::Jump   ? jump_dispatches(steps[i].count)
                 : steps[i].kind == Step::Scan ? 3
                                               : 1;
    }
    if (jumping && scans) {
      uint64_t jumped = 0;
      jump_pieces(run_begin, run_end, [&](uint32_t first_level, uint32_t end_level, uint32_t) {
        jumped += jump_dispatches(end_level - first_level);
      });
      if (scanned > jumped) {
        steps.resize(mark);
        run_table.resize(table_mark);
        longest_run = longest_before;
        scan_bytes = scan_bytes_before;
        jump_or_walk(run_begin, run_end);
      }
    }
    run_begin = run_end = 0;
  };
  // Runs gather the levels at most run_width entities wide: narrow ones for the walks; for
  // pointer jumping up to kJumpLevelMax (what one scratch buffer holds at least), so that
  // deep runs of parallel chains are jumped too, not dispatched level by level.
  const uint32_t run_width =
      jumping || scanning ? static_cast<uint32_t>(std::min<uint64_t>(piece_max, kJumpLevelMax))
                          : gpu::kNarrowLevelMax;
  for (uint32_t l = 0; l < counts.size(); ++l) {
    if (counts[l] > run_width) {
      flush();
      steps.push_back({Step::Wide, firsts[l], counts[l], 0, l});
      continue;
    }
    if (run_end == run_begin) run_begin = run_end = l;
    run_end = l + 1;
  }
  flush();
  // Climbing needs every ancestor of a top-level entry in the levels it takes: the whole order's
  // (a work list's first levels hang below unlisted entities).
  if (whole_order && climb_top()) climb_top_levels(counts, table_base, run_table);
  if (fused_levels()) fuse_levels(counts, table_base, run_table);
  // Jumps and scans share the scratch (one step at a time).
  const VkDeviceSize bytes = std::max(VkDeviceSize(longest_run) * kJumpBytes, scan_bytes);
  if (bytes > jump_bytes) {
    const VkDeviceSize size = std::min(bytes + bytes / 8, std::max(bytes, max_buffer_bytes));
    auto b = Buffer::create(*s, size, BufferKind::DeviceStorage, "tprop.jump");
    if (!b) return b.error();
    jump = std::move(*b);
    jump_bytes = size;
    ++buffers_generation;
  }
  if (const VkDeviceSize words = progress_words(); words * 4 > progress.size()) {
    const VkDeviceSize size = std::max<VkDeviceSize>(words * 8, 4096);
    auto b = Buffer::create(*s, size, BufferKind::DeviceStorage, "tprop.progress");
    if (!b) return b.error();
    progress = std::move(*b);
    ++buffers_generation;
  }
  return ok_status();
}

namespace {

// The chunk table of levels [first_level, end_level) (the fused and climb passes': per level with
// entries, its first chunk of gpu::kWideGroupSize entries and the level) appended to run_table;
// returns those levels, and their chunks in `chunks`.
uint32_t append_chunk_table(const std::vector<uint32_t>& counts, uint32_t first_level,
                            uint32_t end_level, std::vector<uint32_t>& run_table,
                            uint32_t& chunks) {
  uint32_t levels = 0;
  chunks = 0;
  for (uint32_t l = first_level; l < end_level; ++l) {
    if (counts[l] == 0) continue;
    run_table.push_back(chunks);
    run_table.push_back(l);
    chunks += (counts[l] + gpu::kWideGroupSize - 1) / gpu::kWideGroupSize;
    ++levels;
  }
  return levels;
}

}  // namespace

void Propagator::Impl::climb_top_levels(const std::vector<uint32_t>& counts, uint32_t table_base,
                                        std::vector<uint32_t>& run_table) {
  const uint32_t most_levels = std::clamp(options.climb_levels, 2u, gpu::kClimbLevelsMax);
  // The leading walks and wide levels, whole steps (plan_steps pushes them in level order).
  size_t taken = 0;
  uint32_t end_level = 0;
  for (; taken < steps.size(); ++taken) {
    const Step& step = steps[taken];
    if ((step.kind != Step::Wide && step.kind != Step::Narrow) || step.level != end_level) break;
    const uint32_t step_end = step.level + (step.kind == Step::Wide ? 1 : step.count);
    if (step_end > most_levels) break;
    // Level l's entities climb l + 1 matrices at most.
    bool cheap = true;
    for (uint32_t l = step.level; l < step_end; ++l)
      cheap = cheap && uint64_t(counts[l]) * (l + 1) <= options.climb_level_work;
    if (!cheap) break;
    end_level = step_end;
  }
  if (taken < 2) return;  // one step is one dispatch already
  const uint32_t base = table_base + static_cast<uint32_t>(run_table.size() / 2);
  uint32_t chunks = 0;
  const uint32_t climbed = append_chunk_table(counts, 0, end_level, run_table, chunks);
  if (climbed < 2) {
    run_table.resize(2 * size_t(base - table_base));
    return;
  }
  steps.erase(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(taken));
  steps.insert(steps.begin(), {Step::Climb, base, climbed, chunks, 0});
}

void Propagator::Impl::fuse_levels(const std::vector<uint32_t>& counts, uint32_t table_base,
                                   std::vector<uint32_t>& run_table) {
  std::vector<Step> out;
  out.reserve(steps.size());
  for (size_t i = 0; i < steps.size();) {
    // Levels up to kFusedLevelMax entities: where a dispatch's fixed cost outweighs the level's
    // work. A wide level's chunks keep hundreds of workgroups waiting while the level above
    // ends (measured on an H200 when every level was fused: slower than a dispatch each).
    auto fusable = [&](size_t k) {
      return (steps[k].kind == Step::Wide && steps[k].count <= kFusedLevelMax) ||
             steps[k].kind == Step::Narrow;
    };
    size_t e = i;
    while (e < steps.size() && fusable(e)) ++e;
    if (e == i) {
      out.push_back(steps[i++]);
      continue;
    }
    // Steps [i, e) cover consecutive levels (plan_steps pushes them in level order): their
    // levels with entries, each in chunks of kWideGroupSize.
    const uint32_t first_level = steps[i].level;
    const uint32_t end_level = steps[e - 1].level + (steps[e - 1].kind == Step::Wide ? 1 : steps[e - 1].count);
    const uint32_t base = table_base + static_cast<uint32_t>(run_table.size() / 2);
    uint32_t chunks = 0;
    const uint32_t fused = append_chunk_table(counts, first_level, end_level, run_table, chunks);
    if (fused >= 2) {
      out.push_back({Step::Fused, base, fused, chunks, first_level});
    } else {
      run_table.resize(2 * size_t(base - table_base));  // one level: its own dispatch is as good
      out.insert(out.end(), steps.begin() + i, steps.begin() + e);
    }
    i = e;
  }
  steps = std::move(out);
}

}  // namespace tprop
