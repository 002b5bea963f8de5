#include "tools/progress_display.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace backfill {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

JobProgressSample Sample(double seconds) {
  JobProgressSample sample;
  sample.seconds = seconds;
  sample.snapshot_percent = 42.55;
  sample.eta_seconds = 11;
  sample.vnodes_finished = 109;
  sample.vnodes_total = 256;
  sample.snapshot_rows = 425'000;
  sample.estimated_total_rows = 1'000'000;
  sample.snapshot_rows_per_second = 52'300;
  sample.upstream_ops = 160'000;
  sample.upstream_ops_per_second = 19'870.4;
  sample.barrier_latency_p50_ms = 3.14;
  sample.barrier_latency_p99_ms = 12;
  sample.epochs = 85;
  sample.checkpoints = 42;
  return sample;
}

TEST(ProgressDisplayTest, Formatting) {
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(1000), "1,000");
  EXPECT_EQ(FormatCount(1'234'567), "1,234,567");
  EXPECT_EQ(FormatCount(std::numeric_limits<uint64_t>::max()),
            "18,446,744,073,709,551,615");
  EXPECT_EQ(FormatDuration(0.42), "0.4s");
  EXPECT_EQ(FormatDuration(12.4), "12s");
  EXPECT_EQ(FormatDuration(185), "3m05s");
  EXPECT_EQ(FormatDuration(3723), "1h02m03s");
  EXPECT_EQ(FormatDuration(std::nullopt), "--");
  EXPECT_EQ(FormatDuration(-1), "--");
  EXPECT_EQ(FormatDuration(std::numeric_limits<double>::infinity()), "--");
}

TEST(ProgressDisplayTest, ProgressLine) {
  EXPECT_EQ(FormatProgressLine(Sample(8.1)),
            "  42.5% of snapshot | vnodes 109/256 done | rows "
            "425,000/~1,000,000 | 52,300 rows/s | ETA 11s | upstream 19,870 "
            "ops/s | barrier p50 3.1 ms p99 12.0 ms | epoch 85 ckpt 42 | 8.1s");
  JobProgressSample empty;
  EXPECT_EQ(FormatProgressLine(empty),
            "   0.0% of snapshot | vnodes 0/0 done | rows 0 | 0 rows/s | ETA "
            "-- | upstream 0 ops/s | barrier p50 0.0 ms p99 0.0 ms | epoch 0 "
            "ckpt 0 | 0.0s");
  JobProgressSample done = Sample(70);
  done.snapshot_percent = 100;
  done.vnodes_finished = 256;
  done.eta_seconds = 0;
  EXPECT_THAT(FormatProgressLine(done),
              StartsWith(" 100.0% of snapshot | vnodes 256/256 done"));
  EXPECT_THAT(FormatProgressLine(done), HasSubstr("rows 425,000/1,000,000 "));
  EXPECT_THAT(FormatProgressLine(done), HasSubstr("ETA 0.0s"));
  JobProgressSample odd = Sample(1);
  odd.barrier_latency_p99_ms = std::numeric_limits<double>::quiet_NaN();
  odd.snapshot_rows_per_second = -5;
  odd.eta_seconds = std::nullopt;
  EXPECT_THAT(FormatProgressLine(odd), HasSubstr("p99 --"));
  EXPECT_THAT(FormatProgressLine(odd), HasSubstr("| -- rows/s"));
  EXPECT_THAT(FormatProgressLine(odd), HasSubstr("| ETA -- |"));
}

// A rate limit in force shows after the rate read; none shows nothing.
TEST(ProgressDisplayTest, RateLimitInForce) {
  JobProgressSample limited = Sample(8.1);
  limited.rate_limit_rows_per_second = 84'864;
  EXPECT_THAT(FormatProgressLine(limited),
              HasSubstr("| 52,300 rows/s (limit 84,864) | ETA 11s |"));
  JobProgressSample paused = Sample(8.1);
  paused.rate_limit_rows_per_second = 0;
  paused.snapshot_rows_per_second = 0;
  EXPECT_THAT(FormatProgressLine(paused),
              HasSubstr("| 0 rows/s (paused) | ETA 11s |"));
  EXPECT_THAT(FormatProgressLine(Sample(8.1)),
              HasSubstr("| 52,300 rows/s | ETA 11s |"));
  // An adaptive target judged unreachable says so inside the parentheses.
  limited.target_unreachable = true;
  EXPECT_THAT(FormatProgressLine(limited),
              HasSubstr("| 52,300 rows/s (limit 84,864, target unreachable) "
                        "| ETA 11s |"));
}

// Before the backfill: a label, rows when there are some, no percentage.
TEST(ProgressDisplayTest, PhaseLine) {
  EXPECT_EQ(FormatPhaseLine({.seconds = 0.4, .label = "starting"}),
            "  starting | 0.4s");
  EXPECT_EQ(FormatPhaseLine({.seconds = 3.2,
                             .label = "bulk load",
                             .rows = 412'000,
                             .total_rows = 1'000'000}),
            "  bulk load | rows 412,000/1,000,000 | 3.2s");
  EXPECT_THAT(FormatPhaseLine({.seconds = 3.2,
                               .label = "bulk load",
                               .rows = 412'000,
                               .total_rows = 1'000'000}),
              Not(HasSubstr("%")));
}

TEST(ProgressDisplayTest, TerminalRewritesOneLine) {
  std::ostringstream out;
  ProgressDisplay display(out, {.mode = DisplayMode::kTerminal});
  display.Update(Sample(1));
  display.Update(Sample(2));
  display.Finish();
  display.Finish();  // idempotent
  EXPECT_EQ(out.str(), "\r\033[2K" + FormatProgressLine(Sample(1)) +
                           "\r\033[2K" + FormatProgressLine(Sample(2)) + "\n");
}

TEST(ProgressDisplayTest, TerminalTruncatesToWidth) {
  std::ostringstream out;
  ProgressDisplay display(out, {.mode = DisplayMode::kTerminal, .width = 40});
  display.Update(Sample(1));
  EXPECT_EQ(out.str(),
            "\r\033[2K" + FormatProgressLine(Sample(1)).substr(0, 39));
}

TEST(ProgressDisplayTest, PlainPrintsPeriodicLines) {
  std::ostringstream out;
  ProgressDisplay display(
      out, {.mode = DisplayMode::kPlain, .plain_interval_seconds = 5});
  for (double t : {0.0, 1.0, 4.9, 5.0, 7.0, 10.5, 12.0}) {
    display.Update(Sample(t));
  }
  display.Finish();
  EXPECT_THAT(out.str(), Not(HasSubstr("\r")));
  EXPECT_THAT(out.str(), Not(HasSubstr("\033")));
  EXPECT_EQ(out.str(), FormatProgressLine(Sample(0)) + "\n" +
                           FormatProgressLine(Sample(5)) + "\n" +
                           FormatProgressLine(Sample(10.5)) + "\n" +
                           FormatProgressLine(Sample(12)) + "\n");

  // Phase lines follow the same cadence.
  std::ostringstream phases;
  ProgressDisplay display3(
      phases, {.mode = DisplayMode::kPlain, .plain_interval_seconds = 1});
  display3.UpdatePhase({.seconds = 0, .label = "starting"});
  display3.UpdatePhase({.seconds = 0.5, .label = "bulk load"});
  display3.Update(Sample(1));
  display3.Finish();
  EXPECT_EQ(phases.str(), FormatPhaseLine({.seconds = 0, .label = "starting"}) +
                              "\n" + FormatProgressLine(Sample(1)) + "\n");

  // Nothing skipped: Finish adds nothing.
  std::ostringstream exact;
  ProgressDisplay display2(exact, {.mode = DisplayMode::kPlain});
  display2.Update(Sample(0));
  display2.Finish();
  EXPECT_EQ(exact.str(), FormatProgressLine(Sample(0)) + "\n");
}

TEST(ProgressDisplayTest, JsonEscaping) {
  EXPECT_EQ(JsonQuote(""), "\"\"");
  EXPECT_EQ(JsonQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonQuote("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
  EXPECT_EQ(JsonQuote(std::string("\x01\x1f\x7f\0", 4)),
            "\"\\u0001\\u001f\\u007f\\u0000\"");
  EXPECT_EQ(JsonQuote("/path/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
            "\"/path/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
  // Invalid UTF-8: a lone continuation byte, a truncated sequence, an
  // overlong form, a surrogate.
  EXPECT_EQ(JsonQuote("a\x80z"), "\"a\\ufffdz\"");
  EXPECT_EQ(JsonQuote("a\xc3"), "\"a\\ufffd\"");
  EXPECT_EQ(JsonQuote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonQuote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
}

TEST(ProgressDisplayTest, JsonNumbers) {
  EXPECT_EQ(JsonNumber(0), "0");
  EXPECT_EQ(JsonNumber(61.25), "61.25");
  EXPECT_EQ(JsonNumber(0.1), "0.1");
  EXPECT_EQ(JsonNumber(1e21), "1e+21");
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(JsonNumber(-std::numeric_limits<double>::infinity()), "null");
}

TEST(ProgressDisplayTest, JsonObjectBuilder) {
  JsonObject json;
  json.Add("b", true)
      .Add("i", -3)
      .Add("u", 7u)
      .Add("big", std::numeric_limits<uint64_t>::max())
      .Add("neg", std::numeric_limits<int64_t>::min())
      .Add("d", 2.5)
      .Add("s", "x\"y")
      .Add("sv", absl::string_view("q"))
      .AddNull("n")
      .Add("k\n", false);
  EXPECT_EQ(json.ToString(),
            "{\"b\":true,\"i\":-3,\"u\":7,\"big\":18446744073709551615,"
            "\"neg\":-9223372036854775808,\"d\":2.5,\"s\":\"x\\\"y\","
            "\"sv\":\"q\",\"n\":null,\"k\\n\":false}");
  json.Add("i", 4);  // replaces, keeps the position
  EXPECT_THAT(json.ToString(), StartsWith("{\"b\":true,\"i\":4,\"u\":7,"));
  EXPECT_EQ(JsonObject().ToString(), "{}");
}

TEST(ProgressDisplayTest, DetectDisplayModeOnANonTerminal) {
  // Under bazel test, stdin is not a terminal; -1 is no file at all.
  EXPECT_EQ(DetectDisplayMode(-1), DisplayMode::kPlain);
  EXPECT_EQ(TerminalWidth(-1), 0);
}

}  // namespace
}  // namespace backfill
