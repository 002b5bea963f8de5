#include "executor/runtime/job_state_table.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "executor/runtime/job_state.pb.h"
#include "serde/vnode_bitmap.h"
#include "storage/catalog.pb.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

constexpr int32_t kFormatVersion = 1;
// Column positions of the row (see the format in the header).
enum Column : int {
  kId = 0,
  kFormatVersionColumn,
  kDefinition,
  kPaused,
  kRateLimit,
  kParallelism,
  kUpstreamStopped,
  kEpochsSinceCreation,
  kAdaptiveTargetMicros,
  kAdaptiveRowsPerSecond,
  kNumColumns,
};

std::string EncodeDefinition(const JobDefinition& definition) {
  proto::JobDefinition message;
  *message.mutable_upstream() = TableCatalogToProto(definition.upstream);
  *message.mutable_view() = TableCatalogToProto(definition.view);
  for (int column : definition.output_columns)
    message.add_output_columns(column);
  message.set_progress_table_id(definition.progress_table_id);
  message.set_source_offset_table_id(definition.source_offset_table_id);
  std::string bytes;
  message.SerializeToString(&bytes);
  return bytes;
}

absl::StatusOr<JobDefinition> DecodeDefinition(const std::string& bytes) {
  proto::JobDefinition message;
  if (!message.ParseFromString(bytes)) {
    return absl::DataLossError("the definition does not parse");
  }
  JobDefinition definition;
  absl::StatusOr<TableCatalog> upstream =
      TableCatalogFromProto(message.upstream());
  if (!upstream.ok()) {
    return absl::DataLossError(
        absl::StrCat("the upstream catalog: ", upstream.status().message()));
  }
  absl::StatusOr<TableCatalog> view = TableCatalogFromProto(message.view());
  if (!view.ok()) {
    return absl::DataLossError(
        absl::StrCat("the view catalog: ", view.status().message()));
  }
  definition.upstream = *std::move(upstream);
  definition.view = *std::move(view);
  definition.output_columns.assign(message.output_columns().begin(),
                                   message.output_columns().end());
  definition.progress_table_id = message.progress_table_id();
  definition.source_offset_table_id = message.source_offset_table_id();
  return definition;
}

Row EncodeRow(const JobDefinition& definition, const JobState& state) {
  Row row(kNumColumns);
  row[kId] = int16_t{0};
  row[kFormatVersionColumn] = kFormatVersion;
  row[kDefinition] = EncodeDefinition(definition);
  row[kPaused] = state.paused;
  if (state.rate_limit.is_fixed()) {
    row[kRateLimit] = static_cast<int64_t>(state.rate_limit.rows_per_second());
  }
  row[kParallelism] = static_cast<int32_t>(state.parallelism);
  row[kUpstreamStopped] = state.upstream_stopped;
  row[kEpochsSinceCreation] = static_cast<int64_t>(state.epochs_since_creation);
  if (state.adaptive()) {
    row[kAdaptiveTargetMicros] =
        absl::ToInt64Microseconds(state.adaptive_target);
    if (state.adaptive_rows_per_second > 0) {
      row[kAdaptiveRowsPerSecond] =
          static_cast<int64_t>(state.adaptive_rows_per_second);
    }
  }
  return row;
}

template <typename T>
absl::StatusOr<T> Field(const Row& row, int column, const char* name) {
  if (static_cast<int>(row.size()) <= column) {
    return absl::DataLossError(absl::StrCat("no column ", name));
  }
  const T* value = std::get_if<T>(&row[column]);
  if (value == nullptr) {
    return absl::DataLossError(absl::StrCat(name, " = ",
                                            DatumDebugString(row[column]),
                                            " has the wrong type or is NULL"));
  }
  return *value;
}

// The adaptive mode's columns (NULL, NULL when not adaptive).
absl::Status DecodeAdaptive(const Row& row, JobState& state) {
  if (static_cast<int>(row.size()) <= kAdaptiveRowsPerSecond) {
    return absl::DataLossError("no column adaptive_target_us");
  }
  if (!IsNull(row[kAdaptiveTargetMicros])) {
    BACKFILL_ASSIGN_OR_RETURN(
        int64_t micros,
        Field<int64_t>(row, kAdaptiveTargetMicros, "adaptive_target_us"));
    if (micros < 1) {
      return absl::DataLossError(
          absl::StrCat("adaptive_target_us = ", micros, " is not >= 1"));
    }
    state.adaptive_target = absl::Microseconds(micros);
  }
  if (!IsNull(row[kAdaptiveRowsPerSecond])) {
    BACKFILL_ASSIGN_OR_RETURN(
        int64_t rate, Field<int64_t>(row, kAdaptiveRowsPerSecond,
                                     "adaptive_rows_per_second"));
    if (rate < 1 || rate > UINT32_MAX || !state.adaptive()) {
      return absl::DataLossError(absl::StrCat(
          "adaptive_rows_per_second = ", rate,
          state.adaptive() ? " is out of range [1, 2^32)"
                           : " without adaptive_target_us"));
    }
    state.adaptive_rows_per_second = static_cast<uint32_t>(rate);
  }
  return absl::OkStatus();
}

absl::StatusOr<SavedJob> DecodeRowContent(const Row& row) {
  BACKFILL_ASSIGN_OR_RETURN(
      int32_t version,
      Field<int32_t>(row, kFormatVersionColumn, "format_version"));
  if (version != kFormatVersion) {
    return absl::DataLossError(
        absl::StrCat("format_version = ", version, " is not ", kFormatVersion));
  }
  SavedJob saved;
  BACKFILL_ASSIGN_OR_RETURN(std::string definition,
                            Field<std::string>(row, kDefinition, "definition"));
  BACKFILL_ASSIGN_OR_RETURN(saved.definition, DecodeDefinition(definition));
  BACKFILL_ASSIGN_OR_RETURN(saved.state.paused,
                            Field<bool>(row, kPaused, "paused"));
  if (!IsNull(row[kRateLimit])) {
    BACKFILL_ASSIGN_OR_RETURN(int64_t rate,
                              Field<int64_t>(row, kRateLimit, "rate_limit"));
    if (rate < 1 || rate > UINT32_MAX) {
      return absl::DataLossError(
          absl::StrCat("rate_limit = ", rate, " is out of range [1, 2^32)"));
    }
    saved.state.rate_limit = RateLimit::Fixed(static_cast<uint32_t>(rate));
  }
  BACKFILL_ASSIGN_OR_RETURN(int32_t parallelism,
                            Field<int32_t>(row, kParallelism, "parallelism"));
  if (parallelism < 1) {
    return absl::DataLossError(
        absl::StrCat("parallelism = ", parallelism, " is not >= 1"));
  }
  saved.state.parallelism = static_cast<uint32_t>(parallelism);
  BACKFILL_ASSIGN_OR_RETURN(
      saved.state.upstream_stopped,
      Field<bool>(row, kUpstreamStopped, "upstream_stopped"));
  BACKFILL_ASSIGN_OR_RETURN(
      int64_t epochs,
      Field<int64_t>(row, kEpochsSinceCreation, "epochs_since_creation"));
  if (epochs < 0) {
    return absl::DataLossError(
        absl::StrCat("epochs_since_creation = ", epochs, " is negative"));
  }
  saved.state.epochs_since_creation = static_cast<uint64_t>(epochs);
  BACKFILL_RETURN_IF_ERROR(DecodeAdaptive(row, saved.state));
  return saved;
}

// ---- CheckSameJob -----------------------------------------------------------

std::string ColumnText(const ColumnDesc& column) {
  return absl::StrCat("`", column.name, " ", DataTypeName(column.type),
                      column.nullable ? "" : " NOT NULL", "` (id ",
                      column.column_id, ")");
}

std::string KeyText(const std::vector<int>& indices,
                    const std::vector<OrderType>* orders,
                    const TableCatalog& catalog) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < indices.size(); ++i) {
    const int index = indices[i];
    std::string part =
        index >= 0 && index < static_cast<int>(catalog.columns.size())
            ? catalog.columns[index].name
            : absl::StrCat("#", index);
    if (orders != nullptr && i < orders->size()) {
      absl::StrAppend(&part, " ", (*orders)[i].DebugString());
    }
    parts.push_back(std::move(part));
  }
  return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
}

std::string IndicesText(const std::vector<int>& indices) {
  return absl::StrCat("[", absl::StrJoin(indices, ", "), "]");
}

// The first difference between two catalogs of `what`, or "".
std::string FirstCatalogDifference(absl::string_view what,
                                   const TableCatalog& saved,
                                   const TableCatalog& wanted) {
  auto differs = [&](absl::string_view field, const std::string& there,
                     const std::string& here) {
    return absl::StrCat(what, " ", field, ": ", there,
                        " in the data directory, ", here, " in this job");
  };
  if (saved.table_id != wanted.table_id) {
    return differs("id", absl::StrCat(saved.table_id),
                   absl::StrCat(wanted.table_id));
  }
  if (saved.name != wanted.name) {
    return differs("name", absl::StrCat("\"", saved.name, "\""),
                   absl::StrCat("\"", wanted.name, "\""));
  }
  const size_t common = std::min(saved.columns.size(), wanted.columns.size());
  for (size_t i = 0; i < common; ++i) {
    const ColumnDesc& a = saved.columns[i];
    const ColumnDesc& b = wanted.columns[i];
    if (a.name != b.name || a.type != b.type || a.nullable != b.nullable ||
        a.column_id != b.column_id) {
      return differs(absl::StrCat("column ", i), ColumnText(a), ColumnText(b));
    }
  }
  if (saved.columns.size() != wanted.columns.size()) {
    return differs("column count", absl::StrCat(saved.columns.size()),
                   absl::StrCat(wanted.columns.size()));
  }
  if (saved.pk_indices != wanted.pk_indices ||
      saved.pk_orders != wanted.pk_orders) {
    return differs("primary key",
                   KeyText(saved.pk_indices, &saved.pk_orders, saved),
                   KeyText(wanted.pk_indices, &wanted.pk_orders, wanted));
  }
  if (saved.dist_key_indices != wanted.dist_key_indices) {
    return differs("distribution key",
                   KeyText(saved.dist_key_indices, nullptr, saved),
                   KeyText(wanted.dist_key_indices, nullptr, wanted));
  }
  if (saved.vnode_count != wanted.vnode_count) {
    return differs("vnode count", absl::StrCat(saved.vnode_count),
                   absl::StrCat(wanted.vnode_count));
  }
  if (saved.value_encoding != wanted.value_encoding) {
    auto name = [](ValueEncoding encoding) {
      return std::string(encoding == ValueEncoding::kColumnAware
                             ? "column-aware"
                             : "positional");
    };
    return differs("value encoding", name(saved.value_encoding),
                   name(wanted.value_encoding));
  }
  if (saved.value_indices != wanted.value_indices) {
    return differs("value columns", IndicesText(saved.value_indices),
                   IndicesText(wanted.value_indices));
  }
  if (saved.vnode_column != wanted.vnode_column) {
    auto text = [](const std::optional<int>& column) {
      return column.has_value() ? absl::StrCat(*column) : std::string("none");
    };
    return differs("vnode column", text(saved.vnode_column),
                   text(wanted.vnode_column));
  }
  return "";
}

}  // namespace

absl::Status CheckSameJob(const JobDefinition& saved,
                          const JobDefinition& wanted) {
  std::string difference =
      FirstCatalogDifference("upstream table", saved.upstream, wanted.upstream);
  if (difference.empty()) {
    difference = FirstCatalogDifference("view table", saved.view, wanted.view);
  }
  if (difference.empty() && saved.output_columns != wanted.output_columns) {
    difference =
        absl::StrCat("output columns: ", IndicesText(saved.output_columns),
                     " in the data directory, ",
                     IndicesText(wanted.output_columns), " in this job");
  }
  if (difference.empty() &&
      saved.progress_table_id != wanted.progress_table_id) {
    difference = absl::StrCat("progress table id: ", saved.progress_table_id,
                              " in the data directory, ",
                              wanted.progress_table_id, " in this job");
  }
  if (difference.empty() &&
      saved.source_offset_table_id != wanted.source_offset_table_id) {
    difference =
        absl::StrCat("source offset table id: ", saved.source_offset_table_id,
                     " in the data directory, ", wanted.source_offset_table_id,
                     " in this job");
  }
  if (difference.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the data directory holds another job (", saved.upstream.name, " -> ",
      saved.view.name, "), not this one: ", difference,
      "; use another data directory (--data_dir) for this job, or rerun the "
      "job that created it"));
}

TableCatalog JobStateTable::Catalog(TableId table_id) {
  TableCatalog catalog;
  catalog.table_id = table_id;
  catalog.name = "job_state";
  catalog.columns = {{"id", DataType::kInt16, 0, false},
                     {"format_version", DataType::kInt32, 1, false},
                     {"definition", DataType::kBytea, 2, false},
                     {"paused", DataType::kBoolean, 3, false},
                     {"rate_limit", DataType::kInt64, 4, true},
                     {"parallelism", DataType::kInt32, 5, false},
                     {"upstream_stopped", DataType::kBoolean, 6, false},
                     {"epochs_since_creation", DataType::kInt64, 7, false},
                     {"adaptive_target_us", DataType::kInt64, 8, true},
                     {"adaptive_rows_per_second", DataType::kInt64, 9, true}};
  catalog.pk_indices = {kId};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.vnode_count = 1;
  for (int i = 0; i < kNumColumns; ++i) catalog.value_indices.push_back(i);
  return catalog;
}

absl::StatusOr<std::unique_ptr<JobStateTable>> JobStateTable::Create(
    StateStore& store, TableId table_id) {
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<StateTable> table,
      StateTable::Create(Catalog(table_id), store, VnodeBitmap::All(1)));
  return std::unique_ptr<JobStateTable>(new JobStateTable(std::move(table)));
}

absl::StatusOr<std::optional<SavedJob>> JobStateTable::InitEpoch(
    EpochPair first) {
  BACKFILL_RETURN_IF_ERROR(table_->InitEpoch(first));
  BACKFILL_ASSIGN_OR_RETURN(std::optional<Row> row,
                            table_->GetRow(Row{int16_t{0}}));
  if (!row.has_value()) return std::nullopt;
  absl::StatusOr<SavedJob> saved = DecodeRowContent(*row);
  if (!saved.ok()) {
    return absl::DataLossError(absl::StrCat("corrupt job state (table ",
                                            table_->catalog().table_id,
                                            "): ", saved.status().message()));
  }
  row_ = std::move(row);
  return *std::move(saved);
}

absl::Status JobStateTable::Write(const JobDefinition& definition,
                                  const JobState& state) {
  if (state.parallelism < 1 || state.rate_limit.is_paused() ||
      state.adaptive_target < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job state ", state.DebugString(),
        ": parallelism must be >= 1, the rate limit not Pause and the "
        "adaptive target not negative"));
  }
  Row row = EncodeRow(definition, state);
  if (row_.has_value()) {
    if (RowsEqual(*row_, row)) return absl::OkStatus();
    BACKFILL_RETURN_IF_ERROR(table_->Update(*row_, row));
  } else {
    BACKFILL_RETURN_IF_ERROR(table_->Insert(row));
  }
  row_ = std::move(row);
  return absl::OkStatus();
}

absl::Status JobStateTable::Commit(EpochPair next) {
  return table_->Commit(next);
}

absl::StatusOr<std::optional<SavedJob>> ReadCommittedJob(StateStore& store,
                                                         TableId table_id) {
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<JobStateTable> table,
                            JobStateTable::Create(store, table_id));
  const Epoch committed = store.CommittedEpoch(table_id);
  return table->InitEpoch(EpochPair{Epoch(committed.value() + 1), committed});
}

}  // namespace backfill
