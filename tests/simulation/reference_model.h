// The simulation oracle's own model of the upstream, independent of the code
// it checks: a reference vnode function (a plain bit-by-bit CRC-32 over each
// distribution-key datum's byte form, as serde/FORMAT.md specifies it), a
// reference primary-key order (compares datums directly by each type's own
// order, honouring ASC/DESC and NULLS FIRST/LAST; INTERVALs by span, LISTs
// and STRUCTs element by element with NULL elements above every value), and
// UpstreamModel: the upstream table as the demo
// source generated it (the initial rows, then the workload's operations up
// to an offset), kept in a std::map ordered by the reference order. None of
// serde's vnode or key code, nor the state tables, is used here; a test
// (reference_model_test) checks that the reference functions agree with
// serde's on random rows. testonly.
//
//   UpstreamModel model(catalog, workload, /*initial_rows=*/100);
//   model.AdvanceTo(committed_offset);        // replays ops [old, new)
//   for (const auto& [pk, row] : model.rows()) ...
//   VirtualNode v = ReferenceVnode(row, catalog);
//
// Supported column types: ReferenceTypeSupported (the simulation's tables
// use only those). Thread-safety: plain values.
#ifndef TESTS_SIMULATION_REFERENCE_MODEL_H_
#define TESTS_SIMULATION_REFERENCE_MODEL_H_

#include <cstdint>
#include <map>
#include <vector>

#include "executor/runtime/demo/workload.h"
#include "serde/column_type.h"
#include "serde/data_type.h"
#include "serde/order_type.h"
#include "serde/row.h"
#include "serde/vnode.h"
#include "storage/table_catalog.h"

namespace backfill {
namespace simulation {

// Every type but DECIMAL, at any depth: BOOLEAN, the integers, the floats,
// VARCHAR, BYTEA, DATE, TIME, TIMESTAMP, TIMESTAMPTZ, INTERVAL (compared and
// hashed by its span, computed here), SERIAL, INT256, JSONB, and LISTs,
// STRUCTs and MAPs of those (JSONB and MAP as values only: they are never
// keys).
bool ReferenceTypeSupported(const ColumnType& type);

// Whether two datums of one type are the same value as stored, more strictly
// than SQL equality: floats bit for bit (-0.0 != 0.0; any NaN equals any
// NaN), INTERVALs field by field ('1 mon' != '30 days'), recursively inside
// LISTs, STRUCTs and MAPs; the other types by their own equality. The
// oracle's test of a view row against the model's: the value encodings keep
// every bit, so a difference means the stack changed a value.
bool ReferenceDatumsIdentical(const Datum& a, const Datum& b);
bool ReferenceRowsIdentical(const std::vector<Datum>& a,
                            const std::vector<Datum>& b);

// The vnode of `row` (a row of `catalog`): 0 for a singleton table, else the
// CRC-32 of its distribution-key datums modulo the vnode count.
VirtualNode ReferenceVnode(const Row& row, const TableCatalog& catalog);

// Compares two pk rows (the pk columns only, in pk order) under `orders`:
// < 0, 0, > 0.
int ReferenceComparePk(const Row& a, const Row& b,
                       const std::vector<OrderType>& orders);

// The pk columns of `row` (a row of `catalog`), in pk order.
Row ReferencePk(const Row& row, const TableCatalog& catalog);

class UpstreamModel {
 public:
  struct PkLess {
    const std::vector<OrderType>* orders;
    bool operator()(const Row& a, const Row& b) const {
      return ReferenceComparePk(a, b, *orders) < 0;
    }
  };
  // A row of the table and its vnode (ReferenceVnode, taken once when the
  // row enters the model: its pk, and so its vnode, never change).
  struct Entry {
    Row row;
    VirtualNode vnode = 0;
  };
  using Rows = std::map<Row, Entry, PkLess>;

  // The table after the bulk load of keys 0 .. initial_rows - 1 (a key
  // whose pk equals an earlier key's replaces it).
  UpstreamModel(const TableCatalog& catalog, const WorkloadOptions& workload,
                uint64_t initial_rows);

  // Applies the workload's operations [offset(), offset) as the demo source
  // does: a missing key is inserted; a delete deletes; an update rewrites
  // the row, moved to its target key if that one is free. REQUIRES:
  // offset >= offset().
  void AdvanceTo(uint64_t offset);

  uint64_t offset() const { return offset_; }
  // pk (ReferencePk) -> row and vnode, in the reference pk order.
  const Rows& rows() const { return rows_; }
  const TableCatalog& catalog() const { return catalog_; }

 private:
  // Puts `row` under `pk`, with its vnode. REQUIRES: `pk` is absent.
  void Insert(Row pk, Row row);

  TableCatalog catalog_;
  WorkloadOptions workload_;
  uint64_t offset_ = 0;
  Rows rows_;
};

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_REFERENCE_MODEL_H_
