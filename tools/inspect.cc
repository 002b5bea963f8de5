#include "tools/inspect.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "executor/backfill/backfill_state.h"
#include "executor/backfill/progress_catalog.h"
#include "executor/backfill/snapshot_backfill_executor.h"
#include "executor/runtime/demo/bulk_load.h"
#include "serde/row.h"
#include "serde/vnode_bitmap.h"
#include "storage/replicated_state_table.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "third_party/absl_extras/status_macros.h"
#include "tools/progress_display.h"
#include "tools/scenario_spec.h"
#include "tools/snapshot_progress.h"

namespace backfill {
namespace {

// In-progress vnodes shown in the summary before "... and N more".
constexpr size_t kSummaryVnodes = 8;

// Committed rows of `table_id` in each of vnodes [0, vnode_count), by vnode:
// tombstones hide, nothing is decoded.
absl::StatusOr<std::vector<uint64_t>> CountRowsPerVnode(StateStore& store,
                                                        TableId table_id,
                                                        int vnode_count,
                                                        Epoch epoch) {
  std::vector<uint64_t> rows(static_cast<size_t>(std::max(vnode_count, 0)), 0);
  for (int vnode = 0; vnode < vnode_count; ++vnode) {
    BACKFILL_ASSIGN_OR_RETURN(
        std::unique_ptr<StateStoreIterator> it,
        store.NewIterator(table_id, static_cast<VirtualNode>(vnode),
                          PkRange::All(), epoch,
                          ScanOptions{.fill_cache = false}));
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++rows[vnode];
    BACKFILL_RETURN_IF_ERROR(it->status());
  }
  return rows;
}

uint64_t Sum(const std::vector<uint64_t>& values) {
  uint64_t sum = 0;
  for (uint64_t value : values) sum += value;
  return sum;
}

// The snapshot backfill's per-actor progress rows of `table_id` at the
// committed epoch, by actor id (none: an empty vector).
absl::StatusOr<std::vector<SnapshotActorProgress>> ReadSnapshotActors(
    StateStore& store, TableId table_id) {
  const TableCatalog meta = SnapshotMetaCatalog(table_id);
  std::vector<int32_t> column_ids;
  for (const ColumnDesc& column : meta.columns) {
    column_ids.push_back(column.column_id);
  }
  // A read-only view: a replicated instance is never part of a checkpoint.
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<ReplicatedStateTable> table,
                            ReplicatedStateTable::Create(
                                meta, store, VnodeBitmap::All(1), column_ids));
  const Epoch committed = store.CommittedEpoch(table_id);
  BACKFILL_RETURN_IF_ERROR(
      table->InitEpoch(EpochPair{Epoch(committed.value() + 1), committed}));
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<RowIterator> it,
                            table->IterWithVnode(0));
  std::vector<SnapshotActorProgress> actors;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    absl::StatusOr<SnapshotActorProgress> actor =
        DecodeSnapshotProgressRow(Row(it->row().begin(), it->row().end()));
    if (!actor.ok()) {
      return absl::Status(actor.status().code(),
                          absl::StrCat("snapshot progress table ", table_id,
                                       ": ", actor.status().message()));
    }
    actors.push_back(*std::move(actor));
  }
  BACKFILL_RETURN_IF_ERROR(it->status());
  return actors;
}

// The vnodes' states and the actors' summaries from the snapshot
// backfill's rows (JobInspection::snapshot_actors).
absl::Status ApplySnapshotActors(
    const std::vector<SnapshotActorProgress>& actors, int vnode_count,
    JobInspection& inspection) {
  inspection.vnodes.assign(static_cast<size_t>(vnode_count), {});
  for (int v = 0; v < vnode_count; ++v) {
    inspection.vnodes[v].vnode = static_cast<VirtualNode>(v);
  }
  for (const SnapshotActorProgress& actor : actors) {
    absl::StatusOr<VnodeBitmap> owned = VnodeBitmap::Deserialize(actor.vnodes);
    if (!owned.ok() || owned->size() != static_cast<size_t>(vnode_count)) {
      return absl::DataLossError(
          absl::StrCat("snapshot progress of actor ", actor.actor_id,
                       ": its vnodes do not decode as a bitmap of ",
                       vnode_count, " vnodes"));
    }
    const std::vector<VirtualNode> vnodes = owned->ToVector();
    const bool read_all =
        actor.phase != SnapshotBackfillExecutor::Phase::kSnapshot;
    const size_t read =
        read_all ? vnodes.size() : std::min(actor.vnode_index, vnodes.size());
    for (size_t i = 0; i < vnodes.size(); ++i) {
      VnodeInspection& vnode = inspection.vnodes[vnodes[i]];
      if (i < read) {
        vnode.state = VnodeInspection::State::kFinished;
      } else if (i == read && actor.pk.has_value()) {
        vnode.state = VnodeInspection::State::kInProgress;
      }
    }
    inspection.snapshot_actors.push_back(
        SnapshotActorInspection{.actor_id = actor.actor_id,
                                .phase = SnapshotPhaseName(actor.phase),
                                .snapshot_epoch = actor.snapshot_epoch.value(),
                                .vnodes = vnodes.size(),
                                .vnodes_read = read,
                                .snapshot_rows = actor.snapshot_rows,
                                .log_bytes = actor.log_bytes});
    inspection.snapshot_rows += actor.snapshot_rows;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<VnodeInspection>> ReadCommittedVnodes(
    StateStore& store, const JobDefinition& definition) {
  const TableCatalog& upstream = definition.upstream;
  const TableCatalog progress =
      BackfillProgressCatalog(upstream, definition.progress_table_id);
  std::vector<int32_t> column_ids;
  for (const ColumnDesc& column : progress.columns) {
    column_ids.push_back(column.column_id);
  }
  // A read-only view: a replicated instance is never part of a checkpoint.
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<ReplicatedStateTable> table,
      ReplicatedStateTable::Create(
          progress, store, VnodeBitmap::All(progress.vnode_count), column_ids));
  const Epoch committed = store.CommittedEpoch(progress.table_id);
  BACKFILL_RETURN_IF_ERROR(
      table->InitEpoch(EpochPair{Epoch(committed.value() + 1), committed}));
  std::vector<DataType> pk_types;
  for (int index : upstream.pk_indices) {
    pk_types.push_back(upstream.columns[index].type);
  }
  std::vector<VnodeInspection> vnodes;
  for (int v = 0; v < upstream.vnode_count; ++v) {
    const VirtualNode vnode = static_cast<VirtualNode>(v);
    VnodeInspection inspection;
    inspection.vnode = vnode;
    BACKFILL_ASSIGN_OR_RETURN(std::optional<Row> row,
                              table->GetRow(Row{static_cast<int16_t>(vnode)}));
    if (row.has_value()) {
      absl::StatusOr<VnodeProgress> decoded =
          DecodeProgressValue(vnode, RowView(*row).subspan(1), pk_types);
      if (!decoded.ok()) {
        return absl::Status(decoded.status().code(),
                            absl::StrCat("progress table ", progress.table_id,
                                         ": ", decoded.status().message()));
      }
      if (const auto* in_progress = std::get_if<InProgress>(&*decoded)) {
        inspection.state = VnodeInspection::State::kInProgress;
        inspection.position = RowDebugString(in_progress->current_pos);
        inspection.rows = in_progress->row_count;
      } else if (const auto* done = std::get_if<Completed>(&*decoded)) {
        inspection.state = VnodeInspection::State::kFinished;
        inspection.position = RowDebugString(done->current_pos);
        inspection.rows = done->row_count;
      }
    }
    vnodes.push_back(std::move(inspection));
  }
  return vnodes;
}

std::vector<VnodeSnapshotProgress> SnapshotProgressInputs(
    const std::vector<VnodeInspection>& vnodes,
    const std::vector<uint64_t>& bytes) {
  std::vector<VnodeSnapshotProgress> inputs;
  inputs.reserve(vnodes.size());
  for (size_t i = 0; i < vnodes.size(); ++i) {
    inputs.push_back(VnodeSnapshotProgress{
        .estimated_bytes = i < bytes.size() ? bytes[i] : 0,
        .rows_read = vnodes[i].rows,
        .finished = vnodes[i].state == VnodeInspection::State::kFinished});
  }
  return inputs;
}

namespace {

// ", adaptive: target T ms, R rows/s in force" while the job is in adaptive
// mode (its fixed limit, if any, is then the controller's ceiling); empty
// otherwise.
std::string AdaptiveText(const JobState& state) {
  if (!state.adaptive()) return "";
  return absl::StrCat(
      ", adaptive: target ",
      absl::StrFormat("%.1f",
                      absl::ToDoubleMilliseconds(state.adaptive_target)),
      " ms, ", state.adaptive_rows_per_second, " rows/s in force");
}

std::string RateLimitText(const RateLimit& limit) {
  if (limit.is_fixed()) return absl::StrCat(limit.rows_per_second(), " rows/s");
  return "none";
}

std::string OutputColumnNames(const JobDefinition& definition) {
  std::vector<std::string> names;
  for (int index : definition.output_columns) {
    names.push_back(index >= 0 && static_cast<size_t>(index) <
                                      definition.upstream.columns.size()
                        ? definition.upstream.columns[index].name
                        : absl::StrCat("#", index));
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace

const char* VnodeStateName(VnodeInspection::State state) {
  switch (state) {
    case VnodeInspection::State::kNotStarted:
      return "not_started";
    case VnodeInspection::State::kInProgress:
      return "in_progress";
    case VnodeInspection::State::kFinished:
      return "finished";
  }
  return "unknown";
}

absl::StatusOr<JobInspection> InspectStore(StateStore& store,
                                           TableId job_state_table_id,
                                           TableId snapshot_meta_table_id) {
  JobInspection inspection;
  const Epoch committed = store.CommittedEpoch(job_state_table_id);
  inspection.committed_epoch = committed.value();
  for (const auto& [owner, epoch] : store.EpochPins()) {
    inspection.epoch_pins.emplace(owner, epoch.value());
  }
  BACKFILL_ASSIGN_OR_RETURN(std::optional<SavedJob> saved,
                            ReadCommittedJob(store, job_state_table_id));
  if (!saved.has_value()) return inspection;
  inspection.job_found = true;
  inspection.job = *std::move(saved);
  const JobDefinition& definition = inspection.job.definition;
  BACKFILL_ASSIGN_OR_RETURN(
      inspection.initial_load_complete,
      InitialLoadComplete(store, definition.source_offset_table_id));
  BACKFILL_ASSIGN_OR_RETURN(const std::vector<SnapshotActorProgress> actors,
                            ReadSnapshotActors(store, snapshot_meta_table_id));
  if (!actors.empty()) {
    inspection.progress_kind = "snapshot";
    BACKFILL_RETURN_IF_ERROR(ApplySnapshotActors(
        actors, definition.upstream.vnode_count, inspection));
  } else {
    BACKFILL_ASSIGN_OR_RETURN(inspection.vnodes,
                              ReadCommittedVnodes(store, definition));
  }
  for (const VnodeInspection& vnode : inspection.vnodes) {
    switch (vnode.state) {
      case VnodeInspection::State::kNotStarted:
        ++inspection.vnodes_not_started;
        break;
      case VnodeInspection::State::kInProgress:
        ++inspection.vnodes_in_progress;
        break;
      case VnodeInspection::State::kFinished:
        ++inspection.vnodes_finished;
        break;
    }
    inspection.snapshot_rows += vnode.rows;
  }
  if (!actors.empty()) {
    inspection.progress_rows = actors.size();
  } else {
    inspection.progress_rows =
        inspection.vnodes_in_progress + inspection.vnodes_finished;
    if (inspection.progress_rows > 0) inspection.progress_kind = "per_vnode";
  }
  BACKFILL_ASSIGN_OR_RETURN(
      const std::vector<uint64_t> upstream_vnode_rows,
      CountRowsPerVnode(store, definition.upstream.table_id,
                        definition.upstream.vnode_count, committed));
  inspection.upstream_rows = Sum(upstream_vnode_rows);
  BACKFILL_ASSIGN_OR_RETURN(
      const std::vector<uint64_t> view_vnode_rows,
      CountRowsPerVnode(store, definition.view.table_id,
                        definition.view.vnode_count, committed));
  inspection.view_rows = Sum(view_vnode_rows);

  std::vector<VnodeSnapshotProgress> inputs;
  if (!actors.empty()) {
    // The actors count rows, not vnodes: the rows and the prior alone, as
    // the live progress line does for this kind.
    inputs = SnapshotProgressInputs(inspection.vnodes, {});
    if (!inputs.empty()) inputs[0].rows_read = inspection.snapshot_rows;
  } else {
    // Each vnode weighs its exact committed row count (so the bytes per row
    // learnt is about 1), not the store's approximate vnode sizes: RocksDB's
    // estimate of data still in a memtable (replayed from the write-ahead
    // log into a skiplist of random heights at every open) differs from one
    // open to the next, and so did the share printed for the same directory.
    // The rows are counted above anyway.
    inputs = SnapshotProgressInputs(inspection.vnodes, upstream_vnode_rows);
  }
  SnapshotProgress progress({.expected_total_rows = inspection.upstream_rows});
  const SnapshotProgressEstimate estimate = progress.Update(0, inputs);
  inspection.snapshot_percent = estimate.percent;
  inspection.estimated_snapshot_rows = estimate.estimated_total_rows;
  return inspection;
}

absl::StatusOr<JobInspection> InspectDataDirectory(
    const std::string& data_dir) {
  std::error_code error;
  if (!std::filesystem::exists(data_dir, error)) {
    return absl::NotFoundError(absl::StrCat(
        "no data directory at ", data_dir,
        (error ? absl::StrCat(" (", error.message(), ")") : std::string())));
  }
  if (!std::filesystem::is_directory(data_dir, error)) {
    return absl::InvalidArgumentError(
        absl::StrCat(data_dir, " is not a directory"));
  }
  RocksDbStateStoreOptions options;
  options.path = data_dir;
  options.read_only = true;
  // Every open check, and every table file's checksums: a corrupt directory
  // is DataLoss naming the file, not a wrong report.
  options.verify_checksums_on_open = true;
  options.sync_on_checkpoint = true;  // Checks ACKNOWLEDGED_EPOCH; writes none.
  options.block_cache_bytes = 8 << 20;
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<RocksDbStateStore> store,
                            RocksDbStateStore::Open(options));
  BACKFILL_ASSIGN_OR_RETURN(JobInspection inspection,
                            InspectStore(*store, kJobStateTableId));
  inspection.data_dir = data_dir;
  return inspection;
}

std::string FormatInspection(const JobInspection& job, bool list_vnodes) {
  std::string out = absl::StrCat("data directory  ", job.data_dir, "\n",
                                 "committed epoch ", job.committed_epoch, "\n");
  if (!job.job_found) {
    absl::StrAppend(&out,
                    "job             none saved (killed before its first "
                    "checkpoint, or written before the job-state table)\n");
    return out;
  }
  const JobDefinition& definition = job.job.definition;
  const JobState& state = job.job.state;
  absl::StrAppend(&out, "job             ", definition.upstream.name,
                  " (table ", definition.upstream.table_id, ") -> ",
                  definition.view.name, " (table ", definition.view.table_id,
                  "), columns ", OutputColumnNames(definition),
                  "; progress table ", definition.progress_table_id, ", ",
                  definition.upstream.vnode_count, " vnodes\n");
  absl::StrAppend(&out, "state in force  ", state.paused ? "paused" : "running",
                  ", rate limit ", RateLimitText(state.rate_limit),
                  AdaptiveText(state), ", parallelism ", state.parallelism,
                  ", upstream ", state.upstream_stopped ? "stopped" : "live",
                  ", ", state.epochs_since_creation,
                  " epochs since creation\n");
  if (!job.initial_load_complete) {
    // A bulk load cut short leaves rows but no completion marker: the
    // snapshot and row counts below are of a partial table.
    absl::StrAppend(&out, "initial load    incomplete: the upstream table has ",
                    job.upstream_rows,
                    " rows so far; rerun the job to finish the load\n");
  }
  if (!job.snapshot_actors.empty()) {
    for (const SnapshotActorInspection& actor : job.snapshot_actors) {
      absl::StrAppend(&out, "snapshot actor  ", actor.actor_id, ": ",
                      actor.phase, " at epoch ", actor.snapshot_epoch, ", ",
                      actor.vnodes_read, " of ", actor.vnodes, " vnodes read, ",
                      actor.snapshot_rows, " rows sent, ", actor.log_bytes,
                      " log bytes to replay\n");
    }
  }
  absl::StrAppend(&out, "rows            upstream ", job.upstream_rows,
                  ", view ", job.view_rows, ", snapshot rows sent ",
                  job.snapshot_rows, "\n");
  absl::StrAppend(&out, "snapshot        ",
                  absl::StrFormat("%.1f%%", job.snapshot_percent), " read (",
                  job.snapshot_rows, " of ~", job.estimated_snapshot_rows,
                  " rows)\n");
  for (const auto& [owner, epoch] : job.epoch_pins) {
    absl::StrAppend(&out, "epoch pin       ", owner, " at epoch ", epoch, "\n");
  }
  const bool done = job.vnodes_finished == job.vnodes.size();
  absl::StrAppend(&out, "vnodes          ", job.vnodes_finished, " finished, ",
                  job.vnodes_in_progress, " in progress, ",
                  job.vnodes_not_started, " not started",
                  done ? " (backfill complete)" : "", "\n");
  if (!list_vnodes && job.vnodes_in_progress > 0) {
    std::vector<std::string> shown;
    for (const VnodeInspection& vnode : job.vnodes) {
      if (vnode.state != VnodeInspection::State::kInProgress) continue;
      if (shown.size() == kSummaryVnodes) {
        shown.push_back(absl::StrCat("... and ",
                                     job.vnodes_in_progress - kSummaryVnodes,
                                     " more (--vnodes lists every vnode)"));
        break;
      }
      // A snapshot backfill's actors keep no readable position per vnode.
      shown.push_back(job.progress_kind == "snapshot"
                          ? absl::StrCat("vnode ", vnode.vnode)
                          : absl::StrCat("vnode ", vnode.vnode, " at ",
                                         vnode.position, " (", vnode.rows,
                                         " rows)"));
    }
    absl::StrAppend(&out, "in progress     ", absl::StrJoin(shown, "; "), "\n");
  }
  if (list_vnodes) {
    for (const VnodeInspection& vnode : job.vnodes) {
      absl::StrAppend(&out, "  vnode ", vnode.vnode, ": ",
                      VnodeStateName(vnode.state));
      if (vnode.state != VnodeInspection::State::kNotStarted &&
          job.progress_kind != "snapshot") {
        absl::StrAppend(&out, " at ", vnode.position, ", ", vnode.rows,
                        " rows");
      }
      out += "\n";
    }
  }
  return out;
}

std::string InspectionJson(const JobInspection& job, bool list_vnodes) {
  JsonObject object;
  object.Add("data_dir", job.data_dir)
      .Add("committed_epoch", job.committed_epoch)
      .Add("job_found", job.job_found)
      .Add("progress_kind", job.progress_kind)
      .Add("vnode_count", static_cast<uint64_t>(job.vnodes.size()))
      .Add("vnodes_finished", job.vnodes_finished)
      .Add("vnodes_in_progress", job.vnodes_in_progress)
      .Add("vnodes_not_started", job.vnodes_not_started)
      .Add("snapshot_percent", job.snapshot_percent)
      .Add("snapshot_rows", job.snapshot_rows)
      .Add("estimated_snapshot_rows", job.estimated_snapshot_rows)
      .Add("upstream_rows", job.upstream_rows)
      .Add("view_rows", job.view_rows)
      .Add("progress_rows", job.progress_rows);
  if (job.job_found) {
    const JobDefinition& definition = job.job.definition;
    const JobState& state = job.job.state;
    object.Add("upstream_table", definition.upstream.name)
        .Add("view_table", definition.view.name)
        .Add("upstream_table_id",
             static_cast<uint64_t>(definition.upstream.table_id))
        .Add("view_table_id", static_cast<uint64_t>(definition.view.table_id))
        .Add("progress_table_id",
             static_cast<uint64_t>(definition.progress_table_id))
        .Add("output_columns", OutputColumnNames(definition))
        .Add("initial_load_complete", job.initial_load_complete)
        .Add("paused", state.paused);
    if (state.rate_limit.is_fixed()) {
      object.Add("rate_limit",
                 static_cast<uint64_t>(state.rate_limit.rows_per_second()));
    } else {
      object.AddNull("rate_limit");
    }
    if (state.adaptive()) {
      object
          .Add("adaptive_target_ms",
               absl::ToDoubleMilliseconds(state.adaptive_target))
          .Add("adaptive_rows_per_second",
               static_cast<uint64_t>(state.adaptive_rows_per_second));
    } else {
      object.AddNull("adaptive_target_ms").AddNull("adaptive_rows_per_second");
    }
    object.Add("parallelism", static_cast<uint64_t>(state.parallelism))
        .Add("upstream_stopped", state.upstream_stopped)
        .Add("epochs_since_creation", state.epochs_since_creation);
  }
  std::string json = object.ToString();
  std::vector<std::string> pins;
  for (const auto& [owner, epoch] : job.epoch_pins) {
    pins.push_back(absl::StrCat(JsonQuote(owner), ":", epoch));
  }
  json.pop_back();  // The closing brace.
  absl::StrAppend(&json, ",\"epoch_pins\":{", absl::StrJoin(pins, ","), "}");
  if (!job.snapshot_actors.empty()) {
    std::vector<std::string> actors;
    for (const SnapshotActorInspection& actor : job.snapshot_actors) {
      actors.push_back(JsonObject()
                           .Add("actor_id", actor.actor_id)
                           .Add("phase", actor.phase)
                           .Add("snapshot_epoch", actor.snapshot_epoch)
                           .Add("vnodes", actor.vnodes)
                           .Add("vnodes_read", actor.vnodes_read)
                           .Add("snapshot_rows", actor.snapshot_rows)
                           .Add("log_bytes", actor.log_bytes)
                           .ToString());
    }
    absl::StrAppend(&json, ",\"snapshot_actors\":[", absl::StrJoin(actors, ","),
                    "]");
  }
  json += "}";
  if (!list_vnodes) return json;
  std::vector<std::string> vnodes;
  for (const VnodeInspection& vnode : job.vnodes) {
    vnodes.push_back(JsonObject()
                         .Add("vnode", static_cast<uint64_t>(vnode.vnode))
                         .Add("state", VnodeStateName(vnode.state))
                         .Add("position", vnode.position)
                         .Add("rows", vnode.rows)
                         .ToString());
  }
  json.pop_back();  // The closing brace.
  absl::StrAppend(&json, ",\"vnodes\":[", absl::StrJoin(vnodes, ","), "]}");
  return json;
}

}  // namespace backfill
