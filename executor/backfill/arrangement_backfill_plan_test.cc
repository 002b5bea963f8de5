#include "executor/backfill/arrangement_backfill_plan.h"

#include <functional>

#include "executor/backfill/plan.pb.h"
#include "executor/testing/message_literal.h"
#include "executor/testing/scripted_executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/vnode_bitmap.h"
#include "storage/catalog.pb.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::ScriptedExecutor;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

TableCatalog Upstream() {
  TableCatalog catalog;
  catalog.table_id = 7;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"k", DataType::kInt32, 2, true},
                     {"v", DataType::kVarchar, 3, true}};
  catalog.pk_indices = {0, 1};
  catalog.pk_orders = {OrderType::Ascending(), OrderType::Descending()};
  catalog.dist_key_indices = {1};
  catalog.vnode_count = 8;
  catalog.value_indices = {0, 1, 2};
  return catalog;
}

proto::ArrangementBackfillNode GoodNode() {
  proto::ArrangementBackfillNode node;
  *node.mutable_upstream_table() = TableCatalogToProto(Upstream());
  *node.mutable_progress_table() =
      TableCatalogToProto(BackfillProgressCatalog(Upstream(), 99));
  for (int id : {3, 1, 2}) node.add_upstream_column_ids(id);
  node.add_output_indices(0);
  node.add_output_indices(1);
  node.set_chunk_size(16);
  node.set_rate_limit(100);
  node.set_actor_id(5);
  node.set_fragment_id(6);
  node.set_vnode_bitmap(VnodeBitmap::FromRange(8, 0, 4).Serialize());
  return node;
}

TEST(ArrangementBackfillPlanTest, BuildsFromAValidNode) {
  auto store = NewMemoryStateStore();
  auto input = std::make_unique<ScriptedExecutor>(ExecutorInfo{});
  input->Push(testing::TestBarrier(1));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto executor,
      BuildArrangementBackfillFromPlan(GoodNode(), *store, std::move(input)));
  EXPECT_EQ(executor->rate_limit(), RateLimit::Fixed(100));
  EXPECT_EQ(executor->info().schema,
            (std::vector<DataType>{DataType::kVarchar, DataType::kInt64}));
  EXPECT_THAT(executor->info().identity, HasSubstr("actor 5"));
  BACKFILL_ASSERT_OK(NextMessage(*executor, Clock::Real()).status());
}

TEST(ArrangementBackfillPlanTest, PassesTheUpstreamBufferBudget) {
  auto store = NewMemoryStateStore();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto by_default,
      BuildArrangementBackfillFromPlan(
          GoodNode(), *store, std::make_unique<ScriptedExecutor>(ExecutorInfo{})));
  EXPECT_EQ(by_default->upstream_buffer_budget_bytes(),
            ArrangementBackfillOptions{}.upstream_buffer_budget_bytes);
  proto::ArrangementBackfillNode node = GoodNode();
  node.set_upstream_buffer_budget_bytes(0);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto zero,
      BuildArrangementBackfillFromPlan(
          node, *store, std::make_unique<ScriptedExecutor>(ExecutorInfo{})));
  EXPECT_EQ(zero->upstream_buffer_budget_bytes(), 0u);
}

TEST(ArrangementBackfillPlanTest, RejectsEveryInconsistencyNamingTheField) {
  struct Case {
    std::function<void(proto::ArrangementBackfillNode&)> mutate;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](auto& n) { n.clear_upstream_table(); }, "upstream_table is missing"},
      {[](auto& n) { n.clear_progress_table(); }, "progress_table is missing"},
      {[](auto& n) { n.mutable_upstream_table()->set_distribution_key(0, 2); },
       "upstream_table: table 7 (t): distribution_key[0] = 2 is not a "
       "primary-key column"},
      {[](auto& n) {
         n.clear_upstream_column_ids();
         n.add_upstream_column_ids(3);
         n.add_upstream_column_ids(1);
       },
       "upstream_column_ids: replicated table 7 (t): primary-key column 1 (k)"},
      {[](auto& n) { n.add_upstream_column_ids(42); },
       "output_column_ids[3] = 42"},
      {[](auto& n) { n.set_output_indices(1, 3); },
       "output_indices[1] = 3 is out of range (3 upstream columns)"},
      {[](auto& n) { n.set_vnode_bitmap(VnodeBitmap::All(16).Serialize()); },
       "vnode_bitmap has 16 vnodes"},
      {[](auto& n) { n.set_vnode_bitmap("\x07garbage"); }, "vnode_bitmap"},
      {[](auto& n) { n.set_vnode_bitmap(VnodeBitmap(8).Serialize()); },
       "owns no vnode"},
      {[](auto& n) { n.set_chunk_size(1u << 30); }, "chunk_size"},
      {[](auto& n) { n.mutable_progress_table()->set_table_id(7); },
       "progress_table.table_id = 7"},
      {[](auto& n) {
         *n.mutable_progress_table() =
             TableCatalogToProto(BackfillProgressCatalog(TableCatalog{}, 99));
       },
       "progress_table"},
      // Found by arrangement_backfill_plan_fuzz: progress such a
      // table stores does not load again.
      {[](auto& n) {
         n.mutable_progress_table()->clear_value_indices();
         n.mutable_progress_table()->add_value_indices(1);
         n.mutable_progress_table()->add_value_indices(2);
         // (Nullable: a valid catalog, whose unstored columns read NULL.)
         n.mutable_progress_table()->mutable_columns(3)->set_nullable(true);
         n.mutable_progress_table()->mutable_columns(4)->set_nullable(true);
       },
       "progress_table column 3 (backfill_finished) is not in value_indices"},
      {[](auto& n) {
         n.mutable_progress_table()->mutable_columns(2)->set_nullable(false);
       },
       "progress_table column 2 (k) is not nullable"},
  };
  for (const Case& c : cases) {
    auto store = NewMemoryStateStore();
    proto::ArrangementBackfillNode node = GoodNode();
    c.mutate(node);
    EXPECT_THAT(
        BuildArrangementBackfillFromPlan(
            node, *store, std::make_unique<ScriptedExecutor>(ExecutorInfo{})),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.field)))
        << c.field;
  }
}

}  // namespace
}  // namespace backfill
