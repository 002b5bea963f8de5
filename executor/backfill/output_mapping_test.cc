#include "executor/backfill/output_mapping.h"

#include <cstdint>

#include "executor/testing/chunk_matchers.h"
#include "executor/testing/message_literal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::ChunkEq;
using ::backfill::testing::MessageIsBarrierAt;
using ::backfill::testing::MessageIsChunk;
using ::backfill::testing::MessageIsWatermark;
using ::backfill::testing::StatusIs;
using ::backfill::testing::StreamChunkFromPretty;
using ::backfill::testing::TestBarrier;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(OutputMappingTest, CreateValidatesIndices) {
  EXPECT_THAT(OutputMapping::Create(2, {0, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("output column 1 is input column 2")));
  EXPECT_THAT(OutputMapping::Create(2, {-1}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(OutputMapping::Create(-1, {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  BACKFILL_ASSERT_OK_AND_ASSIGN(OutputMapping identity,
                                OutputMapping::Create(2, {0, 1}));
  EXPECT_TRUE(identity.is_identity());
  BACKFILL_ASSERT_OK_AND_ASSIGN(OutputMapping swap,
                                OutputMapping::Create(2, {1, 0}));
  EXPECT_FALSE(swap.is_identity());
  EXPECT_EQ(swap.num_input_columns(), 2);
  EXPECT_THAT(swap.output_indices(), ElementsAre(1, 0));
}

TEST(OutputMappingTest, ProjectsChunksKeepingOpsAndVisibility) {
  // S2 = [id, i, name], S3 = [name, id]: pk column i dropped.
  BACKFILL_ASSERT_OK_AND_ASSIGN(OutputMapping mapping,
                                OutputMapping::Create(3, {2, 0}));
  StreamChunk out = mapping.MapChunk(StreamChunkFromPretty(
      " I I T\n + 1 10 a\n - 2 20 b D\n U- 3 30 c\n U+ 3 31 d"));
  EXPECT_THAT(out.visibility(), ElementsAre(true, false, true, true));
  EXPECT_THAT(out,
              ChunkEq(StreamChunkFromPretty(" T I\n + a 1\n U- c 3\n U+ d 3")));
  EXPECT_THAT(mapping.MapTypes(
                  {DataType::kInt64, DataType::kInt32, DataType::kVarchar}),
              ElementsAre(DataType::kVarchar, DataType::kInt64));
}

TEST(OutputMappingTest, MapsAKeyToItsFirstOutputPositions) {
  // S3 = [name, id, id]: key (i, id) keeps only id, at its first position.
  BACKFILL_ASSERT_OK_AND_ASSIGN(OutputMapping mapping,
                                OutputMapping::Create(3, {2, 0, 0}));
  EXPECT_THAT(mapping.MapKey({1, 0}), ElementsAre(1));
  EXPECT_THAT(mapping.MapKey({2, 0}), ElementsAre(0, 1));
  EXPECT_THAT(mapping.MapKey({1}), ElementsAre());
}

TEST(OutputMappingTest, MapsEveryMessageKind) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(OutputMapping mapping,
                                OutputMapping::Create(3, {2, 0}));
  std::optional<Message> barrier = mapping.MapMessage(TestBarrier(4));
  ASSERT_TRUE(barrier.has_value());
  EXPECT_THAT(*barrier, MessageIsBarrierAt(4));

  std::optional<Message> chunk =
      mapping.MapMessage(StreamChunkFromPretty(" I I T\n + 1 10 a"));
  ASSERT_TRUE(chunk.has_value());
  EXPECT_THAT(*chunk,
              MessageIsChunk(ChunkEq(StreamChunkFromPretty(" T I\n + a 1"))));

  // Column 2 -> output 0; column 0 -> output 1; column 1 is dropped.
  std::optional<Message> on_name =
      mapping.MapMessage(Watermark{.column_index = 2,
                                   .type = DataType::kVarchar,
                                   .value = std::string("m")});
  ASSERT_TRUE(on_name.has_value());
  EXPECT_THAT(*on_name, MessageIsWatermark(0, std::string("m")));
  std::optional<Message> on_id = mapping.MapMessage(Watermark{
      .column_index = 0, .type = DataType::kInt64, .value = int64_t{7}});
  ASSERT_TRUE(on_id.has_value());
  EXPECT_THAT(*on_id, MessageIsWatermark(1, int64_t{7}));
  EXPECT_FALSE(
      mapping
          .MapMessage(Watermark{
              .column_index = 1, .type = DataType::kInt32, .value = int32_t{7}})
          .has_value());
}

TEST(OutputMappingTest, IdentityAndEmptyOutput) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(OutputMapping identity,
                                OutputMapping::Create(1, {0}));
  StreamChunk chunk = StreamChunkFromPretty(" I\n + 1\n - 2 D");
  EXPECT_EQ(identity.MapChunk(chunk).visibility(), chunk.visibility());
  BACKFILL_ASSERT_OK_AND_ASSIGN(OutputMapping none,
                                OutputMapping::Create(1, {}));
  StreamChunk empty = none.MapChunk(chunk);
  EXPECT_EQ(empty.num_columns(), 0);
  EXPECT_EQ(empty.cardinality(), 1u);
}

}  // namespace
}  // namespace backfill
