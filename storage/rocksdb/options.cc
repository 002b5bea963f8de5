#include "storage/rocksdb/options.h"

#include "absl/strings/str_cat.h"

namespace backfill {

absl::Status ValidateOptions(const RocksDbStateStoreOptions& options) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("RocksDbStateStoreOptions.path is empty");
  }
  if (options.write_buffer_bytes < (64 << 10)) {
    return absl::InvalidArgumentError(
        absl::StrCat("RocksDbStateStoreOptions.write_buffer_bytes must be >= "
                     "65536; got ",
                     options.write_buffer_bytes));
  }
  if (options.block_bytes < (1 << 10) || options.block_bytes > (1 << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("RocksDbStateStoreOptions.block_bytes must be in [1024, "
                     "1048576]; got ",
                     options.block_bytes));
  }
  if (!(options.gc_tombstone_fraction >= 0 &&
        options.gc_tombstone_fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("RocksDbStateStoreOptions.gc_tombstone_fraction must be "
                     "in [0, 1]; got ",
                     options.gc_tombstone_fraction));
  }
  if (!(options.tombstone_compaction_fraction >= 0 &&
        options.tombstone_compaction_fraction <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RocksDbStateStoreOptions.tombstone_compaction_fraction must be in "
        "[0, 1]; got ",
        options.tombstone_compaction_fraction));
  }
  if (options.gc_min_tombstones < 1) {
    return absl::InvalidArgumentError(
        "RocksDbStateStoreOptions.gc_min_tombstones must be >= 1; got 0");
  }
  if (options.max_background_jobs < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("RocksDbStateStoreOptions.max_background_jobs must be >= "
                     "1; got ",
                     options.max_background_jobs));
  }
  return absl::OkStatus();
}

}  // namespace backfill
