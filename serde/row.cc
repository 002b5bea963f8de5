#include "serde/row.h"

#include <cassert>
#include <utility>

#include "absl/strings/str_join.h"

namespace backfill {

Row ProjectRow(RowView row, absl::Span<const int> indices) {
  Row out;
  out.reserve(indices.size());
  for (int index : indices) {
    assert(index >= 0 && static_cast<size_t>(index) < row.size());
    out.push_back(row[index]);
  }
  return out;
}

int CompareRows(RowView a, RowView b, absl::Span<const OrderType> orders) {
  assert(a.size() == b.size() && a.size() == orders.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (int c = CompareDatums(a[i], b[i], orders[i]); c != 0) return c;
  }
  return 0;
}

bool RowsEqual(RowView a, RowView b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!DatumsEqual(a[i], b[i])) return false;
  }
  return true;
}

std::string RowDebugString(RowView row) {
  return "(" +
         absl::StrJoin(row, ", ",
                       [](std::string* out, const Datum& datum) {
                         out->append(DatumDebugString(datum));
                       }) +
         ")";
}

void MoveRowIntoColumns(Row& row, absl::Span<std::vector<Datum>> columns) {
  assert(columns.size() == row.size());
  for (size_t c = 0; c < columns.size() && c < row.size(); ++c) {
    columns[c].push_back(std::move(row[c]));
  }
}

}  // namespace backfill
