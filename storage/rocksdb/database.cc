#include "storage/rocksdb/database.h"

#include <algorithm>
#include <cstdarg>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/internal/endian.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rocksdb/cache.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "storage/rocksdb/acknowledged_epoch.h"
#include "storage/rocksdb/fault_injecting_file_system.h"
#include "storage/rocksdb/mvcc_format.h"
#include "storage/rocksdb/status.h"
#include "storage/rocksdb/tombstone_counter.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

rocksdb::DBOptions MakeDbOptions(const RocksDbStateStoreOptions& options) {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = options.create_if_missing;
  // Also when CURRENT exists: a crash while the database was being created
  // can leave it without `data`. (A MANIFEST that lost `data` later fails
  // CheckManifestPrefix.)
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = options.max_background_jobs;
  // One filter per compaction sees every version of a key in order.
  db_options.max_subcompactions = 1;
  db_options.keep_log_file_num = 4;
  // Corruption is an error, never silently skipped: paranoid checks (the
  // default, stated) stop at a corrupt file, and a corrupt write-ahead-log
  // record is DataLoss. Only an incomplete record at the end of the log (a
  // write cut short by a crash, which no acknowledged checkpoint can be:
  // Commit returns after the whole record is written) is dropped.
  // RocksDB's default, kPointInTimeRecovery, instead stops replaying at the
  // first corrupt record and opens without the rest: acknowledged
  // checkpoints silently gone.
  db_options.paranoid_checks = true;
  db_options.wal_recovery_mode =
      rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  // Both column families flush in one atomic MANIFEST group, so a lost
  // MANIFEST tail loses the data and the committed epoch together (and the
  // acknowledged-epoch check sees it), never the data alone.
  db_options.atomic_flush = true;
  return db_options;
}

rocksdb::ColumnFamilyOptions MakeDataOptions(
    const RocksDbStateStoreOptions& options, std::shared_ptr<GcEpochs> gc) {
  rocksdb::ColumnFamilyOptions data;
  data.disable_auto_compactions = true;  // Until EnableAutoCompactions.
  data.comparator = MvccComparator();
  data.compaction_filter_factory =
      std::make_shared<MvccCompactionFilterFactory>(std::move(gc));
  data.write_buffer_size = options.write_buffer_bytes;
  data.prefix_extractor = NewUserKeyPrefixExtractor();
  data.table_properties_collector_factories.push_back(
      std::make_shared<TombstoneCounterFactory>(
          options.tombstone_compaction_fraction));
  rocksdb::BlockBasedTableOptions table;
  table.block_size = options.block_bytes;
  // Index keys delta-encoded in runs of 16 (RocksDB's default is 1: every
  // key whole). Our keys share their table, vnode and most of their pk with
  // their neighbours, so the index is half the size (measured: 4.6 against
  // 9.1 MB for a 680 MB table); the index is what a long scan leaves in the
  // block cache, and a lookup scans at most 15 entries more.
  table.index_block_restart_interval = 16;
  if (options.block_cache_bytes == 0) {
    table.no_block_cache = true;
  } else {
    // Shards of at least 16 MiB (four for the default 64 MiB), not
    // RocksDB's automatic ones of 512 KiB to 1 MiB: a file's index or filter
    // block (hundreds of KiB for a 64 MiB file) must fit in a shard's
    // high-priority half, or every lookup reads it again (measured: the
    // bench's upstream capacity fell 14x).
    int shard_bits = 0;
    while (shard_bits < 6 &&
           (options.block_cache_bytes >> (shard_bits + 1)) >= (16u << 20)) {
      ++shard_bits;
    }
    table.block_cache =
        rocksdb::NewLRUCache(options.block_cache_bytes, shard_bits);
    // Index and filter blocks live in the block cache too (at high
    // priority), so the store's memory is bounded by the cache whatever the
    // table's size. Outside it, every open table file keeps its whole index
    // and bloom filter in memory: a 4x larger table costs 4x that.
    table.cache_index_and_filter_blocks = true;
    table.cache_index_and_filter_blocks_with_high_priority = true;
    // Level 0's are read by every lookup: they stay pinned while their file
    // is open.
    table.pin_l0_filter_and_index_blocks_in_cache = true;
  }
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.whole_key_filtering = false;  // Whole keys carry the epoch.
  data.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return data;
}

// Discards RocksDB's informational log: a read-only open must not create or
// rotate the LOG file in the directory it inspects.
class DiscardingLogger final : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
  void Logv(const rocksdb::InfoLogLevel /*level*/, const char* /*format*/,
            va_list /*ap*/) override {}
};

// The database files in `path` (MANIFEST-*, *.sst, *.log,
// ACKNOWLEDGED_EPOCH), sorted; empty if there are none or the directory
// cannot be listed.
std::vector<std::string> DatabaseFiles(const std::string& path) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
    const std::string name = entry.path().filename().string();
    const bool wal = name.size() > 4 && name.ends_with(".log");
    if (name.starts_with("MANIFEST-") || name.ends_with(".sst") || wal ||
        name == kAcknowledgedEpochFile) {
      files.push_back(name);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Before RocksDB creates a database where CURRENT is missing: if data files
// are there (table files, write-ahead logs, ACKNOWLEDGED_EPOCH), CURRENT was
// lost and creating would silently start over without their data (RocksDB
// would write a new CURRENT and MANIFEST). A MANIFEST alone is what a crash
// while creating the database leaves (it is written before CURRENT, the
// first log after): that is created again.
absl::Status CheckNotOrphaned(const std::string& path) {
  std::error_code error;
  if (std::filesystem::exists(std::filesystem::path(path) / "CURRENT", error)) {
    return absl::OkStatus();
  }
  const std::vector<std::string> files = DatabaseFiles(path);
  if (std::all_of(files.begin(), files.end(), [](const std::string& file) {
        return file.starts_with("MANIFEST-");
      })) {
    return absl::OkStatus();
  }
  return absl::DataLossError(
      absl::StrCat("open ", path,
                   ": the CURRENT file is missing but database files are "
                   "there (",
                   absl::StrJoin(files, ", "),
                   "); refusing to create a new database over them"));
}

// The MANIFEST that `path`'s CURRENT names ("MANIFEST-000099"), or empty if
// CURRENT cannot be read.
std::string ManifestNamedByCurrent(const std::string& path) {
  std::ifstream in(std::filesystem::path(path) / "CURRENT", std::ios::binary);
  std::string name;
  std::getline(in, name);
  return name;
}

// The table file RocksDB's message says it could not open ("000015.sst"),
// or empty. RocksDB looks for a missing "000015.sst" under its legacy name
// too and reports that one ("000015.ldb"), a name the directory never held.
std::string TableFileIn(absl::string_view message) {
  for (const absl::string_view suffix : {".sst", ".ldb"}) {
    const size_t at = message.find(suffix);
    if (at == absl::string_view::npos) continue;
    size_t begin = at;
    while (begin > 0 && absl::ascii_isdigit(message[begin - 1])) --begin;
    if (begin == at) continue;
    return absl::StrCat(message.substr(begin, at - begin), ".sst");
  }
  return "";
}

// A failed open whose cause is a file not found, where CURRENT exists and
// nothing needed creating: a file the CURRENT -> MANIFEST -> table files
// chain needs is gone, so the directory lost data, DataLoss naming the
// file. RocksDB reports a missing MANIFEST as an I/O error (it would read as
// a failing disk, Internal) and a missing table file as corruption under
// its legacy name (".ldb"), naming neither as the file that is gone.
// nullopt when the status is not about a missing file.
std::optional<absl::Status> MissingFileIsDataLoss(
    const std::string& path, const rocksdb::Status& status) {
  const std::string message = status.ToString();
  if (!status.IsPathNotFound() &&
      !(status.IsCorruption() &&
        message.find("No such file or directory") != std::string::npos)) {
    return std::nullopt;
  }
  std::string file;
  const std::string manifest = ManifestNamedByCurrent(path);
  std::error_code error;
  if (!manifest.empty() &&
      !std::filesystem::exists(std::filesystem::path(path) / manifest, error)) {
    file = absl::StrCat(manifest, ", which CURRENT names,");
  } else if (const std::string table = TableFileIn(message); !table.empty()) {
    file = absl::StrCat("table file ", table, ", which the MANIFEST lists,");
  } else {
    file = "a file the database needs";
  }
  return absl::DataLossError(absl::StrCat("open ", path, ": ", file,
                                          " is missing: rocksdb ", message));
}

}  // namespace

std::string EncodeCommittedEpoch(Epoch epoch) {
  char bytes[8];
  absl::big_endian::Store64(bytes, epoch.value());
  return std::string(bytes, sizeof(bytes));
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(
    const RocksDbStateStoreOptions& options, std::shared_ptr<GcEpochs> gc) {
  std::unique_ptr<Database> database(
      new Database(options.path, options.read_only));
  rocksdb::DBOptions db_options = MakeDbOptions(options);
  if (options.read_only) {
    db_options.create_if_missing = false;
    db_options.create_missing_column_families = false;
    db_options.info_log = std::make_shared<DiscardingLogger>();
  }
  // Tickers only (no histograms or timers): cheap enough to keep on.
  database->statistics_ = rocksdb::CreateDBStatistics();
  database->statistics_->set_stats_level(
      rocksdb::StatsLevel::kExceptHistogramOrTimers);
  db_options.statistics = database->statistics_;
  if (options.fault_injector != nullptr) {
    database->file_system_ = NewFaultInjectingFileSystem(
        rocksdb::FileSystem::Default(), options.fault_injector);
    database->env_ = rocksdb::NewCompositeEnv(database->file_system_);
    db_options.env = database->env_.get();
  }
  // Read-only too: a lost CURRENT is DataLoss, not "no database".
  if (options.create_if_missing || options.read_only) {
    BACKFILL_RETURN_IF_ERROR(CheckNotOrphaned(options.path));
  }
  std::error_code error;
  if (options.read_only &&
      !std::filesystem::exists(std::filesystem::path(options.path) / "CURRENT",
                               error)) {
    return absl::NotFoundError(absl::StrCat(
        "open ", options.path, ": no state store there (opened read-only)"));
  }
  const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {kDataColumnFamily, MakeDataOptions(options, std::move(gc))}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  const rocksdb::Status status =
      options.read_only ? rocksdb::DB::OpenForReadOnly(db_options, options.path,
                                                       families, &handles, &db)
                        : rocksdb::DB::Open(db_options, options.path, families,
                                            &handles, &db);
  if (!status.ok()) {
    if (!options.create_if_missing && status.IsInvalidArgument() &&
        status.ToString().find("does not exist") != std::string::npos) {
      return absl::NotFoundError(
          absl::StrCat("open ", options.path,
                       ": no state store there (create_if_missing "
                       "is false)"));
    }
    // CURRENT exists here (a read-only open checked; a writable one
    // without it would have created the database or failed above), so a
    // file not found is one of the database's.
    if (std::optional<absl::Status> missing =
            MissingFileIsDataLoss(options.path, status)) {
      return *std::move(missing);
    }
    return database->NameCorruptFile(
        FromRocksDb(status, absl::StrCat("open ", options.path)));
  }
  database->db_.reset(db);
  database->meta_.reset(handles[0]);
  database->data_.reset(handles[1]);
  if (options.verify_checksums_on_open) {
    // Reads every block of every table file: a corrupt block is DataLoss now,
    // before anything is written, not when some read reaches it.
    BACKFILL_RETURN_IF_ERROR(
        FromRocksDb(database->db_->VerifyChecksum(),
                    absl::StrCat("open ", options.path, ": verify checksums")));
  }
  return database;
}

Database::~Database() {
  // RocksDB requires the handles to go before the database closes.
  data_.reset();
  meta_.reset();
  if (db_ != nullptr) db_->Close().PermitUncheckedError();
}

absl::StatusOr<Epoch> Database::LoadCommittedEpoch() {
  std::string version;
  const rocksdb::Status status =
      db_->Get(rocksdb::ReadOptions(), meta(), kFormatVersionKey, &version);
  std::string epoch_bytes;
  const rocksdb::Status epoch_status = db_->Get(
      rocksdb::ReadOptions(), meta(), kCommittedEpochKey, &epoch_bytes);
  if (!epoch_status.ok() && !epoch_status.IsNotFound()) {
    return FromRocksDb(epoch_status,
                       absl::StrCat("open ", path_, ": read committed epoch"));
  }
  if (status.IsNotFound()) {
    if (epoch_status.ok()) {
      return absl::DataLossError(
          absl::StrCat("open ", path_,
                       ": committed epoch present but format version missing"));
    }
    // A database created by a process that died before writing its format
    // version: nothing checkpointed. Read-only leaves it as it is.
    if (read_only_) return Epoch::Zero();
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    BACKFILL_RETURN_IF_ERROR(FromRocksDb(
        db_->Put(write_options, meta(), kFormatVersionKey, kFormatVersion),
        absl::StrCat("open ", path_, ": write format version")));
    return Epoch::Zero();
  }
  BACKFILL_RETURN_IF_ERROR(FromRocksDb(
      status, absl::StrCat("open ", path_, ": read format version")));
  if (version != kFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("open ", path_, ": unsupported format version ",
                     absl::CHexEscape(version), "; expected ", kFormatVersion));
  }
  if (epoch_status.IsNotFound()) return Epoch::Zero();
  if (epoch_bytes.size() != 8) {
    return absl::DataLossError(absl::StrCat(
        "open ", path_, ": committed epoch has ", epoch_bytes.size(),
        " bytes, expected 8: ", absl::CHexEscape(epoch_bytes)));
  }
  return Epoch(absl::big_endian::Load64(epoch_bytes.data()));
}

absl::Status Database::NameCorruptFile(absl::Status status) const {
  if (status.code() != absl::StatusCode::kDataLoss) return status;
  const absl::string_view message = status.message();
  for (const char* named : {".sst", "MANIFEST", "CURRENT", ".log"}) {
    if (message.find(named) != absl::string_view::npos) return status;
  }
  std::vector<std::string> logs;
  for (const std::string& file : DatabaseFiles(path_)) {
    if (file.ends_with(".log")) logs.push_back(file);
  }
  return absl::DataLossError(absl::StrCat(
      status.message(),
      " (no file named: RocksDB reports corrupt "
      "write-ahead-log records so; the write-ahead log here is ",
      logs.empty() ? std::string("absent") : absl::StrJoin(logs, ", "), ")"));
}

absl::Status Database::EnableAutoCompactions() {
  if (read_only_) return absl::OkStatus();
  return FromRocksDb(
      db_->SetOptions(data_.get(), {{"disable_auto_compactions", "false"}}),
      absl::StrCat("open ", path_, ": enable compactions"));
}

RocksDbStats Database::Stats() const {
  const rocksdb::Statistics& tickers = *statistics_;
  RocksDbStats stats;
  stats.read_bytes = tickers.getTickerCount(rocksdb::BYTES_READ) +
                     tickers.getTickerCount(rocksdb::ITER_BYTES_READ);
  stats.written_bytes = tickers.getTickerCount(rocksdb::BYTES_WRITTEN);
  stats.compaction_read_bytes =
      tickers.getTickerCount(rocksdb::COMPACT_READ_BYTES);
  stats.compaction_written_bytes =
      tickers.getTickerCount(rocksdb::COMPACT_WRITE_BYTES);
  stats.flush_written_bytes =
      tickers.getTickerCount(rocksdb::FLUSH_WRITE_BYTES);
  stats.block_cache_hits = tickers.getTickerCount(rocksdb::BLOCK_CACHE_HIT);
  stats.block_cache_misses = tickers.getTickerCount(rocksdb::BLOCK_CACHE_MISS);
  // A property RocksDB cannot give stays 0.
  db_->GetAggregatedIntProperty(
      rocksdb::DB::Properties::kEstimatePendingCompactionBytes,
      &stats.pending_compaction_bytes);
  db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables,
                                &stats.memtable_bytes);
  db_->GetAggregatedIntProperty(
      rocksdb::DB::Properties::kEstimateTableReadersMem,
      &stats.table_readers_bytes);
  // One cache for the data column family (the meta family's tables are
  // tiny): its usage, not a sum over families sharing nothing.
  db_->GetIntProperty(data_.get(), rocksdb::DB::Properties::kBlockCacheUsage,
                      &stats.block_cache_bytes);
  db_->GetIntProperty(rocksdb::DB::Properties::kNumRunningFlushes,
                      &stats.running_flushes);
  db_->GetIntProperty(rocksdb::DB::Properties::kNumRunningCompactions,
                      &stats.running_compactions);
  db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kMemTableFlushPending,
                                &stats.pending_flushes);
  db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kCompactionPending,
                                &stats.pending_compactions);
  for (rocksdb::ColumnFamilyHandle* family : {meta_.get(), data_.get()}) {
    rocksdb::ColumnFamilyMetaData metadata;
    db_->GetColumnFamilyMetaData(family, &metadata);
    // Files and bytes from the same view: the current version's files.
    stats.sst_files += metadata.file_count;
    stats.sst_bytes += metadata.size;
  }
  return stats;
}

}  // namespace rocksdb_internal
}  // namespace backfill
