#include "serde/value_codec.h"

#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/random_datum.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;

// The conformance every ValueRowCodec passes, run against both.
class ValueCodecTest : public ::testing::TestWithParam<ValueRowEncoding> {};

TEST_P(ValueCodecTest, FactoryBuildsTheRequestedEncoding) {
  const Schema schema = {{"id", DataType::kInt64, 1}};
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto codec,
                                MakeValueRowCodec(GetParam(), schema));
  EXPECT_EQ(codec->encoding(), GetParam());
  EXPECT_EQ(codec->schema().size(), 1u);
}

TEST_P(ValueCodecTest, RoundTripsRandomSchemasAndRows) {
  for (int trial = 0; trial < 50; ++trial) {
    const uint64_t seed = 9000 + trial;
    SCOPED_TRACE(
        absl::StrCat("seed=", seed, " ", ValueRowEncodingName(GetParam())));
    std::mt19937_64 rng(seed);
    Schema schema;
    const int num_columns = std::uniform_int_distribution<int>(0, 8)(rng);
    for (int c = 0; c < num_columns; ++c) {
      schema.push_back(
          {absl::StrCat("c", c), RandomScalarDataType(rng), c * 2 + 1});
    }
    const std::vector<DataType> types = ColumnTypes(schema);
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto codec,
                                  MakeValueRowCodec(GetParam(), schema));
    for (int i = 0; i < 50; ++i) {
      const Row row = RandomRow(types, rng, 0.25);
      std::string bytes = "prefix";
      codec->Encode(row, &bytes);  // appends
      ASSERT_EQ(bytes.substr(0, 6), "prefix");
      BACKFILL_ASSERT_OK_AND_ASSIGN(
          Row decoded, codec->Decode(absl::string_view(bytes).substr(6)));
      ASSERT_TRUE(RowsEqual(decoded, row)) << RowDebugString(row);
    }
  }
}

TEST_P(ValueCodecTest, DecodeAppendAgreesWithDecodeAndUndoesOnError) {
  for (int trial = 0; trial < 40; ++trial) {
    const uint64_t seed = 9500 + trial;
    SCOPED_TRACE(
        absl::StrCat("seed=", seed, " ", ValueRowEncodingName(GetParam())));
    std::mt19937_64 rng(seed);
    Schema schema;
    // Scalar and nested columns (the checked decoders), and in every other
    // trial scalar columns only (the fast paths that append in place).
    const bool scalar_only = trial % 2 == 1;
    const int num_columns = std::uniform_int_distribution<int>(1, 7)(rng);
    for (int c = 0; c < num_columns; ++c) {
      if (scalar_only) {
        schema.push_back(
            {absl::StrCat("c", c), RandomScalarDataType(rng), c + 1});
      } else {
        schema.push_back({absl::StrCat("c", c),
                          RandomValueColumnType(rng, /*max_depth=*/2), c + 1});
      }
    }
    BACKFILL_ASSERT_OK_AND_ASSIGN(auto codec,
                                  MakeValueRowCodec(GetParam(), schema));
    std::vector<std::vector<Datum>> columns(schema.size());
    std::vector<Row> appended;
    for (int i = 0; i < 40; ++i) {
      Row row;
      for (const ColumnDesc& column : schema) {
        row.push_back(RandomColumnDatum(column.type, rng, 0.25));
      }
      std::string bytes;
      codec->Encode(row, &bytes);
      BACKFILL_ASSERT_OK(codec->DecodeAppend(bytes, absl::MakeSpan(columns)));
      appended.push_back(row);
      // A corrupted or cut copy: the same verdict as Decode, and on an error
      // the columns keep exactly the rows appended so far.
      std::string bad = bytes;
      if (!bad.empty() && i % 2 == 0) {
        bad[std::uniform_int_distribution<size_t>(0, bad.size() - 1)(rng)] ^=
            static_cast<char>(1 + rng() % 255);
      } else {
        bad.resize(bad.size() / 2);
      }
      const absl::StatusOr<Row> decoded = codec->Decode(bad);
      const absl::Status status =
          codec->DecodeAppend(bad, absl::MakeSpan(columns));
      ASSERT_EQ(status, decoded.status());
      if (decoded.ok()) appended.push_back(*decoded);
      for (size_t c = 0; c < columns.size(); ++c) {
        ASSERT_EQ(columns[c].size(), appended.size()) << "column " << c;
      }
    }
    for (size_t r = 0; r < appended.size(); ++r) {
      Row from_columns;
      for (const auto& column : columns) from_columns.push_back(column[r]);
      ASSERT_TRUE(RowsEqual(from_columns, appended[r]))
          << r << ": " << RowDebugString(appended[r]);
    }
  }
}

TEST_P(ValueCodecTest, RejectsInvalidSchema) {
  EXPECT_THAT(MakeValueRowCodec(GetParam(), {{"a", DataType::kInt64, -1}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

INSTANTIATE_TEST_SUITE_P(Encodings, ValueCodecTest,
                         ::testing::Values(ValueRowEncoding::kPositional,
                                           ValueRowEncoding::kColumnAware),
                         [](const auto& info) {
                           return std::string(ValueRowEncodingName(
                                      info.param)) == "POSITIONAL"
                                      ? "Positional"
                                      : "ColumnAware";
                         });

TEST(ValueRowEncodingTest, Names) {
  EXPECT_EQ(ValueRowEncodingName(ValueRowEncoding::kPositional), "POSITIONAL");
  EXPECT_EQ(ValueRowEncodingName(ValueRowEncoding::kColumnAware),
            "COLUMN_AWARE");
  EXPECT_THAT(MakeValueRowCodec(static_cast<ValueRowEncoding>(9), {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace backfill
