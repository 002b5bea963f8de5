#include "storage/shared/object_store_conformance.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {

std::string ObjectStoreFactoryName(
    const ::testing::TestParamInfo<ObjectStoreFactory>& info) {
  return info.param.name;
}

void ObjectStoreConformanceTest::SetUp() {
  BACKFILL_ASSERT_OK_AND_ASSIGN(store_, GetParam().open());
}

void ObjectStoreConformanceTest::TearDown() { store_.reset(); }

namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string AllByteValues() {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  return bytes;
}

std::vector<std::string> Keys(const std::vector<ObjectInfo>& infos) {
  std::vector<std::string> keys;
  for (const ObjectInfo& info : infos) keys.push_back(info.key);
  return keys;
}

TEST_P(ObjectStoreConformanceTest, PutThenGetReturnsTheBytes) {
  BACKFILL_ASSERT_OK(store_->Put("sst/000001.sst", "hello"));
  EXPECT_THAT(store_->Get("sst/000001.sst"), IsOkAndHolds("hello"));
  EXPECT_THAT(store_->Head("sst/000001.sst"),
              IsOkAndHolds(ObjectInfo{"sst/000001.sst", 5}));
}

TEST_P(ObjectStoreConformanceTest, EmptyAndBinaryObjectsRoundTrip) {
  BACKFILL_ASSERT_OK(store_->Put("empty", ""));
  BACKFILL_ASSERT_OK(store_->Put("binary", AllByteValues()));
  EXPECT_THAT(store_->Get("empty"), IsOkAndHolds(""));
  EXPECT_THAT(store_->Head("empty"), IsOkAndHolds(ObjectInfo{"empty", 0}));
  EXPECT_THAT(store_->Get("binary"), IsOkAndHolds(AllByteValues()));
}

TEST_P(ObjectStoreConformanceTest, LargeObjectRoundTrips) {
  std::string large;
  large.reserve(3 << 20);
  for (uint32_t i = 0; large.size() < (3u << 20); ++i) {
    absl::StrAppend(&large, absl::StrFormat("%08x", i * 2654435761u));
  }
  BACKFILL_ASSERT_OK(store_->Put("large", large));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::string read, store_->Get("large"));
  EXPECT_EQ(read.size(), large.size());
  EXPECT_TRUE(read == large);
  EXPECT_THAT(store_->GetRange("large", 1 << 20, 100),
              IsOkAndHolds(large.substr(1 << 20, 100)));
}

TEST_P(ObjectStoreConformanceTest, PutReplaces) {
  BACKFILL_ASSERT_OK(store_->Put("a", "first"));
  BACKFILL_ASSERT_OK(store_->Put("a", "second, longer"));
  EXPECT_THAT(store_->Get("a"), IsOkAndHolds("second, longer"));
  BACKFILL_ASSERT_OK(store_->Put("a", "3"));
  EXPECT_THAT(store_->Get("a"), IsOkAndHolds("3"));
  EXPECT_THAT(store_->Head("a"), IsOkAndHolds(ObjectInfo{"a", 1}));
}

TEST_P(ObjectStoreConformanceTest, PutIfAbsentCreatesOnce) {
  BACKFILL_ASSERT_OK(store_->PutIfAbsent("version/1", "one"));
  EXPECT_THAT(
      store_->PutIfAbsent("version/1", "other"),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("version/1")));
  EXPECT_THAT(store_->Get("version/1"), IsOkAndHolds("one"));
  // Put still replaces; after a delete the key is free again.
  BACKFILL_ASSERT_OK(store_->Put("version/1", "replaced"));
  EXPECT_THAT(store_->Get("version/1"), IsOkAndHolds("replaced"));
  BACKFILL_ASSERT_OK(store_->Delete("version/1"));
  BACKFILL_EXPECT_OK(store_->PutIfAbsent("version/1", "again"));
  EXPECT_THAT(store_->Get("version/1"), IsOkAndHolds("again"));
}

TEST_P(ObjectStoreConformanceTest, MissingObjectsAreNotFoundNamingTheKey) {
  auto not_found = StatusIs(absl::StatusCode::kNotFound, HasSubstr("nope/x"));
  EXPECT_THAT(store_->Get("nope/x"), not_found);
  EXPECT_THAT(store_->GetRange("nope/x", 0, 10), not_found);
  EXPECT_THAT(store_->Head("nope/x"), not_found);
  EXPECT_THAT(store_->List("nope/"), IsOkAndHolds(IsEmpty()));
}

TEST_P(ObjectStoreConformanceTest, GetRangeIsCutAtTheEnd) {
  BACKFILL_ASSERT_OK(store_->Put("range/obj", "0123456789"));
  EXPECT_THAT(store_->GetRange("range/obj", 0, 4), IsOkAndHolds("0123"));
  EXPECT_THAT(store_->GetRange("range/obj", 3, 4), IsOkAndHolds("3456"));
  EXPECT_THAT(store_->GetRange("range/obj", 6, 4), IsOkAndHolds("6789"));
  EXPECT_THAT(store_->GetRange("range/obj", 8, 100), IsOkAndHolds("89"));
  EXPECT_THAT(store_->GetRange("range/obj", 9, 1), IsOkAndHolds("9"));
  EXPECT_THAT(store_->GetRange("range/obj", 0, 10), IsOkAndHolds("0123456789"));
  EXPECT_THAT(store_->GetRange("range/obj", 5, 0), IsOkAndHolds(""));
  EXPECT_THAT(store_->GetRange("range/obj", 10, 5), IsOkAndHolds(""));
  EXPECT_THAT(store_->GetRange("range/obj", 11, 5),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("range/obj")));
}

TEST_P(ObjectStoreConformanceTest, ListIsSortedAndFilteredByPrefix) {
  // Written out of order, with '-' and '.' (which sort before '/') in names.
  for (const char* key : {"sst/b", "sst/a.x", "sst/a/y", "sst/a-z", "sst2",
                          "version/7", "sst/a/x/deep", "ss"}) {
    BACKFILL_ASSERT_OK(store_->Put(key, key));
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> all, store_->List(""));
  EXPECT_THAT(Keys(all), ElementsAre("ss", "sst/a-z", "sst/a.x", "sst/a/x/deep",
                                     "sst/a/y", "sst/b", "sst2", "version/7"));
  EXPECT_EQ(all[0], (ObjectInfo{"ss", 2}));
  EXPECT_THAT(
      Keys(*store_->List("sst/")),
      ElementsAre("sst/a-z", "sst/a.x", "sst/a/x/deep", "sst/a/y", "sst/b"));
  // A prefix that ends inside a name.
  EXPECT_THAT(Keys(*store_->List("sst/a")),
              ElementsAre("sst/a-z", "sst/a.x", "sst/a/x/deep", "sst/a/y"));
  EXPECT_THAT(Keys(*store_->List("sst")),
              ElementsAre("sst/a-z", "sst/a.x", "sst/a/x/deep", "sst/a/y",
                          "sst/b", "sst2"));
  EXPECT_THAT(Keys(*store_->List("sst/a/x/deep")), ElementsAre("sst/a/x/deep"));
  EXPECT_THAT(Keys(*store_->List("version/8")), IsEmpty());
  EXPECT_THAT(Keys(*store_->List("zzz")), IsEmpty());
}

TEST_P(ObjectStoreConformanceTest, ListPaginatesThroughManyObjects) {
  // More than one page of the S3 instantiations (which list a few keys per
  // page to exercise continuation).
  std::vector<std::string> expected;
  for (int i = 0; i < 45; ++i) {
    std::string key = absl::StrFormat("many/%03d", i);
    expected.push_back(key);
  }
  for (int i = 44; i >= 0; --i)
    BACKFILL_ASSERT_OK(store_->Put(expected[i], "x"));
  BACKFILL_ASSERT_OK(store_->Put("manz", "outside"));
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> listed,
                                store_->List("many/"));
  EXPECT_EQ(Keys(listed), expected);
}

TEST_P(ObjectStoreConformanceTest, DeleteIsIdempotent) {
  BACKFILL_ASSERT_OK(store_->Put("d/1", "x"));
  BACKFILL_ASSERT_OK(store_->Put("d/2", "y"));
  BACKFILL_ASSERT_OK(store_->Delete("d/1"));
  BACKFILL_ASSERT_OK(store_->Delete("d/1"));
  BACKFILL_ASSERT_OK(store_->Delete("never/existed"));
  EXPECT_THAT(store_->Get("d/1"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(store_->Get("d/2"), IsOkAndHolds("y"));
  EXPECT_THAT(Keys(*store_->List("")), ElementsAre("d/2"));
  BACKFILL_ASSERT_OK(store_->Delete("d/2"));
  EXPECT_THAT(store_->List(""), IsOkAndHolds(IsEmpty()));
  // The key can be used again.
  BACKFILL_ASSERT_OK(store_->Put("d/1", "z"));
  EXPECT_THAT(store_->Get("d/1"), IsOkAndHolds("z"));
}

TEST_P(ObjectStoreConformanceTest, InvalidKeysAreRejected) {
  const std::string too_long(kMaxObjectKeyLength + 1, 'k');
  for (const std::string& key :
       {std::string(""), std::string("/abs"), std::string("trailing/"),
        std::string("a//b"), std::string(".."), std::string("../escape"),
        std::string("a/../b"), std::string("a/./b"), std::string("sp ace"),
        std::string("new\nline"), std::string("q?x"), std::string("h#x"),
        too_long}) {
    SCOPED_TRACE(key.substr(0, 40));
    auto invalid = StatusIs(absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(store_->Put(key, "x"), invalid);
    EXPECT_THAT(store_->PutIfAbsent(key, "x"), invalid);
    EXPECT_THAT(store_->Get(key), invalid);
    EXPECT_THAT(store_->GetRange(key, 0, 1), invalid);
    EXPECT_THAT(store_->Head(key), invalid);
    EXPECT_THAT(store_->Delete(key), invalid);
  }
  EXPECT_THAT(store_->List("/abs"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->List("sp ace"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // Nothing was written by the rejected calls.
  EXPECT_THAT(store_->List(""), IsOkAndHolds(IsEmpty()));
  // The longest valid key works (in segments a file system can name).
  std::string longest;
  while (longest.size() + 201 <= kMaxObjectKeyLength) {
    absl::StrAppend(&longest, std::string(200, 'k'), "/");
  }
  longest.append(kMaxObjectKeyLength - longest.size(), 'v');
  ASSERT_EQ(longest.size(), kMaxObjectKeyLength);
  BACKFILL_EXPECT_OK(store_->Put(longest, "x"));
  EXPECT_THAT(store_->Get(longest), IsOkAndHolds("x"));
}

TEST_P(ObjectStoreConformanceTest, ConcurrentPutIfAbsentHasExactlyOneWinner) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 5;
  for (int round = 0; round < kRounds; ++round) {
    const std::string key = absl::StrCat("race/", round);
    std::atomic<int> winners{0};
    std::atomic<int> conflicts{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        absl::Status status = store_->PutIfAbsent(key, absl::StrCat("t", t));
        if (status.ok()) {
          winners.fetch_add(1);
        } else if (status.code() == absl::StatusCode::kFailedPrecondition) {
          conflicts.fetch_add(1);
        } else {
          ADD_FAILURE() << status;
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(winners.load(), 1) << key;
    EXPECT_EQ(conflicts.load(), kThreads - 1) << key;
  }
}

TEST_P(ObjectStoreConformanceTest, ReadersNeverSeeAPartialObject) {
  // Writers replace one key with whole values; readers must see one of them.
  constexpr int kWriters = 3;
  constexpr int kPutsPerWriter = 8;
  auto value_of = [](int writer, int i) {
    return std::string(64 << 10, static_cast<char>('a' + writer * 8 + i % 8));
  };
  BACKFILL_ASSERT_OK(store_->Put("hot", value_of(0, 0)));
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kPutsPerWriter; ++i) {
        EXPECT_THAT(store_->Put("hot", value_of(w, i)), IsOk());
      }
    });
  }
  std::thread reader([&] {
    int reads = 0;
    while (!done.load() || reads == 0) {
      absl::StatusOr<std::string> value = store_->Get("hot");
      ASSERT_THAT(value, IsOk());
      ASSERT_EQ(value->size(), size_t{64 << 10});
      ASSERT_EQ(value->find_first_not_of((*value)[0]), std::string::npos)
          << "mixed bytes after " << reads << " reads";
      ++reads;
    }
  });
  for (std::thread& writer : writers) writer.join();
  done.store(true);
  reader.join();
}

TEST_P(ObjectStoreConformanceTest, ConcurrentPutsOfDistinctKeysAllLand) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 10;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string key = absl::StrFormat("p/%d/%02d", t, i);
        EXPECT_THAT(store_->Put(key, key), IsOk());
        if (i % 3 == 0) {
          EXPECT_THAT(store_->Delete(key), IsOk());
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<std::string> expected;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      if (i % 3 != 0) expected.push_back(absl::StrFormat("p/%d/%02d", t, i));
    }
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> listed,
                                store_->List("p/"));
  EXPECT_EQ(Keys(listed), expected);
  for (const ObjectInfo& info : listed) {
    EXPECT_THAT(store_->Get(info.key), IsOkAndHolds(info.key));
  }
}

}  // namespace
}  // namespace backfill
