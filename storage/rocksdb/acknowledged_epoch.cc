#include "storage/rocksdb/acknowledged_epoch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/base/internal/endian.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

constexpr char kMagicV2[8] = {'b', 'f', 'a', 'c', 'k', 'v', '2', '\n'};
constexpr char kMagicV1[8] = {'b', 'f', 'a', 'c', 'k', 'v', '1', '\n'};
// magic | epoch | MANIFEST number | MANIFEST size
constexpr size_t kFieldsSize = 32;
constexpr size_t kV1Size = 40;

uint32_t Crc32(absl::string_view bytes) {
  return static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes.data()),
            static_cast<uInt>(bytes.size())));
}

// Only to read the records of earlier versions.
uint64_t Fnv1a64(absl::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    hash = (hash ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  }
  return hash;
}

std::string PathIn(const std::string& dir, absl::string_view name) {
  return absl::StrCat(dir, "/", name);
}

// Up to `max_bytes` from the start of the file at `path`; nullopt if there
// is no such file. Errors: Internal naming the path and the errno.
absl::StatusOr<std::optional<std::string>> ReadFilePrefix(
    const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    return absl::InternalError(
        absl::StrCat("read ", path, ": ", std::strerror(errno)));
  }
  std::string bytes(max_bytes, '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        ::pread(fd, bytes.data() + done, bytes.size() - done, done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int read_errno = errno;
      ::close(fd);
      return absl::InternalError(
          absl::StrCat("read ", path, ": ", std::strerror(read_errno)));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

AcknowledgedEpoch DecodeFields(absl::string_view bytes) {
  AcknowledgedEpoch acknowledged;
  acknowledged.epoch = Epoch(absl::big_endian::Load64(bytes.data() + 8));
  acknowledged.manifest_number = absl::big_endian::Load64(bytes.data() + 16);
  acknowledged.manifest_size = absl::big_endian::Load64(bytes.data() + 24);
  return acknowledged;
}

}  // namespace

std::string EncodeAcknowledgedEpoch(const AcknowledgedEpoch& acknowledged) {
  char bytes[kAcknowledgedEpochSize];
  std::memcpy(bytes, kMagicV2, sizeof(kMagicV2));
  absl::big_endian::Store64(bytes + 8, acknowledged.epoch.value());
  absl::big_endian::Store64(bytes + 16, acknowledged.manifest_number);
  absl::big_endian::Store64(bytes + 24, acknowledged.manifest_size);
  absl::big_endian::Store32(bytes + kFieldsSize,
                            Crc32(absl::string_view(bytes, kFieldsSize)));
  return std::string(bytes, sizeof(bytes));
}

absl::StatusOr<std::optional<AcknowledgedEpoch>> DecodeAcknowledgedEpoch(
    absl::string_view bytes) {
  if (bytes.empty()) return std::nullopt;
  const absl::string_view fields = bytes.substr(0, kFieldsSize);
  if (bytes.size() == kAcknowledgedEpochSize &&
      std::memcmp(bytes.data(), kMagicV2, sizeof(kMagicV2)) == 0 &&
      absl::big_endian::Load32(bytes.data() + kFieldsSize) == Crc32(fields)) {
    return DecodeFields(bytes);
  }
  if (bytes.size() == kV1Size &&
      std::memcmp(bytes.data(), kMagicV1, sizeof(kMagicV1)) == 0 &&
      absl::big_endian::Load64(bytes.data() + kFieldsSize) == Fnv1a64(fields)) {
    return DecodeFields(bytes);
  }
  return absl::DataLossError(
      absl::StrCat(kAcknowledgedEpochFile, " is corrupt (", bytes.size(),
                   " bytes: ", absl::CHexEscape(bytes), ")"));
}

absl::StatusOr<std::optional<AcknowledgedEpoch>> ReadAcknowledgedEpoch(
    const std::string& dir) {
  absl::StatusOr<std::optional<std::string>> read =
      ReadFilePrefix(PathIn(dir, kAcknowledgedEpochFile), kV1Size + 1);
  if (!read.ok()) {
    return absl::InternalError(
        absl::StrCat("open ", dir, ": ", read.status().message()));
  }
  if (!read->has_value()) return std::nullopt;
  absl::StatusOr<std::optional<AcknowledgedEpoch>> decoded =
      DecodeAcknowledgedEpoch(**read);
  if (!decoded.ok()) {
    return absl::Status(
        decoded.status().code(),
        absl::StrCat("open ", dir, ": ", decoded.status().message()));
  }
  return decoded;
}

absl::Status CheckManifestPrefix(const std::string& dir,
                                 const AcknowledgedEpoch& acknowledged) {
  if (acknowledged.manifest_number == 0) return absl::OkStatus();
  absl::StatusOr<std::optional<std::string>> current =
      ReadFilePrefix(PathIn(dir, "CURRENT"), 64);
  if (!current.ok() || !current->has_value()) return absl::OkStatus();
  char expected[64];
  std::snprintf(expected, sizeof(expected), "MANIFEST-%06llu\n",
                static_cast<unsigned long long>(acknowledged.manifest_number));
  if (**current != expected) return absl::OkStatus();  // Another MANIFEST now.
  const std::string name = (*current)->substr(0, (*current)->size() - 1);
  absl::StatusOr<std::optional<std::string>> manifest =
      ReadFilePrefix(PathIn(dir, name), acknowledged.manifest_size);
  if (!manifest.ok() || !manifest->has_value()) return absl::OkStatus();
  const std::string& bytes = **manifest;
  constexpr size_t kBlockSize = 32768;
  constexpr size_t kHeaderSize = 7;
  auto damaged = [&](size_t offset, absl::string_view why) {
    return absl::DataLossError(
        absl::StrCat("open ", dir, ": ", name, " is damaged at offset ", offset,
                     " (", why, "); checkpoint ", acknowledged.epoch.value(),
                     " saw its first ", acknowledged.manifest_size,
                     " bytes complete (", kAcknowledgedEpochFile, ")"));
  };
  if (bytes.size() < acknowledged.manifest_size) {
    return damaged(bytes.size(), "the file is shorter");
  }
  size_t offset = 0;
  while (offset < acknowledged.manifest_size) {
    const size_t block_left = kBlockSize - offset % kBlockSize;
    if (block_left < kHeaderSize) {  // Block trailer.
      offset += block_left;
      continue;
    }
    if (offset + kHeaderSize > bytes.size()) {
      return damaged(offset, "a record header is cut short");
    }
    const size_t length =
        static_cast<uint8_t>(bytes[offset + 4]) |
        (static_cast<size_t>(static_cast<uint8_t>(bytes[offset + 5])) << 8);
    const int type = static_cast<uint8_t>(bytes[offset + 6]);
    if (type < 1 || type > 4) {
      return damaged(offset, absl::StrCat("record type ", type));
    }
    if (kHeaderSize + length > block_left ||
        offset + kHeaderSize + length > bytes.size()) {
      return damaged(offset, absl::StrCat("record length ", length,
                                          " runs past its block or the "
                                          "acknowledged size"));
    }
    offset += kHeaderSize + length;
  }
  return absl::OkStatus();
}

AcknowledgedEpoch AcknowledgedNow(rocksdb::DB& db, Epoch epoch) {
  AcknowledgedEpoch acknowledged;
  acknowledged.epoch = epoch;
  std::vector<std::string> live;
  if (db.GetLiveFiles(live, &acknowledged.manifest_size,
                      /*flush_memtable=*/false)
          .ok()) {
    for (const std::string& file : live) {
      if (file.rfind("/MANIFEST-", 0) == 0) {
        acknowledged.manifest_number =
            std::strtoull(file.c_str() + 10, nullptr, 10);
      }
    }
  }
  if (acknowledged.manifest_number == 0) acknowledged.manifest_size = 0;
  return acknowledged;
}

absl::StatusOr<std::unique_ptr<AcknowledgedEpochWriter>>
AcknowledgedEpochWriter::Open(const std::string& dir) {
  const std::string path = PathIn(dir, kAcknowledgedEpochFile);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("open ", dir, ": create ", path,
                                            ": ", std::strerror(errno)));
  }
  struct stat info;
  const bool replace =
      ::fstat(fd, &info) != 0 ||
      (info.st_size != 0 &&
       info.st_size != static_cast<off_t>(kAcknowledgedEpochSize));
  return std::unique_ptr<AcknowledgedEpochWriter>(
      new AcknowledgedEpochWriter(dir, fd, replace));
}

AcknowledgedEpochWriter::~AcknowledgedEpochWriter() { ::close(fd_); }

void AcknowledgedEpochWriter::Write(const AcknowledgedEpoch& acknowledged) {
  const std::string bytes = EncodeAcknowledgedEpoch(acknowledged);
  if (!replace_) {
    (void)!::pwrite(fd_, bytes.data(), bytes.size(), 0);
    return;
  }
  // A rename is atomic: the old record or the new one, never the new one
  // with the old one's tail.
  const std::string path = PathIn(dir_, kAcknowledgedEpochFile);
  const std::string temporary = path + ".tmp";
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const bool written = ::pwrite(fd, bytes.data(), bytes.size(), 0) ==
                       static_cast<ssize_t>(bytes.size());
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return;
  }
  ::close(fd_);
  fd_ = fd;  // Now the file named `path`.
  replace_ = false;
}

}  // namespace rocksdb_internal
}  // namespace backfill
