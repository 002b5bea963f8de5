#include "executor/runtime/streaming_job_options.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

const char* BackfillKindName(BackfillKind kind) {
  switch (kind) {
    case BackfillKind::kArrangement:
      return "arrangement";
    case BackfillKind::kNoShuffle:
      return "no_shuffle";
    case BackfillKind::kSnapshot:
      return "snapshot";
  }
  return "unknown";
}

bool BackfillKindRescales(BackfillKind kind) {
  return kind == BackfillKind::kArrangement;
}

absl::Status ValidateStreamingJobOptions(const StreamingJobOptions& options) {
  BACKFILL_RETURN_IF_ERROR(ValidateTableCatalog(options.upstream));
  const uint32_t vnode_count =
      static_cast<uint32_t>(options.upstream.vnode_count);
  if (options.parallelism < 1 || options.parallelism > vnode_count) {
    return absl::InvalidArgumentError(
        absl::StrCat("parallelism = ", options.parallelism, " must be in [1, ",
                     vnode_count, "] (the vnode count)"));
  }
  for (int column : options.output_columns) {
    if (column < 0 ||
        column >= static_cast<int>(options.upstream.columns.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("output column ", column, " is out of range"));
    }
  }
  if (options.overrides.parallelism.has_value() &&
      (*options.overrides.parallelism < 1 ||
       *options.overrides.parallelism > vnode_count)) {
    return absl::InvalidArgumentError(
        absl::StrCat("overrides.parallelism = ", *options.overrides.parallelism,
                     " must be in [1, ", vnode_count, "] (the vnode count)"));
  }
  if (options.rate_limit.is_paused() ||
      (options.overrides.rate_limit.has_value() &&
       options.overrides.rate_limit->is_paused())) {
    return absl::InvalidArgumentError(
        "the job-wide rate limit must not be Pause (pausing is an action)");
  }
  if (options.adaptive_target_barrier_latency < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "adaptive_target_barrier_latency = ",
        absl::FormatDuration(options.adaptive_target_barrier_latency),
        " must not be negative"));
  }
  if (options.overrides.adaptive_target.has_value() &&
      *options.overrides.adaptive_target < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("overrides.adaptive_target = ",
                     absl::FormatDuration(*options.overrides.adaptive_target),
                     " must not be negative"));
  }
  if (options.barrier_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "barrier_timeout = ", absl::FormatDuration(options.barrier_timeout),
        " must be > 0"));
  }
  if (options.channel_capacity < 1) {
    return absl::InvalidArgumentError("channel_capacity = 0 must be >= 1");
  }
  if (options.upstream_buffer_budget_bytes > kMaxUpstreamBufferBudgetBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "upstream_buffer_budget_bytes = ", options.upstream_buffer_budget_bytes,
        " is above ", kMaxUpstreamBufferBudgetBytes, " (64 GiB)"));
  }
  BACKFILL_RETURN_IF_ERROR(ValidateJobActions(options.actions));
  if (options.snapshot_log_budget_bytes > kMaxUpstreamBufferBudgetBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "snapshot_log_budget_bytes = ", options.snapshot_log_budget_bytes,
        " is above ", kMaxUpstreamBufferBudgetBytes, " (64 GiB)"));
  }
  for (size_t i = 0; i < options.actions.size(); ++i) {
    const JobAction& action = options.actions[i];
    if (action.kind == JobAction::Kind::kRescale &&
        !BackfillKindRescales(options.backfill_kind)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "actions[", i, "] (", JobActionDebugString(action), "): a ",
          BackfillKindName(options.backfill_kind),
          " backfill cannot be rescaled (",
          options.backfill_kind == BackfillKind::kSnapshot
              ? "each actor keeps its own log and snapshot position for its "
                "vnodes)"
              : "one position per actor, its vnodes fixed to its upstream "
                "writer's)"));
    }
    if (action.kind == JobAction::Kind::kRescale &&
        action.parallelism > vnode_count) {
      return absl::InvalidArgumentError(absl::StrCat(
          "actions[", i, "] (", JobActionDebugString(action),
          "): the parallelism must be in [1, ", vnode_count,
          "] (the upstream's vnode count)"));
    }
  }
  const TableId ids[] = {options.upstream.table_id,
                         options.view_table_id,
                         options.progress_table_id,
                         options.source_offset_table_id,
                         options.job_state_table_id,
                         options.snapshot_log_table_id,
                         options.snapshot_meta_table_id};
  const size_t checked =
      options.backfill_kind == BackfillKind::kSnapshot ? 7 : 5;
  for (size_t i = 0; i < checked; ++i) {
    for (size_t j = i + 1; j < checked; ++j) {
      if (ids[i] == ids[j]) {
        return absl::InvalidArgumentError(
            absl::StrCat("table id ", ids[i],
                         " is used twice (upstream, view, progress, "
                         "source offset, job state and, for a snapshot "
                         "backfill, its log and progress tables must "
                         "differ)"));
      }
    }
  }
  return absl::OkStatus();
}

std::vector<int> JobOutputColumns(const StreamingJobOptions& options) {
  if (!options.output_columns.empty()) return options.output_columns;
  std::vector<int> all;
  for (size_t i = 0; i < options.upstream.columns.size(); ++i) {
    all.push_back(static_cast<int>(i));
  }
  return all;
}

std::vector<int> ViewColumns(const StreamingJobOptions& options) {
  std::vector<int> columns = JobOutputColumns(options);
  for (int pk : options.upstream.pk_indices) {
    if (std::find(columns.begin(), columns.end(), pk) == columns.end()) {
      columns.push_back(pk);
    }
  }
  return columns;
}

TableCatalog ViewCatalog(const StreamingJobOptions& options) {
  const TableCatalog& upstream = options.upstream;
  const std::vector<int> columns = ViewColumns(options);
  TableCatalog view;
  view.table_id = options.view_table_id;
  view.name = absl::StrCat(upstream.name, "_view");
  for (size_t i = 0; i < columns.size(); ++i) {
    ColumnDesc column = upstream.columns[columns[i]];
    column.column_id = static_cast<int32_t>(i + 1);
    view.columns.push_back(column);
  }
  auto position = [&](int s1) {
    return static_cast<int>(std::find(columns.begin(), columns.end(), s1) -
                            columns.begin());
  };
  for (size_t i = 0; i < upstream.pk_indices.size(); ++i) {
    view.pk_indices.push_back(position(upstream.pk_indices[i]));
    view.pk_orders.push_back(upstream.pk_orders[i]);
  }
  for (int column : upstream.dist_key_indices) {
    view.dist_key_indices.push_back(position(column));
  }
  view.vnode_count = upstream.vnode_count;
  view.value_encoding = ValueEncoding::kPositional;
  for (size_t i = 0; i < columns.size(); ++i) {
    view.value_indices.push_back(static_cast<int>(i));
  }
  return view;
}

JobDefinition JobDefinitionOf(const StreamingJobOptions& options) {
  JobDefinition definition;
  definition.upstream = options.upstream;
  definition.view = ViewCatalog(options);
  definition.output_columns = JobOutputColumns(options);
  definition.progress_table_id = options.progress_table_id;
  definition.source_offset_table_id = options.source_offset_table_id;
  return definition;
}

uint32_t EffectiveChunkSize(const StreamingJobOptions& options) {
  return options.chunk_size == 0 ? kDefaultChunkSize : options.chunk_size;
}

uint32_t AdaptiveFloorRowsPerSecond(const StreamingJobOptions& options) {
  if (options.adaptive_min_rows_per_second > 0) {
    return options.adaptive_min_rows_per_second;
  }
  const uint32_t chunk = EffectiveChunkSize(options);
  const double seconds =
      4 * absl::ToDoubleSeconds(options.barrier_interval);
  if (!(seconds > 0)) return chunk;
  const double rate = chunk / seconds;
  if (rate >= UINT32_MAX) return UINT32_MAX;
  return std::max<uint32_t>(1, static_cast<uint32_t>(rate));
}

}  // namespace backfill
