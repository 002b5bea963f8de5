// gMock matchers for absl::Status and absl::StatusOr<T> (Debian's abseil has
// none).
//
//   EXPECT_THAT(store->Get(key), IsOkAndHolds(Eq("v")));
//   EXPECT_THAT(Decode(bytes), StatusIs(absl::StatusCode::kDataLoss,
//                                       HasSubstr("offset 3")));
//   ASSERT_THAT(table->Commit(epoch), IsOk());
#ifndef THIRD_PARTY_ABSL_EXTRAS_STATUS_MATCHERS_H_
#define THIRD_PARTY_ABSL_EXTRAS_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace backfill {
namespace testing {
namespace matchers_internal {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

template <typename StatusOrType, typename InnerMatcher>
class IsOkAndHoldsMatcherImpl
    : public ::testing::MatcherInterface<const StatusOrType&> {
 public:
  using ValueType = typename std::decay_t<StatusOrType>::value_type;
  explicit IsOkAndHoldsMatcherImpl(InnerMatcher inner)
      : inner_(::testing::SafeMatcherCast<const ValueType&>(std::move(inner))) {}

  void DescribeTo(std::ostream* os) const override {
    *os << "is OK and has a value that ";
    inner_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const override {
    *os << "isn't OK or has a value that ";
    inner_.DescribeNegationTo(os);
  }
  bool MatchAndExplain(
      const StatusOrType& actual,
      ::testing::MatchResultListener* listener) const override {
    if (!actual.ok()) {
      *listener << "which has status " << actual.status();
      return false;
    }
    return inner_.MatchAndExplain(*actual, listener);
  }

 private:
  ::testing::Matcher<const ValueType&> inner_;
};

template <typename InnerMatcher>
class IsOkAndHoldsMatcher {
 public:
  explicit IsOkAndHoldsMatcher(InnerMatcher inner) : inner_(std::move(inner)) {}
  template <typename StatusOrType>
  operator ::testing::Matcher<StatusOrType>() const {  // NOLINT
    return ::testing::Matcher<StatusOrType>(
        new IsOkAndHoldsMatcherImpl<const StatusOrType&, InnerMatcher>(inner_));
  }

 private:
  InnerMatcher inner_;
};

class StatusIsMatcher {
 public:
  StatusIsMatcher(absl::StatusCode code,
                  ::testing::Matcher<const std::string&> message)
      : code_(code), message_(std::move(message)) {}

  template <typename T>
  bool MatchAndExplain(const T& value,
                       ::testing::MatchResultListener* listener) const {
    const absl::Status& status = GetStatus(value);
    if (status.code() != code_) {
      *listener << "whose status is " << status;
      return false;
    }
    const std::string message(status.message());
    return message_.MatchAndExplain(message, listener);
  }
  void DescribeTo(std::ostream* os) const {
    *os << "has status code " << absl::StatusCodeToString(code_)
        << " and a message that ";
    message_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "does not have status code " << absl::StatusCodeToString(code_)
        << " or has a message that ";
    message_.DescribeNegationTo(os);
  }

 private:
  absl::StatusCode code_;
  ::testing::Matcher<const std::string&> message_;
};

}  // namespace matchers_internal

// Matches an OK absl::Status or absl::StatusOr<T>.
MATCHER(IsOk, negation ? "is not OK" : "is OK") {
  const absl::Status& status = matchers_internal::GetStatus(arg);
  if (!status.ok()) *result_listener << "whose status is " << status;
  return status.ok();
}

// Matches an OK absl::StatusOr<T> whose value matches `inner`.
template <typename InnerMatcher>
matchers_internal::IsOkAndHoldsMatcher<std::decay_t<InnerMatcher>> IsOkAndHolds(
    InnerMatcher&& inner) {
  return matchers_internal::IsOkAndHoldsMatcher<std::decay_t<InnerMatcher>>(
      std::forward<InnerMatcher>(inner));
}

// Matches a status (or the status of a StatusOr) with the given code and,
// optionally, a message matching `message`.
inline ::testing::PolymorphicMatcher<matchers_internal::StatusIsMatcher>
StatusIs(absl::StatusCode code,
         ::testing::Matcher<const std::string&> message = ::testing::_) {
  return ::testing::MakePolymorphicMatcher(
      matchers_internal::StatusIsMatcher(code, std::move(message)));
}

}  // namespace testing
}  // namespace backfill

#define BACKFILL_ASSERT_OK(expr) ASSERT_THAT(expr, ::backfill::testing::IsOk())
#define BACKFILL_EXPECT_OK(expr) EXPECT_THAT(expr, ::backfill::testing::IsOk())

// ASSERT-style assignment from a StatusOr in tests:
//   BACKFILL_ASSERT_OK_AND_ASSIGN(auto table, StateTable::Create(...));
#define BACKFILL_ASSERT_OK_AND_ASSIGN(lhs, rexpr)                              \
  BACKFILL_ASSERT_OK_AND_ASSIGN_IMPL_(                                         \
      BACKFILL_MATCHERS_CONCAT_(_backfill_status_or_, __LINE__), lhs, rexpr)
#define BACKFILL_MATCHERS_CONCAT_INNER_(a, b) a##b
#define BACKFILL_MATCHERS_CONCAT_(a, b) BACKFILL_MATCHERS_CONCAT_INNER_(a, b)
#define BACKFILL_ASSERT_OK_AND_ASSIGN_IMPL_(status_or, lhs, rexpr)             \
  auto status_or = (rexpr);                                                    \
  ASSERT_TRUE(status_or.ok()) << status_or.status();                           \
  lhs = *std::move(status_or)

#endif  // THIRD_PARTY_ABSL_EXTRAS_STATUS_MATCHERS_H_
