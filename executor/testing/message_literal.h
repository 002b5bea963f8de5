// Readable literals for chunks and barriers in tests, and the inverse
// printer.
//
//   StreamChunk chunk = StreamChunkFromPretty(
//       " I  T\n + 1 foo\n U- 2 bar\n U+ 2 baz\n - 3 .");
//   Barrier barrier = TestBarrier(/*curr=*/2);     // {curr 2, prev 1},
//   checkpoint
//
// FORMAT. The first non-blank line lists the column types, separated by
// white space:
//   I  INT64      i  INT32      h  INT16      F  FLOAT64    f  FLOAT32
//   B  BOOLEAN (t/f/true/false)               T  VARCHAR    x  BYTEA (hex, e.g.
//   00ff) D  DECIMAL (1.5, NaN, Infinity)           dt DATE (2024-01-31) tm
//   TIME (12:30:00[.ffffff])               ts TIMESTAMP
//   (2024-01-31T12:30:00[.ffffff])
// Every further non-blank line is one row. A stream chunk row starts with its
// op: "+" Insert, "-" Delete, "U-" UpdateDelete, "U+" UpdateInsert; a data
// chunk row has no op. Then one token per column: "." is NULL, anything else
// a value of the column's type (VARCHAR: the token itself, so no spaces, and
// "." cannot be a string). An extra last token "D" marks the row invisible
// ("deleted" by a filter); it is recognised by the token count, so a DECIMAL
// column type "D" is never confused with it. Lines starting with "#" are
// comments.
//
// The *FromPretty functions are for literals written in tests: a malformed
// literal aborts with a message (a bug in the test). Parse* return a Status
// instead. *ToPretty prints a chunk back in this format (invisible rows
// included, marked "D"), so Parse(ToPretty(chunk)) == chunk.
#ifndef EXECUTOR_TESTING_MESSAGE_LITERAL_H_
#define EXECUTOR_TESTING_MESSAGE_LITERAL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "executor/barrier.h"
#include "executor/data_chunk.h"
#include "executor/stream_chunk.h"
#include "serde/data_type.h"
#include "serde/datum.h"

namespace backfill {
namespace testing {

// Parses the FORMAT above. InvalidArgument naming the line and token.
absl::StatusOr<StreamChunk> ParseStreamChunk(absl::string_view text);
absl::StatusOr<DataChunk> ParseDataChunk(absl::string_view text);

// As Parse*, aborting the test binary on a malformed literal.
StreamChunk StreamChunkFromPretty(absl::string_view text);
DataChunk DataChunkFromPretty(absl::string_view text);

// The chunk in the FORMAT above (one row per line, invisible rows marked "D").
std::string StreamChunkToPretty(const StreamChunk& chunk);
std::string DataChunkToPretty(const DataChunk& chunk);

// One value in the FORMAT's notation ("." for NULL).
std::string DatumToPretty(const Datum& datum, DataType type);
// A value written in the FORMAT's notation. InvalidArgument if malformed.
absl::StatusOr<Datum> ParsePrettyDatum(absl::string_view token, DataType type);
// The type letter(s) of `type` ("I", "dt", ...).
absl::string_view TypeToPretty(DataType type);

// A barrier at {curr, curr - 1}. REQUIRES: curr >= 1.
Barrier TestBarrier(uint64_t curr, BarrierKind kind = BarrierKind::kCheckpoint,
                    std::shared_ptr<const Mutation> mutation = nullptr);

}  // namespace testing
}  // namespace backfill

#endif  // EXECUTOR_TESTING_MESSAGE_LITERAL_H_
