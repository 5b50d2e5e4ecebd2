// all_reduce, all_gather, reduce_scatter and all_to_all over fp32 buffers, one communicator per GPU.
#include "nccl_collectives.hpp"

#include "device_buffers.hpp"
#include "kernels.cuh"

#include <nccl.h>

#include <stdexcept>

namespace partsim::calibrate::cuda {

namespace {

void check(ncclResult_t result, const char* call, const char* file, int line) {
  if (result != ncclSuccess) fail(call, ncclGetErrorString(result), file, line);
}
#define NCCL_CHECK(call) check((call), #call, __FILE__, __LINE__)

} // namespace

struct NcclCollectives::Impl {
  int ranks = 0;
  std::size_t max_bytes = 0;
  std::vector<ncclComm_t> comms;
  std::vector<DevicePtr> send, receive;
  std::vector<cudaStream_t> streams;

  ~Impl() {
    for (ncclComm_t c : comms) ncclCommDestroy(c);
    for (cudaStream_t s : streams) cudaStreamDestroy(s);
  }
};

NcclCollectives::NcclCollectives(int ranks, std::size_t max_bytes) : impl_(std::make_unique<Impl>()) {
  impl_->ranks = ranks;
  impl_->max_bytes = max_bytes;
  int current = 0;
  CUDA_CHECK(cudaGetDevice(&current));
  for (int d = 0; d < ranks; ++d) {
    CUDA_CHECK(cudaSetDevice(d));
    impl_->send.push_back(device_alloc(max_bytes));
    impl_->receive.push_back(device_alloc(max_bytes));
    CUDA_CHECK(kernels::fill_random(impl_->send.back().get(), max_bytes / 4, kernels::Element::F32, 17 + d, nullptr));
    cudaStream_t s = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    impl_->streams.push_back(s);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaSetDevice(current));
  impl_->comms.resize(static_cast<std::size_t>(ranks));
  NCCL_CHECK(ncclCommInitAll(impl_->comms.data(), ranks, nullptr));
}

NcclCollectives::~NcclCollectives() = default;

std::string NcclCollectives::version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "NCCL";
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::vector<Sample> NcclCollectives::run(const std::string& name, std::int64_t bytes, const Repeats& r,
                                         ActivityRecorder& recorder) {
  Impl& m = *impl_;
  const auto size = static_cast<std::size_t>(bytes);
  if (size > m.max_bytes) throw std::invalid_argument("collective larger than its buffers");
  const std::size_t n = static_cast<std::size_t>(m.ranks);
  // nccl-tests sizes: all_reduce the buffer; all_gather the gathered output; reduce_scatter the scattered input;
  // all_to_all what each rank sends in total.
  const std::size_t elements = size / sizeof(float);
  const auto issue = [&] {
    NCCL_CHECK(ncclGroupStart());
    for (std::size_t d = 0; d < n; ++d) {
      const void* in = m.send[d].get();
      void* out = m.receive[d].get();
      if (name == "all_reduce")
        NCCL_CHECK(ncclAllReduce(in, out, elements, ncclFloat32, ncclSum, m.comms[d], m.streams[d]));
      else if (name == "all_gather")
        NCCL_CHECK(ncclAllGather(in, out, elements / n, ncclFloat32, m.comms[d], m.streams[d]));
      else if (name == "reduce_scatter")
        NCCL_CHECK(ncclReduceScatter(in, out, elements / n, ncclFloat32, ncclSum, m.comms[d], m.streams[d]));
      else if (name == "all_to_all")
        NCCL_CHECK(ncclAlltoAll(in, out, elements / n, ncclFloat32, m.comms[d], m.streams[d]));
      else
        throw std::invalid_argument("unknown collective \"" + name + "\"");
    }
    NCCL_CHECK(ncclGroupEnd());
  };
  const auto synchronize = [&] {
    for (std::size_t d = 0; d < n; ++d) CUDA_CHECK(cudaStreamSynchronize(m.streams[d]));
  };
  for (int i = 0; i < r.warmup; ++i) issue();
  synchronize();
  recorder.collect();
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < r.repeats; ++i) {
    ids.push_back(recorder.begin());
    issue();
    recorder.end();
    synchronize(); // one collective at a time: the span of each is its own
  }
  const auto intervals = recorder.collect();
  std::vector<Sample> samples;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto it = intervals.find(ids[i]);
    if (it == intervals.end()) throw std::runtime_error("no CUPTI record for NCCL " + name);
    Sample s;
    s.kind = SampleKind::Collective;
    s.label = it->second.names;
    s.data_type = "fp32";
    s.bytes = bytes;
    s.variant = name;
    s.ranks = m.ranks;
    s.repeat = static_cast<int>(i);
    s.start_ns = it->second.start;
    s.end_ns = it->second.end;
    samples.push_back(std::move(s));
  }
  return samples;
}

} // namespace partsim::calibrate::cuda
