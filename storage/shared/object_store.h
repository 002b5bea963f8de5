// ObjectStore: the immutable-object storage an LSM keeps its files in (SSTs,
// version checkpoints), with two implementations: a local directory
// (local_directory_object_store.h) and S3 (s3_object_store.h).
//
//   BACKFILL_ASSIGN_OR_RETURN(auto store, LocalDirectoryObjectStore::Open(
//       {.root = "/var/lib/backfill/objects"}));
//   BACKFILL_RETURN_IF_ERROR(store->PutIfAbsent("sst/000042.sst", bytes));
//   BACKFILL_ASSIGN_OR_RETURN(std::string block,
//   store->GetRange("sst/000042.sst", 4096, 512));
//
// Objects are written whole and never modified in place: Put replaces an
// object atomically (a reader sees the old bytes or the new ones, never a
// mix), PutIfAbsent creates one only if the key is free.
//
// Keys (ValidateObjectKey): 1..900 bytes of segments separated by '/';
// a segment is 1+ characters of [A-Za-z0-9._~-], not "." or "..". So no
// absolute paths, no empty segments, no leading or trailing '/', and nothing
// that needs URL encoding. Every operation checks its key first and returns
// InvalidArgument for a bad one.
//
// Errors name the object (the store's DebugString() and the key):
//   NotFound            the object does not exist (Get, GetRange, Head);
//   FailedPrecondition  PutIfAbsent on an existing key;
//   OutOfRange          GetRange with offset > size;
//   InvalidArgument     a bad key;
//   DataLoss            bytes from the store that cannot be what it promised
//                       (a malformed listing, a short object);
//   Unavailable         transient failures that outlived the retries;
//   others              permanent failures (permission, ...), surfaced at once.
//
// Thread-safety: every method may be called concurrently from any thread.
#ifndef STORAGE_SHARED_OBJECT_STORE_H_
#define STORAGE_SHARED_OBJECT_STORE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace backfill {

// The longest key, in bytes: S3's limit of 1024 for a whole object name,
// less room for S3ObjectStoreOptions.key_prefix (kMaxObjectKeyPrefixLength).
inline constexpr size_t kMaxObjectKeyLength = 900;
inline constexpr size_t kMaxObjectKeyPrefixLength = 1024 - kMaxObjectKeyLength;

// OK if `key` is a valid object key (see the file comment), else
// InvalidArgument naming the key and the rule it breaks.
absl::Status ValidateObjectKey(absl::string_view key);

// OK if `prefix` can start a key: at most kMaxObjectKeyLength bytes of key
// characters and '/', not starting with '/' ("" is fine). Else InvalidArgument.
absl::Status ValidateObjectKeyPrefix(absl::string_view prefix);

// What Head and List return about an object.
struct ObjectInfo {
  std::string key;
  uint64_t size = 0;  // bytes

  friend bool operator==(const ObjectInfo&, const ObjectInfo&) = default;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Creates or replaces the object `key` with `data`, atomically and
  // durably: once this returns OK the object survives a crash of this
  // process and a reader sees either the previous bytes or `data`.
  virtual absl::Status Put(absl::string_view key, absl::string_view data) = 0;

  // Like Put, but only if no object `key` exists; FailedPrecondition (naming
  // the key) if one does, and the existing object is left unchanged. Of
  // concurrent PutIfAbsent calls on one key exactly one succeeds.
  virtual absl::Status PutIfAbsent(absl::string_view key,
                                   absl::string_view data) = 0;

  // The whole object. NotFound if it does not exist.
  virtual absl::StatusOr<std::string> Get(absl::string_view key) = 0;

  // Bytes [offset, offset + length) of the object, cut short at its end:
  // offset == size gives "", offset > size is OutOfRange. NotFound if the
  // object does not exist.
  virtual absl::StatusOr<std::string> GetRange(absl::string_view key,
                                               uint64_t offset,
                                               uint64_t length) = 0;

  // The object's size. NotFound if it does not exist.
  virtual absl::StatusOr<ObjectInfo> Head(absl::string_view key) = 0;

  // Every object whose key starts with `prefix` ("" lists all), sorted by
  // key (bytewise). `prefix` need not end at a '/' and need not be a valid
  // key, but must not contain characters keys cannot. Paginates internally.
  // Objects put or deleted during the call may or may not appear.
  virtual absl::StatusOr<std::vector<ObjectInfo>> List(
      absl::string_view prefix) = 0;

  // Deletes the object; OK if it does not exist (idempotent).
  virtual absl::Status Delete(absl::string_view key) = 0;

  // Where the objects live, for messages: "file:///path", "s3://bucket/prefix".
  virtual std::string DebugString() const = 0;
};

}  // namespace backfill

#endif  // STORAGE_SHARED_OBJECT_STORE_H_
