// InspectDataDirectory: the state of a stopped or finished job from its data
// directory, read without resuming or writing anything (`backfill inspect`):
// the committed epoch, each vnode's backfill progress (finished, in progress
// with its position, not started), the rows of the upstream table and the
// view, the job's saved definition and its state in force (paused, rate
// limit, parallelism, upstream stopped, epochs since the view's creation).
//
//   BACKFILL_ASSIGN_OR_RETURN(JobInspection job, InspectDataDirectory(dir));
//   std::cout << FormatInspection(job, /*list_vnodes=*/false);
//   std::cout << InspectionJson(job, /*list_vnodes=*/false) << "\n";
//
// The store is opened read-only (RocksDbStateStoreOptions::read_only) with
// every open check and every table file's checksums verified, so a corrupt
// directory is DataLoss naming the file, and the directory's bytes are the
// same afterwards. Everything is read at the committed epoch: what the next
// run would resume from.
//
// Thread-safety: plain functions over values; the store passed to
// InspectStore must not be checkpointed concurrently.
#ifndef TOOLS_INSPECT_H_
#define TOOLS_INSPECT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/runtime/job_state.h"
#include "executor/runtime/job_state_table.h"
#include "executor/runtime/streaming_job_options.h"
#include "serde/vnode.h"
#include "storage/state_store.h"
#include "storage/table_key.h"
#include "tools/snapshot_progress.h"

namespace backfill {

// One vnode's persisted progress.
struct VnodeInspection {
  enum class State { kNotStarted, kInProgress, kFinished };
  VirtualNode vnode = 0;
  State state = State::kNotStarted;
  // The last pk sent (RowDebugString of the pk columns, e.g. "(4711)");
  // empty when not started; "(NULL)"-style for a vnode that finished empty.
  std::string position;
  // Snapshot rows sent for this vnode.
  uint64_t rows = 0;
};

// "not_started", "in_progress", "finished".
const char* VnodeStateName(VnodeInspection::State state);

// One snapshot-backfill actor's saved progress (a job of that kind keeps
// one progress row per actor, not per vnode).
struct SnapshotActorInspection {
  uint32_t actor_id = 0;
  // "snapshot", "replay" or "joined" (SnapshotPhaseName).
  std::string phase;
  uint64_t snapshot_epoch = 0;
  // The actor's vnodes, and how many of them its snapshot has read whole.
  uint64_t vnodes = 0;
  uint64_t vnodes_read = 0;
  uint64_t snapshot_rows = 0;
  // Bytes of its log not yet replayed.
  uint64_t log_bytes = 0;
};

struct JobInspection {
  std::string data_dir;
  // The store-wide committed epoch (0: never checkpointed).
  uint64_t committed_epoch = 0;
  // The job-state row was found; when false (a directory killed before the
  // job's definition was first committed, or written before the job-state
  // table existed) only committed_epoch is known.
  bool job_found = false;
  SavedJob job;
  // The job's initial bulk load completed (InitialLoadComplete, bulk_load.h:
  // its marker in the source's offset table). False for a load cut short
  // (some rows, no marker): the upstream table, and so the snapshot, is
  // partial until a rerun finishes it. Only meaningful with job_found.
  bool initial_load_complete = false;
  // Every vnode of the upstream table, ascending.
  std::vector<VnodeInspection> vnodes;
  uint64_t vnodes_finished = 0;
  uint64_t vnodes_in_progress = 0;
  uint64_t vnodes_not_started = 0;
  // Sum of the vnodes' snapshot row counts.
  uint64_t snapshot_rows = 0;
  // Which progress the store holds: "snapshot" (the snapshot backfill's
  // per-actor rows), "per_vnode" (the arrangement and NoShuffle backfills'
  // progress table) or "none" yet.
  std::string progress_kind = "none";
  // For "snapshot", one entry per actor, by actor id. Its vnodes then
  // follow the actors' rows: those an actor read whole are finished, the
  // one it is reading is in progress (with no position: the actor keeps
  // the pk bytes only), and every vnode's `rows` is 0 (the actors count
  // rows, not vnodes: snapshot_rows is their sum).
  std::vector<SnapshotActorInspection> snapshot_actors;
  // The store's epoch pins by owner (StateStore::EpochPins): a snapshot
  // backfill keeps its read epoch pinned until its replay phase commits.
  std::map<std::string, uint64_t> epoch_pins;
  // Committed rows of the upstream table, the view, the progress table.
  uint64_t upstream_rows = 0;
  uint64_t view_rows = 0;
  uint64_t progress_rows = 0;
  // The share of the snapshot read, in [0, 100] (100 iff every vnode
  // finished), and the snapshot's estimated total rows, by SnapshotProgress
  // (snapshot_progress.h) from the vnodes' rows read and each vnode's
  // committed upstream row count as its size (exact, so the same directory
  // always gives the same figures), with upstream_rows as the prior. A
  // snapshot backfill's actors count rows, not vnodes: their rows and the
  // prior alone.
  double snapshot_percent = 0;
  uint64_t estimated_snapshot_rows = 0;
};

// Every vnode of `definition`'s upstream table, ascending, with its progress
// as the progress table holds it at the store's committed epoch (writes
// nothing; also while the job runs: the live progress line reads it).
// Errors: DataLoss for a progress row that does not decode (naming the
// table and vnode); storage errors.
absl::StatusOr<std::vector<VnodeInspection>> ReadCommittedVnodes(
    StateStore& store, const JobDefinition& definition);

// SnapshotProgress's input (snapshot_progress.h) from `vnodes` (as
// ReadCommittedVnodes returns them) and their sizes: vnode i weighs
// bytes[i], 0 where `bytes` has no entry for it. Any unit will do as long as
// every vnode's is the same (approximate bytes, or rows as InspectStore
// gives).
std::vector<VnodeSnapshotProgress> SnapshotProgressInputs(
    const std::vector<VnodeInspection>& vnodes,
    const std::vector<uint64_t>& bytes);

// Inspects the job whose job-state table is `job_state_table_id` in `store`
// (at its committed epoch; writes nothing; a read-only store works). Errors:
// DataLoss for a job-state row or progress row that does not decode (naming
// the table and vnode); storage errors.
// `snapshot_meta_table_id` is where a snapshot backfill of the job keeps
// its per-actor progress (StreamingJobOptions::snapshot_meta_table_id).
absl::StatusOr<JobInspection> InspectStore(
    StateStore& store, TableId job_state_table_id,
    TableId snapshot_meta_table_id =
        StreamingJobOptions{}.snapshot_meta_table_id);

// Opens `data_dir` read-only and inspects the job the command keeps there
// (job-state table kJobStateTableId, tools/scenario_spec.h). Errors:
// NotFound if `data_dir` does not exist or holds no state store ("no data
// directory at ..."); InvalidArgument if it is not a directory; DataLoss
// naming the file for a corrupt one; as InspectStore.
absl::StatusOr<JobInspection> InspectDataDirectory(const std::string& data_dir);

// The human-readable report: the job, its state in force, an "initial load
// incomplete" line for a bulk load cut short, the committed epoch, the rows
// per table, the vnode summary (counts, and the in-progress vnodes' range of
// positions), and with `list_vnodes` one line per vnode.
std::string FormatInspection(const JobInspection& job, bool list_vnodes);

// One JSON object, no newline: data_dir, committed_epoch, job_found,
// progress_kind, epoch_pins ({"owner": epoch, ...}), vnode_count,
// vnodes_finished, vnodes_in_progress, vnodes_not_started, snapshot_percent,
// snapshot_rows, estimated_snapshot_rows, upstream_rows, view_rows,
// progress_rows, and when the job was found: upstream_table, view_table
// (names), upstream_table_id, view_table_id, progress_table_id, output_columns
// (names), initial_load_complete, paused, rate_limit (rows/s, null = no
// limit), parallelism, upstream_stopped, epochs_since_creation; with
// `list_vnodes` also "vnodes":
// [{"vnode":0, "state":"finished","position":"(17)","rows":42}, ...]; for a
// snapshot backfill also "snapshot_actors": [{"actor_id":1,"phase":"snapshot",
// "snapshot_epoch":5,"vnodes":128,"vnodes_read":40,"snapshot_rows":9000,
// "log_bytes":1024}, ...].
std::string InspectionJson(const JobInspection& job, bool list_vnodes);

}  // namespace backfill

#endif  // TOOLS_INSPECT_H_
