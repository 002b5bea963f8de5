#include "executor/cluster/split_job_harness.h"

#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "executor/cluster/grpc_remote_actors.h"
#include "executor/cluster/remote_exchange.h"
#include "executor/runtime/barrier_coordinator.h"
#include "executor/runtime/streaming_job.h"
#include "executor/runtime/threaded_driver.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

// The worker runs the even backfill actors; the coordinator's process the
// source, the view and the odd ones.
bool OnWorker(ActorId actor) {
  return actor >= JobGraph::kFirstBackfillActor && actor % 2 == 0;
}

// Runs each attempt's worker actors in a second graph of this process. Its
// only links to the coordinator's graph are two exchange servers on local
// ports; its progress and actor ends are reported as a worker's would be
// forwarded (to the coordinator's tracker and the coordinator).
class SecondGraphPlacement final : public AttemptPlacement {
 public:
  SecondGraphPlacement(StateStore& store, const StreamingJobOptions& options,
                       std::unique_ptr<ExchangeServer> host_server,
                       std::unique_ptr<ExchangeServer> worker_server,
                       absl::Duration break_exchange_after)
      : store_(store),
        options_(options),
        host_server_(std::move(host_server)),
        worker_server_(std::move(worker_server)),
        break_exchange_after_(break_exchange_after),
        host_([](ActorId actor) { return !OnWorker(actor); }, *host_server_,
              [this](ActorId) { return worker_server_->address(); },
              /*permits=*/8),
        worker_(
            OnWorker, *worker_server_,
            [this](ActorId) { return host_server_->address(); },
            /*permits=*/8) {}

  ~SecondGraphPlacement() override {
    if (thread_.joinable()) thread_.join();
    if (breaker_.joinable()) breaker_.join();
  }

  bool IsLocal(ActorId actor) const override { return host_.IsLocal(actor); }
  absl::Status Serve(ActorId upstream, ActorId downstream, const Schema& schema,
                     ChannelReceiver receiver) override {
    return host_.Serve(upstream, downstream, schema, std::move(receiver));
  }
  absl::Status Receive(ActorId upstream, ActorId downstream,
                       const Schema& schema, ChannelSender sender) override {
    return host_.Receive(upstream, downstream, schema, std::move(sender));
  }

  absl::Status StartRemote(const JobState& state, JobGraph& graph,
                           BarrierCoordinator& listener) override {
    JobGraphContext context;
    context.clock = &Clock::Real();
    context.listener = &listener;
    context.remote = &worker_;
    context.progress_sink = graph.in_force().tracker.get();
    BACKFILL_ASSIGN_OR_RETURN(worker_graph_,
                              BuildJobGraph(store_, options_, state, context));
    worker_actors_ = worker_graph_->actors.size();
    thread_ = std::thread([this] {
      worker_status_ = RunActorsThreaded(*worker_graph_, Clock::Real());
    });
    if (break_exchange_after_ > absl::ZeroDuration()) {
      breaker_ = std::thread([this] {
        absl::SleepFor(break_exchange_after_);
        worker_server_->Shutdown();
      });
    }
    return absl::OkStatus();
  }

  absl::Status EndRemote() override {
    if (thread_.joinable()) thread_.join();
    if (breaker_.joinable()) breaker_.join();
    worker_.CancelInputs();
    host_.CancelInputs();
    return worker_status_;
  }

  size_t worker_actors() const { return worker_actors_; }

 private:
  StateStore& store_;
  const StreamingJobOptions& options_;
  std::unique_ptr<ExchangeServer> host_server_;
  std::unique_ptr<ExchangeServer> worker_server_;
  const absl::Duration break_exchange_after_;
  GrpcRemoteActors host_;
  GrpcRemoteActors worker_;
  std::unique_ptr<JobGraph> worker_graph_;
  size_t worker_actors_ = 0;
  std::thread thread_;
  std::thread breaker_;
  absl::Status worker_status_;
};

}  // namespace

StreamingJobOptions SplitJobOptions(BackfillKind kind) {
  StreamingJobOptions options;
  options.upstream.table_id = 1;
  options.upstream.name = "orders";
  options.upstream.columns = {{"id", DataType::kInt64, 1, false},
                              {"customer", DataType::kVarchar, 2, true},
                              {"qty", DataType::kInt32, 3, true}};
  options.upstream.pk_indices = {0};
  options.upstream.pk_orders = {OrderType::Ascending()};
  options.upstream.dist_key_indices = {0};
  options.upstream.vnode_count = 16;
  options.upstream.value_indices = {0, 1, 2};
  options.output_columns = {0, 2};
  options.backfill_kind = kind;
  options.initial_rows = 4000;
  options.workload.ops_per_second = 3000;
  options.workload.update_primary_key = true;
  options.workload.null_fraction = 0.1;
  options.workload.key_space = 8000;
  options.workload.seed = 5;
  options.parallelism = 3;
  options.chunk_size = 64;
  options.rate_limit = RateLimit::Fixed(8000);
  options.barrier_interval = absl::Milliseconds(10);
  options.checkpoint_frequency = 2;
  options.max_duration = absl::Seconds(120);
  return options;
}

SplitRun RunSplit(StateStore& host_store, StateStore& worker_store,
                  const StreamingJobOptions& options, int broken_attempts,
                  absl::Duration break_after) {
  SplitRun run;
  std::vector<SecondGraphPlacement*> placements;
  int attempts = 0;
  PlacementFactory factory = [&](const JobState&)
      -> absl::StatusOr<std::unique_ptr<AttemptPlacement>> {
    BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<ExchangeServer> host,
                              ExchangeServer::Start());
    BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<ExchangeServer> worker,
                              ExchangeServer::Start());
    auto placement = std::make_unique<SecondGraphPlacement>(
        worker_store, options, std::move(host), std::move(worker),
        attempts++ < broken_attempts ? break_after : absl::ZeroDuration());
    placements.push_back(placement.get());
    return placement;
  };
  run.result = RunStreamingJobWithDriver(
      host_store, options, nullptr, {}, Clock::Real(),
      [&](JobGraph& graph, BarrierCoordinator& coordinator) {
        run.host_actors.push_back(graph.actors.size());
        run.worker_actors.push_back(placements.back()->worker_actors());
        return RunThreaded(graph, coordinator, options.barrier_interval,
                           Clock::Real());
      },
      factory);
  return run;
}

}  // namespace backfill
