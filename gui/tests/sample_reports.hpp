// Small report.json, trace.json and sweep.csv texts for the model tests (shaped like partsim's output).
#pragma once

#include <QByteArray>

namespace partsim::gui::samples {

/** Three ranks; rank 0 is the slowest. Today's schema. */
inline const QByteArray kReport = R"json({
  "schema": "partsim.report", "schema_version": 1, "partsim_version": "0.1.0",
  "scenario": {"name": "three", "description": "", "input": {}},
  "strategy": "data_parallel: 3 partitions",
  "summary": {"gpus": 3, "iterations": 1, "makespan_s": 4.0, "speedup": 2.0, "parallel_efficiency": 0.6667,
              "load_imbalance_max_over_mean": 1.5, "load_imbalance_cv": 0.3, "communication_overhead": 0.1,
              "idle_share": 0.25, "amdahl_limit": null, "karp_flatt_serial_fraction": 0.25},
  "ranks": [
    {"rank": 0, "node": 0, "local_gpu": 0, "samples": 50, "compute_s": 3.0, "communication_s": 1.0, "wait_s": 0.0,
     "tail_idle_s": 0.0, "busy_s": 4.0, "idle_s": 0.0, "finish_s": 4.0},
    {"rank": 1, "node": 1, "local_gpu": 0, "samples": 25, "compute_s": 1.5, "communication_s": 0.1, "wait_s": 0.4,
     "tail_idle_s": 2.0, "busy_s": 1.6, "idle_s": 2.4, "finish_s": 2.0},
    {"rank": 2, "node": 2, "local_gpu": 0, "samples": 25, "compute_s": 1.5, "communication_s": 0.1, "wait_s": 0.4,
     "tail_idle_s": 2.0, "busy_s": 1.6, "idle_s": 2.4, "finish_s": 2.0}
  ]
})json";

/** A report with the newer fields: communication overlapped with compute, collectives, memory per GPU, MFU,
 * warnings, a summary figure the GUI does not know, and a rank without wait_s (a missing field is zero). */
inline const QByteArray kFutureReport = R"json({
  "schema": "partsim.report", "schema_version": 2, "verdict": "simulated",
  "summary": {"gpus": 2, "makespan_s": 2.0, "speedup": 1.5, "mfu": 0.42, "exposed_communication_gpu_s": 1.4,
              "overlapped_communication_gpu_s": 0.7, "brand_new_figure": 7},
  "memory_per_gpu": {"parameters_bytes": 2e10, "gradients_bytes": 2e10, "optimizer_states_bytes": 3e10,
                     "activations_bytes": 1e10, "workspace_bytes": 1e9, "total_bytes": 8.1e10,
                     "capacity_bytes": 8e10, "fits": false},
  "collectives": [{"operation": "all_reduce", "algorithm": "ring", "fidelity": "steps", "kind": "gradients",
                   "ranks": 2, "bytes": 1.4e9, "count": 10, "mean_time_s": 0.07, "min_time_s": 0.069,
                   "max_time_s": 0.071, "algbw_bytes_per_s": 2e10, "busbw_bytes_per_s": 2e10}],
  "warnings": ["rank 1 is close to its memory", {"message": "2 partitions starved"}],
  "ranks": [
    {"rank": 0, "compute_s": 1.0, "communication_s": 0.5, "overlapped_communication_s": 0.5, "wait_s": 0.5,
     "tail_idle_s": 0.0, "finish_s": 2.0},
    {"rank": 1, "compute_s": 1.0, "communication_s": 0.4, "overlapped_communication_s": 0.2,
     "tail_idle_s": 0.6, "finish_s": 1.4, "out_of_memory": true}
  ]
})json";

/** An out-of-memory verdict: nothing simulated, no summary, only the memory figures. */
inline const QByteArray kOutOfMemoryReport = R"json({
  "schema": "partsim.report", "schema_version": 2, "verdict": "out_of_memory",
  "memory_per_gpu": {"total_bytes": 1.2e11, "capacity_bytes": 8e10, "fits": false},
  "ranks": []
})json";

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
