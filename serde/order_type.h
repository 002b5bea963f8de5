// OrderType: the sort order of one key column, direction x NULL placement.
//
//   OrderType asc = OrderType::Ascending();            // NULLS LAST
//   OrderType desc = OrderType::Descending();          // NULLS FIRST
//   OrderType odd{OrderDirection::kAscending, NullsOrder::kFirst};
//
// The defaults follow PostgreSQL: ASC sorts NULLs last, DESC sorts them first
// (NULL behaves as the largest value in both cases).
#ifndef SERDE_ORDER_TYPE_H_
#define SERDE_ORDER_TYPE_H_

#include <string>

namespace backfill {

enum class OrderDirection : uint8_t { kAscending = 0, kDescending = 1 };
enum class NullsOrder : uint8_t { kFirst = 0, kLast = 1 };

struct OrderType {
  OrderDirection direction = OrderDirection::kAscending;
  NullsOrder nulls = NullsOrder::kLast;

  static constexpr OrderType Ascending() {
    return {OrderDirection::kAscending, NullsOrder::kLast};
  }
  static constexpr OrderType Descending() {
    return {OrderDirection::kDescending, NullsOrder::kFirst};
  }
  static constexpr OrderType AscendingNullsFirst() {
    return {OrderDirection::kAscending, NullsOrder::kFirst};
  }
  static constexpr OrderType DescendingNullsLast() {
    return {OrderDirection::kDescending, NullsOrder::kLast};
  }

  bool is_descending() const {
    return direction == OrderDirection::kDescending;
  }
  bool nulls_first() const { return nulls == NullsOrder::kFirst; }

  // "ASC NULLS LAST", "DESC NULLS FIRST", ...
  std::string DebugString() const {
    return std::string(is_descending() ? "DESC" : "ASC") +
           (nulls_first() ? " NULLS FIRST" : " NULLS LAST");
  }
  friend bool operator==(OrderType a, OrderType b) {
    return a.direction == b.direction && a.nulls == b.nulls;
  }
  friend bool operator!=(OrderType a, OrderType b) { return !(a == b); }
};

}  // namespace backfill

#endif  // SERDE_ORDER_TYPE_H_
