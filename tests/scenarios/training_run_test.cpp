// Whole runs of model training and collective benchmarks: step times against closed forms, overlap of gradient
// all-reduces with the backward pass, invariants, the out-of-memory verdict, and nccl-tests' bandwidth figures.
// Each TEST runs in its own process (gtest_discover_tests): SimGrid allows one simulation per process.
#include "partsim/model/training.hpp"
#include "partsim/report/report_document.hpp"
#include "partsim/report/report_writers.hpp"
#include "test_support.hpp"

#include "partsim/model/collective_cost.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace partsim::test {
namespace {

constexpr double kIntraBandwidth = 300e9; // base_scenario()'s intra-node link
constexpr double kIntraLatency = 1e-6;

/** One node of `gpus` A100s (base_scenario's 300 GB/s, 1 us links) training `model` data-parallel. */
nlohmann::json training_scenario(const std::string& model, int gpus, bool overlap) {
  nlohmann::json doc = base_scenario(1, gpus);
  doc["cluster"]["gpu"] = "a100-sxm4-80gb";
  doc["workload"] = {
      {"kind", "model_training"}, {"model", model}, {"global_batch", 8 * gpus}, {"micro_batch", 4}, {"iterations", 2}};
  doc["strategy"] = {
      {"kind", "data_parallel"},
      // No SM contention (comm_sms 0): the closed forms below are the stream's alone (collectives_test.cpp's
      // StreamContention checks the compute beside a collective).
      {"gradient_sync",
       {{"algorithm", "ring"}, {"protocol", "simple"}, {"fidelity", "steps"}, {"overlap", overlap}, {"comm_sms", 0}}}};
  return doc;
}

/** Ring all-reduce of `bytes` over n ranks, chunks cut as the engine cuts them (n near-equal integer sizes), with
 * the latency NCCL's Simple protocol adds (protocol_latency; the links have no transport: PCIe's figures). */
double ring_time(int n, std::uint64_t bytes) {
  const std::uint64_t base = bytes / static_cast<std::uint64_t>(n);
  const std::uint64_t extra = bytes % static_cast<std::uint64_t>(n);
  // Every step moves one chunk per rank at once; the step lasts as long as its largest chunk.
  const double largest = static_cast<double>(base + (extra > 0 ? 1 : 0));
  const LinkCost intra{kIntraLatency, kIntraBandwidth};
  return 2.0 * (n - 1) * (kIntraLatency + largest / kIntraBandwidth) +
         protocol_latency(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::Simple, n, n, 1,
                          TwoLevelCost{intra, intra, 1});
}

struct Expected {
  double compute = 0.0;    ///< per iteration, s
  double allreduces = 0.0; ///< per iteration, s, all buckets one after the other
  double exposed = 0.0;    ///< per iteration, s: the stream's work left when the backward pass ends
};

Expected expected_times(const Outcome& o) {
  const auto& t = std::get<ModelTraining>(o.scenario.workload);
  const TrainingCost cost = training_cost(t, o.scenario.cluster.gpu);
  const auto n = static_cast<int>(o.plan.ranks.size());
  const double accumulation = static_cast<double>(t.global_batch / (t.micro_batch * n));
  Expected e;
  e.compute = accumulation * (cost.forward_time() + cost.backward_time()) + cost.optimizer_time;
  const auto buckets = gradient_buckets(cost, 2.0, 25.0 * 1024 * 1024);
  // The stream: bucket b's all-reduce starts when its gradients are ready and the previous all-reduce is done.
  double ready = 0.0;
  double stream_free = 0.0;
  for (const GradientBucket& b : buckets) {
    for (std::size_t u = b.first; u <= b.last; ++u) ready += cost.units[u].backward_time;
    stream_free = std::max(stream_free, ready) + ring_time(n, b.bytes);
    e.allreduces += ring_time(n, b.bytes);
  }
  e.exposed = stream_free - ready;
  return e;
}

TEST(TrainingRun, WithoutOverlapAnIterationIsComputePlusEveryBucketsAllReduce) {
  const Outcome o = simulate_document(training_scenario("gpt2-small", 4, false));
  const Expected e = expected_times(o);
  EXPECT_NEAR(o.report.makespan, 2.0 * (e.compute + e.allreduces), o.report.makespan * 1e-6);
  EXPECT_EQ(o.report.overlapped_communication, 0.0);
  expect_accounting(o);
}

TEST(TrainingRun, TheReportedLayerOpsAddUpToEachRanksCompute) {
  // The report's layer_ops price each op of a layer and of the outer ops alone; without recomputation an iteration's
  // compute on a rank is accumulation x (layers x the layer's ops + the outer ops, forward and backward) + the
  // optimizer step, which is what the simulation ran (2 iterations).
  const Outcome o = simulate_document(training_scenario("gpt2-small", 4, false));
  ASSERT_TRUE(o.report.layer_ops.has_value());
  const auto& t = std::get<ModelTraining>(o.scenario.workload);
  double layer = 0.0;
  double outer = 0.0;
  for (const PricedOp& op : o.report.layer_ops->layer) layer += op.forward_time + op.backward_time;
  for (const PricedOp& op : o.report.layer_ops->outer) outer += op.forward_time + op.backward_time;
  ASSERT_EQ(o.report.layer_ops->layer.front().name, "attention_norm");
  const double accumulation = static_cast<double>(t.global_batch / (t.micro_batch * 4));
  const double iteration =
      accumulation * (12.0 * layer + outer) + training_cost(t, o.scenario.cluster.gpu).optimizer_time;
  for (const RankMetrics& m : o.report.ranks) EXPECT_NEAR(m.compute, 2.0 * iteration, 1e-9 * m.compute);
  // The document's section: each op's fraction of peak is its forward flops over its time.
  const ReportDocument doc = make_report_document(o.report, o.scenario);
  ASSERT_TRUE(doc.layer_ops.has_value());
  const ReportOp& qkv = doc.layer_ops->layer[1];
  EXPECT_EQ(qkv.name, "qkv_projection");
  EXPECT_NEAR(qkv.forward_fraction_of_peak, qkv.forward_flops / qkv.forward_s / o.scenario.cluster.gpu.peak("bf16"),
              1e-12);
  EXPECT_GT(qkv.forward_fraction_of_peak, 0.3);
  EXPECT_LT(qkv.forward_fraction_of_peak, 1.0);
}

TEST(TrainingRun, WithOverlapOnlyWhatTheStreamHasLeftIsExposed) {
  // GPT-2 small on 4 A100s: buckets of two layers. Each all-reduce starts when its gradients are ready and the one
  // before it is done; the backward pass goes on meanwhile. What is left when the backward pass ends is exposed: the
  // embedding's bucket, ready at the very end, and what remains of the first layers' bucket, because the embedding's
  // backward (a scatter-add) is too short to hide it.
  const Outcome o = simulate_document(training_scenario("gpt2-small", 4, true));
  const Expected e = expected_times(o);
  EXPECT_NEAR(o.report.makespan, 2.0 * (e.compute + e.exposed), o.report.makespan * 1e-6);
  EXPECT_LT(e.exposed, 0.5 * e.allreduces); // most of it is hidden
  // Exposed: the wait on the stream; overlapped: the rest of the all-reduce time.
  for (const RankMetrics& m : o.report.ranks) {
    EXPECT_NEAR(m.stream_wait, 2.0 * e.exposed, e.exposed * 1e-3);
    EXPECT_NEAR(m.overlapped, 2.0 * (e.allreduces - e.exposed), e.allreduces * 1e-3);
  }
  expect_accounting(o);
  // MFU: model flops per second over the cluster's peak.
  const double peak = o.scenario.cluster.gpu.peak("bf16");
  EXPECT_NEAR(o.report.mfu, o.plan.model_flops_per_iteration * 2.0 / o.report.makespan / (4.0 * peak), 1e-12);
  EXPECT_GT(o.report.mfu, 0.0);
  EXPECT_LT(o.report.mfu, 1.0);
}

TEST(TrainingRun, CollectivesAreReportedWithTheirBandwidths) {
  const Outcome o = simulate_document(training_scenario("gpt2-small", 4, true));
  std::uint64_t count = 0;
  for (const Report::Collective& c : o.report.collectives) {
    count += c.stats.count;
    EXPECT_EQ(c.stats.ranks, 4);
    EXPECT_EQ(c.stats.algorithm, CollectiveAlgorithm::Ring);
    EXPECT_NEAR(c.algbw, static_cast<double>(c.stats.bytes) / c.mean_time, c.algbw * 1e-12);
    EXPECT_NEAR(c.busbw, c.algbw * 2.0 * 3.0 / 4.0, c.busbw * 1e-12);
  }
  EXPECT_EQ(count, 2 * o.plan.gradient_buckets);
}

TEST(TrainingRun, OneGpuHasNoCommunicationAndMatchesItsBaseline) {
  const Outcome o = simulate_document(training_scenario("gpt2-small", 1, true));
  const Expected e = expected_times(o);
  EXPECT_NEAR(o.report.makespan, 2.0 * e.compute, o.report.makespan * 1e-9);
  EXPECT_NEAR(o.report.speedup, 1.0, 1e-9);
  EXPECT_TRUE(o.report.collectives.empty());
}

TEST(TrainingRun, DataLoadingIsAWaitBeforeEveryMicroBatchOfTheIteration) {
  // 4 replicas, 2 micro-batches each, 3 ms of data loading per micro-batch: every iteration waits 6 ms before its
  // compute, nothing overlapping it; the GPU is idle then (busy + idle = makespan still). The one-GPU reference loads
  // all 8 micro-batches.
  nlohmann::json doc = training_scenario("gpt2-small", 4, false);
  doc["workload"]["data_loading"] = "3ms";
  const Outcome o = simulate_document(doc);
  const Expected e = expected_times(o);
  const double loading = 2.0 * 0.003;
  EXPECT_NEAR(o.report.makespan, 2.0 * (loading + e.compute + e.allreduces), o.report.makespan * 1e-6);
  for (const RankMetrics& m : o.report.ranks) {
    EXPECT_NEAR(m.data_loading, 2.0 * loading, 1e-12) << "rank " << m.rank;
    EXPECT_NEAR(m.compute, 2.0 * e.compute, 1e-9 * m.compute) << "rank " << m.rank;
  }
  EXPECT_NEAR(o.report.data_loading, 4.0 * 2.0 * loading, 1e-12);
  const double peak = o.scenario.cluster.gpu.peak("bf16");
  EXPECT_NEAR(o.report.baseline_time, 2.0 * (o.plan.baseline_amount / peak + 8.0 * 0.003), 1e-9);
  expect_accounting(o);
  EXPECT_NE(o.report.strategy_summary.find("data loading 3 ms per micro-batch"), std::string::npos)
      << o.report.strategy_summary;
  // The document: per rank and summed, only because the scenario sets a figure.
  const ReportDocument d = make_report_document(o.report, o.scenario);
  ASSERT_TRUE(d.summary.has_value());
  ASSERT_TRUE(d.summary->data_loading.has_value());
  EXPECT_NEAR(*d.summary->data_loading, 8.0 * loading, 1e-12);
  ASSERT_TRUE(d.ranks.front().data_loading.has_value());
  EXPECT_NEAR(d.ranks.front().idle, d.ranks.front().wait + 2.0 * loading + d.ranks.front().tail_idle, 1e-12);
  // ranks.csv's last column.
  std::ostringstream csv;
  write_ranks_csv(csv, o.report);
  const std::string text = csv.str();
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_EQ(header.substr(header.rfind(',') + 1), "data_loading_s");
  const std::string row = text.substr(header.size() + 1, text.find('\n', header.size() + 1) - header.size() - 1);
  EXPECT_NEAR(std::stod(row.substr(row.rfind(',') + 1)), 2.0 * loading, 1e-12) << row;
  // In the Chrome trace, as its own kind.
  std::size_t loads = 0;
  for (const Interval& i : o.result.ranks[0].intervals)
    if (i.kind == IntervalKind::DataLoading) {
      ++loads;
      EXPECT_NEAR(i.end - i.begin, loading, 1e-12);
    }
  EXPECT_EQ(loads, 2u);
}

TEST(TrainingRun, WithoutDataLoadingTheReportSaysItAssumedNone) {
  const Outcome o = simulate_document(training_scenario("gpt2-small", 2, true));
  EXPECT_NE(o.report.strategy_summary.find("data loading 0 s per micro-batch (assumed hidden by the loader's workers)"),
            std::string::npos)
      << o.report.strategy_summary;
  EXPECT_EQ(o.report.data_loading, 0.0);
  const ReportDocument d = make_report_document(o.report, o.scenario);
  ASSERT_TRUE(d.summary.has_value());
  EXPECT_FALSE(d.summary->data_loading.has_value());
  EXPECT_FALSE(d.ranks.front().data_loading.has_value());
}

TEST(TrainingRun, ResNetDataParallelRuns) {
  nlohmann::json doc = training_scenario("resnet50", 8, true);
  doc["workload"]["micro_batch"] = 32;
  doc["workload"]["global_batch"] = 256;
  const Outcome o = simulate_document(doc);
  EXPECT_GT(o.report.makespan, 0.0);
  EXPECT_GT(o.report.overlapped_communication, 0.0);
  EXPECT_EQ(o.report.throughput, 2.0 * 256.0 / o.report.makespan);
  expect_accounting(o);
}

TEST(CollectiveRun, RingAllReduceBusBandwidthApproachesTheLinkBandwidth) {
  // nccl-tests: busbw = algbw x 2(n-1)/n, which for a ring is B / (1 + n a B / S): the link bandwidth for large S.
  nlohmann::json doc = base_scenario(1, 8);
  doc["workload"] = {{"kind", "collective"}, {"operation", "all_reduce"}, {"bytes", "1GB"}, {"iterations", 3}};
  doc["strategy"] = {{"kind", "collective"}, {"algorithm", "ring"}, {"fidelity", "steps"}};
  const Outcome o = simulate_document(doc);
  ASSERT_EQ(o.report.collectives.size(), 1u);
  const Report::Collective& c = o.report.collectives.front();
  EXPECT_EQ(c.stats.count, 3u);
  // With the protocol `auto` picks at 1 GB (Simple) and its latency (PCIe's figures: the links have no transport).
  EXPECT_EQ(c.stats.protocol, CollectiveProtocol::Simple);
  const LinkCost intra{kIntraLatency, kIntraBandwidth};
  const double time = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::Simple,
                                      1e9, 8, 8, 1, TwoLevelCost{intra, intra, 1});
  const double expected_busbw = 2.0 * 7.0 / 8.0 * 1e9 / time;
  EXPECT_NEAR(c.busbw, expected_busbw, expected_busbw * 1e-6);
  // Without the protocol's latency, the ring alone: B / (1 + n a B / S).
  EXPECT_LT(c.busbw, kIntraBandwidth / (1.0 + 8.0 * kIntraLatency * kIntraBandwidth / 1e9));
  EXPECT_NEAR(o.report.makespan, 3.0 * c.mean_time, 1e-9);
  expect_accounting(o);
}

TEST(TrainingCli, OutOfMemoryIsReportedNotSimulated) {
  // Llama-3 70B as plain data parallelism: 16 bytes per parameter alone is 1.1 TB per GPU.
  const auto dir = temp_dir();
  nlohmann::json doc = training_scenario("llama3-70b", 8, true);
  { std::ofstream(dir / "oom.json") << doc.dump(); }
  const CliResult r = run_cli({"run", (dir / "oom.json").string(), "--json", "--no-files"}, dir);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["verdict"], "out_of_memory");
  EXPECT_FALSE(report["memory_per_gpu"]["fits"].get<bool>());
  EXPECT_GT(report["memory_per_gpu"]["total_bytes"].get<double>(), 1e12);
  EXPECT_FALSE(report.contains("summary"));
  EXPECT_NE(r.err.find("out of memory: needs"), std::string::npos) << r.err;
}

} // namespace
} // namespace partsim::test
