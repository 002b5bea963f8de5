#include "executor/testing/message_literal.h"

#include <cstdint>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "executor/testing/chunk_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/decimal.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(MessageLiteralTest, ParsesTheExampleFromTheHeader) {
  StreamChunk chunk =
      StreamChunkFromPretty(" I  T\n + 1 foo\n U- 2 bar\n U+ 2 baz\n - 3 .");
  EXPECT_THAT(chunk.data_types(),
              ElementsAre(DataType::kInt64, DataType::kVarchar));
  EXPECT_THAT(chunk.ops(), ElementsAre(Op::kInsert, Op::kUpdateDelete,
                                       Op::kUpdateInsert, Op::kDelete));
  EXPECT_EQ(chunk.cardinality(), 4u);
  EXPECT_TRUE(RowsEqual(chunk.RowAt(0), Row{int64_t{1}, std::string("foo")}));
  EXPECT_TRUE(RowsEqual(chunk.RowAt(3), Row{int64_t{3}, Datum()}));
}

TEST(MessageLiteralTest, EveryTypeLetter) {
  DataChunk chunk = DataChunkFromPretty(R"(
      I  i  h  F   f    B T   x    D    dt         tm              ts
      # a comment line
      -1 2  3  1.5 0.25 t foo 00ff 1.50 2024-01-31 12:30:00.000001 1969-12-31T23:59:59
  )");
  ASSERT_EQ(chunk.capacity(), 1u);
  const Row row = chunk.RowAt(0);
  EXPECT_EQ(std::get<int64_t>(row[0]), -1);
  EXPECT_EQ(std::get<int32_t>(row[1]), 2);
  EXPECT_EQ(std::get<int16_t>(row[2]), 3);
  EXPECT_EQ(std::get<double>(row[3]), 1.5);
  EXPECT_EQ(std::get<float>(row[4]), 0.25f);
  EXPECT_EQ(std::get<bool>(row[5]), true);
  EXPECT_EQ(std::get<std::string>(row[6]), "foo");
  EXPECT_EQ(std::get<std::string>(row[7]), std::string("\x00\xff", 2));
  EXPECT_EQ(std::get<Decimal>(row[8]), *Decimal::FromString("1.5"));
  EXPECT_EQ(std::get<Date>(row[9]).days, 19753);
  EXPECT_EQ(std::get<TimeOfDay>(row[10]).micros,
            (12 * 3600 + 30 * 60) * int64_t{1'000'000} + 1);
  EXPECT_EQ(std::get<Timestamp>(row[11]).micros, -1'000'000);
}

TEST(MessageLiteralTest, TrailingDMarksInvisibleRows) {
  StreamChunk chunk = StreamChunkFromPretty(" I D\n + 1 2\n - 3 4 D\n + . . D");
  EXPECT_THAT(chunk.visibility(), ElementsAre(true, false, false));
  EXPECT_EQ(chunk.cardinality(), 1u);
  EXPECT_EQ(chunk.column(1).type(), DataType::kDecimal);
}

TEST(MessageLiteralTest, Errors) {
  EXPECT_THAT(ParseStreamChunk(""), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("no type line")));
  EXPECT_THAT(ParseStreamChunk(" Q\n + 1"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown column type letter 'Q'")));
  EXPECT_THAT(ParseStreamChunk(" I\n * 1"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("line 2: unknown op '*'")));
  EXPECT_THAT(ParseStreamChunk(" I I\n + 1"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("expected 2 values, got 1")));
  EXPECT_THAT(ParseStreamChunk(" I\n + x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("'x' is not a INT64 value")));
  EXPECT_THAT(ParseDataChunk(" h\n 40000"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseDataChunk(" x\n 0"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseDataChunk(" tm\n 25:00:00"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseDataChunk(" ts\n 2024-01-01"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseDataChunk(" B\n yes"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(MessageLiteralDeathTest, FromPrettyAbortsOnAMalformedLiteral) {
  EXPECT_DEATH(StreamChunkFromPretty(" I\n + x"), "malformed");
}

TEST(MessageLiteralTest, PrettyRoundTripsByHand) {
  const std::string text =
      "I T B\n+ 1 foo t\nU- 2 . f D\nU+ 2 baz .\n- 3 . t\n";
  StreamChunk chunk = StreamChunkFromPretty(text);
  EXPECT_EQ(StreamChunkToPretty(chunk), text);
  EXPECT_EQ(DataChunkToPretty(DataChunkFromPretty("F\n0.1\n.\n")),
            "F\n0.1\n.\n");
}

// Random chunks of every type survive ToPretty -> Parse unchanged, including
// visibility and physical row order.
TEST(MessageLiteralTest, RandomRoundTrips) {
  const uint32_t seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937 random(seed);
  const std::vector<DataType> types(std::begin(kAllDataTypes),
                                    std::end(kAllDataTypes));
  auto random_datum = [&](DataType type) -> Datum {
    if (random() % 5 == 0) return Datum();
    switch (type) {
      case DataType::kBoolean:
        return random() % 2 == 0;
      case DataType::kInt16:
        return static_cast<int16_t>(random());
      case DataType::kInt32:
        return static_cast<int32_t>(random());
      case DataType::kInt64:
        return static_cast<int64_t>((uint64_t{random()} << 32) | random());
      case DataType::kFloat32:
        return static_cast<float>(static_cast<int32_t>(random())) / 1024.0f;
      case DataType::kFloat64:
        return static_cast<double>(static_cast<int32_t>(random())) / 3.0;
      case DataType::kDecimal:
        return Decimal::FromParts(random() % 2 == 0, random(), random() % 6);
      case DataType::kVarchar:
        return absl::StrCat("s", random() % 1000);
      case DataType::kBytea:
        return std::string(1 + random() % 3, static_cast<char>(random()));
      case DataType::kDate:
        return Date{static_cast<int32_t>(random() % 40000) - 20000};
      case DataType::kTime:
        return TimeOfDay{static_cast<int64_t>(random() % 86'400) * 1'000'000 +
                         static_cast<int64_t>(random() % 1'000'000)};
      case DataType::kTimestamp:
        return Timestamp{
            (static_cast<int64_t>(random() % 2'000'000'000) - 1'000'000'000) *
                1'000'000 +
            static_cast<int64_t>(random() % 1'000'000)};
      default: break;  // not in kAllDataTypes (serde/data_type.h)
    }
    return Datum();
  };
  for (int iteration = 0; iteration < 200; ++iteration) {
    const size_t num_rows = random() % 6;
    std::vector<Row> rows;
    std::vector<Op> ops;
    std::vector<bool> visibility;
    for (size_t r = 0; r < num_rows; ++r) {
      Row row;
      for (DataType type : types) row.push_back(random_datum(type));
      rows.push_back(std::move(row));
      ops.push_back(static_cast<Op>(random() % 4));
      visibility.push_back(random() % 3 != 0);
    }
    StreamChunk chunk = StreamChunk::FromRows(types, ops, rows);
    chunk.SetVisibility(visibility);
    const std::string text = StreamChunkToPretty(chunk);
    BACKFILL_ASSERT_OK_AND_ASSIGN(StreamChunk parsed, ParseStreamChunk(text));
    ASSERT_EQ(StreamChunkToPretty(parsed), text);
    ASSERT_EQ(parsed.ops(), chunk.ops());
    ASSERT_EQ(parsed.visibility(), chunk.visibility());
    for (size_t r = 0; r < num_rows; ++r) {
      ASSERT_TRUE(RowsEqual(parsed.RowAt(r), chunk.RowAt(r))) << text;
    }
  }
}

TEST(MessageLiteralTest, TestBarrier) {
  Barrier barrier = TestBarrier(5);
  EXPECT_EQ(barrier.epoch.curr, Epoch(5));
  EXPECT_EQ(barrier.epoch.prev, Epoch(4));
  EXPECT_TRUE(barrier.is_checkpoint());
  Barrier paused =
      TestBarrier(6, BarrierKind::kBarrier,
                  std::make_shared<const Mutation>(PauseMutation{}));
  EXPECT_FALSE(paused.is_checkpoint());
  EXPECT_NE(paused.MutationAs<PauseMutation>(), nullptr);
}

}  // namespace
}  // namespace testing
}  // namespace backfill
