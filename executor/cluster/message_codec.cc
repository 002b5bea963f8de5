#include "executor/cluster/message_codec.h"

#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "serde/value_codec.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

template <typename Ids>
void PutActors(const Ids& ids, google::protobuf::RepeatedField<uint32_t>* out) {
  out->Reserve(static_cast<int>(ids.size()));
  for (const uint32_t id : ids) out->Add(id);
}

template <typename T>
std::set<T> ToSet(const google::protobuf::RepeatedField<uint32_t>& ids) {
  return std::set<T>(ids.begin(), ids.end());
}

template <typename T>
std::vector<T> ToVector(const google::protobuf::RepeatedField<uint32_t>& ids) {
  return std::vector<T>(ids.begin(), ids.end());
}

void PutRateLimits(
    const std::map<uint32_t, std::optional<uint32_t>>& limits,
    google::protobuf::Map<uint32_t, cluster::proto::RateLimitMessage>* out) {
  for (const auto& [id, limit] : limits) {
    cluster::proto::RateLimitMessage& message = (*out)[id];
    if (limit.has_value()) message.set_rows_per_second(*limit);
  }
}

std::map<uint32_t, std::optional<uint32_t>> ToRateLimits(
    const google::protobuf::Map<uint32_t, cluster::proto::RateLimitMessage>&
        limits) {
  std::map<uint32_t, std::optional<uint32_t>> out;
  for (const auto& [id, limit] : limits) {
    out[id] = limit.has_rows_per_second()
                  ? std::optional<uint32_t>(limit.rows_per_second())
                  : std::nullopt;
  }
  return out;
}

void EncodeMutation(const Mutation& mutation,
                    cluster::proto::MutationMessage* out) {
  if (const auto* add = std::get_if<AddMutation>(&mutation)) {
    cluster::proto::AddMessage* message = out->mutable_add();
    message->set_pause(add->pause);
    PutActors(add->backfill_fragments_to_pause,
              message->mutable_backfill_fragments_to_pause());
    PutActors(add->added_actors, message->mutable_added_actors());
  } else if (const auto* update = std::get_if<UpdateMutation>(&mutation)) {
    cluster::proto::UpdateMessage* message = out->mutable_update();
    PutActors(update->dropped_actors, message->mutable_dropped_actors());
    for (const auto& [actor, vnodes] : update->vnode_assignments) {
      PutActors(
          vnodes,
          (*message->mutable_vnode_assignments())[actor].mutable_actors());
    }
    for (const auto& [actor, dispatcher] : update->dispatchers) {
      cluster::proto::DispatcherUpdateMessage& d =
          (*message->mutable_dispatchers())[actor];
      PutActors(dispatcher.added_downstream_actors,
                d.mutable_added_downstream_actors());
      PutActors(dispatcher.removed_downstream_actors,
                d.mutable_removed_downstream_actors());
      PutActors(dispatcher.vnode_owners, d.mutable_vnode_owners());
    }
    for (const auto& [actor, merge] : update->merges) {
      cluster::proto::MergeUpdateMessage& m =
          (*message->mutable_merges())[actor];
      PutActors(merge.added_upstream_actors, m.mutable_added_upstream_actors());
      PutActors(merge.removed_upstream_actors,
                m.mutable_removed_upstream_actors());
    }
  } else if (std::holds_alternative<PauseMutation>(mutation)) {
    out->set_pause(true);
  } else if (std::holds_alternative<ResumeMutation>(mutation)) {
    out->set_resume(true);
  } else if (const auto* throttle = std::get_if<ThrottleMutation>(&mutation)) {
    cluster::proto::ThrottleMessage* message = out->mutable_throttle();
    PutRateLimits(throttle->rate_limits, message->mutable_rate_limits());
    PutRateLimits(throttle->actor_rate_limits,
                  message->mutable_actor_rate_limits());
  } else if (const auto* start =
                 std::get_if<StartFragmentBackfillMutation>(&mutation)) {
    PutActors(start->fragment_ids,
              out->mutable_start_fragment_backfill()->mutable_actors());
  } else if (const auto* stop = std::get_if<StopMutation>(&mutation)) {
    PutActors(stop->actors, out->mutable_stop()->mutable_actors());
  }
}

absl::StatusOr<Mutation> DecodeMutation(
    const cluster::proto::MutationMessage& wire) {
  switch (wire.kind_case()) {
    case cluster::proto::MutationMessage::kAdd: {
      const cluster::proto::AddMessage& add = wire.add();
      return AddMutation{.pause = add.pause(),
                         .backfill_fragments_to_pause = ToSet<FragmentId>(
                             add.backfill_fragments_to_pause()),
                         .added_actors = ToSet<ActorId>(add.added_actors())};
    }
    case cluster::proto::MutationMessage::kUpdate: {
      const cluster::proto::UpdateMessage& wire_update = wire.update();
      UpdateMutation update;
      update.dropped_actors = ToSet<ActorId>(wire_update.dropped_actors());
      for (const auto& [actor, vnodes] : wire_update.vnode_assignments()) {
        for (const uint32_t vnode : vnodes.actors()) {
          if (vnode > UINT16_MAX) {
            return absl::DataLossError(absl::StrCat("update mutation: vnode ",
                                                    vnode, " of actor ", actor,
                                                    " is out of range"));
          }
          update.vnode_assignments[actor].push_back(
              static_cast<VirtualNode>(vnode));
        }
        update.vnode_assignments.try_emplace(actor);
      }
      for (const auto& [actor, d] : wire_update.dispatchers()) {
        update.dispatchers[actor] = DispatcherUpdate{
            .added_downstream_actors =
                ToVector<ActorId>(d.added_downstream_actors()),
            .removed_downstream_actors =
                ToSet<ActorId>(d.removed_downstream_actors()),
            .vnode_owners = ToVector<ActorId>(d.vnode_owners())};
      }
      for (const auto& [actor, m] : wire_update.merges()) {
        update.merges[actor] =
            MergeUpdate{.added_upstream_actors =
                            ToVector<ActorId>(m.added_upstream_actors()),
                        .removed_upstream_actors =
                            ToSet<ActorId>(m.removed_upstream_actors())};
      }
      return update;
    }
    case cluster::proto::MutationMessage::kPause:
      return PauseMutation{};
    case cluster::proto::MutationMessage::kResume:
      return ResumeMutation{};
    case cluster::proto::MutationMessage::kThrottle:
      return ThrottleMutation{
          .rate_limits = ToRateLimits(wire.throttle().rate_limits()),
          .actor_rate_limits =
              ToRateLimits(wire.throttle().actor_rate_limits())};
    case cluster::proto::MutationMessage::kStartFragmentBackfill:
      return StartFragmentBackfillMutation{
          .fragment_ids =
              ToSet<FragmentId>(wire.start_fragment_backfill().actors())};
    case cluster::proto::MutationMessage::kStop:
      return StopMutation{.actors = ToSet<ActorId>(wire.stop().actors())};
    case cluster::proto::MutationMessage::KIND_NOT_SET:
      break;
  }
  return absl::DataLossError("barrier mutation with no kind");
}

absl::StatusOr<std::unique_ptr<ValueRowCodec>> WatermarkCodec(DataType type) {
  return MakeValueRowCodec(ValueRowEncoding::kPositional,
                           Schema{{"watermark", type, 0}});
}

}  // namespace

absl::StatusOr<MessageCodec> MessageCodec::Create(Schema schema) {
  std::vector<DataType> types = ColumnTypes(schema);
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<ValueRowCodec> rows,
      MakeValueRowCodec(ValueRowEncoding::kPositional, std::move(schema)));
  return MessageCodec(std::move(rows), std::move(types));
}

void MessageCodec::Encode(const Message& message,
                          cluster::proto::StreamMessage* out) const {
  out->Clear();
  if (const auto* chunk = std::get_if<StreamChunk>(&message)) {
    cluster::proto::ChunkMessage* wire = out->mutable_chunk();
    std::string* ops = wire->mutable_ops();
    ops->reserve(chunk->cardinality());
    wire->mutable_rows()->Reserve(static_cast<int>(chunk->cardinality()));
    // One row's storage for every row (no allocation per row).
    Row row(static_cast<size_t>(chunk->num_columns()));
    for (size_t i = 0; i < chunk->capacity(); ++i) {
      if (!chunk->is_visible(i)) continue;
      ops->push_back(static_cast<char>(chunk->op(i)));
      for (int c = 0; c < chunk->num_columns(); ++c) {
        row[c] = chunk->column(c).value(i);
      }
      rows_->Encode(row, wire->add_rows());
    }
  } else if (const auto* barrier = std::get_if<Barrier>(&message)) {
    cluster::proto::BarrierMessage* wire = out->mutable_barrier();
    wire->set_curr_epoch(barrier->epoch.curr.value());
    wire->set_prev_epoch(barrier->epoch.prev.value());
    wire->set_kind(static_cast<uint32_t>(barrier->kind));
    if (barrier->mutation != nullptr) {
      EncodeMutation(*barrier->mutation, wire->mutable_mutation());
    }
    PutActors(barrier->passed_actors, wire->mutable_passed_actors());
  } else {
    const auto& watermark = std::get<Watermark>(message);
    cluster::proto::WatermarkMessage* wire = out->mutable_watermark();
    wire->set_column_index(watermark.column_index);
    wire->set_type(static_cast<uint32_t>(watermark.type));
    absl::StatusOr<std::unique_ptr<ValueRowCodec>> codec =
        WatermarkCodec(watermark.type);
    // A scalar type always has a codec; a watermark of another type has no
    // value on the wire and fails to decode (DataLoss).
    if (codec.ok())
      (*codec)->Encode(Row{watermark.value}, wire->mutable_value());
  }
}

absl::StatusOr<Message> MessageCodec::Decode(
    const cluster::proto::StreamMessage& wire) const {
  switch (wire.kind_case()) {
    case cluster::proto::StreamMessage::kChunk: {
      const cluster::proto::ChunkMessage& chunk = wire.chunk();
      if (chunk.ops().size() != static_cast<size_t>(chunk.rows_size())) {
        return absl::DataLossError(absl::StrCat("chunk with ",
                                                chunk.ops().size(), " ops and ",
                                                chunk.rows_size(), " rows"));
      }
      std::vector<Op> ops;
      ops.reserve(chunk.ops().size());
      for (size_t i = 0; i < chunk.ops().size(); ++i) {
        const auto op = static_cast<uint8_t>(chunk.ops()[i]);
        if (op > static_cast<uint8_t>(Op::kUpdateInsert)) {
          return absl::DataLossError(
              absl::StrCat("chunk row ", i, " has unknown op ", op));
        }
        ops.push_back(static_cast<Op>(op));
      }
      std::vector<Row> rows(static_cast<size_t>(chunk.rows_size()));
      for (int i = 0; i < chunk.rows_size(); ++i) {
        absl::Status decoded = rows_->DecodeInto(chunk.rows(i), &rows[i]);
        if (!decoded.ok()) {
          return absl::DataLossError(absl::StrCat(
              "chunk row ", i, " does not decode: ", decoded.message()));
        }
      }
      return StreamChunk::FromRows(types_, std::move(ops), rows);
    }
    case cluster::proto::StreamMessage::kBarrier: {
      const cluster::proto::BarrierMessage& wire_barrier = wire.barrier();
      if (wire_barrier.kind() >
          static_cast<uint32_t>(BarrierKind::kCheckpoint)) {
        return absl::DataLossError(
            absl::StrCat("barrier of unknown kind ", wire_barrier.kind()));
      }
      Barrier barrier{
          .epoch = EpochPair{Epoch(wire_barrier.curr_epoch()),
                             Epoch(wire_barrier.prev_epoch())},
          .kind = static_cast<BarrierKind>(wire_barrier.kind()),
          .passed_actors = ToVector<ActorId>(wire_barrier.passed_actors())};
      if (wire_barrier.has_mutation()) {
        BACKFILL_ASSIGN_OR_RETURN(Mutation mutation,
                                  DecodeMutation(wire_barrier.mutation()));
        barrier.mutation =
            std::make_shared<const Mutation>(std::move(mutation));
      }
      return barrier;
    }
    case cluster::proto::StreamMessage::kWatermark: {
      const cluster::proto::WatermarkMessage& wire_watermark = wire.watermark();
      const std::optional<DataType> type =
          wire_watermark.type() <= 255
              ? DataTypeFromValue(static_cast<int>(wire_watermark.type()))
              : std::nullopt;
      absl::StatusOr<std::unique_ptr<ValueRowCodec>> codec =
          type.has_value() ? WatermarkCodec(*type)
                           : absl::InvalidArgumentError("no type");
      if (!codec.ok()) {
        return absl::DataLossError(absl::StrCat(
            "watermark of unknown data type ", wire_watermark.type()));
      }
      absl::StatusOr<Row> value = (*codec)->Decode(wire_watermark.value());
      if (!value.ok()) {
        return absl::DataLossError(absl::StrCat(
            "watermark value does not decode: ", value.status().message()));
      }
      return Watermark{.column_index = wire_watermark.column_index(),
                       .type = *type,
                       .value = std::move((*value)[0])};
    }
    case cluster::proto::StreamMessage::KIND_NOT_SET:
      break;
  }
  return absl::DataLossError("stream message with no kind");
}

}  // namespace backfill
