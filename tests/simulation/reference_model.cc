#include "tests/simulation/reference_model.h"

#include <cmath>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "absl/numeric/int128.h"

namespace backfill {
namespace simulation {
namespace {

// An INTERVAL's span in microseconds (a month is 30 days), exactly.
absl::int128 Span(const Interval& value) {
  constexpr int64_t kMicrosPerDay = int64_t{86'400'000'000};
  return absl::int128(value.months) * 30 * kMicrosPerDay +
         absl::int128(value.days) * kMicrosPerDay + value.micros;
}

// CRC-32 (IEEE, reflected), one bit at a time: slow and obviously right.
class BitwiseCrc32 {
 public:
  void Byte(uint8_t byte) {
    register_ ^= byte;
    for (int bit = 0; bit < 8; ++bit) {
      register_ = (register_ & 1) ? (register_ >> 1) ^ 0xEDB88320u
                                  : register_ >> 1;
    }
  }
  // Little-endian, `size` bytes.
  void Integer(uint64_t value, int size) {
    for (int i = 0; i < size; ++i) Byte(static_cast<uint8_t>(value >> (8 * i)));
  }
  uint32_t Value() const { return ~register_; }

 private:
  uint32_t register_ = 0xFFFFFFFFu;
};

void HashDatum(const Datum& datum, BitwiseCrc32& crc) {
  if (std::holds_alternative<std::monostate>(datum)) {
    crc.Integer(0xFFFFFFF0u, 4);  // NULL's fixed hash input.
  } else if (const bool* b = std::get_if<bool>(&datum)) {
    crc.Byte(*b ? 1 : 0);
  } else if (const int16_t* i16 = std::get_if<int16_t>(&datum)) {
    crc.Integer(static_cast<uint16_t>(*i16), 2);
  } else if (const int32_t* i32 = std::get_if<int32_t>(&datum)) {
    crc.Integer(static_cast<uint32_t>(*i32), 4);
  } else if (const int64_t* i64 = std::get_if<int64_t>(&datum)) {
    crc.Integer(static_cast<uint64_t>(*i64), 8);
  } else if (const float* f = std::get_if<float>(&datum)) {
    uint32_t bits = 0x7FC00000u;  // every NaN alike
    if (*f == 0) {
      bits = 0;  // -0 and +0 alike
    } else if (!std::isnan(*f)) {
      std::memcpy(&bits, f, 4);
    }
    crc.Integer(bits, 4);
  } else if (const double* d = std::get_if<double>(&datum)) {
    uint64_t bits = 0x7FF8000000000000u;
    if (*d == 0) {
      bits = 0;
    } else if (!std::isnan(*d)) {
      std::memcpy(&bits, d, 8);
    }
    crc.Integer(bits, 8);
  } else if (const std::string* s = std::get_if<std::string>(&datum)) {
    crc.Integer(s->size(), 4);
    for (char c : *s) crc.Byte(static_cast<uint8_t>(c));
  } else if (const Date* date = std::get_if<Date>(&datum)) {
    crc.Integer(static_cast<uint32_t>(date->days), 4);
  } else if (const TimeOfDay* time = std::get_if<TimeOfDay>(&datum)) {
    crc.Integer(static_cast<uint64_t>(time->micros), 8);
  } else if (const Timestamp* ts = std::get_if<Timestamp>(&datum)) {
    crc.Integer(static_cast<uint64_t>(ts->micros), 8);
  } else if (const Timestamptz* tz = std::get_if<Timestamptz>(&datum)) {
    crc.Integer(static_cast<uint64_t>(tz->micros), 8);
  } else if (const Serial* serial = std::get_if<Serial>(&datum)) {
    crc.Integer(static_cast<uint64_t>(serial->value), 8);
  } else if (const Interval* interval = std::get_if<Interval>(&datum)) {
    // The span, 16 bytes little-endian two's complement.
    const absl::uint128 span = static_cast<absl::uint128>(Span(*interval));
    crc.Integer(absl::Uint128Low64(span), 8);
    crc.Integer(absl::Uint128High64(span), 8);
  } else if (const Int256* big = std::get_if<Int256>(&datum)) {
    for (uint64_t word : big->words()) crc.Integer(word, 8);
  } else if (const ListValue* list = std::get_if<ListValue>(&datum)) {
    crc.Integer(list->elements.size(), 4);
    for (const Datum& element : list->elements) HashDatum(element, crc);
  } else if (const StructValue* value = std::get_if<StructValue>(&datum)) {
    for (const Datum& field : value->fields) HashDatum(field, crc);
  }
  // Other types are not distribution-key types of the simulation's tables
  // (ReferenceTypeSupported; JSONB and MAP are never keys).
}

template <typename T>
int Three(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// Floats in SQL order: -0 == 0, NaN above +Infinity, NaN == NaN.
template <typename F>
int CompareFloats(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) == std::isnan(b) ? 0 : (std::isnan(a) ? 1 : -1);
  }
  return Three(a, b);
}

// Signed: the top word decides first, as a signed number.
int CompareInt256(const Int256& a, const Int256& b) {
  const auto& x = a.words();
  const auto& y = b.words();
  if (x[3] != y[3]) {
    return Three(static_cast<int64_t>(x[3]), static_cast<int64_t>(y[3]));
  }
  for (int i = 2; i >= 0; --i) {
    if (x[i] != y[i]) return Three(x[i], y[i]);
  }
  return 0;
}

int CompareValues(const Datum& a, const Datum& b);

// Elements of a LIST, fields of a STRUCT: NULL above every value.
int CompareNested(const Datum& a, const Datum& b) {
  const bool a_null = std::holds_alternative<std::monostate>(a);
  const bool b_null = std::holds_alternative<std::monostate>(b);
  if (a_null || b_null) return a_null == b_null ? 0 : (a_null ? 1 : -1);
  return CompareValues(a, b);
}

// Ascending comparison of two non-NULL datums of one type.
int CompareValues(const Datum& a, const Datum& b) {
  if (const bool* x = std::get_if<bool>(&a)) return Three(*x, std::get<bool>(b));
  if (const int16_t* x = std::get_if<int16_t>(&a)) {
    return Three(*x, std::get<int16_t>(b));
  }
  if (const int32_t* x = std::get_if<int32_t>(&a)) {
    return Three(*x, std::get<int32_t>(b));
  }
  if (const int64_t* x = std::get_if<int64_t>(&a)) {
    return Three(*x, std::get<int64_t>(b));
  }
  if (const double* x = std::get_if<double>(&a)) {
    return CompareFloats(*x, std::get<double>(b));
  }
  if (const float* x = std::get_if<float>(&a)) {
    return CompareFloats(*x, std::get<float>(b));
  }
  if (const std::string* x = std::get_if<std::string>(&a)) {
    // Byte order, bytes unsigned (char_traits<char>::compare is memcmp-like).
    const int c = x->compare(std::get<std::string>(b));
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (const Date* x = std::get_if<Date>(&a)) {
    return Three(x->days, std::get<Date>(b).days);
  }
  if (const TimeOfDay* x = std::get_if<TimeOfDay>(&a)) {
    return Three(x->micros, std::get<TimeOfDay>(b).micros);
  }
  if (const Timestamp* x = std::get_if<Timestamp>(&a)) {
    return Three(x->micros, std::get<Timestamp>(b).micros);
  }
  if (const Timestamptz* x = std::get_if<Timestamptz>(&a)) {
    return Three(x->micros, std::get<Timestamptz>(b).micros);
  }
  if (const Serial* x = std::get_if<Serial>(&a)) {
    return Three(x->value, std::get<Serial>(b).value);
  }
  if (const Interval* x = std::get_if<Interval>(&a)) {
    return Three(Span(*x), Span(std::get<Interval>(b)));
  }
  if (const Int256* x = std::get_if<Int256>(&a)) {
    return CompareInt256(*x, std::get<Int256>(b));
  }
  if (const ListValue* x = std::get_if<ListValue>(&a)) {
    // Element by element; a proper prefix first.
    const std::vector<Datum>& p = x->elements;
    const std::vector<Datum>& q = std::get<ListValue>(b).elements;
    for (size_t i = 0; i < p.size() && i < q.size(); ++i) {
      if (int c = CompareNested(p[i], q[i]); c != 0) return c;
    }
    return Three(p.size(), q.size());
  }
  if (const StructValue* x = std::get_if<StructValue>(&a)) {
    const std::vector<Datum>& p = x->fields;
    const std::vector<Datum>& q = std::get<StructValue>(b).fields;
    for (size_t i = 0; i < p.size() && i < q.size(); ++i) {
      if (int c = CompareNested(p[i], q[i]); c != 0) return c;
    }
    return 0;
  }
  return 0;
}

// Bit-for-bit floats (any NaN equals any NaN: payloads are not compared).
template <typename F>
bool IdenticalFloats(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

}  // namespace

bool ReferenceTypeSupported(const ColumnType& type) {
  switch (type.id()) {
    case DataType::kBoolean:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kVarchar:
    case DataType::kBytea:
    case DataType::kDate:
    case DataType::kTime:
    case DataType::kTimestamp:
    case DataType::kTimestamptz:
    case DataType::kInterval:
    case DataType::kSerial:
    case DataType::kInt256:
    case DataType::kJsonb:
      return true;
    case DataType::kList:
      return ReferenceTypeSupported(type.element());
    case DataType::kMap:
      return ReferenceTypeSupported(type.map_key()) &&
             ReferenceTypeSupported(type.map_value());
    case DataType::kStruct:
      for (const StructField& field : type.fields()) {
        if (!ReferenceTypeSupported(field.type)) return false;
      }
      return true;
    default:
      return false;
  }
}

bool ReferenceDatumsIdentical(const Datum& a, const Datum& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) {
    return IdenticalFloats(*x, std::get<double>(b));
  }
  if (const float* x = std::get_if<float>(&a)) {
    return IdenticalFloats(*x, std::get<float>(b));
  }
  if (const Interval* x = std::get_if<Interval>(&a)) {
    const Interval& y = std::get<Interval>(b);
    return x->months == y.months && x->days == y.days && x->micros == y.micros;
  }
  if (const ListValue* x = std::get_if<ListValue>(&a)) {
    return ReferenceRowsIdentical(x->elements, std::get<ListValue>(b).elements);
  }
  if (const StructValue* x = std::get_if<StructValue>(&a)) {
    return ReferenceRowsIdentical(x->fields, std::get<StructValue>(b).fields);
  }
  if (const MapValue* x = std::get_if<MapValue>(&a)) {
    const std::vector<MapEntry>& p = x->entries;
    const std::vector<MapEntry>& q = std::get<MapValue>(b).entries;
    if (p.size() != q.size()) return false;
    for (size_t i = 0; i < p.size(); ++i) {
      if (!ReferenceDatumsIdentical(p[i].key, q[i].key) ||
          !ReferenceDatumsIdentical(p[i].value, q[i].value)) {
        return false;
      }
    }
    return true;
  }
  // The rest: the types' own equality (Jsonb's is structural).
  return a == b;
}

bool ReferenceRowsIdentical(const std::vector<Datum>& a,
                            const std::vector<Datum>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ReferenceDatumsIdentical(a[i], b[i])) return false;
  }
  return true;
}

VirtualNode ReferenceVnode(const Row& row, const TableCatalog& catalog) {
  if (catalog.dist_key_indices.empty()) return 0;
  BitwiseCrc32 crc;
  for (int index : catalog.dist_key_indices) HashDatum(row[index], crc);
  return static_cast<VirtualNode>(crc.Value() %
                                  static_cast<uint32_t>(catalog.vnode_count));
}

int ReferenceComparePk(const Row& a, const Row& b,
                       const std::vector<OrderType>& orders) {
  for (size_t i = 0; i < orders.size(); ++i) {
    const bool a_null = std::holds_alternative<std::monostate>(a[i]);
    const bool b_null = std::holds_alternative<std::monostate>(b[i]);
    int c = 0;
    if (a_null || b_null) {
      if (a_null && b_null) continue;
      // NULL placement does not depend on the direction.
      c = (a_null == orders[i].nulls_first()) ? -1 : 1;
      return c;
    }
    c = CompareValues(a[i], b[i]);
    if (orders[i].is_descending()) c = -c;
    if (c != 0) return c;
  }
  return 0;
}

Row ReferencePk(const Row& row, const TableCatalog& catalog) {
  Row pk;
  pk.reserve(catalog.pk_indices.size());
  for (int index : catalog.pk_indices) pk.push_back(row[index]);
  return pk;
}

UpstreamModel::UpstreamModel(const TableCatalog& catalog,
                             const WorkloadOptions& workload,
                             uint64_t initial_rows)
    : catalog_(catalog),
      workload_(workload),
      rows_(PkLess{&catalog_.pk_orders}) {
  for (uint64_t key = 0; key < initial_rows; ++key) {
    Row row = WorkloadRow(catalog_, workload_.seed, key, 0,
                          workload_.null_fraction);
    Row pk = ReferencePk(row, catalog_);
    // A key whose pk equals an earlier key's replaces it (same pk, same
    // vnode).
    if (auto existing = rows_.find(pk); existing != rows_.end()) {
      existing->second.row = std::move(row);
      continue;
    }
    Insert(std::move(pk), std::move(row));
  }
}

void UpstreamModel::Insert(Row pk, Row row) {
  const VirtualNode vnode = ReferenceVnode(row, catalog_);
  rows_.emplace(std::move(pk), Entry{std::move(row), vnode});
}

void UpstreamModel::AdvanceTo(uint64_t offset) {
  for (; offset_ < offset; ++offset_) {
    const WorkloadOp op = NextWorkloadOp(workload_, offset_);
    Row fresh = WorkloadRow(catalog_, workload_.seed, op.key, op.version,
                            workload_.null_fraction);
    Row pk = ReferencePk(fresh, catalog_);
    auto existing = rows_.find(pk);
    if (existing == rows_.end()) {
      Insert(std::move(pk), std::move(fresh));
      continue;
    }
    if (op.kind == WorkloadOpKind::kDelete) {
      rows_.erase(existing);
      continue;
    }
    Row updated = std::move(fresh);
    if (op.target_key != op.key) {
      Row moved = WorkloadRow(catalog_, workload_.seed, op.target_key,
                              op.version, workload_.null_fraction);
      Row moved_pk = ReferencePk(moved, catalog_);
      if (rows_.find(moved_pk) == rows_.end()) {
        rows_.erase(existing);
        Insert(std::move(moved_pk), std::move(moved));
        continue;
      }
    }
    existing->second.row = std::move(updated);
  }
}

}  // namespace simulation
}  // namespace backfill
