#include "serde/internal/value_payload.h"

#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/decimal.h"
#include "serde/random_datum.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using serde_internal::AppendPayload;
using serde_internal::PayloadReader;
using serde_internal::PayloadSize;
using serde_internal::PayloadSizeBound;
using serde_internal::ReadPayloadFast;
using serde_internal::VarintSize;
using serde_internal::WriteVarint;
using serde_internal::ZigZagDecode;
using serde_internal::ZigZagEncode;
using ::testing::HasSubstr;

std::string Varint(uint64_t value) {
  char buffer[serde_internal::kMaxVarintBytes];
  return std::string(buffer, WriteVarint(value, buffer));
}

// Decodes `bytes` as one payload of `type` with both readers, which must
// agree; returns the checked reader's status.
absl::Status DecodeBoth(DataType type, const std::string& bytes, Datum* out) {
  PayloadReader reader(bytes);
  absl::Status status = reader.Read(type, out);
  if (status.ok() && !reader.AtEnd()) status = reader.Error("trailing bytes");
  Datum fast_out;
  const char* p = bytes.data();
  const bool fast_ok =
      ReadPayloadFast(type, p, bytes.data() + bytes.size(), &fast_out) &&
      p == bytes.data() + bytes.size();
  EXPECT_EQ(fast_ok, status.ok()) << absl::BytesToHexString(bytes);
  if (fast_ok && status.ok()) {
    EXPECT_TRUE(DatumsEqual(fast_out, *out)) << absl::BytesToHexString(bytes);
  }
  return status;
}

TEST(VarintTest, ZigZag) {
  EXPECT_EQ(ZigZagEncode(0), 0u);
  EXPECT_EQ(ZigZagEncode(-1), 1u);
  EXPECT_EQ(ZigZagEncode(1), 2u);
  EXPECT_EQ(ZigZagEncode(std::numeric_limits<int64_t>::max()),
            std::numeric_limits<uint64_t>::max() - 1);
  EXPECT_EQ(ZigZagEncode(std::numeric_limits<int64_t>::min()),
            std::numeric_limits<uint64_t>::max());
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, int64_t{-12345},
                    std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(ZigZagDecode(ZigZagEncode(v)), v);
  }
}

TEST(VarintTest, SizesAndBytes) {
  EXPECT_EQ(VarintSize(0), 1u);
  EXPECT_EQ(VarintSize(127), 1u);
  EXPECT_EQ(VarintSize(128), 2u);
  EXPECT_EQ(VarintSize((uint64_t{1} << 56) - 1), 8u);
  EXPECT_EQ(VarintSize(uint64_t{1} << 56), 9u);
  EXPECT_EQ(VarintSize(uint64_t{1} << 63), 10u);
  EXPECT_EQ(absl::BytesToHexString(Varint(0)), "00");
  EXPECT_EQ(absl::BytesToHexString(Varint(300)), "ac02");
  EXPECT_EQ(absl::BytesToHexString(Varint(~uint64_t{0})),
            "ffffffffffffffffff01");
  for (int bits = 0; bits <= 64; ++bits) {
    const uint64_t value = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits);
    EXPECT_EQ(Varint(value).size(), VarintSize(value)) << bits;
  }
}

// Every integer type at its extremes and at every varint length boundary,
// decoded with nothing after it and with padding after it (the fast reader
// loads 8 bytes at once when it can).
TEST(ValuePayloadTest, IntegerExtremesAndBoundariesRoundTrip) {
  std::vector<int64_t> values = {std::numeric_limits<int64_t>::min(),
                                 std::numeric_limits<int64_t>::max(),
                                 std::numeric_limits<int64_t>::min() + 1,
                                 std::numeric_limits<int64_t>::max() - 1};
  for (int shift = 0; shift < 63; ++shift) {
    const int64_t p = int64_t{1} << shift;
    for (int64_t v : {p - 1, p, -p, -p - 1}) values.push_back(v);
  }
  for (int64_t v : values) {
    std::vector<std::pair<DataType, Datum>> cases = {
        {DataType::kInt64, v},
        {DataType::kTime, TimeOfDay{v}},
        {DataType::kTimestamp, Timestamp{v}}};
    if (v >= std::numeric_limits<int32_t>::min() &&
        v <= std::numeric_limits<int32_t>::max()) {
      cases.push_back({DataType::kInt32, static_cast<int32_t>(v)});
      cases.push_back({DataType::kDate, Date{static_cast<int32_t>(v)}});
    }
    if (v >= std::numeric_limits<int16_t>::min() &&
        v <= std::numeric_limits<int16_t>::max()) {
      cases.push_back({DataType::kInt16, static_cast<int16_t>(v)});
    }
    for (const auto& [type, datum] : cases) {
      SCOPED_TRACE(absl::StrCat(DataTypeName(type), " ", v));
      std::string bytes;
      AppendPayload(datum, type, &bytes);
      EXPECT_EQ(bytes.size(), PayloadSize(datum, type));
      EXPECT_LE(bytes.size(), PayloadSizeBound(datum));
      EXPECT_EQ(bytes, Varint(ZigZagEncode(v)));
      Datum decoded;
      BACKFILL_ASSERT_OK(DecodeBoth(type, bytes, &decoded));
      EXPECT_TRUE(DatumsEqual(decoded, datum));
      // Followed by other bytes: the fast reader stops at the varint's end.
      const std::string padded = bytes + std::string(9, '\x7f');
      const char* p = padded.data();
      Datum fast;
      ASSERT_TRUE(
          ReadPayloadFast(type, p, padded.data() + padded.size(), &fast));
      EXPECT_EQ(static_cast<size_t>(p - padded.data()), bytes.size());
      EXPECT_TRUE(DatumsEqual(fast, datum));
      // Every truncation is DataLoss for both readers.
      for (size_t cut = 0; cut < bytes.size(); ++cut) {
        EXPECT_THAT(DecodeBoth(type, bytes.substr(0, cut), &decoded),
                    StatusIs(absl::StatusCode::kDataLoss));
      }
    }
  }
}

// WritePayload stays within PayloadSizeBound (its 8-byte stores included; an
// exactly sized heap buffer lets ASan catch an overrun) and writes exactly
// PayloadSize bytes.
TEST(ValuePayloadTest, WritesStayWithinTheBound) {
  const uint64_t seed = 2718;
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 5000; ++i) {
    const DataType type = RandomScalarDataType(rng);
    const Datum datum = RandomValue(type, rng);
    const size_t bound = PayloadSizeBound(datum);
    auto buffer = std::make_unique<char[]>(bound);
    char* const end = serde_internal::WritePayload(datum, buffer.get());
    ASSERT_EQ(static_cast<size_t>(end - buffer.get()), PayloadSize(datum, type))
        << DatumDebugString(datum);
    Datum decoded;
    BACKFILL_ASSERT_OK(DecodeBoth(
        type, std::string(buffer.get(), end - buffer.get()), &decoded));
    ASSERT_TRUE(DatumsEqual(decoded, datum)) << DatumDebugString(datum);
  }
}

// The DECIMAL payload is unchanged by the varint change; its fast reader
// accepts exactly what the checked one does.
TEST(ValuePayloadTest, DecimalReadersAgree) {
  struct Case {
    const char* hex;
    bool valid;
  } cases[] = {
      {"0000", true},
      {"01010f", true},
      {"21010f", true},
      {"40", true},
      {"80", true},
      {"c0", true},
      {"0300", false},
      {"41", false},
      {"60", false},
      {"0001", false},
      {"2000", false},
      {"01010a", false},
      {"010100", false},
      {"0201ff00", false},
      {"11000000", false},
      {"01da01", true},
      {"01da0a", true},
      {"01d901", false},
      {"014d01", false},
      {"014c01", true},
      {"01", false},
      {"0301ffff", false},
      // 10^38 - 1 (16 bytes) at scale 0, and 10^38 (rejected).
      {"1000ffffffff3f228a097ac4865aa84c3b4b", true},
      {"10000000000040228a097ac4865aa84c3b4b", false},
      // A 9-byte mantissa with a trailing decimal zero (2^64 * 10).
      {"090000000000000000000a", false},
      {"090001000000000000000a", true},
  };
  for (const Case& c : cases) {
    const std::string bytes = absl::HexStringToBytes(c.hex);
    Datum out;
    const absl::Status status = DecodeBoth(DataType::kDecimal, bytes, &out);
    EXPECT_EQ(status.ok(), c.valid) << c.hex << " " << status;
    if (status.ok()) {
      std::string again;
      AppendPayload(out, DataType::kDecimal, &again);
      EXPECT_EQ(absl::BytesToHexString(again), c.hex);
    }
    (void)DecodeBoth(DataType::kDecimal, bytes + std::string(20, '\x05'), &out);
  }
}

// The fast reader loads a mantissa of up to 8 bytes as one word when 8 bytes
// remain and byte by byte near the end of the row: every length, in both
// places, decodes to the value written (the bytes after it, 0xff here,
// must not leak into it).
TEST(ValuePayloadTest, DecimalMantissaOfEveryLengthAtTheEndAndInside) {
  std::mt19937_64 rng(20261205);
  for (int bytes = 1; bytes <= 16; ++bytes) {
    for (int trial = 0; trial < 50; ++trial) {
      uint64_t low = rng(), high = 0;
      if (bytes < 8) low &= (uint64_t{1} << (8 * bytes)) - 1;
      if (bytes > 8) {
        high = rng();
        if (bytes < 16) high &= (uint64_t{1} << (8 * (bytes - 8))) - 1;
      }
      absl::uint128 mantissa = absl::MakeUint128(high, low);
      mantissa %= Decimal::PowerOfTen(Decimal::kMaxDigits);
      if (mantissa == 0) continue;
      const Decimal value = Decimal::FromParts(trial % 2 == 1, mantissa,
                                               static_cast<int>(trial % 7));
      std::string encoded;
      AppendPayload(Datum(value), DataType::kDecimal, &encoded);
      for (const size_t tail : {size_t{0}, size_t{3}, size_t{12}}) {
        const std::string buffer = encoded + std::string(tail, '\xff');
        const char* p = buffer.data();
        Datum out;
        ASSERT_TRUE(ReadPayloadFast(DataType::kDecimal, p,
                                    buffer.data() + buffer.size(), &out))
            << absl::BytesToHexString(encoded);
        EXPECT_EQ(p, buffer.data() + encoded.size());
        EXPECT_TRUE(DatumsEqual(out, Datum(value)))
            << absl::BytesToHexString(encoded) << " tail " << tail;
      }
    }
  }
}

TEST(ValuePayloadTest, StringLengthsAreVarints) {
  for (size_t length : {0, 1, 127, 128, 16383, 16384, 70000}) {
    const Datum datum = std::string(length, 'q');
    std::string bytes;
    AppendPayload(datum, DataType::kBytea, &bytes);
    EXPECT_EQ(bytes.size(), VarintSize(length) + length);
    EXPECT_EQ(bytes.size(), PayloadSize(datum, DataType::kBytea));
    EXPECT_EQ(bytes.size(), PayloadSizeBound(datum));
    EXPECT_EQ(bytes.substr(0, VarintSize(length)), Varint(length));
    Datum decoded;
    BACKFILL_ASSERT_OK(DecodeBoth(DataType::kBytea, bytes, &decoded));
    EXPECT_TRUE(DatumsEqual(decoded, datum));
  }
}

TEST(ValuePayloadTest, RandomVarintsRoundTrip) {
  const uint64_t seed = 31337;
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t value = rng() >> (rng() % 64);
    const std::string bytes = Varint(value) + std::string(rng() % 12, '\x80');
    PayloadReader reader(bytes);
    uint64_t checked = 0;
    BACKFILL_ASSERT_OK(reader.ReadVarint("test", &checked));
    EXPECT_EQ(checked, value);
    EXPECT_EQ(reader.position(), VarintSize(value));
    const char* p = bytes.data();
    uint64_t fast = 0;
    ASSERT_TRUE(serde_internal::payload_fast::ReadVarint(
        p, bytes.data() + bytes.size(), &fast));
    EXPECT_EQ(fast, value);
    EXPECT_EQ(static_cast<size_t>(p - bytes.data()), VarintSize(value));
  }
}

TEST(ValuePayloadTest, BadVarintsAreDataLossNamingOffsetAndExpectation) {
  struct Case {
    DataType type;
    const char* hex;
    const char* message;
  } cases[] = {
      {DataType::kInt64, "",
       "truncated INT64 varint: expected a byte at offset 7"},
      {DataType::kInt64, "ff",
       "expected a byte after 1 continuation byte(s) "
       "at offset 7"},
      {DataType::kInt64, "8000",
       "2 bytes ending in a zero byte (overlong) at "
       "offset 7"},
      {DataType::kInt64, "ffffffffffffff8000", "9 bytes ending in a zero byte"},
      {DataType::kTimestamp, "ffffffffffffffffffff01",
       "TIMESTAMP varint longer than 10 bytes at offset 7"},
      {DataType::kInt64, "ffffffffffffffffff7f",
       "INT64 varint over 64 bits: 10th byte 0x7f, expected 0x01 at offset 7"},
      {DataType::kInt16, "808004", "INT16 value 32768 out of range"},
      {DataType::kInt16, "ffffffff0f", "INT16 value -2147483648 out of range"},
      {DataType::kInt32, "8080808010", "INT32 value 2147483648 out of range"},
      {DataType::kDate, "8180808010", "DATE value -2147483649 out of range"},
      {DataType::kVarchar, "05616263",
       "string of length 5 but only 3 bytes left at offset 7"},
      {DataType::kVarchar, "8100", "non-canonical VARCHAR length varint"},
      {DataType::kBytea, "ffffffffffffffffffffff",
       "BYTEA length varint longer than 10 bytes"},
  };
  for (const Case& c : cases) {
    const std::string bytes = absl::HexStringToBytes(c.hex);
    PayloadReader reader(bytes, /*base_offset=*/7);
    Datum out;
    EXPECT_THAT(reader.Read(c.type, &out),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(c.message)))
        << c.hex;
    EXPECT_EQ(reader.position(), 0u) << c.hex;  // left at the varint's start
    // The fast reader rejects it too; with bytes after it (so that it loads
    // 8 bytes at once) the two readers still agree.
    const char* p = bytes.data();
    EXPECT_FALSE(ReadPayloadFast(c.type, p, bytes.data() + bytes.size(), &out))
        << c.hex;
    (void)DecodeBoth(c.type, bytes + std::string(12, '\x01'), &out);
  }
}

}  // namespace
}  // namespace backfill
