// Status propagation macros that Debian's abseil (20220623) lacks.
//
//   absl::StatusOr<Row> ReadRow(...);
//   absl::Status Copy(...) {
//     BACKFILL_ASSIGN_OR_RETURN(Row row, ReadRow(...));
//     BACKFILL_RETURN_IF_ERROR(Write(row));
//     return absl::OkStatus();
//   }
//
// The macros are prefixed so that they never collide with another project's
// RETURN_IF_ERROR when teams link our targets into their binaries.
#ifndef THIRD_PARTY_ABSL_EXTRAS_STATUS_MACROS_H_
#define THIRD_PARTY_ABSL_EXTRAS_STATUS_MACROS_H_

#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace backfill {
namespace status_internal {

inline const absl::Status& AsStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& AsStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

}  // namespace status_internal
}  // namespace backfill

#define BACKFILL_STATUS_CONCAT_INNER_(a, b) a##b
#define BACKFILL_STATUS_CONCAT_(a, b) BACKFILL_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status or absl::StatusOr<T>); returns its status
// from the enclosing function if it is not OK.
#define BACKFILL_RETURN_IF_ERROR(expr)                                         \
  do {                                                                         \
    if (auto _backfill_status = (expr); ABSL_PREDICT_FALSE(                    \
            !::backfill::status_internal::AsStatus(_backfill_status).ok())) {  \
      return ::backfill::status_internal::AsStatus(_backfill_status);          \
    }                                                                          \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns the status from
// the enclosing function, otherwise move-assigns the value to `lhs`, which may
// be a declaration (`auto x`) or an existing lvalue.
#define BACKFILL_ASSIGN_OR_RETURN(lhs, rexpr)                                  \
  BACKFILL_ASSIGN_OR_RETURN_IMPL_(                                             \
      BACKFILL_STATUS_CONCAT_(_backfill_status_or_, __LINE__), lhs, rexpr)

#define BACKFILL_ASSIGN_OR_RETURN_IMPL_(status_or, lhs, rexpr)                 \
  auto status_or = (rexpr);                                                    \
  if (ABSL_PREDICT_FALSE(!status_or.ok())) {                                   \
    return std::move(status_or).status();                                      \
  }                                                                            \
  lhs = *std::move(status_or)

#endif  // THIRD_PARTY_ABSL_EXTRAS_STATUS_MACROS_H_
