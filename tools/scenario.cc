#include "tools/scenario.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "executor/runtime/job_state.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "serde/column_type.h"
#include "serde/utf8.h"
#include "serde/vnode.h"
#include "third_party/absl_extras/saturating.h"

namespace backfill {
namespace {

// Upper bounds that keep every count inside an int.
constexpr uint32_t kMaxChunkSize = 1u << 20;
constexpr uint32_t kMaxCheckpointFrequency = 1'000'000;
constexpr uint32_t kMaxExtraCheckpoints = 1'000'000;
constexpr uint32_t kMaxBatchIntervalMs = 60'000;

// The runtime's kind of a scenario's backfill.kind.
BackfillKind RuntimeBackfillKind(tools::BackfillKind kind) {
  switch (kind) {
    case tools::NO_SHUFFLE:
      return BackfillKind::kNoShuffle;
    case tools::SNAPSHOT:
      return BackfillKind::kSnapshot;
    default:
      return BackfillKind::kArrangement;
  }
}

// Records the first error of a TextFormat parse.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!error_.has_value()) {
      error_ = absl::StrCat(line + 1, ":", column + 1, ": ", message);
    }
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber,
                  const std::string&) override {}

  const std::optional<std::string>& error() const { return error_; }

 private:
  std::optional<std::string> error_;
};

absl::Status Invalid(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, " ", what));
}

// Names are proto3 strings: one that is not UTF-8 could not be serialized
// (nor stored in a catalog) and parsed back. The text parser lets octal and
// hex escapes through, so this is checked here.
absl::Status ValidateUtf8(absl::string_view field, absl::string_view name) {
  if (IsValidUtf8(name)) return absl::OkStatus();
  return Invalid(field, absl::StrCat("= \"", absl::CHexEscape(name),
                                     "\" is not valid UTF-8"));
}

bool IsKnownDataType(int value) {
  return DataTypeFromValue(value).has_value();
}

bool IsNestedType(DataType type) {
  return type == DataType::kStruct || type == DataType::kList ||
         type == DataType::kMap;
}

// The type `type_value` with its parts `nested` (null when absent); `field`
// names it in errors ("table.columns[2].nested.element").
absl::StatusOr<ColumnType> TypeOf(int type_value,
                                  const tools::NestedType* nested,
                                  const std::string& field, int depth);

// TypeOf a Column, ElementType or StructField (each has a type and maybe
// nested parts).
template <typename Part>
absl::StatusOr<ColumnType> TypeOfPart(const Part& part,
                                      const std::string& field, int depth) {
  return TypeOf(part.type(), part.has_nested() ? &part.nested() : nullptr,
                field, depth);
}

absl::StatusOr<ColumnType> TypeOf(int type_value,
                                  const tools::NestedType* nested,
                                  const std::string& field, int depth) {
  const std::optional<DataType> type = DataTypeFromValue(type_value);
  if (!type.has_value()) {
    return Invalid(absl::StrCat(field, ".type"),
                   type_value == 0
                       ? "is DATA_TYPE_UNSPECIFIED"
                       : absl::StrCat("= ", type_value, " is not a data type"));
  }
  if (!IsNestedType(*type)) {
    if (nested != nullptr) {
      return Invalid(absl::StrCat(field, ".nested"),
                     absl::StrCat("is set but ", DataTypeName(*type),
                                  " has no parts (only STRUCT, LIST and MAP)"));
    }
    return ColumnType(*type);
  }
  if (depth >= kMaxCatalogTypeDepth) {
    return Invalid(field, absl::StrCat("is nested deeper than ",
                                       kMaxCatalogTypeDepth, " levels"));
  }
  const std::string parts = absl::StrCat(field, ".nested");
  static const tools::NestedType kNoParts;
  const tools::NestedType& n = nested != nullptr ? *nested : kNoParts;
  const bool has_map_parts = n.has_map_key() || n.has_map_value();
  switch (*type) {
    case DataType::kList: {
      if (!n.has_element()) {
        return Invalid(absl::StrCat(parts, ".element"),
                       "is missing (a LIST needs its element type)");
      }
      if (n.fields_size() > 0 || has_map_parts) {
        return Invalid(parts, "of a LIST may only set element");
      }
      absl::StatusOr<ColumnType> element =
          TypeOfPart(n.element(), absl::StrCat(parts, ".element"), depth + 1);
      if (!element.ok()) return element.status();
      return ColumnType::List(*std::move(element));
    }
    case DataType::kMap: {
      if (!n.has_map_key() || !n.has_map_value()) {
        return Invalid(
            absl::StrCat(parts, n.has_map_key() ? ".map_value" : ".map_key"),
            "is missing (a MAP needs map_key and map_value)");
      }
      if (n.fields_size() > 0 || n.has_element()) {
        return Invalid(parts, "of a MAP may only set map_key and map_value");
      }
      absl::StatusOr<ColumnType> key =
          TypeOfPart(n.map_key(), absl::StrCat(parts, ".map_key"), depth + 1);
      if (!key.ok()) return key.status();
      if (!IsValidMapKeyType(*key)) {
        return Invalid(absl::StrCat(parts, ".map_key"),
                       absl::StrCat("= ", key->DebugString(),
                                    " is not a map key type (INT16, INT32, "
                                    "INT64 or VARCHAR)"));
      }
      absl::StatusOr<ColumnType> value = TypeOfPart(
          n.map_value(), absl::StrCat(parts, ".map_value"), depth + 1);
      if (!value.ok()) return value.status();
      return ColumnType::Map(*std::move(key), *std::move(value));
    }
    default: {  // kStruct
      if (n.fields_size() == 0) {
        return Invalid(absl::StrCat(parts, ".fields"),
                       "is empty (a STRUCT needs at least one field)");
      }
      if (n.has_element() || has_map_parts) {
        return Invalid(parts, "of a STRUCT may only set fields");
      }
      std::vector<StructField> fields;
      absl::flat_hash_set<std::string> names;
      for (int i = 0; i < n.fields_size(); ++i) {
        const tools::StructField& f = n.fields(i);
        const std::string where = absl::StrCat(parts, ".fields[", i, "]");
        if (f.name().empty()) {
          return Invalid(absl::StrCat(where, ".name"), "is empty");
        }
        if (absl::Status s = ValidateUtf8(absl::StrCat(where, ".name"),
                                          f.name());
            !s.ok()) {
          return s;
        }
        if (!names.insert(f.name()).second) {
          return Invalid(absl::StrCat(where, ".name"),
                         absl::StrCat("= \"", f.name(),
                                      "\" appears twice in the STRUCT"));
        }
        absl::StatusOr<ColumnType> field_type = TypeOfPart(f, where, depth + 1);
        if (!field_type.ok()) return field_type.status();
        fields.push_back(
            {f.name(), *std::move(field_type), static_cast<int32_t>(i + 1)});
      }
      return ColumnType::Struct(std::move(fields));
    }
  }
}

// Distinct non-NULL values the workload gives a key column of `type`
// (saturated at 2^64-1; executor/runtime/demo/workload.h): a STRUCT is told
// apart by its first field; a LIST spells its key in digits, without bound.
uint64_t DistinctValues(const ColumnType& type) {
  constexpr uint64_t kMany = std::numeric_limits<uint64_t>::max();
  switch (type.id()) {
    case DataType::kStruct:
      return DistinctValues(type.fields()[0].type);
    case DataType::kBoolean:
      return 2;
    case DataType::kInt16:
      return uint64_t{1} << 16;
    case DataType::kInt32:
    case DataType::kFloat32:
    case DataType::kDate:
      return uint64_t{1} << 32;
    case DataType::kTime:
      return uint64_t{86'400'000'000};
    default:
      return kMany;
  }
}

absl::Status ValidateTable(const tools::Scenario& scenario) {
  const tools::Table& table = scenario.table();
  const int num_columns = table.columns_size();
  if (num_columns == 0) return Invalid("table.columns", "is empty");
  if (absl::Status s = ValidateUtf8("name", scenario.name()); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateUtf8("table.name", table.name()); !s.ok()) {
    return s;
  }
  absl::flat_hash_map<std::string, int> names;
  for (int i = 0; i < num_columns; ++i) {
    const tools::Column& column = table.columns(i);
    const std::string field = absl::StrCat("table.columns[", i, "]");
    if (column.name().empty()) return Invalid(field + ".name", "is empty");
    if (absl::Status s = ValidateUtf8(field + ".name", column.name());
        !s.ok()) {
      return s;
    }
    if (auto [it, inserted] = names.emplace(column.name(), i); !inserted) {
      return Invalid(
          absl::StrCat(field, ".name"),
          absl::StrCat("= \"", column.name(), "\" duplicates table.columns[",
                       it->second, "].name"));
    }
    if (column.type() == tools::DATA_TYPE_UNSPECIFIED) {
      return Invalid(absl::StrCat(field, ".type"),
                     absl::StrCat("is DATA_TYPE_UNSPECIFIED (column \"",
                                  column.name(), "\")"));
    }
    if (!IsKnownDataType(column.type())) {
      return Invalid(
          absl::StrCat(field, ".type"),
          absl::StrCat("= ", column.type(), " is not a data type (column \"",
                       column.name(), "\")"));
    }
    if (absl::Status s = TypeOfPart(column, field, /*depth=*/0).status();
        !s.ok()) {
      return s;
    }
  }
  if (table.primary_key_size() == 0) {
    return Invalid("table.primary_key", "is empty");
  }
  absl::flat_hash_set<uint32_t> pk_set;
  for (int i = 0; i < table.primary_key_size(); ++i) {
    const tools::KeyColumn& key = table.primary_key(i);
    const std::string field = absl::StrCat("table.primary_key[", i, "]");
    if (key.column() >= static_cast<uint32_t>(num_columns)) {
      return Invalid(absl::StrCat(field, ".column"),
                     absl::StrCat("= ", key.column(), " is out of range (",
                                  num_columns, " columns)"));
    }
    if (!pk_set.insert(key.column()).second) {
      return Invalid(absl::StrCat(field, ".column"),
                     absl::StrCat("= ", key.column(), " appears twice"));
    }
    const tools::Column& key_column = table.columns(key.column());
    const ColumnType key_type = ScenarioColumnType(key_column);
    if (absl::Status s = ValidateKeyColumnType(key_type); !s.ok()) {
      return Invalid(absl::StrCat(field, ".column"),
                     absl::StrCat("= ", key.column(), " (column \"",
                                  key_column.name(), "\"): ", s.message()));
    }
    if (!tools::NullsOrder_IsValid(key.nulls())) {
      return Invalid(absl::StrCat(field, ".nulls"),
                     absl::StrCat("= ", key.nulls(), " is unknown"));
    }
  }
  if (table.singleton() && table.distribution_key_size() > 0) {
    return Invalid("table.distribution_key",
                   absl::StrCat("has ", table.distribution_key_size(),
                                " columns but table.singleton is set"));
  }
  absl::flat_hash_set<uint32_t> dist_set;
  for (int i = 0; i < table.distribution_key_size(); ++i) {
    const uint32_t column = table.distribution_key(i);
    const std::string field = absl::StrCat("table.distribution_key[", i, "]");
    if (!pk_set.contains(column)) {
      return Invalid(
          field, absl::StrCat("= ", column, " is not a primary-key column"));
    }
    if (!dist_set.insert(column).second) {
      return Invalid(field, absl::StrCat("= ", column, " appears twice"));
    }
  }
  if (table.vnode_count() > static_cast<uint32_t>(kMaxVnodeCount)) {
    return Invalid(
        "table.vnode_count",
        absl::StrCat("= ", table.vnode_count(), " exceeds ", kMaxVnodeCount));
  }
  return absl::OkStatus();
}

absl::Status ValidateFinite(absl::string_view field, double value) {
  if (!std::isfinite(value)) {
    return Invalid(field, absl::StrCat("= ", value, " is not finite"));
  }
  if (value < 0) return Invalid(field, absl::StrCat("< 0 (", value, ")"));
  return absl::OkStatus();
}

absl::Status ValidateWorkload(const tools::Scenario& scenario,
                              const tools::Scenario& defaulted) {
  const tools::Workload& workload = scenario.workload();
  if (absl::Status s =
          ValidateFinite("workload.ops_per_second", workload.ops_per_second());
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ValidateFinite("workload.insert_weight", workload.insert_weight());
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ValidateFinite("workload.update_weight", workload.update_weight());
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ValidateFinite("workload.delete_weight", workload.delete_weight());
      !s.ok()) {
    return s;
  }
  if (workload.ops_per_second() > 0 && workload.insert_weight() +
                                               workload.update_weight() +
                                               workload.delete_weight() <=
                                           0) {
    return Invalid("workload.insert_weight, update_weight, delete_weight",
                   absl::StrCat("are all 0 but workload.ops_per_second = ",
                                workload.ops_per_second()));
  }
  if (workload.batch_interval_ms() > kMaxBatchIntervalMs) {
    return Invalid("workload.batch_interval_ms",
                   absl::StrCat("= ", workload.batch_interval_ms(),
                                " is above ", kMaxBatchIntervalMs));
  }
  if (!(workload.null_fraction() >= 0 && workload.null_fraction() <= 1)) {
    return Invalid(
        "workload.null_fraction",
        absl::StrCat("= ", workload.null_fraction(), " is outside [0, 1]"));
  }
  const uint64_t key_space = defaulted.workload().key_space();
  if (key_space < scenario.initial_rows()) {
    return Invalid("workload.key_space",
                   absl::StrCat("= ", key_space, " is below initial_rows = ",
                                scenario.initial_rows()));
  }
  uint64_t capacity = 1;
  for (const tools::KeyColumn& key : scenario.table().primary_key()) {
    const tools::Column& column = scenario.table().columns(key.column());
    uint64_t distinct = DistinctValues(ScenarioColumnType(column));
    if (column.nullable() && workload.null_fraction() > 0 &&
        distinct < std::numeric_limits<uint64_t>::max()) {
      ++distinct;
    }
    capacity = SaturatingMultiply(capacity, distinct);
  }
  if (key_space > capacity) {
    return Invalid("workload.key_space",
                   absl::StrCat("= ", key_space, " exceeds the ", capacity,
                                " distinct primary keys the pk column types "
                                "allow"));
  }
  return absl::OkStatus();
}

absl::Status ValidateBackfill(const tools::Scenario& scenario,
                              const tools::Scenario& defaulted) {
  const tools::Backfill& backfill = scenario.backfill();
  const int num_columns = scenario.table().columns_size();
  const uint32_t vnode_count = defaulted.table().vnode_count();
  if (defaulted.backfill().parallelism() > vnode_count) {
    return Invalid("backfill.parallelism",
                   absl::StrCat("= ", defaulted.backfill().parallelism(),
                                " exceeds table.vnode_count = ", vnode_count));
  }
  if (backfill.chunk_size() > kMaxChunkSize) {
    return Invalid(
        "backfill.chunk_size",
        absl::StrCat("= ", backfill.chunk_size(), " exceeds ", kMaxChunkSize));
  }
  absl::flat_hash_set<uint32_t> seen;
  for (int i = 0; i < backfill.output_columns_size(); ++i) {
    const uint32_t column = backfill.output_columns(i);
    const std::string field = absl::StrCat("backfill.output_columns[", i, "]");
    if (column >= static_cast<uint32_t>(num_columns)) {
      return Invalid(field, absl::StrCat("= ", column, " is out of range (",
                                         num_columns, " columns)"));
    }
    if (!seen.insert(column).second) {
      return Invalid(field, absl::StrCat("= ", column, " appears twice"));
    }
  }
  if (!tools::BackfillKind_IsValid(backfill.kind())) {
    return Invalid("backfill.kind",
                   absl::StrCat("= ", backfill.kind(),
                                " is not a kind (ARRANGEMENT, NO_SHUFFLE, "
                                "SNAPSHOT)"));
  }
  if (backfill.has_adaptive() &&
      backfill.adaptive().target_barrier_latency_ms() == 0) {
    return Invalid("backfill.adaptive.target_barrier_latency_ms",
                   "= 0 must be > 0 (the barrier latency to stay under)");
  }
  const uint32_t upstream = defaulted.table().table_id();
  const uint32_t view = defaulted.backfill().view_table_id();
  const uint32_t progress = defaulted.backfill().progress_table_id();
  if (view == upstream) {
    return Invalid("backfill.view_table_id",
                   absl::StrCat("= ", view, " equals table.table_id"));
  }
  if (progress == upstream || progress == view) {
    return Invalid(
        "backfill.progress_table_id",
        absl::StrCat("= ", progress, " equals ",
                     progress == upstream ? "table.table_id"
                                          : "backfill.view_table_id"));
  }
  const std::pair<absl::string_view, uint32_t> ids[] = {
      {"table.table_id", upstream},
      {"backfill.view_table_id", view},
      {"backfill.progress_table_id", progress}};
  for (const auto& [field, id] : ids) {
    if (id == kSourceOffsetTableId) {
      return Invalid(field, absl::StrCat("= ", id,
                                         " is reserved (the runtime's source "
                                         "offset table)"));
    }
    if (id == kJobStateTableId) {
      return Invalid(field, absl::StrCat("= ", id,
                                         " is reserved (the runtime's job "
                                         "state table)"));
    }
    if (id == kEpochPinTableId) {
      return Invalid(field, absl::StrCat("= ", id,
                                         " is reserved (the store's epoch "
                                         "pins)"));
    }
  }
  return absl::OkStatus();
}

// `defaulted` is WithDefaults(scenario) (for the time limit).
absl::Status ValidateRuntime(const tools::Scenario& scenario,
                             const tools::Scenario& defaulted) {
  const tools::Runtime& runtime = scenario.runtime();
  // A barrier must pass within the run's time limit, or the job could
  // never pass one (it would wait out the whole limit, then fail).
  const uint64_t limit_ms = uint64_t{defaulted.runtime().max_seconds()} * 1000;
  if (defaulted.runtime().barrier_interval_ms() >= limit_ms) {
    return Invalid(
        "runtime.barrier_interval_ms",
        absl::StrCat("= ", defaulted.runtime().barrier_interval_ms(),
                     " is not below runtime.max_seconds = ",
                     defaulted.runtime().max_seconds(),
                     " s: no barrier would pass before the run's time limit"));
  }
  if (runtime.checkpoint_frequency() > kMaxCheckpointFrequency) {
    return Invalid("runtime.checkpoint_frequency",
                   absl::StrCat("= ", runtime.checkpoint_frequency(),
                                " exceeds ", kMaxCheckpointFrequency));
  }
  if (runtime.extra_checkpoints_after_finish() > kMaxExtraCheckpoints) {
    return Invalid("runtime.extra_checkpoints_after_finish",
                   absl::StrCat("= ", runtime.extra_checkpoints_after_finish(),
                                " exceeds ", kMaxExtraCheckpoints));
  }
  // Nor can a job finish that needs more checkpoints than fit: the one that
  // records the backfill's end and the extra ones after it, each
  // checkpoint_frequency barriers apart.
  const tools::Runtime& in_force = defaulted.runtime();
  const double needed_ms =
      (static_cast<double>(in_force.extra_checkpoints_after_finish()) + 1) *
      in_force.checkpoint_frequency() * in_force.barrier_interval_ms();
  if (needed_ms >= static_cast<double>(limit_ms)) {
    return Invalid(
        "runtime.checkpoint_frequency",
        absl::StrCat("= ", in_force.checkpoint_frequency(),
                     ": its checkpoints come every ",
                     uint64_t{in_force.checkpoint_frequency()} *
                         in_force.barrier_interval_ms(),
                     " ms (runtime.barrier_interval_ms = ",
                     in_force.barrier_interval_ms(), "), and the run needs ",
                     in_force.extra_checkpoints_after_finish() + 1,
                     " of them (the backfill's end, then "
                     "runtime.extra_checkpoints_after_finish = ",
                     in_force.extra_checkpoints_after_finish(), "): at least ",
                     needed_ms / 1000, " s, not below runtime.max_seconds = ",
                     in_force.max_seconds(), " s"));
  }
  return absl::OkStatus();
}

// The runtime's action for a validated `action` (an action with none set
// is stop_upstream, which ValidateActions rejects first).
JobAction JobActionFromProto(const tools::Action& action) {
  JobAction out;
  out.at_epoch = action.at_epoch();
  switch (action.action_case()) {
    case tools::Action::kPause:
      out.kind = JobAction::Kind::kPause;
      break;
    case tools::Action::kResume:
      out.kind = JobAction::Kind::kResume;
      break;
    case tools::Action::kSetRateLimit:
      out.kind = JobAction::Kind::kSetRateLimit;
      out.rate_limit = action.set_rate_limit();
      break;
    case tools::Action::kRescale:
      out.kind = JobAction::Kind::kRescale;
      out.parallelism = action.rescale();
      break;
    default:
      out.kind = JobAction::Kind::kStopUpstream;
      break;
  }
  return out;
}

// `defaulted` is WithDefaults(scenario) (for the table's vnode count).
absl::Status ValidateActions(const tools::Scenario& scenario,
                             const tools::Scenario& defaulted) {
  const uint32_t vnode_count = defaulted.table().vnode_count();
  for (int i = 0; i < scenario.actions_size(); ++i) {
    const tools::Action& action = scenario.actions(i);
    const std::string field = absl::StrCat("actions[", i, "]");
    if (action.at_epoch() == 0) {
      return Invalid(absl::StrCat(field, ".at_epoch"),
                     "= 0 (epochs count from 1, the view's creation)");
    }
    switch (action.action_case()) {
      case tools::Action::kPause:
        if (!action.pause()) {
          return Invalid(absl::StrCat(field, ".pause"),
                         "= false (write `pause: true`)");
        }
        break;
      case tools::Action::kResume:
        if (!action.resume()) {
          return Invalid(absl::StrCat(field, ".resume"),
                         "= false (write `resume: true`)");
        }
        break;
      case tools::Action::kStopUpstream:
        if (!action.stop_upstream()) {
          return Invalid(absl::StrCat(field, ".stop_upstream"),
                         "= false (write `stop_upstream: true`)");
        }
        break;
      case tools::Action::kSetRateLimit:
        break;
      case tools::Action::kRescale:
        if (!BackfillKindRescales(
                RuntimeBackfillKind(scenario.backfill().kind()))) {
          const bool snapshot = scenario.backfill().kind() == tools::SNAPSHOT;
          return Invalid(
              absl::StrCat(field, ".rescale"),
              absl::StrCat(
                  "= ", action.rescale(), " with backfill.kind = ",
                  tools::BackfillKind_Name(scenario.backfill().kind()),
                  snapshot ? ": a snapshot backfill cannot be rescaled (each "
                             "actor keeps its own log and snapshot position "
                             "for its vnodes)"
                           : ": a no-shuffle backfill cannot be rescaled (one "
                             "position per actor, its vnodes fixed to its "
                             "upstream writer's)"));
        }
        if (action.rescale() < 1 || action.rescale() > vnode_count) {
          return Invalid(absl::StrCat(field, ".rescale"),
                         absl::StrCat("= ", action.rescale(),
                                      " is not in [1, table.vnode_count = ",
                                      vnode_count, "]"));
        }
        break;
      default:
        return Invalid(field,
                       "has no action (one of pause, resume, set_rate_limit, "
                       "stop_upstream, rescale)");
    }
  }
  // Every action of an epoch applies, in file order, in that barrier's
  // mutation; the runtime's rule says which ones contradict each other.
  std::vector<JobAction> timeline;
  for (const tools::Action& action : scenario.actions()) {
    timeline.push_back(JobActionFromProto(action));
  }
  return ValidateJobActions(timeline);
}

void AddColumn(tools::Table& table, absl::string_view name,
               tools::DataType type, bool nullable) {
  tools::Column* column = table.add_columns();
  column->set_name(std::string(name));
  column->set_type(type);
  column->set_nullable(nullable);
}

}  // namespace

absl::StatusOr<tools::Scenario> ParseScenario(absl::string_view text,
                                              absl::string_view source) {
  tools::Scenario scenario;
  FirstErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &scenario)) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ":",
        errors.error().value_or("0:0: cannot parse the scenario")));
  }
  return scenario;
}

absl::StatusOr<tools::Scenario> LoadScenarioFile(absl::string_view path) {
  const std::string path_string(path);
  std::ifstream in(path_string, std::ios::binary);
  if (!in) {
    const int error = errno;
    const std::string message = absl::StrCat("cannot open scenario file ", path,
                                             ": ", std::strerror(error));
    if (error == ENOENT) return absl::NotFoundError(message);
    if (error == EACCES) return absl::PermissionDeniedError(message);
    return absl::InternalError(message);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::InternalError(
        absl::StrCat("cannot read scenario file ", path));
  }
  return ParseScenario(text.str(), path);
}

tools::Scenario DefaultScenario() {
  tools::Scenario scenario;
  scenario.set_name("default");
  tools::Table& table = *scenario.mutable_table();
  table.set_name("orders");
  AddColumn(table, "id", tools::INT64, false);
  AddColumn(table, "customer", tools::VARCHAR, false);
  AddColumn(table, "price", tools::FLOAT64, false);
  AddColumn(table, "amount", tools::DECIMAL, false);
  AddColumn(table, "created_at", tools::TIMESTAMP, false);
  AddColumn(table, "quantity", tools::INT32, true);
  table.add_primary_key()->set_column(0);
  table.set_vnode_count(256);
  scenario.set_initial_rows(1'000'000);
  scenario.set_seed(7);
  tools::Workload& workload = *scenario.mutable_workload();
  workload.set_ops_per_second(20'000);
  workload.set_insert_weight(0.4);
  workload.set_update_weight(0.4);
  workload.set_delete_weight(0.2);
  workload.set_null_fraction(0.1);
  workload.set_key_space(4'000'000);
  tools::Backfill& backfill = *scenario.mutable_backfill();
  backfill.set_parallelism(2);
  backfill.set_chunk_size(kDefaultScenarioChunkSize);
  tools::Runtime& runtime = *scenario.mutable_runtime();
  runtime.set_barrier_interval_ms(100);
  runtime.set_checkpoint_frequency(2);
  return scenario;
}

tools::Scenario WithDefaults(tools::Scenario scenario) {
  tools::Table& table = *scenario.mutable_table();
  if (table.name().empty()) table.set_name("upstream");
  if (table.table_id() == 0) table.set_table_id(kDefaultUpstreamTableId);
  if (table.vnode_count() == 0)
    table.set_vnode_count(kDefaultScenarioVnodeCount);
  if (!table.singleton() && table.distribution_key_size() == 0) {
    for (const tools::KeyColumn& key : table.primary_key()) {
      table.add_distribution_key(key.column());
    }
  }
  tools::Workload& workload = *scenario.mutable_workload();
  if (!workload.has_batch_interval_ms()) {
    workload.set_batch_interval_ms(kDefaultScenarioBatchIntervalMs);
  }
  if (workload.key_space() == 0) {
    const uint64_t rows = scenario.initial_rows();
    workload.set_key_space(rows == 0 ? kMinDefaultKeySpace
                                     : SaturatingMultiply(rows, 4));
  }
  tools::Backfill& backfill = *scenario.mutable_backfill();
  if (backfill.parallelism() == 0) {
    backfill.set_parallelism(kDefaultScenarioParallelism);
  }
  if (backfill.chunk_size() == 0) {
    backfill.set_chunk_size(kDefaultScenarioChunkSize);
  }
  if (backfill.output_columns_size() == 0) {
    for (int i = 0; i < table.columns_size(); ++i) {
      backfill.add_output_columns(static_cast<uint32_t>(i));
    }
  }
  if (backfill.view_table_id() == 0) {
    backfill.set_view_table_id(kDefaultViewTableId);
  }
  if (backfill.progress_table_id() == 0) {
    backfill.set_progress_table_id(kDefaultProgressTableId);
  }
  tools::Runtime& runtime = *scenario.mutable_runtime();
  if (runtime.barrier_interval_ms() == 0) {
    runtime.set_barrier_interval_ms(kDefaultScenarioBarrierIntervalMs);
  }
  if (runtime.checkpoint_frequency() == 0) {
    runtime.set_checkpoint_frequency(kDefaultScenarioCheckpointFrequency);
  }
  if (runtime.max_seconds() == 0) {
    runtime.set_max_seconds(kDefaultScenarioMaxSeconds);
  }
  if (!runtime.has_extra_checkpoints_after_finish()) {
    runtime.set_extra_checkpoints_after_finish(
        kDefaultScenarioExtraCheckpoints);
  }
  return scenario;
}

absl::Status ValidateScenario(const tools::Scenario& scenario) {
  if (absl::Status s = ValidateTable(scenario); !s.ok()) return s;
  const tools::Scenario defaulted = WithDefaults(scenario);
  if (absl::Status s = ValidateWorkload(scenario, defaulted); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateBackfill(scenario, defaulted); !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateRuntime(scenario, defaulted); !s.ok()) {
    return s;
  }
  return ValidateActions(scenario, defaulted);
}

DataType ScenarioDataType(tools::DataType type) {
  const std::optional<DataType> data_type = DataTypeFromValue(type);
  assert(data_type.has_value());
  return data_type.value_or(DataType::kInt64);
}

ColumnType ScenarioColumnType(const tools::Column& column) {
  absl::StatusOr<ColumnType> type = TypeOfPart(column, "column", /*depth=*/0);
  assert(type.ok());
  return type.ok() ? *std::move(type) : ColumnType(DataType::kInt64);
}

OrderType ScenarioOrderType(const tools::KeyColumn& key) {
  OrderType order =
      key.descending() ? OrderType::Descending() : OrderType::Ascending();
  if (key.nulls() == tools::NULLS_FIRST) order.nulls = NullsOrder::kFirst;
  if (key.nulls() == tools::NULLS_LAST) order.nulls = NullsOrder::kLast;
  return order;
}

TableCatalog ScenarioTableCatalog(const tools::Scenario& raw,
                                  TableId table_id) {
  const tools::Scenario scenario = WithDefaults(raw);
  const tools::Table& table = scenario.table();
  TableCatalog catalog;
  catalog.table_id = table_id;
  catalog.name = table.name();
  for (int i = 0; i < table.columns_size(); ++i) {
    const tools::Column& column = table.columns(i);
    catalog.columns.push_back(
        ColumnDesc{column.name(), ScenarioColumnType(column),
                   /*column_id=*/i + 1, column.nullable()});
    catalog.value_indices.push_back(i);
  }
  for (const tools::KeyColumn& key : table.primary_key()) {
    catalog.pk_indices.push_back(static_cast<int>(key.column()));
    catalog.pk_orders.push_back(ScenarioOrderType(key));
  }
  if (!table.singleton()) {
    for (uint32_t column : table.distribution_key()) {
      catalog.dist_key_indices.push_back(static_cast<int>(column));
    }
  }
  catalog.vnode_count = static_cast<int>(table.vnode_count());
  catalog.value_encoding = table.column_aware_encoding()
                               ? ValueEncoding::kColumnAware
                               : ValueEncoding::kPositional;
  return catalog;
}

std::vector<int> ScenarioViewInputColumns(const tools::Scenario& raw) {
  const tools::Scenario scenario = WithDefaults(raw);
  std::vector<int> columns;
  for (uint32_t column : scenario.backfill().output_columns()) {
    columns.push_back(static_cast<int>(column));
  }
  for (const tools::KeyColumn& key : scenario.table().primary_key()) {
    const int column = static_cast<int>(key.column());
    if (std::find(columns.begin(), columns.end(), column) == columns.end()) {
      columns.push_back(column);
    }
  }
  return columns;
}

TableCatalog ScenarioViewCatalog(const tools::Scenario& scenario,
                                 TableId table_id) {
  const TableCatalog upstream = ScenarioTableCatalog(scenario, table_id);
  const std::vector<int> input = ScenarioViewInputColumns(scenario);
  // Upstream column index -> view column index.
  absl::flat_hash_map<int, int> position;
  for (size_t i = 0; i < input.size(); ++i) {
    position.emplace(input[i], static_cast<int>(i));
  }
  TableCatalog view;
  view.table_id = table_id;
  view.name = absl::StrCat(upstream.name, "_view");
  for (size_t i = 0; i < input.size(); ++i) {
    ColumnDesc column = upstream.columns[input[i]];
    column.column_id = static_cast<int32_t>(i + 1);
    view.columns.push_back(std::move(column));
    view.value_indices.push_back(static_cast<int>(i));
  }
  for (int column : upstream.pk_indices) {
    view.pk_indices.push_back(position.at(column));
  }
  view.pk_orders = upstream.pk_orders;
  for (int column : upstream.dist_key_indices) {
    view.dist_key_indices.push_back(position.at(column));
  }
  view.vnode_count = upstream.vnode_count;
  view.value_encoding = upstream.value_encoding;
  return view;
}

absl::StatusOr<ScenarioSpec> ScenarioSpecFromProto(const tools::Scenario& raw) {
  if (absl::Status s = ValidateScenario(raw); !s.ok()) return s;
  const tools::Scenario scenario = WithDefaults(raw);
  ScenarioSpec spec;
  spec.name = scenario.name();
  StreamingJobOptions& job = spec.job;
  job.upstream = ScenarioTableCatalog(scenario, scenario.table().table_id());
  job.initial_rows = scenario.initial_rows();
  spec.view =
      ScenarioViewCatalog(scenario, scenario.backfill().view_table_id());
  spec.view_input_columns = ScenarioViewInputColumns(scenario);
  for (uint32_t column : scenario.backfill().output_columns()) {
    job.output_columns.push_back(static_cast<int>(column));
    spec.output_column_names.push_back(job.upstream.columns[column].name);
    spec.output_column_types.push_back(job.upstream.columns[column].type);
  }
  job.view_table_id = scenario.backfill().view_table_id();
  job.progress_table_id = scenario.backfill().progress_table_id();
  job.source_offset_table_id = kSourceOffsetTableId;
  job.job_state_table_id = kJobStateTableId;

  const tools::Workload& workload = scenario.workload();
  job.workload.seed = scenario.seed();
  job.workload.ops_per_second = workload.ops_per_second();
  job.workload.insert_weight = workload.insert_weight();
  job.workload.update_weight = workload.update_weight();
  job.workload.delete_weight = workload.delete_weight();
  job.workload.update_primary_key = workload.update_primary_key();
  job.workload.max_ops = workload.max_ops();
  job.workload.null_fraction = workload.null_fraction();
  job.workload.key_space = workload.key_space();
  job.workload.batch_interval =
      absl::Milliseconds(workload.batch_interval_ms());

  job.backfill_kind = RuntimeBackfillKind(scenario.backfill().kind());
  job.parallelism = scenario.backfill().parallelism();
  job.chunk_size = scenario.backfill().chunk_size();
  job.rate_limit = JobRateLimit(scenario.backfill().rate_limit());
  if (scenario.backfill().has_adaptive()) {
    job.adaptive_target_barrier_latency = absl::Milliseconds(
        scenario.backfill().adaptive().target_barrier_latency_ms());
  }

  const tools::Runtime& runtime = scenario.runtime();
  job.barrier_interval = absl::Milliseconds(runtime.barrier_interval_ms());
  job.checkpoint_frequency = runtime.checkpoint_frequency();
  job.max_duration = absl::Seconds(runtime.max_seconds());
  job.extra_checkpoints_after_finish =
      runtime.extra_checkpoints_after_finish();

  for (const tools::Action& action : scenario.actions()) {
    job.actions.push_back(JobActionFromProto(action));
  }
  std::stable_sort(job.actions.begin(), job.actions.end(),
                   [](const JobAction& a, const JobAction& b) {
                     return a.at_epoch < b.at_epoch;
                   });
  if (absl::Status s = ValidateTableCatalog(job.upstream); !s.ok()) return s;
  if (absl::Status s = ValidateTableCatalog(spec.view); !s.ok()) return s;
  return spec;
}

}  // namespace backfill
