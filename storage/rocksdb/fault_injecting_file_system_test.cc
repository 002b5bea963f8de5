// The fault-injecting file system over RocksDB's default one, on files in
// TEST_TMPDIR: no database.
#include "storage/rocksdb/fault_injecting_file_system.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

using Operation = FaultInjector::Operation;

// Fails `operation` on files whose name contains `file` while armed; records
// every check.
class ScriptedFaults final : public FaultInjector {
 public:
  absl::Status Check(Operation operation,
                     absl::string_view file_name) override {
    MutexLock lock(&mu_);
    checks_.push_back(operation);
    if (armed_ && operation == operation_ &&
        absl::StrContains(file_name, file_)) {
      return error_;
    }
    return absl::OkStatus();
  }
  void Arm(Operation operation, std::string file, absl::Status error) {
    MutexLock lock(&mu_);
    armed_ = true;
    operation_ = operation;
    file_ = std::move(file);
    error_ = std::move(error);
  }
  std::vector<Operation> checks() {
    MutexLock lock(&mu_);
    return checks_;
  }

 private:
  Mutex mu_;
  bool armed_ ABSL_GUARDED_BY(mu_) = false;
  Operation operation_ ABSL_GUARDED_BY(mu_) = Operation::kRead;
  std::string file_ ABSL_GUARDED_BY(mu_);
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  std::vector<Operation> checks_ ABSL_GUARDED_BY(mu_);
};

std::string NewTestDirectory() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir =
      absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/fault_fs_", ::getpid(), "_",
                   counter.fetch_add(1));
  std::filesystem::create_directories(dir);
  return dir;
}

class FaultInjectingFileSystemTest : public ::testing::Test {
 protected:
  std::shared_ptr<ScriptedFaults> faults_ = std::make_shared<ScriptedFaults>();
  std::shared_ptr<rocksdb::FileSystem> fs_ =
      NewFaultInjectingFileSystem(rocksdb::FileSystem::Default(), faults_);
  std::string dir_ = NewTestDirectory();
  rocksdb::FileOptions options_;
  rocksdb::IOOptions io_;
};

TEST_F(FaultInjectingFileSystemTest, PassesThroughWhenNotArmed) {
  std::unique_ptr<rocksdb::FSWritableFile> out;
  ASSERT_TRUE(
      fs_->NewWritableFile(dir_ + "/a.log", options_, &out, nullptr).ok());
  ASSERT_TRUE(out->Append("hello", io_, nullptr).ok());
  ASSERT_TRUE(out->Sync(io_, nullptr).ok());
  ASSERT_TRUE(out->Close(io_, nullptr).ok());
  std::unique_ptr<rocksdb::FSRandomAccessFile> in;
  ASSERT_TRUE(
      fs_->NewRandomAccessFile(dir_ + "/a.log", options_, &in, nullptr).ok());
  char scratch[5];
  rocksdb::Slice result;
  ASSERT_TRUE(in->Read(0, 5, io_, &result, scratch, nullptr).ok());
  EXPECT_EQ(result.ToString(), "hello");
  std::unique_ptr<rocksdb::FSSequentialFile> sequential;
  ASSERT_TRUE(
      fs_->NewSequentialFile(dir_ + "/a.log", options_, &sequential, nullptr)
          .ok());
  ASSERT_TRUE(sequential->Read(5, io_, &result, scratch, nullptr).ok());
  EXPECT_EQ(result.ToString(), "hello");
  EXPECT_THAT(faults_->checks(),
              ::testing::ElementsAre(Operation::kWrite, Operation::kWrite,
                                     Operation::kSync, Operation::kRead,
                                     Operation::kRead, Operation::kRead,
                                     Operation::kRead));
}

TEST_F(FaultInjectingFileSystemTest, FailsTheArmedOperationOnMatchingFiles) {
  std::unique_ptr<rocksdb::FSWritableFile> log;
  std::unique_ptr<rocksdb::FSWritableFile> table;
  ASSERT_TRUE(
      fs_->NewWritableFile(dir_ + "/1.log", options_, &log, nullptr).ok());
  ASSERT_TRUE(
      fs_->NewWritableFile(dir_ + "/2.sst", options_, &table, nullptr).ok());
  faults_->Arm(Operation::kSync, ".log", absl::InternalError("EIO"));
  ASSERT_TRUE(log->Append("x", io_, nullptr).ok());
  const rocksdb::IOStatus failed = log->Sync(io_, nullptr);
  EXPECT_TRUE(failed.IsIOError()) << failed.ToString();
  EXPECT_FALSE(failed.IsNoSpace());
  EXPECT_THAT(failed.ToString(), ::testing::HasSubstr("injected fault"));
  EXPECT_TRUE(log->Fsync(io_, nullptr).IsIOError());
  EXPECT_TRUE(table->Sync(io_, nullptr).ok());  // Another file.
  faults_->Arm(Operation::kRead, ".sst", absl::InternalError("EIO"));
  std::unique_ptr<rocksdb::FSRandomAccessFile> in;
  EXPECT_TRUE(fs_->NewRandomAccessFile(dir_ + "/2.sst", options_, &in, nullptr)
                  .IsIOError());
}

TEST_F(FaultInjectingFileSystemTest, ResourceExhaustedIsAFullDisk) {
  std::unique_ptr<rocksdb::FSWritableFile> out;
  ASSERT_TRUE(
      fs_->NewWritableFile(dir_ + "/3.log", options_, &out, nullptr).ok());
  faults_->Arm(Operation::kWrite, ".log",
               absl::ResourceExhaustedError("disk full"));
  const rocksdb::IOStatus failed = out->Append("x", io_, nullptr);
  EXPECT_TRUE(failed.IsNoSpace()) << failed.ToString();
  EXPECT_TRUE(fs_->NewWritableFile(dir_ + "/4.log", options_, &out, nullptr)
                  .IsNoSpace());
  EXPECT_TRUE(fs_->ReopenWritableFile(dir_ + "/3.log", options_, &out, nullptr)
                  .IsNoSpace());
}

}  // namespace
}  // namespace rocksdb_internal
}  // namespace backfill
