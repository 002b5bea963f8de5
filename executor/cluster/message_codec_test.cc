#include "executor/cluster/message_codec.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/testing/chunk_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/random_datum.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::ChunkEq;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

Message RoundTrip(const MessageCodec& codec, const Message& message) {
  cluster::proto::StreamMessage wire;
  codec.Encode(message, &wire);
  // Through bytes, as over gRPC.
  cluster::proto::StreamMessage parsed;
  EXPECT_TRUE(parsed.ParseFromString(wire.SerializeAsString()));
  absl::StatusOr<Message> back = codec.Decode(parsed);
  EXPECT_TRUE(back.ok()) << back.status();
  return back.ok() ? *std::move(back) : Message(Barrier{});
}

MessageCodec IntCodec() {
  absl::StatusOr<MessageCodec> codec = MessageCodec::Create(
      {{"k", DataType::kInt64, 1}, {"v", DataType::kVarchar, 2}});
  EXPECT_TRUE(codec.ok()) << codec.status();
  return *std::move(codec);
}

// Random schemas (nested types included), rows, ops and visibility: the
// decoded chunk is the input's visible rows, in order, with their ops.
TEST(MessageCodecTest, ChunksOfRandomSchemasRoundTripTheirVisibleRows) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937_64 rng(seed);
    const int num_columns = 1 + static_cast<int>(rng() % 5);
    Schema schema;
    for (int c = 0; c < num_columns; ++c) {
      schema.push_back({absl::StrCat("c", c), RandomColumnType(rng, 2), c});
    }
    absl::StatusOr<MessageCodec> codec = MessageCodec::Create(schema);
    ASSERT_TRUE(codec.ok()) << codec.status();
    const size_t num_rows = rng() % 40;
    std::vector<Row> rows;
    std::vector<Op> ops;
    std::vector<bool> visible;
    for (size_t r = 0; r < num_rows; ++r) {
      Row row;
      for (const ColumnDesc& column : schema) {
        row.push_back(RandomColumnDatum(column.type, rng));
      }
      rows.push_back(std::move(row));
      ops.push_back(static_cast<Op>(rng() % 4));
      visible.push_back(rng() % 4 != 0);
    }
    StreamChunk chunk = StreamChunk::FromRows(ColumnTypes(schema), ops, rows);
    chunk.SetVisibility(visible);
    StreamChunk expected = chunk;
    expected.Compact();
    Message back = RoundTrip(*codec, chunk);
    ASSERT_TRUE(std::holds_alternative<StreamChunk>(back));
    EXPECT_THAT(std::get<StreamChunk>(back), ChunkEq(expected));
  }
}

// Every mutation kind, with every field set, comes back equal.
TEST(MessageCodecTest, BarriersWithEveryMutationRoundTrip) {
  const MessageCodec codec = IntCodec();
  std::vector<Mutation> mutations = {
      AddMutation{.pause = true,
                  .backfill_fragments_to_pause = {3, 4},
                  .added_actors = {7, 8}},
      PauseMutation{},
      ResumeMutation{},
      ThrottleMutation{.rate_limits = {{10, 500}, {11, std::nullopt}, {12, 0}},
                       .actor_rate_limits = {{100, 7}, {101, std::nullopt}}},
      StartFragmentBackfillMutation{.fragment_ids = {10, 12}},
      StopMutation{.actors = {100, 101}},
  };
  for (const Mutation& mutation : mutations) {
    SCOPED_TRACE(MutationDebugString(mutation));
    const Barrier barrier{
        .epoch = EpochPair{Epoch(1ull << 40), Epoch((1ull << 40) - 1)},
        .kind = BarrierKind::kCheckpoint,
        .mutation = std::make_shared<const Mutation>(mutation),
        .passed_actors = {1, 100}};
    Message back = RoundTrip(codec, barrier);
    ASSERT_TRUE(std::holds_alternative<Barrier>(back));
    EXPECT_EQ(std::get<Barrier>(back).DebugString(), barrier.DebugString());
    EXPECT_THAT(std::get<Barrier>(back).passed_actors, ElementsAre(1, 100));
  }
  // The message owns the mutation: keep it while the pointer is used.
  const Message throttled = RoundTrip(
      codec,
      Barrier{.mutation = std::make_shared<const Mutation>(mutations[3])});
  const auto* throttle =
      std::get<Barrier>(throttled).MutationAs<ThrottleMutation>();
  ASSERT_NE(throttle, nullptr);
  EXPECT_THAT(throttle->rate_limits,
              ElementsAre(Pair(10, std::optional<uint32_t>(500)),
                          Pair(11, std::nullopt),
                          Pair(12, std::optional<uint32_t>(0))));

  UpdateMutation update{
      .dropped_actors = {100, 101},
      .vnode_assignments = {{102, {0, 1, 255}}, {103, {}}},
      .dispatchers = {{1,
                       DispatcherUpdate{.added_downstream_actors = {103, 102},
                                        .removed_downstream_actors = {100},
                                        .vnode_owners = {102, 103, 102}}}},
      .merges = {{2, MergeUpdate{.added_upstream_actors = {103, 102},
                                 .removed_upstream_actors = {101}}}}};
  Message back = RoundTrip(
      codec, Barrier{.epoch = EpochPair{Epoch(9), Epoch(8)},
                     .kind = BarrierKind::kInitial,
                     .mutation = std::make_shared<const Mutation>(update)});
  const Barrier& barrier = std::get<Barrier>(back);
  EXPECT_EQ(barrier.kind, BarrierKind::kInitial);
  EXPECT_EQ(barrier.epoch, (EpochPair{Epoch(9), Epoch(8)}));
  const auto* decoded = barrier.MutationAs<UpdateMutation>();
  ASSERT_NE(decoded, nullptr);
  EXPECT_EQ(decoded->dropped_actors, update.dropped_actors);
  EXPECT_EQ(decoded->vnode_assignments, update.vnode_assignments);
  ASSERT_EQ(decoded->dispatchers.size(), 1u);
  const DispatcherUpdate& d = decoded->dispatchers.at(1);
  EXPECT_THAT(d.added_downstream_actors, ElementsAre(103, 102));
  EXPECT_THAT(d.removed_downstream_actors, ElementsAre(100));
  EXPECT_THAT(d.vnode_owners, ElementsAre(102, 103, 102));
  ASSERT_EQ(decoded->merges.size(), 1u);
  EXPECT_THAT(decoded->merges.at(2).added_upstream_actors,
              ElementsAre(103, 102));
  EXPECT_THAT(decoded->merges.at(2).removed_upstream_actors, ElementsAre(101));

  Message plain =
      RoundTrip(codec, Barrier{.epoch = EpochPair{Epoch(3), Epoch(2)}});
  EXPECT_EQ(std::get<Barrier>(plain).mutation, nullptr);
  EXPECT_EQ(std::get<Barrier>(plain).kind, BarrierKind::kBarrier);
}

TEST(MessageCodecTest, WatermarksRoundTrip) {
  const MessageCodec codec = IntCodec();
  Message back = RoundTrip(codec, Watermark{.column_index = 1,
                                            .type = DataType::kVarchar,
                                            .value = std::string("mark")});
  ASSERT_TRUE(std::holds_alternative<Watermark>(back));
  EXPECT_EQ(std::get<Watermark>(back).DebugString(),
            (Watermark{.column_index = 1,
                       .type = DataType::kVarchar,
                       .value = std::string("mark")})
                .DebugString());
}

// Malformed input is refused with DataLoss naming what is wrong; nothing
// crashes.
TEST(MessageCodecTest, MalformedMessagesAreDataLoss) {
  const MessageCodec codec = IntCodec();
  cluster::proto::StreamMessage wire;
  EXPECT_THAT(codec.Decode(wire),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("no kind")));

  codec.Encode(
      StreamChunk::FromRows({DataType::kInt64, DataType::kVarchar},
                            {Op::kInsert}, {Row{int64_t{1}, std::string("a")}}),
      &wire);
  cluster::proto::StreamMessage bad = wire;
  bad.mutable_chunk()->add_rows("x");
  EXPECT_THAT(codec.Decode(bad), StatusIs(absl::StatusCode::kDataLoss,
                                          HasSubstr("1 ops and 2 rows")));
  bad = wire;
  (*bad.mutable_chunk()->mutable_ops())[0] = 9;
  EXPECT_THAT(codec.Decode(bad),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("unknown op 9")));
  bad = wire;
  bad.mutable_chunk()->set_rows(0, "\x01");
  EXPECT_THAT(codec.Decode(bad), StatusIs(absl::StatusCode::kDataLoss,
                                          HasSubstr("row 0 does not decode")));

  codec.Encode(Barrier{.epoch = EpochPair{Epoch(3), Epoch(2)}}, &wire);
  bad = wire;
  bad.mutable_barrier()->set_kind(7);
  EXPECT_THAT(codec.Decode(bad), StatusIs(absl::StatusCode::kDataLoss,
                                          HasSubstr("unknown kind 7")));
  bad = wire;
  bad.mutable_barrier()->mutable_mutation();
  EXPECT_THAT(codec.Decode(bad),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("no kind")));
  bad = wire;
  (*bad.mutable_barrier()
        ->mutable_mutation()
        ->mutable_update()
        ->mutable_vnode_assignments())[5]
      .add_actors(70000);
  EXPECT_THAT(codec.Decode(bad),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("out of range")));

  codec.Encode(
      Watermark{
          .column_index = 0, .type = DataType::kInt64, .value = int64_t{5}},
      &wire);
  bad = wire;
  bad.mutable_watermark()->set_type(200);
  EXPECT_THAT(codec.Decode(bad), StatusIs(absl::StatusCode::kDataLoss,
                                          HasSubstr("unknown data type 200")));
  bad = wire;
  bad.mutable_watermark()->set_value("");
  EXPECT_THAT(codec.Decode(bad), StatusIs(absl::StatusCode::kDataLoss,
                                          HasSubstr("does not decode")));
}

}  // namespace
}  // namespace backfill
