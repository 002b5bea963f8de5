#include "storage/shared/local_directory_object_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

constexpr char kStagingDirectory[] = "#staging";
// How often a put re-creates its directories when a concurrent Delete
// removed them (an empty directory) between mkdir and rename/link.
constexpr int kMaxDirectoryRaces = 100;

// Creates `path` as a directory; 0 if it already is one, ENOTDIR if it is
// something else, else the errno.
int MakeDirectory(const std::string& path) {
  for (int attempt = 0; attempt <= kMaxDirectoryRaces; ++attempt) {
    if (mkdir(path.c_str(), 0755) == 0) return 0;
    if (errno != EEXIST) return errno;
    struct stat st;
    if (stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    if (errno != ENOENT) return errno;
    // Removed between mkdir and stat by a concurrent Delete: again.
  }
  return ENOENT;
}

// mkdir -p for the root itself.
int MakeDirectories(const std::string& path) {
  std::string partial;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (partial.empty() && part.empty()) {
      partial = "/";
      continue;
    }
    if (part.empty()) continue;
    if (!partial.empty() && partial.back() != '/') partial += '/';
    absl::StrAppend(&partial, part);
    if (int error = MakeDirectory(partial); error != 0) return error;
  }
  return 0;
}

bool IsKeySegment(absl::string_view name) {
  return name != "." && name != ".." && ValidateObjectKey(name).ok();
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalDirectoryObjectStore>>
LocalDirectoryObjectStore::Open(
    const LocalDirectoryObjectStoreOptions& options) {
  if (options.root.empty()) {
    return absl::InvalidArgumentError(
        "LocalDirectoryObjectStoreOptions.root is empty");
  }
  struct stat st;
  if (stat(options.root.c_str(), &st) != 0) {
    if (errno != ENOENT || !options.create_if_missing) {
      return absl::ErrnoToStatus(
          errno, absl::StrCat("object store root ", options.root));
    }
    if (int error = MakeDirectories(options.root); error != 0) {
      return absl::ErrnoToStatus(
          error, absl::StrCat("creating object store root ", options.root));
    }
  } else if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("object store root is not a directory: ", options.root));
  }
  std::unique_ptr<LocalDirectoryObjectStore> store(
      new LocalDirectoryObjectStore(options));
  if (int error = MakeDirectory(store->staging_dir_); error != 0) {
    return absl::ErrnoToStatus(error,
                               absl::StrCat("creating ", store->staging_dir_));
  }
  return store;
}

LocalDirectoryObjectStore::LocalDirectoryObjectStore(
    const LocalDirectoryObjectStoreOptions& options)
    : options_(options),
      staging_dir_(absl::StrCat(options.root, "/", kStagingDirectory)) {}

std::string LocalDirectoryObjectStore::DebugString() const {
  return absl::StrCat("file://", options_.root);
}

std::string LocalDirectoryObjectStore::PathOf(absl::string_view key) const {
  return absl::StrCat(options_.root, "/", key);
}

absl::Status LocalDirectoryObjectStore::IoError(int error_number,
                                                absl::string_view operation,
                                                absl::string_view key) const {
  return absl::Status(absl::ErrnoToStatusCode(error_number),
                      absl::StrCat(DebugString(), ": ", operation, " \"", key,
                                   "\": ", std::strerror(error_number)));
}

absl::Status LocalDirectoryObjectStore::SyncDirectory(const std::string& path,
                                                      absl::string_view key) {
  if (!options_.sync) return absl::OkStatus();
  int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError(errno, "open directory of", key);
  int result = fsync(fd);
  int error = errno;
  close(fd);
  if (result != 0) return IoError(error, "fsync directory of", key);
  return absl::OkStatus();
}

absl::StatusOr<std::string> LocalDirectoryObjectStore::WriteStagingFile(
    absl::string_view key, absl::string_view data) {
  // Unique across the processes sharing the root: pid, a counter, and
  // randomness (a pid can be reused by a later process).
  thread_local absl::BitGen random;
  std::string path = absl::StrCat(staging_dir_, "/", getpid(), "-",
                                  next_staging_id_.fetch_add(1), "-",
                                  absl::Uniform<uint64_t>(random));
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(errno, "create staging file for", key);
  absl::Cleanup close_fd = [fd] { close(fd); };
  absl::Cleanup remove_file = [&path] { unlink(path.c_str()); };
  size_t written = 0;
  while (written < data.size()) {
    ssize_t n = write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(errno, "write", key);
    }
    written += static_cast<size_t>(n);
  }
  if (options_.sync && fsync(fd) != 0) return IoError(errno, "fsync", key);
  std::move(remove_file).Cancel();
  return path;
}

absl::Status LocalDirectoryObjectStore::MakeParentDirectories(
    absl::string_view key) {
  size_t slash = key.find('/');
  int races = 0;
  while (slash != absl::string_view::npos) {
    std::string dir = PathOf(key.substr(0, slash));
    if (int error = MakeDirectory(dir); error != 0) {
      if (error == ENOENT && ++races <= kMaxDirectoryRaces) {
        // A concurrent Delete removed a directory above (it was empty):
        // start again from the top.
        slash = key.find('/');
        continue;
      }
      if (error == ENOTDIR) {
        return absl::FailedPreconditionError(absl::StrCat(
            DebugString(), ": cannot put \"", key, "\": \"",
            key.substr(0, slash), "\" is an object, not a directory"));
      }
      return IoError(error, "create directory for", key);
    }
    slash = key.find('/', slash + 1);
  }
  return absl::OkStatus();
}

absl::Status LocalDirectoryObjectStore::PutImpl(absl::string_view key,
                                                absl::string_view data,
                                                PutMode mode) {
  BACKFILL_RETURN_IF_ERROR(ValidateObjectKey(key));
  BACKFILL_ASSIGN_OR_RETURN(std::string staging, WriteStagingFile(key, data));
  absl::Cleanup remove_staging = [&staging] { unlink(staging.c_str()); };
  const std::string path = PathOf(key);
  for (int attempt = 0;; ++attempt) {
    BACKFILL_RETURN_IF_ERROR(MakeParentDirectories(key));
    int result = mode == PutMode::kReplace
                     ? rename(staging.c_str(), path.c_str())
                     : link(staging.c_str(), path.c_str());
    if (result == 0) break;
    int error = errno;
    if (error == ENOENT && attempt < kMaxDirectoryRaces) continue;
    if (error == EEXIST && mode == PutMode::kIfAbsent) {
      return absl::FailedPreconditionError(
          absl::StrCat(DebugString(), ": object \"", key, "\" already exists"));
    }
    if (error == EISDIR || error == EEXIST || error == ENOTEMPTY) {
      return absl::FailedPreconditionError(
          absl::StrCat(DebugString(), ": cannot put \"", key,
                       "\": it is a directory of other objects"));
    }
    return IoError(error, mode == PutMode::kReplace ? "rename" : "link", key);
  }
  if (mode == PutMode::kReplace) std::move(remove_staging).Cancel();
  std::string dir = path.substr(0, path.rfind('/'));
  return SyncDirectory(dir, key);
}

absl::Status LocalDirectoryObjectStore::Put(absl::string_view key,
                                            absl::string_view data) {
  return PutImpl(key, data, PutMode::kReplace);
}

absl::Status LocalDirectoryObjectStore::PutIfAbsent(absl::string_view key,
                                                    absl::string_view data) {
  return PutImpl(key, data, PutMode::kIfAbsent);
}

absl::StatusOr<std::string> LocalDirectoryObjectStore::ReadRange(
    absl::string_view key, uint64_t offset, uint64_t length, bool whole) {
  BACKFILL_RETURN_IF_ERROR(ValidateObjectKey(key));
  int fd = open(PathOf(key).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return absl::NotFoundError(
          absl::StrCat(DebugString(), ": no object \"", key, "\""));
    }
    return IoError(errno, "open", key);
  }
  absl::Cleanup close_fd = [fd] { close(fd); };
  struct stat st;
  if (fstat(fd, &st) != 0) return IoError(errno, "stat", key);
  if (!S_ISREG(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat(
        DebugString(), ": no object \"", key, "\" (a directory of objects)"));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (whole) {
    offset = 0;
    length = size;
  }
  if (offset > size) {
    return absl::OutOfRangeError(absl::StrCat(DebugString(), ": range of \"",
                                              key, "\" starts at ", offset,
                                              " past its end: size ", size));
  }
  std::string out(std::min(length, size - offset), '\0');
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = pread(fd, out.data() + done, out.size() - done,
                      static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(errno, "read", key);
    }
    if (n == 0) {
      // Objects are immutable: a file shorter than its stat is damage.
      return absl::DataLossError(absl::StrCat(DebugString(), ": object \"", key,
                                              "\" ends at ", offset + done,
                                              ", before its size ", size));
    }
    done += static_cast<size_t>(n);
  }
  return out;
}

absl::StatusOr<std::string> LocalDirectoryObjectStore::Get(
    absl::string_view key) {
  return ReadRange(key, 0, 0, /*whole=*/true);
}

absl::StatusOr<std::string> LocalDirectoryObjectStore::GetRange(
    absl::string_view key, uint64_t offset, uint64_t length) {
  return ReadRange(key, offset, length, /*whole=*/false);
}

absl::StatusOr<ObjectInfo> LocalDirectoryObjectStore::Head(
    absl::string_view key) {
  BACKFILL_RETURN_IF_ERROR(ValidateObjectKey(key));
  struct stat st;
  if (stat(PathOf(key).c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return absl::NotFoundError(
          absl::StrCat(DebugString(), ": no object \"", key, "\""));
    }
    return IoError(errno, "stat", key);
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat(
        DebugString(), ": no object \"", key, "\" (a directory of objects)"));
  }
  return ObjectInfo{std::string(key), static_cast<uint64_t>(st.st_size)};
}

absl::Status LocalDirectoryObjectStore::ListDirectory(
    const std::string& relative_dir, absl::string_view prefix,
    std::vector<ObjectInfo>& out) {
  const std::string dir_path =
      relative_dir.empty() ? options_.root : PathOf(relative_dir);
  DIR* dir = opendir(dir_path.c_str());
  if (dir == nullptr) {
    // A directory removed by a concurrent Delete, or a prefix naming none.
    if (errno == ENOENT || errno == ENOTDIR) return absl::OkStatus();
    return IoError(errno, "list", relative_dir);
  }
  absl::Cleanup close_dir = [dir] { closedir(dir); };
  while (true) {
    errno = 0;
    struct dirent* entry = readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) return IoError(errno, "list", relative_dir);
      break;
    }
    absl::string_view name = entry->d_name;
    // Skips ".", "..", #staging and anything else that is not ours.
    if (!IsKeySegment(name)) continue;
    std::string key = relative_dir.empty()
                          ? std::string(name)
                          : absl::StrCat(relative_dir, "/", name);
    // Only descend where keys with the prefix can be.
    const size_t common = std::min(key.size(), prefix.size());
    if (absl::string_view(key).substr(0, common) != prefix.substr(0, common)) {
      continue;
    }
    struct stat st;
    if (fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // deleted meanwhile
      return IoError(errno, "stat", key);
    }
    if (S_ISDIR(st.st_mode)) {
      BACKFILL_RETURN_IF_ERROR(ListDirectory(key, prefix, out));
    } else if (S_ISREG(st.st_mode) && key.size() >= prefix.size()) {
      out.push_back(
          ObjectInfo{std::move(key), static_cast<uint64_t>(st.st_size)});
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ObjectInfo>> LocalDirectoryObjectStore::List(
    absl::string_view prefix) {
  BACKFILL_RETURN_IF_ERROR(ValidateObjectKeyPrefix(prefix));
  std::vector<ObjectInfo> out;
  // Start at the deepest directory the prefix names in full.
  size_t slash = prefix.rfind('/');
  std::string start = slash == absl::string_view::npos
                          ? ""
                          : std::string(prefix.substr(0, slash));
  while (!start.empty() && start.back() == '/') start.pop_back();
  BACKFILL_RETURN_IF_ERROR(ListDirectory(start, prefix, out));
  // Directory order is not key order ('-' and '.' sort before '/').
  std::sort(
      out.begin(), out.end(),
      [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
  return out;
}

absl::Status LocalDirectoryObjectStore::Delete(absl::string_view key) {
  BACKFILL_RETURN_IF_ERROR(ValidateObjectKey(key));
  const std::string path = PathOf(key);
  if (unlink(path.c_str()) != 0) {
    // Not there, or a directory of other keys (no object of that name).
    if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR) {
      return absl::OkStatus();
    }
    return IoError(errno, "delete", key);
  }
  BACKFILL_RETURN_IF_ERROR(SyncDirectory(path.substr(0, path.rfind('/')), key));
  // Remove the directories this left empty; rmdir fails harmlessly on one
  // that is not empty (or that a concurrent put is filling).
  absl::string_view parent = key;
  for (size_t slash = parent.rfind('/'); slash != absl::string_view::npos;
       slash = parent.rfind('/')) {
    parent = parent.substr(0, slash);
    if (rmdir(PathOf(parent).c_str()) != 0) break;
  }
  return absl::OkStatus();
}

}  // namespace backfill
