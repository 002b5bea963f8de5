#include "tools/run_result.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tools/result.pb.h"
#include "tools/scenario.pb.h"

namespace backfill {
namespace {

using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

tools::RunResult Result() {
  tools::RunResult result;
  result.set_consistent(true);
  result.set_upstream_rows(1012345);
  result.set_view_rows(1012345);
  result.set_snapshot_rows(1000000);
  result.set_upstream_ops(1200000);
  result.set_epochs(610);
  result.set_checkpoints(305);
  result.set_parallelism(2);
  result.set_resumed(false);
  result.set_recoveries(1);
  result.set_seconds(61.2);
  result.set_snapshot_rows_per_second(52001.4);
  result.set_barrier_latency_p50_ms(3.25);
  result.set_barrier_latency_p99_ms(14.2);
  result.set_scenario("default");
  result.set_data_dir("/tmp/backfill-x");
  result.set_rescale_upstream_blocked_seconds(0.0125);
  return result;
}

TEST(RunResultTest, JsonKeepsTheHistoricalKeysInOrderWithNumbers) {
  EXPECT_EQ(RunResultJson(Result()),
            "{\"consistent\":true,\"upstream_rows\":1012345,"
            "\"view_rows\":1012345,\"snapshot_rows\":1000000,"
            "\"upstream_ops\":1200000,\"epochs\":610,\"checkpoints\":305,"
            "\"parallelism\":2,\"resumed\":false,\"recoveries\":1,"
            "\"seconds\":61.2,\"snapshot_rows_per_second\":52001.4,"
            "\"barrier_latency_p50_ms\":3.25,\"barrier_latency_p99_ms\":14.2,"
            "\"scenario\":\"default\",\"interrupted\":false,"
            "\"data_dir\":\"/tmp/backfill-x\","
            "\"rescale_upstream_blocked_seconds\":0.0125}");
}

TEST(RunResultTest, JsonPrintsEveryFieldEvenZeroAndErrorOnlyWhenSet) {
  const std::string empty = RunResultJson(tools::RunResult());
  const google::protobuf::Descriptor& descriptor =
      *tools::RunResult::descriptor();
  for (int i = 0; i < descriptor.field_count(); ++i) {
    const std::string key = "\"" + descriptor.field(i)->name() + "\":";
    SCOPED_TRACE(key);
    // Fields with presence (`error`, the adaptive ones) only when set.
    if (descriptor.field(i)->has_presence()) {
      EXPECT_THAT(empty, Not(HasSubstr(key)));
    } else {
      EXPECT_THAT(empty, HasSubstr(key));
    }
  }
  EXPECT_THAT(empty, HasSubstr("\"upstream_rows\":0,"));
  EXPECT_THAT(empty, HasSubstr("\"resumed\":false,"));
  EXPECT_THAT(empty, HasSubstr("\"scenario\":\"\","));

  tools::RunResult failed;
  failed.set_error("DATA_LOSS: open \"/d\"\n");
  EXPECT_THAT(RunResultJson(failed),
              HasSubstr(",\"error\":\"DATA_LOSS: open \\\"/d\\\"\\n\","));
  failed.set_error("");  // Set, although empty: still printed.
  EXPECT_THAT(RunResultJson(failed), HasSubstr("\"error\":\"\""));
}

// The backfill's own time is printed only for a run whose backfill finished,
// as a duration like `seconds`, beside the run's whole time.
TEST(RunResultTest, BackfillSecondsOnlyWhenTheBackfillFinished) {
  tools::RunResult result = Result();
  EXPECT_THAT(RunResultJson(result), Not(HasSubstr("backfill_seconds")));
  EXPECT_THAT(FormatSummaryTable(result), Not(HasSubstr("backfill seconds")));
  result.set_backfill_seconds(19.25);
  EXPECT_THAT(RunResultJson(result), HasSubstr(",\"backfill_seconds\":19.25}"));
  EXPECT_THAT(FormatSummaryTable(result),
              ContainsRegex("\nbackfill seconds +19s\n"));
}

// The latency the adaptive target applies to (through the backfill only)
// gets its own row and key when set, beside the whole barrier latency.
TEST(RunResultTest, BackfillBarrierLatencyOnlyWhenSet) {
  tools::RunResult result = Result();
  EXPECT_THAT(RunResultJson(result),
              Not(HasSubstr("backfill_barrier_latency_p99_ms")));
  EXPECT_THAT(FormatSummaryTable(result),
              Not(HasSubstr("backfill barrier latency")));
  result.set_backfill_barrier_latency_p99_ms(8.25);
  EXPECT_THAT(RunResultJson(result),
              HasSubstr(",\"backfill_barrier_latency_p99_ms\":8.25}"));
  EXPECT_THAT(FormatSummaryTable(result),
              ContainsRegex("\nbackfill barrier latency p99 +8.2 ms\n"));
}

TEST(RunResultTest, LargeCountsStayNumbersAndNonFiniteIsNull) {
  tools::RunResult result;
  result.set_upstream_ops(std::numeric_limits<uint64_t>::max());
  result.set_seconds(std::numeric_limits<double>::infinity());
  result.set_snapshot_rows_per_second(std::numeric_limits<double>::quiet_NaN());
  const std::string json = RunResultJson(result);
  EXPECT_THAT(json, HasSubstr("\"upstream_ops\":18446744073709551615,"));
  EXPECT_THAT(json, HasSubstr("\"seconds\":null,"));
  EXPECT_THAT(json, HasSubstr("\"snapshot_rows_per_second\":null,"));
}

TEST(RunResultTest, ProtobufsOwnParserReadsTheJsonBack) {
  tools::RunResult result = Result();
  result.set_error("INTERNAL: x");
  tools::RunResult parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(RunResultJson(result),
                                                          &parsed)
                  .ok());
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(parsed, result))
      << parsed.DebugString();
}

TEST(RunResultTest, ProtoJsonLineHandlesNestedRepeatedAndEnums) {
  tools::Scenario scenario;
  scenario.set_name("s");
  tools::Column* column = scenario.mutable_table()->add_columns();
  column->set_name("id");
  column->set_type(tools::INT64);
  scenario.mutable_table()->add_columns()->set_name("v");
  const std::string json = ProtoJsonLine(scenario);
  EXPECT_THAT(json, HasSubstr("{\"name\":\"s\",\"table\":{"));
  EXPECT_THAT(json,
              HasSubstr("\"columns\":[{\"name\":\"id\",\"type\":\"INT64\""));
  EXPECT_THAT(json, HasSubstr("\"primary_key\":[]"));
  // An unset message field (presence) is left out.
  EXPECT_THAT(json, Not(HasSubstr("\"workload\"")));
}

TEST(RunResultTest, SummaryTableHasARowPerFieldAligned) {
  const std::string table = FormatSummaryTable(Result());
  std::vector<std::string> lines = absl::StrSplit(table, '\n');
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines.back(), "");
  lines.pop_back();
  EXPECT_EQ(lines[0], "Backfill summary (default)");
  const size_t width = lines[1].size();
  EXPECT_EQ(lines[1], std::string(width, '-'));
  for (size_t i = 2; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    EXPECT_EQ(lines[i].size(), width);
  }
  EXPECT_THAT(lines[2], ContainsRegex("^verdict +CONSISTENT$"));
  EXPECT_THAT(table, ContainsRegex("\nupstream rows +1,012,345\n"));
  EXPECT_THAT(table, ContainsRegex("\nsnapshot rows/s +52,001\n"));
  EXPECT_THAT(table, ContainsRegex("\nbarrier latency p99 +14.2 ms\n"));
  EXPECT_THAT(table, ContainsRegex("\nseconds +1m01s\n"));
  EXPECT_THAT(table, ContainsRegex("\nresumed +no\n"));
  EXPECT_THAT(table, ContainsRegex("\ndata dir +/tmp/backfill-x\n"));
  EXPECT_THAT(table,
              ContainsRegex("\nrescale upstream blocked seconds +0.0125 s\n"));
  EXPECT_THAT(table, Not(HasSubstr("error")));
  // One row per field (those with presence unset, error among them) plus
  // the verdict.
  const google::protobuf::Descriptor& descriptor =
      *tools::RunResult::descriptor();
  size_t always = 0;
  for (int i = 0; i < descriptor.field_count(); ++i) {
    if (!descriptor.field(i)->has_presence()) ++always;
  }
  EXPECT_EQ(lines.size() - 2, always + 1);

  tools::RunResult failed = Result();
  failed.set_consistent(false);
  failed.set_error("INTERNAL: cannot open /data");
  EXPECT_THAT(FormatSummaryTable(failed),
              AllOf(ContainsRegex("verdict +ERROR\n"),
                    ContainsRegex("\nerror +INTERNAL: cannot open /data\n")));
  // A long message goes below its label, wrapped at the table's width,
  // instead of stretching every row.
  const std::string message = absl::StrCat(
      "DEADLINE_EXCEEDED: the job did not finish within its max_duration of ",
      "3s (barrier {curr 33, prev 32} was in flight)");
  failed.set_error(message);
  const std::string long_table = FormatSummaryTable(failed);
  std::vector<std::string> long_lines = absl::StrSplit(long_table, '\n');
  long_lines.pop_back();
  std::string rejoined;
  for (size_t i = 2; i < long_lines.size(); ++i) {
    SCOPED_TRACE(long_lines[i]);
    EXPECT_LE(long_lines[i].size(), long_lines[1].size());
    if (absl::StartsWith(long_lines[i], "  ")) {
      absl::StrAppend(&rejoined, rejoined.empty() ? "" : " ",
                      long_lines[i].substr(2));
    }
  }
  EXPECT_EQ(long_lines[1].size(), width);
  EXPECT_EQ(rejoined, message);
  EXPECT_THAT(long_table, HasSubstr("\nerror\n  DEADLINE_EXCEEDED: "));
  tools::RunResult inconsistent = Result();
  inconsistent.set_consistent(false);
  EXPECT_THAT(FormatSummaryTable(inconsistent), HasSubstr("INCONSISTENT\n"));
  inconsistent.set_interrupted(true);
  EXPECT_THAT(FormatSummaryTable(inconsistent), HasSubstr("INTERRUPTED\n"));
  // An adaptive run's fields, when set, get their rows and keys.
  tools::RunResult adaptive = Result();
  adaptive.set_adaptive_target_barrier_latency_ms(70);
  adaptive.set_adaptive_rows_per_second(4096);
  EXPECT_THAT(FormatSummaryTable(adaptive),
              AllOf(ContainsRegex("\nadaptive target barrier latency +70.0 ms\n"),
                    ContainsRegex("\nadaptive rows/s +4,096\n")));
  EXPECT_THAT(RunResultJson(adaptive),
              HasSubstr("\"adaptive_target_barrier_latency_ms\":70,"
                        "\"adaptive_rows_per_second\":4096}"));
}

TEST(RunResultTest, ResultProtoHasOnlyFieldsTheTableFormats) {
  const google::protobuf::Descriptor& descriptor =
      *tools::RunResult::descriptor();
  for (int i = 0; i < descriptor.field_count(); ++i) {
    const google::protobuf::FieldDescriptor& field = *descriptor.field(i);
    SCOPED_TRACE(field.name());
    EXPECT_FALSE(field.is_repeated());
    EXPECT_NE(field.cpp_type(),
              google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE);
    EXPECT_NE(field.cpp_type(),
              google::protobuf::FieldDescriptor::CPPTYPE_ENUM);
  }
}

}  // namespace
}  // namespace backfill
