#include "serde/vnode_hash.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/random_datum.h"
#include "third_party/absl_extras/status_matchers.h"
#include "zlib.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;

uint32_t ZlibCrc(const std::string& bytes) {
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(bytes.data()),
            static_cast<uInt>(bytes.size())));
}

template <typename T>
std::string Le(T value) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

TEST(VnodeHashTest, Crc32MatchesTheStandardAndZlib) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(Crc32(""), 0u);
  std::mt19937_64 rng(5);
  SCOPED_TRACE("seed=5");
  for (int i = 0; i < 200; ++i) {
    std::string bytes(rng() % 100, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    EXPECT_EQ(Crc32(bytes), ZlibCrc(bytes));
    // Chaining equals hashing the concatenation.
    const size_t split = bytes.empty() ? 0 : rng() % bytes.size();
    EXPECT_EQ(Crc32(bytes.substr(split), Crc32(bytes.substr(0, split))),
              ZlibCrc(bytes));
  }
}

// The documented byte forms (serde/FORMAT.md), checked against zlib.
TEST(VnodeHashTest, ByteFormsMatchTheFormatDocument) {
  EXPECT_EQ(HashDistKey({Datum()}), ZlibCrc(Le<uint32_t>(0xFFFFFFF0u)));
  EXPECT_EQ(HashDistKey({true}), ZlibCrc(std::string("\x01", 1)));
  EXPECT_EQ(HashDistKey({int16_t{-2}}), ZlibCrc(Le<int16_t>(-2)));
  EXPECT_EQ(HashDistKey({int32_t{7}}), ZlibCrc(Le<int32_t>(7)));
  EXPECT_EQ(HashDistKey({int64_t{-7}}), ZlibCrc(Le<int64_t>(-7)));
  EXPECT_EQ(HashDistKey({1.5f}), ZlibCrc(Le<float>(1.5f)));
  EXPECT_EQ(HashDistKey({-0.0}), ZlibCrc(Le<uint64_t>(0)));
  EXPECT_EQ(HashDistKey({-std::nan("7")}),
            ZlibCrc(Le<uint64_t>(0x7FF8000000000000ULL)));
  EXPECT_EQ(HashDistKey({std::nanf("3")}), ZlibCrc(Le<uint32_t>(0x7FC00000u)));
  EXPECT_EQ(HashDistKey({std::string("ab")}), ZlibCrc(Le<uint32_t>(2) + "ab"));
  EXPECT_EQ(HashDistKey({*Decimal::FromString("-1.5")}),
            ZlibCrc(std::string("\x21\x01\x0f", 3)));
  EXPECT_EQ(HashDistKey({Decimal::NaN()}), ZlibCrc(std::string("\x40", 1)));
  EXPECT_EQ(HashDistKey({Date{3}}), ZlibCrc(Le<int32_t>(3)));
  EXPECT_EQ(HashDistKey({TimeOfDay{4}}), ZlibCrc(Le<int64_t>(4)));
  EXPECT_EQ(HashDistKey({Timestamp{5}}), ZlibCrc(Le<int64_t>(5)));
  EXPECT_EQ(HashDistKey({Timestamptz{6}}), ZlibCrc(Le<int64_t>(6)));
  EXPECT_EQ(HashDistKey({Serial{-8}}), ZlibCrc(Le<int64_t>(-8)));
  // INTERVAL: the 16-byte LE span (months x 30 days + days + microseconds).
  EXPECT_EQ(HashDistKey({Interval{1, 0, 0}}),
            ZlibCrc(Le<int64_t>(30 * 86'400'000'000) + Le<int64_t>(0)));
  EXPECT_EQ(HashDistKey({Interval{0, 0, -1}}),
            ZlibCrc(Le<int64_t>(-1) + Le<int64_t>(-1)));
  // INT256: its 32 bytes LE.
  EXPECT_EQ(HashDistKey({Int256::FromInt64(-2)}),
            ZlibCrc(Le<int64_t>(-2) + Le<int64_t>(-1) + Le<int64_t>(-1) +
                    Le<int64_t>(-1)));
  // LIST: u32 LE element count, then each element's form; STRUCT: each
  // field's form.
  EXPECT_EQ(
      HashDistKey({ListValue{{int32_t{1}, Datum()}}}),
      ZlibCrc(Le<uint32_t>(2) + Le<int32_t>(1) + Le<uint32_t>(0xFFFFFFF0u)));
  EXPECT_EQ(HashDistKey({ListValue{}}), ZlibCrc(Le<uint32_t>(0)));
  EXPECT_EQ(HashDistKey({StructValue{{std::string("a"), -0.0}}}),
            ZlibCrc(Le<uint32_t>(1) + "a" + Le<uint64_t>(0)));
  // Multi-column keys hash the concatenation.
  EXPECT_EQ(HashDistKey({int32_t{1}, std::string("x"), Datum()}),
            ZlibCrc(Le<int32_t>(1) + Le<uint32_t>(1) + "x" +
                    Le<uint32_t>(0xFFFFFFF0u)));
}

TEST(VnodeHashTest, EqualDatumsHashEqually) {
  EXPECT_EQ(HashDistKey({0.0}), HashDistKey({-0.0}));
  EXPECT_EQ(HashDistKey({std::nan("")}), HashDistKey({-std::nan("1")}));
  EXPECT_EQ(HashDistKey({0.0f}), HashDistKey({-0.0f}));
  EXPECT_EQ(HashDistKey({*Decimal::FromString("1.50")}),
            HashDistKey({*Decimal::FromString("1.5")}));
  EXPECT_EQ(HashDistKey({Interval{1, 0, 0}}),
            HashDistKey({Interval{0, 30, 0}}));
  EXPECT_EQ(HashDistKey({Interval{0, 1, 0}}),
            HashDistKey({Interval{0, 0, 86'400'000'000}}));
  EXPECT_EQ(HashDistKey({ListValue{{-0.0, Interval{1, 0, 0}}}}),
            HashDistKey({ListValue{{0.0, Interval{0, 30, 0}}}}));
}

// Never change: golden vnodes of the types added for issue 21.
TEST(VnodeHashTest, GoldenVnodesOfAddedScalarTypes) {
  EXPECT_EQ(ComputeVnode({Timestamptz{1'700'000'000'000'000}},
                         {DataType::kTimestamptz}, 256),
            129);
  EXPECT_EQ(ComputeVnode({Interval{1, 2, 3}}, {DataType::kInterval}, 256), 142);
  EXPECT_EQ(ComputeVnode({Serial{42}}, {DataType::kSerial}, 256), 247);
  EXPECT_EQ(ComputeVnode({Int256::FromInt64(-5), Serial{1}},
                         {DataType::kInt256, DataType::kSerial}, 32768),
            3911);
  EXPECT_EQ(ComputeVnode({ListValue{{int64_t{1}, int64_t{2}}}},
                         {DataType::kList}, 256),
            237);
  EXPECT_EQ(ComputeVnode({StructValue{{int64_t{1}, std::string("x")}}},
                         {DataType::kStruct}, 256),
            185);
}

// Never change: storage keys start with these vnodes.
TEST(VnodeHashTest, GoldenVnodes) {
  const std::vector<DataType> one_int64 = {DataType::kInt64};
  std::vector<int> vnodes;
  for (int64_t id = 0; id < 8; ++id) {
    vnodes.push_back(ComputeVnode({id}, one_int64, kDefaultVnodeCount));
  }
  EXPECT_THAT(vnodes,
              ::testing::ElementsAre(105, 247, 20, 138, 147, 13, 238, 112));
  EXPECT_EQ(ComputeVnode({int32_t{42}, std::string("hello")},
                         {DataType::kInt32, DataType::kVarchar}, 256),
            133);
  EXPECT_EQ(ComputeVnode({Datum()}, {DataType::kVarchar}, 256), 169);
  EXPECT_EQ(ComputeVnode(
                {*Decimal::FromString("12345.67"), Timestamp{1700000000000000}},
                {DataType::kDecimal, DataType::kTimestamp}, 32768),
            20958);
  EXPECT_EQ(HashDistKey({std::string("hello")}), 0x5CAC007Au);
}

TEST(VnodeHashTest, SingletonAndCounts) {
  EXPECT_EQ(ComputeVnode({}, {}, 256), 0);
  BACKFILL_ASSERT_OK_AND_ASSIGN(VnodeHasher singleton,
                                VnodeHasher::Create({}, 256));
  EXPECT_TRUE(singleton.is_singleton());
  EXPECT_EQ(singleton.VnodeOf({int64_t{5}}), 0);
  EXPECT_THAT(VnodeHasher::Create({0}, 0),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(VnodeHasher::Create({0}, kMaxVnodeCount + 1),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(VnodeHasher::Create({-1}, 256),
              StatusIs(absl::StatusCode::kInvalidArgument));
  BACKFILL_EXPECT_OK(ValidateVnodeCount(1));
  BACKFILL_EXPECT_OK(ValidateVnodeCount(kMaxVnodeCount));
  EXPECT_THAT(ValidateVnodeCount(-3),
              StatusIs(absl::StatusCode::kInvalidArgument));
  BACKFILL_ASSERT_OK_AND_ASSIGN(VnodeHasher one, VnodeHasher::Create({0}, 1));
  EXPECT_EQ(one.VnodeOf({int64_t{123}}), 0);
}

// Row-wise, row-batch and column-batch forms agree, for every type mix.
TEST(VnodeHashTest, BatchFormsAgreeWithSingleRow) {
  for (int trial = 0; trial < 40; ++trial) {
    const uint64_t seed = 31337 + trial;
    SCOPED_TRACE(absl::StrCat("seed=", seed));
    std::mt19937_64 rng(seed);
    const int num_columns = std::uniform_int_distribution<int>(1, 5)(rng);
    std::vector<DataType> types;
    for (int c = 0; c < num_columns; ++c)
      types.push_back(RandomScalarDataType(rng));
    std::vector<int> dist_key;
    for (int c = 0; c < num_columns; ++c) {
      if (rng() % 2 == 0) dist_key.push_back(c);
    }
    const int vnode_count =
        std::uniform_int_distribution<int>(1, kMaxVnodeCount)(rng);
    BACKFILL_ASSERT_OK_AND_ASSIGN(VnodeHasher hasher,
                                  VnodeHasher::Create(dist_key, vnode_count));
    const size_t num_rows = std::uniform_int_distribution<size_t>(0, 2500)(rng);
    std::vector<Row> rows;
    std::vector<std::vector<Datum>> columns(num_columns);
    for (size_t r = 0; r < num_rows; ++r) {
      rows.push_back(RandomRow(types, rng, 0.2));
      for (int c = 0; c < num_columns; ++c)
        columns[c].push_back(rows.back()[c]);
    }
    std::vector<absl::Span<const Datum>> column_spans(columns.begin(),
                                                      columns.end());
    std::vector<VirtualNode> by_rows, by_columns;
    hasher.VnodesOfRows(rows, &by_rows);
    hasher.VnodesOfColumns(column_spans, num_rows, &by_columns);
    ASSERT_EQ(by_rows, by_columns);
    std::vector<DataType> dist_types;
    for (int c : dist_key) dist_types.push_back(types[c]);
    for (size_t r = 0; r < num_rows; ++r) {
      ASSERT_LT(by_rows[r], vnode_count);
      ASSERT_EQ(by_rows[r], ComputeVnode(ProjectRow(rows[r], dist_key),
                                         dist_types, vnode_count));
    }
  }
}

TEST(VnodeHashTest, SpreadsSequentialKeysEvenly) {
  std::vector<int> counts(256, 0);
  for (int64_t id = 0; id < 256 * 100; ++id) {
    ++counts[ComputeVnode({id}, {DataType::kInt64}, 256)];
  }
  for (int c : counts) {
    EXPECT_GT(c, 50);
    EXPECT_LT(c, 150);
  }
}

}  // namespace
}  // namespace backfill
