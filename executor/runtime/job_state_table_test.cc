#include "executor/runtime/job_state_table.h"

#include <memory>
#include <optional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr TableId kJobStateTable = 77;

TableCatalog Orders() {
  TableCatalog catalog;
  catalog.table_id = 1;
  catalog.name = "orders";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"name", DataType::kVarchar, 2, true},
                     {"amount", DataType::kFloat64, 3, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 64;
  catalog.value_indices = {0, 1, 2};
  return catalog;
}

JobDefinition Definition() {
  JobDefinition definition;
  definition.upstream = Orders();
  definition.view = Orders();
  definition.view.table_id = 2;
  definition.view.name = "orders_view";
  definition.output_columns = {0, 1, 2};
  definition.progress_table_id = 3;
  definition.source_offset_table_id = 1001;
  return definition;
}

JobState State(uint64_t epochs) {
  JobState state;
  state.paused = epochs % 2 == 1;
  state.rate_limit = epochs % 3 == 0
                         ? RateLimit::Disabled()
                         : RateLimit::Fixed(static_cast<uint32_t>(epochs * 10));
  state.parallelism = static_cast<uint32_t>(1 + epochs % 4);
  state.upstream_stopped = epochs > 5;
  state.epochs_since_creation = epochs;
  // Adaptive from the 4th barrier on, with a controller rate from the 6th.
  if (epochs >= 4) state.adaptive_target = absl::Microseconds(epochs * 1500);
  if (epochs >= 6) state.adaptive_rows_per_second = epochs * 100;
  return state;
}

EpochPair After(EpochPair epoch) {
  return {Epoch(epoch.curr.value() + 1), epoch.curr};
}

TEST(JobStateTableTest, NothingSavedInAFreshStore) {
  auto store = NewMemoryStateStore();
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<SavedJob> saved,
                                ReadCommittedJob(*store, kJobStateTable));
  EXPECT_FALSE(saved.has_value());
}

TEST(JobStateTableTest, OnlyCheckpointedStateIsReadBack) {
  auto store = NewMemoryStateStore();
  const JobDefinition definition = Definition();
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto table,
                                JobStateTable::Create(*store, kJobStateTable));
  EpochPair epoch{Epoch(1), Epoch(0)};
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<SavedJob> none,
                                table->InitEpoch(epoch));
  EXPECT_FALSE(none.has_value());
  for (uint64_t epochs = 1; epochs <= 8; ++epochs) {
    SCOPED_TRACE(epochs);
    BACKFILL_ASSERT_OK(table->Write(definition, State(epochs)));
    const EpochPair next = After(epoch);
    BACKFILL_ASSERT_OK(table->Commit(next));
    // Every other barrier is a checkpoint.
    if (epochs % 2 == 0) {
      BACKFILL_ASSERT_OK(store->Checkpoint(next.prev));
    }
    epoch = next;
    BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<SavedJob> saved,
                                  ReadCommittedJob(*store, kJobStateTable));
    const uint64_t committed = epochs - epochs % 2;
    if (committed == 0) {
      EXPECT_FALSE(saved.has_value());
      continue;
    }
    ASSERT_TRUE(saved.has_value());
    EXPECT_EQ(saved->state, State(committed)) << saved->state.DebugString();
    EXPECT_THAT(CheckSameJob(saved->definition, definition), IsOk());
  }
}

TEST(JobStateTableTest, ANewInstanceContinuesFromTheCommittedRow) {
  auto store = NewMemoryStateStore();
  const JobDefinition definition = Definition();
  EpochPair epoch{Epoch(1), Epoch(0)};
  {
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto table, JobStateTable::Create(*store, kJobStateTable));
    BACKFILL_ASSERT_OK(table->InitEpoch(epoch).status());
    BACKFILL_ASSERT_OK(table->Write(definition, State(4)));
    epoch = After(epoch);
    BACKFILL_ASSERT_OK(table->Commit(epoch));
    BACKFILL_ASSERT_OK(store->Checkpoint(epoch.prev));
  }
  // A recovery: a new instance loads the row and updates it (Update needs
  // the stored row as its old value).
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto table,
                                JobStateTable::Create(*store, kJobStateTable));
  epoch = {Epoch(epoch.curr.value() + 1),
           store->CommittedEpoch(kJobStateTable)};
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<SavedJob> saved,
                                table->InitEpoch(epoch));
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->state, State(4));
  BACKFILL_ASSERT_OK(
      table->Write(definition, State(4)));  // unchanged: no write
  BACKFILL_ASSERT_OK(table->Write(definition, State(7)));
  epoch = After(epoch);
  BACKFILL_ASSERT_OK(table->Commit(epoch));
  BACKFILL_ASSERT_OK(store->Checkpoint(epoch.prev));
  BACKFILL_ASSERT_OK_AND_ASSIGN(saved,
                                ReadCommittedJob(*store, kJobStateTable));
  ASSERT_TRUE(saved.has_value());
  EXPECT_EQ(saved->state, State(7));
}

TEST(JobStateTableTest, RejectsStatesItCannotPersist) {
  auto store = NewMemoryStateStore();
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto table,
                                JobStateTable::Create(*store, kJobStateTable));
  BACKFILL_ASSERT_OK(table->InitEpoch({Epoch(1), Epoch(0)}).status());
  JobState state;
  state.parallelism = 0;
  EXPECT_THAT(table->Write(Definition(), state),
              StatusIs(absl::StatusCode::kInvalidArgument));
  state.parallelism = 1;
  state.rate_limit = RateLimit::Pause();
  EXPECT_THAT(table->Write(Definition(), state),
              StatusIs(absl::StatusCode::kInvalidArgument));
  state.rate_limit = RateLimit::Disabled();
  state.adaptive_target = absl::Milliseconds(-1);
  EXPECT_THAT(table->Write(Definition(), state),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("adaptive target")));
}

// The adaptive columns are validated like the others: a controller rate
// without a target, or a target out of range, is DataLoss naming the field.
TEST(JobStateTableTest, InconsistentAdaptiveColumnsAreDataLoss) {
  struct Case {
    Datum target;
    Datum rate;
    const char* message;
  };
  const Case cases[] = {
      {Datum{}, int64_t{100}, "adaptive_rows_per_second = 100 without"},
      {int64_t{0}, Datum{}, "adaptive_target_us = 0 is not >= 1"},
      {int64_t{5000}, int64_t{0}, "adaptive_rows_per_second = 0 is out of"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    auto store = NewMemoryStateStore();
    // A valid row from the table itself, then its adaptive columns replaced.
    {
      BACKFILL_ASSERT_OK_AND_ASSIGN(
          auto table, JobStateTable::Create(*store, kJobStateTable));
      BACKFILL_ASSERT_OK(table->InitEpoch({Epoch(1), Epoch(0)}).status());
      BACKFILL_ASSERT_OK(table->Write(Definition(), State(1)));
      BACKFILL_ASSERT_OK(table->Commit({Epoch(2), Epoch(1)}));
      BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
    }
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        auto raw, StateTable::Create(JobStateTable::Catalog(kJobStateTable),
                                     *store, VnodeBitmap::All(1)));
    BACKFILL_ASSERT_OK(raw->InitEpoch({Epoch(2), Epoch(1)}));
    BACKFILL_ASSERT_OK_AND_ASSIGN(std::optional<Row> row,
                                  raw->GetRow(Row{int16_t{0}}));
    ASSERT_TRUE(row.has_value());
    Row changed = *row;
    changed[8] = c.target;
    changed[9] = c.rate;
    BACKFILL_ASSERT_OK(raw->Update(*row, changed));
    BACKFILL_ASSERT_OK(raw->Commit({Epoch(3), Epoch(2)}));
    BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(2)));
    EXPECT_THAT(ReadCommittedJob(*store, kJobStateTable),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(c.message)));
  }
}

TEST(JobStateTableTest, CorruptRowIsDataLoss) {
  auto store = NewMemoryStateStore();
  // A row of the right shape whose definition bytes do not parse.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto raw, StateTable::Create(JobStateTable::Catalog(kJobStateTable),
                                   *store, VnodeBitmap::All(1)));
  BACKFILL_ASSERT_OK(raw->InitEpoch({Epoch(1), Epoch(0)}));
  BACKFILL_ASSERT_OK(
      raw->Insert(Row{int16_t{0}, int32_t{1}, std::string("\xff\xff\x01"),
                      false, Datum{}, int32_t{2}, false, int64_t{3}, Datum{},
                      Datum{}}));
  BACKFILL_ASSERT_OK(raw->Commit({Epoch(2), Epoch(1)}));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
  EXPECT_THAT(ReadCommittedJob(*store, kJobStateTable),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("job state")));
}

TEST(JobStateTableTest, UnknownFormatVersionIsDataLoss) {
  auto store = NewMemoryStateStore();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto raw, StateTable::Create(JobStateTable::Catalog(kJobStateTable),
                                   *store, VnodeBitmap::All(1)));
  BACKFILL_ASSERT_OK(raw->InitEpoch({Epoch(1), Epoch(0)}));
  BACKFILL_ASSERT_OK(
      raw->Insert(Row{int16_t{0}, int32_t{9}, std::string(), false, Datum{},
                      int32_t{2}, false, int64_t{3}, Datum{}, Datum{}}));
  BACKFILL_ASSERT_OK(raw->Commit({Epoch(2), Epoch(1)}));
  BACKFILL_ASSERT_OK(store->Checkpoint(Epoch(1)));
  EXPECT_THAT(
      ReadCommittedJob(*store, kJobStateTable),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("format_version = 9")));
}

TEST(CheckSameJobTest, SameDefinitionIsOk) {
  EXPECT_THAT(CheckSameJob(Definition(), Definition()), IsOk());
}

TEST(CheckSameJobTest, NamesTheFirstDifference) {
  struct Case {
    const char* what;
    void (*change)(JobDefinition&);
    const char* expected;
  };
  const Case cases[] = {
      {"column type",
       [](JobDefinition& d) { d.upstream.columns[1].type = DataType::kInt32; },
       "upstream table column 1: `name VARCHAR` (id 2) in the data directory, "
       "`name INT32` (id 2) in this job"},
      {"column name",
       [](JobDefinition& d) { d.upstream.columns[2].name = "price"; },
       "upstream table column 2: `amount FLOAT64` (id 3)"},
      {"extra column",
       [](JobDefinition& d) {
         d.upstream.columns.push_back({"extra", DataType::kInt16, 4, true});
         d.upstream.value_indices.push_back(3);
       },
       "upstream table column count: 3 in the data directory, 4 in this job"},
      {"vnode count", [](JobDefinition& d) { d.upstream.vnode_count = 256; },
       "upstream table vnode count: 64 in the data directory, 256 in this job"},
      {"pk order",
       [](JobDefinition& d) {
         d.upstream.pk_orders[0] = OrderType::Descending();
       },
       "upstream table primary key"},
      {"table id", [](JobDefinition& d) { d.upstream.table_id = 9; },
       "upstream table id: 1 in the data directory, 9 in this job"},
      {"view name", [](JobDefinition& d) { d.view.name = "v2"; },
       "view table name: \"orders_view\" in the data directory, \"v2\" in this "
       "job"},
      {"output columns",
       [](JobDefinition& d) {
         d.output_columns = {0, 2, 1};
       },
       "output columns: [0, 1, 2] in the data directory, [0, 2, 1] in this "
       "job"},
      {"progress table", [](JobDefinition& d) { d.progress_table_id = 4; },
       "progress table id: 3 in the data directory, 4 in this job"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    JobDefinition wanted = Definition();
    c.change(wanted);
    EXPECT_THAT(CheckSameJob(Definition(), wanted),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         AllOf(HasSubstr(c.expected),
                               HasSubstr("another data directory"),
                               HasSubstr("--data_dir"))));
  }
}

TEST(CheckSameJobTest, ReportsTheUpstreamBeforeTheView) {
  JobDefinition wanted = Definition();
  wanted.view.columns[0].name = "key";
  wanted.upstream.vnode_count = 8;
  EXPECT_THAT(CheckSameJob(Definition(), wanted),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("upstream table vnode count"),
                             Not(HasSubstr("view table column")))));
}

}  // namespace
}  // namespace backfill
