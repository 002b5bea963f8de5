// Benchmarks of the serde codecs on a realistic 6-column row
//   (id INT64, name VARCHAR(16), price FLOAT64, amount DECIMAL,
//    updated_at TIMESTAMP, quantity INT32 NULL (NULL in 1 of 4 rows))
// against protobuf, per row: key encode/decode, value encode/decode
// (positional and column-aware), and vnode computation for 1024-row chunks;
// and value encode/decode of a row with nested values
//   (id INT64, tags LIST<VARCHAR>, point STRUCT<x, y FLOAT64, label
//    VARCHAR>, attrs JSONB, scores LIST<INT32> NULL in 1 of 4 rows)
// against a typed protobuf message (JSONB as its text).
// Counters: "bytes" = mean encoded size per row.
//
//   bazel run -c opt //serde:serde_benchmark
#include <random>
#include <string>
#include <vector>

#include "absl/numeric/int128.h"
#include "benchmark/benchmark.h"
#include "serde/column_aware_codec.h"
#include "serde/memcmp_codec.h"
#include "serde/jsonb.h"
#include "serde/positional_codec.h"
#include "serde/testdata/bench_row.pb.h"
#include "serde/vnode_hash.h"

namespace backfill {
namespace {

constexpr int kNumRows = 1024;

const Schema& BenchSchema() {
  static const Schema* schema =
      new Schema{{"id", DataType::kInt64, 1, false},
                 {"name", DataType::kVarchar, 2, false},
                 {"price", DataType::kFloat64, 3, false},
                 {"amount", DataType::kDecimal, 4, false},
                 {"updated_at", DataType::kTimestamp, 5, false},
                 {"quantity", DataType::kInt32, 6, true}};
  return *schema;
}

const std::vector<Row>& BenchRows() {
  static const std::vector<Row>* rows = [] {
    auto* rows = new std::vector<Row>;
    std::mt19937_64 rng(1);
    for (int i = 0; i < kNumRows; ++i) {
      std::string name(16, ' ');
      for (char& c : name) c = static_cast<char>('a' + rng() % 26);
      const int64_t cents = static_cast<int64_t>(rng() % 10'000'000);
      rows->push_back(Row{
          int64_t{1'000'000 + static_cast<int64_t>(rng() % 100'000'000)},
          std::move(name), static_cast<double>(rng() % 100000) / 100.0,
          Decimal::FromParts(false, static_cast<uint64_t>(cents), 2),
          Timestamp{1'700'000'000'000'000 +
                    static_cast<int64_t>(rng() % 86'400'000'000)},
          i % 4 == 3 ? Datum() : Datum(static_cast<int32_t>(rng() % 1000))});
    }
    return rows;
  }();
  return *rows;
}

const std::vector<DataType>& Types() {
  static const auto* types =
      new std::vector<DataType>(ColumnTypes(BenchSchema()));
  return *types;
}

// All six columns as a key, mixing directions and null orders.
const std::vector<OrderType>& KeyOrders() {
  static const auto* orders = new std::vector<OrderType>{
      OrderType::Ascending(),  OrderType::Ascending(),
      OrderType::Descending(), OrderType::Ascending(),
      OrderType::Descending(), OrderType::AscendingNullsFirst()};
  return *orders;
}

void SetBytesCounter(benchmark::State& state, size_t total_bytes, size_t rows) {
  state.counters["bytes"] = static_cast<double>(total_bytes) / rows;
  state.SetItemsProcessed(state.iterations());
}

// ---- Keys --------------------------------------------------------------

void BM_KeyEncode(benchmark::State& state) {
  const auto& rows = BenchRows();
  std::string out;
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    out.clear();
    EncodeKey(rows[i], Types(), KeyOrders(), &out);
    bytes += out.size();
    benchmark::DoNotOptimize(out.data());
    i = (i + 1) % rows.size();
  }
  SetBytesCounter(state, bytes, state.iterations());
}
BENCHMARK(BM_KeyEncode);

void BM_KeyDecode(benchmark::State& state) {
  std::vector<std::string> keys;
  for (const Row& row : BenchRows()) {
    keys.emplace_back();
    EncodeKey(row, Types(), KeyOrders(), &keys.back());
  }
  Row out;
  size_t i = 0;
  for (auto _ : state) {
    auto consumed = DecodeKeyPrefix(keys[i], Types(), KeyOrders(), &out);
    benchmark::DoNotOptimize(consumed);
    i = (i + 1) % keys.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_KeyDecode);

// ---- Values ------------------------------------------------------------

std::unique_ptr<ValueRowCodec> MakeCodec(const Schema& schema, int kind) {
  if (kind == 0) return *PositionalCodec::Create(schema);
  return *ColumnAwareCodec::Create(schema);
}

// `rows`, each encoded by `codec`.
std::vector<std::string> EncodeAll(const ValueRowCodec& codec,
                                   const std::vector<Row>& rows) {
  std::vector<std::string> values;
  for (const Row& row : rows) {
    values.emplace_back();
    codec.Encode(row, &values.back());
  }
  return values;
}

// The value benchmarks run over BenchSchema / BenchRows and over the nested
// NestedSchema / NestedRows (defined with the nested benchmarks below).
using SchemaFn = const Schema& (*)();
using RowsFn = const std::vector<Row>& (*)();

template <SchemaFn GetSchema, RowsFn GetRows>
void BM_ValueEncode(benchmark::State& state) {
  const auto codec = MakeCodec(GetSchema(), state.range(0));
  const auto& rows = GetRows();
  std::string out;
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    out.clear();
    codec->Encode(rows[i], &out);
    bytes += out.size();
    benchmark::DoNotOptimize(out.data());
    i = (i + 1) % rows.size();
  }
  SetBytesCounter(state, bytes, state.iterations());
  state.SetLabel(state.range(0) == 0 ? "positional" : "column-aware");
}
BENCHMARK(BM_ValueEncode<BenchSchema, BenchRows>)
    ->Name("BM_ValueEncode")
    ->Arg(0)
    ->Arg(1);

template <SchemaFn GetSchema, RowsFn GetRows>
void BM_ValueDecode(benchmark::State& state) {
  const auto codec = MakeCodec(GetSchema(), state.range(0));
  const std::vector<std::string> values = EncodeAll(*codec, GetRows());
  Row out;
  size_t i = 0;
  for (auto _ : state) {
    absl::Status status = codec->DecodeInto(values[i], &out);
    benchmark::DoNotOptimize(status);
    i = (i + 1) % values.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(state.range(0) == 0 ? "positional DecodeInto"
                                     : "column-aware DecodeInto");
}
BENCHMARK(BM_ValueDecode<BenchSchema, BenchRows>)
    ->Name("BM_ValueDecode")
    ->Arg(0)
    ->Arg(1);

// The snapshot's path into a chunk: each row decoded into the end of fresh
// column vectors (reserved for a 256-row chunk, as DataChunkBuilder does),
// which are dropped when full. Items are rows.
void BM_ValueDecodeAppend(benchmark::State& state) {
  constexpr size_t kChunkRows = 256;
  const auto codec = MakeCodec(BenchSchema(), state.range(0));
  const std::vector<std::string> values = EncodeAll(*codec, BenchRows());
  const size_t num_columns = BenchSchema().size();
  std::vector<std::vector<Datum>> columns(num_columns);
  size_t i = 0;
  for (auto _ : state) {
    if (columns[0].size() % kChunkRows == 0) {  // a new chunk's columns
      for (auto& column : columns) {
        std::vector<Datum>().swap(column);
        column.reserve(kChunkRows);
      }
    }
    absl::Status status =
        codec->DecodeAppend(values[i], absl::MakeSpan(columns));
    benchmark::DoNotOptimize(status);
    i = (i + 1) % values.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(state.range(0) == 0 ? "positional DecodeAppend"
                                     : "column-aware DecodeAppend");
}
BENCHMARK(BM_ValueDecodeAppend)->Arg(0)->Arg(1);

// Decode returning a fresh Row (allocates), for comparison with protobuf's
// fresh-message parse.
void BM_ValueDecodeFresh(benchmark::State& state) {
  const auto codec = MakeCodec(BenchSchema(), state.range(0));
  const std::vector<std::string> values = EncodeAll(*codec, BenchRows());
  size_t i = 0;
  for (auto _ : state) {
    absl::StatusOr<Row> row = codec->Decode(values[i]);
    benchmark::DoNotOptimize(row);
    i = (i + 1) % values.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(state.range(0) == 0 ? "positional Decode"
                                     : "column-aware Decode");
}
BENCHMARK(BM_ValueDecodeFresh)->Arg(0)->Arg(1);

// ---- Protobuf baselines: Row -> message -> bytes and back ---------------

void ToProto(const Decimal& d, bench::BenchDecimal* out) {
  switch (d.kind()) {
    case Decimal::Kind::kNaN:
      out->set_kind(bench::BenchDecimal::KIND_NAN);
      return;
    case Decimal::Kind::kPositiveInfinity:
      out->set_kind(bench::BenchDecimal::KIND_POSITIVE_INFINITY);
      return;
    case Decimal::Kind::kNegativeInfinity:
      out->set_kind(bench::BenchDecimal::KIND_NEGATIVE_INFINITY);
      return;
    case Decimal::Kind::kFinite:
      break;
  }
  out->set_mantissa_low(absl::Uint128Low64(d.mantissa()));
  out->set_mantissa_high(absl::Uint128High64(d.mantissa()));
  out->set_scale(d.scale());
  out->set_negative(d.negative());
}

Decimal FromProto(const bench::BenchDecimal& d) {
  switch (d.kind()) {
    case bench::BenchDecimal::KIND_NAN:
      return Decimal::NaN();
    case bench::BenchDecimal::KIND_POSITIVE_INFINITY:
      return Decimal::PositiveInfinity();
    case bench::BenchDecimal::KIND_NEGATIVE_INFINITY:
      return Decimal::NegativeInfinity();
    default:
      break;
  }
  return Decimal::FromParts(
      d.negative(), absl::MakeUint128(d.mantissa_high(), d.mantissa_low()),
      d.scale());
}

void ToTyped(const Row& row, bench::TypedBenchRow* m) {
  m->Clear();
  m->set_id(std::get<int64_t>(row[0]));
  m->set_name(std::get<std::string>(row[1]));
  m->set_price(std::get<double>(row[2]));
  ToProto(std::get<Decimal>(row[3]), m->mutable_amount());
  m->set_updated_at(std::get<Timestamp>(row[4]).micros);
  if (!IsNull(row[5])) m->set_quantity(std::get<int32_t>(row[5]));
}

void FromTyped(const bench::TypedBenchRow& m, Row* row) {
  row->resize(6);
  (*row)[0] = m.id();
  (*row)[1] = m.name();
  (*row)[2] = m.price();
  (*row)[3] = FromProto(m.amount());
  (*row)[4] = Timestamp{m.updated_at()};
  (*row)[5] = m.has_quantity() ? Datum(m.quantity()) : Datum();
}

void ToGeneric(const Row& row, bench::GenericRow* m) {
  m->Clear();
  for (const Datum& d : row) {
    bench::GenericDatum* out = m->add_datums();
    switch (d.index()) {
      case 0:
        out->set_is_null(true);
        break;
      case 3:
        out->set_int32_value(std::get<int32_t>(d));
        break;
      case 4:
        out->set_int64_value(std::get<int64_t>(d));
        break;
      case 6:
        out->set_float64_value(std::get<double>(d));
        break;
      case 7:
        ToProto(std::get<Decimal>(d), out->mutable_decimal_value());
        break;
      case 8:
        out->set_bytes_value(std::get<std::string>(d));
        break;
      case 11:
        out->set_timestamp_value(std::get<Timestamp>(d).micros);
        break;
      default:
        break;
    }
  }
}

void FromGeneric(const bench::GenericRow& m, Row* row) {
  row->resize(m.datums_size());
  for (int i = 0; i < m.datums_size(); ++i) {
    const bench::GenericDatum& d = m.datums(i);
    Datum& out = (*row)[i];
    switch (d.value_case()) {
      case bench::GenericDatum::kInt32Value:
        out = d.int32_value();
        break;
      case bench::GenericDatum::kInt64Value:
        out = d.int64_value();
        break;
      case bench::GenericDatum::kFloat64Value:
        out = d.float64_value();
        break;
      case bench::GenericDatum::kDecimalValue:
        out = FromProto(d.decimal_value());
        break;
      case bench::GenericDatum::kBytesValue:
        out = d.bytes_value();
        break;
      case bench::GenericDatum::kTimestampValue:
        out = Timestamp{d.timestamp_value()};
        break;
      default:
        out = Datum();
        break;
    }
  }
}

template <typename Message, void (*To)(const Row&, Message*),
          RowsFn GetRows = BenchRows>
void BM_ProtoEncode(benchmark::State& state) {
  const auto& rows = GetRows();
  Message message;
  std::string out;
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    To(rows[i], &message);
    out.clear();
    message.SerializeToString(&out);
    bytes += out.size();
    benchmark::DoNotOptimize(out.data());
    i = (i + 1) % rows.size();
  }
  SetBytesCounter(state, bytes, state.iterations());
}
BENCHMARK(BM_ProtoEncode<bench::TypedBenchRow, ToTyped>)
    ->Name("BM_ProtoEncode/typed");
BENCHMARK(BM_ProtoEncode<bench::GenericRow, ToGeneric>)
    ->Name("BM_ProtoEncode/generic");

template <typename Message, void (*To)(const Row&, Message*),
          void (*From)(const Message&, Row*), RowsFn GetRows = BenchRows>
void BM_ProtoDecode(benchmark::State& state) {
  std::vector<std::string> values;
  Message message;
  for (const Row& row : GetRows()) {
    To(row, &message);
    values.push_back(message.SerializeAsString());
  }
  Row out;
  size_t i = 0;
  for (auto _ : state) {
    const bool ok = message.ParseFromString(values[i]);
    From(message, &out);
    benchmark::DoNotOptimize(ok);
    i = (i + 1) % values.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ProtoDecode<bench::TypedBenchRow, ToTyped, FromTyped>)
    ->Name("BM_ProtoDecode/typed");
BENCHMARK(BM_ProtoDecode<bench::GenericRow, ToGeneric, FromGeneric>)
    ->Name("BM_ProtoDecode/generic");

// ---- Nested values: LIST, STRUCT and JSONB --------------------------------

const Schema& NestedSchema() {
  static const Schema* schema = new Schema{
      {"id", DataType::kInt64, 1, false},
      {"tags", ColumnType::List(DataType::kVarchar), 2, false},
      {"point",
       ColumnType::Struct({{"x", DataType::kFloat64, 1},
                           {"y", DataType::kFloat64, 2},
                           {"label", DataType::kVarchar, 3}}),
       3, false},
      {"attrs", DataType::kJsonb, 4, false},
      {"scores", ColumnType::List(DataType::kInt32), 5, true}};
  return *schema;
}

const std::vector<Row>& NestedRows() {
  static const std::vector<Row>* rows = [] {
    auto* rows = new std::vector<Row>;
    std::mt19937_64 rng(2);
    auto word = [&] {
      std::string s(4 + rng() % 8, ' ');
      for (char& c : s) c = static_cast<char>('a' + rng() % 26);
      return s;
    };
    for (int i = 0; i < kNumRows; ++i) {
      ListValue tags;
      for (int t = 0, n = static_cast<int>(rng() % 5); t < n; ++t) {
        tags.elements.push_back(word());
      }
      StructValue point{{static_cast<double>(rng() % 100000) / 100.0,
                         static_cast<double>(rng() % 100000) / 100.0,
                         i % 3 == 0 ? Datum() : Datum(word())}};
      const Jsonb attrs = Jsonb::Object(
          {{"source", Jsonb::String(word())},
           {"version", Jsonb::Int(static_cast<int64_t>(rng() % 10))},
           {"flags", Jsonb::Array({Jsonb::Bool(rng() % 2 == 0),
                                   Jsonb::String(word())})}});
      ListValue scores;
      for (int t = 0, n = static_cast<int>(rng() % 8); t < n; ++t) {
        scores.elements.push_back(static_cast<int32_t>(rng() % 1000));
      }
      rows->push_back(Row{
          int64_t{1'000'000 + static_cast<int64_t>(rng() % 100'000'000)},
          std::move(tags), std::move(point), attrs,
          i % 4 == 3 ? Datum() : Datum(std::move(scores))});
    }
    return rows;
  }();
  return *rows;
}

BENCHMARK(BM_ValueEncode<NestedSchema, NestedRows>)
    ->Name("BM_NestedValueEncode")
    ->Arg(0)
    ->Arg(1);
BENCHMARK(BM_ValueDecode<NestedSchema, NestedRows>)
    ->Name("BM_NestedValueDecode")
    ->Arg(0)
    ->Arg(1);

void ToNested(const Row& row, bench::TypedNestedRow* m) {
  m->Clear();
  m->set_id(std::get<int64_t>(row[0]));
  for (const Datum& tag : std::get<ListValue>(row[1]).elements) {
    m->add_tags(std::get<std::string>(tag));
  }
  const std::vector<Datum>& point = std::get<StructValue>(row[2]).fields;
  m->mutable_point()->set_x(std::get<double>(point[0]));
  m->mutable_point()->set_y(std::get<double>(point[1]));
  if (!IsNull(point[2])) {
    m->mutable_point()->set_label(std::get<std::string>(point[2]));
  }
  m->set_attrs(std::get<Jsonb>(row[3]).ToString());
  if (IsNull(row[4])) {
    m->set_scores_null(true);
  } else {
    for (const Datum& score : std::get<ListValue>(row[4]).elements) {
      m->add_scores(std::get<int32_t>(score));
    }
  }
}

void FromNested(const bench::TypedNestedRow& m, Row* row) {
  row->resize(5);
  (*row)[0] = m.id();
  ListValue tags;
  for (const std::string& tag : m.tags()) tags.elements.push_back(tag);
  (*row)[1] = std::move(tags);
  (*row)[2] = StructValue{{m.point().x(), m.point().y(),
                           m.point().has_label() ? Datum(m.point().label())
                                                 : Datum()}};
  absl::StatusOr<Jsonb> attrs = ParseJsonb(m.attrs());
  (*row)[3] = attrs.ok() ? Datum(*std::move(attrs)) : Datum();
  if (m.scores_null()) {
    (*row)[4] = Datum();
  } else {
    ListValue scores;
    for (int32_t score : m.scores()) scores.elements.push_back(score);
    (*row)[4] = std::move(scores);
  }
}

BENCHMARK(BM_ProtoEncode<bench::TypedNestedRow, ToNested, NestedRows>)
    ->Name("BM_NestedProtoEncode");
BENCHMARK(
    BM_ProtoDecode<bench::TypedNestedRow, ToNested, FromNested, NestedRows>)
    ->Name("BM_NestedProtoDecode");

// ---- Vnodes of a 1024-row chunk -------------------------------------------

void BM_VnodesOfColumns(benchmark::State& state) {
  const auto& rows = BenchRows();
  std::vector<std::vector<Datum>> columns(6);
  for (const Row& row : rows) {
    for (int c = 0; c < 6; ++c) columns[c].push_back(row[c]);
  }
  const std::vector<absl::Span<const Datum>> spans(columns.begin(),
                                                   columns.end());
  std::vector<int> dist_key = {0};
  if (state.range(0) == 1) dist_key = {0, 1};
  const VnodeHasher hasher = *VnodeHasher::Create(dist_key, kDefaultVnodeCount);
  std::vector<VirtualNode> vnodes;
  for (auto _ : state) {
    hasher.VnodesOfColumns(spans, rows.size(), &vnodes);
    benchmark::DoNotOptimize(vnodes.data());
  }
  state.SetItemsProcessed(state.iterations() * rows.size());
  state.SetLabel(state.range(0) == 0 ? "1024 rows, dist key (id INT64)"
                                     : "1024 rows, dist key (id, name)");
}
BENCHMARK(BM_VnodesOfColumns)->Arg(0)->Arg(1);

void BM_VnodesOfRows(benchmark::State& state) {
  const auto& rows = BenchRows();
  const VnodeHasher hasher = *VnodeHasher::Create({0}, kDefaultVnodeCount);
  std::vector<VirtualNode> vnodes;
  for (auto _ : state) {
    hasher.VnodesOfRows(rows, &vnodes);
    benchmark::DoNotOptimize(vnodes.data());
  }
  state.SetItemsProcessed(state.iterations() * rows.size());
  state.SetLabel("1024 rows, dist key (id INT64)");
}
BENCHMARK(BM_VnodesOfRows);

}  // namespace
}  // namespace backfill
