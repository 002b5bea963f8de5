#include "tools/scenario.h"

#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "serde/column_type.h"
#include "serde/data_type.h"
#include "serde/order_type.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/status_matchers.h"
#include "tools/scenario.pb.h"
#include "tools/scenario_spec.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kScenarioDir[] = "tools/scenarios";

// A small valid scenario the error cases mutate.
tools::Scenario SmallScenario() {
  tools::Scenario scenario;
  auto parsed =
      ParseScenario(R"pb(
                      name: "small"
                      table {
                        columns { name: "a" type: INT64 }
                        columns { name: "b" type: VARCHAR nullable: true }
                        columns { name: "c" type: INT32 nullable: true }
                        primary_key { column: 0 }
                        primary_key { column: 2 descending: true }
                      }
                      initial_rows: 100
                      workload { ops_per_second: 10 insert_weight: 1 }
                    )pb",
                    "small");
  EXPECT_THAT(parsed.status(), IsOk());
  if (parsed.ok()) scenario = *parsed;
  return scenario;
}

TEST(ScenarioTest, SmallScenarioIsValid) {
  EXPECT_THAT(ValidateScenario(SmallScenario()), IsOk());
  EXPECT_THAT(ValidateScenario(WithDefaults(SmallScenario())), IsOk());
}

TEST(ScenarioTest, ParseErrorNamesLineAndColumn) {
  auto parsed = ParseScenario(
      "name: \"x\"\ntable {\n  columns { nme: \"a\" }\n}\n", "bad.textproto");
  EXPECT_THAT(parsed.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                        HasSubstr("bad.textproto:3:")));
  EXPECT_THAT(parsed.status().message(), HasSubstr("nme"));

  auto syntax = ParseScenario("name: \"x\"\ninitial_rows: -\n", "s");
  EXPECT_THAT(syntax.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("s:2:")));
  auto bad_enum = ParseScenario("table { columns { type: INTEGER } }", "e");
  EXPECT_THAT(bad_enum.status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("e:1:")));
  EXPECT_THAT(bad_enum.status().message(), HasSubstr("INTEGER"));
}

TEST(ScenarioTest, LoadMissingFileIsNotFound) {
  EXPECT_THAT(LoadScenarioFile("tools/scenarios/no_such.textproto").status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no_such")));
}

TEST(ScenarioTest, DefaultScenarioIsTheDocumentedDemo) {
  const tools::Scenario scenario = DefaultScenario();
  EXPECT_THAT(ValidateScenario(scenario), IsOk());
  EXPECT_GE(scenario.initial_rows(), 1'000'000u);
  ASSERT_EQ(scenario.table().columns_size(), 6);
  std::vector<tools::DataType> types;
  for (const auto& column : scenario.table().columns()) {
    types.push_back(column.type());
  }
  EXPECT_THAT(types,
              ElementsAre(tools::INT64, tools::VARCHAR, tools::FLOAT64,
                          tools::DECIMAL, tools::TIMESTAMP, tools::INT32));
  EXPECT_TRUE(scenario.table().columns(5).nullable());
  EXPECT_FALSE(scenario.table().columns(0).nullable());
  EXPECT_EQ(scenario.backfill().parallelism(), 2u);
  EXPECT_NEAR(scenario.workload().ops_per_second(), 20'000, 1);
  EXPECT_GT(scenario.workload().insert_weight(), 0);
  EXPECT_GT(scenario.workload().update_weight(), 0);
  EXPECT_GT(scenario.workload().delete_weight(), 0);
  EXPECT_EQ(scenario.runtime().barrier_interval_ms(), 100u);
  EXPECT_GE(scenario.runtime().checkpoint_frequency(), 1u);
  EXPECT_LE(scenario.runtime().checkpoint_frequency(), 2u);
}

TEST(ScenarioTest, DefaultFileEqualsDefaultScenario) {
  auto loaded =
      LoadScenarioFile(std::string(kScenarioDir) + "/default.textproto");
  ASSERT_THAT(loaded.status(), IsOk());
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differencer.Compare(*loaded, DefaultScenario())) << diff;
}

TEST(ScenarioTest, EveryShippedScenarioLoadsAndValidates) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kScenarioDir)) {
    const std::string path = entry.path().string();
    SCOPED_TRACE(path);
    if (entry.path().extension() != ".textproto") continue;
    auto loaded = LoadScenarioFile(path);
    ASSERT_THAT(loaded.status(), IsOk());
    EXPECT_THAT(ValidateScenario(*loaded), IsOk());
    auto spec = ScenarioSpecFromProto(*loaded);
    ASSERT_THAT(spec.status(), IsOk());
    EXPECT_EQ(entry.path().stem().string(), loaded->name());
    if (loaded->name() != "default") {
      EXPECT_LE(loaded->initial_rows(), 50'000u);
    }
    names.insert(loaded->name());
  }
  EXPECT_EQ(names, (std::set<std::string>{"column_pruned", "default",
                                          "heavy_churn", "nested_key",
                                          "new_types", "rate_limited",
                                          "singleton",
                                          "wide_composite_pk"}));
}

TEST(ScenarioTest, ShippedScenariosCoverTheirFeatures) {
  auto load = [](const std::string& name) {
    auto loaded =
        LoadScenarioFile(std::string(kScenarioDir) + "/" + name + ".textproto");
    EXPECT_THAT(loaded.status(), IsOk());
    return loaded.ok() ? *loaded : tools::Scenario();
  };
  {
    const tools::Scenario s = load("wide_composite_pk");
    const TableCatalog catalog = ScenarioTableCatalog(s, 1);
    EXPECT_GE(catalog.pk_indices.size(), 2u);
    bool has_desc = false, has_nulls_first_asc = false;
    for (OrderType order : catalog.pk_orders) {
      has_desc |= order.is_descending();
      has_nulls_first_asc |= !order.is_descending() && order.nulls_first();
    }
    EXPECT_TRUE(has_desc);
    EXPECT_TRUE(has_nulls_first_asc);
    EXPECT_GT(s.workload().null_fraction(), 0);
  }
  {
    const tools::Scenario s = load("heavy_churn");
    EXPECT_TRUE(s.workload().update_primary_key());
    // Online rescales (issue 14): the example of the rescale action.
    int rescales = 0;
    for (const auto& action : s.actions()) {
      rescales += action.action_case() == tools::Action::kRescale ? 1 : 0;
    }
    EXPECT_EQ(rescales, 2);
    EXPECT_GT(s.workload().delete_weight(), 0);
    EXPECT_LE(s.workload().key_space(), 2 * s.initial_rows());
  }
  {
    const tools::Scenario s = load("rate_limited");
    EXPECT_GT(s.backfill().rate_limit(), 0u);
    std::set<int> kinds;
    for (const auto& action : s.actions()) kinds.insert(action.action_case());
    EXPECT_EQ(kinds,
              (std::set<int>{tools::Action::kPause, tools::Action::kResume,
                             tools::Action::kSetRateLimit}));
  }
  {
    const tools::Scenario s = load("column_pruned");
    auto spec = ScenarioSpecFromProto(s);
    ASSERT_THAT(spec.status(), IsOk());
    const StreamingJobOptions& job = spec->job;
    EXPECT_LT(job.output_columns.size(), job.upstream.columns.size());
    // The source's batching: the scenario default reaches the workload.
    EXPECT_EQ(job.workload.batch_interval, absl::Milliseconds(10));
    bool drops_pk_column = false;
    for (int pk : job.upstream.pk_indices) {
      drops_pk_column |=
          std::find(job.output_columns.begin(), job.output_columns.end(),
                    pk) == job.output_columns.end();
    }
    EXPECT_TRUE(drops_pk_column);
  }
  {
    const tools::Scenario s = load("singleton");
    EXPECT_TRUE(ScenarioTableCatalog(s, 1).dist_key_indices.empty());
  }
}

TEST(ScenarioTest, WithDefaultsFillsEveryDefault) {
  tools::Scenario scenario = SmallScenario();
  const tools::Scenario d = WithDefaults(scenario);
  EXPECT_EQ(d.backfill().parallelism(), 2u);
  EXPECT_EQ(d.backfill().chunk_size(), 256u);
  EXPECT_EQ(d.table().vnode_count(), 256u);
  EXPECT_EQ(d.runtime().barrier_interval_ms(), 100u);
  EXPECT_EQ(d.runtime().checkpoint_frequency(), 1u);
  EXPECT_EQ(d.runtime().max_seconds(), 600u);
  EXPECT_TRUE(d.runtime().has_extra_checkpoints_after_finish());
  EXPECT_EQ(d.runtime().extra_checkpoints_after_finish(), 3u);
  EXPECT_EQ(d.workload().key_space(), 400u);
  EXPECT_TRUE(d.workload().has_batch_interval_ms());
  EXPECT_EQ(d.workload().batch_interval_ms(), 10u);
  EXPECT_THAT(d.table().distribution_key(), ElementsAre(0u, 2u));
  EXPECT_THAT(d.backfill().output_columns(), ElementsAre(0u, 1u, 2u));
  EXPECT_EQ(d.table().table_id(), 1u);
  EXPECT_EQ(d.backfill().view_table_id(), 2u);
  EXPECT_EQ(d.backfill().progress_table_id(), 3u);
  EXPECT_EQ(d.table().name(), "upstream");

  // Idempotent.
  google::protobuf::util::MessageDifferencer differencer;
  EXPECT_TRUE(differencer.Compare(WithDefaults(d), d));

  // Explicit values, an explicit 0 extra checkpoints and an explicit 0 batch
  // interval are kept.
  scenario.mutable_runtime()->set_extra_checkpoints_after_finish(0);
  scenario.mutable_workload()->set_batch_interval_ms(0);
  scenario.mutable_backfill()->set_parallelism(5);
  scenario.set_initial_rows(0);
  const tools::Scenario e = WithDefaults(scenario);
  EXPECT_EQ(e.runtime().extra_checkpoints_after_finish(), 0u);
  EXPECT_EQ(e.workload().batch_interval_ms(), 0u);
  EXPECT_EQ(e.backfill().parallelism(), 5u);
  EXPECT_EQ(e.workload().key_space(), kMinDefaultKeySpace);

  // A singleton keeps an empty distribution key.
  scenario.mutable_table()->set_singleton(true);
  EXPECT_EQ(WithDefaults(scenario).table().distribution_key_size(), 0);
}

struct BadCase {
  std::string name;
  std::function<void(tools::Scenario&)> mutate;
  std::string message;
};

TEST(ScenarioTest, EveryErrorNamesItsField) {
  const std::vector<BadCase> cases = {
      {"no columns", [](auto& s) { s.mutable_table()->clear_columns(); },
       "table.columns is empty"},
      {"adaptive target zero",
       [](auto& s) { s.mutable_backfill()->mutable_adaptive(); },
       "backfill.adaptive.target_barrier_latency_ms = 0 must be > 0"},
      {"empty name",
       [](auto& s) { s.mutable_table()->mutable_columns(1)->set_name(""); },
       "table.columns[1].name is empty"},
      {"duplicate name",
       [](auto& s) { s.mutable_table()->mutable_columns(2)->set_name("a"); },
       "table.columns[2].name = \"a\" duplicates table.columns[0].name"},
      // Found by //tools:scenario_fuzz: the text parser lets "\377" through
      // into a proto3 string, which then cannot be serialized.
      {"column name not UTF-8",
       [](auto& s) {
         s.mutable_table()->mutable_columns(1)->set_name("b\xff");
       },
       "table.columns[1].name = \"b\\xff\" is not valid UTF-8"},
      {"table name not UTF-8",
       [](auto& s) { s.mutable_table()->set_name("t\xc3"); },
       "table.name = \"t\\xc3\" is not valid UTF-8"},
      {"scenario name not UTF-8", [](auto& s) { s.set_name("\xed\xa0\x80"); },
       "name = \"\\xed\\xa0\\x80\" is not valid UTF-8"},
      {"unspecified type",
       [](auto& s) {
         s.mutable_table()->mutable_columns(1)->set_type(
             tools::DATA_TYPE_UNSPECIFIED);
       },
       "table.columns[1].type is DATA_TYPE_UNSPECIFIED"},
      {"unknown type",
       [](auto& s) {
         s.mutable_table()->mutable_columns(1)->set_type(
             static_cast<tools::DataType>(42));
       },
       "table.columns[1].type = 42 is not a data type"},
      {"no pk", [](auto& s) { s.mutable_table()->clear_primary_key(); },
       "table.primary_key is empty"},
      {"pk out of range",
       [](auto& s) {
         s.mutable_table()->mutable_primary_key(1)->set_column(7);
       },
       "table.primary_key[1].column = 7 is out of range (3 columns)"},
      {"pk twice",
       [](auto& s) {
         s.mutable_table()->mutable_primary_key(1)->set_column(0);
       },
       "table.primary_key[1].column = 0 appears twice"},
      {"unknown nulls",
       [](auto& s) {
         s.mutable_table()->mutable_primary_key(0)->set_nulls(
             static_cast<tools::NullsOrder>(9));
       },
       "table.primary_key[0].nulls = 9 is unknown"},
      {"dist not in pk",
       [](auto& s) { s.mutable_table()->add_distribution_key(1); },
       "table.distribution_key[0] = 1 is not a primary-key column"},
      {"dist twice",
       [](auto& s) {
         s.mutable_table()->add_distribution_key(0);
         s.mutable_table()->add_distribution_key(0);
       },
       "table.distribution_key[1] = 0 appears twice"},
      {"singleton with dist",
       [](auto& s) {
         s.mutable_table()->set_singleton(true);
         s.mutable_table()->add_distribution_key(0);
       },
       "table.distribution_key has 1 columns but table.singleton is set"},
      {"too many vnodes",
       [](auto& s) { s.mutable_table()->set_vnode_count(32769); },
       "table.vnode_count = 32769 exceeds 32768"},
      {"negative ops",
       [](auto& s) { s.mutable_workload()->set_ops_per_second(-1); },
       "workload.ops_per_second < 0"},
      {"infinite ops",
       [](auto& s) {
         s.mutable_workload()->set_ops_per_second(
             std::numeric_limits<double>::infinity());
       },
       "workload.ops_per_second = inf is not finite"},
      {"negative insert weight",
       [](auto& s) { s.mutable_workload()->set_insert_weight(-0.5); },
       "workload.insert_weight < 0"},
      {"negative update weight",
       [](auto& s) { s.mutable_workload()->set_update_weight(-1); },
       "workload.update_weight < 0"},
      {"negative delete weight",
       [](auto& s) { s.mutable_workload()->set_delete_weight(-1); },
       "workload.delete_weight < 0"},
      {"zero weights",
       [](auto& s) { s.mutable_workload()->set_insert_weight(0); },
       "are all 0 but workload.ops_per_second = 10"},
      {"null fraction",
       [](auto& s) { s.mutable_workload()->set_null_fraction(1.5); },
       "workload.null_fraction = 1.5 is outside [0, 1]"},
      {"key space below rows",
       [](auto& s) { s.mutable_workload()->set_key_space(50); },
       "workload.key_space = 50 is below initial_rows = 100"},
      {"batch interval above a minute",
       [](auto& s) { s.mutable_workload()->set_batch_interval_ms(60'001); },
       "workload.batch_interval_ms = 60001 is above 60000"},
      {"key space beyond pk types",
       [](auto& s) {
         auto* table = s.mutable_table();
         table->mutable_columns(0)->set_type(tools::BOOLEAN);
         table->mutable_primary_key()->RemoveLast();
       },
       "workload.key_space = 400 exceeds the 2 distinct primary keys"},
      {"parallelism above vnodes",
       [](auto& s) {
         s.mutable_table()->set_vnode_count(4);
         s.mutable_backfill()->set_parallelism(5);
       },
       "backfill.parallelism = 5 exceeds table.vnode_count = 4"},
      {"default parallelism above vnodes",
       [](auto& s) { s.mutable_table()->set_vnode_count(1); },
       "backfill.parallelism = 2 exceeds table.vnode_count = 1"},
      {"chunk size",
       [](auto& s) { s.mutable_backfill()->set_chunk_size(1u << 21); },
       "backfill.chunk_size = 2097152 exceeds"},
      {"output column out of range",
       [](auto& s) { s.mutable_backfill()->add_output_columns(9); },
       "backfill.output_columns[0] = 9 is out of range (3 columns)"},
      {"output column twice",
       [](auto& s) {
         s.mutable_backfill()->add_output_columns(1);
         s.mutable_backfill()->add_output_columns(1);
       },
       "backfill.output_columns[1] = 1 appears twice"},
      {"view id clash",
       [](auto& s) { s.mutable_backfill()->set_view_table_id(1); },
       "backfill.view_table_id = 1 equals table.table_id"},
      {"progress id clash",
       [](auto& s) { s.mutable_backfill()->set_progress_table_id(2); },
       "backfill.progress_table_id = 2 equals backfill.view_table_id"},
      {"source offset table id (found by //tools:scenario_fuzz)",
       [](auto& s) { s.mutable_table()->set_table_id(kSourceOffsetTableId); },
       "table.table_id = 2147418113 is reserved"},
      {"source offset table id as the progress table",
       [](auto& s) {
         s.mutable_backfill()->set_progress_table_id(kSourceOffsetTableId);
       },
       "backfill.progress_table_id = 2147418113 is reserved"},
      {"checkpoint frequency",
       [](auto& s) {
         s.mutable_runtime()->set_checkpoint_frequency(2'000'000);
       },
       "runtime.checkpoint_frequency = 2000000 exceeds"},
      {"a barrier interval the time limit cannot pass (found by a new "
       "user's scenario: it waited out the limit)",
       [](auto& s) {
         s.mutable_runtime()->set_barrier_interval_ms(4'000'000'000);
       },
       "runtime.barrier_interval_ms = 4000000000 is not below "
       "runtime.max_seconds = 600 s"},
      {"a barrier interval as long as the time limit",
       [](auto& s) {
         s.mutable_runtime()->set_barrier_interval_ms(5'000);
         s.mutable_runtime()->set_max_seconds(5);
       },
       "runtime.barrier_interval_ms = 5000 is not below "
       "runtime.max_seconds = 5 s"},
      {"checkpoints the time limit cannot hold (found by a new user's "
       "scenario: it finished its backfill, then waited out the limit)",
       [](auto& s) {
         s.mutable_runtime()->set_barrier_interval_ms(10);
         s.mutable_runtime()->set_checkpoint_frequency(300);
         s.mutable_runtime()->set_max_seconds(8);
       },
       "runtime.checkpoint_frequency = 300: its checkpoints come every 3000 "
       "ms (runtime.barrier_interval_ms = 10), and the run needs 4 of them "
       "(the backfill's end, then runtime.extra_checkpoints_after_finish = "
       "3): at least 12 s, not below runtime.max_seconds = 8 s"},
      {"action at epoch 0", [](auto& s) { s.add_actions()->set_pause(true); },
       "actions[0].at_epoch = 0"},
      {"action without oneof",
       [](auto& s) {
         s.add_actions()->set_at_epoch(3);
         s.add_actions()->set_at_epoch(4);
         s.mutable_actions(0)->set_pause(true);
       },
       "actions[1] has no action"},
      {"pause false",
       [](auto& s) {
         auto* action = s.add_actions();
         action->set_at_epoch(3);
         action->set_pause(false);
       },
       "actions[0].pause = false"},
      {"resume false",
       [](auto& s) {
         auto* action = s.add_actions();
         action->set_at_epoch(3);
         action->set_resume(false);
       },
       "actions[0].resume = false"},
      {"stop false",
       [](auto& s) {
         auto* action = s.add_actions();
         action->set_at_epoch(3);
         action->set_stop_upstream(false);
       },
       "actions[0].stop_upstream = false"},
      {"rescale to 0",
       [](auto& s) {
         auto* action = s.add_actions();
         action->set_at_epoch(3);
         action->set_rescale(0);
       },
       "actions[0].rescale = 0 is not in [1, table.vnode_count"},
      {"rescale beyond the vnode count",
       [](auto& s) {
         s.mutable_table()->set_vnode_count(8);
         auto* action = s.add_actions();
         action->set_at_epoch(3);
         action->set_rescale(9);
       },
       "actions[0].rescale = 9 is not in [1, table.vnode_count = 8]"},
      {"job state table id",
       [](auto& s) {
         s.mutable_backfill()->set_view_table_id(kJobStateTableId);
       },
       "backfill.view_table_id = 2147418114 is reserved (the runtime's job "
       "state table)"},
      {"epoch pin table id (found by //tools:scenario_fuzz)",
       [](auto& s) { s.mutable_table()->set_table_id(kEpochPinTableId); },
       "table.table_id = 4294967295 is reserved (the store's epoch pins)"},
      {"epoch pin table id as the view",
       [](auto& s) {
         s.mutable_backfill()->set_view_table_id(kEpochPinTableId);
       },
       "backfill.view_table_id = 4294967295 is reserved"},
      {"pause and resume at one epoch",
       [](auto& s) {
         auto* pause = s.add_actions();
         pause->set_at_epoch(20);
         pause->set_pause(true);
         auto* rate = s.add_actions();
         rate->set_at_epoch(20);
         rate->set_set_rate_limit(100);
         auto* resume = s.add_actions();
         resume->set_at_epoch(20);
         resume->set_resume(true);
       },
       "actions[0] (pause at epoch 20) and actions[2] (resume at epoch 20) "
       "contradict each other"},
  };
  for (const BadCase& bad : cases) {
    SCOPED_TRACE(bad.name);
    tools::Scenario scenario = SmallScenario();
    bad.mutate(scenario);
    EXPECT_THAT(
        ValidateScenario(scenario),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(bad.message)));
    EXPECT_THAT(
        ScenarioSpecFromProto(scenario).status(),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(bad.message)));
  }
}

TEST(ScenarioTest, ARescaleActionBecomesAJobAction) {
  tools::Scenario scenario = SmallScenario();
  tools::Action* action = scenario.add_actions();
  action->set_at_epoch(4);
  action->set_rescale(3);
  ASSERT_THAT(ValidateScenario(scenario), IsOk());
  auto spec = ScenarioSpecFromProto(scenario);
  ASSERT_THAT(spec.status(), IsOk());
  ASSERT_EQ(spec->job.actions.size(), 1u);
  EXPECT_EQ(spec->job.actions[0].kind, JobAction::Kind::kRescale);
  EXPECT_EQ(spec->job.actions[0].at_epoch, 4u);
  EXPECT_EQ(spec->job.actions[0].parallelism, 3u);
  // The text format users write.
  tools::Scenario parsed;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "actions { at_epoch: 4 rescale: 3 }", &parsed));
  EXPECT_EQ(parsed.actions(0).rescale(), 3u);
}

TEST(ScenarioTest, BackfillKindConvertsAndDefaultsToArrangement) {
  tools::Scenario scenario = SmallScenario();
  auto spec = ScenarioSpecFromProto(scenario);
  ASSERT_THAT(spec.status(), IsOk());
  EXPECT_EQ(spec->job.backfill_kind, BackfillKind::kArrangement);
  tools::Scenario parsed;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "backfill { kind: NO_SHUFFLE }", &parsed));
  scenario.mutable_backfill()->set_kind(parsed.backfill().kind());
  spec = ScenarioSpecFromProto(scenario);
  ASSERT_THAT(spec.status(), IsOk());
  EXPECT_EQ(spec->job.backfill_kind, BackfillKind::kNoShuffle);
  scenario.mutable_backfill()->set_kind(tools::SNAPSHOT);
  spec = ScenarioSpecFromProto(scenario);
  ASSERT_THAT(spec.status(), IsOk());
  EXPECT_EQ(spec->job.backfill_kind, BackfillKind::kSnapshot);
  scenario.mutable_backfill()->set_kind(static_cast<tools::BackfillKind>(7));
  EXPECT_THAT(ValidateScenario(scenario),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("backfill.kind = 7")));
}

TEST(ScenarioTest, ANoShuffleScenarioWithARescaleIsRejected) {
  tools::Scenario scenario = SmallScenario();
  scenario.mutable_backfill()->set_kind(tools::NO_SHUFFLE);
  tools::Action* action = scenario.add_actions();
  action->set_at_epoch(4);
  action->set_rescale(3);
  EXPECT_THAT(ValidateScenario(scenario),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("actions[0].rescale = 3"),
                             HasSubstr("NO_SHUFFLE"),
                             HasSubstr("cannot be rescaled"))));
  scenario.mutable_backfill()->set_kind(tools::SNAPSHOT);
  EXPECT_THAT(ValidateScenario(scenario),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("actions[0].rescale = 3"),
                             HasSubstr("SNAPSHOT"),
                             HasSubstr("cannot be rescaled"))));
  // The same timeline is fine for the arrangement backfill.
  scenario.mutable_backfill()->set_kind(tools::ARRANGEMENT);
  EXPECT_THAT(ValidateScenario(scenario), IsOk());
}

TEST(ScenarioTest, ZeroChunkSizeAndSetRateLimitZeroAreFine) {
  tools::Scenario scenario = SmallScenario();
  scenario.mutable_backfill()->set_chunk_size(0);
  tools::Action* action = scenario.add_actions();
  action->set_at_epoch(2);
  action->set_set_rate_limit(0);
  EXPECT_THAT(ValidateScenario(scenario), IsOk());
}

TEST(ScenarioTest, TableCatalogFromScenario) {
  tools::Scenario scenario = SmallScenario();
  scenario.mutable_table()->mutable_primary_key(0)->set_nulls(
      tools::NULLS_FIRST);
  scenario.mutable_table()->set_vnode_count(64);
  scenario.mutable_table()->set_column_aware_encoding(true);
  scenario.mutable_table()->set_name("t");
  const TableCatalog catalog = ScenarioTableCatalog(scenario, 9);
  EXPECT_THAT(ValidateTableCatalog(catalog), IsOk());
  EXPECT_EQ(catalog.table_id, 9u);
  EXPECT_EQ(catalog.name, "t");
  ASSERT_EQ(catalog.columns.size(), 3u);
  EXPECT_EQ(catalog.columns[0].name, "a");
  EXPECT_EQ(catalog.columns[0].column_id, 1);
  EXPECT_EQ(catalog.columns[2].column_id, 3);
  EXPECT_EQ(catalog.columns[1].type, DataType::kVarchar);
  EXPECT_FALSE(catalog.columns[0].nullable);
  EXPECT_TRUE(catalog.columns[1].nullable);
  EXPECT_THAT(catalog.pk_indices, ElementsAre(0, 2));
  EXPECT_THAT(catalog.pk_orders, ElementsAre(OrderType::AscendingNullsFirst(),
                                             OrderType::Descending()));
  EXPECT_THAT(catalog.dist_key_indices, ElementsAre(0, 2));
  EXPECT_EQ(catalog.vnode_count, 64);
  EXPECT_EQ(catalog.value_encoding, ValueEncoding::kColumnAware);
  EXPECT_THAT(catalog.value_indices, ElementsAre(0, 1, 2));

  scenario.mutable_table()->mutable_primary_key(1)->set_nulls(
      tools::NULLS_LAST);
  scenario.mutable_table()->set_column_aware_encoding(false);
  scenario.mutable_table()->add_distribution_key(2);
  const TableCatalog other = ScenarioTableCatalog(scenario, 1);
  EXPECT_EQ(other.pk_orders[1], OrderType::DescendingNullsLast());
  EXPECT_THAT(other.dist_key_indices, ElementsAre(2));
  EXPECT_EQ(other.value_encoding, ValueEncoding::kPositional);
}

TEST(ScenarioTest, ViewCatalogKeepsHiddenPkColumns) {
  tools::Scenario scenario = SmallScenario();
  scenario.mutable_backfill()->add_output_columns(1);
  EXPECT_THAT(ScenarioViewInputColumns(scenario), ElementsAre(1, 0, 2));
  const TableCatalog view = ScenarioViewCatalog(scenario, 2);
  EXPECT_THAT(ValidateTableCatalog(view), IsOk());
  EXPECT_EQ(view.name, "upstream_view");
  ASSERT_EQ(view.columns.size(), 3u);
  EXPECT_EQ(view.columns[0].name, "b");
  EXPECT_EQ(view.columns[1].name, "a");
  EXPECT_EQ(view.columns[2].name, "c");
  EXPECT_EQ(view.columns[0].column_id, 1);
  EXPECT_THAT(view.pk_indices, ElementsAre(1, 2));
  EXPECT_THAT(view.pk_orders,
              ElementsAre(OrderType::Ascending(), OrderType::Descending()));
  EXPECT_THAT(view.dist_key_indices, ElementsAre(1, 2));
}

TEST(ScenarioTest, SpecFromProto) {
  tools::Scenario scenario = SmallScenario();
  scenario.mutable_backfill()->add_output_columns(2);
  scenario.mutable_backfill()->set_rate_limit(500);
  scenario.mutable_runtime()->set_barrier_interval_ms(50);
  scenario.mutable_runtime()->set_max_seconds(30);
  auto add = [&](uint64_t epoch) {
    tools::Action* action = scenario.add_actions();
    action->set_at_epoch(epoch);
    return action;
  };
  add(9)->set_stop_upstream(true);
  add(3)->set_pause(true);
  add(5)->set_set_rate_limit(77);
  add(3)->set_set_rate_limit(11);  // same epoch as the pause: after it
  auto spec = ScenarioSpecFromProto(scenario);
  ASSERT_THAT(spec.status(), IsOk());
  EXPECT_EQ(spec->name, "small");
  const StreamingJobOptions& job = spec->job;
  EXPECT_EQ(job.initial_rows, 100u);
  EXPECT_EQ(job.upstream.table_id, 1u);
  EXPECT_EQ(spec->view.table_id, 2u);
  EXPECT_EQ(job.view_table_id, 2u);
  EXPECT_EQ(job.progress_table_id, 3u);
  EXPECT_EQ(job.source_offset_table_id, kSourceOffsetTableId);
  EXPECT_EQ(job.job_state_table_id, kJobStateTableId);
  EXPECT_THAT(job.output_columns, ElementsAre(2));
  EXPECT_THAT(spec->output_column_names, ElementsAre("c"));
  EXPECT_THAT(spec->output_column_types, ElementsAre(DataType::kInt32));
  EXPECT_THAT(spec->view_input_columns, ElementsAre(2, 0));
  EXPECT_EQ(job.parallelism, 2u);
  EXPECT_EQ(job.chunk_size, 256u);
  EXPECT_EQ(job.rate_limit, RateLimit::Fixed(500));
  EXPECT_EQ(job.barrier_interval, absl::Milliseconds(50));
  EXPECT_EQ(job.checkpoint_frequency, 1u);
  EXPECT_EQ(job.max_duration, absl::Seconds(30));
  EXPECT_EQ(job.extra_checkpoints_after_finish, 3u);
  EXPECT_EQ(job.workload.key_space, 400u);
  EXPECT_EQ(job.workload.ops_per_second, 10);
  EXPECT_TRUE(job.overrides.parallelism == std::nullopt);
  EXPECT_TRUE(job.overrides.rate_limit == std::nullopt);
  BACKFILL_EXPECT_OK(ValidateStreamingJobOptions(job));
  ASSERT_EQ(job.actions.size(), 4u);
  EXPECT_EQ(job.actions[0].at_epoch, 3u);
  EXPECT_EQ(job.actions[0].kind, JobAction::Kind::kPause);
  EXPECT_EQ(job.actions[1].kind, JobAction::Kind::kSetRateLimit);
  EXPECT_EQ(job.actions[1].rate_limit, 11u);
  EXPECT_EQ(job.actions[2].kind, JobAction::Kind::kSetRateLimit);
  EXPECT_EQ(job.actions[2].rate_limit, 77u);
  EXPECT_EQ(job.actions[3].kind, JobAction::Kind::kStopUpstream);
}

// `backfill { adaptive { target_barrier_latency_ms: T } }` puts a new job in
// adaptive mode with target T; a rate_limit beside it is the ceiling.
TEST(ScenarioTest, AdaptiveBackfillConvertsToTheJobsTarget) {
  auto parsed = ParseScenario(
      R"pb(
        name: "adaptive"
        table {
          columns { name: "a" type: INT64 }
          primary_key { column: 0 }
        }
        initial_rows: 100
        backfill {
          rate_limit: 9000
          adaptive { target_barrier_latency_ms: 70 }
        }
      )pb",
      "adaptive");
  ASSERT_THAT(parsed.status(), IsOk());
  BACKFILL_ASSERT_OK_AND_ASSIGN(ScenarioSpec spec,
                                ScenarioSpecFromProto(*parsed));
  EXPECT_EQ(spec.job.adaptive_target_barrier_latency, absl::Milliseconds(70));
  EXPECT_EQ(spec.job.rate_limit, RateLimit::Fixed(9000));
  BACKFILL_EXPECT_OK(ValidateStreamingJobOptions(spec.job));
  // Without the field: not adaptive.
  BACKFILL_ASSERT_OK_AND_ASSIGN(ScenarioSpec plain,
                                ScenarioSpecFromProto(SmallScenario()));
  EXPECT_EQ(plain.job.adaptive_target_barrier_latency, absl::ZeroDuration());
}

// (Formerly tools/job_options_test.cc, when a ScenarioSpec was copied field
// by field into the job's options.)
TEST(ScenarioTest, DefaultScenarioIsAValidJob) {
  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(DefaultScenario());
  ASSERT_TRUE(spec.ok()) << spec.status();
  const StreamingJobOptions& options = spec->job;
  BACKFILL_EXPECT_OK(ValidateStreamingJobOptions(options));
  EXPECT_EQ(options.initial_rows, 1'000'000u);
  EXPECT_EQ(options.parallelism, 2u);
  EXPECT_EQ(options.chunk_size, kDefaultChunkSize);
  EXPECT_EQ(options.view_table_id, spec->view.table_id);
  EXPECT_NE(options.source_offset_table_id, options.view_table_id);
  EXPECT_NE(options.source_offset_table_id, options.progress_table_id);
  EXPECT_EQ(options.job_state_table_id, kJobStateTableId);
  EXPECT_EQ(options.workload.seed, 7u);
  EXPECT_DOUBLE_EQ(options.workload.ops_per_second, 20'000);
}

// Several actions at one epoch all reach the runtime, in file order (the
// runtime applies them all at that barrier).
TEST(ScenarioTest, ActionsAtOneEpochAllConvertInFileOrder) {
  tools::Scenario scenario = DefaultScenario();
  scenario.mutable_backfill()->set_rate_limit(5000);
  scenario.add_actions()->set_at_epoch(3);
  scenario.mutable_actions(0)->set_pause(true);
  scenario.add_actions()->set_at_epoch(20);
  scenario.mutable_actions(1)->set_resume(true);
  scenario.add_actions()->set_at_epoch(20);
  scenario.mutable_actions(2)->set_set_rate_limit(7000);
  absl::StatusOr<ScenarioSpec> spec = ScenarioSpecFromProto(scenario);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const StreamingJobOptions& options = spec->job;
  EXPECT_EQ(options.rate_limit, RateLimit::Fixed(5000));
  ASSERT_EQ(options.actions.size(), 3u);
  EXPECT_EQ(options.actions[1].at_epoch, 20u);
  EXPECT_EQ(options.actions[1].kind, JobAction::Kind::kResume);
  EXPECT_EQ(options.actions[2].kind, JobAction::Kind::kSetRateLimit);
  JobState state;
  state.paused = true;
  state.epochs_since_creation = 20;
  state = ApplyJobActions(state, options.actions);
  EXPECT_FALSE(state.paused);
  EXPECT_EQ(state.rate_limit, RateLimit::Fixed(7000));
}

// Issue 21: the added types, nested ones included, go from the text form to
// the catalogs whole, and the dumps' column types keep their parts.
TEST(ScenarioTest, NewTypesScenarioConverts) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      tools::Scenario scenario,
      LoadScenarioFile(std::string(kScenarioDir) + "/new_types.textproto"));
  BACKFILL_ASSERT_OK_AND_ASSIGN(ScenarioSpec spec,
                                ScenarioSpecFromProto(scenario));
  std::vector<std::string> types;
  for (const ColumnDesc& column : spec.job.upstream.columns) {
    types.push_back(column.type.DebugString());
  }
  EXPECT_THAT(types,
              ElementsAre("TIMESTAMPTZ", "INTERVAL", "JSONB", "LIST<FLOAT64>",
                          "STRUCT<id INT256, seen TIMESTAMPTZ, tags "
                          "LIST<VARCHAR>>",
                          "MAP<VARCHAR, INTERVAL>", "SERIAL"));
  // The pk: a TIMESTAMPTZ and an INTERVAL; the values hold JSONB, a LIST and
  // a STRUCT (the issue's example table).
  EXPECT_THAT(spec.job.upstream.PkTypes(),
              ElementsAre(DataType::kTimestamptz, DataType::kInterval));
  EXPECT_EQ(spec.job.upstream.columns[4].type.fields()[2].id, 3);
  ASSERT_EQ(spec.output_column_types.size(), 7u);
  EXPECT_EQ(spec.output_column_types[4], spec.job.upstream.columns[4].type);
  EXPECT_EQ(spec.view.columns[3].type, ColumnType::List(DataType::kFloat64));
  EXPECT_THAT(ValidateTableCatalog(spec.view), IsOk());
}

// Issue 21: LIST and STRUCT primary-key and distribution-key columns are
// accepted (nested_key.textproto), down to the catalogs and the view's.
TEST(ScenarioTest, NestedKeyScenarioConverts) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      tools::Scenario scenario,
      LoadScenarioFile(std::string(kScenarioDir) + "/nested_key.textproto"));
  BACKFILL_ASSERT_OK(ValidateScenario(scenario));
  BACKFILL_ASSERT_OK_AND_ASSIGN(ScenarioSpec spec,
                                ScenarioSpecFromProto(scenario));
  const TableCatalog& upstream = spec.job.upstream;
  std::vector<std::string> pk_types;
  for (const ColumnType& type : upstream.PkColumnTypes()) {
    pk_types.push_back(type.DebugString());
  }
  EXPECT_THAT(pk_types,
              ElementsAre("LIST<FLOAT64>",
                          "STRUCT<id INT64, label VARCHAR, codes LIST<INT32>>"));
  EXPECT_EQ(upstream.pk_orders[0], OrderType::AscendingNullsFirst());
  EXPECT_EQ(upstream.pk_orders[1], OrderType::Descending());
  EXPECT_THAT(upstream.dist_key_indices, ElementsAre(0, 1));
  EXPECT_THAT(ValidateTableCatalog(upstream), IsOk());
  EXPECT_THAT(ValidateTableCatalog(spec.view), IsOk());
}

// A LIST or a STRUCT alone as the pk is accepted too (no other column to
// tell rows apart).
TEST(ScenarioTest, ListOrStructAloneIsAValidPk) {
  for (const std::string columns :
       {R"pb(columns {
               name: "k"
               type: LIST
               nested { element { type: INT64 } }
             })pb",
        R"pb(columns {
               name: "k"
               type: STRUCT
               nested { fields { name: "a" type: VARCHAR } }
             })pb"}) {
    SCOPED_TRACE(columns);
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        tools::Scenario parsed,
        ParseScenario(
            absl::StrCat("table { ", columns, " primary_key { column: 0 } }"),
            "nested pk"));
    EXPECT_THAT(ValidateScenario(parsed), IsOk());
    EXPECT_THAT(ScenarioSpecFromProto(parsed).status(), IsOk());
  }
}

TEST(ScenarioTest, EveryAddedTypeParsesByName) {
  auto parsed = ParseScenario(
      R"pb(
        table {
          columns { name: "a" type: TIMESTAMPTZ }
          columns { name: "b" type: INTERVAL }
          columns { name: "c" type: SERIAL }
          columns { name: "d" type: INT256 }
          columns { name: "e" type: JSONB }
          columns {
            name: "f"
            type: STRUCT
            nested {
              fields {
                name: "x"
                type: MAP
                nested {
                  map_key { type: INT16 }
                  map_value { type: LIST nested { element { type: JSONB } } }
                }
              }
            }
          }
          primary_key { column: 0 }
          primary_key { column: 1 }
          primary_key { column: 2 }
          primary_key { column: 3 }
        }
      )pb",
      "added");
  ASSERT_THAT(parsed.status(), IsOk());
  EXPECT_THAT(ValidateScenario(*parsed), IsOk());
  EXPECT_EQ(ScenarioColumnType(parsed->table().columns(5)).DebugString(),
            "STRUCT<x MAP<INT16, LIST<JSONB>>>");
  const TableCatalog catalog = ScenarioTableCatalog(*parsed, 1);
  EXPECT_THAT(ValidateTableCatalog(catalog), IsOk());
  EXPECT_THAT(catalog.PkTypes(),
              ElementsAre(DataType::kTimestamptz, DataType::kInterval,
                          DataType::kSerial, DataType::kInt256));
  // The enum keeps its persisted numbers (serde/data_type.h).
  EXPECT_EQ(ScenarioDataType(tools::TIMESTAMPTZ), DataType::kTimestamptz);
  EXPECT_EQ(ScenarioDataType(tools::MAP), DataType::kMap);
  EXPECT_EQ(static_cast<int>(tools::TIMESTAMP), 12);
}

TEST(ScenarioTest, BadNestingIsInvalidArgumentNamingThePart) {
  struct Case {
    std::string what;
    std::string columns;  // text of the table's columns; pk is column 0
    std::string message;
  };
  const std::vector<Case> cases = {
      {"JSONB in the pk", R"pb(columns { name: "k" type: JSONB })pb",
       "table.primary_key[0].column = 0 (column \"k\"): "},
      {"MAP in the pk",
       R"pb(columns {
              name: "k"
              type: MAP
              nested {
                map_key { type: INT32 }
                map_value { type: INT32 }
              }
            })pb",
       "table.primary_key[0].column = 0 (column \"k\"): "},
      {"a LIST of JSONB in the pk",
       R"pb(columns {
              name: "k"
              type: LIST
              nested { element { type: JSONB } }
            })pb",
       "table.primary_key[0].column = 0 (column \"k\"): LIST<JSONB>"},
      {"a STRUCT holding a MAP in the pk",
       R"pb(columns {
              name: "k"
              type: STRUCT
              nested {
                fields { name: "a" type: INT32 }
                fields {
                  name: "m"
                  type: MAP
                  nested {
                    map_key { type: INT32 }
                    map_value { type: INT32 }
                  }
                }
              }
            })pb",
       "table.primary_key[0].column = 0 (column \"k\"): "},
      {"STRUCT without fields",
       R"pb(columns { name: "k" type: INT64 }
            columns { name: "s" type: STRUCT })pb",
       "table.columns[1].nested.fields is empty (a STRUCT needs at least one "
       "field)"},
      {"LIST without element",
       R"pb(columns { name: "k" type: INT64 }
            columns { name: "l" type: LIST nested {} })pb",
       "table.columns[1].nested.element is missing (a LIST needs its element "
       "type)"},
      {"MAP without value",
       R"pb(columns { name: "k" type: INT64 }
            columns {
              name: "m"
              type: MAP
              nested { map_key { type: VARCHAR } }
            })pb",
       "table.columns[1].nested.map_value is missing"},
      {"MAP with a FLOAT64 key",
       R"pb(columns { name: "k" type: INT64 }
            columns {
              name: "m"
              type: MAP
              nested {
                map_key { type: FLOAT64 }
                map_value { type: INT32 }
              }
            })pb",
       "table.columns[1].nested.map_key = FLOAT64 is not a map key type"},
      {"parts on a scalar",
       R"pb(columns { name: "k" type: INT64 }
            columns {
              name: "v"
              type: INT32
              nested { element { type: INT32 } }
            })pb",
       "table.columns[1].nested is set but INT32 has no parts"},
      {"a LIST with fields",
       R"pb(columns { name: "k" type: INT64 }
            columns {
              name: "l"
              type: LIST
              nested {
                element { type: INT32 }
                fields { name: "x" type: INT32 }
              }
            })pb",
       "table.columns[1].nested of a LIST may only set element"},
      {"unspecified element",
       R"pb(columns { name: "k" type: INT64 }
            columns { name: "l" type: LIST nested { element {} } })pb",
       "table.columns[1].nested.element.type is DATA_TYPE_UNSPECIFIED"},
      {"duplicate field name",
       R"pb(columns { name: "k" type: INT64 }
            columns {
              name: "s"
              type: STRUCT
              nested {
                fields { name: "x" type: INT32 }
                fields { name: "x" type: VARCHAR }
              }
            })pb",
       "table.columns[1].nested.fields[1].name = \"x\" appears twice"},
      {"unnamed field",
       R"pb(columns { name: "k" type: INT64 }
            columns {
              name: "s"
              type: STRUCT
              nested { fields { type: INT32 } }
            })pb",
       "table.columns[1].nested.fields[0].name is empty"},
      {"nested STRUCT without fields",
       R"pb(columns { name: "k" type: INT64 }
            columns {
              name: "s"
              type: STRUCT
              nested { fields { name: "inner" type: STRUCT } }
            })pb",
       "table.columns[1].nested.fields[0].nested.fields is empty"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto parsed = ParseScenario(
        absl::StrCat("table { ", c.columns, " primary_key { column: 0 } }"),
        c.what);
    ASSERT_THAT(parsed.status(), IsOk());
    EXPECT_THAT(ValidateScenario(*parsed),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(c.message)));
    EXPECT_THAT(ScenarioSpecFromProto(*parsed).status(),
                StatusIs(absl::StatusCode::kInvalidArgument));
  }
  // Nesting deeper than the catalogs allow.
  tools::Scenario deep = SmallScenario();
  tools::Column* column = deep.mutable_table()->mutable_columns(1);
  column->set_type(tools::LIST);
  tools::ElementType* part = column->mutable_nested()->mutable_element();
  for (int i = 0; i < kMaxCatalogTypeDepth; ++i) {
    part->set_type(tools::LIST);
    part = part->mutable_nested()->mutable_element();
  }
  part->set_type(tools::INT32);
  EXPECT_THAT(ValidateScenario(deep),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is nested deeper than 16 levels")));
}

}  // namespace
}  // namespace backfill
