#include "executor/cluster/barrier_collector.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace backfill {

void BarrierCollector::Run(Ready& ready) {
  for (auto& [report, status] : ready) {
    if (report) report(status);
  }
}

bool BarrierCollector::AdmitLocked(Pending& pending, Ready& ready) {
  if (pending.actors != actors_) {
    ready.emplace_back(
        std::move(pending.report),
        absl::InvalidArgumentError(absl::StrCat(
            "attempt key ", *attempt_, ", barrier ",
            pending.epoch.DebugString(), ": asked to collect it from actors [",
            absl::StrJoin(pending.actors, ", "),
            "], but this worker runs actors [", absl::StrJoin(actors_, ", "),
            "]")));
    return true;
  }
  return CompleteLocked(pending, ready);
}

bool BarrierCollector::CompleteLocked(Pending& pending, Ready& ready) {
  auto it = emitted_.find(pending.epoch.curr.value());
  if (it == emitted_.end() || it->second.size() < actors_.size()) {
    return false;
  }
  emitted_.erase(it);
  ready.emplace_back(std::move(pending.report), absl::OkStatus());
  return true;
}

void BarrierCollector::Begin(uint64_t attempt, std::set<uint32_t> actors) {
  Ready ready;
  {
    MutexLock lock(&mu_);
    attempt_ = attempt;
    actors_ = std::move(actors);
    emitted_.clear();
    waiting_.clear();
    std::vector<Pending> early;
    if (auto it = early_.find(attempt); it != early_.end()) {
      early.swap(it->second);
      early_.erase(it);
      std::erase(early_order_, attempt);
    }
    for (Pending& pending : early) {
      const uint64_t curr = pending.epoch.curr.value();
      if (!AdmitLocked(pending, ready)) {
        waiting_.emplace(curr, std::move(pending));
      }
    }
  }
  Run(ready);
}

void BarrierCollector::End(uint64_t attempt) {
  MutexLock lock(&mu_);
  if (attempt_ != attempt) return;
  attempt_.reset();
  actors_.clear();
  emitted_.clear();
  waiting_.clear();
}

void BarrierCollector::Emitted(uint64_t attempt, uint32_t actor,
                               EpochPair epoch) {
  Ready ready;
  {
    MutexLock lock(&mu_);
    if (attempt_ != attempt || !actors_.contains(actor)) return;
    const uint64_t curr = epoch.curr.value();
    emitted_[curr].insert(actor);
    auto it = waiting_.find(curr);
    if (it != waiting_.end() && CompleteLocked(it->second, ready)) {
      waiting_.erase(it);
    }
  }
  Run(ready);
}

void BarrierCollector::Inject(uint64_t attempt, EpochPair epoch,
                              std::vector<uint32_t> actors, Report report) {
  Ready ready;
  {
    MutexLock lock(&mu_);
    Pending pending{epoch, std::set<uint32_t>(actors.begin(), actors.end()),
                    std::move(report)};
    if (attempt_ != attempt) {
      auto [it, first] = early_.try_emplace(attempt);
      if (first) {
        early_order_.push_back(attempt);
        if (early_order_.size() > kMaxEarlyAttempts) {
          early_.erase(early_order_.front());
          early_order_.erase(early_order_.begin());
        }
      }
      it->second.push_back(std::move(pending));
      return;
    }
    const uint64_t curr = epoch.curr.value();
    // Emissions of earlier barriers no inject waits for cannot be reported.
    for (auto it = emitted_.begin();
         it != emitted_.end() && it->first < curr;) {
      it = waiting_.contains(it->first) ? std::next(it) : emitted_.erase(it);
    }
    if (!AdmitLocked(pending, ready)) {
      waiting_.insert_or_assign(curr, std::move(pending));
    }
  }
  Run(ready);
}

size_t BarrierCollector::pending_injects() const {
  MutexLock lock(&mu_);
  size_t early = 0;
  for (const auto& [key, injects] : early_) early += injects.size();
  return waiting_.size() + early;
}

size_t BarrierCollector::pending_emissions() const {
  MutexLock lock(&mu_);
  return emitted_.size();
}

}  // namespace backfill
