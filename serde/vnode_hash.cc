#include "serde/vnode_hash.h"

#include <array>
#include <cassert>
#include <cmath>
#include <cstring>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "serde/internal/value_payload.h"

namespace backfill {
namespace {

// Slicing-by-8 tables of the reflected IEEE polynomial. tables[0] is the
// classic byte table; tables[k][b] is the CRC of byte b followed by k zero
// bytes.
struct Crc32Tables {
  uint32_t t[8][256];
};

constexpr Crc32Tables MakeTables() {
  Crc32Tables tables{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    tables.t[0][i] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t i = 0; i < 256; ++i) {
      const uint32_t prev = tables.t[k - 1][i];
      tables.t[k][i] = (prev >> 8) ^ tables.t[0][prev & 0xFF];
    }
  }
  return tables;
}

constexpr Crc32Tables kTables = MakeTables();

// All updates work on the inverted register (~crc).
inline uint32_t Update1(uint32_t reg, uint8_t byte) {
  return (reg >> 8) ^ kTables.t[0][(reg ^ byte) & 0xFF];
}
inline uint32_t Update2(uint32_t reg, uint16_t value) {
  reg = Update1(reg, static_cast<uint8_t>(value));
  return Update1(reg, static_cast<uint8_t>(value >> 8));
}
inline uint32_t Update4(uint32_t reg, uint32_t value) {
  const uint32_t v = reg ^ value;
  return kTables.t[3][v & 0xFF] ^ kTables.t[2][(v >> 8) & 0xFF] ^
         kTables.t[1][(v >> 16) & 0xFF] ^ kTables.t[0][v >> 24];
}
inline uint32_t Update8(uint32_t reg, uint64_t value) {
  const uint64_t v = value ^ reg;
  return kTables.t[7][v & 0xFF] ^ kTables.t[6][(v >> 8) & 0xFF] ^
         kTables.t[5][(v >> 16) & 0xFF] ^ kTables.t[4][(v >> 24) & 0xFF] ^
         kTables.t[3][(v >> 32) & 0xFF] ^ kTables.t[2][(v >> 40) & 0xFF] ^
         kTables.t[1][(v >> 48) & 0xFF] ^ kTables.t[0][v >> 56];
}
uint32_t UpdateBytes(uint32_t reg, const char* data, size_t size) {
  while (size >= 8) {
    uint64_t v;
    std::memcpy(&v, data, 8);
    reg = Update8(reg, v);
    data += 8;
    size -= 8;
  }
  while (size > 0) {
    reg = Update1(reg, static_cast<uint8_t>(*data++));
    --size;
  }
  return reg;
}

// NULL hashes as the u32 0xFFFFFFF0 (as RisingWave). Never change.
constexpr uint32_t kNullHashValue = 0xFFFFFFF0u;

inline uint32_t CanonicalFloatBits(float value) {
  if (std::isnan(value)) return 0x7FC00000u;
  if (value == 0) return 0;
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}
inline uint64_t CanonicalDoubleBits(double value) {
  if (std::isnan(value)) return 0x7FF8000000000000ULL;
  if (value == 0) return 0;
  uint64_t bits;
  std::memcpy(&bits, &value, 8);
  return bits;
}

uint32_t UpdateDatum(uint32_t reg, const Datum& datum) {
  switch (datum.index()) {
    case 0:
      return Update4(reg, kNullHashValue);
    case 1:
      return Update1(reg, std::get<bool>(datum) ? 1 : 0);
    case 2:
      return Update2(reg, static_cast<uint16_t>(std::get<int16_t>(datum)));
    case 3:
      return Update4(reg, static_cast<uint32_t>(std::get<int32_t>(datum)));
    case 4:
      return Update8(reg, static_cast<uint64_t>(std::get<int64_t>(datum)));
    case 5:
      return Update4(reg, CanonicalFloatBits(std::get<float>(datum)));
    case 6:
      return Update8(reg, CanonicalDoubleBits(std::get<double>(datum)));
    case 7: {
      std::string bytes;
      serde_internal::AppendDecimalPayload(std::get<Decimal>(datum), &bytes);
      return UpdateBytes(reg, bytes.data(), bytes.size());
    }
    case 8: {
      const std::string& s = std::get<std::string>(datum);
      reg = Update4(reg, static_cast<uint32_t>(s.size()));
      return UpdateBytes(reg, s.data(), s.size());
    }
    case 9:
      return Update4(reg, static_cast<uint32_t>(std::get<Date>(datum).days));
    case 10:
      return Update8(reg,
                     static_cast<uint64_t>(std::get<TimeOfDay>(datum).micros));
    case 11:
      return Update8(reg,
                     static_cast<uint64_t>(std::get<Timestamp>(datum).micros));
    case 12:
      return Update8(
          reg, static_cast<uint64_t>(std::get<Timestamptz>(datum).micros));
    case 13: {
      // The span, so that equal intervals ('1 mon', '30 days') hash equally.
      const absl::int128 span = IntervalSpan(std::get<Interval>(datum));
      reg = Update8(reg, absl::Int128Low64(span));
      return Update8(reg, static_cast<uint64_t>(absl::Int128High64(span)));
    }
    case 14:
      return Update8(reg, static_cast<uint64_t>(std::get<Serial>(datum).value));
    case 15: {
      for (uint64_t word : std::get<Int256>(datum).words()) {
        reg = Update8(reg, word);
      }
      return reg;
    }
    case 16: {
      // The element count (so that ([1], 2) and ([1, 2]) differ), then each
      // element's form.
      const std::vector<Datum>& elements = std::get<ListValue>(datum).elements;
      reg = Update4(reg, static_cast<uint32_t>(elements.size()));
      for (const Datum& element : elements) reg = UpdateDatum(reg, element);
      return reg;
    }
    case 17:
      for (const Datum& field : std::get<StructValue>(datum).fields) {
        reg = UpdateDatum(reg, field);
      }
      return reg;
    case 18:
    case 19:
      // JSONB and MAP cannot be distribution keys (ValidateKeyColumnType):
      // no hash form is defined, so none is persisted.
      assert(false && "JSONB and MAP are not distribution-key types");
      return reg;
  }
  return reg;
}

// One column's contribution to every row's register. The per-type loops avoid
// the variant switch for the common case of a non-NULL fixed-width column.
template <typename T, typename Bits, typename ToBits>
void UpdateColumnAs(absl::Span<const Datum> column, size_t num_rows,
                    uint32_t* regs, ToBits to_bits) {
  for (size_t r = 0; r < num_rows; ++r) {
    if (const T* value = std::get_if<T>(&column[r])) {
      const Bits bits = to_bits(*value);
      if constexpr (sizeof(Bits) == 8) {
        regs[r] = Update8(regs[r], bits);
      } else {
        regs[r] = Update4(regs[r], bits);
      }
    } else {
      regs[r] = UpdateDatum(regs[r], column[r]);
    }
  }
}

void UpdateColumn(absl::Span<const Datum> column, size_t num_rows,
                  uint32_t* regs) {
  // The alternative of the first non-NULL datum picks the loop.
  size_t kind = 0;
  for (size_t r = 0; r < num_rows && kind == 0; ++r) kind = column[r].index();
  switch (kind) {
    case 3:
      return UpdateColumnAs<int32_t, uint32_t>(
          column, num_rows, regs,
          [](int32_t v) { return static_cast<uint32_t>(v); });
    case 4:
      return UpdateColumnAs<int64_t, uint64_t>(
          column, num_rows, regs,
          [](int64_t v) { return static_cast<uint64_t>(v); });
    case 6:
      return UpdateColumnAs<double, uint64_t>(column, num_rows, regs,
                                              CanonicalDoubleBits);
    case 9:
      return UpdateColumnAs<Date, uint32_t>(column, num_rows, regs, [](Date v) {
        return static_cast<uint32_t>(v.days);
      });
    case 11:
      return UpdateColumnAs<Timestamp, uint64_t>(
          column, num_rows, regs,
          [](Timestamp v) { return static_cast<uint64_t>(v.micros); });
    default:
      for (size_t r = 0; r < num_rows; ++r)
        regs[r] = UpdateDatum(regs[r], column[r]);
  }
}

inline VirtualNode Reduce(uint32_t crc, int vnode_count) {
  return static_cast<VirtualNode>(crc % static_cast<uint32_t>(vnode_count));
}

}  // namespace

absl::Status ValidateVnodeCount(int vnode_count) {
  if (vnode_count < 1 || vnode_count > kMaxVnodeCount) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vnode count must be in [1, ", kMaxVnodeCount, "], got ", vnode_count));
  }
  return absl::OkStatus();
}

uint32_t Crc32(absl::string_view bytes, uint32_t crc) {
  return ~UpdateBytes(~crc, bytes.data(), bytes.size());
}

uint32_t HashDistKey(RowView dist_key) {
  uint32_t reg = 0xFFFFFFFFu;
  for (const Datum& datum : dist_key) reg = UpdateDatum(reg, datum);
  return ~reg;
}

VirtualNode ComputeVnode(RowView dist_key, absl::Span<const DataType> types,
                         int vnode_count) {
  assert(ValidateVnodeCount(vnode_count).ok());
  assert(types.size() == dist_key.size());
#ifndef NDEBUG
  for (size_t i = 0; i < types.size(); ++i) {
    assert(DatumMatchesType(dist_key[i], types[i]));
  }
#else
  (void)types;
#endif
  if (dist_key.empty()) return 0;
  return Reduce(HashDistKey(dist_key), vnode_count);
}

absl::StatusOr<VnodeHasher> VnodeHasher::Create(
    std::vector<int> dist_key_indices, int vnode_count) {
  if (absl::Status status = ValidateVnodeCount(vnode_count); !status.ok()) {
    return status;
  }
  for (size_t i = 0; i < dist_key_indices.size(); ++i) {
    if (dist_key_indices[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dist_key_indices[", i, "] = ", dist_key_indices[i], " is negative"));
    }
  }
  return VnodeHasher(std::move(dist_key_indices), vnode_count);
}

VirtualNode VnodeHasher::VnodeOf(RowView row) const {
  if (dist_key_indices_.empty()) return 0;
  uint32_t reg = 0xFFFFFFFFu;
  for (int index : dist_key_indices_) {
    assert(static_cast<size_t>(index) < row.size());
    reg = UpdateDatum(reg, row[index]);
  }
  return Reduce(~reg, vnode_count_);
}

void VnodeHasher::VnodesOfRows(absl::Span<const Row> rows,
                               std::vector<VirtualNode>* out) const {
  out->resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) (*out)[i] = VnodeOf(rows[i]);
}

void VnodeHasher::VnodesOfColumns(
    absl::Span<const absl::Span<const Datum>> columns, size_t num_rows,
    std::vector<VirtualNode>* out) const {
  out->resize(num_rows);
  if (dist_key_indices_.empty()) {
    std::fill(out->begin(), out->end(), VirtualNode{0});
    return;
  }
  // Registers on the stack for chunks up to 1024 rows, the usual size.
  constexpr size_t kBlock = 1024;
  uint32_t regs[kBlock];
  for (size_t start = 0; start < num_rows; start += kBlock) {
    const size_t n = std::min(kBlock, num_rows - start);
    std::fill(regs, regs + n, 0xFFFFFFFFu);
    for (int index : dist_key_indices_) {
      assert(static_cast<size_t>(index) < columns.size());
      assert(columns[index].size() >= num_rows);
      UpdateColumn(columns[index].subspan(start, n), n, regs);
    }
    VirtualNode* dst = out->data() + start;
    for (size_t r = 0; r < n; ++r) dst[r] = Reduce(~regs[r], vnode_count_);
  }
}

}  // namespace backfill
