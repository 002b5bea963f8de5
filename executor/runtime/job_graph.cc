#include "executor/runtime/job_graph.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/backfill/arrangement_backfill_executor.h"
#include "executor/backfill/arrangement_backfill_plan.h"
#include "executor/backfill/plan.pb.h"
#include "executor/runtime/materialize_executor.h"
#include "executor/runtime/merge_executor.h"
#include "executor/runtime/sabotage_for_test.h"
#include "ratelimit/rate_limit_split.h"
#include "serde/vnode_bitmap.h"
#include "serde/vnode_hash.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

std::vector<ActorId> JobGraph::ActorIds() const {
  std::vector<ActorId> ids = {kSourceActor, kViewActor};
  ids.insert(ids.end(), backfill_actor_ids.begin(), backfill_actor_ids.end());
  return ids;
}

absl::StatusOr<std::unique_ptr<JobGraph>> BuildJobGraph(
    StateStore& store, const StreamingJobOptions& options,
    const JobState& state, const JobGraphContext& context) {
  Clock& clock = *context.clock;
  BarrierListener* listener = context.listener;
  const TableCatalog& upstream = options.upstream;
  const std::vector<int> view_columns = ViewColumns(options);
  std::vector<int32_t> s2_ids;
  for (int column : view_columns) {
    s2_ids.push_back(upstream.columns[column].column_id);
  }
  auto graph = std::make_unique<JobGraph>();
  const ChannelOptions channel{options.channel_capacity};

  // The source: barriers in, the table's changes out through the dispatcher.
  auto [barrier_tx, barrier_rx] = MakeChannel(channel);
  graph->barriers.emplace(std::move(barrier_tx));
  BACKFILL_ASSIGN_OR_RETURN(
      auto upstream_table,
      StateTable::Create(upstream, store,
                         VnodeBitmap::All(upstream.vnode_count)));
  BACKFILL_ASSIGN_OR_RETURN(
      auto offset_table,
      StateTable::Create(
          DmlSourceExecutor::OffsetTableCatalog(options.source_offset_table_id),
          store, VnodeBitmap::All(1)));
  ExecutorInfo source_info;
  source_info.identity =
      absl::StrCat("DmlSource(actor ", JobGraph::kSourceActor, ")");
  auto source = std::make_unique<DmlSourceExecutor>(
      std::move(barrier_rx), std::move(upstream_table), std::move(offset_table),
      options.workload, graph->stop_generating, source_info);
  graph->source = source.get();

  const uint32_t parallelism = state.parallelism;
  graph->peak_buffer_bytes.assign(parallelism, 0);
  BACKFILL_ASSIGN_OR_RETURN(
      std::vector<VnodeBitmap> split,
      VnodeBitmap::EvenSplit(upstream.vnode_count,
                             static_cast<int>(parallelism)));
  std::vector<int> owner(upstream.vnode_count, 0);
  for (uint32_t i = 0; i < parallelism; ++i) {
    for (VirtualNode vnode : split[i].set_vnodes()) {
      owner[vnode] = static_cast<int>(i);
    }
    graph->owned_vnodes.push_back(static_cast<uint32_t>(split[i].Count()));
    graph->backfill_actor_ids.push_back(JobGraph::kFirstBackfillActor + i);
  }
  std::vector<ChannelSender> dispatch_senders;
  std::vector<ChannelReceiver> dispatch_receivers;
  for (uint32_t i = 0; i < parallelism; ++i) {
    auto [tx, rx] = MakeChannel(channel);
    dispatch_senders.push_back(std::move(tx));
    dispatch_receivers.push_back(std::move(rx));
  }
  BACKFILL_ASSIGN_OR_RETURN(
      VnodeHasher hasher,
      VnodeHasher::Create(upstream.dist_key_indices, upstream.vnode_count));
  auto dispatcher = std::make_unique<HashDispatcher>(
      std::move(dispatch_senders), std::move(hasher), std::move(owner),
      view_columns, clock);
  graph->dispatcher = dispatcher.get();
  auto report_end = [listener](const Actor& actor) {
    listener->ActorEnded(actor);
  };
  ActorCallbacks source_callbacks;
  source_callbacks.on_end = report_end;
  graph->actors.push_back(std::make_unique<Actor>(
      JobGraph::kSourceActor, std::move(source),
      PlantOutputSabotage(
          std::move(dispatcher),
          options.sabotage_for_test.drop_every_nth_change_chunk, 0),
      std::move(source_callbacks)));

  // The backfill actors.
  std::vector<TrackedActor> tracked;
  for (uint32_t i = 0; i < parallelism; ++i) {
    tracked.push_back({graph->backfill_actor_ids[i], graph->owned_vnodes[i]});
  }
  BACKFILL_ASSIGN_OR_RETURN(graph->tracker,
                            JobProgressTracker::Create(tracked));
  const std::vector<RateLimit> shares =
      SplitJobRateLimit(state.EffectiveRateLimit(), graph->owned_vnodes);
  std::vector<BoxedExecutor> view_inputs;
  for (uint32_t i = 0; i < parallelism; ++i) {
    const ActorId actor = graph->backfill_actor_ids[i];
    graph->reporters.push_back(
        std::make_unique<ProgressReporter>(actor, *graph->tracker));
    BackfillMetrics* metrics = nullptr;
    if (context.registry != nullptr) {
      BACKFILL_ASSIGN_OR_RETURN(
          BackfillMetrics created,
          BackfillMetrics::Create(*context.registry, upstream.table_id, actor));
      graph->metrics.push_back(std::move(created));
      metrics = &graph->metrics.back();
    }
    // The actor is built from its plan node, as a planner would hand it over.
    proto::ArrangementBackfillNode node;
    *node.mutable_upstream_table() = TableCatalogToProto(upstream);
    *node.mutable_progress_table() = TableCatalogToProto(
        BackfillProgressCatalog(upstream, options.progress_table_id));
    for (int32_t id : s2_ids) node.add_upstream_column_ids(id);
    for (size_t c = 0; c < view_columns.size(); ++c) {
      node.add_output_indices(static_cast<uint32_t>(c));
    }
    node.set_chunk_size(options.chunk_size);
    if (std::optional<uint32_t> limit = shares[i].ToOptionalU32()) {
      node.set_rate_limit(*limit);
    }
    node.set_actor_id(actor);
    node.set_fragment_id(JobGraph::kBackfillFragment);
    node.set_vnode_bitmap(split[i].Serialize());
    ExecutorInfo input_info;
    input_info.identity = absl::StrCat("Exchange(to actor ", actor, ")");
    auto input = std::make_unique<ReceiverExecutor>(
        input_info, std::move(dispatch_receivers[i]));
    auto [tx, rx] = MakeChannel(channel);
    auto output = std::make_unique<ChannelOutput>(std::move(tx));
    ChannelOutput* output_view = output.get();
    ArrangementBackfillDeps deps;
    deps.reporter = graph->reporters.back().get();
    deps.metrics = metrics;
    deps.clock = &clock;
    // A view that falls behind throttles the snapshot reads, never the
    // upstream: the actor keeps draining its input.
    deps.output_ready = [output_view](PollContext& cx) {
      return output_view->PollReady(cx);
    };
    BACKFILL_ASSIGN_OR_RETURN(
        std::unique_ptr<ArrangementBackfillExecutor> backfill,
        BuildArrangementBackfillFromPlan(node, store, std::move(input), deps));
    ArrangementBackfillExecutor* backfill_view = backfill.get();
    ActorCallbacks callbacks;
    callbacks.on_barrier = [listener](const Barrier& barrier, absl::Time now) {
      listener->BackfillEmitted(barrier, now);
    };
    // Read before the actor may be abandoned (which destroys the executor).
    callbacks.on_end = [graph = graph.get(), i, backfill_view,
                        report_end](const Actor& actor) {
      graph->peak_buffer_bytes[i] = backfill_view->peak_upstream_buffer_bytes();
      report_end(actor);
    };
    graph->actors.push_back(std::make_unique<Actor>(
        actor, std::move(backfill),
        PlantOutputSabotage(
            std::move(output), 0,
            options.sabotage_for_test.duplicate_every_nth_output_chunk),
        std::move(callbacks)));
    ExecutorInfo merge_input_info;
    merge_input_info.identity =
        absl::StrCat("Exchange(from actor ", actor, ")");
    view_inputs.push_back(
        std::make_unique<ReceiverExecutor>(merge_input_info, std::move(rx)));
  }

  // The view: merge -> materialize; its barriers are collected.
  ExecutorInfo merge_info;
  merge_info.identity = "Merge(view)";
  auto merge =
      std::make_unique<MergeExecutor>(std::move(view_inputs), merge_info);
  BACKFILL_ASSIGN_OR_RETURN(
      auto view_table,
      StateTable::Create(ViewCatalog(options), store,
                         VnodeBitmap::All(upstream.vnode_count)));
  ExecutorInfo view_info;
  view_info.identity =
      absl::StrCat("Materialize(view, actor ", JobGraph::kViewActor, ")");
  auto view = std::make_unique<MaterializeExecutor>(
      std::move(merge), std::move(view_table), view_info);
  ActorCallbacks view_callbacks;
  view_callbacks.on_barrier = [listener](const Barrier& barrier, absl::Time) {
    listener->Collected(barrier);
  };
  view_callbacks.on_end = report_end;
  graph->actors.push_back(std::make_unique<Actor>(
      JobGraph::kViewActor, std::move(view), std::make_unique<DiscardOutput>(),
      std::move(view_callbacks)));
  return graph;
}

}  // namespace backfill
