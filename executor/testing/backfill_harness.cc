#include "executor/testing/backfill_harness.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "executor/channel.h"
#include "executor/poll.h"
#include "executor/runtime/hash_dispatcher.h"
#include "serde/positional_codec.h"
#include "serde/schema.h"
#include "serde/vnode_hash.h"
#include "storage/replicated_state_table.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace testing {
namespace {

class FlagWaker final : public Waker {
 public:
  void Wake() override { woken_.store(true); }
  bool TakeWoken() { return woken_.exchange(false); }

 private:
  std::atomic<bool> woken_{false};
};

}  // namespace

absl::StatusOr<std::unique_ptr<BackfillHarness>> BackfillHarness::Create(
    StateStore& store, SimulatedClock& clock, HarnessOptions options) {
  std::unique_ptr<BackfillHarness> harness(
      new BackfillHarness(store, clock, std::move(options)));
  BACKFILL_RETURN_IF_ERROR(harness->Init());
  return harness;
}

BackfillHarness::BackfillHarness(StateStore& store, SimulatedClock& clock,
                                 HarnessOptions options)
    : store_(store), clock_(clock), options_(std::move(options)) {}

BackfillHarness::~BackfillHarness() = default;

absl::Status BackfillHarness::Init() {
  const TableCatalog& upstream = options_.upstream;
  if (!options_.owned.has_value()) {
    options_.owned = VnodeBitmap::All(upstream.vnode_count);
  }
  BACKFILL_ASSIGN_OR_RETURN(
      upstream_table_,
      StateTable::Create(upstream, store_, VnodeBitmap::All(upstream.vnode_count)));
  BACKFILL_RETURN_IF_ERROR(
      upstream_table_->InitEpoch(EpochPair{Epoch(1), Epoch(0)}));
  epoch_ = 1;
  return CreateExecutor();
}

absl::Status BackfillHarness::CreateExecutor() {
  const TableCatalog& upstream = options_.upstream;
  s2_to_s1_.clear();
  s2_types_.clear();
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<ReplicatedStateTable> replicated,
      ReplicatedStateTable::Create(upstream, store_, *options_.owned,
                                   options_.s2_column_ids));
  for (int s1 : replicated->output_indices()) {
    s2_to_s1_.push_back(s1);
    s2_types_.push_back(upstream.columns[s1].type);
  }
  // The view's rows are identified by their value encoding, which covers
  // every column type (a memcomparable key has no JSONB or MAP form).
  // (An output may repeat a column: named by position.)
  Schema s3;
  for (int s2 : options_.backfill.output_indices) {
    const int32_t i = static_cast<int32_t>(s3.size());
    s3.push_back(ColumnDesc{absl::StrCat("o", i),
                            upstream.columns.at(s2_to_s1_.at(s2)).type, i});
  }
  BACKFILL_ASSIGN_OR_RETURN(view_codec_,
                            PositionalCodec::Create(std::move(s3)));
  BACKFILL_ASSIGN_OR_RETURN(
      tracker_, JobProgressTracker::Create(
                    {{options_.backfill.actor_id,
                      static_cast<uint32_t>(options_.owned->Count())}}));
  reporter_ = std::make_unique<ProgressReporter>(options_.backfill.actor_id,
                                                 *tracker_);
  if (!metrics_.has_value()) {
    BACKFILL_ASSIGN_OR_RETURN(
        BackfillMetrics metrics,
        BackfillMetrics::Create(registry_, upstream.table_id,
                                options_.backfill.actor_id));
    metrics_.emplace(std::move(metrics));
  }
  ExecutorInfo input_info;
  input_info.schema = s2_types_;
  input_info.identity = "dispatcher output";
  ScriptedExecutorOptions input_options;
  input_options.when_exhausted = ScriptedExecutorOptions::WhenExhausted::kPending;
  auto input = std::make_unique<ScriptedExecutor>(input_info, input_options);
  input_ = input.get();
  if (options_.make_executor) {
    replicated.reset();
    BACKFILL_ASSIGN_OR_RETURN(
        executor_, options_.make_executor(std::move(input), reporter_.get(),
                                          &*metrics_, &clock_));
    return absl::OkStatus();
  }
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<StateTable> progress,
      StateTable::Create(
          BackfillProgressCatalog(upstream, options_.progress_table_id), store_,
          *options_.owned));
  ArrangementBackfillOptions backfill = options_.backfill;
  backfill.clock = &clock_;
  BACKFILL_ASSIGN_OR_RETURN(
      executor_, ArrangementBackfillExecutor::Create(
                     std::move(replicated), std::move(input),
                     std::move(progress), reporter_.get(), &*metrics_,
                     backfill));
  return absl::OkStatus();
}

Row BackfillHarness::ToS2(const Row& s1) const {
  return ProjectRow(s1, s2_to_s1_);
}

std::string BackfillHarness::ViewKey(const Row& s3) const {
  std::string key;
  view_codec_->Encode(s3, &key);
  return key;
}

size_t BackfillHarness::view_size() const {
  size_t total = 0;
  for (const auto& [key, count] : view_) total += count;
  return total;
}

void BackfillHarness::Crash() {
  executor_.reset();
  input_ = nullptr;
  upstream_table_.reset();
  pending_rows_.clear();
  model_ = checkpoint_model_;
  view_ = checkpoint_view_;
}

absl::Status BackfillHarness::Restart(std::optional<VnodeBitmap> owned,
                                      std::optional<Mutation> mutation) {
  if (executor_ != nullptr) {
    return absl::FailedPreconditionError("Restart without Crash");
  }
  options_.owned = std::move(owned);
  if (!options_.owned.has_value()) {
    options_.owned = VnodeBitmap::All(options_.upstream.vnode_count);
  }
  const uint64_t committed =
      store_.CommittedEpoch(options_.upstream.table_id).value();
  const EpochPair first{Epoch(committed + 1), Epoch(committed)};
  BACKFILL_ASSIGN_OR_RETURN(
      upstream_table_,
      StateTable::Create(options_.upstream, store_,
                         VnodeBitmap::All(options_.upstream.vnode_count)));
  BACKFILL_RETURN_IF_ERROR(upstream_table_->InitEpoch(first));
  BACKFILL_RETURN_IF_ERROR(CreateExecutor());
  epoch_ = committed;
  clock_.AdvanceTime(options_.barrier_interval);
  backfill::Barrier barrier;
  barrier.epoch = first;
  barrier.kind = BarrierKind::kInitial;
  if (mutation.has_value()) {
    barrier.mutation = std::make_shared<const Mutation>(std::move(*mutation));
  }
  input_->Push(std::move(barrier));
  BACKFILL_RETURN_IF_ERROR(Drive(first.curr));
  epoch_ = committed + 1;
  // The first barrier is emitted before the actor loads its progress, so the
  // invariant can only be checked from the next barrier on.
  return absl::OkStatus();
}

void BackfillHarness::Route(Op op, const Row& s1) {
  if (executor_ == nullptr || !started_) return;
  const VirtualNode vnode = upstream_table_->ComputeVnode(s1);
  if (!options_.owned->Test(vnode)) return;
  pending_rows_.emplace_back(op, ToS2(s1));
}

absl::Status BackfillHarness::Insert(const Row& row) {
  BACKFILL_RETURN_IF_ERROR(upstream_table_->Insert(row));
  model_[upstream_table_->pk_serde().Serialize(
      ProjectRow(row, options_.upstream.pk_indices))] = row;
  Route(Op::kInsert, row);
  return absl::OkStatus();
}

absl::Status BackfillHarness::Delete(const Row& row_ref) {
  const Row row = row_ref;  // may refer into the model, which changes below
  BACKFILL_RETURN_IF_ERROR(upstream_table_->Delete(row));
  model_.erase(upstream_table_->pk_serde().Serialize(
      ProjectRow(row, options_.upstream.pk_indices)));
  Route(Op::kDelete, row);
  return absl::OkStatus();
}

absl::Status BackfillHarness::Update(const Row& old_ref, const Row& new_ref) {
  const Row old_row = old_ref, new_row = new_ref;  // may refer into the model
  BACKFILL_RETURN_IF_ERROR(upstream_table_->Update(old_row, new_row));
  model_.erase(upstream_table_->pk_serde().Serialize(
      ProjectRow(old_row, options_.upstream.pk_indices)));
  model_[upstream_table_->pk_serde().Serialize(
      ProjectRow(new_row, options_.upstream.pk_indices))] = new_row;
  if (executor_ != nullptr && started_) {
    BACKFILL_RETURN_IF_ERROR(DispatchPair(old_row, new_row));
  }
  return absl::OkStatus();
}

absl::Status BackfillHarness::DispatchPair(const Row& old_row,
                                           const Row& new_row) {
  // The runtime's dispatcher decides what of the pair reaches this actor:
  // its vnodes are output 0, every other vnode output 1 (another actor).
  const TableCatalog& upstream = options_.upstream;
  std::vector<int> owner(upstream.vnode_count, 1);
  for (VirtualNode vnode : options_.owned->set_vnodes()) owner[vnode] = 0;
  BACKFILL_ASSIGN_OR_RETURN(
      VnodeHasher hasher,
      VnodeHasher::Create(upstream.dist_key_indices, upstream.vnode_count));
  auto [ours_tx, ours_rx] = MakeChannel(ChannelOptions{2});
  auto [others_tx, others_rx] = MakeChannel(ChannelOptions{2});
  std::vector<ChannelSender> outputs;
  outputs.push_back(std::move(ours_tx));
  outputs.push_back(std::move(others_tx));
  HashDispatcher dispatcher(std::move(outputs), std::move(hasher),
                            std::move(owner), s2_to_s1_, clock_);
  BACKFILL_RETURN_IF_ERROR(dispatcher.Dispatch(StreamChunk::FromRows(
      ColumnTypes(upstream.columns), {Op::kUpdateDelete, Op::kUpdateInsert},
      {old_row, new_row})));
  PollContext cx(std::make_shared<FlagWaker>(), clock_);
  PollResult received = ours_rx.PollReceive(cx);
  if (!received.is_ready()) return absl::OkStatus();  // nothing of ours
  const StreamChunk& chunk = std::get<StreamChunk>(received.message());
  for (size_t i = 0; i < chunk.capacity(); ++i) {
    if (chunk.is_visible(i)) pending_rows_.emplace_back(chunk.op(i), chunk.RowAt(i));
  }
  return absl::OkStatus();
}

void BackfillHarness::FlushChunk() {
  if (pending_rows_.empty()) return;
  std::vector<Op> ops;
  std::vector<Row> rows;
  for (auto& [op, row] : pending_rows_) {
    ops.push_back(op);
    rows.push_back(std::move(row));
  }
  pending_rows_.clear();
  input_->Push(StreamChunk::FromRows(s2_types_, std::move(ops), rows));
}

void BackfillHarness::PushPending(int count) {
  FlushChunk();
  for (int i = 0; i < count; ++i) input_->PushPending();
}

void BackfillHarness::PushWatermark(Watermark watermark) {
  FlushChunk();
  input_->Push(std::move(watermark));
}

absl::Status BackfillHarness::StartBackfill(std::optional<Mutation> mutation) {
  if (epoch_ != 1) {
    return absl::FailedPreconditionError("StartBackfill called twice");
  }
  // The initial rows: committed by a checkpoint before the view exists.
  BACKFILL_RETURN_IF_ERROR(Barrier(BarrierKind::kCheckpoint));
  // The backfill's first barrier, {3, 2}.
  return Barrier(BarrierKind::kCheckpoint, std::move(mutation));
}

absl::Status BackfillHarness::Barrier(BarrierKind kind,
                                      std::optional<Mutation> mutation) {
  const EpochPair pair{Epoch(epoch_ + 1), Epoch(epoch_)};
  BACKFILL_RETURN_IF_ERROR(upstream_table_->Commit(pair));
  const bool backfill_running = started_ || epoch_ >= 2;
  started_ = backfill_running;
  if (backfill_running) {
    FlushChunk();
    clock_.AdvanceTime(options_.barrier_interval);
    backfill::Barrier barrier;
    barrier.epoch = pair;
    barrier.kind = kind;
    if (mutation.has_value()) {
      barrier.mutation = std::make_shared<const Mutation>(std::move(*mutation));
    }
    input_->Push(std::move(barrier));
    BACKFILL_RETURN_IF_ERROR(Drive(pair.curr));
  }
  if (kind == BarrierKind::kCheckpoint) {
    BACKFILL_RETURN_IF_ERROR(store_.Checkpoint(pair.prev));
    checkpoint_model_ = model_;
    checkpoint_view_ = view_;
  }
  ++epoch_;
  if (backfill_running) return CheckInvariant(pair);
  return absl::OkStatus();
}

absl::Status BackfillHarness::Drive(Epoch until_curr) {
  auto waker = std::make_shared<FlagWaker>();
  PollContext cx(waker, clock_);
  last_output_.clear();
  for (int64_t polls = 0; polls < 50'000'000; ++polls) {
    cx.ResetWakeDeadline();
    PollResult result = executor_->PollNext(cx);
    switch (result.kind()) {
      case PollResult::Kind::kReady: {
        Message message = std::move(result).message();
        BACKFILL_RETURN_IF_ERROR(ApplyOutput(message));
        const auto* barrier = std::get_if<backfill::Barrier>(&message);
        const bool done = barrier != nullptr && barrier->epoch.curr == until_curr;
        last_output_.push_back(std::move(message));
        if (done) return absl::OkStatus();
        continue;
      }
      case PollResult::Kind::kError:
        return result.status();
      case PollResult::Kind::kEnd:
        return absl::FailedPreconditionError(absl::StrCat(
            "the executor ended before emitting barrier ", until_curr.value()));
      case PollResult::Kind::kPending:
        if (waker->TakeWoken()) continue;
        if (cx.wake_deadline() != absl::InfiniteFuture()) {
          clock_.SetTime(cx.wake_deadline());
          continue;
        }
        return absl::FailedPreconditionError(absl::StrCat(
            "the executor is stuck (Pending with no wake-up) before emitting "
            "barrier ",
            until_curr.value()));
    }
  }
  return absl::DeadlineExceededError("too many polls");
}

absl::Status BackfillHarness::ApplyOutput(const Message& message) {
  const StreamChunk* chunk = std::get_if<StreamChunk>(&message);
  if (chunk == nullptr) return absl::OkStatus();
  BACKFILL_RETURN_IF_ERROR(chunk->Validate());
  for (size_t i = 0; i < chunk->capacity(); ++i) {
    if (!chunk->is_visible(i)) continue;
    const Row row = chunk->RowAt(i);
    const std::string key = ViewKey(row);
    switch (chunk->op(i)) {
      case Op::kInsert:
      case Op::kUpdateInsert:
        ++view_[key];
        break;
      case Op::kDelete:
      case Op::kUpdateDelete: {
        auto it = view_.find(key);
        if (it == view_.end()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "epoch ", epoch_, ": the executor deleted ", RowDebugString(row),
              " which the view does not hold"));
        }
        if (--it->second == 0) view_.erase(it);
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status BackfillHarness::CheckInvariant(EpochPair epoch) {
  const BackfillState* state = executor_->backfill_state();
  std::map<std::string, int> expected;
  std::map<std::string, VirtualNode> vnode_of;
  for (const auto& [pk_bytes, s1] : model_) {
    const VirtualNode vnode = upstream_table_->ComputeVnode(s1);
    if (!options_.owned->Test(vnode)) continue;
    bool visible = false;
    if (state != nullptr) {
      const VnodeProgress* progress = state->Get(vnode);
      if (progress == nullptr) {
        return absl::InternalError(absl::StrCat("vnode ", vnode, " not in state"));
      }
      if (std::holds_alternative<Completed>(*progress)) {
        visible = true;
      } else if (const auto* in_progress = std::get_if<InProgress>(progress)) {
        const Row pk = ProjectRow(s1, options_.upstream.pk_indices);
        visible = CompareRows(pk, in_progress->current_pos,
                              options_.upstream.pk_orders) <= 0;
      }
    }
    if (!visible) continue;
    const Row s3 = ProjectRow(ToS2(s1), options_.backfill.output_indices);
    const std::string key = ViewKey(s3);
    ++expected[key];
    vnode_of[key] = vnode;
  }
  if (expected == view_) return absl::OkStatus();
  std::string diff;
  int shown = 0;
  auto describe = [&](const std::string& key) {
    absl::StatusOr<Row> row = view_codec_->Decode(key);
    return row.ok() ? RowDebugString(*row) : absl::CHexEscape(key);
  };
  for (const auto& [key, count] : expected) {
    auto it = view_.find(key);
    const int actual = it == view_.end() ? 0 : it->second;
    if (actual != count && shown++ < 5) {
      absl::StrAppend(&diff, "\n  vnode ", vnode_of[key], " row ", describe(key),
                      ": expected ", count, ", view has ", actual);
    }
  }
  for (const auto& [key, count] : view_) {
    if (!expected.contains(key) && shown++ < 5) {
      absl::StrAppend(&diff, "\n  row ", describe(key), ": expected 0, view has ",
                      count);
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "divergence after barrier ", epoch.DebugString(), " (",
      executor_->is_finished() ? "finished" : "backfilling", "): expected ",
      expected.size(), " distinct rows, view has ", view_.size(), diff));
}

}  // namespace testing
}  // namespace backfill
