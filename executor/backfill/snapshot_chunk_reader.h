// SnapshotChunkReader: the snapshot side of an arrangement backfill. It reads
// the upstream table vnode by vnode after each vnode's backfill position
// (VnodeSnapshotReader), takes one rate-limiter permit per row (in batches of
// one chunk), and cuts the rows into chunks of one vnode each (a
// DataChunkBuilder per vnode).
//
// clang-format off
//   SnapshotChunkReader snapshot(table, state, limiter, /*chunk_size=*/256);
//   BACKFILL_ASSIGN_OR_RETURN(SnapshotRead read, snapshot.Read(max_rows));
//   switch (read.outcome) {
//     case SnapshotRead::kChunk:     Emit(*read.chunk); break;
//     case SnapshotRead::kBlocked:   cx.WakeNoLaterThan(read.retry_at); break;
//     case SnapshotRead::kExhausted: /* end of snapshot */ break;
//     case SnapshotRead::kRowLimit:  break;
//   }
//   BACKFILL_ASSIGN_OR_RETURN(std::vector<VnodeChunk> rest, snapshot.Flush());
// clang-format on
//
// The reader opens on the first Read after construction or Flush, at the
// positions `state` has then; the caller advances `state` for every chunk it
// takes (a chunk's rows are all sent). Flush ends an epoch's reading: the
// replicated table may be written only while no reader is open.
//
// Thread-safety: one thread at a time. `table`, `state` and `limiter` must
// outlive the reader.
#ifndef EXECUTOR_BACKFILL_SNAPSHOT_CHUNK_READER_H_
#define EXECUTOR_BACKFILL_SNAPSHOT_CHUNK_READER_H_

#include <cstddef>
#include <cstdint>
#include <map>
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
    kChunk,      // A builder filled up: `chunk` holds its rows.
    kRowLimit,   // `max_rows` rows were read without filling a chunk.
    kBlocked,    // The rate limiter had no permits for the next row.
    kExhausted,  // No rows are left (the builders may still hold some).
  };
  Outcome outcome = kRowLimit;
  // Set iff outcome == kChunk.
  std::optional<VnodeChunk> chunk;
  // kBlocked: when the limiter expects to grant the next batch;
  // absl::InfiniteFuture() when it cannot say (paused).
  absl::Time retry_at = absl::InfiniteFuture();
};

class SnapshotChunkReader {
 public:
  // Builders for every vnode `state` owns, of chunk_capacity() rows. No I/O.
  // REQUIRES: chunk_size >= 1.
  SnapshotChunkReader(ReplicatedStateTable& table, const BackfillState& state,
                      MonitoredRateLimiter& limiter, uint32_t chunk_size);
  SnapshotChunkReader(const SnapshotChunkReader&) = delete;
  SnapshotChunkReader& operator=(const SnapshotChunkReader&) = delete;

  // Reads rows into the builders until one fills up (kChunk), `max_rows`
  // rows were read, the limiter denies the next batch of permits (nothing is
  // read for that row), or the snapshot ends. Opens the reader first if
  // none is open. Errors: the snapshot read's (the vnode in the message);
  // rows already in the builders stay there.
  absl::StatusOr<SnapshotRead> Read(size_t max_rows);

  // True if Read may read a row now without asking the limiter: the limit is
  // disabled, permits of an earlier batch are left, or a batch of
  // chunk_capacity() permits is granted now (and kept for Read).
  bool AcquirePermitsNow();

  // Closes the reader and returns what the builders hold, one chunk per
  // vnode with rows, in vnode order; the builders are empty afterwards and
  // the next Read opens a new reader at the state's positions. Errors: the
  // read error the reader ended with, if any (the builders keep their rows).
  absl::StatusOr<std::vector<VnodeChunk>> Flush();

  // Re-creates the builders with the current chunk_capacity() and drops the
  // permits left (call after the limit changed).
  // REQUIRES: the builders are empty (after Flush).
  void Resize();

  // Rows per chunk: SnapshotChunkSize(limiter.limit(), chunk_size), i.e.
  // max(2, min(rate, chunk_size)).
  uint32_t chunk_capacity() const;

 private:
  void OpenReader();

  ReplicatedStateTable& table_;
  const BackfillState& state_;
  MonitoredRateLimiter& limiter_;
  const uint32_t chunk_size_;
  // S2 column types.
  std::vector<DataType> types_;

  std::map<VirtualNode, DataChunkBuilder> builders_;
  // The builder of the vnode the reader is in (points into builders_): rows
  // come in runs of one vnode, so it is looked up once per run.
  DataChunkBuilder* current_builder_ = nullptr;
  VirtualNode current_builder_vnode_ = 0;
  std::unique_ptr<VnodeSnapshotReader> reader_;
  // Permits granted and not yet used (only under a Fixed limit).
  uint64_t permits_ = 0;
};

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_SNAPSHOT_CHUNK_READER_H_
