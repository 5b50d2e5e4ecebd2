// Coordinated runs (seed situations 6 and 7): Amdahl's law, coordination cost and halo exchange against closed
// forms. One simulation per TEST (one process each).
#include "test_support.hpp"

#include "partsim/model/collective_cost.hpp"

#include <gtest/gtest.h>

#include <array>
#include <sstream>

namespace partsim::test {
namespace {

constexpr double kPeak = 100e12;    // base_scenario(): inline GPU, flop/s
constexpr double kLatency = 2e-6;   // network latency, s
constexpr double kBandwidth = 25e9; // NIC bandwidth, B/s

/** n single-GPU nodes on a free network (no latency, effectively infinite bandwidth). */
nlohmann::json free_network(int n) {
  auto doc = base_scenario(n, 1);
  doc["cluster"]["network"] = {{"bandwidth", 1e15}, {"latency", 0}};
  doc["workload"]["samples"] = 100 * n; // every GPU gets the same work
  return doc;
}

// Runs here may have a coordinator, which is no rank: expect_accounting(o, false) balances the report's byte totals
// only.
class AmdahlsLaw : public ::testing::TestWithParam<std::tuple<int, double>> {};

TEST_P(AmdahlsLaw, SpeedupMatchesTheClosedFormWhenCommunicationIsFree) {
  const auto [n, serial] = GetParam();
  auto doc = free_network(n);
  doc["workload"]["serial_fraction"] = serial;
  doc["workload"]["iterations"] = 3;
  const Outcome o = simulate_document(doc);
  expect_accounting(o, false);
  const double amdahl = 1.0 / (serial + (1.0 - serial) / n);
  EXPECT_NEAR(o.report.speedup, amdahl, 0.02 * amdahl) << "the issue's bound";
  EXPECT_NEAR(o.report.speedup, amdahl, 1e-9 * amdahl) << "exact with free communication";
  // The timeline sees the serial part run alone on the coordinator: f = 1 - serial, and Karp-Flatt gives it back.
  EXPECT_NEAR(o.report.parallel_fraction, 1.0 - serial, 1e-9);
  EXPECT_NEAR(o.report.amdahl_speedup_bound, amdahl, 1e-9 * amdahl);
  EXPECT_NEAR(o.report.karp_flatt, serial, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(GpusAndSerialFractions, AmdahlsLaw,
                         ::testing::Combine(::testing::Values(2, 8, 32), ::testing::Values(0.1, 0.5, 0.7)));

TEST(Coordination, PerPartitionCoordinationIsSerialOnTheCoordinator) {
  const int n = 4;
  auto doc = base_scenario(n, 1);    // 1000 samples of 1 GFLOP: 2.5 ms per GPU
  doc["strategy"]["partitions"] = 8; // two per GPU
  doc["strategy"]["coordination"] = {{"per_partition", "1ms"}};
  const Outcome o = simulate_document(doc);
  expect_accounting(o, false);
  // The last GPU is started after all 8 partitions are coordinated, then computes, then reports.
  const double expected = 8e-3 + kLatency + 250.0 * 1e9 / kPeak + kLatency;
  EXPECT_NEAR(o.report.makespan, expected, 1e-12);
  EXPECT_NEAR(o.report.coordinator_coordination, 8e-3, 1e-15);
}

TEST(Coordination, HalosShareTheNicsOfMiddlePartitions) {
  const int n = 4;
  auto doc = base_scenario(n, 1);
  doc["strategy"]["coordination"] = {{"boundary_bytes", "100MB"}};
  const Outcome o = simulate_document(doc);
  expect_accounting(o, false);
  // Partitions 1 and 2 exchange with two neighbours each, so their NICs carry two 100 MB flows each way at half
  // the bandwidth; every exchange ends at latency + 2 x 100 MB / bandwidth.
  const double halo = kLatency + 2 * 100e6 / kBandwidth;
  const double expected = kLatency + 250.0 * 1e9 / kPeak + halo + kLatency;
  EXPECT_NEAR(o.report.makespan, expected, 1e-9);
  EXPECT_EQ(o.report.ranks[0].bytes_sent, 100'000'000U);
  EXPECT_EQ(o.report.ranks[1].bytes_sent, 200'000'000U);
}

TEST(Coordination, InputDataLeavesThroughTheCoordinatorNic) {
  const int n = 4;
  auto doc = base_scenario(n, 1);
  doc["strategy"]["coordination"] = {{"data_bytes", "1GB"}, {"result_bytes", "1MB"}};
  doc["workload"]["iterations"] = 2;
  const Outcome o = simulate_document(doc);
  expect_accounting(o, false);
  // Each iteration: 1 GB leaves the coordinator (shared NIC: 40 ms for all four 250 MB starts), compute, then four
  // 1 MB results share the coordinator NIC on the way in (4 MB / 25 GB/s).
  const double per_iteration = kLatency + 1e9 / kBandwidth + 250.0 * 1e9 / kPeak + kLatency + 4e6 / kBandwidth;
  EXPECT_NEAR(o.report.makespan, 2 * per_iteration, 1e-9);
}

TEST(Coordination, TrainingWithRingAndSerialPart) {
  const int n = 4;
  auto doc = base_scenario(n, 1);
  doc["workload"]["gradient_bytes"] = "100MB";
  doc["workload"]["serial_fraction"] = 0.2;
  const Outcome o = simulate_document(doc);
  expect_accounting(o, false);
  const double parallel = 1000.0 * 1e9 / kPeak;
  const double serial = parallel * 0.2 / 0.8;
  // The data job's ring runs NCCL's Simple protocol: its latency on top (protocol_latency).
  const LinkCost net{kLatency, kBandwidth};
  const double ring = 2.0 * (n - 1) / n * 1e8 / kBandwidth + 2.0 * (n - 1) * kLatency +
                      protocol_latency(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::Simple,
                                       n, 1, n, TwoLevelCost{net, net, 1});
  EXPECT_NEAR(o.report.makespan, serial + kLatency + parallel / n + ring + kLatency, 1e-9);
  EXPECT_NEAR(o.report.baseline_time, serial + parallel, 1e-12);
}

/** Runs a sweep over /cluster/nodes and returns (gpus, makespan, speedup, karp-flatt) per point, and stdout. */
std::pair<std::vector<std::array<double, 4>>, std::string> sweep_nodes(const std::string& scenario,
                                                                       const std::string& nodes) {
  const auto dir = temp_dir();
  const CliResult r = run_cli({"sweep", (source_dir() / "scenarios" / scenario).string(), "--vary",
                               "/cluster/nodes=" + nodes, "--jobs", "2", "--out", (dir / "s").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream csv(read_file(dir / "s" / "sweep.csv"));
  std::string line;
  std::getline(csv, line); // point,/cluster/nodes,gpus,makespan_s,single_gpu_time_s,speedup,efficiency,karp_flatt,...
  std::vector<std::array<double, 4>> rows;
  while (std::getline(csv, line)) {
    std::vector<double> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');)
      if (cell != "simulated") cells.push_back(std::stod(cell)); // the last column is the verdict
    rows.push_back({cells[2], cells[3], cells[5], cells[7]});
  }
  return {rows, r.out};
}

TEST(SeedSituation6, HalfSerialWorkCapsTheSpeedupAtTwo) {
  const auto [rows, out] = sweep_nodes("seed-6-amdahl.json", "1,4,16,64");
  ASSERT_EQ(rows.size(), 4U);
  for (const auto& [gpus, makespan, speedup, karp_flatt] : rows) {
    EXPECT_LT(speedup, 2.0) << gpus << " GPUs";
    const double amdahl = 1.0 / (0.5 + 0.5 / gpus);
    EXPECT_NEAR(speedup, amdahl, 0.02 * amdahl) << gpus << " GPUs";
    if (gpus > 1) {
      EXPECT_NEAR(karp_flatt, 0.5, 0.01) << gpus << " GPUs: Karp-Flatt recovers the serial fraction";
    }
  }
}

TEST(SeedSituation7, OverPartitioningHasAnInteriorOptimum) {
  const auto [rows, out] = sweep_nodes("seed-7-over-partitioning.json", "1,2,4,8,16,32,64");
  ASSERT_EQ(rows.size(), 7U);
  std::size_t best = 0;
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i][1] < rows[best][1]) best = i;
  EXPECT_GT(best, 0U) << "more GPUs help at first";
  EXPECT_LT(best, rows.size() - 1) << "coordination and halos outgrow the gain";
  EXPECT_GT(rows.back()[1], 2.0 * rows[best][1]);
  // W/N + N c is smallest near N = sqrt(W / c) = sqrt(2 s / 30 ms) ~ 8.
  EXPECT_EQ(rows[best][0], 8.0);
  EXPECT_NE(out.find("fastest (*): point 3 (/cluster/nodes=8)"), std::string::npos) << out;
}

TEST(Coordination, RingInsideCoordinatedIterationsKeepsItsRendezvous) {
  // Skewed partitions, a ring all-reduce and coordination longer than a partition's compute: start messages and
  // ring chunks must not mix, and every rank's timeline must still tile [0, makespan].
  auto doc = base_scenario(4, 1);
  doc["workload"]["samples"] = 4000;
  doc["workload"]["iterations"] = 3;
  doc["workload"]["gradient_bytes"] = "100MB";
  doc["strategy"]["shares"] = {{"skewed", 0.7}};
  doc["strategy"]["coordination"] = {{"per_partition", "10ms"}};
  const Outcome o = simulate_document(doc);
  expect_accounting(o, false);
  for (std::size_t r = 0; r < o.result.ranks.size(); ++r) {
    double cursor = 0.0;
    for (const Interval& i : o.result.ranks[r].intervals) {
      EXPECT_NEAR(i.begin, cursor, 1e-12) << "rank " << r << ": gap or overlap";
      cursor = i.end;
    }
    EXPECT_NEAR(cursor, o.result.ranks[r].finish, 1e-12) << "rank " << r;
  }
  // Per iteration: 4 x 10 ms of coordination before the last start, rank 0's 70% share, the ring, the result.
  const double ring = 2.0 * 3 / 4 * 1e8 / kBandwidth + 6 * kLatency;
  const double per_iteration_rank0 = 10e-3 + kLatency + 2800.0 * 1e9 / kPeak; // rank 0 starts first
  EXPECT_GE(o.report.makespan, 3 * (per_iteration_rank0 + ring));
  EXPECT_EQ(o.report.bytes_sent, o.report.bytes_received);
}

} // namespace
} // namespace partsim::test
