// SnapshotChunkReader: the snapshot side of an arrangement backfill. It reads
// the upstream table one vnode after the other, in vnode order, each after
// its backfill position (a VnodeSnapshotReader over that one vnode), takes one
// rate-limiter permit per row (in batches of one chunk), and cuts the rows
// into chunks of one vnode each.
//
// clang-format off
//   SnapshotChunkReader snapshot(table, state, limiter, /*chunk_size=*/256,
//                                /*max_vnode_scans_per_read=*/16);
//   BACKFILL_ASSIGN_OR_RETURN(SnapshotRead read, snapshot.Read(max_rows));
//   if (read.chunk) Emit(*read.chunk);            // advance its vnode first,
//   for (VirtualNode v : read.finished_vnodes) Complete(v);   // then these
//   switch (read.outcome) {
//     case SnapshotRead::kBlocked:   cx.WakeNoLaterThan(read.retry_at); break;
//     case SnapshotRead::kExhausted: /* end of snapshot */ break;
//     default: break;
//   }
//   BACKFILL_ASSIGN_OR_RETURN(std::vector<VnodeChunk> rest, snapshot.Flush());
// clang-format on
//
// Cost follows the work, not the vnode count (issue 15 point 5): at most one
// vnode's scan is open at a time and one Read opens at most
// `max_vnode_scans_per_read` of them (so a barrier waiting behind a Read
// waits for a bounded number of seeks, however many empty vnodes there
// are); a chunk builder exists only while a vnode has rows pending; a vnode
// whose scan ends hands out its last rows at once (so no builder outlives
// its vnode's scan) and is reported in `finished_vnodes`: every row it held
// when the reader was opened has been handed out, so the caller marks it
// Completed (CONTRACT §4.2) and it is never scanned again. The cursor over
// the vnodes survives Flush: the next Read resumes at the vnode it stopped
// in, after that vnode's (updated) position. Per vnode the reader keeps
// nothing but its number.
//
// The reader (re)opens at the first Read after construction or Flush, at
// the positions `state` has then; the caller advances `state` for every
// chunk it takes (a chunk's rows are all sent). Flush ends an epoch's
// reading: the replicated table may be written only while no scan is open.
//
// Thread-safety: one thread at a time. `table`, `state` and `limiter` must
// outlive the reader.
#ifndef EXECUTOR_BACKFILL_SNAPSHOT_CHUNK_READER_H_
#define EXECUTOR_BACKFILL_SNAPSHOT_CHUNK_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/backfill/backfill_state.h"
#include "executor/backfill/vnode_snapshot_reader.h"
#include "executor/data_chunk.h"
#include "executor/data_chunk_builder.h"
#include "ratelimit/monitored_rate_limiter.h"
#include "serde/data_type.h"
#include "serde/vnode.h"
#include "storage/replicated_state_table.h"

namespace backfill {

// Snapshot rows of one vnode, in pk order, in S2 (the replicated table's
// output columns); all visible.
struct VnodeChunk {
  VirtualNode vnode = 0;
  DataChunk data;
};

// What one SnapshotChunkReader::Read did.
struct SnapshotRead {
  enum Outcome {
    kChunk,      // The builder filled up, or a vnode's scan ended with rows
                 // pending: `chunk` holds them.
    kRowLimit,   // `max_rows` rows were read, or `max_vnode_scans_per_read`
                 // scans opened, without producing a chunk.
    kBlocked,    // The rate limiter had no permits for the next row.
    kExhausted,  // No vnode is left to read; `chunk` may hold the last
                 // vnode's last rows (no builder holds rows).
  };
  Outcome outcome = kRowLimit;
  // Set if outcome == kChunk; may be set if kExhausted.
  std::optional<VnodeChunk> chunk;
  // The vnodes whose scan ended in this Read, in vnode order (the chunk's
  // vnode, if among them, is the last): their every row has been handed
  // out. The caller handles `chunk` first, then completes these.
  std::vector<VirtualNode> finished_vnodes;
  // kBlocked: when the limiter expects to grant the next batch;
  // absl::InfiniteFuture() when it cannot say (paused).
  absl::Time retry_at = absl::InfiniteFuture();
};

class SnapshotChunkReader {
 public:
  // Over the vnodes `state` owns (those Completed are skipped). No I/O.
  // REQUIRES: chunk_size >= 1, max_vnode_scans_per_read >= 1.
  SnapshotChunkReader(ReplicatedStateTable& table, const BackfillState& state,
                      MonitoredRateLimiter& limiter, uint32_t chunk_size,
                      uint32_t max_vnode_scans_per_read = 16);
  SnapshotChunkReader(const SnapshotChunkReader&) = delete;
  SnapshotChunkReader& operator=(const SnapshotChunkReader&) = delete;

  // Reads rows into the builder until it fills up or a vnode's scan ends
  // with rows pending (kChunk), `max_rows` rows were read or
  // `max_vnode_scans_per_read` scans opened (kRowLimit), the limiter denies
  // the next batch of permits (kBlocked; nothing is read for that row), or
  // no vnode is left (kExhausted). Errors: the snapshot read's (the vnode in
  // the message); rows already in the builder stay there.
  absl::StatusOr<SnapshotRead> Read(size_t max_rows);

  // True if Read may read a row now without asking the limiter: the limit is
  // disabled, permits of an earlier batch are left, or a batch of
  // chunk_capacity() permits is granted now (and kept for Read).
  bool AcquirePermitsNow();

  // Closes the open scan and returns what the builder holds (at most one
  // chunk, of the vnode being read); no builder is left and the next Read
  // reopens that vnode at the state's position. Errors: the read error the
  // scan ended with, if any (the builder keeps its rows).
  absl::StatusOr<std::vector<VnodeChunk>> Flush();

  // Later builders get the current chunk_capacity(); drops the permits left
  // (call after the limit changed). REQUIRES: no rows pending (after Flush).
  void Resize();

  // What the reader holds and has done, for drivers and tests.
  struct Stats {
    int open_scans = 0;     // 0 or 1
    int live_builders = 0;  // 0 or 1
    int peak_open_scans = 0;
    int peak_live_builders = 0;
    uint64_t scans_opened = 0;  // vnode scans opened so far (seeks)
    uint64_t vnodes_finished = 0;
  };
  Stats stats() const;

  // Rows per chunk: SnapshotChunkSize(limiter.limit(), chunk_size), i.e.
  // max(2, min(rate, chunk_size)).
  uint32_t chunk_capacity() const;

 private:
  // Opens the scan of vnodes_[cursor_] after its position.
  void OpenScan();
  // Moves the cursor past Completed vnodes (no I/O; only forward).
  void SkipCompleted();
  // The builder's rows as a chunk; no builder afterwards.
  std::optional<VnodeChunk> TakeBuilder();

  ReplicatedStateTable& table_;
  const BackfillState& state_;
  MonitoredRateLimiter& limiter_;
  const uint32_t chunk_size_;
  const uint32_t max_vnode_scans_per_read_;
  // S2 column types.
  std::vector<DataType> types_;

  // The owned vnodes, ascending; the reader is at vnodes_[cursor_].
  std::vector<VirtualNode> vnodes_;
  size_t cursor_ = 0;
  // The scan of vnodes_[cursor_] (null: not open).
  std::unique_ptr<VnodeSnapshotReader> scan_;
  // Rows of builder_vnode_ not yet handed out (absent: none).
  std::optional<DataChunkBuilder> builder_;
  VirtualNode builder_vnode_ = 0;
  // Permits granted and not yet used (only under a Fixed limit).
  uint64_t permits_ = 0;
  Stats stats_;
};

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_SNAPSHOT_CHUNK_READER_H_
