// gMock matchers for chunks and messages, with readable diffs, and gtest
// printers for the executor's value types.
//
//   EXPECT_THAT(chunk, ChunkEq(StreamChunkFromPretty(" I\n + 1\n - 2")));
//   EXPECT_THAT(message, MessageIsChunk(ChunkEq(expected)));
//   EXPECT_THAT(message, MessageIsBarrierAt(3));
//
// Chunks are compared *logically*: same column types, and the same sequence
// of visible rows (op and values; values with DatumsEqual, so 1.5 == 1.50 and
// NULL == NULL). Invisible rows and their position do not matter, so a
// marked chunk equals its compacted form. On a mismatch the explanation
// shows both chunks in the literal format and the first differing row.
#ifndef EXECUTOR_TESTING_CHUNK_MATCHERS_H_
#define EXECUTOR_TESTING_CHUNK_MATCHERS_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <variant>

#include "executor/barrier.h"
#include "executor/data_chunk.h"
#include "executor/message.h"
#include "executor/stream_chunk.h"
#include "gmock/gmock.h"
#include "serde/datum.h"

namespace backfill {

// gtest printers (found by argument-dependent lookup).
void PrintTo(const DataChunk& chunk, std::ostream* os);
void PrintTo(const StreamChunk& chunk, std::ostream* os);
void PrintTo(const Barrier& barrier, std::ostream* os);
void PrintTo(const Watermark& watermark, std::ostream* os);
void PrintTo(Op op, std::ostream* os);

namespace testing {

// Empty if `actual` equals `expected` logically (see above), otherwise an
// explanation with both chunks and the first difference.
std::string StreamChunkDiff(const StreamChunk& expected,
                            const StreamChunk& actual);
std::string DataChunkDiff(const DataChunk& expected, const DataChunk& actual);

// Matches a StreamChunk logically equal to `expected`.
MATCHER_P(ChunkEq, expected,
          "equals chunk\n" + ::testing::PrintToString(expected)) {
  const std::string diff = StreamChunkDiff(expected, arg);
  if (!diff.empty()) *result_listener << "\n" << diff;
  return diff.empty();
}

// Matches a DataChunk logically equal to `expected`.
MATCHER_P(DataChunkEq, expected,
          "equals data chunk\n" + ::testing::PrintToString(expected)) {
  const std::string diff = DataChunkDiff(expected, arg);
  if (!diff.empty()) *result_listener << "\n" << diff;
  return diff.empty();
}

// Matches a Message holding a StreamChunk that matches `inner`.
MATCHER_P(MessageIsChunk, inner,
          "is a chunk that " +
              ::testing::DescribeMatcher<const StreamChunk&>(inner)) {
  const auto* chunk = std::get_if<StreamChunk>(&arg);
  if (chunk == nullptr) {
    *result_listener << "which is " << MessageDebugString(arg);
    return false;
  }
  return ::testing::ExplainMatchResult(inner, *chunk, result_listener);
}

// Matches a Message holding a Barrier that matches `inner`.
MATCHER_P(MessageIsBarrierThat, inner,
          "is a barrier that " +
              ::testing::DescribeMatcher<const Barrier&>(inner)) {
  const auto* barrier = std::get_if<Barrier>(&arg);
  if (barrier == nullptr) {
    *result_listener << "which is " << MessageDebugString(arg);
    return false;
  }
  return ::testing::ExplainMatchResult(inner, *barrier, result_listener);
}

// Matches a Message holding any Barrier.
MATCHER(MessageIsBarrier, "is a barrier") {
  if (std::holds_alternative<Barrier>(arg)) return true;
  *result_listener << "which is " << MessageDebugString(arg);
  return false;
}

// Matches a Message holding a Barrier whose epoch.curr is `curr`.
MATCHER_P(MessageIsBarrierAt, curr,
          "is a barrier with epoch.curr " + ::testing::PrintToString(curr)) {
  const auto* barrier = std::get_if<Barrier>(&arg);
  if (barrier == nullptr ||
      barrier->epoch.curr.value() != static_cast<uint64_t>(curr)) {
    *result_listener << "which is " << MessageDebugString(arg);
    return false;
  }
  return true;
}

// Matches a Message holding a Watermark on `column_index` whose value equals
// `value` (a Datum, compared with DatumsEqual).
MATCHER_P2(MessageIsWatermark, column_index, value,
           "is a watermark on column " +
               ::testing::PrintToString(column_index) + " with value " +
               DatumDebugString(Datum(value))) {
  const auto* watermark = std::get_if<Watermark>(&arg);
  if (watermark == nullptr || watermark->column_index != column_index ||
      !DatumsEqual(watermark->value, Datum(value))) {
    *result_listener << "which is " << MessageDebugString(arg);
    return false;
  }
  return true;
}

}  // namespace testing
}  // namespace backfill

#endif  // EXECUTOR_TESTING_CHUNK_MATCHERS_H_
