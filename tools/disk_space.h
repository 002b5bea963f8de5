// Whether a scenario's data fits its data directory, checked before the job
// writes anything: the command refuses a run whose initial load would not
// fit (unless --force), instead of filling the disk for minutes first.
//
//   BACKFILL_ASSIGN_OR_RETURN(uint64_t free, FreeBytes(data_dir));
//   const DiskEstimate estimate = EstimateDiskBytes(spec);
//   BACKFILL_RETURN_IF_ERROR(CheckFits(estimate, free, data_dir));
//
// The estimate is deliberately simple: each row's encoded key (table id,
// vnode, memcomparable pk, epoch and RocksDB's own 8-byte tag) and value
// (each stored column at its type's width; VARCHAR and BYTEA at the
// workload's typical length), plus 20% for table-file overhead, times the
// initial rows; uncompressed, so it errs on the large side. The job holds
// the table and, once backfilled, the view (the load's peak, the table plus
// its write-ahead log before the first flush, is about the same).
// Thread-safety: pure functions (FreeBytes asks the file system).
#ifndef TOOLS_DISK_SPACE_H_
#define TOOLS_DISK_SPACE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/scenario_spec.h"

namespace backfill {

struct DiskEstimate {
  uint64_t initial_rows = 0;
  // Stored bytes of one upstream row and one view row.
  uint64_t table_row_bytes = 0;
  uint64_t view_row_bytes = 0;
  // initial_rows x (table + view row bytes) x 1.2, saturating.
  uint64_t total_bytes = 0;
};

DiskEstimate EstimateDiskBytes(const ScenarioSpec& spec);

// Bytes available to an unprivileged user on the file system of `path`, or
// of its nearest existing ancestor when `path` does not exist yet.
// Errors: the statvfs error (e.g. PermissionDenied), naming the path.
absl::StatusOr<uint64_t> FreeBytes(absl::string_view path);

// OK if estimate.total_bytes <= free_bytes; else ResourceExhausted with the
// estimate and the free space, e.g. "the scenario's 1,000,000,000,000 initial
// rows need about 204.0 TB in /data (table and view, 102 + 102 bytes a row),
// but only 50.2 GB are free; choose another --data_dir or fewer
// initial_rows, or pass --force to run anyway".
absl::Status CheckFits(const DiskEstimate& estimate, uint64_t free_bytes,
                       absl::string_view data_dir);

// "512 B", "1.5 KB", "204.0 TB" (powers of 1000).
std::string FormatBytes(uint64_t bytes);

}  // namespace backfill

#endif  // TOOLS_DISK_SPACE_H_
