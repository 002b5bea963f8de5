// MessageCodec: a stream edge's Messages (chunks, barriers, watermarks) as
// the protobuf messages of the data exchange (exchange.proto), and back.
//
//   BACKFILL_ASSIGN_OR_RETURN(MessageCodec codec,
//   MessageCodec::Create(schema)); cluster::proto::StreamMessage wire;
//   codec.Encode(message, &wire);
//   BACKFILL_ASSIGN_OR_RETURN(Message back, codec.Decode(wire));
//
// A chunk travels as its visible rows only (invisible rows are dropped, the
// order kept), each value-encoded with the edge's schema; every barrier
// mutation of executor/barrier.h and its epochs, kind and passed actors
// round-trip exactly.
//
// Thread-safety: immutable after Create; Encode and Decode may run
// concurrently.
#ifndef EXECUTOR_CLUSTER_MESSAGE_CODEC_H_
#define EXECUTOR_CLUSTER_MESSAGE_CODEC_H_

#include <memory>

#include "absl/status/statusor.h"
#include "executor/cluster/exchange.pb.h"
#include "executor/message.h"
#include "serde/schema.h"
#include "serde/value_row_codec.h"

namespace backfill {

class MessageCodec {
 public:
  // A codec for the edge whose chunks have the columns of `schema`.
  // Errors: InvalidArgument for an invalid schema.
  static absl::StatusOr<MessageCodec> Create(Schema schema);

  // Writes `message` into *out (cleared first).
  // REQUIRES: a chunk's rows match the schema (ValidateRow).
  void Encode(const Message& message, cluster::proto::StreamMessage* out) const;

  // The message `wire` holds. Errors: DataLoss naming what is malformed (no
  // kind, an unknown op, barrier kind or data type, a row that does not
  // decode with the schema, more ops than rows or the reverse).
  absl::StatusOr<Message> Decode(
      const cluster::proto::StreamMessage& wire) const;

 private:
  MessageCodec(std::shared_ptr<const ValueRowCodec> rows,
               std::vector<DataType> types)
      : rows_(std::move(rows)), types_(std::move(types)) {}

  std::shared_ptr<const ValueRowCodec> rows_;
  std::vector<DataType> types_;
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_MESSAGE_CODEC_H_
