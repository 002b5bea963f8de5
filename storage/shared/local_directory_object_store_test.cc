#include "storage/shared/local_directory_object_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/shared/object_store_conformance.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A fresh directory under TEST_TMPDIR (removed by Bazel with the sandbox).
std::string NewTempDir() {
  static std::atomic<int> next{0};
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/objects_",
                                 getpid(), "_", next.fetch_add(1));
  return dir;
}

INSTANTIATE_TEST_SUITE_P(
    LocalDirectory, ObjectStoreConformanceTest,
    ::testing::Values(
        ObjectStoreFactory{
            "synced",
            []() -> absl::StatusOr<std::unique_ptr<ObjectStore>> {
              return LocalDirectoryObjectStore::Open({.root = NewTempDir()});
            }},
        ObjectStoreFactory{
            "unsynced",
            []() -> absl::StatusOr<std::unique_ptr<ObjectStore>> {
              return LocalDirectoryObjectStore::Open(
                  {.root = NewTempDir(), .sync = false});
            }}),
    ObjectStoreFactoryName);

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(LocalDirectoryObjectStoreTest, ObjectsAreFilesUnderTheRoot) {
  const std::string root = NewTempDir();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, LocalDirectoryObjectStore::Open({.root = root}));
  BACKFILL_ASSERT_OK(store->Put("sst/000001.sst", "bytes"));
  std::ifstream file(root + "/sst/000001.sst");
  std::string content((std::istreambuf_iterator<char>(file)),
                      std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "bytes");
  EXPECT_EQ(store->DebugString(), "file://" + root);
  // Nothing is left in the staging directory.
  BACKFILL_ASSERT_OK(store->PutIfAbsent("sst/000002.sst", "x"));
  EXPECT_THAT(store->PutIfAbsent("sst/000002.sst", "y"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(rmdir((root + "/#staging").c_str()), 0) << "staging not empty";
}

TEST(LocalDirectoryObjectStoreTest, DeleteRemovesEmptiedDirectories) {
  const std::string root = NewTempDir();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, LocalDirectoryObjectStore::Open({.root = root}));
  BACKFILL_ASSERT_OK(store->Put("a/b/c/1", "x"));
  BACKFILL_ASSERT_OK(store->Put("a/2", "y"));
  BACKFILL_ASSERT_OK(store->Delete("a/b/c/1"));
  EXPECT_FALSE(Exists(root + "/a/b"));
  EXPECT_TRUE(Exists(root + "/a/2"));
  EXPECT_TRUE(Exists(root));
}

TEST(LocalDirectoryObjectStoreTest, LeftoversAndForeignFilesAreNotListed) {
  const std::string root = NewTempDir();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, LocalDirectoryObjectStore::Open({.root = root}));
  // What a put that crashed before its rename leaves behind.
  std::ofstream(root + "/#staging/123-0-456") << "partial";
  std::ofstream(root + "/not a key") << "foreign";
  BACKFILL_ASSERT_OK(store->Put("k", "v"));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> listed,
                                store->List(""));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].key, "k");
  // Reopening keeps the objects (and does not touch #staging).
  store.reset();
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      store, LocalDirectoryObjectStore::Open({.root = root}));
  EXPECT_THAT(store->Get("k"), IsOkAndHolds("v"));
}

TEST(LocalDirectoryObjectStoreTest, KeyAndDirectoryOfKeysConflict) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, LocalDirectoryObjectStore::Open({.root = NewTempDir()}));
  BACKFILL_ASSERT_OK(store->Put("a", "file"));
  EXPECT_THAT(store->Put("a/b", "x"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("\"a\" is an object")));
  BACKFILL_ASSERT_OK(store->Put("c/d", "x"));
  EXPECT_THAT(store->Put("c", "x"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("directory of other objects")));
  EXPECT_THAT(store->PutIfAbsent("c", "x"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(store->Get("c"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(store->Head("c"), StatusIs(absl::StatusCode::kNotFound));
  BACKFILL_EXPECT_OK(store->Delete("c"));
  EXPECT_THAT(store->Get("c/d"), IsOkAndHolds("x"));
}

TEST(LocalDirectoryObjectStoreTest, PutsSurviveDeletesRemovingTheirDirectory) {
  // Each thread's Delete empties and removes the shared directories that
  // the other threads' Puts are about to rename into.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store,
      LocalDirectoryObjectStore::Open({.root = NewTempDir(), .sync = false}));
  constexpr int kThreads = 4;
  constexpr int kRounds = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string key = absl::StrCat("shared/dir/k", t);
      for (int i = 0; i < kRounds; ++i) {
        absl::Status put = store->Put(key, "v");
        ASSERT_TRUE(put.ok()) << "round " << i << ": " << put;
        ASSERT_TRUE(store->Delete(key).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(store->List(""), IsOkAndHolds(IsEmpty()));
}

TEST(LocalDirectoryObjectStoreTest, OpenValidatesTheRoot) {
  EXPECT_THAT(LocalDirectoryObjectStore::Open({.root = ""}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  const std::string missing = NewTempDir() + "/deeper/still";
  EXPECT_THAT(LocalDirectoryObjectStore::Open(
                  {.root = missing, .create_if_missing = false}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(missing)));
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto store, LocalDirectoryObjectStore::Open({.root = missing}));
  EXPECT_THAT(store->List(""), IsOkAndHolds(IsEmpty()));
  const std::string file = NewTempDir();
  std::ofstream(file) << "not a directory";
  EXPECT_THAT(LocalDirectoryObjectStore::Open({.root = file}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr(file)));
}

}  // namespace
}  // namespace backfill
