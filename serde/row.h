// Rows: an owned row (`Row`), a non-owning view (`RowView`), projection and
// comparison under per-column OrderTypes.
//
//   Row row = {int64_t{1}, std::string("a"), Datum()};
//   Row key = ProjectRow(row, {0});                       // {1}
//   int c = CompareRows(key, other, {OrderType::Ascending()});
#ifndef SERDE_ROW_H_
#define SERDE_ROW_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "serde/datum.h"
#include "serde/order_type.h"

namespace backfill {

using Row = std::vector<Datum>;
// Valid while the viewed datums are.
using RowView = absl::Span<const Datum>;

// The datums of `row` at `indices`, in that order.
// REQUIRES: every index < row.size().
Row ProjectRow(RowView row, absl::Span<const int> indices);

// Lexicographic comparison: column i under orders[i]. Returns <0, 0, >0.
// REQUIRES: a.size() == b.size() == orders.size().
int CompareRows(RowView a, RowView b, absl::Span<const OrderType> orders);

// Appends datum c of `row` to (*columns)[c], moving it out of `row` (left
// with moved-from datums): a decoded row onto column-major storage.
// REQUIRES: columns.size() == row.size().
void MoveRowIntoColumns(Row& row, absl::Span<std::vector<Datum>> columns);

// Element-wise DatumsEqual.
bool RowsEqual(RowView a, RowView b);

// "(1, 'a', NULL)".
std::string RowDebugString(RowView row);

}  // namespace backfill

#endif  // SERDE_ROW_H_
