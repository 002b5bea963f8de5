// Seeded random datums and rows for property tests, benchmarks and corpus
// generators: every type, NULL, and the awkward values (NaN, +-0.0,
// +-Infinity, denormals, INT64_MIN/MAX, empty and binary strings with 0x00 and
// 0xFF, 38-digit and tiny decimals, intervals of equal span in different
// fields, INT256 extremes). Values are drawn from small pools often
// enough that ties (equal datums) are common. testonly.
//
//   std::mt19937_64 rng(seed);
//   Datum d = RandomDatum(DataType::kFloat64, rng);
//   Row row = RandomRow({DataType::kInt64, DataType::kVarchar}, rng);
#ifndef SERDE_RANDOM_DATUM_H_
#define SERDE_RANDOM_DATUM_H_

#include <random>
#include <vector>

#include "absl/types/span.h"
#include "serde/column_type.h"
#include "serde/data_type.h"
#include "serde/datum.h"
#include "serde/decimal.h"
#include "serde/order_type.h"
#include "serde/row.h"

namespace backfill {

// A non-NULL datum of `type`. (LIST, STRUCT and MAP: an empty one; use
// RandomColumnValue.)
Datum RandomValue(DataType type, std::mt19937_64& rng);

// A key type (no JSONB or MAP) of nesting depth <= max_depth: a scalar type,
// or a LIST or STRUCT (1 to 3 fields named f<i> with ids i) of such types.
ColumnType RandomColumnType(std::mt19937_64& rng, int max_depth);
// As RandomColumnType, and also the types that cannot be keys: JSONB, and
// MAPs (key INT16, INT32, INT64 or VARCHAR) of such types. For value
// encodings and text forms.
ColumnType RandomValueColumnType(std::mt19937_64& rng, int max_depth);
// A JSON value of nesting depth <= max_depth: every kind, numbers with
// scales and exponents, strings with escapes and non-ASCII text, objects
// with duplicate keys given.
Jsonb RandomJsonb(std::mt19937_64& rng, int max_depth);
// A non-NULL datum of `type`, nested ones included (maps of 0 to 4 entries): lists of 0 to 4 elements
// (often empty or one element, so that prefixes are common), NULL elements
// and fields with probability 0.2.
Datum RandomColumnValue(const ColumnType& type, std::mt19937_64& rng);
// NULL with probability `null_probability`, else RandomColumnValue.
Datum RandomColumnDatum(const ColumnType& type, std::mt19937_64& rng,
                        double null_probability = 0.1);
// NULL with probability `null_probability`, else RandomValue.
Datum RandomDatum(DataType type, std::mt19937_64& rng,
                  double null_probability = 0.1);
Row RandomRow(absl::Span<const DataType> types, std::mt19937_64& rng,
              double null_probability = 0.1);
Decimal RandomDecimal(std::mt19937_64& rng);
// One of kAllDataTypes (the types the whole stack handles).
DataType RandomDataType(std::mt19937_64& rng);
// One of kAllScalarDataTypes (every scalar type serde encodes).
DataType RandomScalarDataType(std::mt19937_64& rng);
OrderType RandomOrderType(std::mt19937_64& rng);

// The four OrderTypes.
inline constexpr OrderType kAllOrderTypes[] = {
    OrderType::Ascending(), OrderType::AscendingNullsFirst(),
    OrderType::Descending(), OrderType::DescendingNullsLast()};

}  // namespace backfill

#endif  // SERDE_RANDOM_DATUM_H_
