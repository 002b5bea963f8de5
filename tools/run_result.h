// The result of a run of //tools:backfill (tools/result.proto, the schema
// and the documentation of every field) as the command prints it: a summary
// table and one line of JSON.
//
//   tools::RunResult result;
//   result.set_consistent(true);
//   std::cout << FormatSummaryTable(result);     // one row per field
//   std::cout << RunResultJson(result) << "\n";  // the last line of stdout
//
// Both are rendered from the message's descriptor, so a field added to
// result.proto appears in both without touching this code.
// Thread-safety: pure functions.
#ifndef TOOLS_RUN_RESULT_H_
#define TOOLS_RUN_RESULT_H_

#include <string>

#include "google/protobuf/message.h"
#include "tools/result.pb.h"

namespace backfill {

// Any message as one line of JSON, no newline: fields in field-number order
// under their proto names (snake_case); every field without presence is
// printed, zeros and false included; a field with presence (proto3
// `optional`, a message field) only when set; integers of every width as JSON
// numbers (protobuf's JSON printer quotes 64-bit ones); doubles and floats
// shortest round-trip, non-finite ones as null; enums by name; bytes as
// JSON strings (invalid UTF-8 becomes U+FFFD); repeated fields as arrays.
std::string ProtoJsonLine(const google::protobuf::Message& message);

// ProtoJsonLine(result).
std::string RunResultJson(const tools::RunResult& result);

// A title, a rule, a verdict row (CONSISTENT, INCONSISTENT, INTERRUPTED or
// ERROR), then one row per field of the result in field-number order
// (`error` only when set), labels left-aligned, values right-aligned, every
// line but the title equally long and ending in '\n':
//   Backfill summary (default)
//   ------------------------------
//   verdict              CONSISTENT
//   upstream rows         1,012,345
//   ...
// Labels are the field names with spaces ("_per_second" as "/s", a unit
// suffix "_ms" dropped); counts with thousands separators, "_ms" fields as
// "14.2 ms", `seconds` as a duration ("1m01s"), booleans yes/no, an empty
// string as "--".
std::string FormatSummaryTable(const tools::RunResult& result);

}  // namespace backfill

#endif  // TOOLS_RUN_RESULT_H_
