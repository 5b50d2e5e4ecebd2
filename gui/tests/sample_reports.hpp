// Small report.json, trace.json and sweep.csv texts for the model tests; the reports are written by the core's
// ReportDocument, so they are what partsim writes.
#pragma once

#include "partsim/report/report_document.hpp"

#include <QByteArray>

namespace partsim::gui::samples {

using partsim::ReportDocument;
using partsim::ReportMemory;
using partsim::ReportRank;
using partsim::ReportSummary;

/** report.json text of `doc`, as partsim writes it. */
inline QByteArray report_text(const ReportDocument& doc) {
  return QByteArray::fromStdString(to_json(doc).dump(2));
}

inline ReportRank rank_row(int rank, double compute, double communication, double wait, double tail_idle,
                           double finish) {
  ReportRank r;
  r.rank = rank;
  r.node = rank;
  r.samples = 25;
  r.compute = compute;
  r.communication = communication;
  r.wait = wait;
  r.tail_idle = tail_idle;
  r.busy = compute + communication;
  r.idle = wait + tail_idle;
  r.finish = finish;
  return r;
}

inline ReportDocument cluster_of(int nodes) {
  ReportDocument doc;
  doc.partsim_version = "0.1.0";
  doc.scenario.name = "three";
  doc.scenario.input = {{"cluster", {{"nodes", nodes}, {"gpus_per_node", 1}}}};
  doc.strategy = "data_parallel: 3 partitions";
  return doc;
}

/** Three ranks; rank 0 is the slowest; no MFU, and an unbounded Amdahl limit (null). */
inline ReportDocument three_ranks() {
  ReportDocument doc = cluster_of(3);
  ReportSummary& s = doc.summary.emplace();
  s.gpus = 3;
  s.makespan = 4.0;
  s.speedup = 2.0;
  s.parallel_efficiency = 0.6667;
  s.imbalance_max_over_mean = 1.5;
  s.imbalance_cv = 0.3;
  s.communication_overhead = 0.1;
  s.idle_share = 0.25;
  s.karp_flatt = 0.25;
  doc.ranks = {rank_row(0, 3.0, 1.0, 0.0, 0.0, 4.0), rank_row(1, 1.5, 0.1, 0.4, 2.0, 2.0),
               rank_row(2, 1.5, 0.1, 0.4, 2.0, 2.0)};
  doc.ranks[0].samples = 50;
  return doc;
}
inline const QByteArray kReport = report_text(three_ranks());

/** Model training: communication overlapped with compute, a collective, memory per GPU that does not fit, MFU, and
 * a class-aware split that starves two partitions. */
inline ReportDocument training_run() {
  ReportDocument doc = cluster_of(2);
  ReportSummary& s = doc.summary.emplace();
  s.gpus = 2;
  s.makespan = 2.0;
  s.speedup = 1.5;
  s.amdahl_limit = 4.0;
  s.mfu = 0.42;
  s.hfu = 0.5;
  s.tokens_per_s = 1e5;
  s.model_flops_per_iteration = 1e15;
  s.exposed_communication = 1.4;
  s.overlapped_communication = 0.7;
  doc.memory_per_gpu = ReportMemory{2e10, 2e10, 3e10, 1e10, 1e9, 8.1e10, 8e10, false, 7e10};
  doc.collectives = std::vector<partsim::ReportCollective>{
      {partsim::CollectiveOp::AllReduce, partsim::CollectiveAlgorithm::Ring, partsim::CollectiveProtocol::Simple,
       partsim::Fidelity::Steps, partsim::CommKind::Data, 2, 1400000000, 10, 0.07, 0.069, 0.071, 2e10, 2e10}};
  doc.class_split.emplace();
  doc.class_split->minority_class = "fraud";
  doc.class_split->starved_partitions = 2;
  doc.class_split->starved_threshold = 10;
  doc.ranks = {rank_row(0, 1.0, 0.5, 0.5, 0.0, 2.0), rank_row(1, 1.0, 0.4, 0.0, 0.6, 1.4)};
  doc.ranks[0].overlapped_communication = 0.5;
  doc.ranks[1].overlapped_communication = 0.2;
  doc.layer_ops.emplace().simulated = partsim::ReportLayerPasses{0, 0.007, 0.012, 48, 48};
  return doc;
}
inline const QByteArray kFutureReport = report_text(training_run());

/** An out-of-memory verdict: nothing simulated, no summary, only the memory figures. */
inline ReportDocument out_of_memory() {
  ReportDocument doc = cluster_of(1);
  doc.verdict = partsim::Verdict::OutOfMemory;
  doc.memory_per_gpu = ReportMemory{};
  doc.memory_per_gpu->total = 1.2e11;
  doc.memory_per_gpu->capacity = 8e10;
  doc.memory_per_gpu->fits = false;
  return doc;
}
inline const QByteArray kOutOfMemoryReport = report_text(out_of_memory());

inline const QByteArray kTrace = R"json({"displayTimeUnit":"ms","traceEvents":[
{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"node 0"}},
{"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"rank 0 (gpu 0)"}},
{"ph":"X","name":"compute","cat":"compute","pid":0,"tid":0,"ts":0,"dur":3000000},
{"ph":"X","name":"communication","cat":"communication","pid":0,"tid":0,"ts":3000000,"dur":1000000},
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"rank 1 (gpu 1)"}},
{"ph":"X","name":"compute","cat":"compute","pid":1,"tid":1,"ts":0,"dur":1500000},
{"ph":"X","name":"wait","cat":"wait","pid":1,"tid":1,"ts":1500000,"dur":400000},
{"ph":"M","name":"thread_name","pid":2,"tid":3,"args":{"name":"coordinator"}},
{"ph":"X","name":"coordination","cat":"coordination","pid":2,"tid":3,"ts":0,"dur":100000}
]})json";

inline const QByteArray kSweepCsv =
    "point,/cluster/nodes,gpus,makespan_s,single_gpu_time_s,speedup,parallel_efficiency,"
    "karp_flatt_serial_fraction,parallel_fraction,amdahl_speedup_bound,"
    "communication_overhead,load_imbalance_max_over_mean\n"
    "1,4,4,2.5,8,3.2,0.8,0.0833,1,4,0.05,1.1\n"
    "0,1,1,8,8,1,1,0,1,1,0,1\n"
    "2,\"16\",16,1,8,8,0.5,0.0667,1,16,0.2,1.3\n";

} // namespace partsim::gui::samples
