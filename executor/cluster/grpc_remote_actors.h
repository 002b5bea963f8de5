// GrpcRemoteActors: the RemoteActors (executor/runtime/job_graph.h) of one
// process of a job split over processes, over the data exchange
// (remote_exchange.h): its outputs to remote actors are served by its
// ExchangeServer, its inputs from a remote actor are received from the
// exchange server of the process that runs it.
//
//   GrpcRemoteActors remote(
//       [](ActorId actor) { return actor < JobGraph::kFirstBackfillActor; },
//       *server, [&](ActorId) { return worker_address; });
//   context.remote = &remote;
//   BACKFILL_ASSIGN_OR_RETURN(auto graph, BuildJobGraph(store, options, state,
//   context));
//
// Thread-safety: thread-safe.
#ifndef EXECUTOR_CLUSTER_GRPC_REMOTE_ACTORS_H_
#define EXECUTOR_CLUSTER_GRPC_REMOTE_ACTORS_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "executor/cluster/remote_exchange.h"
#include "executor/runtime/job_graph.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class GrpcRemoteActors final : public RemoteActors {
 public:
  // `is_local`: whether this process runs an actor. `server`: this process's
  // exchange server (must outlive this). `address_of`: the exchange server
  // address of the process that runs a remote actor. `permits`: each
  // input's credit (RemoteInputOptions::permits). `attempt_key`: the attempt
  // the actors are of (actor_service.proto's AttemptRequest.attempt_key; 0:
  // none): outputs are served and inputs received as that attempt's, so an
  // earlier attempt's edge a process still holds is never read by this one.
  GrpcRemoteActors(std::function<bool(ActorId)> is_local,
                   ExchangeServer& server,
                   std::function<std::string(ActorId)> address_of,
                   uint32_t permits = 16, uint64_t attempt_key = 0);
  ~GrpcRemoteActors() override;  // CancelInputs()

  bool IsLocal(ActorId actor) const override;
  // Adds the edge to the exchange server. Errors: InvalidArgument for a bad
  // schema; the server's (AlreadyExists, FailedPrecondition).
  absl::Status Serve(ActorId upstream, ActorId downstream, const Schema& schema,
                     ChannelReceiver receiver) override;
  // Starts a RemoteInput from address_of(upstream). Errors: InvalidArgument
  // for a bad schema or an empty address.
  absl::Status Receive(ActorId upstream, ActorId downstream,
                       const Schema& schema, ChannelSender sender) override
      ABSL_LOCKS_EXCLUDED(mu_);

  // The inputs (upstream, downstream) whose received messages have waited
  // for room in their local channel for at least `at_least`, though the
  // input has not delivered barrier `epoch` yet: this process stopped
  // reading what those upstream actors send before that barrier. (Once an
  // input delivered a barrier, a merge waits for the barrier on its other
  // inputs and stops reading it: that wait is the others'.)
  std::vector<std::pair<ActorId, ActorId>> InputsBlockedBefore(
      Epoch epoch, absl::Duration at_least) const ABSL_LOCKS_EXCLUDED(mu_);

  // Ends every input still receiving (their channels fail with CANCELLED)
  // and joins them. Idempotent.
  void CancelInputs() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::function<bool(ActorId)> is_local_;
  ExchangeServer& server_;
  const std::function<std::string(ActorId)> address_of_;
  const uint32_t permits_;
  const uint64_t attempt_key_;
  mutable Mutex mu_;
  std::vector<std::unique_ptr<RemoteInput>> inputs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_GRPC_REMOTE_ACTORS_H_
