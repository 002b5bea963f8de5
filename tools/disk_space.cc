#include "tools/disk_space.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "third_party/absl_extras/saturating.h"

namespace backfill {
namespace {

// Encoded bytes of one value of `type`: its fixed width, or for VARCHAR and
// BYTEA the workload's typical length (executor/runtime/demo/workload.cc makes
// strings like "k123-4567890" and 8-byte blobs) plus a length prefix.
uint64_t ValueBytes(DataType type) {
  switch (type) {
    case DataType::kBoolean:
      return 1;
    case DataType::kInt16:
      return 2;
    case DataType::kInt32:
    case DataType::kFloat32:
    case DataType::kDate:
      return 4;
    case DataType::kInt64:
    case DataType::kFloat64:
    case DataType::kTime:
    case DataType::kTimestamp:
    case DataType::kTimestamptz:
    case DataType::kSerial:
      return 8;
    case DataType::kInterval:
      return 16;
    case DataType::kDecimal:
      return 18;
    case DataType::kVarchar:
      return 24;
    case DataType::kBytea:
      return 16;
    case DataType::kInt256:
      return 32;
    case DataType::kStruct:
    case DataType::kList:
    case DataType::kMap:
    case DataType::kJsonb:
      // Nested values: a typical few elements (no scenario makes them yet).
      return 32;
  }
  return 16;
}

uint64_t RowBytes(const TableCatalog& table) {
  // table id, vnode, epoch, RocksDB's sequence/type tag.
  uint64_t bytes = 4 + 2 + 8 + 8;
  for (int index : table.pk_indices) {
    // Memcomparable: a null tag, the value, group markers for strings.
    bytes += 1 + ValueBytes(table.columns[index].type) * 9 / 8;
  }
  std::vector<int> stored = table.value_indices;
  if (stored.empty()) {
    for (size_t i = 0; i < table.columns.size(); ++i) {
      stored.push_back(static_cast<int>(i));
    }
  }
  bytes += 1 + (stored.size() + 7) / 8;  // value header and null bitmap
  for (int index : stored) bytes += ValueBytes(table.columns[index].type);
  return bytes;
}

}  // namespace

DiskEstimate EstimateDiskBytes(const ScenarioSpec& spec) {
  DiskEstimate estimate;
  estimate.initial_rows = spec.job.initial_rows;
  estimate.table_row_bytes = RowBytes(spec.job.upstream);
  estimate.view_row_bytes = RowBytes(spec.view);
  const uint64_t raw = SaturatingMultiply(
      spec.job.initial_rows, estimate.table_row_bytes + estimate.view_row_bytes);
  estimate.total_bytes = SaturatingAdd(raw, raw / 5);
  return estimate;
}

absl::StatusOr<uint64_t> FreeBytes(absl::string_view path) {
  std::filesystem::path existing{std::string(path)};
  std::error_code error;
  if (existing.empty()) existing = ".";
  while (!std::filesystem::exists(existing, error) &&
         existing.has_parent_path() && existing.parent_path() != existing) {
    existing = existing.parent_path();
  }
  struct statvfs info;
  if (statvfs(existing.c_str(), &info) != 0) {
    const int code = errno;
    return absl::Status(absl::ErrnoToStatusCode(code),
                        absl::StrCat("statvfs ", existing.string(), " (for ",
                                     path, "): ", std::strerror(code)));
  }
  return SaturatingMultiply(static_cast<uint64_t>(info.f_bavail),
                            static_cast<uint64_t>(info.f_frsize));
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1000) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes) / 1000;
  int unit = 0;
  while (value >= 1000 && unit + 1 < 6) {
    value /= 1000;
    ++unit;
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

absl::Status CheckFits(const DiskEstimate& estimate, uint64_t free_bytes,
                       absl::string_view data_dir) {
  if (estimate.total_bytes <= free_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "the scenario's ", estimate.initial_rows, " initial rows need about ",
      FormatBytes(estimate.total_bytes), " in ", data_dir, " (table and view, ",
      estimate.table_row_bytes, " + ", estimate.view_row_bytes,
      " bytes a row), but only ", FormatBytes(free_bytes),
      " are free; choose another --data_dir or fewer initial_rows, or pass "
      "--force to run anyway"));
}

}  // namespace backfill
