#include "tests/simulation/invariant_oracle.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/backfill/progress_catalog.h"
#include "executor/backfill/snapshot_backfill_executor.h"
#include "executor/runtime/demo/dml_source_executor.h"
#include "executor/stream_chunk.h"
#include "serde/memcmp_codec.h"
#include "serde/vnode_bitmap.h"

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
    StateStore& store, const ReadTable& table, VirtualNode vnode,
    std::optional<Epoch> at) {
  if (!table.codec.ok()) return table.codec.status();
  const TableCatalog& catalog = table.catalog;
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> it = store.NewIterator(
      catalog.table_id, vnode, PkRange::All(),
      at.value_or(store.CommittedEpoch(catalog.table_id)));
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
      snapshot_log_table_(SnapshotLogCatalog(options.upstream,
                                             ViewColumns(options),
                                             options.snapshot_log_table_id)),
      snapshot_meta_table_(SnapshotMetaCatalog(options.snapshot_meta_table_id)),
      view_columns_(ViewColumns(options)),
      model_(options.upstream, options.workload, options.initial_rows) {}

void InvariantOracle::Report(Divergence divergence) {
  if (!divergence_.has_value()) divergence_ = std::move(divergence);
}

void InvariantOracle::BeginAttempt() {
  if (committed_snapshot_phase_.has_value()) {
    ++snapshot_resumes_[*committed_snapshot_phase_];
  }
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

absl::StatusOr<uint64_t> InvariantOracle::SourceOffset(
    StateStore& store, std::optional<Epoch> at) const {
  absl::StatusOr<std::vector<Row>> offsets =
      CommittedRows(store, offset_table_, 0, at);
  if (!offsets.ok()) return offsets.status();
  uint64_t offset = 0;
  for (const Row& row : *offsets) {
    if (row[0] == Datum(int16_t{0})) {
      offset = static_cast<uint64_t>(std::get<int64_t>(row[1]));
    }
  }
  return offset;
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
  absl::StatusOr<uint64_t> committed_offset = SourceOffset(store, std::nullopt);
  if (!committed_offset.ok()) {
    return fail(committed_offset.status(), "the source offset");
  }
  const uint64_t offset = *committed_offset;
  if (offset < model_.offset()) {
    return Report({.step = where,
                   .what = "the committed source offset went back",
                   .expected = absl::StrCat(">= ", model_.offset()),
                   .actual = absl::StrCat(offset)});
  }
  model_.AdvanceTo(offset);
  if (options_.backfill_kind == BackfillKind::kSnapshot) {
    return CheckSnapshotCommitted(store, finished, where);
  }

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

void InvariantOracle::CheckSnapshotCommitted(StateStore& store, bool finished,
                                             const std::string& where) {
  const TableCatalog& upstream = options_.upstream;
  const int vnode_count = upstream.vnode_count;
  auto fail = [&](absl::Status status, absl::string_view what) {
    Report({.step = where,
            .what = absl::StrCat("oracle cannot read ", what),
            .detail = std::string(status.message())});
  };
  const UpstreamModel::PkLess less{&view_catalog_.pk_orders};
  using Keyed = std::map<Row, Row, UpstreamModel::PkLess>;
  // A model row in the view's columns, into `out` by view pk.
  auto add_projected = [&](const UpstreamModel::Entry& entry, Keyed& out) {
    Row projected;
    projected.reserve(view_columns_.size());
    for (int column : view_columns_) projected.push_back(entry.row[column]);
    Row key = ReferencePk(projected, view_catalog_);
    out.emplace(std::move(key), std::move(projected));
  };
  // The union of per-vnode maps over `vnodes`.
  auto merged = [&](const std::vector<Keyed>& by_vnode,
                    const std::vector<VirtualNode>& vnodes) {
    Keyed out(less);
    for (VirtualNode v : vnodes) {
      out.insert(by_vnode[v].begin(), by_vnode[v].end());
    }
    return out;
  };
  auto same = [](const Keyed& a, const Keyed& b) -> std::optional<Row> {
    auto ia = a.begin();
    auto ib = b.begin();
    while (ia != a.end() || ib != b.end()) {
      if (ia == a.end()) return ib->first;
      if (ib == b.end()) return ia->first;
      if (!ReferenceRowsIdentical(ia->first, ib->first)) {
        return a.key_comp()(ia->first, ib->first) ? ia->first : ib->first;
      }
      if (!ReferenceRowsIdentical(ia->second, ib->second)) return ia->first;
      ++ia;
      ++ib;
    }
    return std::nullopt;
  };
  auto report_rows = [&](absl::string_view what, const Keyed& expected,
                         const Keyed& actual, const Row& key,
                         const std::string& detail) {
    auto show = [&](const Keyed& rows) {
      auto it = rows.find(key);
      return it == rows.end() ? std::string("absent")
                              : RowDebugString(it->second);
    };
    Report({.step = where,
            .what = std::string(what),
            .key = RowDebugString(key),
            .expected = show(expected),
            .actual = show(actual),
            .detail = absl::StrCat(detail, "; ", expected.size(),
                                   " rows expected, ", actual.size(),
                                   " found")});
  };

  absl::StatusOr<std::vector<Row>> metas =
      CommittedRows(store, snapshot_meta_table_, 0);
  if (!metas.ok()) return fail(metas.status(), "the snapshot progress");
  absl::StatusOr<std::vector<Row>> log =
      CommittedRows(store, snapshot_log_table_, 0);
  if (!log.ok()) return fail(log.status(), "the snapshot log");
  // The view and the table now per vnode, keyed (the model projected once
  // per check, not once per actor).
  std::vector<Keyed> view(vnode_count, Keyed(less));
  std::vector<Keyed> now_by_vnode(vnode_count, Keyed(less));
  for (const auto& [pk, entry] : model_.rows()) {
    add_projected(entry, now_by_vnode[entry.vnode]);
  }
  for (int v = 0; v < vnode_count; ++v) {
    absl::StatusOr<std::vector<Row>> rows =
        CommittedRows(store, view_table_, static_cast<VirtualNode>(v));
    if (!rows.ok()) return fail(rows.status(), "the view");
    for (Row& row : *rows) {
      Row key = ReferencePk(row, view_catalog_);
      view[v].emplace(std::move(key), std::move(row));
    }
  }
  absl::StatusOr<KeySerde> pk_serde =
      KeySerde::CreateFromColumnTypes(upstream.PkColumnTypes(),
                                      upstream.pk_orders);
  if (!pk_serde.ok()) return fail(pk_serde.status(), "the pk layout");
  std::vector<bool> owned(vnode_count, false);
  constexpr size_t kNotOwned = SIZE_MAX;
  committed_snapshot_phase_.reset();
  for (const Row& meta : *metas) {
    const int meta_phase = std::get<int16_t>(meta[3]);
    if (meta_phase >= 0 && meta_phase <= 2) {
      committed_snapshot_phase_ =
          std::min(committed_snapshot_phase_.value_or(2), meta_phase);
    }
  }
  for (const Row& meta : *metas) {
    const int32_t actor = std::get<int32_t>(meta[0]);
    const std::string detail = absl::StrCat("actor ", actor);
    absl::StatusOr<VnodeBitmap> vnodes =
        VnodeBitmap::Deserialize(std::get<std::string>(meta[1]));
    if (!vnodes.ok() || vnodes->vnode_count() != vnode_count) {
      return Report({.step = where,
                     .what = "a snapshot progress row with a bad vnode bitmap",
                     .detail = detail});
    }
    // The actor's vnodes in reading order, and each one's place in it.
    std::vector<VirtualNode> mine;
    std::vector<size_t> order(vnode_count, kNotOwned);
    for (VirtualNode v : vnodes->set_vnodes()) {
      if (owned[v]) {
        return Report({.step = where,
                       .what = "two snapshot actors own one vnode",
                       .vnode = v,
                       .detail = detail});
      }
      owned[v] = true;
      order[v] = mine.size();
      mine.push_back(v);
    }
    const uint64_t e = static_cast<uint64_t>(std::get<int64_t>(meta[2]));
    const int16_t phase = std::get<int16_t>(meta[3]);
    // The actor's view rows, the table now and its remaining log.
    const Keyed actual = merged(view, mine);
    const Keyed now = merged(now_by_vnode, mine);
    std::vector<const Row*> remaining;
    for (const Row& row : *log) {
      if (std::get<int32_t>(row[0]) == actor) remaining.push_back(&row);
    }
    if (phase == 2 || finished) {
      if (phase != 2) {
        return Report({.step = where,
                       .what = "the job ended with a snapshot actor not joined",
                       .detail = absl::StrCat(detail, ", phase ", phase)});
      }
      if (!remaining.empty()) {
        return Report({.step = where,
                       .what = "a joined snapshot actor has log rows left",
                       .detail = absl::StrCat(detail, ": ", remaining.size())});
      }
      if (std::optional<Row> key = same(now, actual)) {
        return report_rows(finished ? "view != table after the job ended"
                                    : "joined snapshot actor: view != table",
                           now, actual, *key, detail);
      }
      continue;
    }
    // The table at E, from the source offset committed at E.
    auto& at_e = models_at_[e];
    if (at_e == nullptr) {
      absl::StatusOr<uint64_t> offset = SourceOffset(store, Epoch(e));
      if (!offset.ok()) {
        return fail(offset.status(), "the source offset at the snapshot epoch");
      }
      at_e = std::make_unique<UpstreamModel>(upstream, options_.workload,
                                             options_.initial_rows);
      at_e->AdvanceTo(*offset);
    }
    Keyed replayed(less);
    if (phase == 0) {
      // Exactly the table at E up to the position; the log then applies to
      // the whole table at E (both from one pass over the model at E).
      const size_t index = static_cast<size_t>(std::get<int32_t>(meta[4]));
      std::optional<Row> position;
      if (const auto* bytes = std::get_if<std::string>(&meta[5])) {
        absl::StatusOr<Row> decoded = pk_serde->Deserialize(*bytes);
        if (!decoded.ok()) return fail(decoded.status(), "the position");
        position = std::move(*decoded);
      }
      Keyed expected(less);
      for (const auto& [pk, entry] : at_e->rows()) {
        // The vnode's place in the actor's reading order, if it owns it.
        const size_t at = order[entry.vnode];
        if (at == kNotOwned) continue;
        add_projected(entry, replayed);
        const bool sent =
            at < index ||
            (at == index && position.has_value() &&
             ReferenceComparePk(pk, *position, upstream.pk_orders) <= 0);
        if (sent) add_projected(entry, expected);
      }
      if (std::optional<Row> key = same(expected, actual)) {
        return report_rows(
            "snapshot phase: view != the table at E up to the position",
            expected, actual, *key,
            absl::StrCat(detail, ", E ", e, ", vnode index ", index));
      }
    } else {
      replayed = actual;
    }
    // Applying the log left gives the table now.
    for (const Row* row : remaining) {
      const Op op = static_cast<Op>(std::get<int16_t>((*row)[3]));
      Row s2(row->begin() + 4, row->end());
      Row key = ReferencePk(s2, view_catalog_);
      auto it = replayed.find(key);
      if (op == Op::kInsert || op == Op::kUpdateInsert) {
        if (it != replayed.end()) {
          return Report({.step = where,
                         .what = "the snapshot log inserts a present row",
                         .key = RowDebugString(key),
                         .detail = absl::StrCat(detail, ", phase ", phase)});
        }
        replayed.emplace(std::move(key), std::move(s2));
      } else {
        if (it == replayed.end() || !ReferenceRowsIdentical(it->second, s2)) {
          return Report({.step = where,
                         .what = "the snapshot log deletes an absent row",
                         .key = RowDebugString(key),
                         .expected = RowDebugString(s2),
                         .actual = it == replayed.end()
                                       ? std::string("absent")
                                       : RowDebugString(it->second),
                         .detail = absl::StrCat(detail, ", phase ", phase)});
        }
        replayed.erase(it);
      }
    }
    if (std::optional<Row> key = same(now, replayed)) {
      return report_rows(
          phase == 0 ? "snapshot phase: the table at E + the log != the table"
                     : "replay phase: the view + the log left != the table",
          now, replayed, *key,
          absl::StrCat(detail, ", E ", e, ", ", remaining.size(),
                       " log rows left"));
    }
  }
  for (int v = 0; v < vnode_count; ++v) {
    if (owned[v]) continue;
    if (finished) {
      return Report({.step = where,
                     .what = "the job ended with a vnode of no snapshot actor",
                     .vnode = static_cast<VirtualNode>(v)});
    }
    if (!view[v].empty()) {
      return Report({.step = where,
                     .what = "view rows in a vnode no snapshot actor saved",
                     .vnode = static_cast<VirtualNode>(v),
                     .actual = RowDebugString(view[v].begin()->second)});
    }
  }
}

}  // namespace simulation
}  // namespace backfill
