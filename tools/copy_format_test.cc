#include "tools/copy_format.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/decimal.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Decimal Dec(const char* text) { return *Decimal::FromString(text); }

TEST(CopyFormatTest, NullAndBooleans) {
  EXPECT_EQ(FormatCopyDatum(Datum(), DataType::kInt64), "\\N");
  EXPECT_EQ(FormatCopyDatum(Datum(), DataType::kVarchar), "\\N");
  EXPECT_EQ(FormatCopyDatum(true, DataType::kBoolean), "t");
  EXPECT_EQ(FormatCopyDatum(false, DataType::kBoolean), "f");
}

TEST(CopyFormatTest, Integers) {
  EXPECT_EQ(FormatCopyDatum(int16_t{-32768}, DataType::kInt16), "-32768");
  EXPECT_EQ(FormatCopyDatum(int32_t{2147483647}, DataType::kInt32),
            "2147483647");
  EXPECT_EQ(
      FormatCopyDatum(std::numeric_limits<int64_t>::min(), DataType::kInt64),
      "-9223372036854775808");
  EXPECT_EQ(FormatCopyDatum(int64_t{0}, DataType::kInt64), "0");
}

TEST(CopyFormatTest, Float64ShortestRoundTripInPostgresLayout) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0.0, "0"},
      {-0.0, "-0"},
      {0.1, "0.1"},
      {2.5, "2.5"},
      {-2.5, "-2.5"},
      {100.0, "100"},
      {1.0 / 3, "0.3333333333333333"},
      {0.1 + 0.2, "0.30000000000000004"},
      {1e14, "100000000000000"},
      {123456789012345.0, "123456789012345"},
      {1e15, "1e+15"},
      {1234567890123456.0, "1.234567890123456e+15"},
      {0.0001, "0.0001"},
      {0.00012345, "0.00012345"},
      {1e-5, "1e-05"},
      {-1.5e-7, "-1.5e-07"},
      {1.5e300, "1.5e+300"},
      {5e-324, "5e-324"},
      {std::numeric_limits<double>::max(), "1.7976931348623157e+308"},
      {std::numeric_limits<double>::quiet_NaN(), "NaN"},
      {-std::numeric_limits<double>::quiet_NaN(), "NaN"},
      {std::numeric_limits<double>::infinity(), "Infinity"},
      {-std::numeric_limits<double>::infinity(), "-Infinity"},
  };
  for (const auto& [value, text] : cases) {
    SCOPED_TRACE(text);
    EXPECT_EQ(FormatCopyDatum(value, DataType::kFloat64), text);
    if (!std::isnan(value)) {
      EXPECT_EQ(std::strtod(text.c_str(), nullptr), value);
      EXPECT_EQ(std::signbit(std::strtod(text.c_str(), nullptr)),
                std::signbit(value));
    }
  }
}

TEST(CopyFormatTest, Float32UsesFloatDigits) {
  const std::vector<std::pair<float, std::string>> cases = {
      {0.1f, "0.1"},
      {1.0f / 3, "0.33333334"},
      {-0.0f, "-0"},
      {123456.0f, "123456"},
      {1e6f, "1e+06"},
      {1.5e-5f, "1.5e-05"},
      {std::numeric_limits<float>::max(), "3.4028235e+38"},
      {std::numeric_limits<float>::min(), "1.1754944e-38"},
      {std::numeric_limits<float>::quiet_NaN(), "NaN"},
      {std::numeric_limits<float>::infinity(), "Infinity"},
      {-std::numeric_limits<float>::infinity(), "-Infinity"},
  };
  for (const auto& [value, text] : cases) {
    SCOPED_TRACE(text);
    EXPECT_EQ(FormatCopyDatum(value, DataType::kFloat32), text);
    if (!std::isnan(value)) {
      EXPECT_EQ(std::strtof(text.c_str(), nullptr), value);
    }
  }
}

TEST(CopyFormatTest, Decimals) {
  EXPECT_EQ(FormatCopyDatum(Dec("1.50"), DataType::kDecimal), "1.5");
  EXPECT_EQ(FormatCopyDatum(Dec("-0.00100"), DataType::kDecimal), "-0.001");
  EXPECT_EQ(FormatCopyDatum(Dec("1200"), DataType::kDecimal), "1200");
  EXPECT_EQ(FormatCopyDatum(Dec("0.000"), DataType::kDecimal), "0");
  EXPECT_EQ(FormatCopyDatum(Decimal::NaN(), DataType::kDecimal), "NaN");
  EXPECT_EQ(FormatCopyDatum(Decimal::PositiveInfinity(), DataType::kDecimal),
            "Infinity");
  EXPECT_EQ(FormatCopyDatum(Decimal::NegativeInfinity(), DataType::kDecimal),
            "-Infinity");
}

TEST(CopyFormatTest, VarcharEscapes) {
  EXPECT_EQ(FormatCopyDatum(std::string(""), DataType::kVarchar), "");
  EXPECT_EQ(FormatCopyDatum(std::string("plain text"), DataType::kVarchar),
            "plain text");
  EXPECT_EQ(FormatCopyDatum(std::string("a\\b\tc\nd\re"), DataType::kVarchar),
            "a\\\\b\\tc\\nd\\re");
  EXPECT_EQ(FormatCopyDatum(std::string("\b\f\v"), DataType::kVarchar),
            "\\b\\f\\v");
  // The string "\N" is not NULL.
  EXPECT_EQ(FormatCopyDatum(std::string("\\N"), DataType::kVarchar), "\\\\N");
  // UTF-8 and other control bytes pass through.
  EXPECT_EQ(
      FormatCopyDatum(std::string("h\xc3\xa9llo\x01"), DataType::kVarchar),
      "h\xc3\xa9llo\x01");
  EXPECT_EQ(FormatCopyDatum(std::string("a\0b", 3), DataType::kVarchar),
            std::string("a\0b", 3));
  EXPECT_EQ(EscapeCopyText("a\\b\tc"), "a\\\\b\\tc");
  std::string appended = "kept\t";
  AppendCopyEscaped("a\\b\tc", &appended);
  EXPECT_EQ(appended, "kept\ta\\\\b\\tc");
}

TEST(CopyFormatTest, ByteaIsEscapedHex) {
  EXPECT_EQ(FormatCopyDatum(std::string("\x01\x02\xff", 3), DataType::kBytea),
            "\\\\x0102ff");
  EXPECT_EQ(FormatCopyDatum(std::string(), DataType::kBytea), "\\\\x");
  EXPECT_EQ(FormatCopyDatum(std::string("\0\t\\", 3), DataType::kBytea),
            "\\\\x00095c");
}

TEST(CopyFormatTest, Dates) {
  EXPECT_EQ(FormatCopyDatum(Date{0}, DataType::kDate), "1970-01-01");
  EXPECT_EQ(FormatCopyDatum(Date{-1}, DataType::kDate), "1969-12-31");
  EXPECT_EQ(FormatCopyDatum(Date{19723}, DataType::kDate), "2024-01-01");
  EXPECT_EQ(FormatCopyDatum(Date{11016}, DataType::kDate), "2000-02-29");
  EXPECT_EQ(FormatCopyDatum(Date{-719162}, DataType::kDate), "0001-01-01");
  EXPECT_EQ(FormatCopyDatum(Date{-719163}, DataType::kDate), "0001-12-31 BC");
  EXPECT_EQ(FormatCopyDatum(Date{2932896}, DataType::kDate), "9999-12-31");
  EXPECT_EQ(FormatCopyDatum(Date{2932897}, DataType::kDate), "10000-01-01");
}

TEST(CopyFormatTest, TimesTrimTrailingFractionZeros) {
  EXPECT_EQ(FormatCopyDatum(TimeOfDay{0}, DataType::kTime), "00:00:00");
  EXPECT_EQ(FormatCopyDatum(TimeOfDay{1'500'000}, DataType::kTime),
            "00:00:01.5");
  EXPECT_EQ(FormatCopyDatum(TimeOfDay{45'296'000'100}, DataType::kTime),
            "12:34:56.0001");
  EXPECT_EQ(FormatCopyDatum(TimeOfDay{86'399'999'999}, DataType::kTime),
            "23:59:59.999999");
  EXPECT_EQ(FormatCopyDatum(TimeOfDay{1}, DataType::kTime), "00:00:00.000001");
}

TEST(CopyFormatTest, Timestamps) {
  EXPECT_EQ(FormatCopyDatum(Timestamp{0}, DataType::kTimestamp),
            "1970-01-01 00:00:00");
  EXPECT_EQ(FormatCopyDatum(Timestamp{-1}, DataType::kTimestamp),
            "1969-12-31 23:59:59.999999");
  EXPECT_EQ(
      FormatCopyDatum(Timestamp{1'704'067'200'123'000}, DataType::kTimestamp),
      "2024-01-01 00:00:00.123");
  EXPECT_EQ(FormatCopyDatum(Timestamp{951'782'400'000'000 + 3'723'000'000},
                            DataType::kTimestamp),
            "2000-02-29 01:02:03");
  EXPECT_EQ(FormatCopyDatum(Timestamp{-62'135'596'800'000'000 - 1},
                            DataType::kTimestamp),
            "0001-12-31 23:59:59.999999 BC");
}

TEST(CopyFormatTest, Rows) {
  const Row row = {int64_t{1}, Datum(), std::string("x\ty"), 1.5,
                   std::string("\x0a", 1)};
  const std::vector<ColumnType> types = {DataType::kInt64, DataType::kVarchar,
                                       DataType::kVarchar, DataType::kFloat64,
                                       DataType::kBytea};
  EXPECT_EQ(FormatCopyRow(row, types), "1\t\\N\tx\\ty\t1.5\t\\\\x0a");
  EXPECT_EQ(FormatCopyRow({}, {}), "");
  // A long field, then shorter ones (the fields share one scratch buffer).
  EXPECT_EQ(FormatCopyRow({std::string("long\\text"), std::string("s"), Datum(),
                           std::string("")},
                          {DataType::kVarchar, DataType::kVarchar,
                           DataType::kVarchar, DataType::kVarchar}),
            "long\\\\text\ts\t\\N\t");
}

absl::Status WriteDump(const std::string& path,
                       const std::vector<std::string>& names,
                       const std::vector<ColumnType>& types,
                       const std::vector<Row>& rows,
                       CopyDumpOptions options = {}) {
  CopyDump dump(path, names, types, options);
  for (const Row& row : rows) {
    absl::Status status = dump.AddRow(row);
    if (!status.ok()) return status;
  }
  return dump.Finish();
}

TEST(CopyFormatTest, DumpSortsRowsByteWiseAfterTheHeader) {
  const std::vector<std::string> names = {"id", "na\tme"};
  const std::vector<ColumnType> types = {DataType::kInt64, DataType::kVarchar};
  const std::vector<Row> rows = {
      {int64_t{2}, std::string("b")},
      {int64_t{10}, std::string("z")},
      {int64_t{1}, std::string("\xc3\xa9")},
      {int64_t{1}, std::string("a")},
      {int64_t{1}, Datum()},
  };
  const std::string path = TempPath("dump.tsv");
  ASSERT_THAT(WriteDump(path, names, types, rows), IsOk());
  // Byte-wise: "1\t\\N" < "1\ta" < "1\t\xc3\xa9" (0xc3 > 'a') < "10" < "2".
  EXPECT_EQ(ReadFile(path),
            "id\tna\\tme\n"
            "1\t\\N\n"
            "1\ta\n"
            "1\t\xc3\xa9\n"
            "10\tz\n"
            "2\tb\n");

  // The same rows in another order give the same bytes.
  std::vector<Row> reversed(rows.rbegin(), rows.rend());
  const std::string other = TempPath("dump2.tsv");
  ASSERT_THAT(WriteDump(other, names, types, reversed), IsOk());
  EXPECT_EQ(ReadFile(other), ReadFile(path));

  // Overwrites an existing file.
  ASSERT_THAT(WriteDump(path, names, types, {}), IsOk());
  EXPECT_EQ(ReadFile(path), "id\tna\\tme\n");
}

TEST(CopyFormatTest, ABoundedDumpSortsThroughRunFilesToTheSameBytes) {
  const uint64_t seed = 5;
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  const std::vector<std::string> names = {"id", "v"};
  const std::vector<ColumnType> types = {DataType::kInt64, DataType::kVarchar};
  std::vector<Row> rows;
  for (int i = 0; i < 2000; ++i) {
    rows.push_back(
        {static_cast<int64_t>(rng() % 500),
         std::string(rng() % 12, static_cast<char>('a' + rng() % 26))});
  }
  const std::string expected_path = TempPath("in_memory.tsv");
  ASSERT_THAT(WriteDump(expected_path, names, types, rows), IsOk());

  const std::string dir = TempPath("bounded");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/view.tsv";
  CopyDumpOptions options;
  options.memory_budget_bytes = 256;
  options.merge_fan_in = 3;  // Several merge passes.
  CopyDump dump(path, names, types, options);
  size_t max_buffered = 0;
  for (const Row& row : rows) {
    ASSERT_THAT(dump.AddRow(row), IsOk());
    max_buffered = std::max(max_buffered, dump.buffered_bytes());
  }
  EXPECT_LE(max_buffered, options.memory_budget_bytes);
  EXPECT_GT(dump.num_runs(), 20u);
  ASSERT_THAT(dump.Finish(), IsOk());
  EXPECT_EQ(dump.num_rows(), rows.size());
  EXPECT_EQ(ReadFile(path), ReadFile(expected_path));
  // The run files are gone.
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(files, ::testing::ElementsAre("view.tsv"));
}

TEST(CopyFormatTest, AnUnfinishedDumpLeavesNoFiles) {
  const std::string dir = TempPath("unfinished");
  std::filesystem::create_directories(dir);
  {
    CopyDumpOptions options;
    options.memory_budget_bytes = 1;
    CopyDump dump(dir + "/view.tsv", {"v"}, {DataType::kInt32}, options);
    for (int32_t i = 0; i < 10; ++i) ASSERT_THAT(dump.AddRow({i}), IsOk());
    EXPECT_EQ(dump.num_runs(), 9u);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(CopyFormatTest, AddedAndNestedTypesUseSerdeText) {
  EXPECT_EQ(FormatCopyDatum(Timestamptz{0}, DataType::kTimestamptz),
            "1970-01-01 00:00:00+00");
  EXPECT_EQ(FormatCopyDatum(ListValue{{std::string("a\tb"), Datum()}},
                            ColumnType::List(DataType::kVarchar)),
            "{\"a\\tb\",NULL}");
  EXPECT_EQ(FormatCopyDatum(StructValue{{int32_t{1}, std::string("x y")}},
                            ColumnType::Struct({{"a", DataType::kInt32, 1},
                                                {"b", DataType::kVarchar, 2}})),
            "(1,\"x y\")");
  EXPECT_EQ(FormatCopyDatum(*ParseJsonb(R"({"k": "a\\b"})"),
                            DataType::kJsonb),
            R"({"k": "a\\\\b"})");
}

TEST(CopyFormatTest, WriteErrorsNameThePath) {
  EXPECT_THAT(
      WriteDump(TempPath("no/such/dir/view.tsv"), {"a"}, {DataType::kInt64},
                {}),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("no/such/dir/view.tsv")));
  CopyDumpOptions options;
  options.memory_budget_bytes = 1;
  CopyDump dump(TempPath("no/such/dir/runs.tsv"), {"a"}, {DataType::kInt64},
                options);
  ASSERT_THAT(dump.AddRow({int64_t{1}}), IsOk());
  EXPECT_THAT(dump.AddRow({int64_t{2}}),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("no/such/dir/runs.tsv.run0")));
}

}  // namespace
}  // namespace backfill
