#include "ratelimit/rate_limit.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace backfill {

std::string RateLimit::ToString() const {
  switch (kind_) {
    case Kind::kDisabled:
      return "disabled";
    case Kind::kPause:
      return "pause";
    case Kind::kFixed:
      break;
  }
  return absl::StrCat("fixed(", rows_per_second_, " rows/s)");
}

double RateLimit::ToMetricValue() const {
  switch (kind_) {
    case Kind::kDisabled:
      return std::numeric_limits<double>::infinity();
    case Kind::kPause:
      return 0.0;
    case Kind::kFixed:
      break;
  }
  return static_cast<double>(rows_per_second_);
}

}  // namespace backfill
