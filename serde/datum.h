// Datum: one nullable scalar value of any DataType.
//
//   Datum a = int64_t{42};
//   Datum b = std::string("foo");        // VARCHAR or BYTEA (the schema says)
//   Datum n = Datum();                   // NULL
//   int c = CompareDatums(a, n, OrderType::Ascending());   // NULLS LAST: -1
//
// A Datum does not carry its DataType: the column's type comes from the schema.
// VARCHAR and BYTEA are both held as std::string.
#ifndef SERDE_DATUM_H_
#define SERDE_DATUM_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "serde/column_type.h"
#include "serde/data_type.h"
#include "serde/decimal.h"
#include "serde/int256.h"
#include "serde/interval.h"
#include "serde/jsonb.h"
#include "serde/order_type.h"
#include "serde/timestamptz.h"

namespace backfill {

// Days since 1970-01-01 (negative before).
struct Date {
  int32_t days = 0;
  friend bool operator==(Date a, Date b) { return a.days == b.days; }
  friend bool operator<(Date a, Date b) { return a.days < b.days; }
};

// Microseconds since midnight, in [0, 86'400'000'000).
struct TimeOfDay {
  int64_t micros = 0;
  friend bool operator==(TimeOfDay a, TimeOfDay b) {
    return a.micros == b.micros;
  }
  friend bool operator<(TimeOfDay a, TimeOfDay b) {
    return a.micros < b.micros;
  }
};

// Microseconds since 1970-01-01 00:00:00, no time zone.
struct Timestamp {
  int64_t micros = 0;
  friend bool operator==(Timestamp a, Timestamp b) {
    return a.micros == b.micros;
  }
  friend bool operator<(Timestamp a, Timestamp b) {
    return a.micros < b.micros;
  }
};

// A SERIAL: RisingWave's row id, an int64 that is a type of its own.
struct Serial {
  int64_t value = 0;
  friend bool operator==(Serial a, Serial b) { return a.value == b.value; }
  friend bool operator<(Serial a, Serial b) { return a.value < b.value; }
};

struct ListValue;
struct StructValue;
struct MapValue;
struct MapEntry;

// The alternatives, in this order; index 0 (monostate) is NULL. (The order is
// not persisted; new alternatives go at the end.)
using Datum =
    std::variant<std::monostate, bool, int16_t, int32_t, int64_t, float, double,
                 Decimal, std::string, Date, TimeOfDay, Timestamp, Timestamptz,
                 Interval, Serial, Int256, ListValue, StructValue, Jsonb,
                 MapValue>;

// A LIST value: its elements, each NULL or of the list's element type.
// Compared lexicographically (a proper prefix first), elements ascending with
// NULL elements above every value, as PostgreSQL compares arrays.
struct ListValue {
  std::vector<Datum> elements;
};

// A STRUCT value: one datum per field of its type, in the type's field order.
// Compared field by field, NULL fields above every value, as PostgreSQL
// compares records.
struct StructValue {
  std::vector<Datum> fields;
};

// A MAP value: entries with unique, non-NULL keys (of the map's key type),
// sorted by key ascending; values NULL or of the map's value type.
// RisingWave keeps a map's entries in insertion order but compares and
// hashes them sorted by key; holding them sorted makes equal maps equal
// values. Build one from unsorted entries with MakeMapValue.
struct MapValue {
  std::vector<MapEntry> entries;
};

struct MapEntry {
  Datum key;
  Datum value;
};

// Element-wise std::variant equality (as Datum's operator== for the other
// alternatives: NaN != NaN, '1 mon' == '30 days'); DatumsEqual is the SQL
// equality. Both declared before either is defined: each one's body compares
// Datums, which needs the other.
bool operator==(const ListValue& a, const ListValue& b);
bool operator==(const StructValue& a, const StructValue& b);
bool operator==(const MapValue& a, const MapValue& b);
inline bool operator==(const ListValue& a, const ListValue& b) {
  return a.elements == b.elements;
}
inline bool operator==(const StructValue& a, const StructValue& b) {
  return a.fields == b.fields;
}
inline bool operator==(const MapEntry& a, const MapEntry& b) {
  return a.key == b.key && a.value == b.value;
}
inline bool operator==(const MapValue& a, const MapValue& b) {
  return a.entries == b.entries;
}

// A MapValue of `entries` in any order: sorted by key. Errors:
// InvalidArgument for a NULL key or two equal keys (as RisingWave's
// map_from_key_values: "map keys must be unique"). REQUIRES: the keys are
// of one map key type (IsValidMapKeyType).
absl::StatusOr<MapValue> MakeMapValue(std::vector<MapEntry> entries);

inline bool IsNull(const Datum& datum) { return datum.index() == 0; }

// True iff `datum` is NULL or holds the alternative used for `type` (for
// LIST, STRUCT and MAP, whatever the elements, fields and entries hold).
bool DatumMatchesType(const Datum& datum, DataType type);

// As DatumMatchesType, and recursively: every element of a LIST matches the
// element type, a STRUCT has one field per field of the type and each
// matches, a MAP's keys are non-NULL, sorted, unique and of the key type and
// its values of the value type.
bool DatumMatchesColumnType(const Datum& datum, const ColumnType& type);

// A NULL-free zero value of `type` (false, 0, "", 1970-01-01, an empty LIST
// or MAP, the JSON null for JSONB;
// for STRUCT, a struct of no fields: use DefaultColumnDatum for one per
// field).
Datum DefaultDatum(DataType type);
// The zero value of `type`: DefaultDatum, and for a STRUCT one zero value per
// field.
Datum DefaultColumnDatum(const ColumnType& type);

// Total order of two datums of the same type under `order`:
// NULLs first or last as `order` says; floats: -0.0 == 0.0, NaN above
// +Infinity, all NaNs equal; strings and bytes byte-wise; decimals by value;
// intervals by their span ('1 mon' == '30 days'); JSONB by CompareJsonb
// (its canonical text: not a SQL order, JSONB is not a key type); maps
// entry by entry, key then value (not a SQL order either); lists and
// structs as their comments above say (nested NULLs above every value, whatever `order`'s NULL
// placement, which is for the datums themselves; DESC reverses the whole
// comparison).
// Returns <0, 0 or >0. REQUIRES: both hold the same alternative or NULL.
int CompareDatums(const Datum& a, const Datum& b, OrderType order);

// Equality consistent with CompareDatums (so 1.5 == 1.50, NaN == NaN,
// -0.0 == 0.0, '1 mon' == '30 days', NULL == NULL).
bool DatumsEqual(const Datum& a, const Datum& b);

// Human-readable text: "NULL", "42", "'foo'", "\x00ff", "2024-01-02",
// "[1, NULL]" (LIST), "{1, 'a'}" (STRUCT), "{'a': 1}" (MAP), JSONB's
// canonical text, ...
std::string DatumDebugString(const Datum& datum);

}  // namespace backfill

#endif  // SERDE_DATUM_H_
