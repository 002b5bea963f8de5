// Writes the checked-in seed corpora of the serde fuzzers:
//   fuzz_corpus_generator <serde/testdata>
// creates <dir>/<fuzzer>/seed_NN (valid encodings of random rows, seeded) and
// corrupt_NN (mutated ones), for the value codecs seed_varints_N (integer
// extremes, every varint length) and corrupt_varint_* (bad varints), and
// seed_scalars_N / corrupt_scalars_N / corrupt_interval_* for the scalar types
// added for issue 21, the nested key and value seeds, and the MAP / JSONB
// value, JSONB text and text-format seeds. Run by hand after a
// format change; the output is committed.
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "serde/column_aware_codec.h"
#include "serde/fuzz_layout.h"
#include "serde/memcmp_codec.h"
#include "serde/positional_codec.h"
#include "serde/random_datum.h"
#include "serde/text_format.h"
#include "serde/vnode_bitmap.h"
#include "third_party/fuzzing/corpus_file.h"

namespace backfill {
namespace {

std::string Corrupt(std::string bytes, std::mt19937_64& rng) {
  if (bytes.empty()) return "\x01";
  switch (rng() % 3) {
    case 0:
      bytes.resize(rng() % bytes.size());
      break;  // truncate
    case 1:
      bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
      break;
    default:
      bytes.push_back(static_cast<char>(rng()));
      break;  // trailing byte
  }
  return bytes;
}

struct Layout {
  std::vector<DataType> types;
  std::vector<OrderType> orders;
  std::vector<int> ids;
  Schema schema;
};

Layout RandomLayout(std::mt19937_64& rng, int max_columns) {
  Layout layout;
  const int n = 1 + static_cast<int>(rng() % max_columns);
  for (int c = 0; c < n; ++c) {
    layout.types.push_back(RandomDataType(rng));
    layout.orders.push_back(RandomOrderType(rng));
    layout.ids.push_back(c + 1);
    layout.schema.push_back(
        {"c" + std::to_string(c), layout.types.back(), c + 1});
  }
  return layout;
}

// Value rows whose varints (integers, dates, times, string lengths) take
// every length from 1 to 10 bytes, and rows with bad varints (overlong, out
// of range, truncated) for the error paths. No randomness: appended without
// disturbing the seeded corpora above.
void WriteVarintSeeds(const std::filesystem::path& root) {
  const std::vector<DataType> types = {DataType::kInt16,  DataType::kInt32,
                                       DataType::kInt64,  DataType::kDate,
                                       DataType::kTime,   DataType::kTimestamp,
                                       DataType::kVarchar};
  const std::vector<OrderType> orders(types.size(), OrderType::Ascending());
  std::vector<int> ids;
  Schema schema;
  for (size_t c = 0; c < types.size(); ++c) {
    ids.push_back(static_cast<int>(c) + 1);
    schema.push_back({"c" + std::to_string(c), types[c], ids.back()});
  }
  const std::string prefix = FormatFuzzLayout(types, orders, ids);
  using L16 = std::numeric_limits<int16_t>;
  using L32 = std::numeric_limits<int32_t>;
  using L64 = std::numeric_limits<int64_t>;
  const std::vector<Row> rows = {
      {L16::min(), L32::min(), L64::min(), Date{L32::min()},
       TimeOfDay{L64::min()}, Timestamp{L64::min()}, std::string(200, 'a')},
      {L16::max(), L32::max(), L64::max(), Date{L32::max()},
       TimeOfDay{L64::max()}, Timestamp{L64::max()}, std::string(300, 'b')},
      {int16_t{-64}, int32_t{8191}, int64_t{-(int64_t{1} << 48)}, Date{1 << 20},
       TimeOfDay{(int64_t{1} << 55) - 1}, Timestamp{1'700'000'000'000'000},
       std::string()},
      {int16_t{0}, Datum(), int64_t{1} << 62, Datum(), TimeOfDay{0},
       Timestamp{-1}, std::string("x")},
  };
  auto positional = PositionalCodec::Create(schema);
  auto column_aware = ColumnAwareCodec::Create(schema);
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string value;
    (*positional)->Encode(rows[i], &value);
    WriteCorpusFile(root / "positional_codec_fuzz",
                    "seed_varints_" + std::to_string(i), prefix + value);
    value.clear();
    (*column_aware)->Encode(rows[i], &value);
    WriteCorpusFile(root / "column_aware_codec_fuzz",
                    "seed_varints_" + std::to_string(i), prefix + value);
  }
  // One INT16 column: overlong 0, 32768 (out of range), a truncated varint,
  // an 11-byte varint.
  const std::string int16_prefix =
      FormatFuzzLayout({DataType::kInt16}, {OrderType::Ascending()}, {1});
  const std::pair<const char*, std::string> bad[] = {
      {"overlong", std::string("\x01\x80\x00", 3)},
      {"int16_range", std::string("\x01\x80\x80\x04", 4)},
      {"truncated", std::string("\x01\xff\xff", 3)},
      {"eleven_bytes", std::string("\x01") + std::string(10, '\xff') + "\x01"},
  };
  for (const auto& [name, payload] : bad) {
    WriteCorpusFile(root / "positional_codec_fuzz",
                    std::string("corrupt_varint_") + name,
                    int16_prefix + payload);
    // Column-aware: header 0x81, one datum (id 1) at offset 0.
    WriteCorpusFile(
        root / "column_aware_codec_fuzz", std::string("corrupt_varint_") + name,
        int16_prefix + std::string("\x81\x01\0\0\0\x01\0\0\0\0", 10) +
            payload.substr(1));
  }
}

// Seeds with the scalar types added for issue 21 (TIMESTAMPTZ, INTERVAL,
// SERIAL, INT256) beside the others, for all three decoders, and their
// corrupt forms: seed_scalars_N, corrupt_scalars_N, and corrupt_interval_*
// (a key span no INTERVAL holds; a payload day count outside int32). A
// generator of its own, so that the files above do not change.
void WriteAddedScalarSeeds(const std::filesystem::path& root) {
  std::mt19937_64 rng(20261201);
  const DataType added[] = {DataType::kTimestamptz, DataType::kInterval,
                            DataType::kSerial, DataType::kInt256};
  for (int i = 0; i < 8; ++i) {
    Layout layout;
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int c = 0; c < n; ++c) {
      layout.types.push_back(c == 0 ? added[i % 4] : RandomScalarDataType(rng));
      layout.orders.push_back(RandomOrderType(rng));
      layout.ids.push_back(c + 1);
      layout.schema.push_back(
          {"c" + std::to_string(c), layout.types.back(), c + 1});
    }
    const std::string prefix =
        FormatFuzzLayout(layout.types, layout.orders, layout.ids);
    const Row row = RandomRow(layout.types, rng, 0.2);
    const std::string name = "seed_scalars_" + std::to_string(i);
    const std::string corrupt = "corrupt_scalars_" + std::to_string(i);
    std::string key;
    EncodeKey(row, layout.types, layout.orders, &key);
    WriteCorpusFile(root / "memcmp_codec_fuzz", name, prefix + key);
    std::string value;
    (*PositionalCodec::Create(layout.schema))->Encode(row, &value);
    WriteCorpusFile(root / "positional_codec_fuzz", name, prefix + value);
    std::string ca_value;
    (*ColumnAwareCodec::Create(layout.schema))->Encode(row, &ca_value);
    WriteCorpusFile(root / "column_aware_codec_fuzz", name, prefix + ca_value);
    if (i < 4) {
      WriteCorpusFile(root / "memcmp_codec_fuzz", corrupt,
                      prefix + Corrupt(key, rng));
      WriteCorpusFile(root / "positional_codec_fuzz", corrupt,
                      prefix + Corrupt(value, rng));
      WriteCorpusFile(root / "column_aware_codec_fuzz", corrupt,
                      prefix + Corrupt(ca_value, rng));
    }
  }
  const std::string interval_prefix =
      FormatFuzzLayout({DataType::kInterval}, {OrderType::Ascending()}, {1});
  WriteCorpusFile(
      root / "memcmp_codec_fuzz", "corrupt_interval_span",
      interval_prefix + std::string(1, '\0') + std::string(16, '\xff'));
  // months 1, days zigzag 2^33 - 1 (-2^32), micros 3.
  const std::string bad_days("\x02\xff\xff\xff\xff\x1f\x06", 7);
  WriteCorpusFile(root / "positional_codec_fuzz", "corrupt_interval_days",
                  interval_prefix + "\x01" + bad_days);
  WriteCorpusFile(root / "column_aware_codec_fuzz", "corrupt_interval_days",
                  interval_prefix +
                      std::string("\x81\x01\0\0\0\x01\0\0\0\0", 10) + bad_days);
}

// Nested keys (memcmp_codec_nested_fuzz): random LIST / STRUCT types of
// depth <= 3 under every order, their values' keys (seed_N) and mutated keys
// (corrupt_N), and a bad LIST marker.
void WriteNestedKeySeeds(const std::filesystem::path& root) {
  std::mt19937_64 rng(20261202);
  const std::filesystem::path dir = root / "memcmp_codec_nested_fuzz";
  for (int i = 0; i < 12; ++i) {
    ColumnType type = RandomColumnType(rng, 3);
    if (i % 2 == 0) type = ColumnType::List(type);
    const int order_index = i % 4;
    const std::string prefix =
        FormatFuzzColumnType(type, /*value_types=*/false) +
        std::string(1, static_cast<char>(order_index));
    std::string key;
    EncodeKeyDatum(RandomColumnDatum(type, rng, 0.1), type,
                   kAllOrderTypes[order_index], &key);
    WriteCorpusFile(dir, "seed_" + std::to_string(i), prefix + key);
    if (i < 6) {
      WriteCorpusFile(dir, "corrupt_" + std::to_string(i),
                      prefix + Corrupt(key, rng));
    }
  }
  // LIST<INT32> ASC NULLS LAST with element marker 2.
  WriteCorpusFile(dir, "corrupt_list_marker",
                  FormatFuzzColumnType(ColumnType::List(DataType::kInt32),
                                       /*value_types=*/false) +
                      std::string("\0\0\x02", 3));
}

// One seed of a value fuzzer: a random datum of `type` as a one-column row,
// encoded by either codec, behind the fuzzer's prefix (writer type, reader
// type, codec byte); as seed_<i>, and with `corrupt` also mutated as
// corrupt_<i>.
void WriteValueRowSeed(const std::filesystem::path& dir, int i,
                       const ColumnType& type, bool column_aware,
                       bool value_types, bool corrupt, std::mt19937_64& rng) {
  const Schema schema = {{"c", type, 1}};
  std::string value;
  const Row row = {RandomColumnDatum(type, rng, 0.1)};
  if (column_aware) {
    (*ColumnAwareCodec::Create(schema))->Encode(row, &value);
  } else {
    (*PositionalCodec::Create(schema))->Encode(row, &value);
  }
  const std::string type_bytes = FormatFuzzColumnType(type, value_types);
  const std::string prefix =
      type_bytes + type_bytes + std::string(1, column_aware ? '\x01' : '\0');
  WriteCorpusFile(dir, "seed_" + std::to_string(i), prefix + value);
  if (corrupt) {
    WriteCorpusFile(dir, "corrupt_" + std::to_string(i),
                    prefix + Corrupt(value, rng));
  }
}

// Nested value rows (nested_value_fuzz): random LIST / STRUCT columns in
// both codecs; column-aware ones also read by a type whose STRUCT fields
// changed (one dropped, one added).
void WriteNestedValueSeeds(const std::filesystem::path& root) {
  std::mt19937_64 rng(20261203);
  const std::filesystem::path dir = root / "nested_value_fuzz";
  for (int i = 0; i < 12; ++i) {
    ColumnType type = RandomColumnType(rng, 3);
    if (i % 3 == 0) type = ColumnType::List(type);
    WriteValueRowSeed(dir, i, type, /*column_aware=*/i % 2 == 1,
                      /*value_types=*/false, /*corrupt=*/i < 6, rng);
  }
  // STRUCT<f0 INT64, f1 VARCHAR> written, read as STRUCT<f0 INT64> (f1
  // dropped) and as STRUCT<f0 INT64, f1 VARCHAR, f2 BOOLEAN> (f2 added).
  const ColumnType v1 = ColumnType::Struct(
      {{"f0", DataType::kInt64, 0}, {"f1", DataType::kVarchar, 1}});
  std::string value;
  (*ColumnAwareCodec::Create({{"c", v1, 1}}))
      ->Encode({StructValue{{int64_t{7}, std::string("x")}}}, &value);
  const ColumnType dropped = ColumnType::Struct({{"f0", DataType::kInt64, 0}});
  const ColumnType added = ColumnType::Struct({{"f0", DataType::kInt64, 0},
                                               {"f1", DataType::kVarchar, 1},
                                               {"f2", DataType::kBoolean, 2}});
  WriteCorpusFile(dir, "seed_struct_field_dropped",
                  FormatFuzzColumnType(v1, /*value_types=*/false) +
                      FormatFuzzColumnType(dropped, /*value_types=*/false) +
                      "\x01" + value);
  WriteCorpusFile(dir, "seed_struct_field_added",
                  FormatFuzzColumnType(v1, /*value_types=*/false) +
                      FormatFuzzColumnType(added, /*value_types=*/false) +
                      "\x01" + value);
}

// Value rows of every type (map_jsonb_value_fuzz): random types with MAP
// and JSONB, both codecs; and a MAP whose keys are out of order and a JSONB
// payload that is valid JSON but not canonical.
void WriteMapJsonbValueSeeds(const std::filesystem::path& root) {
  std::mt19937_64 rng(20261204);
  const std::filesystem::path dir = root / "map_jsonb_value_fuzz";
  for (int i = 0; i < 16; ++i) {
    ColumnType type = RandomValueColumnType(rng, 3);
    if (i % 4 == 0) type = ColumnType::Map(DataType::kVarchar, type);
    if (i % 4 == 1) type = ColumnType::List(DataType::kJsonb);
    WriteValueRowSeed(dir, i, type, /*column_aware=*/i % 2 == 1,
                      /*value_types=*/true, /*corrupt=*/i < 8, rng);
  }
  const std::string int_map =
      FormatFuzzColumnType(ColumnType::Map(DataType::kInt64, DataType::kInt64),
                           /*value_types=*/true);
  WriteCorpusFile(dir, "corrupt_map_key_order",
                  int_map + int_map + std::string("\0\x01\x02\x04\x01\0\x02\x01\0", 9));
  const std::string jsonb =
      FormatFuzzColumnType(DataType::kJsonb, /*value_types=*/true);
  WriteCorpusFile(dir, "corrupt_jsonb_not_canonical",
                  jsonb + jsonb + std::string("\0\x01\x07{\"a\":1}", 10));
}

// JSON texts (jsonb_text_fuzz): random values' canonical texts, the same
// with the canonical spacing removed, and mutations.
void WriteJsonbTextSeeds(const std::filesystem::path& root) {
  std::mt19937_64 rng(20261205);
  const std::filesystem::path dir = root / "jsonb_text_fuzz";
  for (int i = 0; i < 12; ++i) {
    const std::string text = RandomJsonb(rng, 4).ToString();
    WriteCorpusFile(dir, "seed_" + std::to_string(i), text);
    if (i < 6) {
      WriteCorpusFile(dir, "corrupt_" + std::to_string(i), Corrupt(text, rng));
    }
  }
  WriteCorpusFile(dir, "seed_escapes",
                  R"x({"\u00e9\ud83d\ude00": ["\b\f\n\r\t\/", 1.5e-3, -0]})x");
  WriteCorpusFile(dir, "seed_duplicate_keys", R"x({"a":1,"aa":2,"a":{"b":[]}})x");
  WriteCorpusFile(dir, "corrupt_lone_surrogate", R"x(["\ud800x"])x");
  WriteCorpusFile(dir, "corrupt_deep", std::string(300, '['));
}

// Texts of every type (text_format_fuzz): random types and values, their
// texts, mutated texts.
void WriteTextFormatSeeds(const std::filesystem::path& root) {
  std::mt19937_64 rng(20261206);
  const std::filesystem::path dir = root / "text_format_fuzz";
  for (int i = 0; i < 20; ++i) {
    ColumnType type = RandomValueColumnType(rng, 3);
    if (i % 5 == 0) type = ColumnType::List(DataType::kVarchar);
    if (i % 5 == 1) type = ColumnType::Map(DataType::kVarchar, type);
    const std::string prefix = FormatFuzzColumnType(type, /*value_types=*/true);
    const std::string text =
        FormatDatumText(RandomColumnValue(type, rng), type);
    WriteCorpusFile(dir, "seed_" + std::to_string(i), prefix + text);
    if (i < 10) {
      WriteCorpusFile(dir, "corrupt_" + std::to_string(i),
                      prefix + Corrupt(text, rng));
    }
  }
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <serde/testdata>\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  std::mt19937_64 rng(20240601);
  for (int i = 0; i < 10; ++i) {
    const Layout layout = RandomLayout(rng, 4);
    const std::string prefix =
        FormatFuzzLayout(layout.types, layout.orders, layout.ids);
    const Row row = RandomRow(layout.types, rng, 0.2);
    // memcmp keys.
    std::string key;
    EncodeKey(row, layout.types, layout.orders, &key);
    WriteCorpusFile(root / "memcmp_codec_fuzz", "seed_" + std::to_string(i),
                    prefix + key);
    if (i < 4) {
      WriteCorpusFile(root / "memcmp_codec_fuzz",
                      "corrupt_" + std::to_string(i),
                      prefix + Corrupt(key, rng));
    }
    // Positional values.
    auto positional = PositionalCodec::Create(layout.schema);
    std::string value;
    (*positional)->Encode(row, &value);
    WriteCorpusFile(root / "positional_codec_fuzz", "seed_" + std::to_string(i),
                    prefix + value);
    if (i < 4) {
      WriteCorpusFile(root / "positional_codec_fuzz",
                      "corrupt_" + std::to_string(i),
                      prefix + Corrupt(value, rng));
    }
    // Column-aware values; odd seeds are read with an evolved schema (first
    // column dropped, a new column id 99 added).
    auto column_aware = ColumnAwareCodec::Create(layout.schema);
    std::string ca_value;
    (*column_aware)->Encode(row, &ca_value);
    std::string reader_prefix = prefix;
    if (i % 2 == 1) {
      std::vector<DataType> types(layout.types.begin() + 1, layout.types.end());
      std::vector<OrderType> orders(layout.orders.begin() + 1,
                                    layout.orders.end());
      std::vector<int> ids(layout.ids.begin() + 1, layout.ids.end());
      types.push_back(DataType::kVarchar);
      orders.push_back(OrderType::Ascending());
      ids.push_back(99);
      reader_prefix = FormatFuzzLayout(types, orders, ids);
    }
    WriteCorpusFile(root / "column_aware_codec_fuzz",
                    "seed_" + std::to_string(i), reader_prefix + ca_value);
    if (i < 4) {
      WriteCorpusFile(root / "column_aware_codec_fuzz",
                      "corrupt_" + std::to_string(i),
                      prefix + Corrupt(ca_value, rng));
    }
  }
  // Bitmaps.
  const int counts[] = {1, 8, 10, 64, 256, 1000};
  for (int i = 0; i < 6; ++i) {
    VnodeBitmap bitmap(counts[i]);
    for (int k = 0; k < counts[i] / 3 + 1; ++k) bitmap.Set(rng() % counts[i]);
    WriteCorpusFile(root / "vnode_bitmap_fuzz", "seed_" + std::to_string(i),
                    bitmap.Serialize());
    if (i < 4) {
      WriteCorpusFile(root / "vnode_bitmap_fuzz",
                      "corrupt_" + std::to_string(i),
                      Corrupt(bitmap.Serialize(), rng));
    }
  }
  WriteCorpusFile(root / "vnode_bitmap_fuzz", "seed_all_256",
                  VnodeBitmap::All(256).Serialize());
  WriteCorpusFile(root / "vnode_bitmap_fuzz", "seed_split_32768",
                  (*VnodeBitmap::EvenSplit(32768, 3))[1].Serialize());
  WriteVarintSeeds(root);
  WriteAddedScalarSeeds(root);
  WriteNestedKeySeeds(root);
  WriteNestedValueSeeds(root);
  WriteMapJsonbValueSeeds(root);
  WriteJsonbTextSeeds(root);
  WriteTextFormatSeeds(root);
  return 0;
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) { return backfill::Main(argc, argv); }
