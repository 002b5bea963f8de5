#include "storage/rocksdb/options.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

RocksDbStateStoreOptions Valid() {
  RocksDbStateStoreOptions options;
  options.path = "/tmp/unused";
  return options;
}

TEST(ValidateOptionsTest, DefaultsWithAPathAreValid) {
  EXPECT_THAT(ValidateOptions(Valid()), IsOk());
  RocksDbStateStoreOptions edges = Valid();
  edges.write_buffer_bytes = 64 << 10;
  edges.gc_tombstone_fraction = 0;
  edges.gc_min_tombstones = 1;
  edges.max_background_jobs = 1;
  edges.block_cache_bytes = 0;
  edges.block_bytes = 1 << 10;
  EXPECT_THAT(ValidateOptions(edges), IsOk());
  edges.block_bytes = 1 << 20;
  EXPECT_THAT(ValidateOptions(edges), IsOk());
  edges.gc_tombstone_fraction = 1;
  EXPECT_THAT(ValidateOptions(edges), IsOk());
  edges.tombstone_compaction_fraction = 0;
  EXPECT_THAT(ValidateOptions(edges), IsOk());
  edges.tombstone_compaction_fraction = 1;
  EXPECT_THAT(ValidateOptions(edges), IsOk());
}

TEST(ValidateOptionsTest, EachBadFieldIsInvalidArgumentNamingIt) {
  RocksDbStateStoreOptions options = Valid();
  options.path = "";
  EXPECT_THAT(ValidateOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("path")));
  options = Valid();
  options.write_buffer_bytes = (64 << 10) - 1;
  EXPECT_THAT(ValidateOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("write_buffer_bytes must be >= 65536; got "
                                 "65535")));
  for (size_t bytes : {size_t{0}, size_t{1023}, (size_t{1} << 20) + 1}) {
    options = Valid();
    options.block_bytes = bytes;
    EXPECT_THAT(ValidateOptions(options),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat("block_bytes must be in [1024, "
                                                "1048576]; got ",
                                                bytes))));
  }
  for (double fraction : {-0.1, 1.5, std::nan("")}) {
    options = Valid();
    options.gc_tombstone_fraction = fraction;
    EXPECT_THAT(ValidateOptions(options),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("gc_tombstone_fraction")));
  }
  for (double fraction : {-0.1, 1.5, std::nan("")}) {
    options = Valid();
    options.tombstone_compaction_fraction = fraction;
    EXPECT_THAT(ValidateOptions(options),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("tombstone_compaction_fraction")));
  }
  options = Valid();
  options.gc_min_tombstones = 0;
  EXPECT_THAT(ValidateOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("gc_min_tombstones")));
  options = Valid();
  options.max_background_jobs = 0;
  EXPECT_THAT(ValidateOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("max_background_jobs must be >= 1; got 0")));
}

}  // namespace
}  // namespace backfill
