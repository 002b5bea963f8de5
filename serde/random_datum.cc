#include "serde/random_datum.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "absl/numeric/int128.h"

namespace backfill {
namespace {

template <typename T>
T Pick(std::mt19937_64& rng, std::initializer_list<T> values) {
  std::uniform_int_distribution<size_t> index(0, values.size() - 1);
  return *(values.begin() + index(rng));
}

bool OneIn(std::mt19937_64& rng, int n) {
  return std::uniform_int_distribution<int>(0, n - 1)(rng) == 0;
}

template <typename Int>
Int RandomInt(std::mt19937_64& rng) {
  using Limits = std::numeric_limits<Int>;
  switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
    case 0:
      return Pick<Int>(rng, {Limits::min(), Limits::max(), Int{0}, Int{-1},
                             Int{1}, static_cast<Int>(Limits::min() + 1),
                             static_cast<Int>(Limits::max() - 1)});
    case 1:
      return static_cast<Int>(std::uniform_int_distribution<int>(-3, 3)(rng));
    case 2:
      return static_cast<Int>(
          std::uniform_int_distribution<int64_t>(-1000, 1000)(rng));
    default:
      return static_cast<Int>(rng());
  }
}

template <typename F, typename Bits>
F RandomFloat(std::mt19937_64& rng) {
  using Limits = std::numeric_limits<F>;
  switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
    case 0: {
      // NaNs with assorted payloads and signs.
      Bits bits;
      F nan = Limits::quiet_NaN();
      std::memcpy(&bits, &nan, sizeof(bits));
      bits ^= static_cast<Bits>(rng()) &
              (static_cast<Bits>(1) << (sizeof(Bits) * 8 - 1));
      bits |= static_cast<Bits>(rng() & 0xFF);
      F value;
      std::memcpy(&value, &bits, sizeof(value));
      return OneIn(rng, 2) ? -Limits::quiet_NaN() : value;
    }
    case 1:
      return Pick<F>(rng, {F(0), -F(0), Limits::infinity(), -Limits::infinity(),
                           Limits::denorm_min(), -Limits::denorm_min(),
                           Limits::min(), -Limits::min(), Limits::max(),
                           Limits::lowest(), Limits::epsilon(), F(1), F(-1)});
    case 2:
      return static_cast<F>(std::uniform_int_distribution<int>(-3, 3)(rng)) / 2;
    case 3: {
      Bits bits = static_cast<Bits>(rng());
      F value;
      std::memcpy(&value, &bits, sizeof(value));
      return value;  // any bit pattern, may be NaN or denormal
    }
    default:
      return static_cast<F>(
          std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
  }
}

std::string RandomString(std::mt19937_64& rng) {
  size_t length;
  switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
    case 0:
      length = 0;
      break;
    case 1:
      length = Pick<size_t>(rng, {1, 7, 8, 9, 15, 16, 17, 24});
      break;
    case 2:
      length = std::uniform_int_distribution<size_t>(0, 3)(rng);
      break;
    default:
      length = std::uniform_int_distribution<size_t>(0, 40)(rng);
      break;
  }
  const bool binary_only = OneIn(rng, 3);
  std::string s(length, '\0');
  for (char& c : s) {
    c = binary_only ? Pick<char>(rng, {'\0', '\xff', '\x01', '\xfe'})
                    : Pick<char>(rng, {'\0', '\xff', 'a', 'b',
                                       static_cast<char>(rng())});
  }
  return s;
}

// Intervals with equal spans and different fields ('1 mon', '30 days',
// '720:00:00') are common, and so are the field extremes.
Interval RandomInterval(std::mt19937_64& rng) {
  switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
    case 0: {
      // One span of a few months, spread over the fields in one of 3 ways.
      const int32_t months = std::uniform_int_distribution<int32_t>(-2, 2)(rng);
      switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
        case 0:
          return Interval{months, 0, 0};
        case 1:
          return Interval{0, 30 * months, 0};
        default:
          return Interval{0, 0, months * 30 * kIntervalMicrosPerDay};
      }
    }
    case 1:
      return Interval{
          std::uniform_int_distribution<int32_t>(-3, 3)(rng),
          std::uniform_int_distribution<int32_t>(-40, 40)(rng),
          std::uniform_int_distribution<int64_t>(
              -2 * kIntervalMicrosPerDay, 2 * kIntervalMicrosPerDay)(rng)};
    default:
      return Interval{RandomInt<int32_t>(rng), RandomInt<int32_t>(rng),
                      RandomInt<int64_t>(rng)};
  }
}

Int256 RandomInt256(std::mt19937_64& rng) {
  switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
    case 0:
      return Pick<Int256>(
          rng, {Int256::Min(), Int256::Max(), Int256(), Int256::FromInt64(-1),
                Int256::FromInt64(1), Int256::FromWords({0, 0, 0, 1}),
                Int256::FromWords({~uint64_t{0}, 0, 0, 0})});
    case 1:
      return Int256::FromInt64(RandomInt<int64_t>(rng));
    default: {
      // Sign-extended from a random width, so that every word matters.
      const int words = std::uniform_int_distribution<int>(1, 4)(rng);
      std::array<uint64_t, 4> value = {rng(), rng(), rng(), rng()};
      const uint64_t fill = (value[words - 1] >> 63) != 0 ? ~uint64_t{0} : 0;
      for (int i = words; i < 4; ++i) value[i] = fill;
      return Int256::FromWords(value);
    }
  }
}

}  // namespace

Decimal RandomDecimal(std::mt19937_64& rng) {
  switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
    case 0:
      return Pick<Decimal>(
          rng, {Decimal::NaN(), Decimal::PositiveInfinity(),
                Decimal::NegativeInfinity(), Decimal(),
                Decimal::FromParts(false, Decimal::PowerOfTen(38) - 1,
                                   Decimal::kMinScale),
                Decimal::FromParts(true, Decimal::PowerOfTen(38) - 1,
                                   Decimal::kMinScale),
                Decimal::FromParts(false, 1, Decimal::kMaxScale),
                Decimal::FromParts(true, 1, Decimal::kMaxScale),
                Decimal::FromParts(false, Decimal::PowerOfTen(37),
                                   Decimal::kMinScale),
                Decimal::FromParts(false, Decimal::PowerOfTen(38) - 1,
                                   Decimal::kMaxScale)});
    case 1:
      return Decimal::FromParts(OneIn(rng, 2),
                                std::uniform_int_distribution<int>(0, 20)(rng),
                                std::uniform_int_distribution<int>(0, 2)(rng));
    default: {
      const int digits = std::uniform_int_distribution<int>(1, 38)(rng);
      absl::uint128 mantissa =
          absl::MakeUint128(rng(), rng()) % Decimal::PowerOfTen(digits);
      const int scale = std::uniform_int_distribution<int>(
          Decimal::kMinScale, Decimal::kMaxScale)(rng);
      return Decimal::FromParts(OneIn(rng, 2), mantissa, scale);
    }
  }
}

Datum RandomValue(DataType type, std::mt19937_64& rng) {
  switch (type) {
    case DataType::kBoolean:
      return OneIn(rng, 2);
    case DataType::kInt16:
      return RandomInt<int16_t>(rng);
    case DataType::kInt32:
      return RandomInt<int32_t>(rng);
    case DataType::kInt64:
      return RandomInt<int64_t>(rng);
    case DataType::kFloat32:
      return RandomFloat<float, uint32_t>(rng);
    case DataType::kFloat64:
      return RandomFloat<double, uint64_t>(rng);
    case DataType::kDecimal:
      return RandomDecimal(rng);
    case DataType::kVarchar:
    case DataType::kBytea:
      return RandomString(rng);
    case DataType::kDate:
      return Date{RandomInt<int32_t>(rng)};
    case DataType::kTime:
      return TimeOfDay{OneIn(rng, 4) ? Pick<int64_t>(rng, {0, 86'399'999'999})
                                     : std::uniform_int_distribution<int64_t>(
                                           0, 86'399'999'999)(rng)};
    case DataType::kTimestamp:
      return Timestamp{RandomInt<int64_t>(rng)};
    case DataType::kTimestamptz:
      return Timestamptz{RandomInt<int64_t>(rng)};
    case DataType::kSerial:
      return Serial{RandomInt<int64_t>(rng)};
    case DataType::kInterval:
      return RandomInterval(rng);
    case DataType::kInt256:
      return RandomInt256(rng);
    case DataType::kJsonb:
      return RandomJsonb(rng, 3);
    case DataType::kList:
    case DataType::kStruct:
    case DataType::kMap:
      return DefaultDatum(type);  // their parts need a ColumnType
  }
  return Datum();
}

Jsonb RandomJsonb(std::mt19937_64& rng, int max_depth) {
  const int kind = std::uniform_int_distribution<int>(
      0, max_depth > 0 ? 6 : 4)(rng);
  switch (kind) {
    case 0:
      return Jsonb();
    case 1:
      return Jsonb::Bool(OneIn(rng, 2));
    case 2: {
      if (OneIn(rng, 2)) return Jsonb::Int(RandomInt<int64_t>(rng));
      static constexpr const char* kNumbers[] = {
          "0", "1.50", "-0.001", "1e30", "123456789012345678901234567890.5",
          "2.5e-7", "-17", "0.000"};
      return *Jsonb::Number(kNumbers[rng() % std::size(kNumbers)]);
    }
    case 3:
    case 4: {
      static constexpr const char* kStrings[] = {
          "", "a", "NULL", "null", "with \"quotes\" and \\", "tab\tnl\n",
          "\x01\x1f", "\xC3\xA9t\xC3\xA9", "\xF0\x9F\x98\x80", "{a:1}",
          "(1,2)", "a b"};
      return Jsonb::String(kStrings[rng() % std::size(kStrings)]);
    }
    case 5: {
      std::vector<Jsonb> elements;
      const int n = Pick<int>(rng, {0, 1, 2, 3});
      for (int i = 0; i < n; ++i) {
        elements.push_back(RandomJsonb(rng, max_depth - 1));
      }
      return Jsonb::Array(std::move(elements));
    }
    default: {
      static constexpr const char* kKeys[] = {"", "a", "b", "aa", "ab", "key",
                                              "\xC3\xA9", "a\"b"};
      std::vector<JsonbMember> members;
      const int n = Pick<int>(rng, {0, 1, 2, 3, 4});
      for (int i = 0; i < n; ++i) {
        members.push_back({kKeys[rng() % std::size(kKeys)],
                           RandomJsonb(rng, max_depth - 1)});
      }
      return Jsonb::Object(std::move(members));
    }
  }
}

namespace {

// RandomColumnType, or with `value_types` RandomValueColumnType: one draw of
// the kind (0..3, or 0..5), so each keeps its own random stream.
ColumnType RandomType(std::mt19937_64& rng, int max_depth, bool value_types) {
  const int kind = max_depth > 0 ? std::uniform_int_distribution<int>(
                                       0, value_types ? 5 : 3)(rng)
                                 : 0;
  switch (kind) {
    case 1:
      return ColumnType::List(RandomType(rng, max_depth - 1, value_types));
    case 2: {
      std::vector<StructField> fields;
      const int n = std::uniform_int_distribution<int>(1, 3)(rng);
      for (int i = 0; i < n; ++i) {
        fields.push_back({"f" + std::to_string(i),
                          RandomType(rng, max_depth - 1, value_types), i});
      }
      return ColumnType::Struct(std::move(fields));
    }
    case 3:
      if (!value_types) break;
      return ColumnType::Map(
          Pick<DataType>(rng, {DataType::kInt16, DataType::kInt32,
                               DataType::kInt64, DataType::kVarchar}),
          RandomType(rng, max_depth - 1, value_types));
    case 4:
      return DataType::kJsonb;
    default:
      break;
  }
  if (value_types && OneIn(rng, 8)) return DataType::kJsonb;
  return RandomScalarDataType(rng);
}

}  // namespace

ColumnType RandomColumnType(std::mt19937_64& rng, int max_depth) {
  return RandomType(rng, max_depth, /*value_types=*/false);
}

ColumnType RandomValueColumnType(std::mt19937_64& rng, int max_depth) {
  return RandomType(rng, max_depth, /*value_types=*/true);
}

Datum RandomColumnValue(const ColumnType& type, std::mt19937_64& rng) {
  switch (type.id()) {
    case DataType::kList: {
      ListValue list;
      const int n = Pick<int>(rng, {0, 0, 1, 1, 2, 3, 4});
      for (int i = 0; i < n; ++i) {
        list.elements.push_back(RandomColumnDatum(type.element(), rng, 0.2));
      }
      return list;
    }
    case DataType::kStruct: {
      StructValue value;
      for (const StructField& field : type.fields()) {
        value.fields.push_back(RandomColumnDatum(field.type, rng, 0.2));
      }
      return value;
    }
    case DataType::kMap: {
      // Random keys from small pools collide often: keep the first of each.
      std::vector<MapEntry> entries;
      const int n = Pick<int>(rng, {0, 1, 2, 3, 4});
      for (int i = 0; i < n; ++i) {
        Datum key = RandomValue(type.map_key().id(), rng);
        bool duplicate = false;
        for (const MapEntry& entry : entries) {
          duplicate = duplicate || DatumsEqual(entry.key, key);
        }
        if (duplicate) continue;
        entries.push_back(
            {std::move(key), RandomColumnDatum(type.map_value(), rng, 0.2)});
      }
      return *MakeMapValue(std::move(entries));
    }
    default:
      return RandomValue(type.id(), rng);
  }
}

Datum RandomColumnDatum(const ColumnType& type, std::mt19937_64& rng,
                        double null_probability) {
  if (std::bernoulli_distribution(null_probability)(rng)) return Datum();
  return RandomColumnValue(type, rng);
}

Datum RandomDatum(DataType type, std::mt19937_64& rng,
                  double null_probability) {
  if (std::bernoulli_distribution(null_probability)(rng)) return Datum();
  return RandomValue(type, rng);
}

Row RandomRow(absl::Span<const DataType> types, std::mt19937_64& rng,
              double null_probability) {
  Row row;
  row.reserve(types.size());
  for (DataType type : types) {
    row.push_back(RandomDatum(type, rng, null_probability));
  }
  return row;
}

DataType RandomDataType(std::mt19937_64& rng) {
  std::uniform_int_distribution<size_t> index(0, std::size(kAllDataTypes) - 1);
  return kAllDataTypes[index(rng)];
}

DataType RandomScalarDataType(std::mt19937_64& rng) {
  std::uniform_int_distribution<size_t> index(
      0, std::size(kAllScalarDataTypes) - 1);
  return kAllScalarDataTypes[index(rng)];
}

OrderType RandomOrderType(std::mt19937_64& rng) {
  std::uniform_int_distribution<size_t> index(0, std::size(kAllOrderTypes) - 1);
  return kAllOrderTypes[index(rng)];
}

}  // namespace backfill
