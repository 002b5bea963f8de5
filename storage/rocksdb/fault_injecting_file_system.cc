#include "storage/rocksdb/fault_injecting_file_system.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

rocksdb::IOStatus CheckFault(FaultInjector& injector,
                             FaultInjector::Operation operation,
                             const std::string& file_name) {
  absl::Status status = injector.Check(operation, file_name);
  if (status.ok()) return rocksdb::IOStatus::OK();
  if (absl::IsResourceExhausted(status)) {  // A full disk: ENOSPC.
    return rocksdb::IOStatus::NoSpace(rocksdb::Slice(
        absl::StrCat("injected fault: ", std::string(status.message()))));
  }
  return rocksdb::IOStatus::IOError(
      rocksdb::Slice(absl::StrCat("injected fault: ", status.ToString())));
}

class FaultSequentialFile final : public rocksdb::FSSequentialFileOwnerWrapper {
 public:
  FaultSequentialFile(std::unique_ptr<rocksdb::FSSequentialFile> file,
                      std::string name, FaultInjector* injector)
      : FSSequentialFileOwnerWrapper(std::move(file)),
        name_(std::move(name)),
        injector_(injector) {}
  rocksdb::IOStatus Read(size_t n, const rocksdb::IOOptions& options,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name_);
    return s.ok() ? target()->Read(n, options, result, scratch, dbg) : s;
  }
  rocksdb::IOStatus PositionedRead(uint64_t offset, size_t n,
                                   const rocksdb::IOOptions& options,
                                   rocksdb::Slice* result, char* scratch,
                                   rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name_);
    return s.ok() ? target()->PositionedRead(offset, n, options, result,
                                             scratch, dbg)
                  : s;
  }

 private:
  const std::string name_;
  FaultInjector* const injector_;
};

class FaultRandomAccessFile final
    : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  FaultRandomAccessFile(std::unique_ptr<rocksdb::FSRandomAccessFile> file,
                        std::string name, FaultInjector* injector)
      : FSRandomAccessFileOwnerWrapper(std::move(file)),
        name_(std::move(name)),
        injector_(injector) {}
  rocksdb::IOStatus Read(uint64_t offset, size_t n,
                         const rocksdb::IOOptions& options,
                         rocksdb::Slice* result, char* scratch,
                         rocksdb::IODebugContext* dbg) const override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name_);
    return s.ok() ? target()->Read(offset, n, options, result, scratch, dbg)
                  : s;
  }
  rocksdb::IOStatus MultiRead(rocksdb::FSReadRequest* requests,
                              size_t num_requests,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name_);
    if (!s.ok()) {
      for (size_t i = 0; i < num_requests; ++i) requests[i].status = s;
      return s;
    }
    return target()->MultiRead(requests, num_requests, options, dbg);
  }

 private:
  const std::string name_;
  FaultInjector* const injector_;
};

class FaultWritableFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FaultWritableFile(std::unique_ptr<rocksdb::FSWritableFile> file,
                    std::string name, FaultInjector* injector)
      : FSWritableFileOwnerWrapper(std::move(file)),
        name_(std::move(name)),
        injector_(injector) {}
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name_);
    return s.ok() ? target()->Append(data, options, dbg) : s;
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name_);
    return s.ok() ? target()->Append(data, options, info, dbg) : s;
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name_);
    return s.ok() ? target()->PositionedAppend(data, offset, options, dbg) : s;
  }
  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& options,
                                     const rocksdb::DataVerificationInfo& info,
                                     rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name_);
    return s.ok() ? target()->PositionedAppend(data, offset, options, info, dbg)
                  : s;
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& options,
                         rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kSync, name_);
    return s.ok() ? target()->Sync(options, dbg) : s;
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                          rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kSync, name_);
    return s.ok() ? target()->Fsync(options, dbg) : s;
  }

 private:
  const std::string name_;
  FaultInjector* const injector_;
};

class FaultInjectingFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  FaultInjectingFileSystem(std::shared_ptr<rocksdb::FileSystem> base,
                           std::shared_ptr<FaultInjector> injector)
      : FileSystemWrapper(std::move(base)), injector_(std::move(injector)) {}
  const char* Name() const override {
    return "BackfillFaultInjectingFileSystem";
  }

  rocksdb::IOStatus NewSequentialFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSSequentialFile>* result,
      rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name);
    if (s.ok()) s = target()->NewSequentialFile(name, options, result, dbg);
    if (s.ok()) {
      *result = std::make_unique<FaultSequentialFile>(std::move(*result), name,
                                                      injector_.get());
    }
    return s;
  }
  rocksdb::IOStatus NewRandomAccessFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
      rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kRead, name);
    if (s.ok()) s = target()->NewRandomAccessFile(name, options, result, dbg);
    if (s.ok()) {
      *result = std::make_unique<FaultRandomAccessFile>(std::move(*result),
                                                        name, injector_.get());
    }
    return s;
  }
  rocksdb::IOStatus NewWritableFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name);
    if (s.ok()) s = target()->NewWritableFile(name, options, result, dbg);
    if (s.ok()) {
      *result = std::make_unique<FaultWritableFile>(std::move(*result), name,
                                                    injector_.get());
    }
    return s;
  }
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    auto s = CheckFault(*injector_, FaultInjector::Operation::kWrite, name);
    if (s.ok()) s = target()->ReopenWritableFile(name, options, result, dbg);
    if (s.ok()) {
      *result = std::make_unique<FaultWritableFile>(std::move(*result), name,
                                                    injector_.get());
    }
    return s;
  }

 private:
  const std::shared_ptr<FaultInjector> injector_;
};

}  // namespace

std::shared_ptr<rocksdb::FileSystem> NewFaultInjectingFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base,
    std::shared_ptr<FaultInjector> injector) {
  return std::make_shared<FaultInjectingFileSystem>(std::move(base),
                                                    std::move(injector));
}

}  // namespace rocksdb_internal
}  // namespace backfill
