#include "serde/memcmp_codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/random_datum.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Optional;

constexpr uint64_t kBaseSeed = 20240601;

int Sign(int x) { return (x > 0) - (x < 0); }

int CompareBytes(const std::string& a, const std::string& b) {
  return Sign(a.compare(b));
}

std::string Encode(RowView row, absl::Span<const DataType> types,
                   absl::Span<const OrderType> orders) {
  std::string out;
  EncodeKey(row, types, orders, &out);
  return out;
}

std::string Hex(const std::string& bytes) {
  return absl::BytesToHexString(bytes);
}

std::string EncodeOne(const Datum& d, DataType type, OrderType order) {
  std::string out;
  EncodeKeyDatum(d, type, order, &out);
  return out;
}

// keys[i] is the key of rows[i] under `orders`: every pair of keys compares
// as CompareRows compares the rows, and no key is a proper prefix of another.
void CheckKeysOrderAsRowsAndArePrefixFree(const std::vector<Row>& rows,
                                          const std::vector<std::string>& keys,
                                          absl::Span<const OrderType> orders) {
  ASSERT_EQ(rows.size(), keys.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = 0; j < rows.size(); ++j) {
      ASSERT_EQ(Sign(CompareRows(rows[i], rows[j], orders)),
                CompareBytes(keys[i], keys[j]))
          << RowDebugString(rows[i]) << " vs " << RowDebugString(rows[j]);
      if (keys[i] != keys[j]) {
        ASSERT_FALSE(keys[j].compare(0, keys[i].size(), keys[i]) == 0)
            << "key " << i << " is a proper prefix of key " << j;
      }
    }
  }
}

// Every type under every order: order preservation, round trip, canonical.
TEST(MemcmpCodecTest, SingleColumnOrderAndRoundTripForEveryTypeAndOrder) {
  for (DataType type : kAllScalarDataTypes) {
    for (OrderType order : kAllOrderTypes) {
      const uint64_t seed = kBaseSeed + static_cast<int>(type) * 10 +
                            static_cast<int>(order.direction) * 2 +
                            static_cast<int>(order.nulls);
      SCOPED_TRACE(absl::StrCat("seed=", seed, " type=", DataTypeName(type),
                                " order=", order.DebugString()));
      std::mt19937_64 rng(seed);
      std::vector<Datum> datums;
      for (int i = 0; i < 300; ++i)
        datums.push_back(RandomDatum(type, rng, 0.1));
      std::vector<std::string> encoded;
      for (const Datum& d : datums) {
        encoded.push_back(EncodeOne(d, type, order));
        absl::StatusOr<Row> decoded =
            DecodeKey(encoded.back(), {type}, {order});
        ASSERT_TRUE(decoded.ok())
            << decoded.status() << " " << DatumDebugString(d);
        ASSERT_TRUE(DatumsEqual((*decoded)[0], d))
            << DatumDebugString((*decoded)[0]) << " vs " << DatumDebugString(d);
        // Canonical: re-encoding the decoded datum gives the same bytes.
        ASSERT_EQ(EncodeOne((*decoded)[0], type, order), encoded.back());
      }
      for (size_t i = 0; i < datums.size(); ++i) {
        for (size_t j = 0; j < datums.size(); j += 7) {
          ASSERT_EQ(Sign(CompareDatums(datums[i], datums[j], order)),
                    CompareBytes(encoded[i], encoded[j]))
              << DatumDebugString(datums[i]) << " vs "
              << DatumDebugString(datums[j]) << ": " << Hex(encoded[i])
              << " vs " << Hex(encoded[j]);
        }
      }
    }
  }
}

// Composite keys mixing types, directions and null orders.
TEST(MemcmpCodecTest, CompositeKeysPreserveOrderAndArePrefixFree) {
  for (int trial = 0; trial < 60; ++trial) {
    const uint64_t seed = kBaseSeed + 1000 + trial;
    SCOPED_TRACE(absl::StrCat("seed=", seed));
    std::mt19937_64 rng(seed);
    const int num_columns = std::uniform_int_distribution<int>(1, 4)(rng);
    std::vector<DataType> types;
    std::vector<OrderType> orders;
    for (int c = 0; c < num_columns; ++c) {
      types.push_back(RandomScalarDataType(rng));
      orders.push_back(RandomOrderType(rng));
    }
    absl::StatusOr<KeySerde> serde = KeySerde::Create(types, orders);
    ASSERT_TRUE(serde.ok());
    SCOPED_TRACE(serde->DebugString());
    std::vector<Row> rows;
    std::vector<std::string> keys;
    for (int i = 0; i < 120; ++i) {
      rows.push_back(RandomRow(types, rng, 0.2));
      keys.push_back(serde->Serialize(rows.back()));
      absl::StatusOr<Row> decoded = serde->Deserialize(keys.back());
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      ASSERT_TRUE(RowsEqual(*decoded, rows.back()))
          << RowDebugString(*decoded) << " vs " << RowDebugString(rows.back());
    }
    ASSERT_NO_FATAL_FAILURE(
        CheckKeysOrderAsRowsAndArePrefixFree(rows, keys, orders));
    // Sorting by bytes equals sorting by the comparator.
    std::vector<size_t> by_bytes(rows.size()), by_rows(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) by_bytes[i] = by_rows[i] = i;
    std::stable_sort(by_bytes.begin(), by_bytes.end(),
                     [&](size_t a, size_t b) { return keys[a] < keys[b]; });
    std::stable_sort(by_rows.begin(), by_rows.end(), [&](size_t a, size_t b) {
      return CompareRows(rows[a], rows[b], orders) < 0;
    });
    EXPECT_EQ(by_bytes, by_rows);
  }
}

// The persisted layout: these bytes must never change.
TEST(MemcmpCodecTest, GoldenEncodings) {
  const OrderType asc = OrderType::Ascending();
  const OrderType desc = OrderType::Descending();
  EXPECT_EQ(Hex(EncodeOne(Datum(), DataType::kInt64, asc)), "01");
  EXPECT_EQ(Hex(EncodeOne(Datum(), DataType::kInt64,
                          OrderType::AscendingNullsFirst())),
            "00");
  EXPECT_EQ(Hex(EncodeOne(Datum(), DataType::kInt64, desc)), "fe");
  EXPECT_EQ(Hex(EncodeOne(Datum(), DataType::kInt64,
                          OrderType::DescendingNullsLast())),
            "ff");
  EXPECT_EQ(Hex(EncodeOne(int64_t{1}, DataType::kInt64, asc)),
            "008000000000000001");
  EXPECT_EQ(Hex(EncodeOne(int64_t{1}, DataType::kInt64, desc)),
            "ff7ffffffffffffffe");
  EXPECT_EQ(Hex(EncodeOne(int64_t{1}, DataType::kInt64,
                          OrderType::AscendingNullsFirst())),
            "018000000000000001");
  EXPECT_EQ(Hex(EncodeOne(int64_t{-1}, DataType::kInt64, asc)),
            "007fffffffffffffff");
  EXPECT_EQ(Hex(EncodeOne(int16_t{-2}, DataType::kInt16, asc)), "007ffe");
  EXPECT_EQ(Hex(EncodeOne(int32_t{5}, DataType::kInt32, asc)), "0080000005");
  EXPECT_EQ(Hex(EncodeOne(true, DataType::kBoolean, asc)), "0001");
  EXPECT_EQ(Hex(EncodeOne(Date{-1}, DataType::kDate, asc)), "007fffffff");
  EXPECT_EQ(Hex(EncodeOne(TimeOfDay{2}, DataType::kTime, asc)),
            "008000000000000002");
  EXPECT_EQ(Hex(EncodeOne(Timestamp{3}, DataType::kTimestamp, asc)),
            "008000000000000003");
  EXPECT_EQ(Hex(EncodeOne(1.0, DataType::kFloat64, asc)), "00bff0000000000000");
  EXPECT_EQ(Hex(EncodeOne(-0.0, DataType::kFloat64, asc)),
            "008000000000000000");
  EXPECT_EQ(Hex(EncodeOne(std::nan(""), DataType::kFloat64, asc)),
            "00fff8000000000000");
  EXPECT_EQ(Hex(EncodeOne(-1.0f, DataType::kFloat32, asc)), "00407fffff");
  EXPECT_EQ(Hex(EncodeOne(std::string(), DataType::kVarchar, asc)), "0000");
  EXPECT_EQ(Hex(EncodeOne(std::string("a"), DataType::kVarchar, asc)),
            "00016100000000000000"
            "01");
  EXPECT_EQ(Hex(EncodeOne(std::string("12345678"), DataType::kBytea, asc)),
            "0001313233343536373808");
  EXPECT_EQ(Hex(EncodeOne(std::string("123456789"), DataType::kBytea, asc)),
            "0001313233343536373809390000000000000001");
  EXPECT_EQ(Hex(EncodeOne(Decimal(), DataType::kDecimal, asc)), "0003");
  EXPECT_EQ(
      Hex(EncodeOne(*Decimal::FromString("1.5"), DataType::kDecimal, asc)),
      "0004801e");
  EXPECT_EQ(
      Hex(EncodeOne(*Decimal::FromString("-1.5"), DataType::kDecimal, asc)),
      "00027fe1");
  EXPECT_EQ(
      Hex(EncodeOne(*Decimal::FromString("100"), DataType::kDecimal, asc)),
      "00048214");
  EXPECT_EQ(
      Hex(EncodeOne(*Decimal::FromString("0.0123"), DataType::kDecimal, asc)),
      "00047e193c");
  EXPECT_EQ(
      Hex(EncodeOne(Decimal::NegativeInfinity(), DataType::kDecimal, asc)),
      "0001");
  EXPECT_EQ(
      Hex(EncodeOne(Decimal::PositiveInfinity(), DataType::kDecimal, asc)),
      "0005");
  EXPECT_EQ(Hex(EncodeOne(Decimal::NaN(), DataType::kDecimal, asc)), "0006");
}

TEST(MemcmpCodecTest, GoldenEncodingsOfAddedScalarTypes) {
  const OrderType asc = OrderType::Ascending();
  EXPECT_EQ(Hex(EncodeOne(Timestamptz{3}, DataType::kTimestamptz, asc)),
            "008000000000000003");
  EXPECT_EQ(Hex(EncodeOne(Serial{-1}, DataType::kSerial, asc)),
            "007fffffffffffffff");
  // '1 mon': span 30 x 86400 x 10^6 us = 0x25b7f3d4000, as a sign-flipped
  // 16-byte BE int128.
  EXPECT_EQ(Hex(EncodeOne(Interval{1, 0, 0}, DataType::kInterval, asc)),
            "00"
            "8000000000000000"
            "0000025b7f3d4000");
  EXPECT_EQ(Hex(EncodeOne(Interval{0, 0, -1}, DataType::kInterval, asc)),
            "00"
            "7fffffffffffffff"
            "ffffffffffffffff");
  EXPECT_EQ(Hex(EncodeOne(Int256::FromInt64(1), DataType::kInt256, asc)),
            "0080" + std::string(60, '0') + "01");
  EXPECT_EQ(Hex(EncodeOne(Int256::FromInt64(-1), DataType::kInt256, asc)),
            "007f" + std::string(62, 'f'));
  EXPECT_EQ(Hex(EncodeOne(Int256::FromInt64(1), DataType::kInt256,
                          OrderType::Descending())),
            "ff7f" + std::string(60, 'f') + "fe");
}

// '1 mon', '30 days' and '720:00:00' are one key; the key decodes to the
// representative (IntervalFromSpan), which is equal to each of them.
TEST(MemcmpCodecTest, IntervalsOfEqualSpanShareAKey) {
  constexpr int64_t kHour = 3'600'000'000;
  for (OrderType order : kAllOrderTypes) {
    const std::string month =
        EncodeOne(Interval{1, 0, 0}, DataType::kInterval, order);
    EXPECT_EQ(EncodeOne(Interval{0, 30, 0}, DataType::kInterval, order), month);
    EXPECT_EQ(
        EncodeOne(Interval{0, 0, 720 * kHour}, DataType::kInterval, order),
        month);
    BACKFILL_ASSERT_OK_AND_ASSIGN(
        Row row, DecodeKey(EncodeOne(Interval{0, 0, 25 * kHour},
                                     DataType::kInterval, order),
                           {DataType::kInterval}, {order}));
    EXPECT_TRUE(
        IdenticalIntervals(std::get<Interval>(row[0]), Interval{0, 1, kHour}));
  }
  // A span no Interval can hold is DataLoss.
  EXPECT_THAT(
      DecodeKey(absl::HexStringToBytes("00ffffffffffffffffffffffffffffffff"),
                {DataType::kInterval}, {OrderType::Ascending()}),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("INTERVAL span outside")));
}

TEST(MemcmpCodecTest, FloatSpecialValues) {
  const OrderType asc = OrderType::Ascending();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(EncodeOne(-0.0, DataType::kFloat64, asc),
            EncodeOne(0.0, DataType::kFloat64, asc));
  EXPECT_EQ(EncodeOne(-std::nan("1"), DataType::kFloat64, asc),
            EncodeOne(std::nan(""), DataType::kFloat64, asc));
  EXPECT_GT(EncodeOne(std::nan(""), DataType::kFloat64, asc),
            EncodeOne(inf, DataType::kFloat64, asc));
  EXPECT_LT(EncodeOne(-inf, DataType::kFloat64, asc),
            EncodeOne(std::numeric_limits<double>::lowest(), DataType::kFloat64,
                      asc));
  EXPECT_LT(EncodeOne(-std::numeric_limits<double>::denorm_min(),
                      DataType::kFloat64, asc),
            EncodeOne(0.0, DataType::kFloat64, asc));
  EXPECT_LT(EncodeOne(0.0, DataType::kFloat64, asc),
            EncodeOne(std::numeric_limits<double>::denorm_min(),
                      DataType::kFloat64, asc));
  absl::StatusOr<Row> decoded = DecodeKey(
      EncodeOne(-0.0, DataType::kFloat64, asc), {DataType::kFloat64}, {asc});
  ASSERT_TRUE(decoded.ok());
  EXPECT_FALSE(std::signbit(std::get<double>((*decoded)[0])));
  EXPECT_EQ(EncodeOne(-0.0f, DataType::kFloat32, asc),
            EncodeOne(0.0f, DataType::kFloat32, asc));
  EXPECT_GT(EncodeOne(std::nanf(""), DataType::kFloat32, asc),
            EncodeOne(std::numeric_limits<float>::infinity(),
                      DataType::kFloat32, asc));
}

TEST(MemcmpCodecTest, StringsWithZeroAndFfBytes) {
  const std::vector<std::string> ordered = {
      "",
      std::string("\0", 1),
      std::string("\0\0", 2),
      std::string("\0\0\0\0\0\0\0\0", 8),
      std::string("\0\0\0\0\0\0\0\0\0", 9),
      "\x01",
      "a",
      std::string("a\0", 2),
      "aaaaaaaa",
      std::string("aaaaaaaa\0", 9),
      "aaaaaaaaa",
      "a\xff",
      "\xff",
      "\xff\xff\xff\xff\xff\xff\xff\xff\xff"};
  for (OrderType order : kAllOrderTypes) {
    SCOPED_TRACE(order.DebugString());
    for (size_t i = 0; i + 1 < ordered.size(); ++i) {
      const std::string a = EncodeOne(ordered[i], DataType::kBytea, order);
      const std::string b = EncodeOne(ordered[i + 1], DataType::kBytea, order);
      EXPECT_EQ(CompareBytes(a, b), order.is_descending() ? 1 : -1) << i;
    }
  }
}

TEST(MemcmpCodecTest, DecodeKeyPrefixStopsAfterRequestedColumns) {
  absl::StatusOr<KeySerde> serde = KeySerde::Create(
      {DataType::kInt32, DataType::kVarchar, DataType::kFloat64},
      {OrderType::Ascending(), OrderType::Descending(),
       OrderType::AscendingNullsFirst()});
  ASSERT_TRUE(serde.ok());
  const Row row = {int32_t{7}, std::string("xyz"), Datum()};
  const std::string key = serde->Serialize(row) + "tail";
  Row prefix;
  absl::StatusOr<size_t> consumed = serde->DecodePrefix(key, 2, &prefix);
  ASSERT_TRUE(consumed.ok()) << consumed.status();
  EXPECT_TRUE(RowsEqual(prefix, {int32_t{7}, std::string("xyz")}));
  EXPECT_EQ(*consumed, serde->Prefix(2).Serialize(prefix).size());
  EXPECT_THAT(serde->Deserialize(key), StatusIs(absl::StatusCode::kDataLoss,
                                                HasSubstr("4 trailing bytes")));
  EXPECT_EQ(serde->Prefix(2).num_columns(), 2u);
  EXPECT_EQ(serde->DebugString(),
            "(INT32 ASC NULLS LAST, VARCHAR DESC NULLS FIRST, FLOAT64 ASC "
            "NULLS FIRST)");
}

// DecodeKeyPrefix takes bare DataTypes: a JSONB or MAP column is a caller
// error (InvalidArgument), not corrupt bytes.
TEST(MemcmpCodecTest, DecodeKeyPrefixRejectsJsonbAndMapColumns) {
  for (DataType type : {DataType::kJsonb, DataType::kMap}) {
    Row row;
    const std::string non_null = std::string(1, '\0') + "x";
    EXPECT_THAT(
        DecodeKeyPrefix(non_null, {type}, {OrderType::Ascending()}, &row),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 HasSubstr("JSONB and MAP are not key types")))
        << DataTypeName(type);
  }
}

TEST(MemcmpCodecTest, CreateRejectsMismatchedSizes) {
  EXPECT_THAT(KeySerde::Create({DataType::kInt32}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(MemcmpCodecTest, NextKey) {
  EXPECT_THAT(NextKey("ab"), Optional(std::string("ac")));
  EXPECT_THAT(NextKey("a\xff\xff"), Optional(std::string("b")));
  EXPECT_THAT(NextKey(std::string("\x00", 1)), Optional(std::string("\x01")));
  EXPECT_EQ(NextKey(""), std::nullopt);
  EXPECT_EQ(NextKey("\xff\xff"), std::nullopt);
  // Every key with the prefix sorts below NextKey, and NextKey is not one.
  std::mt19937_64 rng(kBaseSeed + 7);
  SCOPED_TRACE(absl::StrCat("seed=", kBaseSeed + 7));
  const std::vector<DataType> types = {DataType::kInt16, DataType::kVarchar};
  const std::vector<OrderType> orders = {OrderType::Descending(),
                                         OrderType::Ascending()};
  for (int i = 0; i < 200; ++i) {
    const Row row = RandomRow(types, rng, 0.2);
    std::string prefix;
    EncodeKeyDatum(row[0], types[0], orders[0], &prefix);
    const std::optional<std::string> next = NextKey(prefix);
    if (!next.has_value()) {
      // Only an all-0xFF prefix (INT16_MIN under DESC) has no successor.
      EXPECT_EQ(prefix, std::string(prefix.size(), '\xff'));
      continue;
    }
    EXPECT_LT(Encode(row, types, orders), *next);
    EXPECT_GT(*next, prefix);
  }
}

TEST(MemcmpCodecTest, TruncatedAndCorruptInputIsDataLoss) {
  std::mt19937_64 rng(kBaseSeed + 11);
  SCOPED_TRACE(absl::StrCat("seed=", kBaseSeed + 11));
  for (DataType type : kAllScalarDataTypes) {
    for (OrderType order : kAllOrderTypes) {
      for (int i = 0; i < 20; ++i) {
        const std::string key = EncodeOne(RandomValue(type, rng), type, order);
        for (size_t cut = 0; cut < key.size(); ++cut) {
          EXPECT_THAT(DecodeKey(key.substr(0, cut), {type}, {order}),
                      StatusIs(absl::StatusCode::kDataLoss))
              << DataTypeName(type) << " cut at " << cut;
        }
      }
    }
  }
  EXPECT_THAT(DecodeKey("\x02", {DataType::kInt64}, {OrderType::Ascending()}),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("null tag 2 is not 0 or 1 at offset 0")));
  EXPECT_THAT(DecodeKey(std::string("\x00\x02", 2), {DataType::kBoolean},
                        {OrderType::Ascending()}),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("offset 1")));
  // A string group with a bad marker and with non-zero padding.
  EXPECT_THAT(DecodeKey(absl::HexStringToBytes("00016100000000000000"
                                               "0a"),
                        {DataType::kVarchar}, {OrderType::Ascending()}),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("marker 10")));
  EXPECT_THAT(DecodeKey(absl::HexStringToBytes("00016100000000000001"
                                               "01"),
                        {DataType::kVarchar}, {OrderType::Ascending()}),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("padding")));
  // -0.0 and a non-canonical NaN.
  EXPECT_THAT(
      DecodeKey(absl::HexStringToBytes("007fffffffffffffff"),
                {DataType::kFloat64}, {OrderType::Ascending()}),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("non-canonical")));
  EXPECT_THAT(
      DecodeKey(absl::HexStringToBytes("00fff8000000000001"),
                {DataType::kFloat64}, {OrderType::Ascending()}),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("non-canonical")));
  // Decimals: bad tag, leading zero digit, trailing zero pair, pair > 99.
  for (const char* hex : {"0007", "00048002", "0004801f00", "000480c8"}) {
    EXPECT_THAT(DecodeKey(absl::HexStringToBytes(hex), {DataType::kDecimal},
                          {OrderType::Ascending()}),
                StatusIs(absl::StatusCode::kDataLoss))
        << hex;
  }
}

// Arbitrary bytes: never crash; when they decode, they re-encode to
// themselves.
TEST(MemcmpCodecTest, RandomBytesDecodeSafelyAndCanonically) {
  const uint64_t seed = kBaseSeed + 13;
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937_64 rng(seed);
  int decoded_ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<DataType> types = {RandomScalarDataType(rng),
                                   RandomScalarDataType(rng)};
    std::vector<OrderType> orders = {RandomOrderType(rng),
                                     RandomOrderType(rng)};
    std::string bytes = Encode(RandomRow(types, rng), types, orders);
    // Mutate a few bytes.
    const int mutations = std::uniform_int_distribution<int>(0, 3)(rng);
    for (int m = 0; m < mutations && !bytes.empty(); ++m) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    absl::StatusOr<Row> row = DecodeKey(bytes, types, orders);
    if (!row.ok()) {
      EXPECT_EQ(row.status().code(), absl::StatusCode::kDataLoss);
      continue;
    }
    ++decoded_ok;
    ASSERT_EQ(Hex(Encode(*row, types, orders)), Hex(bytes));
  }
  EXPECT_GT(decoded_ok, 1000);
}

// ---- LIST and STRUCT (EncodeKeyDatum / DecodeKeyDatum with a ColumnType) ----

std::string EncodeTyped(const Datum& d, const ColumnType& type,
                        OrderType order) {
  std::string out;
  EncodeKeyDatum(d, type, order, &out);
  return out;
}

// Lists that are proper prefixes of `datum`'s lists, at every depth.
void AddPrefixes(const Datum& datum, std::vector<Datum>* out) {
  if (const auto* list = std::get_if<ListValue>(&datum)) {
    for (size_t n = 0; n < list->elements.size(); ++n) {
      ListValue prefix;
      prefix.elements.assign(list->elements.begin(),
                             list->elements.begin() + n);
      out->push_back(prefix);
    }
  }
}

// Every datum of `datums` (of a key `type`) round-trips through its key
// encoding, which is self-delimiting (decodes with bytes after it, and every
// proper prefix is DataLoss), and the encodings order as the datums do.
void CheckNestedKeys(const std::vector<Datum>& datums, const ColumnType& type,
                     OrderType order) {
  std::vector<std::string> encoded;
  for (const Datum& d : datums) {
    encoded.push_back(EncodeTyped(d, type, order));
    // Followed by more bytes: the datum's encoding is self-delimiting.
    const std::string with_tail = encoded.back() + "\x01\xff";
    Datum decoded;
    absl::StatusOr<size_t> consumed =
        DecodeKeyDatum(with_tail, type, order, &decoded);
    ASSERT_TRUE(consumed.ok())
        << consumed.status() << " " << DatumDebugString(d);
    ASSERT_EQ(*consumed, encoded.back().size()) << DatumDebugString(d);
    ASSERT_TRUE(DatumsEqual(decoded, d))
        << DatumDebugString(decoded) << " vs " << DatumDebugString(d);
    ASSERT_TRUE(DatumMatchesColumnType(decoded, type));
    ASSERT_EQ(EncodeTyped(decoded, type, order), encoded.back());
    for (size_t cut = 0; cut < encoded.back().size(); ++cut) {
      Datum partial;
      ASSERT_THAT(
          DecodeKeyDatum(encoded.back().substr(0, cut), type, order, &partial),
          StatusIs(absl::StatusCode::kDataLoss));
    }
  }
  for (size_t i = 0; i < datums.size(); ++i) {
    for (size_t j = 0; j < datums.size(); ++j) {
      ASSERT_EQ(Sign(CompareDatums(datums[i], datums[j], order)),
                CompareBytes(encoded[i], encoded[j]))
          << DatumDebugString(datums[i]) << " vs "
          << DatumDebugString(datums[j]);
    }
  }
}

TEST(MemcmpCodecTest, NestedKeysPreserveOrderRoundTripAndArePrefixFree) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937_64 rng(seed);
  for (int t = 0; t < 100; ++t) {
    ColumnType type = RandomColumnType(rng, 3);
    if (t % 2 == 0) type = ColumnType::List(type);  // lists half the time
    const OrderType order = RandomOrderType(rng);
    SCOPED_TRACE(absl::StrCat(type.DebugString(), " ", order.DebugString()));
    std::vector<Datum> datums;
    for (int i = 0; i < 40; ++i) {
      const Datum datum = RandomColumnDatum(type, rng, 0.1);
      datums.push_back(datum);
      AddPrefixes(datum, &datums);
    }
    ASSERT_NO_FATAL_FAILURE(CheckNestedKeys(datums, type, order));
  }
}

TEST(MemcmpCodecTest, NestedKeySpecialCases) {
  const ColumnType doubles = ColumnType::List(DataType::kFloat64);
  const double nan = std::nan(""),
               inf = std::numeric_limits<double>::infinity();
  for (OrderType order : kAllOrderTypes) {
    SCOPED_TRACE(order.DebugString());
    auto key = [&](std::vector<Datum> elements) {
      return EncodeTyped(ListValue{std::move(elements)}, doubles, order);
    };
    const int sign = order.is_descending() ? -1 : 1;
    EXPECT_EQ(key({-0.0}), key({0.0}));
    EXPECT_EQ(key({-nan}), key({nan}));
    EXPECT_EQ(CompareBytes(key({inf}), key({nan})), -sign);
    EXPECT_EQ(CompareBytes(key({}), key({Datum()})), -sign);
    EXPECT_EQ(CompareBytes(key({1.0}), key({1.0, Datum()})), -sign);
    EXPECT_EQ(CompareBytes(key({1.0, 2.0}), key({1.0, Datum()})), -sign);
    EXPECT_EQ(CompareBytes(key({1.0, 2.0}), key({1.5})), -sign);
  }
}

// Lists and structs of floats drawn from the awkward values (-0.0, NaNs of
// either sign and any payload, infinities, NULL), with empty lists and
// every prefix of every list, in every order: byte order == CompareDatums,
// decoding is exact up to -0.0 / NaN canonicalisation.
TEST(MemcmpCodecTest, NestedFloatKeysWithSpecialValuesAndPrefixes) {
  const uint64_t seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937_64 rng(seed);
  const double nan = std::nan("");
  const float nanf = std::nanf("");
  const double inf = std::numeric_limits<double>::infinity();
  auto pick_double = [&]() -> Datum {
    static const double kPool[] = {-0.0, 0.0, nan, -nan, 1.0, -1.0, inf, -inf};
    if (rng() % 6 == 0) return Datum();
    double value = kPool[rng() % std::size(kPool)];
    if (std::isnan(value) && rng() % 2 == 0) {
      uint64_t bits;
      std::memcpy(&bits, &value, 8);
      bits |= rng() & 0xFFFF;  // another payload
      std::memcpy(&value, &bits, 8);
    }
    return value;
  };
  auto pick_float = [&]() -> Datum {
    static const float kPool[] = {-0.0f, 0.0f, nanf, -nanf, 2.0f};
    if (rng() % 6 == 0) return Datum();
    return kPool[rng() % std::size(kPool)];
  };
  auto list_of = [&](auto element, int max_size) {
    ListValue list;
    const int n = static_cast<int>(rng() % (max_size + 1));
    for (int i = 0; i < n; ++i) list.elements.push_back(element());
    return list;
  };
  const ColumnType doubles = ColumnType::List(DataType::kFloat64);
  const ColumnType nested_floats =
      ColumnType::List(ColumnType::List(DataType::kFloat32));
  const ColumnType record = ColumnType::Struct(
      {{"x", DataType::kFloat64, 1}, {"l", doubles, 2}});
  for (const ColumnType& type : {doubles, nested_floats, record}) {
    for (OrderType order : kAllOrderTypes) {
      SCOPED_TRACE(absl::StrCat(type.DebugString(), " ", order.DebugString()));
      std::vector<Datum> datums = {Datum(), ListValue{}};
      if (type.id() == DataType::kStruct) datums.pop_back();
      for (int i = 0; i < 60; ++i) {
        Datum datum;
        if (type == doubles) {
          datum = list_of(pick_double, 4);
        } else if (type == nested_floats) {
          datum = list_of(
              [&]() -> Datum {
                if (rng() % 5 == 0) return Datum();
                return list_of(pick_float, 3);
              },
              3);
        } else {
          datum = StructValue{{pick_double(), rng() % 5 == 0
                                                  ? Datum()
                                                  : Datum(list_of(
                                                        pick_double, 3))}};
        }
        datums.push_back(datum);
        AddPrefixes(datum, &datums);
      }
      ASSERT_NO_FATAL_FAILURE(CheckNestedKeys(datums, type, order));
    }
  }
}

// JSONB and MAP cannot be keys (ValidateKeyColumnType), at any depth.
TEST(MemcmpCodecTest, JsonbAndMapAreNotKeyTypes) {
  EXPECT_THAT(KeySerde::Create({DataType::kInt64, DataType::kJsonb},
                               {OrderType::Ascending(), OrderType::Ascending()}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("column 1 is a JSONB, which cannot be in a "
                                 "key")));
  EXPECT_THAT(KeySerde::Create({DataType::kMap}, {OrderType::Ascending()}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("MAP, which cannot be in a key")));
  for (const ColumnType& type :
       {ColumnType(DataType::kJsonb),
        ColumnType::Map(DataType::kVarchar, DataType::kInt32),
        ColumnType::List(DataType::kJsonb),
        ColumnType::Struct(
            {{"a", DataType::kInt32, 1},
             {"m", ColumnType::Map(DataType::kInt64, DataType::kInt64), 2}})}) {
    Datum out;
    EXPECT_THAT(DecodeKeyDatum(absl::HexStringToBytes("01"), type,
                               OrderType::Ascending(), &out),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("cannot be in a key")))
        << type.DebugString();
  }
}

// The persisted layout of nested keys (FORMAT.md section 1.3).
TEST(MemcmpCodecTest, GoldenNestedEncodings) {
  const OrderType asc = OrderType::Ascending();
  const ColumnType ints = ColumnType::List(DataType::kInt32);
  EXPECT_EQ(Hex(EncodeTyped(ListValue{}, ints, asc)), "0000");
  EXPECT_EQ(Hex(EncodeTyped(ListValue{{int32_t{1}, Datum()}}, ints, asc)),
            "00"
            "010080000001"
            "0101"
            "00");
  EXPECT_EQ(
      Hex(EncodeTyped(ListValue{{int32_t{1}}}, ints, OrderType::Descending())),
      "ff"
      "feff7ffffffe"
      "ff");
  const ColumnType pair = ColumnType::Struct(
      {{"a", DataType::kInt32, 1}, {"b", DataType::kVarchar, 2}});
  EXPECT_EQ(Hex(EncodeTyped(StructValue{{int32_t{1}, Datum()}}, pair, asc)),
            "00"
            "0080000001"
            "01");
  EXPECT_EQ(Hex(EncodeTyped(Datum(), pair, asc)), "01");
}

TEST(MemcmpCodecTest, CorruptNestedKeysAreDataLoss) {
  const ColumnType ints = ColumnType::List(DataType::kInt32);
  Datum out;
  EXPECT_THAT(DecodeKeyDatum(absl::HexStringToBytes("0002"), ints,
                             OrderType::Ascending(), &out),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("LIST element marker 2 is not 0 or 1")));
  EXPECT_THAT(DecodeKeyDatum(absl::HexStringToBytes("000102"), ints,
                             OrderType::Ascending(), &out),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("LIST<INT32> ASC NULLS LAST")));
  EXPECT_THAT(KeySerde::Create({DataType::kList}, {OrderType::Ascending()}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("needs its ColumnType")));
}

// KeySerde over LIST and STRUCT columns (CreateFromColumnTypes): byte order
// of Serialize equals CompareRows on random rows mixing nested and scalar
// columns under every order (nested NULLs, empty lists, lists that prefix
// others' lists, -0.0 and NaN inside lists); Deserialize, DecodePrefix and
// Prefix round-trip; full keys are prefix-free.
TEST(MemcmpCodecTest, KeySerdeWithNestedColumnsPreservesOrder) {
  const double specials[] = {-0.0, 0.0, std::nan(""), 1.5, -1.5,
                             std::numeric_limits<double>::infinity()};
  for (int trial = 0; trial < 60; ++trial) {
    const uint64_t seed = kBaseSeed + 5000 + trial;
    SCOPED_TRACE(absl::StrCat("seed=", seed));
    std::mt19937_64 rng(seed);
    const int num_columns = std::uniform_int_distribution<int>(1, 3)(rng);
    std::vector<ColumnType> types;
    std::vector<OrderType> orders;
    for (int c = 0; c < num_columns; ++c) {
      switch (rng() % 4) {
        case 0:
          types.push_back(ColumnType::List(DataType::kFloat64));
          break;
        case 1:
          types.push_back(RandomScalarDataType(rng));
          break;
        default:
          types.push_back(RandomColumnType(rng, 2));
          break;
      }
      orders.push_back(RandomOrderType(rng));
    }
    if (trial % 2 == 0) {  // a nested column at least half the time
      types[0] = ColumnType::Struct(
          {{"a", ColumnType::List(DataType::kFloat64), 1},
           {"b", DataType::kInt32, 2}});
    }
    BACKFILL_ASSERT_OK_AND_ASSIGN(KeySerde serde,
                                  KeySerde::CreateFromColumnTypes(types, orders));
    SCOPED_TRACE(serde.DebugString());
    const auto special_list = [&] {
      ListValue list;
      const size_t size = rng() % 4;
      for (size_t i = 0; i < size; ++i) {
        list.elements.push_back(rng() % 5 == 0
                                    ? Datum()
                                    : Datum(specials[rng() % std::size(specials)]));
      }
      return list;
    };
    std::vector<Row> rows;
    for (int i = 0; i < 50; ++i) {
      Row row;
      for (const ColumnType& type : types) {
        row.push_back(RandomColumnDatum(type, rng, 0.15));
        if (type == ColumnType::List(DataType::kFloat64) && rng() % 2 == 0) {
          row.back() = special_list();
        }
      }
      rows.push_back(row);
      // The same row with a list column cut short: prefixes of each other.
      for (size_t c = 0; c < row.size(); ++c) {
        std::vector<Datum> prefixes;
        AddPrefixes(row[c], &prefixes);
        for (const Datum& prefix : prefixes) {
          Row shorter = row;
          shorter[c] = prefix;
          rows.push_back(std::move(shorter));
        }
      }
    }
    std::vector<std::string> keys;
    for (const Row& row : rows) {
      keys.push_back(serde.Serialize(row));
      BACKFILL_ASSERT_OK_AND_ASSIGN(Row decoded, serde.Deserialize(keys.back()));
      ASSERT_TRUE(RowsEqual(decoded, row))
          << RowDebugString(decoded) << " vs " << RowDebugString(row);
      ASSERT_EQ(serde.Serialize(decoded), keys.back());
      // A pk prefix: DecodePrefix of the full key, and Prefix's own bytes.
      const size_t n = rng() % (types.size() + 1);
      Row front;
      BACKFILL_ASSERT_OK_AND_ASSIGN(size_t consumed,
                                    serde.DecodePrefix(keys.back(), n, &front));
      const KeySerde prefix = serde.Prefix(n);
      ASSERT_EQ(prefix.num_columns(), n);
      const std::string prefix_key =
          prefix.Serialize(RowView(row).first(n));
      ASSERT_EQ(consumed, prefix_key.size());
      ASSERT_EQ(keys.back().substr(0, consumed), prefix_key);
      ASSERT_TRUE(RowsEqual(front, RowView(row).first(n)));
    }
    ASSERT_NO_FATAL_FAILURE(
        CheckKeysOrderAsRowsAndArePrefixFree(rows, keys, orders));
  }
}

TEST(MemcmpCodecTest, KeySerdeFromColumnTypesRejectsNonKeyTypes) {
  const OrderType asc = OrderType::Ascending();
  EXPECT_THAT(KeySerde::CreateFromColumnTypes(
                  {DataType::kInt64, ColumnType::List(DataType::kJsonb)},
                  {asc, asc}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("column 1 (LIST<JSONB>)")));
  EXPECT_THAT(KeySerde::CreateFromColumnTypes(
                  {ColumnType::Map(DataType::kInt32, DataType::kInt32)}, {asc}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("column 0 (MAP<INT32, INT32>)")));
  EXPECT_THAT(KeySerde::CreateFromColumnTypes({DataType::kInt32}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("1 types but 0 orders")));
  // A scalar layout made either way encodes alike.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      KeySerde scalar, KeySerde::Create({DataType::kInt64}, {asc}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      KeySerde typed, KeySerde::CreateFromColumnTypes({DataType::kInt64}, {asc}));
  EXPECT_FALSE(typed.has_nested_columns());
  EXPECT_EQ(scalar.Serialize({int64_t{7}}), typed.Serialize({int64_t{7}}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      KeySerde nested,
      KeySerde::CreateFromColumnTypes(
          {ColumnType::List(DataType::kVarchar), DataType::kInt64},
          {OrderType::Descending(), asc}));
  EXPECT_TRUE(nested.has_nested_columns());
  EXPECT_EQ(nested.DebugString(),
            "(LIST<VARCHAR> DESC NULLS FIRST, INT64 ASC NULLS LAST)");
  // Trailing bytes after a nested key are DataLoss.
  const std::string key =
      nested.Serialize({ListValue{{std::string("a")}}, int64_t{1}});
  EXPECT_THAT(nested.Deserialize(key + "x"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("1 trailing bytes")));
}

}  // namespace
}  // namespace backfill
