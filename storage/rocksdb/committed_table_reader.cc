#include "storage/rocksdb/committed_table_reader.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "rocksdb/db.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "storage/rocksdb/database.h"
#include "storage/rocksdb/status.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

// The layout of FORMAT.md, read here on its own (not through table_key.h or
// mvcc_format.h) so that this reader is an independent implementation:
//   table_id u32 BE | vnode u16 BE | pk | ~epoch u64 BE
// and values: 0x01 | row bytes, or the single byte 0x00 (a tombstone).
constexpr size_t kPrefixBytes = 6;
constexpr size_t kSuffixBytes = 8;
constexpr char kRowTag = '\x01';
constexpr char kTombstoneTag = '\x00';

uint64_t ReadBigEndian(absl::string_view bytes) {
  uint64_t value = 0;
  for (char byte : bytes) value = (value << 8) | static_cast<uint8_t>(byte);
  return value;
}

std::string BigEndian32(uint32_t value) {
  std::string out(4, '\0');
  for (int i = 3; i >= 0; --i, value >>= 8) {
    out[i] = static_cast<char>(value & 0xff);
  }
  return out;
}

struct StoredVersion {
  uint32_t table_id = 0;
  VirtualNode vnode = 0;
  absl::string_view pk;
  uint64_t epoch = 0;
};

// Parses one key of the `data` column family. False for a key too short to
// hold the prefix and the suffix.
bool ParseVersionKey(absl::string_view key, StoredVersion* out) {
  if (key.size() < kPrefixBytes + kSuffixBytes) return false;
  out->table_id = static_cast<uint32_t>(ReadBigEndian(key.substr(0, 4)));
  out->vnode = static_cast<VirtualNode>(ReadBigEndian(key.substr(4, 2)));
  out->pk = key.substr(kPrefixBytes, key.size() - kPrefixBytes - kSuffixBytes);
  out->epoch = ~ReadBigEndian(key.substr(key.size() - kSuffixBytes));
  return true;
}

class RawCommittedRowIterator final : public CommittedRowIterator {
 public:
  RawCommittedRowIterator(Database& database, CommittedRowDecoder decoder,
                          Epoch read_epoch)
      : decoder_(std::move(decoder)),
        read_epoch_(read_epoch.value()),
        lower_(BigEndian32(decoder_.catalog().table_id)) {
    lower_slice_ = rocksdb::Slice(lower_);
    // The iterator reads the sequence number current at its creation (an
    // implicit snapshot that pins the files it needs). No explicit
    // rocksdb::Snapshot: releasing one can start a compaction of the
    // bottommost files, which would write the MANIFEST after the last
    // checkpoint.
    rocksdb::ReadOptions options;
    options.fill_cache = false;
    // The table's whole key range, whatever the prefix extractor says.
    options.total_order_seek = true;
    options.readahead_size = 2 << 20;
    options.iterate_lower_bound = &lower_slice_;
    if (decoder_.catalog().table_id != UINT32_MAX) {
      upper_ = BigEndian32(decoder_.catalog().table_id + 1);
      upper_slice_ = rocksdb::Slice(upper_);
      options.iterate_upper_bound = &upper_slice_;
    }
    raw_.reset(database.db().NewIterator(options, database.data()));
  }

  bool Valid() const override { return valid_; }

  void SeekToFirst() override {
    valid_ = false;
    if (!status_.ok()) return;
    have_previous_ = false;
    raw_->Seek(lower_slice_);
    Settle();
  }

  void Next() override {
    raw_->Next();
    Settle();
  }

  // While valid, the iterator stands on the row's visible version, which
  // CheckOrder remembered as the previous entry: no copy of its own.
  VirtualNode vnode() const override { return previous_vnode_; }
  absl::string_view pk() const override { return previous_pk_; }
  const Row& row() const override { return row_; }
  absl::Status status() const override { return status_; }

 private:
  absl::Status Corrupt(const StoredVersion& version,
                       absl::string_view what) const {
    return absl::DataLossError(absl::StrCat(
        DescribeStoredRow(decoder_.catalog(), version.vnode, version.pk),
        " epoch ", version.epoch, ": ", what));
  }

  // Checks that `version` comes after the previous entry: a greater
  // (vnode, pk), or the same with an older epoch. Remembers it.
  absl::Status CheckOrder(const StoredVersion& version) {
    if (have_previous_) {
      const bool same_row = version.vnode == previous_vnode_ &&
                            version.pk == absl::string_view(previous_pk_);
      const bool after =
          same_row ? version.epoch < previous_epoch_
                   : (version.vnode != previous_vnode_
                          ? version.vnode > previous_vnode_
                          : version.pk > absl::string_view(previous_pk_));
      if (!after) {
        return Corrupt(
            version, absl::StrCat("out of order after vnode ", previous_vnode_,
                                  " pk ", absl::CEscape(previous_pk_),
                                  " epoch ", previous_epoch_));
      }
      decided_ &= same_row;
    } else {
      decided_ = false;
    }
    have_previous_ = true;
    previous_vnode_ = version.vnode;
    previous_pk_.assign(version.pk.data(), version.pk.size());
    previous_epoch_ = version.epoch;
    return absl::OkStatus();
  }

  // From the raw position on: the first row whose newest version at or
  // below the read epoch is not a tombstone.
  void Settle() {
    valid_ = false;
    for (; status_.ok() && raw_->Valid(); raw_->Next()) {
      const rocksdb::Slice key = raw_->key();
      StoredVersion version;
      if (!ParseVersionKey(absl::string_view(key.data(), key.size()),
                           &version)) {
        status_ = absl::DataLossError(absl::StrCat(
            "table ", decoder_.catalog().table_id, " (",
            decoder_.catalog().name, "): corrupt key of ", key.size(),
            " bytes: ",
            absl::CEscape(absl::string_view(key.data(), key.size()))));
        return;
      }
      if (version.table_id != decoder_.catalog().table_id) break;
      if (version.vnode >= decoder_.catalog().vnode_count) {
        status_ =
            Corrupt(version, absl::StrCat("vnode out of range (the table has ",
                                          decoder_.catalog().vnode_count, ")"));
        return;
      }
      if (version.epoch == 0) {
        status_ = Corrupt(version, "a version at epoch 0");
        return;
      }
      status_ = CheckOrder(version);
      if (!status_.ok()) return;
      // An older version of a row already decided, or a newer one than the
      // read sees.
      if (decided_ || version.epoch > read_epoch_) continue;
      decided_ = true;
      const rocksdb::Slice stored = raw_->value();
      const absl::string_view value(stored.data(), stored.size());
      if (value.size() == 1 && value[0] == kTombstoneTag) continue;
      if (value.empty() || value[0] != kRowTag) {
        status_ = Corrupt(version,
                          value.empty()
                              ? std::string("corrupt value: empty")
                              : absl::StrCat("corrupt value: unknown tag ",
                                             static_cast<uint8_t>(value[0])));
        return;
      }
      status_ =
          decoder_.Decode(version.vnode, version.pk, value.substr(1), &row_);
      valid_ = status_.ok();
      return;
    }
    if (status_.ok()) {
      status_ = FromRocksDb(
          raw_->status(),
          absl::StrCat("committed read of table ", decoder_.catalog().table_id,
                       " (", decoder_.catalog().name, ")"));
    }
  }

  const CommittedRowDecoder decoder_;
  const uint64_t read_epoch_;
  const std::string lower_;
  std::string upper_;
  rocksdb::Slice lower_slice_;
  rocksdb::Slice upper_slice_;
  std::unique_ptr<rocksdb::Iterator> raw_;

  // The previous entry (for the order check and the grouping of versions)
  // and whether its row is decided (its visible version was met).
  bool have_previous_ = false;
  VirtualNode previous_vnode_ = 0;
  std::string previous_pk_;
  uint64_t previous_epoch_ = 0;
  bool decided_ = false;

  bool valid_ = false;
  Row row_;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CommittedRowIterator>>
NewRawCommittedRowIterator(Database& database, const TableCatalog& catalog,
                           Epoch read_epoch) {
  BACKFILL_ASSIGN_OR_RETURN(CommittedRowDecoder decoder,
                            CommittedRowDecoder::Create(catalog));
  // The committed epoch as the directory records it. (A checkpoint between
  // this read and the iterator's creation could only add versions above it,
  // which the read epoch, at most this one, skips.)
  std::string stored;
  const rocksdb::Status read = database.db().Get(
      rocksdb::ReadOptions(), database.meta(), kCommittedEpochKey, &stored);
  uint64_t committed = 0;
  absl::Status status;
  if (read.ok()) {
    if (stored.size() == 8) {
      committed = ReadBigEndian(stored);
    } else {
      status = absl::DataLossError(
          absl::StrCat(database.path(), ": committed epoch of ", stored.size(),
                       " bytes (expected 8)"));
    }
  } else if (!read.IsNotFound()) {
    status = FromRocksDb(read, "read of the committed epoch");
  }
  if (status.ok() && read_epoch.value() > committed) {
    status = absl::FailedPreconditionError(absl::StrCat(
        "table ", catalog.table_id, " (", catalog.name, "): read epoch ",
        read_epoch.value(), " is above the committed epoch ", committed, " of ",
        database.path()));
  }
  if (!status.ok()) return status;
  return std::unique_ptr<CommittedRowIterator>(
      new RawCommittedRowIterator(database, std::move(decoder), read_epoch));
}

}  // namespace rocksdb_internal
}  // namespace backfill
