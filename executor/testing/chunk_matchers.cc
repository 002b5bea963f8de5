#include "executor/testing/chunk_matchers.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/testing/message_literal.h"
#include "serde/row.h"

namespace backfill {

void PrintTo(const DataChunk& chunk, std::ostream* os) {
  *os << "\n" << testing::DataChunkToPretty(chunk);
}
void PrintTo(const StreamChunk& chunk, std::ostream* os) {
  *os << "\n" << testing::StreamChunkToPretty(chunk);
}
void PrintTo(const Barrier& barrier, std::ostream* os) {
  *os << barrier.DebugString();
}
void PrintTo(const Watermark& watermark, std::ostream* os) {
  *os << watermark.DebugString();
}
void PrintTo(Op op, std::ostream* os) { *os << OpName(op); }

namespace testing {
namespace {

// One visible row in literal notation, with its op when `ops` is given.
std::string VisibleRowText(const DataChunk& chunk, const std::vector<Op>* ops,
                           size_t row) {
  std::string out = ops != nullptr ? std::string(OpName((*ops)[row])) : "";
  for (int column = 0; column < chunk.num_columns(); ++column) {
    absl::StrAppend(&out, out.empty() ? "" : " ",
                    DatumToPretty(chunk.column(column).value(row),
                                  chunk.column(column).type()));
  }
  return out;
}

std::vector<size_t> VisibleIndices(const DataChunk& chunk) {
  std::vector<size_t> rows;
  for (size_t row = 0; row < chunk.capacity(); ++row) {
    if (chunk.is_visible(row)) rows.push_back(row);
  }
  return rows;
}

std::string Diff(const DataChunk& expected, const std::vector<Op>* expected_ops,
                 const DataChunk& actual, const std::vector<Op>* actual_ops) {
  std::string problem;
  if (expected.data_types() != actual.data_types()) {
    problem = "column types differ";
  } else {
    const std::vector<size_t> e = VisibleIndices(expected);
    const std::vector<size_t> a = VisibleIndices(actual);
    for (size_t i = 0; i < std::max(e.size(), a.size()) && problem.empty();
         ++i) {
      if (i >= e.size()) {
        problem = absl::StrCat("unexpected extra visible row ", i, ": ",
                               VisibleRowText(actual, actual_ops, a[i]));
        break;
      }
      if (i >= a.size()) {
        problem = absl::StrCat("missing visible row ", i, ": ",
                               VisibleRowText(expected, expected_ops, e[i]));
        break;
      }
      const bool same_op = expected_ops == nullptr ||
                           (*expected_ops)[e[i]] == (*actual_ops)[a[i]];
      if (!same_op || !RowsEqual(expected.RowAt(e[i]), actual.RowAt(a[i]))) {
        problem = absl::StrCat("visible row ", i, " differs: expected \"",
                               VisibleRowText(expected, expected_ops, e[i]),
                               "\", actual \"",
                               VisibleRowText(actual, actual_ops, a[i]), "\"");
      }
    }
  }
  return problem;
}

}  // namespace

std::string StreamChunkDiff(const StreamChunk& expected,
                            const StreamChunk& actual) {
  std::string problem =
      Diff(expected.data(), &expected.ops(), actual.data(), &actual.ops());
  if (problem.empty()) return problem;
  return absl::StrCat(problem, "\nexpected:\n", StreamChunkToPretty(expected),
                      "actual:\n", StreamChunkToPretty(actual));
}

std::string DataChunkDiff(const DataChunk& expected, const DataChunk& actual) {
  std::string problem = Diff(expected, nullptr, actual, nullptr);
  if (problem.empty()) return problem;
  return absl::StrCat(problem, "\nexpected:\n", DataChunkToPretty(expected),
                      "actual:\n", DataChunkToPretty(actual));
}

}  // namespace testing
}  // namespace backfill
