#include "tests/simulation/invariant_oracle.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/backfill/progress_catalog.h"
#include "executor/runtime/demo/dml_source_executor.h"

namespace backfill {
namespace simulation {
namespace {

std::string Rows(const std::vector<Row>& rows, size_t from) {
  std::string out;
  for (size_t i = from; i < rows.size() && i < from + 3; ++i) {
    absl::StrAppend(&out, i > from ? " " : "", RowDebugString(rows[i]));
  }
  return out.empty() ? "absent" : out;
}

}  // namespace

InvariantOracle::ReadTable::ReadTable(TableCatalog table)
    : catalog(std::move(table)), codec(MakeValueCodec(catalog)) {}

absl::StatusOr<std::vector<Row>> InvariantOracle::CommittedRows(
    StateStore& store, const ReadTable& table, VirtualNode vnode) {
  if (!table.codec.ok()) return table.codec.status();
  const TableCatalog& catalog = table.catalog;
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> it = store.NewIterator(
      catalog.table_id, vnode, PkRange::All(),
      store.CommittedEpoch(catalog.table_id));
  if (!it.ok()) return it.status();
  std::vector<Row> rows;
  for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) {
    absl::StatusOr<Row> values = (*table.codec)->Decode((*it)->value());
    if (!values.ok()) return values.status();
    Row row(catalog.columns.size());
    for (size_t i = 0; i < catalog.value_indices.size(); ++i) {
      row[catalog.value_indices[i]] = std::move((*values)[i]);
    }
    rows.push_back(std::move(row));
  }
  if (!(*it)->status().ok()) return (*it)->status();
  return rows;
}

InvariantOracle::InvariantOracle(const StreamingJobOptions& options)
    : options_(options),
      view_catalog_(ViewCatalog(options)),
      offset_table_(
          DmlSourceExecutor::OffsetTableCatalog(options.source_offset_table_id)),
      progress_table_(
          BackfillProgressCatalog(options.upstream, options.progress_table_id)),
      view_table_(view_catalog_),
      view_columns_(ViewColumns(options)),
      model_(options.upstream, options.workload, options.initial_rows) {}

void InvariantOracle::Report(Divergence divergence) {
  if (!divergence_.has_value()) divergence_ = std::move(divergence);
}

void InvariantOracle::BeginAttempt() {
  epoch_count_ = committed_count_;
  in_attempt_ = true;
  last_rows_.reset();
  last_seconds_.reset();
  second_last_seconds_.reset();
}

RateLimit InvariantOracle::RateLimitAfter(uint64_t count) const {
  RateLimit limit = options_.rate_limit;
  uint64_t latest = 0;
  for (const JobAction& action : options_.actions) {
    if (action.kind != JobAction::Kind::kSetRateLimit ||
        action.at_epoch > count || action.at_epoch < latest) {
      continue;
    }
    latest = action.at_epoch;
    limit = action.rate_limit == 0
                ? RateLimit::Disabled()
                : RateLimit::Fixed(static_cast<uint32_t>(action.rate_limit));
  }
  return limit;
}

bool InvariantOracle::PausedAfter(uint64_t count) const {
  // Pause and resume never share an epoch, so the latest one decides.
  uint64_t latest = 0;
  bool paused = false;
  for (const JobAction& action : options_.actions) {
    if (action.at_epoch > count || action.at_epoch < latest) continue;
    if (action.kind == JobAction::Kind::kPause ||
        action.kind == JobAction::Kind::kResume) {
      latest = action.at_epoch;
      paused = action.kind == JobAction::Kind::kPause;
    }
  }
  return paused;
}

void InvariantOracle::OnBarrier(const JobProgress& progress) {
  ++epoch_count_;
  // The rows since the previous barrier were read under the state after
  // that barrier's actions.
  if (last_rows_.has_value() && PausedAfter(epoch_count_ - 1)) {
    ++barrier_checks_;
    if (progress.snapshot_rows != *last_rows_) {
      Report({.what = "snapshot rows read while the job is paused",
              .expected = absl::StrCat(*last_rows_, " snapshot rows"),
              .actual = absl::StrCat(progress.snapshot_rows, " snapshot rows"),
              .detail = absl::StrCat("epoch ", epoch_count_,
                                     " since the view's creation; the "
                                     "timeline pauses the job at epoch ",
                                     epoch_count_ - 1)});
    }
  }
  // The rows of this interval were granted after the previous barrier's
  // injection, which came after the one before was collected. In adaptive
  // mode the limit is the controller's ceiling: the same bound holds.
  const std::optional<uint32_t> rate =
      RateLimitAfter(epoch_count_ - 1).ToOptionalU32();
  if (last_rows_.has_value() && second_last_seconds_.has_value() &&
      rate.has_value() && !PausedAfter(epoch_count_ - 1)) {
    ++barrier_checks_;
    // Up to 6 actors: each share is at most the rate + 1 (rounding), each
    // burst at most a second of its share or one chunk.
    constexpr double kMaxActors = 6;
    const double window = progress.seconds - *second_last_seconds_;
    const double allowed =
        (*rate + kMaxActors) * (window + 1) +
        kMaxActors * std::max<double>(options_.chunk_size, 1);
    const double read =
        static_cast<double>(progress.snapshot_rows - *last_rows_);
    if (read > allowed) {
      Report({.what = "snapshot rows read faster than the job's rate limit",
              .expected = absl::StrCat("at most ", allowed, " rows"),
              .actual = absl::StrCat(read, " rows"),
              .detail = absl::StrCat(
                  "epoch ", epoch_count_,
                  " since the view's creation; the timeline's rate limit ",
                  *rate, " rows/s; window ", window, " s")});
    }
  }
  last_rows_ = progress.snapshot_rows;
  second_last_seconds_ = last_seconds_;
  last_seconds_ = progress.seconds;
}

void InvariantOracle::OnCheckpoint(StateStore& store) {
  // The barrier being checkpointed is the one after the last counted (an
  // attempt's first barrier is never a checkpoint).
  if (in_attempt_) committed_count_ = epoch_count_ + 1;
  CheckCommitted(store, /*finished=*/false);
}

void InvariantOracle::OnJobFinished(StateStore& store) {
  in_attempt_ = false;
  CheckCommitted(store, /*finished=*/true);
}

void InvariantOracle::CheckCommitted(StateStore& store, bool finished) {
  if (divergence_.has_value()) return;
  ++checkpoint_checks_;
  const Epoch epoch = store.CommittedEpoch(options_.upstream.table_id);
  const std::string where = absl::StrCat("checkpoint ", epoch.value());
  auto fail = [&](absl::Status status, absl::string_view what) {
    Report({.step = where,
            .what = absl::StrCat("oracle cannot read ", what),
            .detail = std::string(status.message())});
  };
  // The source's committed offset (row 0; row 1 marks the bulk load).
  absl::StatusOr<std::vector<Row>> offsets =
      CommittedRows(store, offset_table_, 0);
  if (!offsets.ok()) return fail(offsets.status(), "the source offset");
  uint64_t offset = 0;
  for (const Row& row : *offsets) {
    if (row[0] == Datum(int16_t{0})) {
      offset = static_cast<uint64_t>(std::get<int64_t>(row[1]));
    }
  }
  if (offset < model_.offset()) {
    return Report({.step = where,
                   .what = "the committed source offset went back",
                   .expected = absl::StrCat(">= ", model_.offset()),
                   .actual = absl::StrCat(offset)});
  }
  model_.AdvanceTo(offset);

  const TableCatalog& upstream = options_.upstream;
  const size_t pk_size = upstream.pk_indices.size();
  // The model's rows per vnode, in the reference pk order (the map's).
  std::vector<std::vector<const UpstreamModel::Rows::value_type*>> by_vnode(
      upstream.vnode_count);
  for (const auto& entry : model_.rows()) {
    by_vnode[entry.second.vnode].push_back(&entry);
  }
  for (int v = 0; v < upstream.vnode_count; ++v) {
    const VirtualNode vnode = static_cast<VirtualNode>(v);
    absl::StatusOr<std::vector<Row>> progress =
        CommittedRows(store, progress_table_, vnode);
    if (!progress.ok()) return fail(progress.status(), "the progress");
    absl::StatusOr<std::vector<Row>> view =
        CommittedRows(store, view_table_, vnode);
    if (!view.ok()) return fail(view.status(), "the view");
    // Progress row: [vnode, position (pk columns)..., finished, row_count].
    std::string state = "not started";
    bool done = false;
    std::optional<Row> position;
    if (!progress->empty()) {
      const Row& saved = progress->front();
      done = saved[pk_size + 1] == Datum(true);
      if (!done) position = Row(saved.begin() + 1, saved.begin() + 1 + pk_size);
      state = done ? "finished"
                   : absl::StrCat("in progress at ", RowDebugString(*position));
    }
    if (finished && !done) {
      return Report({.step = where,
                     .what = "the job ended with a vnode not finished",
                     .vnode = vnode,
                     .detail = state});
    }
    std::vector<Row> expected;
    expected.reserve(by_vnode[v].size());
    for (const auto* entry : by_vnode[v]) {
      if (!done && !(position.has_value() &&
                     ReferenceComparePk(entry->first, *position,
                                        upstream.pk_orders) <= 0)) {
        continue;
      }
      Row projected;
      projected.reserve(view_columns_.size());
      for (int column : view_columns_) {
        projected.push_back(entry->second.row[column]);
      }
      expected.push_back(std::move(projected));
    }
    // The view's rows in the reference order of their pk (each row's pk
    // taken once).
    std::vector<std::pair<Row, Row>> keyed;
    keyed.reserve(view->size());
    for (Row& row : *view) {
      Row pk = ReferencePk(row, view_catalog_);
      keyed.emplace_back(std::move(pk), std::move(row));
    }
    std::sort(keyed.begin(), keyed.end(),
              [&](const std::pair<Row, Row>& a, const std::pair<Row, Row>& b) {
                return ReferenceComparePk(a.first, b.first,
                                          upstream.pk_orders) < 0;
              });
    std::vector<Row> actual;
    actual.reserve(keyed.size());
    for (auto& [pk, row] : keyed) actual.push_back(std::move(row));
    for (size_t i = 0; i < std::max(expected.size(), actual.size()); ++i) {
      if (i < expected.size() && i < actual.size() &&
          ReferenceRowsIdentical(expected[i], actual[i])) {
        continue;
      }
      return Report({.step = where,
                     .what = finished ? "view != table after the job ended"
                                      : "CONTRACT §5 invariant at a checkpoint",
                     .vnode = vnode,
                     .key = RowDebugString(ReferencePk(
                         i < expected.size() ? expected[i] : actual[i],
                         view_catalog_)),
                     .expected = Rows(expected, i),
                     .actual = Rows(actual, i),
                     .detail = absl::StrCat(
                         "vnode ", state, "; source offset ", offset, "; ",
                         expected.size(), " rows expected, ", actual.size(),
                         " in the view")});
    }
  }
}

}  // namespace simulation
}  // namespace backfill
