#include "executor/runtime/job_graph.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/backfill/arrangement_backfill_executor.h"
#include "executor/backfill/arrangement_backfill_plan.h"
#include "executor/backfill/no_shuffle_backfill_plan.h"
#include "executor/backfill/plan.pb.h"
#include "executor/backfill/snapshot_backfill_plan.h"
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
  const std::vector<ActorId>& backfill = in_force().actor_ids;
  ids.insert(ids.end(), backfill.begin(), backfill.end());
  return ids;
}

namespace {

// A set of backfill actors built and not yet wired into the graph.
struct NewBackfillSet {
  std::unique_ptr<BackfillActorSet> set;
  std::vector<std::unique_ptr<Actor>> actors;
  // Per actor: the sending end of its input, the receiving end of its output.
  std::vector<ChannelSender> inputs;
  std::vector<ChannelReceiver> outputs;
  // Per vnode: the index of its actor in the set.
  std::vector<int> owner;
};

// Builds `parallelism` backfill actors with ids from `first_id`, an even
// split of the vnodes and each its share of `rate_limit`, from their plan
// nodes, as a planner would hand them over.
absl::StatusOr<NewBackfillSet> BuildBackfillSet(JobGraph& graph,
                                                uint32_t parallelism,
                                                RateLimit rate_limit,
                                                ActorId first_id) {
  const StreamingJobOptions& options = *graph.options;
  const TableCatalog& upstream = options.upstream;
  Clock& clock = *graph.context.clock;
  BarrierListener* listener = graph.context.listener;
  const ChannelOptions channel{.capacity = options.channel_capacity,
                               .rows = options.channel_rows};
  const std::vector<int> view_columns = ViewColumns(options);
  std::vector<int32_t> s2_ids;
  for (int column : view_columns) {
    s2_ids.push_back(upstream.columns[column].column_id);
  }
  NewBackfillSet built;
  built.set = std::make_unique<BackfillActorSet>();
  BackfillActorSet& set = *built.set;
  set.peak_buffer_bytes.assign(parallelism, 0);
  set.peak_log_bytes.assign(parallelism, 0);
  BACKFILL_ASSIGN_OR_RETURN(
      std::vector<VnodeBitmap> split,
      VnodeBitmap::EvenSplit(upstream.vnode_count,
                             static_cast<int>(parallelism)));
  built.owner.assign(upstream.vnode_count, 0);
  std::vector<TrackedActor> tracked;
  for (uint32_t i = 0; i < parallelism; ++i) {
    for (VirtualNode vnode : split[i].set_vnodes()) {
      built.owner[vnode] = static_cast<int>(i);
    }
    set.owned_vnodes.push_back(static_cast<uint32_t>(split[i].Count()));
    set.actor_ids.push_back(first_id + i);
    tracked.push_back({set.actor_ids[i], set.owned_vnodes[i]});
  }
  BACKFILL_ASSIGN_OR_RETURN(set.tracker, JobProgressTracker::Create(tracked));
  const std::vector<RateLimit> shares =
      SplitJobRateLimit(rate_limit, set.owned_vnodes);
  ProgressEventSink& progress_sink = graph.context.progress_sink != nullptr
                                         ? *graph.context.progress_sink
                                         : *set.tracker;
  for (uint32_t i = 0; i < parallelism; ++i) {
    const ActorId actor = set.actor_ids[i];
    set.reporters.push_back(
        std::make_unique<ProgressReporter>(actor, progress_sink));
    const bool local =
        graph.context.remote == nullptr || graph.context.remote->IsLocal(actor);
    if (!local) {
      // Another process runs it: only its channels here, for the wiring.
      auto [input_tx, input_rx] = MakeChannel(channel);
      auto [output_tx, output_rx] = MakeChannel(channel);
      built.actors.push_back(nullptr);
      set.actors.push_back(nullptr);
      built.inputs.push_back(std::move(input_tx));
      built.outputs.push_back(std::move(output_rx));
      continue;
    }
    BackfillMetrics* metrics = nullptr;
    if (graph.context.registry != nullptr) {
      BACKFILL_ASSIGN_OR_RETURN(
          BackfillMetrics created,
          BackfillMetrics::Create(*graph.context.registry, upstream.table_id,
                                  actor));
      graph.metrics.push_back(std::move(created));
      metrics = &graph.metrics.back();
    }
    proto::ArrangementBackfillNode node;
    *node.mutable_upstream_table() = TableCatalogToProto(upstream);
    *node.mutable_progress_table() = TableCatalogToProto(
        BackfillProgressCatalog(upstream, options.progress_table_id));
    for (int32_t id : s2_ids) node.add_upstream_column_ids(id);
    for (size_t c = 0; c < view_columns.size(); ++c) {
      node.add_output_indices(static_cast<uint32_t>(c));
    }
    node.set_chunk_size(options.chunk_size);
    node.set_upstream_buffer_budget_bytes(options.upstream_buffer_budget_bytes);
    if (std::optional<uint32_t> limit = shares[i].ToOptionalU32()) {
      node.set_rate_limit(*limit);
    }
    node.set_actor_id(actor);
    node.set_fragment_id(JobGraph::kBackfillFragment);
    node.set_vnode_bitmap(split[i].Serialize());
    auto [input_tx, input_rx] = MakeChannel(channel);
    ExecutorInfo input_info;
    input_info.identity = absl::StrCat("Exchange(to actor ", actor, ")");
    auto input =
        std::make_unique<ReceiverExecutor>(input_info, std::move(input_rx));
    auto [output_tx, output_rx] = MakeChannel(channel);
    auto output = std::make_unique<ChannelOutput>(std::move(output_tx));
    ChannelOutput* output_view = output.get();
    ArrangementBackfillDeps deps;
    deps.reporter = set.reporters.back().get();
    deps.metrics = metrics;
    deps.clock = &clock;
    // A view that falls behind throttles the snapshot reads, never the
    // upstream: the actor keeps draining its input.
    deps.output_ready = [output_view](PollContext& cx) {
      return output_view->PollReady(cx);
    };
    ActorCallbacks callbacks;
    callbacks.on_barrier = [listener, actor](const Barrier& barrier,
                                             absl::Time now) {
      listener->BackfillEmitted(actor, barrier, now);
    };
    BoxedExecutor root;
    if (options.backfill_kind == BackfillKind::kNoShuffle) {
      // The upstream table's writer for these vnodes, and the backfill
      // beside it in the same actor, reading the writer's table.
      BACKFILL_ASSIGN_OR_RETURN(
          std::unique_ptr<StateTable> writer_table,
          StateTable::Create(upstream, *graph.store, split[i]));
      StateTable& writer_table_view = *writer_table;
      ExecutorInfo writer_info;
      writer_info.identity =
          absl::StrCat("Materialize(upstream, actor ", actor, ")");
      auto writer = std::make_unique<MaterializeExecutor>(
          std::move(input), std::move(writer_table), writer_info);
      proto::NoShuffleBackfillNode no_shuffle;
      *no_shuffle.mutable_upstream_table() = node.upstream_table();
      *no_shuffle.mutable_progress_table() = node.progress_table();
      for (int column : view_columns) {
        no_shuffle.add_output_indices(static_cast<uint32_t>(column));
      }
      no_shuffle.set_chunk_size(options.chunk_size);
      if (node.has_rate_limit()) no_shuffle.set_rate_limit(node.rate_limit());
      no_shuffle.set_actor_id(actor);
      no_shuffle.set_fragment_id(JobGraph::kBackfillFragment);
      no_shuffle.set_vnode_bitmap(node.vnode_bitmap());
      BACKFILL_ASSIGN_OR_RETURN(
          root, BuildNoShuffleBackfillFromPlan(no_shuffle, *graph.store,
                                               writer_table_view,
                                               std::move(writer), deps));
      // Nothing is buffered: peak_buffer_bytes stays 0.
      callbacks.on_end = [listener](const Actor& actor) {
        listener->ActorEnded(actor);
      };
    } else if (options.backfill_kind == BackfillKind::kSnapshot) {
      // Apart from the upstream, like the arrangement backfill: the
      // dispatcher's S2 changes in, the committed table read at its
      // snapshot epoch, its log and progress in two singleton tables that
      // every actor shares (keyed by actor id).
      proto::SnapshotBackfillNode snapshot;
      *snapshot.mutable_upstream_table() = node.upstream_table();
      *snapshot.mutable_upstream_column_ids() = node.upstream_column_ids();
      *snapshot.mutable_output_indices() = node.output_indices();
      snapshot.set_chunk_size(options.chunk_size);
      if (node.has_rate_limit()) snapshot.set_rate_limit(node.rate_limit());
      snapshot.set_actor_id(actor);
      snapshot.set_fragment_id(JobGraph::kBackfillFragment);
      snapshot.set_vnode_bitmap(node.vnode_bitmap());
      *snapshot.mutable_log_table() = TableCatalogToProto(SnapshotLogCatalog(
          upstream, view_columns, options.snapshot_log_table_id));
      *snapshot.mutable_progress_table() = TableCatalogToProto(
          SnapshotMetaCatalog(options.snapshot_meta_table_id));
      snapshot.set_log_budget_bytes(options.snapshot_log_budget_bytes);
      BACKFILL_ASSIGN_OR_RETURN(
          std::unique_ptr<SnapshotBackfillExecutor> backfill,
          BuildSnapshotBackfillFromPlan(snapshot, *graph.store,
                                        std::move(input), deps));
      SnapshotBackfillExecutor* backfill_view = backfill.get();
      callbacks.on_end = [set = &set, i, backfill_view,
                          listener](const Actor& actor) {
        set->peak_log_bytes[i] = backfill_view->peak_log_bytes();
        listener->ActorEnded(actor);
      };
      root = std::move(backfill);
    } else {
      BACKFILL_ASSIGN_OR_RETURN(
          std::unique_ptr<ArrangementBackfillExecutor> backfill,
          BuildArrangementBackfillFromPlan(node, *graph.store, std::move(input),
                                           deps));
      ArrangementBackfillExecutor* backfill_view = backfill.get();
      // Read before the actor may be abandoned (which destroys the executor).
      callbacks.on_end = [set = &set, i, backfill_view,
                          listener](const Actor& actor) {
        set->peak_buffer_bytes[i] = backfill_view->peak_upstream_buffer_bytes();
        listener->ActorEnded(actor);
      };
      root = std::move(backfill);
    }
    built.actors.push_back(std::make_unique<Actor>(
        actor, std::move(root),
        PlantOutputSabotage(
            std::move(output), 0,
            options.sabotage_for_test.duplicate_every_nth_output_chunk),
        std::move(callbacks)));
    set.actors.push_back(built.actors.back().get());
    built.inputs.push_back(std::move(input_tx));
    built.outputs.push_back(std::move(output_rx));
  }
  return built;
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobGraph>> BuildJobGraph(
    StateStore& store, const StreamingJobOptions& options,
    const JobState& state, const JobGraphContext& context) {
  Clock& clock = *context.clock;
  BarrierListener* listener = context.listener;
  const TableCatalog& upstream = options.upstream;
  auto graph = std::make_unique<JobGraph>();
  graph->store = &store;
  graph->options = &options;
  graph->context = context;
  const ChannelOptions channel{.capacity = options.channel_capacity,
                               .rows = options.channel_rows};

  // A split graph: each edge between a local and a remote actor goes to
  // context.remote; the remote actors are not built or dropped.
  RemoteActors* const remote = context.remote;
  auto is_local = [remote](ActorId actor) {
    return remote == nullptr || remote->IsLocal(actor);
  };
  const bool source_local = is_local(JobGraph::kSourceActor);
  const bool view_local = is_local(JobGraph::kViewActor);

  // The source: barriers in, the table's changes out through the dispatcher.
  auto [barrier_tx, barrier_rx] = MakeChannel(channel);
  graph->barriers.emplace(std::move(barrier_tx));
  std::unique_ptr<DmlSourceExecutor> source;
  if (source_local) {
    // No-shuffle: the source only generates the changes; the backfill actors'
    // writers commit the table, so the source keeps a never-committed
    // replicated copy to see the table as it is (its committed data plus its
    // own uncommitted writes) when it chooses each operation.
    StateTableOptions source_table_options;
    if (options.backfill_kind == BackfillKind::kNoShuffle) {
      source_table_options.replicated = true;
      source_table_options.op_consistency = OpConsistency::kInconsistent;
    }
    BACKFILL_ASSIGN_OR_RETURN(
        auto upstream_table,
        StateTable::Create(upstream, store,
                           VnodeBitmap::All(upstream.vnode_count),
                           source_table_options));
    BACKFILL_ASSIGN_OR_RETURN(
        auto offset_table,
        StateTable::Create(DmlSourceExecutor::OffsetTableCatalog(
                               options.source_offset_table_id),
                           store, VnodeBitmap::All(1)));
    ExecutorInfo source_info;
    source_info.identity =
        absl::StrCat("DmlSource(actor ", JobGraph::kSourceActor, ")");
    source = std::make_unique<DmlSourceExecutor>(
        std::move(barrier_rx), std::move(upstream_table),
        std::move(offset_table), options.workload, graph->stop_generating,
        source_info);
  }

  BACKFILL_ASSIGN_OR_RETURN(
      NewBackfillSet backfill,
      BuildBackfillSet(*graph, state.parallelism, state.EffectiveRateLimit(),
                       JobGraph::kFirstBackfillActor));
  const std::vector<ActorId> backfill_ids = backfill.set->actor_ids;
  graph->backfill_sets.push_back(std::move(backfill.set));
  BACKFILL_ASSIGN_OR_RETURN(
      VnodeHasher hasher,
      VnodeHasher::Create(upstream.dist_key_indices, upstream.vnode_count));
  // No-shuffle: the writers need whole rows (S1); else the backfill's S2.
  std::vector<int> dispatched_columns = ViewColumns(options);
  if (options.backfill_kind == BackfillKind::kNoShuffle) {
    dispatched_columns.clear();
    for (size_t c = 0; c < upstream.columns.size(); ++c) {
      dispatched_columns.push_back(static_cast<int>(c));
    }
  }
  auto schema_of = [&upstream](const std::vector<int>& columns) {
    Schema schema;
    for (int column : columns) schema.push_back(upstream.columns[column]);
    return schema;
  };
  const Schema dispatched_schema = schema_of(dispatched_columns);
  const Schema view_schema = schema_of(ViewColumns(options));
  std::vector<ChannelSender> dispatcher_outputs;
  std::vector<ChannelReceiver> view_channels;
  for (size_t i = 0; i < backfill_ids.size(); ++i) {
    const ActorId actor = backfill_ids[i];
    if (is_local(actor)) {
      if (source_local) {
        dispatcher_outputs.push_back(std::move(backfill.inputs[i]));
      } else {
        BACKFILL_RETURN_IF_ERROR(
            remote->Receive(JobGraph::kSourceActor, actor, dispatched_schema,
                            std::move(backfill.inputs[i])));
      }
      if (view_local) {
        view_channels.push_back(std::move(backfill.outputs[i]));
      } else {
        BACKFILL_RETURN_IF_ERROR(remote->Serve(actor, JobGraph::kViewActor,
                                               view_schema,
                                               std::move(backfill.outputs[i])));
      }
      continue;
    }
    if (source_local) {
      auto [tx, rx] = MakeChannel(channel);
      dispatcher_outputs.push_back(std::move(tx));
      BACKFILL_RETURN_IF_ERROR(remote->Serve(JobGraph::kSourceActor, actor,
                                             dispatched_schema, std::move(rx)));
    }
    if (view_local) {
      auto [tx, rx] = MakeChannel(channel);
      view_channels.push_back(std::move(rx));
      BACKFILL_RETURN_IF_ERROR(remote->Receive(actor, JobGraph::kViewActor,
                                               view_schema, std::move(tx)));
    }
  }
  auto report_end = [listener](const Actor& actor) {
    listener->ActorEnded(actor);
  };
  if (source_local) {
    graph->source = source.get();
    auto dispatcher = std::make_unique<HashDispatcher>(
        std::move(dispatcher_outputs), std::move(hasher),
        std::move(backfill.owner), std::move(dispatched_columns), clock,
        ExchangeEndpoint{JobGraph::kSourceActor, backfill_ids,
                         &graph->exchange});
    graph->dispatcher = dispatcher.get();
    ActorCallbacks source_callbacks;
    source_callbacks.on_end = report_end;
    graph->actors.push_back(std::make_unique<Actor>(
        JobGraph::kSourceActor, std::move(source),
        PlantOutputSabotage(
            std::move(dispatcher),
            options.sabotage_for_test.drop_every_nth_change_chunk, 0),
        std::move(source_callbacks)));
  }
  for (std::unique_ptr<Actor>& actor : backfill.actors) {
    if (actor != nullptr) graph->actors.push_back(std::move(actor));
  }
  if (!view_local) return graph;

  // The view: merge -> materialize; its barriers are collected.
  std::vector<BoxedExecutor> view_inputs;
  for (size_t i = 0; i < view_channels.size(); ++i) {
    ExecutorInfo merge_input_info;
    merge_input_info.identity =
        absl::StrCat("Exchange(from actor ", backfill_ids[i], ")");
    view_inputs.push_back(std::make_unique<ReceiverExecutor>(
        merge_input_info, std::move(view_channels[i])));
  }
  ExecutorInfo merge_info;
  merge_info.identity = "Merge(view)";
  auto merge = std::make_unique<MergeExecutor>(
      std::move(view_inputs), merge_info,
      ExchangeEndpoint{JobGraph::kViewActor, backfill_ids, &graph->exchange});
  StateTableOptions view_table_options;
  view_table_options.op_consistency = options.view_op_consistency;
  BACKFILL_ASSIGN_OR_RETURN(
      auto view_table,
      StateTable::Create(ViewCatalog(options), store,
                         VnodeBitmap::All(upstream.vnode_count),
                         view_table_options));
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

absl::StatusOr<UpdateMutation> AddBackfillActors(JobGraph& graph,
                                                 uint32_t parallelism,
                                                 RateLimit rate_limit) {
  if (graph.context.remote != nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("a graph split over processes is not rescaled online (to "
                     "parallelism ",
                     parallelism, "): a recovery rebuilds its actors"));
  }
  if (!BackfillKindRescales(graph.options->backfill_kind)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "a ", BackfillKindName(graph.options->backfill_kind),
        " backfill cannot be rescaled (to parallelism ", parallelism, ")"));
  }
  // Ids only grow: the set in force has the highest.
  const ActorId first_id = graph.in_force().actor_ids.back() + 1;
  BACKFILL_ASSIGN_OR_RETURN(
      NewBackfillSet built,
      BuildBackfillSet(graph, parallelism, rate_limit, first_id));
  const std::vector<ActorId> old_ids = graph.in_force().actor_ids;
  const std::vector<ActorId> new_ids = built.set->actor_ids;
  UpdateMutation update;
  update.dropped_actors.insert(old_ids.begin(), old_ids.end());
  DispatcherUpdate& dispatcher = update.dispatchers[JobGraph::kSourceActor];
  dispatcher.added_downstream_actors = new_ids;
  dispatcher.removed_downstream_actors.insert(old_ids.begin(), old_ids.end());
  for (int index : built.owner) {
    dispatcher.vnode_owners.push_back(new_ids[index]);
  }
  MergeUpdate& merge = update.merges[JobGraph::kViewActor];
  merge.added_upstream_actors = new_ids;
  merge.removed_upstream_actors.insert(old_ids.begin(), old_ids.end());
  for (size_t i = 0; i < new_ids.size(); ++i) {
    graph.exchange.PutSender(JobGraph::kSourceActor, new_ids[i],
                             std::move(built.inputs[i]));
    graph.exchange.PutReceiver(new_ids[i], JobGraph::kViewActor,
                               std::move(built.outputs[i]));
  }
  for (std::unique_ptr<Actor>& actor : built.actors) {
    graph.actors.push_back(std::move(actor));
  }
  graph.backfill_sets.push_back(std::move(built.set));  // Now in force.
  return update;
}

}  // namespace backfill
