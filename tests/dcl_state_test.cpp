// Last-writer-wins per (entity, component) and the dead-entity set, rule by rule (NOTES.md:
// higher lamport wins; equal lamports: longer data, then lexicographically larger bytes; a
// delete loses to a put; identical data is a no-op; older messages are ignored).
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <random>

#include "dcl_state.h"
#include "dcl_transform.h"
#include "dcl_test_support.h"

namespace tprop {
namespace {

constexpr EntityId kE = 512;
constexpr uint32_t kC = 1;

struct Value {
  uint32_t lamport;
  bool deleted;
  std::vector<uint8_t> data;
};

CrdtMessage message(const Value& v) {
  return v.deleted ? CrdtMessage::delete_component(kE, kC, v.lamport)
                   : CrdtMessage::put(kE, kC, v.lamport, v.data);
}

Value put(uint32_t lamport, std::vector<uint8_t> data) { return {lamport, false, std::move(data)}; }
Value del(uint32_t lamport) { return {lamport, true, {}}; }

std::vector<EntityId> ids(std::span<const EntityId> removed) {
  return {removed.begin(), removed.end()};
}

struct LwwRow {
  const char* rule;
  Value held;
  Value incoming;
  CrdtOutcome outcome;
  bool incoming_wins;
};

TEST(CrdtState, LastWriterWinsRuleTable) {
  const LwwRow rows[] = {
      {"higher lamport wins, whatever the data", put(1, {0x01, 0x02}), put(2, {0x00}), CrdtOutcome::Applied, true},
      {"lower lamport is ignored", put(2, {0x00}), put(1, {0xff, 0xff}), CrdtOutcome::Outdated, false},
      {"equal lamport: longer data wins", put(3, {0xff}), put(3, {0x00, 0x00}), CrdtOutcome::Applied, true},
      {"equal lamport: shorter data loses", put(3, {0x00, 0x00}), put(3, {0xff}), CrdtOutcome::Outdated, false},
      {"equal length: larger bytes win", put(3, {0x01, 0x02}), put(3, {0x01, 0x03}), CrdtOutcome::Applied, true},
      {"equal length: smaller bytes lose", put(3, {0x01, 0x03}), put(3, {0x01, 0x02}), CrdtOutcome::Outdated, false},
      {"bytes compare unsigned", put(3, {0x7f}), put(3, {0x80}), CrdtOutcome::Applied, true},
      {"a put beats a delete of equal lamport", del(4), put(4, {}), CrdtOutcome::Applied, true},
      {"a delete loses to a put of equal lamport", put(4, {0x00}), del(4), CrdtOutcome::Outdated, false},
      {"a later delete wins over a put", put(4, {0x00}), del(5), CrdtOutcome::Applied, true},
      {"an older put does not resurrect", del(5), put(4, {0x09}), CrdtOutcome::Outdated, false},
      {"identical data is a no-op", put(4, {0x01}), put(4, {0x01}), CrdtOutcome::NoOp, false},
      {"a repeated delete is a no-op", del(5), del(5), CrdtOutcome::NoOp, false},
      {"lamport compares unsigned", put(1, {0x00}), put(0xffffffffu, {}), CrdtOutcome::Applied, true},
  };
  for (const LwwRow& row : rows) {
    CrdtState state;
    ASSERT_EQ(state.apply(message(row.held)).outcome, CrdtOutcome::Applied) << row.rule;
    const CrdtApplyResult r = state.apply(message(row.incoming));
    EXPECT_EQ(r.outcome, row.outcome) << row.rule;
    EXPECT_FALSE(r.entity_created) << row.rule;
    const Value& expected = row.incoming_wins ? row.incoming : row.held;
    const LwwEntry* held = state.find(kE, kC);
    ASSERT_NE(held, nullptr) << row.rule;
    EXPECT_EQ(held->lamport, expected.lamport) << row.rule;
    EXPECT_EQ(held->deleted, expected.deleted) << row.rule;
    EXPECT_EQ(held->data, expected.data) << row.rule;
    // Either arrival order ends in the same value (the order is total).
    CrdtState swapped;
    (void)swapped.apply(message(row.incoming));
    (void)swapped.apply(message(row.held));
    EXPECT_EQ(swapped.find(kE, kC)->lamport, held->lamport) << row.rule;
    EXPECT_EQ(swapped.find(kE, kC)->deleted, held->deleted) << row.rule;
    EXPECT_EQ(swapped.find(kE, kC)->data, held->data) << row.rule;
  }
}

TEST(CrdtState, FirstMessageRecordsTheEntityAndComponentsAreIndependent) {
  CrdtState state;
  const CrdtApplyResult first = state.apply(CrdtMessage::put(kE, 1, 5, {0x01}));
  EXPECT_EQ(first.outcome, CrdtOutcome::Applied);
  EXPECT_TRUE(first.entity_created);
  // Another component of the same entity has its own lamport clock.
  const CrdtApplyResult other = state.apply(CrdtMessage::put(kE, 7, 1, {0x02}));
  EXPECT_EQ(other.outcome, CrdtOutcome::Applied);
  EXPECT_FALSE(other.entity_created);
  EXPECT_EQ(state.find(kE, 1)->data, std::vector<uint8_t>{0x01});
  EXPECT_EQ(state.find(kE, 7)->data, std::vector<uint8_t>{0x02});
  EXPECT_EQ(state.find(kE, 8), nullptr);
  EXPECT_TRUE(state.known(kE));
  EXPECT_FALSE(state.known(kE + 1));
}

TEST(CrdtState, DeleteEntityKillsEveryVersionUpToTheDeletedOne) {
  CrdtState state;
  const EntityId v0 = dcl_entity_id(9, 0), v1 = dcl_entity_id(9, 1), v2 = dcl_entity_id(9, 2),
                 v3 = dcl_entity_id(9, 3), other = dcl_entity_id(10, 0);
  for (EntityId e : {v0, v1, v3, other}) (void)state.apply(CrdtMessage::put(e, 1, 1, {0x00}));
  const CrdtApplyResult r = state.apply(CrdtMessage::delete_entity(v2));
  EXPECT_EQ(r.outcome, CrdtOutcome::Applied);
  EXPECT_EQ(ids(r.removed), (std::vector<EntityId>{v0, v1}));
  EXPECT_FALSE(state.known(v0));
  EXPECT_FALSE(state.known(v1));
  EXPECT_TRUE(state.known(v3));     // a later version lives on
  EXPECT_TRUE(state.known(other));  // another number is untouched
  EXPECT_TRUE(state.is_dead(v2));
  EXPECT_FALSE(state.is_dead(v3));
  // Any later message for a dead (number, version) is ignored, with any lamport.
  EXPECT_EQ(state.apply(CrdtMessage::put(v1, 1, 1000, {0x05})).outcome, CrdtOutcome::DeadEntity);
  EXPECT_EQ(state.apply(CrdtMessage::put(v2, 1, 1000, {0x05})).outcome, CrdtOutcome::DeadEntity);
  EXPECT_EQ(state.apply(CrdtMessage::delete_component(v0, 1, 1000)).outcome, CrdtOutcome::DeadEntity);
  EXPECT_FALSE(state.known(v2));
  // Deleting a lower version again changes nothing; the set only grows.
  EXPECT_EQ(state.apply(CrdtMessage::delete_entity(v1)).outcome, CrdtOutcome::NoOp);
  EXPECT_TRUE(state.is_dead(v2));
  EXPECT_EQ(state.dead_numbers(), (std::vector<std::pair<uint16_t, uint16_t>>{{9, 2}}));
  // A higher version raises the bar and removes what is now dead.
  const CrdtApplyResult higher = state.apply(CrdtMessage::delete_entity(v3));
  EXPECT_EQ(ids(higher.removed), std::vector<EntityId>{v3});
  EXPECT_EQ(state.entities(), std::vector<EntityId>{other});
}

TEST(CrdtState, DeleteEntityBeforeItsMessagesGivesTheSameState) {
  CrdtState early, late;
  const EntityId e = dcl_entity_id(3, 1);
  (void)early.apply(CrdtMessage::delete_entity(e));
  (void)early.apply(CrdtMessage::put(e, 1, 4, {0x01}));
  (void)late.apply(CrdtMessage::put(e, 1, 4, {0x01}));
  (void)late.apply(CrdtMessage::delete_entity(e));
  EXPECT_FALSE(early.known(e));
  EXPECT_FALSE(late.known(e));
  EXPECT_EQ(early.entities(), late.entities());
}

TEST(CrdtState, NetworkFormsActAsTheirLocalForms) {
  CrdtState state;
  CrdtMessage put = CrdtMessage::put(kE, 1, 3, {0x01});
  put.type = CrdtMessageType::PutComponentNetwork;
  put.network_id = 77;
  EXPECT_EQ(state.apply(put).outcome, CrdtOutcome::Applied);
  CrdtMessage del = CrdtMessage::delete_component(kE, 1, 4);
  del.type = CrdtMessageType::DeleteComponentNetwork;
  EXPECT_EQ(state.apply(del).outcome, CrdtOutcome::Applied);
  EXPECT_TRUE(state.find(kE, 1)->deleted);
  CrdtMessage kill = CrdtMessage::delete_entity(kE);
  kill.type = CrdtMessageType::DeleteEntityNetwork;
  EXPECT_EQ(ids(state.apply(kill).removed), std::vector<EntityId>{kE});
  EXPECT_TRUE(state.is_dead(kE));
}

TEST(CrdtState, AppendValueRecordsItsEntityButKeepsNoValue) {
  CrdtState state;
  CrdtMessage append = CrdtMessage::put(kE, 1040, 1, {0x01, 0x02});
  append.type = CrdtMessageType::AppendValue;
  const CrdtApplyResult r = state.apply(append);
  EXPECT_EQ(r.outcome, CrdtOutcome::Recorded);
  EXPECT_TRUE(r.entity_created);
  EXPECT_TRUE(state.known(kE));
  EXPECT_EQ(state.find(kE, 1040), nullptr);
}

// Values up to a Transform's 44 bytes are held in place, longer ones (other components, a
// malformed Transform) on the heap: either way the bytes held are the winner's, whatever the
// sizes before.
TEST(CrdtState, ValuesOfAnySizeHoldTheWinnersBytesThroughOverwrites) {
  CrdtState state;
  std::vector<uint8_t> big(300);
  for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i * 7);
  const std::vector<uint8_t> transform(44, 0x11), longer(45, 0x22);
  for (uint32_t component : {1u, 1099u}) {
    SCOPED_TRACE(component);
    ASSERT_EQ(state.apply(CrdtMessage::put(kE, component, 1, transform)).outcome,
              CrdtOutcome::Applied);
    EXPECT_EQ(state.find(kE, component)->data, transform);
    ASSERT_EQ(state.apply(CrdtMessage::put(kE, component, 2, big)).outcome, CrdtOutcome::Applied);
    EXPECT_EQ(state.find(kE, component)->data, big);
    // Equal lamports: the longer value wins, so 45 bytes lose to 300 and are ignored.
    EXPECT_EQ(state.apply(CrdtMessage::put(kE, component, 2, longer)).outcome,
              CrdtOutcome::Outdated);
    ASSERT_EQ(state.apply(CrdtMessage::put(kE, component, 3, longer)).outcome,
              CrdtOutcome::Applied);
    EXPECT_EQ(state.find(kE, component)->data, longer);
    ASSERT_EQ(state.apply(CrdtMessage::put(kE, component, 4, {0x05})).outcome,
              CrdtOutcome::Applied);
    EXPECT_EQ(state.find(kE, component)->data, std::vector<uint8_t>{0x05});
    ASSERT_EQ(state.apply(CrdtMessage::delete_component(kE, component, 5)).outcome,
              CrdtOutcome::Applied);
    EXPECT_TRUE(state.find(kE, component)->deleted);
    EXPECT_TRUE(state.find(kE, component)->data.empty());
  }
  // A copy keeps its own bytes.
  const LwwEntry copy = *state.find(kE, 1099);
  (void)state.apply(CrdtMessage::put(kE, 1099, 9, big));
  EXPECT_TRUE(copy.data.empty());
  EXPECT_EQ(state.find(kE, 1099)->data, big);
}

// A number holds one live version in place and others beside it (the SDK never makes them, a
// stream may): every one is found, and deleting a version kills exactly those up to it, in any
// arrival order.
TEST(CrdtState, SeveralLiveVersionsOfANumberAreEachKeptAndKilledInOrder) {
  CrdtState state;
  const auto id = [](uint16_t v) { return dcl_entity_id(40, v); };
  for (uint16_t v : {5, 2, 9, 3}) {
    const CrdtApplyResult r = state.apply(CrdtMessage::put(id(v), 1, v, {uint8_t(v)}));
    EXPECT_TRUE(r.entity_created) << v;
  }
  EXPECT_EQ(state.entity_count(), 4u);
  for (uint16_t v : {5, 2, 9, 3})
    EXPECT_EQ(state.find(id(v), 1)->data, std::vector<uint8_t>{uint8_t(v)});
  EXPECT_EQ(ids(state.apply(CrdtMessage::delete_entity(id(4))).removed),
            (std::vector<EntityId>{id(2), id(3)}));
  EXPECT_EQ(state.entities(), (std::vector<EntityId>{id(5), id(9)}));
  EXPECT_EQ(ids(state.apply(CrdtMessage::delete_entity(id(5))).removed),
            std::vector<EntityId>{id(5)});
  EXPECT_EQ(state.find(id(9), 1)->data, std::vector<uint8_t>{9});
  EXPECT_EQ(state.apply(CrdtMessage::put(id(4), 1, 1, {0x04})).outcome, CrdtOutcome::DeadEntity);
  EXPECT_TRUE(state.apply(CrdtMessage::put(id(11), 1, 1, {0x0b})).entity_created);
  EXPECT_EQ(state.entities(), (std::vector<EntityId>{id(9), id(11)}));
  EXPECT_EQ(ids(state.apply(CrdtMessage::delete_entity(id(20))).removed),
            (std::vector<EntityId>{id(9), id(11)}));
  EXPECT_EQ(state.entity_count(), 0u);
  EXPECT_FALSE(state.known(id(9)));
}

TEST(CrdtState, CountsEveryMessageByTypeAndOutcome) {
  CrdtState state;
  (void)state.apply(CrdtMessage::put(kE, 1, 2, {0x01}));          // applied
  (void)state.apply(CrdtMessage::put(kE, 1, 2, {0x01}));          // duplicate
  (void)state.apply(CrdtMessage::put(kE, 1, 1, {0x01}));          // outdated
  (void)state.apply(CrdtMessage::put(kE, 1099, 1, {0x01}));       // other component, applied
  (void)state.apply(CrdtMessage::delete_component(kE, 1099, 2));  // other component, applied
  (void)state.apply(CrdtMessage::delete_entity(kE));              // applied
  (void)state.apply(CrdtMessage::put(kE, 1, 9, {0x01}));          // dead
  const CrdtCounts& n = state.counts();
  EXPECT_EQ(n.of(CrdtMessageType::PutComponent), 5u);
  EXPECT_EQ(n.of(CrdtMessageType::DeleteComponent), 1u);
  EXPECT_EQ(n.of(CrdtMessageType::DeleteEntity), 1u);
  EXPECT_EQ(n.of(CrdtMessageType::AppendValue), 0u);
  EXPECT_EQ(n.total(), 7u);
  EXPECT_EQ(n.applied, 4u);
  EXPECT_EQ(n.no_op, 1u);
  EXPECT_EQ(n.outdated, 1u);
  EXPECT_EQ(n.dead_entity, 1u);
  EXPECT_EQ(n.other_component, 2u);
}

// The world's shortcut for a held entity's Transform puts gives what apply() gives: the same
// outcome, the same held value, the same counts, over random messages of every type, for two
// numbers with several versions (in place and beside it), at random lamports, with data of the
// Transform's size and others, equal data included, so that every LWW tie is met. The shortcut
// must take most puts of a live entity and decline the rest.
TEST(CrdtState, PutOfAHeldTransformGivesWhatApplyGives) {
  std::mt19937 rng(7);
  CrdtState general, shortcut;
  const auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
  const CrdtMessageType types[] = {
      CrdtMessageType::PutComponent,          CrdtMessageType::PutComponent,
      CrdtMessageType::PutComponentNetwork,   CrdtMessageType::DeleteComponent,
      CrdtMessageType::DeleteEntity,          CrdtMessageType::AppendValue,
      CrdtMessageType::DeleteComponentNetwork, CrdtMessageType::DeleteEntityNetwork};
  size_t taken = 0, declined = 0;
  for (int i = 0; i < 20000; ++i) {
    CrdtMessage m;
    m.type = types[pick(std::size(types))];
    // Deletions of an entity are rare, or little would live long enough to be put to.
    if (!crdt_type_has_component(m.type) && pick(32) != 0) m.type = CrdtMessageType::PutComponent;
    m.entity = dcl_entity_id(uint16_t(600 + pick(2)), uint16_t(pick(2) + i / 1000));
    m.component = pick(4) == 0 ? 1099 : kDclTransformComponentId;
    m.lamport = pick(6);
    if (crdt_type_has_data(m.type)) {
      const size_t size = pick(3) == 0 ? pick(50) : kDclTransformSize;
      m.data.assign(size, uint8_t(pick(2)));
    }
    if (crdt_type_is_network(m.type)) m.network_id = 3;
    const CrdtApplyResult want = general.apply(m);
    CrdtOutcome got{};
    if (shortcut.put_held_transform(m, got)) {
      ++taken;
      EXPECT_EQ(got, want.outcome) << i;
      EXPECT_FALSE(want.entity_created) << i;
      EXPECT_TRUE(want.removed.empty()) << i;
    } else {
      ++declined;
      EXPECT_EQ(shortcut.apply(m).outcome, want.outcome) << i;
    }
    const LwwEntry* a = general.find(m.entity, kDclTransformComponentId);
    const LwwEntry* b = shortcut.find(m.entity, kDclTransformComponentId);
    ASSERT_EQ(a == nullptr, b == nullptr) << i;
    if (a) {
      EXPECT_EQ(a->lamport, b->lamport) << i;
      EXPECT_EQ(a->deleted, b->deleted) << i;
      EXPECT_EQ(a->data.span().size(), b->data.span().size()) << i;
      EXPECT_TRUE(std::equal(a->data.begin(), a->data.end(), b->data.begin())) << i;
    }
  }
  EXPECT_GT(taken, 1000u);
  EXPECT_GT(declined, 1000u);
  EXPECT_EQ(general.entities(), shortcut.entities());
  const CrdtCounts& g = general.counts();
  const CrdtCounts& s = shortcut.counts();
  EXPECT_TRUE(std::equal(std::begin(g.by_type), std::end(g.by_type), std::begin(s.by_type)));
  EXPECT_EQ(g.applied, s.applied);
  EXPECT_EQ(g.no_op, s.no_op);
  EXPECT_EQ(g.outdated, s.outdated);
  EXPECT_EQ(g.dead_entity, s.dead_entity);
  EXPECT_EQ(g.other_component, s.other_component);
}

}  // namespace
}  // namespace tprop

// The 45-byte value holder keeps its bytes through copies, moves and assignments from its own
// bytes, in place and on the heap, and a heap block shrunk below kInline is reused, not leaked
// (the sanitizer build checks the leak).
TEST(SmallBytes, KeepsItsBytesThroughCopiesMovesAndAssignmentsFromItself) {
  using tprop::SmallBytes;
  std::vector<uint8_t> big(200), small(SmallBytes::kInline);
  for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i * 13 + 1);
  for (size_t i = 0; i < small.size(); ++i) small[i] = uint8_t(i + 100);
  SmallBytes a(big);
  EXPECT_EQ(a, std::span<const uint8_t>(big));
  SmallBytes b = a;  // a copy has its own block
  a.assign(small);   // a keeps its block for the short value
  EXPECT_EQ(a, std::span<const uint8_t>(small));
  EXPECT_EQ(b, std::span<const uint8_t>(big));
  b.assign(b.span().subspan(10, 150));  // from its own bytes, overlapping
  EXPECT_EQ(b, std::span<const uint8_t>(big).subspan(10, 150));
  b.assign(b.span().first(20));
  EXPECT_EQ(b, std::span<const uint8_t>(big).subspan(10, 20));
  SmallBytes c(std::move(b));
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(c, std::span<const uint8_t>(big).subspan(10, 20));
  c.assign(big);  // longer than the block: a new one
  EXPECT_EQ(c, std::span<const uint8_t>(big));
  SmallBytes d(small);
  d = std::move(c);
  EXPECT_EQ(d, std::span<const uint8_t>(big));
  const SmallBytes& same = d;
  d = same;  // self-assignment keeps it
  EXPECT_EQ(d, std::span<const uint8_t>(big));
  d.clear();
  EXPECT_TRUE(d.empty());
  d.assign(small);
  EXPECT_EQ(d, std::span<const uint8_t>(small));
  EXPECT_EQ(sizeof(SmallBytes), SmallBytes::kInline + 1);
}

// Values that fit in place: every length from 0 to kInline, from another buffer and from the
// holder's own bytes at every offset (the source overlapping the destination), gives exactly
// the bytes asked for.
TEST(SmallBytes, InlineValuesOfEveryLengthCopyExactlyEvenFromTheirOwnBytes) {
  using tprop::SmallBytes;
  std::vector<uint8_t> source(SmallBytes::kInline);
  for (size_t i = 0; i < source.size(); ++i) source[i] = uint8_t(0xA0 + i);
  for (size_t n = 0; n <= SmallBytes::kInline; ++n) {
    SmallBytes a;
    a.assign(std::span<const uint8_t>(source).first(n));
    EXPECT_EQ(a, std::span<const uint8_t>(source).first(n)) << n;
    EXPECT_EQ(a.size(), n);
    for (size_t offset = 0; offset + n <= SmallBytes::kInline; ++offset) {
      SmallBytes b(source);
      b.assign(b.span().subspan(offset, n));
      EXPECT_EQ(b, std::span<const uint8_t>(source).subspan(offset, n)) << n << " at " << offset;
    }
  }
}
