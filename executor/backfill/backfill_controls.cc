#include "executor/backfill/backfill_controls.h"

#include <algorithm>
#include <optional>

namespace backfill {
namespace {

MonitoredRateLimiter::Observers GaugeObserver(const BackfillMetrics& metrics) {
  MonitoredRateLimiter::Observers observers;
  observers.on_limit =
      [gauge = metrics.rate_limit_rows_per_second](double rows_per_second) {
        gauge.Set(rows_per_second);
      };
  return observers;
}

RateLimiter::Options LimiterOptions(uint32_t chunk_size) {
  RateLimiter::Options options;
  options.max_burst = std::max<uint32_t>(chunk_size, 2);
  return options;
}

}  // namespace

BackfillControls::BackfillControls(const Options& options,
                                   const BackfillMetrics& metrics)
    : actor_id_(options.actor_id),
      fragment_id_(options.fragment_id),
      limiter_(options.clock != nullptr ? *options.clock : Clock::Real(),
               options.rate_limit, LimiterOptions(options.chunk_size),
               GaugeObserver(metrics)) {}

void BackfillControls::ApplyFirstBarrier(const Barrier& barrier) {
  const AddMutation* add = barrier.MutationAs<AddMutation>();
  global_pause_ = add != nullptr && add->pause;
  backfill_paused_ =
      add != nullptr && add->backfill_fragments_to_pause.contains(fragment_id_);
}

bool BackfillControls::ApplyMutation(const Barrier& barrier) {
  if (barrier.MutationAs<PauseMutation>() != nullptr) global_pause_ = true;
  if (barrier.MutationAs<ResumeMutation>() != nullptr) global_pause_ = false;
  if (const auto* start = barrier.MutationAs<StartFragmentBackfillMutation>()) {
    if (start->fragment_ids.contains(fragment_id_)) backfill_paused_ = false;
  }
  const auto* throttle = barrier.MutationAs<ThrottleMutation>();
  if (throttle == nullptr) return false;
  std::optional<std::optional<uint32_t>> entry;
  if (auto it = throttle->actor_rate_limits.find(actor_id_);
      it != throttle->actor_rate_limits.end()) {
    entry = it->second;
  } else if (auto it = throttle->rate_limits.find(fragment_id_);
             it != throttle->rate_limits.end()) {
    entry = it->second;
  }
  if (!entry.has_value()) return false;
  const RateLimit limit = RateLimit::FromOptionalU32(*entry);
  if (limit == limiter_.limit()) return false;
  limiter_.Update(limit);
  return true;
}

bool BackfillControls::paused() const {
  return global_pause_ || backfill_paused_ || limiter_.limit().is_paused();
}

}  // namespace backfill
