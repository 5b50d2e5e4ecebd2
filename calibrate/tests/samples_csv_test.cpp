// Raw samples CSV: a write/read round trip (kernel names with commas and quotes survive) and one-line errors.
#include "partsim/calibrate/samples_csv.hpp"

#include "partsim/common/error.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace partsim::calibrate {
namespace {

DeviceInfo device() {
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.uuid = "GPU-1234";
  d.driver = "580.159.04";
  d.cuda = "13.0";
  d.cupti = "130000";
  d.compute_capability = "9.0";
  d.memory_bytes = 150754820096;
  d.multiprocessors = 132;
  d.device_count = 2;
  d.index = 1;
  d.date = "2026-12-01T10:00:00Z";
  d.tool = "partsim-calibrate 0.1.0 (CUPTI activity API 130000, cuBLASLt 13.1.0)";
  return d;
}

std::vector<Sample> samples() {
  Sample gemm;
  gemm.kind = SampleKind::Gemm;
  gemm.label = "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8, \"x\">";
  gemm.data_type = "bf16";
  gemm.m = 4096;
  gemm.n = 1024;
  gemm.k = 256;
  gemm.start_ns = 1700000000123456789ull;
  gemm.end_ns = 1700000000123556789ull;
  Sample h2d;
  h2d.kind = SampleKind::HostToDevice;
  h2d.label = "memcpy HtoD";
  h2d.variant = "pageable";
  h2d.bytes = 1 << 20;
  h2d.repeat = 3;
  h2d.start_ns = 10;
  h2d.end_ns = 20010;
  Sample nccl;
  nccl.kind = SampleKind::Collective;
  nccl.label = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
  nccl.variant = "all_reduce";
  nccl.bytes = 1 << 30;
  nccl.ranks = 8;
  nccl.device = 0;
  nccl.peer = -1;
  nccl.batch = 2;
  nccl.start_ns = 5;
  nccl.end_ns = 5;
  return {gemm, h2d, nccl};
}

TEST(SamplesCsv, RoundTripKeepsEverySampleAndTheDevice) {
  std::stringstream csv;
  write_samples_csv(csv, device(), samples());
  const std::string text = csv.str();
  EXPECT_NE(text.find("# device: NVIDIA H200\n"), std::string::npos);
  EXPECT_NE(text.find(std::string(kSamplesCsvHeader) + "\n"), std::string::npos);
  EXPECT_NE(text.find(",100000\n"), std::string::npos) << "duration_ns column";

  const SampleFile back = read_samples_csv(csv, "samples.csv");
  EXPECT_EQ(back.device.name, "NVIDIA H200");
  EXPECT_EQ(back.device.uuid, "GPU-1234");
  EXPECT_EQ(back.device.driver, "580.159.04");
  EXPECT_EQ(back.device.cupti, "130000");
  EXPECT_EQ(back.device.compute_capability, "9.0");
  EXPECT_EQ(back.device.memory_bytes, 150754820096);
  EXPECT_EQ(back.device.multiprocessors, 132);
  EXPECT_EQ(back.device.device_count, 2);
  EXPECT_EQ(back.device.index, 1);
  EXPECT_EQ(back.device.date, "2026-12-01T10:00:00Z");
  EXPECT_EQ(back.device.tool, "partsim-calibrate 0.1.0 (CUPTI activity API 130000, cuBLASLt 13.1.0)");
  const std::vector<Sample> original = samples();
  ASSERT_EQ(back.samples.size(), original.size());
  for (std::size_t i = 0; i < original.size(); ++i) {
    const Sample& a = original[i];
    const Sample& b = back.samples[i];
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.label, b.label);
    EXPECT_EQ(a.data_type, b.data_type);
    EXPECT_EQ(std::tie(a.m, a.n, a.k, a.bytes), std::tie(b.m, b.n, b.k, b.bytes));
    EXPECT_EQ(a.variant, b.variant);
    EXPECT_EQ(std::tie(a.device, a.peer, a.ranks, a.batch, a.repeat),
              std::tie(b.device, b.peer, b.ranks, b.batch, b.repeat));
    EXPECT_EQ(a.start_ns, b.start_ns);
    EXPECT_EQ(a.end_ns, b.end_ns);
  }
}

void expect_error(const std::string& text, const std::string& where, const std::string& what) {
  std::istringstream in(text);
  try {
    read_samples_csv(in, "raw.csv");
    FAIL() << "expected an InputError for: " << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "raw.csv");
    EXPECT_EQ(e.pointer(), where);
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(SamplesCsv, MalformedFilesGetOneLineErrors) {
  const std::string header = std::string(kSamplesCsvHeader) + "\n";
  expect_error("", "", "no header row");
  expect_error("kind,label\n", "line 1", "expected the header");
  expect_error(header + "gemm,x,bf16,1,1,1,0,,0,-1,1,0,0,10,20\n", "line 2", "expected 16 comma-separated fields");
  expect_error(header + "gemm,\"x,bf16,1,1,1,0,,0,-1,1,0,0,10,20,10\n", "line 2", "expected 16");
  expect_error(header + "matmul,x,bf16,1,1,1,0,,0,-1,1,0,0,10,20,10\n", "line 2", "unknown kind \"matmul\"");
  expect_error(header + "gemm,x,bf16,1,1,1.5,0,,0,-1,1,0,0,10,20,10\n", "line 2", "column k: expected an integer");
  expect_error(header + "gemm,x,bf16,1,1,1,0,,0,-1,1,0,0,30,20,-10\n", "line 2", "end_ns is before start_ns");
}

} // namespace
} // namespace partsim::calibrate
