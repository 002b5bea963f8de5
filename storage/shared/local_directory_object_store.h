// LocalDirectoryObjectStore: an ObjectStore whose objects are files under a
// root directory, the key being the relative path ("sst/000042.sst" is
// ROOT/sst/000042.sst). The fast test tier and the single-machine default.
//
//   BACKFILL_ASSIGN_OR_RETURN(auto store, LocalDirectoryObjectStore::Open(
//       {.root = "/var/lib/backfill/objects"}));
//
// Puts are atomic and durable: the bytes go to a new file in ROOT/#staging/,
// which is fsynced and then renamed (Put) or hard-linked (PutIfAbsent: link()
// fails if the key exists, so exactly one of concurrent creators wins) to
// its key, and the key's directory is fsynced. A crash leaves at most an
// unreferenced file in #staging ('#' cannot occur in keys, so it is never
// listed); such leftovers are harmless and may be deleted while no process
// has the store open (Open does not: another process may be mid-put). Delete
// removes the key's directories that become empty.
//
// One limit the S3 store does not have: a key cannot also be a directory of
// other keys ("a" and "a/b" cannot both exist); putting the second is
// FailedPrecondition.
//
// Thread-safety: thread-safe; several processes may share one root.
#ifndef STORAGE_SHARED_LOCAL_DIRECTORY_OBJECT_STORE_H_
#define STORAGE_SHARED_LOCAL_DIRECTORY_OBJECT_STORE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/shared/object_store.h"

namespace backfill {

struct LocalDirectoryObjectStoreOptions {
  // The directory holding the objects. Required (InvalidArgument if empty).
  std::string root = "";
  // Create `root` (and its parents) if it does not exist. Default true;
  // false makes a missing root NotFound.
  bool create_if_missing = true;
  // fsync each new file and the directories a put or delete changes, so an
  // acknowledged put survives a machine crash. Default true; false only
  // for throwaway data (atomicity against concurrent readers is kept).
  bool sync = true;
};

class LocalDirectoryObjectStore final : public ObjectStore {
 public:
  // Opens (creating if asked) the root and its #staging directory. Errors:
  // InvalidArgument (empty root), NotFound (missing root, create_if_missing
  // false), FailedPrecondition (root is not a directory), errno-mapped I/O
  // errors.
  static absl::StatusOr<std::unique_ptr<LocalDirectoryObjectStore>> Open(
      const LocalDirectoryObjectStoreOptions& options);

  absl::Status Put(absl::string_view key, absl::string_view data) override;
  absl::Status PutIfAbsent(absl::string_view key,
                           absl::string_view data) override;
  absl::StatusOr<std::string> Get(absl::string_view key) override;
  absl::StatusOr<std::string> GetRange(absl::string_view key, uint64_t offset,
                                       uint64_t length) override;
  absl::StatusOr<ObjectInfo> Head(absl::string_view key) override;
  absl::StatusOr<std::vector<ObjectInfo>> List(
      absl::string_view prefix) override;
  absl::Status Delete(absl::string_view key) override;
  std::string DebugString() const override;

 private:
  explicit LocalDirectoryObjectStore(
      const LocalDirectoryObjectStoreOptions& options);

  enum class PutMode { kReplace, kIfAbsent };
  absl::Status PutImpl(absl::string_view key, absl::string_view data,
                       PutMode mode);
  // Writes `data` to a new file in #staging, fsynced; returns its path.
  absl::StatusOr<std::string> WriteStagingFile(absl::string_view key,
                                               absl::string_view data);
  // Creates the directories of `key` below the root.
  absl::Status MakeParentDirectories(absl::string_view key);
  // Reads `length` bytes at `offset` (cut at the end) of the file of `key`.
  absl::StatusOr<std::string> ReadRange(absl::string_view key, uint64_t offset,
                                        uint64_t length, bool whole);
  absl::Status ListDirectory(const std::string& relative_dir,
                             absl::string_view prefix,
                             std::vector<ObjectInfo>& out);
  absl::Status SyncDirectory(const std::string& path, absl::string_view key);
  absl::Status IoError(int error_number, absl::string_view operation,
                       absl::string_view key) const;
  std::string PathOf(absl::string_view key) const;

  const LocalDirectoryObjectStoreOptions options_;
  const std::string staging_dir_;
  std::atomic<uint64_t> next_staging_id_{0};
};

}  // namespace backfill

#endif  // STORAGE_SHARED_LOCAL_DIRECTORY_OBJECT_STORE_H_
