// ACKNOWLEDGED_EPOCH, a small file beside RocksDB's (storage/FORMAT.md): the
// newest checkpoint the store acknowledged and how long RocksDB's MANIFEST
// was then. RocksDB drops an incomplete last record of its write-ahead log
// or MANIFEST as a write cut short by a crash; a damaged record (say, a
// corrupt length) looks the same, and RocksDB would open without what
// followed. With this file Open refuses that instead: the MANIFEST must hold
// complete records up to the recorded size (CheckManifestPrefix, before
// RocksDB opens), and the restored committed epoch must not be older than
// the recorded one (the caller compares, after).
//
// RocksDB 7.8 has no option with the same guarantee:
// track_and_verify_wals_in_manifest records only closed WALs (not the live
// one a checkpoint syncs) and only their sizes, kAbsoluteConsistency also
// refuses the torn tail a process crash legitimately leaves, and the
// MANIFEST reader always takes a damaged last record for a torn one.
//
//   std::optional<AcknowledgedEpoch> acknowledged;
//   BACKFILL_ASSIGN_OR_RETURN(acknowledged, ReadAcknowledgedEpoch(dir));
//   if (acknowledged) BACKFILL_RETURN_IF_ERROR(
//       CheckManifestPrefix(dir, *acknowledged));
//   ... open RocksDB, compare the committed epoch ...
//   writer->Write(AcknowledgedNow(db, committed_epoch));
#ifndef STORAGE_ROCKSDB_ACKNOWLEDGED_EPOCH_H_
#define STORAGE_ROCKSDB_ACKNOWLEDGED_EPOCH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "rocksdb/db.h"
#include "storage/epoch.h"

namespace backfill {
namespace rocksdb_internal {

inline constexpr char kAcknowledgedEpochFile[] = "ACKNOWLEDGED_EPOCH";
// The size of the current (v2) record.
inline constexpr size_t kAcknowledgedEpochSize = 36;

struct AcknowledgedEpoch {
  Epoch epoch;
  // The MANIFEST's file number; 0 = unknown (nothing to check).
  uint64_t manifest_number = 0;
  // How many bytes of that MANIFEST were complete records.
  uint64_t manifest_size = 0;

  friend bool operator==(const AcknowledgedEpoch&,
                         const AcknowledgedEpoch&) = default;
};

// The v2 record (never change: persisted):
//   "bfackv2\n" | epoch u64 BE | MANIFEST number u64 BE |
//   MANIFEST size u64 BE | CRC-32 (zlib) of the 32 bytes before, u32 BE
std::string EncodeAcknowledgedEpoch(const AcknowledgedEpoch& acknowledged);

// Decodes a record: v2, or v1 as written by earlier versions ("bfackv1\n",
// the same three fields, FNV-1a-64 of the 32 bytes before as u64 BE; 40
// bytes), so that an upgraded store keeps its check. Empty bytes (the file
// was created, then the process died before the first write) are nullopt.
// Errors: DataLoss for any other size, magic or checksum, with the bytes.
absl::StatusOr<std::optional<AcknowledgedEpoch>> DecodeAcknowledgedEpoch(
    absl::string_view bytes);

// Reads `dir`/ACKNOWLEDGED_EPOCH. nullopt if the file is absent (an older
// store, sync_on_checkpoint off) or empty. Errors: DataLoss "open <dir>:
// ACKNOWLEDGED_EPOCH is corrupt (...)"; Internal if it cannot be read.
absl::StatusOr<std::optional<AcknowledgedEpoch>> ReadAcknowledgedEpoch(
    const std::string& dir);

// Before RocksDB reads the MANIFEST (and replaces it): if CURRENT names the
// one `acknowledged` saw, its first manifest_size bytes must be complete log
// records of RocksDB's log format (32 KiB blocks; 7-byte headers: crc u32,
// length u16 LE, type 1-4; lengths inside their block and the file). RocksDB
// checks the crcs itself; this catches what it would take for a torn tail.
// Errors: DataLoss naming the MANIFEST, the offset and the checkpoint. A
// CURRENT or MANIFEST that cannot be read is left for RocksDB to report.
absl::Status CheckManifestPrefix(const std::string& dir,
                                 const AcknowledgedEpoch& acknowledged);

// `epoch` and the MANIFEST `db` writes now, with its valid size (number 0
// if RocksDB does not say).
AcknowledgedEpoch AcknowledgedNow(rocksdb::DB& db, Epoch epoch);

// Rewrites the file in place (one pwrite at offset 0: a process crash leaves
// the old or the new record). Not synced: after a machine crash the file may
// be older than the store, never newer, as long as each Write follows the
// synced write it describes. A file of another size (an older version's
// record) is replaced by a rename first. Not thread-safe (one writer: the
// checkpointing thread).
class AcknowledgedEpochWriter {
 public:
  // Errors: Internal "open <dir>: create <path>: <errno text>".
  static absl::StatusOr<std::unique_ptr<AcknowledgedEpochWriter>> Open(
      const std::string& dir);
  ~AcknowledgedEpochWriter();

  AcknowledgedEpochWriter(const AcknowledgedEpochWriter&) = delete;
  AcknowledgedEpochWriter& operator=(const AcknowledgedEpochWriter&) = delete;

  // Best effort: a failure leaves an older record, which checks less.
  void Write(const AcknowledgedEpoch& acknowledged);

 private:
  AcknowledgedEpochWriter(std::string dir, int fd, bool replace)
      : dir_(std::move(dir)), fd_(fd), replace_(replace) {}

  const std::string dir_;
  int fd_;
  // The file holds a record of another size: the next Write renames a new
  // file over it (an in-place write would leave the old tail).
  bool replace_;
};

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_ACKNOWLEDGED_EPOCH_H_
