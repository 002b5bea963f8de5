// Database: one open RocksDB database of the state store, with everything
// that must outlive it (file system, env) and its two column families
// (storage/FORMAT.md), owned together: destroying it destroys the column
// family handles, then closes the database, then releases the env.
//
//   auto gc = std::make_shared<GcEpochs>(Epoch::Zero());
//   BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<Database> database,
//                             Database::Open(options, gc));
//   BACKFILL_ASSIGN_OR_RETURN(Epoch committed,
//                             database->LoadCommittedEpoch());
//   database->db().Get(read_options, database->data(), key, &value);
#ifndef STORAGE_ROCKSDB_DATABASE_H_
#define STORAGE_ROCKSDB_DATABASE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "rocksdb/statistics.h"
#include "storage/epoch.h"
#include "storage/rocksdb/mvcc_compaction_filter.h"
#include "storage/rocksdb/options.h"

namespace backfill {
namespace rocksdb_internal {

// Metadata keys and values of the `default` column family (never change:
// persisted).
inline constexpr char kFormatVersionKey[] = "format_version";
inline constexpr char kFormatVersion[] = "backfill.state_store.v1";
inline constexpr char kCommittedEpochKey[] = "committed_epoch";
inline constexpr char kDataColumnFamily[] = "data";

// The value of kCommittedEpochKey: u64 big-endian.
std::string EncodeCommittedEpoch(Epoch epoch);

class Database {
 public:
  // Opens (or creates) the database at options.path with the state store's
  // RocksDB options: the MVCC comparator, prefix bloom filters, GC filter
  // (driven by `gc`), tombstone counter, atomic flush, paranoid checks and
  // strict write-ahead-log recovery; with options.read_only through
  // OpenForReadOnly, creating and writing nothing (RocksDB's LOG included).
  // REQUIRES: ValidateOptions(options) is
  // OK. Errors: NotFound if absent and !create_if_missing; DataLoss if
  // CURRENT is missing beside database files, or a file is corrupt (naming
  // the write-ahead log when RocksDB does not), or verify_checksums_on_open
  // finds a bad block; other RocksDB errors via FromRocksDb, all starting
  // "open <path>".
  static absl::StatusOr<std::unique_ptr<Database>> Open(
      const RocksDbStateStoreOptions& options, std::shared_ptr<GcEpochs> gc);

  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Reads the metadata (writing the format version into a new database,
  // unless opened read-only) and
  // returns the committed epoch (Epoch(0) if never checkpointed). Errors:
  // FailedPrecondition for another format version; DataLoss for a committed
  // epoch that is not 8 bytes or that has no format version beside it.
  absl::StatusOr<Epoch> LoadCommittedEpoch();

  // Renames RocksDB's DataLoss errors that name no file to say which
  // write-ahead logs the directory holds (RocksDB reports a corrupt log
  // record without its file); other statuses pass unchanged.
  absl::Status NameCorruptFile(absl::Status status) const;

  // The `data` family opens with automatic compactions off: until the
  // compaction filter knows the committed epoch, a compaction keeps every
  // version, so it would rewrite files for nothing, and a file marked for
  // compaction (tombstone_counter.h) that it moved to the last level is
  // never picked again. Call this once the epoch is set. A no-op when
  // read-only; RocksDB's error otherwise.
  absl::Status EnableAutoCompactions();

  // RocksDB's own statistics and properties of this database
  // (RocksDbStateStore::Stats). Thread-safe; reads no data.
  RocksDbStats Stats() const;

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }
  rocksdb::DB& db() { return *db_; }
  rocksdb::ColumnFamilyHandle* meta() const { return meta_.get(); }
  rocksdb::ColumnFamilyHandle* data() const { return data_.get(); }

 private:
  Database(std::string path, bool read_only)
      : path_(std::move(path)), read_only_(read_only) {}

  const std::string path_;
  const bool read_only_;
  // Destroyed in reverse order: handles, then the database, then what it
  // uses.
  std::shared_ptr<rocksdb::FileSystem> file_system_;
  std::unique_ptr<rocksdb::Env> env_;
  std::shared_ptr<rocksdb::Statistics> statistics_;
  std::unique_ptr<rocksdb::DB> db_;
  std::unique_ptr<rocksdb::ColumnFamilyHandle> meta_;
  std::unique_ptr<rocksdb::ColumnFamilyHandle> data_;
};

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_DATABASE_H_
