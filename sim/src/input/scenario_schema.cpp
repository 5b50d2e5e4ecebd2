// The scenario's fields as data, and the reference tables generated from them.
#include "partsim/input/scenario_schema.hpp"

#include "partsim/model/expert_routing.hpp"

#include "partsim/common/enum_names.hpp"
#include "partsim/common/error.hpp"
#include "partsim/input/hardware.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/model/expert_routing.hpp"
#include "partsim/serving/serving_spec.hpp"

#include <fmt/format.h>

#include <limits>
#include <sstream>

namespace partsim {

namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

/** Builds one entry: `field(pointer, type, section).range(...).def(...).doc(...)`. */
class F {
 public:
  F(std::string pointer, FieldType type, std::string section) {
    s_.pointer = std::move(pointer);
    s_.type = type;
    s_.section = std::move(section);
  }
  F& kinds(std::vector<std::string> k) {
    s_.kinds = std::move(k);
    return *this;
  }
  F& range(std::int64_t min, std::int64_t max) {
    s_.int_min = min;
    s_.int_max = max;
    return *this;
  }
  F& closed(double min, double max) {
    s_.min = min;
    s_.max = max;
    return *this;
  }
  F& positive(double max) {
    s_.min = 0.0;
    s_.max = max;
    s_.min_exclusive = true;
    return *this;
  }
  F& dim(Dimension d) {
    s_.dimension = d;
    return *this;
  }
  F& def(nlohmann::json value) {
    s_.default_value = std::move(value);
    return *this;
  }
  F& def_doc(std::string text) {
    s_.default_doc = std::move(text);
    return *this;
  }
  F& choices(std::vector<std::string> c) {
    s_.choices = std::move(c);
    return *this;
  }
  F& library(std::string name) {
    s_.library = std::move(name);
    return *this;
  }
  F& allowed(std::string text) {
    s_.allowed_doc = std::move(text);
    return *this;
  }
  F& type_doc(std::string text) {
    s_.type_doc = std::move(text);
    return *this;
  }
  F& unit(std::string text) {
    s_.unit_doc = std::move(text);
    return *this;
  }
  F& label(std::string text) {
    s_.label = std::move(text);
    return *this;
  }
  F& doc(std::string text) {
    s_.doc = std::move(text);
    return *this;
  }
  F& opaque() {
    s_.opaque = true;
    return *this;
  }
  FieldSpec build() && { return std::move(s_); }

 private:
  FieldSpec s_;
};

using T = FieldType;

/** The layer submodules a recompute_modules list may name (all but `none`). */
std::vector<std::string> enum_names_except_none() {
  std::vector<std::string> out = enum_names<LayerModule>();
  out.erase(out.begin()); // "none"
  return out;
}

template <NamedEnum E>
std::vector<std::string> with_auto() {
  std::vector<std::string> out{"auto"};
  for (std::string& name : enum_names<E>()) out.push_back(std::move(name));
  return out;
}

void cluster_fields(std::vector<F>& f) {
  f.push_back(F("/cluster/nodes", T::Integer, "cluster")
                  .range(1, kMaxGpus)
                  .allowed("nodes x gpus_per_node at most 65,536")
                  .label("Nodes")
                  .doc("nodes"));
  f.push_back(F("/cluster/gpus_per_node", T::Integer, "cluster")
                  .range(1, 1024)
                  .label("GPUs per node")
                  .doc("GPUs in each node"));
  f.push_back(F("/cluster/gpu", T::Forms, "cluster")
                  .opaque()
                  .library("hardware")
                  .type_doc("string or object")
                  .allowed("or an inline profile; or `{\"base\": NAME, ...}`: that profile with some of its figures "
                           "replaced")
                  .label("GPU")
                  .doc("the GPU model of every node; `{\"base\": NAME, FIGURE: VALUE, ...}` takes the profile NAME "
                       "with `sustained_compute`, `memory_efficiency`, `memory_capacity` or "
                       "`kernel_launch_overhead` replaced by the scenario's bare values (provenance `scenario`): a "
                       "what-if on a shipped or calibrated profile without copying its tables"));
  f.push_back(F("/cluster/intra_node_link", T::Object, "cluster")
                  .def_doc("required when `gpus_per_node > 1`")
                  .doc("GPU-to-GPU link inside a node (NVLink/NVSwitch, PCIe)"));
  f.push_back(F("/cluster/intra_node_link/profile", T::String, "cluster")
                  .library("links")
                  .def_doc("none")
                  .allowed("with scope `intra_node` and bandwidth per GPU (`nvlink3`, `nvlink4`, `nvlink5`, "
                           "`pcie4-x16`, `pcie5-x16`; not the NVSwitch aggregates)")
                  .label("Intra-node link")
                  .doc("takes bandwidth and latency from the profile; `bandwidth` or `latency` given as well "
                       "override it"));
  f.push_back(F("/cluster/intra_node_link/bandwidth", T::Quantity, "cluster")
                  .dim(Dimension::Bandwidth)
                  .positive(1e15)
                  .def_doc("required without `profile`")
                  .label("Intra-node bandwidth")
                  .doc("per direction, per GPU"));
  f.push_back(F("/cluster/intra_node_link/latency", T::Quantity, "cluster")
                  .dim(Dimension::Time)
                  .closed(0.0, 10.0)
                  .def_doc("required without `profile`")
                  .label("Intra-node latency")
                  .doc("one-way GPU-to-GPU latency"));
  f.push_back(F("/cluster/intra_node_link/efficiency", T::Number, "cluster")
                  .closed(0.01, 1.0)
                  .def_doc("the profile's, else 1")
                  .label("Intra-node efficiency")
                  .doc("the fraction of the line rate that data moves at when the GPU's SMs drive the transfers "
                       "(NCCL's kernels: NVLink carries 128-byte payloads in packets with headers); the simulation "
                       "uses bandwidth x efficiency"));
  f.push_back(F("/cluster/intra_node_link/transport", T::Choice, "cluster")
                  .choices({"nvlink", "pcie"})
                  .def_doc("the profile's `transport`, else `pcie`")
                  .label("Intra-node transport")
                  .doc("what carries GPU-to-GPU transfers inside a node: NCCL's per-step latencies for NVLink or PCIe, "
                       "and its LL128 protocol only over NVLink"));
  f.push_back(F("/cluster/intra_node_link/nvls_efficiency", T::Number, "cluster")
                  .closed(0.0, 1.0)
                  .def_doc("the profile's `nvls`, else 0")
                  .label("NVLS efficiency")
                  .doc("NVLink SHARP: the fraction of the effective bandwidth that an all-reduce reduced and "
                       "multicast by the NVSwitch reaches (NCCL's `nvlsEfficiency`); 0: the switch has none, and "
                       "the `nvls` algorithm is refused"));
  f.push_back(F("/cluster/intra_node_link/nvls_latency", T::Quantity, "cluster")
                  .dim(Dimension::Time)
                  .closed(0.0, 1e-3)
                  .def_doc("the profile's `nvls`, else 0")
                  .label("NVLS latency")
                  .doc("the latency of one NVLS all-reduce (NCCL's tuner charges 25 us on Hopper)"));
  f.push_back(F("/cluster/intra_node_link/ll_max_bandwidth", T::Quantity, "cluster")
                  .dim(Dimension::Bandwidth)
                  .closed(0.0, 1e15)
                  .def_doc("the profile's `ll_max_bandwidth`, else 0")
                  .label("LL bandwidth limit")
                  .doc("the most bus bandwidth NCCL's LL protocol reaches between the GPUs of one node, a limit of its "
                       "kernels by GPU generation (NCCL's `llMaxBws`: 87.7 GB/s Ampere, 141 GB/s Hopper); 0: none "
                       "beyond half the link's bandwidth"));
  f.push_back(F("/cluster/network", T::Object, "cluster")
                  .def_doc("required when `nodes > 1`")
                  .doc("the network between nodes; see [`cluster/network`](#clusternetwork)"));
  f.push_back(F("/cluster/node_speed_factors", T::Array, "cluster")
                  .type_doc("array of numbers")
                  .def_doc("all 1")
                  .allowed("one per node")
                  .label("Node speed factors")
                  .doc("relative compute speed of each node: 0.5 = a node at half speed (degraded, older, throttled)"));
  f.push_back(F("/cluster/node_speed_factors/*", T::Number, "").closed(1e-6, 1000.0).doc("a node's speed factor"));
  f.push_back(F("/cluster/speed_changes", T::Array, "cluster")
                  .type_doc("array of objects")
                  .def(nlohmann::json::array())
                  .allowed("0 to 100,000 entries, at most one per node")
                  .label("Speed changes")
                  .doc("unplanned changes of a node's speed during the run; see below"));
  f.push_back(F("/cluster/speed_changes/*", T::Object, "").doc("one node's speed change"));
  f.push_back(F("/cluster/speed_changes/*/node", T::Integer, "speed_changes")
                  .range(0, kMaxGpus - 1)
                  .allowed("at most nodes - 1; each node in at most one entry")
                  .doc("the node"));
  f.push_back(F("/cluster/speed_changes/*/points", T::Array, "speed_changes")
                  .type_doc("array of `[time, factor]` pairs")
                  .allowed("1 to 100,000 pairs; time: quantity in s, 0 to 10^9, the first exactly 0, then strictly "
                           "increasing; factor: a number 10^-6 to 1000 (SimGrid cannot run a host at speed 0; a "
                           "stalled node is a small factor such as 1e-6)")
                  .doc("from `time` on, the node runs at `factor` x its speed"));
  f.push_back(F("/cluster/speed_changes/*/points/*", T::Array, "").opaque().doc("a [time, factor] pair"));
  f.push_back(F("/cluster/speed_changes/*/period", T::Quantity, "speed_changes")
                  .dim(Dimension::Time)
                  .positive(1e9)
                  .def_doc("none: the last factor holds to the end")
                  .allowed("longer than the last point's time")
                  .doc("the points repeat with this period (the factor at t is the factor at t mod period)"));
  const std::string st = "/cluster/stragglers";
  f.push_back(F(st, T::Object, "cluster")
                  .def_doc("none")
                  .label("Stragglers")
                  .doc("GPUs that compute slower than their speed, for the whole run or in single iterations; "
                       "see [below](#clusterstragglers)"));
  f.push_back(F(st + "/fixed", T::Array, "stragglers")
                  .type_doc("array of objects")
                  .def(nlohmann::json::array())
                  .allowed("at most one entry per GPU")
                  .doc("GPUs slowed for the whole run: `{\"gpu\": G, \"factor\": F}`; see below"));
  f.push_back(F(st + "/fixed/*", T::Object, "").doc("one fixed straggler"));
  f.push_back(F(st + "/fixed/*/gpu", T::Integer, "stragglers_fixed")
                  .range(0, kMaxGpus - 1)
                  .allowed("at most nodes x gpus_per_node - 1")
                  .doc("the GPU: node x gpus_per_node + its index in the node (the rank, in every built-in placement "
                       "of one rank per GPU)"));
  f.push_back(F(st + "/fixed/*/factor", T::Number, "stragglers_fixed")
                  .closed(kMinSpeedFactor, 1.0)
                  .doc("it computes at factor x its speed for the whole run (a throttled or faulty GPU)"));
  f.push_back(F(st + "/random", T::Object, "stragglers")
                  .def_doc("none")
                  .doc("GPUs slowed at random in single iterations; see below"));
  f.push_back(F(st + "/random/probability", T::Number, "stragglers_random")
                  .closed(0.0, 1.0)
                  .label("Straggler probability")
                  .doc("p: the chance that a GPU is a straggler in an iteration, drawn for every (GPU, iteration) "
                       "from /run/seed"));
  f.push_back(F(st + "/random/slowdown", T::Forms, "stragglers_random")
                  .closed(kMinSpeedFactor, 1.0)
                  .type_doc("number or object")
                  .allowed("a speed factor 10^-6 to 1, or `{\"distribution\": ...}`: see below")
                  .label("Straggler speed factor")
                  .doc("a straggler computes at f x its speed in that iteration (its compute takes 1/f as long); a "
                       "number is a fixed f"));
  f.push_back(F(st + "/random/slowdown/distribution", T::Choice, "stragglers_slowdown")
                  .choices(enum_names<SlowdownKind>())
                  .doc("`fixed` (`factor`), `uniform` (`min` to `max`) or `lognormal` (`mean`, `cv`; draws above 1 "
                       "are 1)"));
  f.push_back(F(st + "/random/slowdown/factor", T::Number, "stragglers_slowdown")
                  .closed(kMinSpeedFactor, 1.0)
                  .def_doc("required with `fixed`")
                  .doc("fixed: f"));
  f.push_back(F(st + "/random/slowdown/min", T::Number, "stragglers_slowdown")
                  .def_doc("required with `uniform`")
                  .closed(kMinSpeedFactor, 1.0)
                  .doc("uniform: the smallest f"));
  f.push_back(F(st + "/random/slowdown/max", T::Number, "stragglers_slowdown")
                  .def_doc("required with `uniform`")
                  .closed(kMinSpeedFactor, 1.0)
                  .allowed("at least `min`")
                  .doc("uniform: the largest f"));
  f.push_back(F(st + "/random/slowdown/mean", T::Number, "stragglers_slowdown")
                  .def_doc("required with `lognormal`")
                  .closed(kMinSpeedFactor, 1.0)
                  .doc("lognormal: the mean of f before the cap at 1"));
  f.push_back(F(st + "/random/slowdown/cv", T::Number, "stragglers_slowdown")
                  .def_doc("required with `lognormal`")
                  .closed(0.0, 2.0)
                  .doc("lognormal: the coefficient of variation of f before the cap (sd / mean)"));
}

void network_fields(std::vector<F>& f) {
  const std::string n = "/cluster/network/";
  f.push_back(F(n + "topology", T::Choice, "network")
                  .choices({"star", "fat_tree", "rail"})
                  .def("star")
                  .label("Network topology")
                  .doc("`star`: every NIC on one non-blocking core switch; `fat_tree`: nodes on leaf switches under a "
                       "spine (or pods under a core); `rail`: NIC k of every node on rail switch k, rails joined by a "
                       "spine (DGX SuperPOD)"));
  f.push_back(F(n + "profile", T::String, "network")
                  .library("links")
                  .def_doc("none")
                  .allowed("with scope `inter_node` and bandwidth per port (`ib-hdr`, `ib-ndr`, `ib-xdr`, "
                           "`roce-100g`, `roce-200g`, `roce-400g`)")
                  .label("Network profile")
                  .doc("takes the NIC's bandwidth and latency from the profile; `bandwidth` or `latency` given as "
                       "well override it"));
  f.push_back(F(n + "bandwidth", T::Quantity, "network")
                  .dim(Dimension::Bandwidth)
                  .positive(1e15)
                  .def_doc("required without `profile`")
                  .label("NIC bandwidth")
                  .doc("per NIC, per direction"));
  f.push_back(F(n + "latency", T::Quantity, "network")
                  .dim(Dimension::Time)
                  .closed(0.0, 10.0)
                  .def_doc("required without `profile`")
                  .label("Network latency")
                  .doc("one-way node-to-node latency through one switch"));
  f.push_back(F(n + "efficiency", T::Number, "network")
                  .closed(0.01, 1.0)
                  .def_doc("the profile's, else 1")
                  .doc("the fraction of the NIC's line rate that data moves at; the simulation uses bandwidth x "
                       "efficiency"));
  f.push_back(F(n + "nics_per_node", T::Integer, "network")
                  .range(1, 1024)
                  .def_doc("1; `gpus_per_node` with `rail`")
                  .allowed("at most `gpus_per_node`, a divisor of it; `rail`: equal to it")
                  .label("NICs per node")
                  .doc("GPU i of a node sends through NIC i x nics_per_node / gpus_per_node (GPUDirect RDMA: never "
                       "over the intra-node links); GPUs sharing a NIC share its bandwidth"));
  f.push_back(
      F(n + "fat_tree", T::Object, "network").def_doc("required with `fat_tree`; refused otherwise").doc("see below"));
  f.push_back(
      F(n + "rail", T::Object, "network").def_doc("all defaults; refused with other topologies").doc("see below"));
  const std::string t = n + "fat_tree/";
  f.push_back(F(t + "levels", T::Integer, "fat_tree")
                  .range(2, 3)
                  .def(2)
                  .doc("2: leaves under a spine; 3: leaves grouped in pods, pods under a core"));
  f.push_back(F(t + "nodes_per_leaf", T::Integer, "fat_tree")
                  .range(1, 65536)
                  .doc("nodes on one leaf switch; the last leaf may be partial (its uplinks are still sized for a "
                       "full leaf)"));
  f.push_back(F(t + "leaf_oversubscription", T::Number, "fat_tree")
                  .closed(1.0, 1e6)
                  .def(1)
                  .doc("a leaf's downlink bandwidth (nodes_per_leaf x nics_per_node x bandwidth) / its uplink "
                       "bandwidth"));
  f.push_back(F(t + "leaves_per_pod", T::Integer, "fat_tree")
                  .range(1, 65536)
                  .def_doc("required with 3 levels; refused with 2")
                  .doc("leaves in one pod; the last pod may be partial"));
  f.push_back(F(t + "pod_oversubscription", T::Number, "fat_tree")
                  .closed(1.0, 1e6)
                  .def(1)
                  .allowed("refused with 2 levels")
                  .doc("a pod's downlink bandwidth (leaves_per_pod x leaf uplink) / its uplink bandwidth"));
  for (const std::string& section : {std::string("fat_tree"), std::string("rail")}) {
    const std::string base = n + section + "/";
    f.push_back(F(base + "switch_latency", T::Quantity, section)
                    .dim(Dimension::Time)
                    .closed(0.0, 1.0)
                    .def_doc("`switch_profile`'s, else the NIC profile's `switch`'s, else 0")
                    .doc(section == "fat_tree" ? "one-way latency added by each uplink a route crosses (each switch "
                                                 "past the first): across leaves +2, across pods +4"
                                               : "one-way latency added by each rail uplink crossed: cross-rail "
                                                 "traffic +2"));
    f.push_back(F(base + "switch_profile", T::String, section)
                    .library("links")
                    .def_doc("none")
                    .allowed("with `bandwidth_per: \"switch\"` (`ib-ndr-switch`)")
                    .doc("takes `switch_latency` from the profile; an explicit `switch_latency` overrides it"));
  }
  f.push_back(F(n + "rail/spine_oversubscription", T::Number, "rail")
                  .closed(1.0, 1e6)
                  .def(1)
                  .doc("a rail switch's downlink bandwidth (nodes x bandwidth) / its uplink bandwidth to the spine; "
                       "only cross-rail traffic crosses it"));
}

void workload_fields(std::vector<F>& f) {
  const std::vector<std::string> job{"data_job"};
  const std::vector<std::string> training{"model_training"};
  const std::vector<std::string> collective{"collective"};
  const std::string w = "/workload/";
  f.push_back(F(w + "kind", T::Choice, "data_job")
                  .choices({"data_job", "model_training", "collective", "serving"})
                  .label("Kind")
                  .doc("a generic data job (the keys in this table); training a model from `models/workloads` "
                       "([below](#workload-kind-model_training)); a collective alone, as nccl-tests runs it "
                       "([below](#workload-kind-collective)); or requests through a pipeline of serving stages "
                       "([below](#workload-kind-serving), [serving.md](serving.md))"));
  // data_job
  f.push_back(F(w + "samples", T::Integer, "data_job")
                  .kinds(job)
                  .range(1, 1'000'000'000'000'000)
                  .def_doc("required, except with CSV labels")
                  .allowed("at most 2 x 10^9 with generated labels")
                  .label("Samples")
                  .doc("samples per iteration; for a processing job, the whole data set. With `labels/csv` it may be "
                       "left out (the file's data rows are the samples); when given it must equal that row count"));
  f.push_back(F(w + "flop_per_sample", T::Quantity, "data_job")
                  .kinds(job)
                  .dim(Dimension::Flop)
                  .closed(0.0, 1e21)
                  .label("Compute per sample")
                  .doc("compute per sample"));
  f.push_back(F(w + "bytes_read_per_sample", T::Quantity, "data_job")
                  .kinds(job)
                  .dim(Dimension::Bytes)
                  .closed(0.0, 1e15)
                  .def(0)
                  .label("Bytes read per sample")
                  .doc("bytes read from GPU memory per sample (the roofline's memory side)"));
  f.push_back(F(w + "data_type", T::Choice, "data_job")
                  .kinds(job)
                  .choices(known_data_types())
                  .def("bf16")
                  .allowed("and the GPU must have a peak for it")
                  .label("Data type")
                  .doc("picks the GPU's peak rate"));
  f.push_back(F(w + "iterations", T::Integer, "data_job")
                  .kinds(job)
                  .range(1, 1'000'000'000)
                  .def(1)
                  .label("Iterations")
                  .doc("training iterations; each processes `samples` then synchronises gradients"));
  f.push_back(F(w + "gradient_bytes", T::Quantity, "data_job")
                  .kinds(job)
                  .dim(Dimension::Bytes)
                  .closed(0.0, 1e15)
                  .def(0)
                  .label("Gradient bytes")
                  .doc("bytes all-reduced per iteration (0: no training state)"));
  f.push_back(F(w + "serial_fraction", T::Number, "data_job")
                  .kinds(job)
                  .closed(0.0, 0.999999)
                  .def(0)
                  .label("Serial fraction")
                  .doc("Amdahl's serial fraction s: the share of the one-GPU time per iteration that no partition can "
                       "share (loading, a reduction, a serial stage). Above 0 it makes the run coordinated: the "
                       "coordinator executes s / (1 - s) x the one-GPU time of the iteration's samples before the "
                       "partitions start ([engine.md](engine.md#coordinated-runs))"));
  f.push_back(F(w + "labels", T::Object, "data_job")
                  .kinds(job)
                  .def_doc("absent")
                  .allowed("see below")
                  .label("Labels")
                  .doc("class labels of the samples, for `/strategy/class_split`"));
  f.push_back(F(w + "labels/csv", T::String, "labels")
                  .kinds(job)
                  .def_doc("none")
                  .allowed("a CSV file; a relative path is taken from the folder of the scenario file (from the "
                           "working directory for the built-in default)")
                  .doc("labels from a CSV column, one data row per sample"));
  f.push_back(F(w + "labels/column", T::String, "labels")
                  .kinds(job)
                  .def_doc("required with `csv`")
                  .allowed("a name in the header row")
                  .doc("the column holding the labels"));
  f.push_back(F(w + "labels/generate", T::Object, "labels")
                  .kinds(job)
                  .def_doc("none")
                  .doc("binary labels: class `\"1\"` with probability `positive_rate`, else `\"0\"`"));
  f.push_back(F(w + "labels/generate/positive_rate", T::Number, "labels")
                  .kinds(job)
                  .closed(0.0, 1.0)
                  .doc("each sample is `\"1\"` independently with this probability"));
  f.push_back(F(w + "labels/generate/seed", T::Integer, "labels")
                  .kinds(job)
                  .range(0, kInt64Max)
                  .def(1)
                  .doc("seed of the generator (xoshiro256**); the same seed gives the same labels everywhere"));
  // model_training
  f.push_back(F(w + "model", T::Forms, "model_training")
                  .kinds(training)
                  .opaque()
                  .library("workloads")
                  .type_doc("string or object")
                  .allowed("(`partsim list workloads`), or an inline workload object of that format")
                  .label("Model")
                  .doc("the model"));
  f.push_back(F(w + "sequence_length", T::Integer, "model_training")
                  .kinds(training)
                  .range(1, 10'000'000)
                  .def_doc("the model's")
                  .allowed("transformers only")
                  .label("Sequence length")
                  .doc("tokens per sequence"));
  f.push_back(F(w + "global_batch", T::Integer, "model_training")
                  .kinds(training)
                  .range(1, 100'000'000)
                  .allowed("a multiple of micro_batch x data-parallel replicas")
                  .label("Global batch")
                  .doc("sequences (images) per iteration over all replicas"));
  f.push_back(F(w + "micro_batch", T::Integer, "model_training")
                  .kinds(training)
                  .range(1, 1'000'000)
                  .def(1)
                  .allowed("at most global_batch")
                  .label("Micro-batch")
                  .doc("sequences (images) per forward/backward pass on one GPU"));
  f.push_back(F(w + "data_type", T::Choice, "model_training")
                  .kinds(training)
                  .choices(training_data_types())
                  .def("bf16")
                  .allowed("(int8 and fp4 are inference formats), and the GPU must have a peak for it")
                  .label("Data type")
                  .doc("compute precision; weights and gradients are stored in it (8, 4, 4, 2, 2, 1 bytes; below 4 "
                       "bytes Adam keeps fp32 master weights); the gradients' own type is `gradient_data_type`"));
  f.push_back(F(w + "gradient_data_type", T::Choice, "model_training")
                  .kinds(training)
                  .choices(training_data_types())
                  .def_doc("the stack's")
                  .label("Gradient data type")
                  .doc("the type gradients are accumulated over the micro-batches, reduced over the data-parallel "
                       "replicas and read by the optimizer step in: their memory, the bytes of every gradient "
                       "collective, the step's reads. Both Megatron stacks with `bf16`: `fp32` (megatron/arguments.py "
                       "at 9da6e97 and fc7f4f0, megatron/training/arguments.py at 3efa8c2: \"bfloat16 requires "
                       "gradient accumulation and all-reduce to be done in fp32\", so `accumulate_allreduce_grads_in_"
                       "fp32` is forced on and the gradient buffers are fp32; the parameter all-gather of the "
                       "distributed optimizer stays in `data_type`); otherwise `data_type`"));
  f.push_back(F(w + "recomputation", T::Choice, "model_training")
                  .kinds(training)
                  .choices(enum_names<Recomputation>())
                  .def("none")
                  .allowed("transformers only")
                  .label("Recomputation")
                  .doc("activation recomputation (Korthikanti et al. 2022)"));
  f.push_back(
      F(w + "recompute_num_layers", T::Integer, "model_training")
          .kinds(training)
          .range(1, 1'000'000)
          .def_doc("every layer")
          .allowed("with `recomputation` `\"full\"` and strategy `model_parallel`")
          .label("Recomputed layers per chunk")
          .doc(
              "full recomputation by Megatron-Core's block method (`--recompute-method block "
              "--recompute-num-layers N`, megatron/core/transformer/transformer_block.py at f2e5db4): only the first N "
              "layers of each model chunk of a pipeline stage (each virtual stage with interleaving) keep "
              "just their input and rerun their forward, collectives included, before their backward; the "
              "others keep all their activations and run no rerun. N at least the chunk's layers: all of "
              "them, as without it ([training.md](training.md))"));
  f.push_back(F(w + "recompute_modules", T::Array, "model_training")
                  .kinds(training)
                  .type_doc("array of strings")
                  .def_doc("`[\"core_attn\"]`")
                  .allowed("with `recomputation` `\"selective\"`; each of `core_attn`, `layernorm`, `mla_up_proj`, "
                           "`mlp`, `moe_act`, `shared_experts` at most once, one the model has")
                  .label("Recompute modules")
                  .doc("the layer submodules selective recomputation reruns, as Megatron-Core's --recompute-modules "
                       "names them (megatron/core/transformer/transformer_config.py): `core_attn` the attention core "
                       "(its s x s tensors with an unfused kernel); `layernorm` the norms, their outputs freed (with "
                       "the `megatron-core-2024` stack's LayerNormLinear modules only a mixture of experts' norm, the "
                       "others live inside the next GEMM's module); `mla_up_proj` the latent attention's up "
                       "projections and rotary part, their queries, keys and values freed; `mlp` a dense MLP, its "
                       "input kept and everything inside freed, rerun with its tensor collectives; `moe_act` the "
                       "experts' activation, its output freed; `shared_experts` the shared experts as `mlp`. Each "
                       "rerun adds its forward to the backward pass. `moe` (the whole MoE layer with its all-to-alls) "
                       "is not modelled"));
  f.push_back(F(w + "recompute_policy", T::Choice, "model_training")
                  .kinds(training)
                  .choices({"modules", "torchtitan_op"})
                  .def("modules")
                  .allowed("`torchtitan_op`: with `recomputation` `\"selective\"`, no `recompute_modules`, a dense "
                           "model, `attention` `flash` or `flash_triton`, and strategy `tensor` and `context` 1")
                  .label("Recompute policy")
                  .doc("how selective recomputation chooses what to rerun: `modules`, the submodules "
                       "`recompute_modules` names (Megatron-Core); `torchtitan_op`, torchtitan's per-op policy "
                       "(`selective_ac_option = \"op\"`, torchtitan/models/llama3/parallelize_llama.py at e7c0cae): "
                       "the outputs of the attention kernel and of every second matmul in the layer's forward order "
                       "are kept (of wq, wk, wv, wo, w1, w3, w2: wq, wv, w1 and w2), every other op reruns before the "
                       "backward (norms, rotary embedding, activation, residual adds, and the wk, wo and w3 "
                       "matmuls: wk as its share of the QKV GEMM); FP8 GEMMs (torchao's Float8Linear calls "
                       "torch._scaled_mm, which the policy does not save) rerun whole with their casts. The layer "
                       "keeps its input, the kept outputs and the attention's softmax statistics; during its "
                       "backward one layer's activations are rebuilt, as under full recomputation "
                       "([training.md](training.md))"));
  f.push_back(F(w + "recompute_modules/*", T::Choice, "")
                  .kinds(training)
                  .choices(enum_names_except_none())
                  .doc("a layer submodule"));
  f.push_back(F(w + "optimizer", T::Choice, "model_training")
                  .kinds(training)
                  .choices(enum_names<Optimizer>())
                  .def("adam")
                  .label("Optimizer")
                  .doc("optimizer state: Adam two fp32 moments, SGD with momentum one; mixed precision adds an fp32 "
                       "master copy"));
  f.push_back(F(w + "gradient_clipping", T::Boolean, "model_training")
                  .kinds(training)
                  .def(true)
                  .label("Gradient clipping")
                  .doc("clip the gradients by their global L2 norm before the optimizer step, as Megatron-LM "
                       "(`--clip-grad`, default 1.0 in 2021, 2022 and 2024) and torchtitan (`max_norm` 1.0) do by "
                       "default: the step first reads every gradient once for the norm ([training.md](training.md))"));
  f.push_back(F(w + "loss_scaling", T::Boolean, "model_training")
                  .kinds(training)
                  .def_doc("`true` with `data_type` `fp16`, else `false`")
                  .label("Loss scaling")
                  .doc("dynamic loss scaling, which fp16 training needs and bf16 does not (Megatron-LM's `--fp16` with "
                       "its DynamicGradScaler, PyTorch's GradScaler): before the optimizer step every gradient is "
                       "unscaled and checked for infinities in one pass that reads and writes it "
                       "(torch._amp_foreach_non_finite_check_and_unscale_, Megatron-LM's "
                       "_unscale_main_grads_and_check_for_nan); the found-inf flag's all-reduce (one value) is not "
                       "simulated ([training.md](training.md))"));
  f.push_back(F(w + "stack", T::Choice, "model_training")
                  .kinds(training)
                  .choices(enum_names<TrainingStack>())
                  .def("custom")
                  .label("Training stack")
                  .doc("the kernel choices of a training stack, taken as the defaults of `attention`, "
                       "`fused_bias_activation`, `fused_bias_dropout_add` and `cross_entropy` (each can still be set): "
                       "`megatron-lm-2021` (Megatron-LM 2021-2022, as in Narayanan et al. 2021 and Korthikanti et al. "
                       "2022: `fused_softmax` attention, scores by `torch.baddbmm`, attention dropout as its own "
                       "kernel; bias-GeLU and bias-dropout-add fused by TorchScript; masked-softmax, bias-GeLU and "
                       "bias-dropout fusions on by default in megatron/arguments.py of NVIDIA/Megatron-LM at commits "
                       "9da6e97 (2021-12-30) and fc7f4f0 (2022-09-30); the loss by `megatron_fp32`, "
                       "mpu/cross_entropy.py on `output.float()`); `megatron-core-2024` (Megatron-Core with "
                       "Transformer Engine, the default `--transformer-impl` at commit 3efa8c2 (2024-09-30): `flash` "
                       "fused attention, bias-GeLU/SwiGLU and bias-dropout-add fused; the loss by `megatron_fp32`, "
                       "core/tensor_parallel/cross_entropy.py); `torchtitan` (`flash` through "
                       "PyTorch's scaled_dot_product_attention, eager mode: SiLU and the product with the gate as "
                       "separate kernels, residual adds unfused; the loss by `fp32_log_softmax`, "
                       "`cross_entropy(pred.float(), labels)`); `custom`: `flash`, fused bias-activation and "
                       "bias-dropout-add, a `fused` cross-entropy"));
  f.push_back(
      F(w + "attention", T::Choice, "model_training")
          .kinds(training)
          .choices(enum_names<AttentionKernel>())
          .def_doc("the stack's")
          .allowed("transformers only")
          .label("Attention kernel")
          .doc("the attention core: `flash` (one fused kernel, no s x s scores in memory, the scores recomputed "
               "in the backward pass; priced from the GPU profile's measured `attention_efficiency`), "
               "`fused_softmax` (scores written by a batched GEMM, one scale-mask-softmax kernel, dropout "
               "its own kernel), `unfused` (also the mask as its own pass), `flash_triton` (the fused kernel "
               "written in Triton, Tri Dao's flash_attn_triton.py, MPT's `attn_impl: triton`: priced from the "
               "profile's measured `attention_efficiency_triton`, or where it has none from `attention_efficiency`, "
               "which the report's strategy line says)"));
  f.push_back(F(w + "fused_bias_activation", T::Boolean, "model_training")
                  .kinds(training)
                  .def_doc("the stack's")
                  .allowed("transformers only")
                  .label("Fused bias + activation")
                  .doc("the MLP's bias add and activation (GeLU; SiLU and the product with the gate) in one kernel; "
                       "`false`: each its own pass over the activations"));
  f.push_back(F(w + "cross_entropy", T::Choice, "model_training")
                  .kinds(training)
                  .choices(enum_names<CrossEntropyKernel>())
                  .def_doc("the stack's")
                  .allowed("transformers only")
                  .label("Cross-entropy kernel")
                  .doc("the loss over the logits: `fused` (one kernel in the training data type: the forward reads "
                       "the logits, the backward writes their gradient), `fp32_log_softmax` (PyTorch's cross_entropy "
                       "on logits cast to fp32: 12 fp32 bytes per logit forward, 20 backward, beyond the casts), "
                       "`megatron_fp32` (Megatron's vocabulary-parallel cross-entropy on fp32 logits, five in-place "
                       "passes: 36 fp32 bytes per logit forward, 12 backward); matters where the vocabulary is large "
                       "against the model ([training.md](training.md)). Memory: every kind keeps 4 bytes per logit "
                       "for the backward; at the loss `megatron_fp32` holds e more per logit (the training-type "
                       "logits beside their fp32 copy), `fp32_log_softmax` 8 more (the nll gradient and log_softmax's "
                       "input gradient), `fused` none, added to the peak of the rank that computes the loss"));
  f.push_back(F(w + "fused_bias_dropout_add", T::Boolean, "model_training")
                  .kinds(training)
                  .def_doc("the stack's")
                  .allowed("transformers only")
                  .label("Fused bias + dropout + add")
                  .doc("after each block, the row-parallel GEMM's bias, dropout and the residual add in one kernel; "
                       "`false`: each its own pass"));
  f.push_back(
      F(w + "fused_moe_permute", T::Boolean, "model_training")
          .kinds(training)
          .def(false)
          .allowed("true: models with experts only")
          .label("Fused token permutation")
          .doc("a mixture of experts' token permutation by Transformer Engine's fused kernel (Megatron-Core's "
               "`--moe-permute-fusion`, te.pytorch `moe_permute`): each token's row read once and written to "
               "its k copies, the backward summing the copies' gradients, (1 + k)·t·h elements each way; "
               "`false` (Megatron-Core's default and torchtitan's indexing): PyTorch's index_select, 2k·t·h "
               "forward and 3k·t·h backward with its scatter-add ([model-parallelism.md](model-parallelism.md))"));
  f.push_back(
      F(w + "fp8", T::Choice, "model_training")
          .kinds(training)
          .choices(enum_names<Fp8Recipe>())
          .def("none")
          .allowed("not `none`: transformers only, `data_type` bf16 or fp16 and a GPU profile with an fp8 peak")
          .label("FP8 GEMMs")
          .doc("FP8 training as Transformer Engine runs it (Megatron-Core's `--fp8-format hybrid --fp8-recipe`): "
               "the layers' linear GEMMs (QKV, output projection, MLP and expert GEMMs; not the router, the "
               "attention core or the LM head) read FP8 copies of their input and weight (E4M3 forward, E5M2 "
               "gradients) at the GPU's fp8 rate and fp8 GEMM efficiency; each such input, and each output "
               "gradient, is first cast to two 1-byte copies (row- and column-wise); everything else, weights and "
               "the optimizer included, stays in `data_type`. `delayed`: the scale from earlier iterations' "
               "absolute maxima (TE's DelayedScaling), one read per cast; `tensorwise`: current scaling (TE's "
               "Float8CurrentScaling), the tensor's absolute maximum first, two reads; the FP8 GEMMs' inputs are "
               "kept for the backward at 1 byte, and each layer's weights have a 2-byte fp8 copy. With "
               "`sequence_parallel` the QKV and gate/up inputs and the output projection's and down GEMM's output "
               "gradients are quantized on the rank's rows, all-gathered in fp8 and transposed once gathered, each "
               "after a 4-byte all-reduce of its absolute maximum over the tensor group under `tensorwise` "
               "([training.md](training.md))"));
  f.push_back(F(w + "fp8_param_gather", T::Boolean, "model_training")
                  .kinds(training)
                  .def(false)
                  .allowed("true: with `fp8` not `none` and strategy `model_parallel` with `zero` 1, 2 or 3")
                  .label("FP8 weights and gathers")
                  .doc("the layers' weights kept and all-gathered in fp8 (Megatron-Core's `--fp8-param-gather`): the "
                       "fp8 weight tensors (row- and column-wise, 2 bytes a parameter) replace the data-type weights "
                       "and their fp8 copy, and the distributed optimizer or FSDP gathers them at 1 byte a parameter, "
                       "cast from its fp32 main weights; embedding and LM head stay in `data_type` "
                       "([training.md](training.md))"));
  f.push_back(F(w + "iterations", T::Integer, "model_training")
                  .kinds({"model_training", "collective"})
                  .range(1, 1'000'000)
                  .def(1)
                  .label("Iterations")
                  .doc("training iterations (a collective workload: times the collective runs, back to back)"));
  f.push_back(F(w + "workspace", T::Quantity, "model_training")
                  .kinds(training)
                  .dim(Dimension::Bytes)
                  .closed(0.0, 1e15)
                  .def(1024.0 * 1024.0 * 1024.0)
                  .def_doc("`1GiB`")
                  .label("Workspace")
                  .doc("memory per GPU outside the model's tensors: CUDA context, library workspaces, allocator slack "
                       "(an assumption: set your own figure)"));
  f.push_back(
      F(w + "data_loading", T::Quantity, "model_training")
          .kinds(training)
          .dim(Dimension::Time)
          .closed(0.0, 1e4)
          .def(0)
          .label("Data loading")
          .doc("host time per micro-batch that a rank reading the input waits for its next batch, its GPU "
               "idle: what the data loader's workers have not hidden (the fetch, the host-to-device copy). "
               "Megatron-LM times it per micro-batch as `batch-generator` around get_batch in pretrain_gpt.py's "
               "forward_step; only the first and last pipeline stages read a batch (tokens on the first, "
               "labels and the loss mask on the last: is_dataset_built_on_rank), tensor rank 0 reading and "
               "broadcasting it to the others; torchtitan logs it per step as its data-loading time. Simulated as a "
               "wait before each micro-batch's forward on the first and last stages (data parallelism: every "
               "micro-batch, before the iteration's compute), shown per rank as `data_loading_s`. Default 0: the "
               "loader's workers prefetch ahead of the GPU (an assumption, stated in the report's strategy line); "
               "set the figure your loader's timer shows"));
  f.push_back(F(w + "expert_routing", T::Object, "model_training")
                  .kinds(training)
                  .def_doc("uniform, no capacity limit")
                  .allowed("a mixture-of-experts model only")
                  .doc("how the routers spread each layer's token copies over its experts "
                       "([model-parallelism.md](model-parallelism.md#mixture-of-experts))"));
  f.push_back(F(w + "expert_routing/distribution", T::Choice, "model_training")
                  .kinds(training)
                  .choices(enum_names<ExpertDistribution>())
                  .def("uniform")
                  .label("Expert routing")
                  .doc("`uniform`: every expert gets 1/E of the copies; `zipf`: the expert of popularity rank r gets a "
                       "share proportional to r^-`zipf_exponent`, over a permutation of the experts drawn per layer "
                       "from `/run/seed` (each layer's hot experts, and so its busiest expert rank, differ); "
                       "`measured`: each layer's shares from the `counts` file, as a real run's router logged them"));
  f.push_back(F(w + "expert_routing/counts", T::String, "model_training")
                  .kinds(training)
                  .def_doc("required with `measured`")
                  .allowed("a CSV file with columns `layer`, `expert`, `tokens`, a row for every MoE layer (its index "
                           "in the model, from 0) and expert (from 0); a relative path is taken from the folder of "
                           "the scenario file")
                  .label("Routing counts file")
                  .doc("`measured` routing: the tokens routed to each expert of each layer (any scale: each layer's "
                       "counts over their sum are its shares), e.g. the routers' tokens per expert summed over a "
                       "real run's steps"));
  f.push_back(F(w + "expert_routing/zipf_exponent", T::Number, "model_training")
                  .kinds(training)
                  .closed(0.0, 10.0)
                  .def(1.0)
                  .allowed("with `zipf` only")
                  .label("Zipf exponent")
                  .doc("the skew of `zipf` routing: 0 is uniform; the busiest expert's share grows with it"));
  f.push_back(F(w + "expert_routing/capacity_factor", T::Number, "model_training")
                  .kinds(training)
                  .closed(0.01, 1000.0)
                  .def_doc("none: no limit, nothing dropped")
                  .label("Capacity factor")
                  .doc("the most copies an expert takes, as a multiple of its uniform share (GShard's capacity "
                       "factor); the rest are dropped and skip the expert (Megatron-Core's "
                       "`--moe-expert-capacity-factor` with token dropping)"));
  // collective
  f.push_back(F(w + "operation", T::Choice, "collective")
                  .kinds(collective)
                  .choices(enum_names<CollectiveOp>())
                  .label("Collective")
                  .doc("the collective nccl-tests would run"));
  f.push_back(F(w + "bytes", T::Quantity, "collective")
                  .kinds(collective)
                  .dim(Dimension::Bytes)
                  .positive(1e15)
                  .label("Bytes")
                  .doc("nccl-tests' size: the buffer per rank (all-reduce, broadcast), the input per rank "
                       "(reduce-scatter, all-to-all), the output per rank (all-gather)"));
  f.push_back(F(w + "root", T::Integer, "collective")
                  .kinds(collective)
                  .range(0, kMaxGpus - 1)
                  .def(0)
                  .allowed("a GPU index; broadcast only")
                  .label("Root rank")
                  .doc("the broadcast's root"));
}

/** A random time of a serving workload, at `base` (a stage's service, a client's think time). */
void distribution_fields(std::vector<F>& f, const std::string& base, const std::string& section) {
  const std::vector<std::string> serving{"serving"};
  f.push_back(F(base + "distribution", T::Choice, section)
                  .kinds(serving)
                  .choices(enum_names<DistributionKind>())
                  .doc("`fixed` (always `mean`), `exponential` (cv 1), `lognormal` or `gamma` (with `cv`), "
                       "`empirical` (one of the times of a CSV column, each as likely)"));
  f.push_back(F(base + "mean", T::Quantity, section)
                  .kinds(serving)
                  .dim(Dimension::Time)
                  .closed(0.0, 1e6)
                  .def_doc("required unless empirical")
                  .allowed("> 0 unless fixed; not with empirical")
                  .doc("the mean"));
  f.push_back(F(base + "csv", T::String, section)
                  .kinds(serving)
                  .def_doc("required with empirical")
                  .allowed("a CSV file with a header row; a relative path is taken from the folder of the scenario "
                           "file")
                  .doc("measured times, one row each (empirical only)"));
  f.push_back(F(base + "column", T::String, section)
                  .kinds(serving)
                  .def_doc("required with empirical")
                  .allowed("a name in the header row")
                  .doc("the column of times in seconds (numbers from 0)"));
  f.push_back(F(base + "cv", T::Number, section)
                  .kinds(serving)
                  .positive(100.0)
                  .def_doc("required for lognormal and gamma")
                  .allowed("lognormal and gamma only")
                  .doc("coefficient of variation, sd / mean (gamma: shape 1/cv^2)"));
}

/** A request's token count (an LLM stage's prompt or output), at `base`. */
void token_length_fields(std::vector<F>& f, const std::string& base, const std::string& section) {
  const std::vector<std::string> serving{"serving"};
  f.push_back(F(base + "distribution", T::Choice, section)
                  .kinds(serving)
                  .choices(enum_names<LengthKind>())
                  .doc("`fixed` (always `mean`), `uniform` (the integers `min`..`max`), `exponential`, `lognormal` or "
                       "`gamma` (with `cv`), rounded to the nearest integer and kept within `min`..`max`"));
  f.push_back(F(base + "mean", T::Number, section)
                  .kinds(serving)
                  .closed(1.0, 1e7)
                  .unit("tokens")
                  .def_doc("required but for uniform")
                  .allowed("not with uniform")
                  .doc("the mean"));
  f.push_back(F(base + "cv", T::Number, section)
                  .kinds(serving)
                  .positive(100.0)
                  .def_doc("required for lognormal and gamma")
                  .allowed("lognormal and gamma only")
                  .doc("coefficient of variation, sd / mean"));
  f.push_back(F(base + "min", T::Integer, section)
                  .kinds(serving)
                  .range(1, 10'000'000)
                  .def_doc("1; required for uniform")
                  .allowed("not with fixed")
                  .unit("tokens")
                  .doc("the shortest"));
  f.push_back(F(base + "max", T::Integer, section)
                  .kinds(serving)
                  .range(1, 10'000'000)
                  .def_doc("unbounded; required for uniform")
                  .allowed("not with fixed; at least `min`")
                  .unit("tokens")
                  .doc("the longest"));
}

/** An LLM serving stage, at `base` (the stage's `llm/`). */
void llm_fields(std::vector<F>& f, const std::string& base) {
  const std::vector<std::string> serving{"serving"};
  const std::string section = "serving_llm";
  f.push_back(F(base + "model", T::String, section)
                  .kinds(serving)
                  .allowed("a decoder transformer of models/workloads")
                  .doc("the model served, by name (`llama3-8b`)"));
  f.push_back(F(base + "data_type", T::Choice, section)
                  .kinds(serving)
                  .choices(known_data_types())
                  .def("bf16")
                  .allowed("and the GPU must have a peak for it")
                  .doc("weights, activations and KV cache are stored in it; picks the GPU's peak rate"));
  f.push_back(F(base + "tensor_parallel", T::Integer, section)
                  .kinds(serving)
                  .range(1, 1024)
                  .def(1)
                  .allowed("divides heads, kv_heads and ffn_size; replicas_per_node x this at most gpus_per_node")
                  .doc("GPUs of one node per replica (Megatron-style tensor parallelism: 2 all-reduces per layer on "
                       "the intra-node link)"));
  f.push_back(F(base + "max_num_seqs", T::Integer, section)
                  .kinds(serving)
                  .range(1, 1'000'000)
                  .def(256)
                  .doc("requests in a replica's running batch at most (vLLM's `max_num_seqs`, default 256)"));
  f.push_back(F(base + "max_num_batched_tokens", T::Integer, section)
                  .kinds(serving)
                  .range(1, 100'000'000)
                  .def_doc("max(the model's sequence length, 2048)")
                  .allowed("at least the longest prompt, unless `chunked_prefill`")
                  .doc("tokens of one step at most: prompts prefilled plus one per decoding request (vLLM's "
                       "`max_num_batched_tokens`, its default without chunked prefill)"));
  f.push_back(F(base + "workspace_fraction", T::Number, section)
                  .kinds(serving)
                  .closed(0.0, 0.99)
                  .def(0.1)
                  .doc("share of GPU memory kept from the KV cache for activations and the runtime (vLLM's "
                       "`gpu_memory_utilization` 0.9 leaves 0.1); the KV cache gets the rest after the weights"));
  f.push_back(F(base + "input_tokens", T::Object, section)
                  .kinds(serving)
                  .doc("a request's prompt length (drawn, unless the arrival trace has an `input_tokens_column`)"));
  token_length_fields(f, base + "input_tokens/", section);
  f.push_back(F(base + "output_tokens", T::Object, section)
                  .kinds(serving)
                  .doc("a request's output length (drawn, unless the arrival trace has an `output_tokens_column`)"));
  token_length_fields(f, base + "output_tokens/", section);
  f.push_back(F(base + "ttft_target", T::Quantity, section)
                  .kinds(serving)
                  .dim(Dimension::Time)
                  .positive(1e6)
                  .def_doc("none")
                  .doc("time to first token a request must meet to count in the goodput"));
  f.push_back(F(base + "tpot_target", T::Quantity, section)
                  .kinds(serving)
                  .dim(Dimension::Time)
                  .positive(1e6)
                  .def_doc("none")
                  .doc("time per output token a request must meet to count in the goodput"));
  f.push_back(F(base + "kv_admission", T::Choice, section)
                  .kinds(serving)
                  .choices(enum_names<KvAdmission>())
                  .def("preempt")
                  .doc("`preempt` (vLLM's default): a request takes KV slots as it grows; when a decode step finds the "
                       "cache full the most recently admitted request is preempted (its KV freed, its prefill "
                       "recomputed over prompt + tokens so far when admitted again). `reserve_full`: each request "
                       "reserves its prompt and whole output at admission and is never preempted"));
  f.push_back(F(base + "chunked_prefill", T::Boolean, section)
                  .kinds(serving)
                  .def(false)
                  .doc("prefill prompts in chunks: each step fills `max_num_batched_tokens` with one token per "
                       "decoding request, then chunks of the prompts in order (vLLM's chunked prefill, Sarathi), "
                       "priced as one pass of GEMMs over all the step's tokens"));
  f.push_back(F(base + "prefill_pool", T::Object, section)
                  .kinds(serving)
                  .def_doc("none (each replica prefills and decodes)")
                  .doc("prefill/decode disaggregation: prompts are prefilled on this pool (the nodes after the "
                       "stage's own pool, same `tensor_parallel`), each request's KV cache is sent over the cluster's "
                       "network to a decode replica of the stage's pool (round robin), which decodes"));
  f.push_back(F(base + "prefill_pool/nodes", T::Integer, section)
                  .kinds(serving)
                  .range(1, kMaxGpus)
                  .allowed("all pools together at most `/cluster/nodes`")
                  .doc("nodes of the prefill pool"));
  f.push_back(F(base + "prefill_pool/replicas_per_node", T::Integer, section)
                  .kinds(serving)
                  .range(1, 4096)
                  .def(1)
                  .allowed("x `tensor_parallel` at most `gpus_per_node`")
                  .doc("prefill replicas on each node"));
}

void serving_fields(std::vector<F>& f) {
  const std::vector<std::string> serving{"serving"};
  const std::string w = "/workload/";
  f.push_back(F(w + "stages", T::Array, "serving")
                  .kinds(serving)
                  .allowed("1 to 64 stages")
                  .label("Stages")
                  .doc("the stages in order, each after those it takes from (`after`); each item goes through all of "
                       "them ([below](#serving-stages))"));
  f.push_back(F(w + "stages/*", T::Object, "").kinds(serving).doc("one stage"));
  f.push_back(
      F(w + "arrivals", T::Object, "serving").kinds(serving).doc("how requests arrive ([below](#serving-arrivals))"));
  f.push_back(F(w + "requests", T::Integer, "serving")
                  .kinds(serving)
                  .range(1, 100'000'000)
                  .def_doc("required without `duration`, except with a trace (all its rows)")
                  .label("Requests")
                  .doc("requests sent in all, warm-up included (with a trace: its first rows)"));
  f.push_back(F(w + "duration", T::Quantity, "serving")
                  .kinds(serving)
                  .dim(Dimension::Time)
                  .positive(1e7)
                  .def_doc("required without `requests`, except with a trace")
                  .label("Duration")
                  .doc("no request is sent after this time (the run ends when the last one is answered)"));
  f.push_back(F(w + "warmup", T::Quantity, "serving")
                  .kinds(serving)
                  .dim(Dimension::Time)
                  .closed(0.0, 1e7)
                  .def(0)
                  .label("Warm-up")
                  .doc("requests sent before this time are left out of the latency statistics; throughput, "
                       "utilisation and queue length are taken from this time to the end"));
  f.push_back(F(w + "latency_target", T::Quantity, "serving")
                  .kinds(serving)
                  .dim(Dimension::Time)
                  .positive(1e7)
                  .def_doc("none")
                  .label("Latency target")
                  .doc("an end-to-end latency objective: the report gives the share of the measured requests "
                       "answered within it (drops count as missed) and those answers per second, and the GUI's "
                       "latency CDF marks it"));
  f.push_back(F(w + "orchestration", T::Object, "serving")
                  .kinds(serving)
                  .def_doc("none")
                  .doc("the cost of each hop between stages ([below](#serving-orchestration))"));
  const std::string st = w + "stages/*/";
  f.push_back(F(st + "name", T::String, "serving_stage").kinds(serving).doc("the stage's name, unique"));
  f.push_back(F(st + "after", T::Array, "serving_stage")
                  .kinds(serving)
                  .type_doc("array of strings")
                  .def_doc("the stage before (the first stage: none)")
                  .allowed("names of stages listed before this one, each once; the first stage: `[]`; no two LLM "
                           "stages that could hold a request at the same time")
                  .doc("the stages whose output this one takes, so that the stages form a graph (as Kubeflow "
                       "Pipelines' `.after()` or a Ray DAG): a stage named by several gets a copy of each item from "
                       "it (a fan-out); a stage naming several takes an item once all of them have handed it on (a "
                       "join); `[]`: the stage takes the arrivals. A request is answered when every stage that no "
                       "other names has finished it ([serving.md](serving.md#graphs-of-stages))"));
  f.push_back(F(st + "after/*", T::String, "").kinds(serving).doc("an earlier stage's name"));
  f.push_back(F(st + "pool", T::Object, "serving_stage")
                  .kinds(serving)
                  .doc("where the stage runs: nodes of the scenario's cluster, taken in stage order (the first "
                       "stage's pool gets nodes 0.., the next the following ones)"));
  f.push_back(F(st + "pool/device", T::Choice, "serving_stage")
                  .kinds(serving)
                  .choices(enum_names<PoolDevice>())
                  .def("gpu")
                  .doc("the node's host CPUs or its GPUs; a label only: the service time is the scenario's figure "
                       "for that processor"));
  f.push_back(F(st + "pool/nodes", T::Integer, "serving_stage")
                  .kinds(serving)
                  .range(1, kMaxGpus)
                  .allowed("all pools together at most `/cluster/nodes`; at most 65,536 replicas over all stages")
                  .doc("nodes of the pool"));
  f.push_back(F(st + "pool/replicas_per_node", T::Integer, "serving_stage")
                  .kinds(serving)
                  .range(1, 4096)
                  .def(1)
                  .doc("replicas on each node, each serving one batch at a time from the stage's shared queue"));
  f.push_back(F(st + "pool/cores", T::Integer, "serving_stage")
                  .kinds(serving)
                  .range(1, 4096)
                  .def_doc("no bound")
                  .doc("the pool's node type: cores per node; each replica takes one, so `replicas_per_node` is at "
                       "most this"));
  f.push_back(F(st + "pool/speed", T::Number, "serving_stage")
                  .kinds(serving)
                  .closed(1e-3, 1e3)
                  .def(1)
                  .allowed("not with `llm` or `model_service` (their time comes from the cluster's GPU profile)")
                  .doc("the pool's node type: its speed against the processor the `service` times were measured on "
                       "(2: each service, with `extra_item_time`, takes half as long); the orchestration's per-item "
                       "overhead is not scaled"));
  f.push_back(F(st + "service", T::Object, "serving_stage")
                  .kinds(serving)
                  .def_doc("required without `llm`")
                  .allowed("not with `llm`")
                  .doc("a replica's time to serve one item (one batch)"));
  distribution_fields(f, st + "service/", "serving_stage");
  f.push_back(F(st + "batching", T::Object, "serving_stage")
                  .kinds(serving)
                  .def_doc("none (batches of 1)")
                  .doc("dynamic batching, as Triton's dynamic batcher or Ray Serve's `@serve.batch` do"));
  f.push_back(F(st + "batching/max_size", T::Integer, "serving_stage")
                  .kinds(serving)
                  .range(1, 1'000'000)
                  .def(1)
                  .doc("items served together"));
  f.push_back(F(st + "batching/max_wait", T::Quantity, "serving_stage")
                  .kinds(serving)
                  .dim(Dimension::Time)
                  .closed(0.0, 1e6)
                  .def(0)
                  .doc("how long a replica that took a batch's first item waits for more before serving it"));
  f.push_back(F(st + "batching/extra_item_time", T::Quantity, "serving_stage")
                  .kinds(serving)
                  .dim(Dimension::Time)
                  .closed(0.0, 1e6)
                  .def(0)
                  .doc("a batch of n takes one service time + (n - 1) x this"));
  f.push_back(
      F(st + "output_bytes", T::Quantity, "serving_stage")
          .kinds(serving)
          .dim(Dimension::Bytes)
          .closed(0.0, 1e12)
          .def(0)
          .doc("per item, sent over the cluster's network to the pool of each stage that takes this one's output "
               "(a batch as one message each); the last stage's answer to the client is not simulated"));
  f.push_back(
      F(st + "queue", T::Object, "serving_stage").kinds(serving).def_doc("unbounded").doc("the stage's shared queue"));
  f.push_back(F(st + "queue/capacity", T::Integer, "serving_stage")
                  .kinds(serving)
                  .range(0, 1'000'000'000)
                  .def_doc("unbounded")
                  .doc("items waiting, beyond those being served"));
  f.push_back(F(st + "queue/when_full", T::Choice, "serving_stage")
                  .kinds(serving)
                  .choices(enum_names<QueueFull>())
                  .def("drop")
                  .doc("`drop` the arriving item (counted, and answered as dropped), or `block` its producer (the "
                       "arrivals, the network receiver or the previous stage's replica) until there is room"));
  f.push_back(F(st + "model_service", T::Object, "serving_stage")
                  .kinds(serving)
                  .def_doc("none")
                  .allowed("not with `service` or `llm`, nor `batching/extra_item_time`; device gpu")
                  .doc("the service from the cost model: a batch of n items takes the forward pass of a model of "
                       "models/workloads at micro-batch n on the cluster's GPU profile (each op's roofline with the "
                       "profile's GEMM efficiencies, as training's forward), priced once per batch size "
                       "([serving.md](serving.md#service-from-the-cost-model))"));
  f.push_back(F(st + "model_service/model", T::String, "serving_stage")
                  .kinds(serving)
                  .def_doc("required")
                  .allowed("a workload of models/workloads (a transformer or a CNN)")
                  .doc("the model, by name (`bert-large`, `resnet50`)"));
  f.push_back(F(st + "model_service/sequence_length", T::Integer, "serving_stage")
                  .kinds(serving)
                  .range(1, 10'000'000)
                  .def_doc("the model's")
                  .allowed("transformers only")
                  .doc("tokens per item"));
  f.push_back(F(st + "model_service/data_type", T::Choice, "serving_stage")
                  .kinds(serving)
                  .choices(known_data_types())
                  .def("bf16")
                  .allowed("and the GPU must have a peak for it")
                  .doc("the data type it runs in; picks the GPU's peak rate"));
  f.push_back(F(st + "llm", T::Object, "serving_stage")
                  .kinds(serving)
                  .def_doc("none")
                  .allowed("not with `service` or `batching`; device gpu")
                  .doc("an LLM server: each replica serves a transformer with continuous batching; its prefill and "
                       "decode steps priced by the cost model ([below](#serving-llm), "
                       "[serving.md](serving.md#llm-serving-stage))"));
  llm_fields(f, st + "llm/");
  const std::string a = w + "arrivals/";
  f.push_back(F(a + "process", T::Choice, "serving_arrivals")
                  .kinds(serving)
                  .choices(enum_names<ArrivalProcess>())
                  .doc("`poisson`: an open loop at `rate`; `gamma`: an open loop at `rate` whose gaps between "
                       "arrivals are gamma-distributed with the coefficient of variation `cv` (above 1: bursty); "
                       "`trace`: the requests of a CSV file replayed at their times, with their token counts when it "
                       "has them; `closed`: `clients` each waiting for its answer, then thinking, before the next "
                       "request"));
  f.push_back(F(a + "rate", T::Number, "serving_arrivals")
                  .kinds(serving)
                  .positive(1e9)
                  .unit("requests/s")
                  .def_doc("required with poisson and gamma")
                  .doc("mean arrival rate"));
  f.push_back(F(a + "cv", T::Number, "serving_arrivals")
                  .kinds(serving)
                  .positive(100.0)
                  .def_doc("required with gamma")
                  .doc("coefficient of variation (standard deviation / mean) of the gaps between arrivals: 1 is "
                       "Poisson, above 1 bursty, below 1 more regular"));
  f.push_back(F(a + "trace", T::Object, "serving_arrivals")
                  .kinds(serving)
                  .def_doc("required with trace")
                  .doc("a recorded arrival trace, replayed in order from its first row's time; with token columns "
                       "an LLM stage takes each request's input and output tokens from it instead of drawing them "
                       "(Azure's LLM inference traces: `time_column` `TIMESTAMP`, `ContextTokens`, "
                       "`GeneratedTokens`)"));
  f.push_back(F(a + "trace/csv", T::String, "serving_arrivals")
                  .kinds(serving)
                  .def_doc("required")
                  .allowed("a CSV file with a header row; a relative path is taken from the folder of the scenario "
                           "file")
                  .doc("one row per request, in time order"));
  f.push_back(F(a + "trace/time_column", T::String, "serving_arrivals")
                  .kinds(serving)
                  .def("arrival_s")
                  .allowed("a name in the header row")
                  .doc("arrival times: seconds (numbers), or datetimes `YYYY-MM-DD HH:MM:SS[.fraction]`; made "
                       "relative to the first row"));
  f.push_back(F(a + "trace/input_tokens_column", T::String, "serving_arrivals")
                  .kinds(serving)
                  .def_doc("none: an LLM stage draws `input_tokens`")
                  .allowed("a name in the header row")
                  .doc("each request's prompt tokens (whole numbers from 1)"));
  f.push_back(F(a + "trace/output_tokens_column", T::String, "serving_arrivals")
                  .kinds(serving)
                  .def_doc("none: an LLM stage draws `output_tokens`")
                  .allowed("a name in the header row")
                  .doc("each request's output tokens (whole numbers from 1)"));
  f.push_back(F(a + "trace/speed", T::Number, "serving_arrivals")
                  .kinds(serving)
                  .positive(1e6)
                  .def(1.0)
                  .doc("replay speed: every arrival time is divided by it (2: the same requests, in the same order, "
                       "at twice the rate), for what-if traffic growth on a recorded day"));
  f.push_back(F(a + "clients", T::Integer, "serving_arrivals")
                  .kinds(serving)
                  .range(1, 65'536)
                  .def_doc("required with closed")
                  .doc("clients of the closed loop"));
  f.push_back(F(a + "think_time", T::Object, "serving_arrivals")
                  .kinds(serving)
                  .def_doc("none (0)")
                  .doc("a client's time between an answer and its next request"));
  distribution_fields(f, a + "think_time/", "serving_arrivals");
  const std::string o = w + "orchestration/";
  f.push_back(F(o + "preset", T::Choice, "serving_orchestration")
                  .kinds(serving)
                  .choices(enum_names<OrchestrationPreset>())
                  .def("none")
                  .doc("`ray_actor_call`: 489 us of latency and 138 us of replica time per item, from Ray's "
                       "`ray microbenchmark` (1:1 actor calls: 1595 sync and 7234 async per second); "
                       "`kubeflow_pipeline_step`: 10 s per hop for a step's pod, an assumption "
                       "([serving.md](serving.md#orchestration))"));
  f.push_back(F(o + "dispatch_latency", T::Quantity, "serving_orchestration")
                  .kinds(serving)
                  .dim(Dimension::Time)
                  .closed(0.0, 1e6)
                  .def_doc("the preset's")
                  .doc("per hop, before the item joins the next stage's queue; it occupies no replica"));
  f.push_back(F(o + "per_item_overhead", T::Quantity, "serving_orchestration")
                  .kinds(serving)
                  .dim(Dimension::Time)
                  .closed(0.0, 1e6)
                  .def_doc("the preset's")
                  .doc("replica time per item taken from the queue of every stage after the first"));
}

void collective_choice_fields(std::vector<F>& f, const std::string& base, const std::string& section,
                              std::vector<std::string> kinds) {
  f.push_back(F(base + "algorithm", T::Choice, section)
                  .kinds(kinds)
                  .choices(with_auto<CollectiveAlgorithm>())
                  .def("auto")
                  .allowed("not every algorithm runs every collective")
                  .doc("the algorithm ([collectives.md](collectives.md)); `auto` picks the smallest alpha-beta closed "
                       "form on this cluster, as NCCL's tuner does, never `two_hop` (an all-to-all over nodes that "
                       "forwards inside each: it saves network bytes only for a mixture of experts' tokens, "
                       "`/strategy/expert_dispatch`)"));
  f.push_back(F(base + "channels", T::Integer, section)
                  .kinds(kinds)
                  .range(1, 64)
                  .def_doc("one per NIC the members on a node use")
                  .label("Channels")
                  .doc("rings of a ring reduce-scatter, all-gather or all-reduce across nodes, each on its share of "
                       "the data and its own NIC where there are enough (NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS); at "
                       "most the members per node; a group inside one node or with one member per node runs one"));
  f.push_back(F(base + "protocol", T::Choice, section)
                  .kinds(kinds)
                  .choices(with_auto<CollectiveProtocol>())
                  .def("auto")
                  .allowed("`ll128` over NVLink only; NVLS and all-to-all `simple` only")
                  .label("Protocol")
                  .doc("NCCL's protocol (NCCL_PROTO): `simple` (full bandwidth, the largest latency per step), "
                       "`ll128` (120 of every 128 bytes carry data), `ll` (half the bandwidth, the smallest latency); "
                       "`auto` picks, with the algorithm, the smallest closed form with NCCL's latencies, as its tuner "
                       "does ([collectives.md](collectives.md#protocols))"));
  f.push_back(F(base + "fidelity", T::Choice, section)
                  .kinds(kinds)
                  .choices(with_auto<Fidelity>())
                  .def("auto")
                  .doc("every message of the algorithm / one flow per edge of the algorithm / alpha-beta time without "
                       "network simulation; `auto` takes the most faithful level whose message count keeps the run "
                       "fast"));
}

/** `/strategy` of kind `parameter_server` (docs/stale-gradients.md). */
void parameter_server_fields(std::vector<F>& f) {
  const std::vector<std::string> ps{"parameter_server"};
  const std::string s = "/strategy/";
  f.push_back(F(s + "policy", T::Choice, "parameter_server")
                  .kinds(ps)
                  .choices(enum_names<PsPolicy>())
                  .def("sync")
                  .label("Policy")
                  .doc("`sync`: every step waits for all workers' gradients of the step before, aggregated into one "
                       "update; `async`: no wait, every gradient an update; `ssp`: stale synchronous parallel, a "
                       "worker starts step t once every worker has completed t - `staleness_bound` steps; "
                       "`local_sgd`: `local_steps` steps on a local copy, then push and wait for every worker's push"));
  f.push_back(F(s + "staleness_bound", T::Integer, "parameter_server")
                  .kinds(ps)
                  .range(0, 1'000'000)
                  .def(2)
                  .allowed("read with `ssp` only")
                  .label("Staleness bound")
                  .doc("ssp's s: the most steps a worker may start ahead of the slowest worker's completed steps"));
  f.push_back(F(s + "local_steps", T::Integer, "parameter_server")
                  .kinds(ps)
                  .range(1, 1'000'000)
                  .def(4)
                  .allowed("read with `local_sgd` only")
                  .label("Local steps")
                  .doc("local_sgd's H: steps between synchronisations (and after the last step)"));
  f.push_back(F(s + "server_shards", T::Integer, "parameter_server")
                  .kinds(ps)
                  .range(1, 4096)
                  .def(1)
                  .allowed("fewer than `/cluster/nodes`")
                  .label("Server shards")
                  .doc("parameter-server shards, each on the first GPU host of one of the last nodes (its own NIC); "
                       "the parameters and gradients are split evenly over them"));
  f.push_back(F(s + "workers", T::Integer, "parameter_server")
                  .kinds(ps)
                  .range(1, kMaxGpus)
                  .def_doc("every GPU of the nodes the shards leave")
                  .allowed("at most those GPUs")
                  .label("Workers")
                  .doc("worker w runs on GPU w; each step it computes `/workload/samples` (data job) or "
                       "`global_batch` (model training) / workers samples"));
  f.push_back(F(s + "worker_speeds", T::Array, "parameter_server")
                  .kinds(ps)
                  .def_doc("all 1")
                  .allowed("one positive number per worker")
                  .label("Worker speeds")
                  .doc("heterogeneous workers: worker w's compute per step is the nominal one / (speed x its node's "
                       "`speed_factor`)"));
  f.push_back(F(s + "worker_speeds/*", T::Number, "").kinds(ps).positive(1e6).doc("one worker's speed"));
  f.push_back(F(s + "jitter", T::Object, "parameter_server")
                  .kinds(ps)
                  .def_doc("absent: none")
                  .allowed("see below")
                  .doc("a random factor of mean 1 on every step's compute time, drawn per worker from /run/seed"));
  f.push_back(F(s + "jitter/distribution", T::Choice, "ps_jitter")
                  .kinds(ps)
                  .choices(enum_names<DistributionKind>())
                  .allowed("not empirical")
                  .doc("`fixed` (always 1), `exponential` (cv 1), `lognormal` or `gamma` (with `cv`)"));
  f.push_back(F(s + "jitter/cv", T::Number, "ps_jitter")
                  .kinds(ps)
                  .positive(100.0)
                  .def_doc("required for lognormal and gamma")
                  .allowed("lognormal and gamma only")
                  .doc("coefficient of variation of the factor"));
  f.push_back(F(s + "update_time", T::Quantity, "parameter_server")
                  .kinds(ps)
                  .dim(Dimension::Time)
                  .closed(0.0, 1e6)
                  .def_doc("model training: the optimizer step over all parameters on one GPU (the cost model); data "
                           "job: 3 x `gradient_bytes` / the GPU's achieved memory bandwidth")
                  .label("Update time")
                  .doc("a server's time to apply one gradient over the whole model; a shard takes its share, one "
                       "gradient at a time"));
  f.push_back(F(s + "request_bytes", T::Quantity, "parameter_server")
                  .kinds(ps)
                  .dim(Dimension::Bytes)
                  .closed(0.0, 1e9)
                  .def(64)
                  .label("Request bytes")
                  .doc("bytes of a pull request sent to each shard"));
  f.push_back(F(s + "statistical_efficiency", T::Object, "parameter_server")
                  .kinds(ps)
                  .def_doc("absent: the report says it has no time to a target")
                  .allowed("see below")
                  .doc("steps to a target loss against mean staleness, with its source: the report adds the time to "
                       "the target"));
  const std::string e = s + "statistical_efficiency/";
  f.push_back(F(e + "source", T::String, "ps_efficiency")
                  .kinds(ps)
                  .allowed("non-empty")
                  .doc("where the points come from: a publication (authors, title, figure) or a measurement"));
  f.push_back(F(e + "target", T::String, "ps_efficiency").kinds(ps).def("").doc("the target in words"));
  f.push_back(F(e + "points", T::Array, "ps_efficiency")
                  .kinds(ps)
                  .allowed("at least 2, in increasing `mean_staleness`")
                  .doc("`{\"mean_staleness\", \"steps\"}` objects: global steps to the target at that mean "
                       "staleness (updates), linear between points; outside them the report gives no time"));
  f.push_back(F(e + "points/*", T::Object, "").kinds(ps).doc("one point"));
  f.push_back(F(e + "points/*/mean_staleness", T::Number, "ps_efficiency")
                  .kinds(ps)
                  .closed(0.0, 1e9)
                  .doc("a mean staleness in updates"));
  f.push_back(F(e + "points/*/steps", T::Number, "ps_efficiency")
                  .kinds(ps)
                  .positive(1e15)
                  .doc("global steps (of the global batch) to the target at that staleness"));
}

void strategy_fields(std::vector<F>& f) {
  const std::vector<std::string> dp{"data_parallel"};
  const std::vector<std::string> mp{"model_parallel"};
  const std::string s = "/strategy/";
  f.push_back(
      F(s + "kind", T::Choice, "data_parallel")
          .choices({"data_parallel", "model_parallel", "collective", "serving", "parameter_server"})
          .label("Kind")
          .doc("`data_parallel`: split the samples (or the batch, for model training) into partitions; "
               "`model_parallel`: a transformer's data x tensor x pipeline split "
               "([below](#strategy-kind-model_parallel)); `collective`: with a collective workload; "
               "`serving`: with a serving workload (its stages say where they run); `parameter_server`: "
               "workers and parameter-server shards under a consistency policy, with a data job or model "
               "training ([below](#strategy-kind-parameter_server), [stale-gradients.md](stale-gradients.md))"));
  f.push_back(F(s + "partitions", T::Integer, "data_parallel")
                  .kinds(dp)
                  .range(1, 10'000'000)
                  .def_doc("the GPU count (`nodes` x `gpus_per_node`)")
                  .allowed("at least the GPU count")
                  .label("Partitions")
                  .doc("partition p runs on GPU p mod G; a GPU with several partitions processes them back to back"));
  f.push_back(F(s + "shares", T::Forms, "data_parallel")
                  .kinds(dp)
                  .choices({"balanced", "by_speed"})
                  .def("balanced")
                  .type_doc("string, array or object")
                  .allowed("an array of one share per partition, or `{\"skewed\": S, \"largest_partition\": P}`; see "
                           "below")
                  .label("Shares")
                  .doc("how the samples are divided among partitions"));
  f.push_back(F(s + "shares/*", T::Number, "").kinds(dp).closed(0.0, 1.0).doc("one partition's share"));
  f.push_back(F(s + "shares/skewed", T::Number, "").kinds(dp).closed(0.0, 1.0).doc("the largest partition's share"));
  f.push_back(F(s + "shares/largest_partition", T::Integer, "")
                  .kinds(dp)
                  .range(0, 10'000'000 - 1)
                  .def(0)
                  .doc("the partition with the largest share"));
  f.push_back(F(s + "gradient_sync", T::Forms, "data_parallel")
                  .kinds(dp)
                  .choices({"none", "ring_allreduce", "all_reduce"})
                  .type_doc("string or object")
                  .def_doc("data job: `ring_allreduce` when `gradient_bytes > 0`, else `none`; model training: "
                           "`all_reduce`")
                  .allowed("or an object: see [below](#strategygradient_sync)")
                  .label("Gradient sync")
                  .doc("how gradients are synchronised after each iteration: `ring_allreduce` is the step-by-step "
                       "ring, `all_reduce` an all-reduce with algorithm and fidelity `auto`"));
  f.push_back(F(s + "balancing", T::Object, "data_parallel")
                  .kinds(dp)
                  .def_doc("absent: each GPU already holds its partitions")
                  .allowed("see below")
                  .doc("hand the samples out at run time from a coordinator host"));
  f.push_back(F(s + "coordination", T::Object, "data_parallel")
                  .kinds(dp)
                  .def_doc("absent")
                  .allowed("see below")
                  .doc("a coordinator's per-iteration work around the partitions: coordination time, input, results, "
                       "halos"));
  f.push_back(F(s + "class_split", T::Object, "data_parallel")
                  .kinds(dp)
                  .def_doc("absent")
                  .allowed("see below")
                  .doc("deal labelled samples to the partitions by class before the first iteration"));
  // gradient_sync as an object (both strategy kinds)
  collective_choice_fields(f, s + "gradient_sync/", "gradient_sync", {});
  f.push_back(F(s + "gradient_sync/bucket_size", T::Quantity, "gradient_sync")
                  .dim(Dimension::Bytes)
                  .positive(1e15)
                  .def_doc("`25MiB` (PyTorch DDP's `bucket_cap_mb`)")
                  .allowed("model training only")
                  .doc("gradients all-reduced together; a bucket closes once it holds at least this many bytes, "
                       "filled from the last layer backwards"));
  f.push_back(F(s + "gradient_sync/overlap", T::Boolean, "gradient_sync")
                  .def(true)
                  .allowed("model training only")
                  .doc("all-reduce each bucket on the communication stream while the backward pass goes on (DDP); "
                       "`false`: all buckets after the backward pass"));
  f.push_back(F(s + "gradient_sync/overlap_param_gather", T::Boolean, "gradient_sync")
                  .def(false)
                  .allowed("model_parallel with `zero` 1 or 2")
                  .doc("the all-gathers of the updated parameters, one per gradient bucket in forward order, queued "
                       "on the communication stream after the optimizer step, each waited for just before the first "
                       "forward pass reaches its bucket's first layer, as Megatron-Core's `--overlap-param-gather` "
                       "(megatron/core/optimizer/distrib_optimizer.py at f2e5db4, 2024-07: the first bucket's "
                       "all-gather is dispatched after the step, each later one when the forward pre-hook waits for "
                       "the one before, so they run back to back on the stream); `false`: they block after the step"));
  f.push_back(F(s + "gradient_sync/comm_sms", T::Integer, "gradient_sync")
                  .range(0, 1023)
                  .def_doc("16 with a model and a GPU profile that gives `sm_count`, else 0 (an assumption: NCCL runs "
                           "one thread block per channel, and its logs show 16 collective channels on an 8-GPU H800 "
                           "node, NVIDIA/nccl issue 892, and up to 32 elsewhere)")
                  .allowed("model training, with a GPU profile that gives `sm_count`")
                  .doc("most SMs a collective of the communication stream (overlapped gradient reductions, parameter "
                       "all-gathers) holds from its launch to its end, one per NCCL channel: all of them inside one "
                       "node, across nodes 2 per ring it runs over its own NIC (NCCL duplicates the rings it finds, "
                       "ncclTopoPostset: 2 for a group with one member per node). The GPU's executions beside it run "
                       "at (sm_count - held) / sm_count of its rate (SimGrid host power states); 0: no contention"));
  f.push_back(F(s + "gradient_sync/one_bucket_after_first_stage", T::Boolean, "gradient_sync")
                  .def_doc("`true` with the `megatron-core-2024` stack, else `false`")
                  .allowed("model training only; takes effect with `pipeline` > 1")
                  .doc("pipeline stages after the first reduce their gradients (and gather their parameters) in one "
                       "bucket per model chunk, as Megatron-Core does: its DistributedDataParallel sets "
                       "`bucket_size = None` on every pipeline rank but the first, whose data-parallel traffic is off "
                       "the critical path (megatron/core/distributed/distributed_data_parallel.py at f2e5db4, "
                       "2024-07)"));
  // model_parallel
  for (const char* axis : {"data", "tensor", "pipeline"}) {
    const std::string name = axis;
    F spec = F(s + name, T::Integer, "model_parallel").kinds(mp).range(1, kMaxGpus);
    if (name == "data")
      spec.def_doc("the GPU count / (tensor x pipeline x context)");
    else
      spec.def(1);
    f.push_back(spec.allowed(name == "tensor"     ? "divides `heads`, `kv_heads` and `ffn_size`"
                             : name == "pipeline" ? "pipeline x virtual_stages at most the layers"
                                                  : "")
                    .label(name == "data"     ? "Data-parallel degree"
                           : name == "tensor" ? "Tensor-parallel degree"
                                              : "Pipeline stages")
                    .doc(name == "data" ? "data-parallel replicas D"
                         : name == "tensor"
                             ? "tensor-parallel degree T: each layer's attention heads and MLP columns, and "
                               "the vocabulary of the embedding and LM head, split T ways"
                             : "pipeline stages P"));
  }
  f.push_back(F(s + "placement", T::Forms, "model_parallel")
                  .kinds(mp)
                  .choices({"tensor_first"})
                  .def("tensor_first")
                  .type_doc("string or array")
                  .allowed("or the three axes `\"tensor\"`, `\"data\"`, `\"pipeline\"` each once, fastest-varying "
                           "first")
                  .label("Placement")
                  .doc("rank (= GPU) of position (d, t, p); `\"tensor_first\"` = `[\"tensor\", \"data\", "
                       "\"pipeline\"]`: r = t + T·(d + D·p), tensor groups on consecutive GPUs (inside a node when T "
                       "divides `gpus_per_node`)"));
  f.push_back(F(s + "placement/*", T::Choice, "")
                  .kinds(mp)
                  .choices(enum_names<ParallelAxis>())
                  .doc("an axis of the placement"));
  f.push_back(F(s + "schedule", T::Choice, "model_parallel")
                  .kinds(mp)
                  .choices(enum_names<PipelineSchedule>())
                  .def("1f1b")
                  .label("Schedule")
                  .doc("pipeline schedule: all forwards then all backwards; one forward one backward after a warm-up; "
                       "interleaved 1F1B over virtual stages (Megatron-LM)"));
  f.push_back(F(s + "virtual_stages", T::Integer, "model_parallel")
                  .kinds(mp)
                  .range(1, 1024)
                  .def_doc("`2` with `\"interleaved\"`, else `1`")
                  .allowed("at least 2 with `\"interleaved\"`, 1 otherwise")
                  .label("Virtual stages")
                  .doc("chunks of layers per GPU (virtual stage = chunk x P + stage)"));
  f.push_back(F(s + "microbatch_group", T::Integer, "model_parallel")
                  .kinds(mp)
                  .range(1, 1 << 20)
                  .def_doc("the pipeline degree P")
                  .allowed("with `\"interleaved\"` only; P to the micro-batches per replica, leaving a last group of "
                           "0 or at least P")
                  .label("Micro-batch group")
                  .doc("interleaved schedule: micro-batches run through one chunk in a row before the next chunk "
                       "(Megatron-Core's --microbatch-group-size-per-virtual-pipeline-stage, the Llama 3 paper's "
                       "flexible N): with more than P the micro-batches per replica need not divide by P, at the "
                       "cost of (N - P) x (virtual_stages - 1) more chunk passes in flight on every stage "
                       "(warm-up (P - stage - 1) x 2 + (virtual_stages - 1) x N)"));
  f.push_back(
      F(s + "stage_layers", T::Array, "model_parallel")
          .kinds(mp)
          .type_doc("array of integers")
          .def_doc("an even split")
          .allowed("P x `virtual_stages` entries, each 1 to the layers (with `virtual_stages` >= 2 the first and "
                   "the last may be 0), summing to the layers")
          .label("Layers per stage")
          .doc("layers per virtual stage, in pipeline order; the embedding runs on the first, the output "
               "projection and the loss on the last, so a 0 there leaves a stage with only the embedding or "
               "only the loss (Llama 3's balanced pipeline: one layer fewer on the first and the last GPU)"));
  f.push_back(F(s + "stage_layers/*", T::Integer, "")
                  .kinds(mp)
                  .range(0, kInt64Max)
                  .doc("layers of a virtual stage (0 only for the first and the last, interleaved)"));
  f.push_back(F(s + "sequence_parallel", T::Boolean, "model_parallel")
                  .kinds(mp)
                  .def(false)
                  .allowed("`true` only with `tensor` >= 2")
                  .label("Sequence parallel")
                  .doc("a reduce-scatter and an all-gather instead of each tensor all-reduce; norms, residual adds, "
                       "dropout and their activations split T ways along the sequence"));
  f.push_back(F(s + "tp_comm_overlap", T::Boolean, "model_parallel")
                  .kinds(mp)
                  .def(false)
                  .allowed("`true` only with `sequence_parallel`, a dense model and a GPU profile with `sm_count`")
                  .label("TP comm overlap")
                  .doc("Megatron-Core's `--tp-comm-overlap`: each layer's tensor-parallel all-gathers and "
                       "reduce-scatters run beside its GEMMs as Transformer Engine's userbuffers run them (defaults of "
                       "TE's initialize_ub): the all-gathers before the QKV and first MLP GEMMs and before the "
                       "backward's output-projection and second MLP input-gradient GEMMs by ring exchange (one step "
                       "per tensor rank, on the copy engines: T GEMMs on 1/T of the rows each, only the last one "
                       "after the transfers), the reduce-scatters after the output projection and the second MLP GEMM "
                       "pipelined in 4 chunks (4 GEMMs on a quarter of the rows each; the first chunk's GEMM and the "
                       "last chunk's reduce-scatter exposed), every chunk GEMM priced at its own shape, and the "
                       "backward's input re-gather and "
                       "input-gradient reduce-scatter of the QKV and first MLP GEMMs in bulk beside their input- and "
                       "weight-gradient GEMMs. Pipelined and bulk transfers hold 16 SMs, so their GEMMs run on the "
                       "others (x sm_count / (sm_count - 16)). With `context` > 1 the attention core runs between the "
                       "QKV and output-projection GEMMs around its exchange of keys and values, as without the "
                       "overlap"));
  f.push_back(F(s + "tp_async_backward", T::Boolean, "model_parallel")
                  .kinds(mp)
                  .def_doc("`true` with `tensor` >= 2, no multi-head latent attention and no `tp_comm_overlap` "
                           "under the `megatron-core-2024` stack, and under `megatron-lm-2021` with "
                           "`sequence_parallel`; else `false`")
                  .allowed("`true` only with `tensor` >= 2, no multi-head latent attention and no `tp_comm_overlap`")
                  .label("TP async backward")
                  .doc("Megatron's asynchronous tensor-parallel backward of the column-parallel GEMMs (QKV, the first "
                       "MLP GEMM), as its LinearWithGradAccumulationAndAsyncCommunication runs it (Megatron-LM "
                       "megatron/mpu/layers.py at 80389ef, 2022; Megatron-Core and Transformer Engine's linear "
                       "modules likewise): with sequence parallelism the input, kept split, re-gathered beside the "
                       "input-gradient GEMM and the input gradient reduce-scattered beside the weight-gradient GEMM; "
                       "without it the input gradient all-reduced beside the weight-gradient GEMM (in a mixture of "
                       "experts' layers the attention block's). Each collective "
                       "is launched just before its GEMM on its own stream and its NCCL kernel holds SMs until it ends "
                       "(as `gradient_sync/comm_sms` says), the GEMM running on the others meanwhile and on all of "
                       "them after. `false`: the input gradient's collective blocks after the block's backward, and no "
                       "re-gather is priced"));
  f.push_back(
      F(s + "zero", T::Forms, "model_parallel")
          .kinds(mp)
          .def(0)
          .type_doc("integer or string")
          .allowed("`0`, `1`, `2`, `3`, `\"fsdp\"` (= 3); 3 only with `pipeline` 1")
          .label("ZeRO stage")
          .doc("ZeRO stage: 1 shards the optimizer states over the replicas, 2 also the gradients (reduce-"
               "scattered after every micro-batch's backward; FSDP without resharding after the forward), 3 "
               "also the parameters (FSDP: gathered for every micro-batch's forward and backward, the gradients "
               "reduce-scattered after every micro-batch's backward as with 2, since FSDP keeps only the shard)"));
  f.push_back(
      F(s + "expert", T::Integer, "model_parallel")
          .kinds(mp)
          .range(1, kMaxGpus)
          .def(1)
          .allowed("divides `data` x `context` and the model's experts; above 1 only for a mixture-of-experts model")
          .label("Expert-parallel degree")
          .doc("expert-parallel degree EP: `expert` consecutive data-parallel ranks (data x context) share each "
               "layer's routed experts (experts / EP each, whole unless `expert_tensor` splits them) and exchange "
               "their tokens by two all-to-alls per layer and pass; the experts' gradients are synchronised over "
               "the data x context / EP ranks that hold the same ones (Megatron-Core's expert-data-parallel group)"));
  f.push_back(F(s + "expert_tensor", T::Integer, "model_parallel")
                  .kinds(mp)
                  .range(1, kMaxGpus)
                  .def(1)
                  .allowed("1, or `tensor` for a mixture-of-experts model (whose experts' `ffn_size` it divides)")
                  .label("Expert tensor-parallel degree")
                  .doc("expert tensor parallelism: 1 keeps every routed expert whole on its rank (Megatron-Core's "
                       "`--expert-tensor-parallel-size 1`); `tensor` splits each expert's FFN over the tensor group "
                       "(its first GEMMs column-parallel, its last row-parallel: Megatron-Core's default before that "
                       "option, and the option at the tensor degree), whose ranks all-gather the copies routed to any "
                       "of them after the dispatch all-to-all and reduce-scatter the experts' outputs before the "
                       "combine: 1/tensor of the experts' weights per rank for two collectives per layer and pass on "
                       "the tensor group ([model-parallelism.md](model-parallelism.md#mixture-of-experts))"));
  f.push_back(F(s + "expert_dispatch", T::Choice, "model_parallel")
                  .kinds(mp)
                  .choices(enum_names<ExpertDispatch>())
                  .def("direct")
                  .allowed("takes effect with `expert` > 1; `two_hop` needs expert groups spread evenly over 2 nodes "
                           "or more")
                  .label("Expert dispatch")
                  .doc("how the expert group's all-to-alls move the token copies: `direct` sends every copy to its "
                       "expert's rank (NCCL's all-to-all, as Megatron-Core's all-to-all dispatcher); `two_hop` sends "
                       "a token once over the network to each node holding one of its experts, to the GPU of the "
                       "sender's rail, which forwards it over NVLink to its experts' GPUs, and combines the results "
                       "the same way back (DeepEP's internode kernels): with node-limited routing (the model's "
                       "`experts/groups` and `groups_per_token`) the network carries fewer copies "
                       "([model-parallelism.md](model-parallelism.md#mixture-of-experts))"));
  f.push_back(F(s + "context", T::Integer, "model_parallel")
                  .kinds(mp)
                  .range(1, kMaxGpus)
                  .def(1)
                  .allowed("2 x `context` divides the sequence length; 1 for a mixture of experts")
                  .label("Context-parallel degree")
                  .doc("context-parallel degree C: each sequence split over C ranks in 2C chunks, rank i holding "
                       "chunks i and 2C-1-i (causal attention work even across the ranks); every op runs on the "
                       "rank's s/C tokens, the attention on its queries against all keys, exchanged as "
                       "`context_comm` says; activations fall as 1/C; the C ranks hold the same weights and "
                       "synchronise gradients with the replicas (a data group of data x C ranks, ZeRO shards over "
                       "it). GPUs = data x tensor x pipeline x context; placed right after the tensor axis"));
  f.push_back(F(s + "context_comm", T::Choice, "model_parallel")
                  .kinds(mp)
                  .choices(enum_names<ContextComm>())
                  .def("p2p")
                  .allowed("takes effect with `context` > 1")
                  .label("Context exchange")
                  .doc("how a context-parallel group exchanges keys and values: `p2p` passes the blocks around the "
                       "ring, C-1 steps each overlapped with the attention of the block held, and C-1 steps of keys, "
                       "values and their gradients backward plus one hop returning the gradients (Megatron-Core / "
                       "Transformer Engine's default `cp_comm_type`); `all_gather` gathers all keys and values "
                       "before the attention and again before its backward, then reduce-scatters their gradients, "
                       "exposed (Llama 3, The Llama 3 Herd of Models, section 3.3.2); `all_to_all` (DeepSpeed-Ulysses, "
                       "Transformer Engine's `a2a`) trades the sequence split for a head split around the attention: "
                       "an all-to-all of the queries, keys and values before it, the core on the whole sequence for "
                       "1/C of the heads, an all-to-all of its output after it (backward the same two, of the "
                       "gradients), exposed; C must divide the tensor rank's query and key/value heads"));
  f.push_back(F(s + "tensor_collectives", T::Object, "model_parallel")
                  .kinds(mp)
                  .def_doc("all defaults")
                  .allowed("keys `algorithm`, `fidelity`, `granularity`")
                  .label("Tensor collectives")
                  .doc("the collectives on the tensor group"));
  collective_choice_fields(f, s + "tensor_collectives/", "model_parallel", mp);
  f.push_back(F(s + "tensor_collectives/granularity", T::Choice, "model_parallel")
                  .kinds(mp)
                  .choices({"layer", "pass"})
                  .def("layer")
                  .doc("one collective per tensor all-reduce (2 per layer and pass, plus the embedding's and head's); "
                       "`\"pass\"`: those of a pass over a stage fused into one per kind with the same bytes (latency "
                       "counted once, for very large runs)"));
  f.push_back(F(s + "gradient_sync", T::Forms, "model_parallel")
                  .kinds(mp)
                  .choices({"none", "ring_allreduce", "all_reduce"})
                  .type_doc("string or object")
                  .def_doc("`\"all_reduce\"`")
                  .allowed("as [above](#strategygradient_sync); with `zero` >= 1 `algorithm` only `\"auto\"` or "
                           "`\"ring\"`")
                  .label("Gradient sync")
                  .doc("the data-parallel gradient synchronisation per stage (`\"none\"`: replicas do not "
                       "synchronise, a what-if; the tied-embedding all-reduce between the first and last stage runs "
                       "regardless)"));
  // collective
  collective_choice_fields(f, s, "collective_strategy", {"collective"});
}

void dispatch_fields(std::vector<F>& f) {
  const std::string b = "/strategy/balancing/";
  const std::vector<std::string> dp{"data_parallel"};
  f.push_back(F(b + "policy", T::Choice, "balancing")
                  .kinds(dp)
                  .choices(enum_names<BalancingPolicy>())
                  .label("Policy")
                  .doc("how chunks are sized and ordered"));
  f.push_back(F(b + "chunk_samples", T::Integer, "balancing")
                  .kinds(dp)
                  .range(1, 1'000'000'000'000'000)
                  .def(1)
                  .unit("samples")
                  .label("Chunk samples")
                  .doc("`work_queue`: samples per chunk; `measured_rate`: the probe chunk and the smallest chunk (of "
                       "the fastest GPU); `work_stealing`: samples per execution from a GPU's own queue; `static`: "
                       "unused"));
  f.push_back(F(b + "dispatch_overhead", T::Quantity, "balancing")
                  .kinds(dp)
                  .dim(Dimension::Time)
                  .closed(0.0, 1e6)
                  .def(0)
                  .label("Dispatch overhead")
                  .doc("coordinator time per assignment that carries samples (serial); `work_stealing`: also the "
                       "thief's wait per steal"));
  f.push_back(F(b + "sample_bytes", T::Quantity, "balancing")
                  .kinds(dp)
                  .dim(Dimension::Bytes)
                  .closed(0.0, 1e15)
                  .def(0)
                  .label("Bytes per sample")
                  .doc("bytes per sample moved to the GPU (from the coordinator, or from the victim's GPU when "
                       "stealing); a chunk is round(samples x sample_bytes) bytes"));
  f.push_back(F(b + "request_bytes", T::Quantity, "balancing")
                  .kinds(dp)
                  .dim(Dimension::Bytes)
                  .closed(0.0, 1e12)
                  .def(64)
                  .label("Request bytes")
                  .doc("bytes of a request, of a stop message and of a steal request"));
  const std::string c = "/strategy/coordination/";
  const struct {
    const char* key;
    Dimension dimension;
    double max;
    const char* label;
    const char* doc;
  } coordination[] = {
      {"per_partition", Dimension::Time, 1e6, "Per partition",
       "coordinator time per partition per iteration (scheduling, set-up), spent serially before each GPU's start "
       "message"},
      {"data_bytes", Dimension::Bytes, 1e18, "Input bytes",
       "input per iteration, sent from the coordinator: partition p carries round(`data_bytes` x its samples / "
       "`/workload/samples`) bytes (its samples include any oversampling replicas); a GPU's start message carries its "
       "partitions' parts"},
      {"result_bytes", Dimension::Bytes, 1e15, "Result bytes",
       "bytes each partition returns to the coordinator per iteration; a GPU's result message carries its "
       "partitions'"},
      {"boundary_bytes", Dimension::Bytes, 1e15, "Halo bytes",
       "halo bytes sent each way per iteration between partitions p and p+1 when they are on different GPUs (no "
       "wrap-around from the last partition to the first); a GPU pair exchanges the sum over its neighbouring "
       "partition pairs"},
  };
  for (const auto& e : coordination)
    f.push_back(F(c + e.key, T::Quantity, "coordination")
                    .kinds(dp)
                    .dim(e.dimension)
                    .closed(0.0, e.max)
                    .def(0)
                    .label(e.label)
                    .doc(e.doc));
  const std::string k = "/strategy/class_split/";
  f.push_back(F(k + "method", T::Choice, "class_split")
                  .kinds(dp)
                  .choices(enum_names<SplitMethod>())
                  .label("Method")
                  .doc("`random`: equal chunks of a shuffle seeded by `/run/seed`; `stratified`: every class dealt "
                       "evenly over the partitions; `stratified_oversample`: stratified, then minority samples "
                       "replicated where a partition has fewer than `oversample_target`"));
  f.push_back(F(k + "starved_threshold", T::Integer, "class_split")
                  .kinds(dp)
                  .range(0, 1'000'000'000'000'000'000)
                  .def(1)
                  .unit("samples")
                  .label("Starved below")
                  .doc("a partition with fewer minority samples than this (after oversampling) is starved; 0: never"));
  f.push_back(F(k + "oversample_target", T::Integer, "class_split")
                  .kinds(dp)
                  .range(0, 1'000'000'000'000'000'000)
                  .def(0)
                  .unit("samples")
                  .label("Oversample to")
                  .doc("`stratified_oversample`: minority samples every partition is brought up to; 0: "
                       "`starved_threshold`. Other methods: unused"));
  f.push_back(F(k + "minority_class", T::String, "class_split")
                  .kinds(dp)
                  .def("")
                  .def_doc("`\"\"`: the class with the fewest samples (ties: the first by name)")
                  .allowed("a class name in the labels (`\"0\"` or `\"1\"` for generated labels)")
                  .label("Minority class")
                  .doc("the class whose scarcity matters"));
  f.push_back(F(k + "scan_per_sample", T::Quantity, "class_split")
                  .kinds(dp)
                  .dim(Dimension::Time)
                  .closed(0.0, 1.0)
                  .def(0)
                  .label("Scan per sample")
                  .doc("coordinator time per sample for the pass over the labels of `stratified` and "
                       "`stratified_oversample` (`random` needs none)"));
  f.push_back(F(k + "replicate_per_sample", T::Quantity, "class_split")
                  .kinds(dp)
                  .dim(Dimension::Time)
                  .closed(0.0, 1.0)
                  .def(0)
                  .label("Replicate per sample")
                  .doc("coordinator time per replicated sample"));
}

void run_fields(std::vector<F>& f) {
  const std::string r = "/run/";
  f.push_back(F(r + "seed", T::Integer, "run")
                  .range(0, kInt64Max)
                  .def(1)
                  .label("Seed")
                  .doc("the run's random seed: the shuffle of a `random` class-aware split (generated labels have "
                       "their own seed); recorded in the report"));
  f.push_back(F(r + "network_model", T::Choice, "run")
                  .choices(enum_names<NetworkModel>())
                  .def("CM02")
                  .label("Network model")
                  .doc("SimGrid's network model; see [engine.md](engine.md)"));
  f.push_back(F(r + "outputs", T::Array, "run")
                  .type_doc("array of strings")
                  .def_doc("all five")
                  .allowed("`table`, `report_json`, `ranks_csv`, `trace` (with a `/reliability` section: "
                           "reliability_trace.json too), `reliability_trace` (reliability_trace.json alone)")
                  .label("Outputs")
                  .doc("what `partsim run` writes"));
  f.push_back(F(r + "outputs/*", T::Choice, "")
                  .choices({"table", "report_json", "ranks_csv", "trace", "reliability_trace"})
                  .doc("an output"));
  f.push_back(F(r + "max_events", T::Integer, "run")
                  .range(1, kInt64Max)
                  .def(200'000'000)
                  .label("Max events")
                  .doc("refuse a run that would simulate more messages and executions than this (about 3 us of wall "
                       "time each)"));
  f.push_back(F(r + "fold_replicas", T::Boolean, "run")
                  .def(true)
                  .label("Fold replicas")
                  .doc("simulate one representative of each class of interchangeable replicas (ranks that meet other "
                       "replicas only in analytic collectives, run the same program on GPUs of the same speed and "
                       "share no link) and give its figures to the others; the report is the full run's "
                       "([engine.md](engine.md#folding-replicas)); `/engine/folding` says what was folded or why "
                       "not. `false`: simulate every rank"));
  f.push_back(F(r + "lean_engine", T::Boolean, "run")
                  .def(true)
                  .label("Lean engine")
                  .doc("the engine's lean paths ([engine.md](engine.md#lean-engine)): flows and analytic collectives "
                       "run by a few driver actors per group and kernel timers while their members only wait, "
                       "overlapped streams of such collectives without an actor of their own, and an execution alone "
                       "on a GPU of constant speed as a sleep of amount / speed; the same figures (sums to the last "
                       "bits), several times faster at thousands of ranks. `false`: every member runs its part of "
                       "every collective in its own actor and every execution is a SimGrid execution (for "
                       "checking)"));
}

void energy_cost_fields(std::vector<F>& f) {
  const std::string e = "/energy/";
  f.push_back(F(e + "compute_power_fraction", T::Number, "energy")
                  .closed(0.0, 1.0)
                  .def(1.0)
                  .label("Compute power (x TDP)")
                  .doc("a GPU's power while it computes, as a fraction of its profile's TDP. Default 1: an "
                       "assumption, the board at its power limit (dense training GEMMs run GPUs at or near it)"));
  f.push_back(F(e + "communication_power_fraction", T::Number, "energy")
                  .closed(0.0, 1.0)
                  .def(0.5)
                  .label("Communication power (x TDP)")
                  .doc("a GPU's power while its exposed transfers move (NCCL kernels on a few SMs, HBM and "
                       "NVLink/NIC traffic), as a fraction of its TDP. Default 0.5: an assumption, not a "
                       "measurement; waits and idle time draw the profile's idle power"));
  f.push_back(F(e + "node_power", T::Quantity, "energy")
                  .dim(Dimension::Power)
                  .closed(0.0, 1e6)
                  .def_doc("575 W x `gpus_per_node` (example)")
                  .label("Node power")
                  .doc("each node's power beyond its GPUs (CPUs, memory, NICs, NVSwitches, fans, power supplies), "
                       "constant over the run. The default is an example and a maximum: NVIDIA DGX H100's maximum "
                       "system power, 10.2 kW (datasheet, 2023), less its eight 700 W GPUs, per GPU"));
  f.push_back(F(e + "switches", T::Integer, "energy")
                  .range(0, 1'000'000)
                  .def_doc("the simulated topology's: 0 in one node, 1 for a star, leaves (+ pods) + 1 for a "
                           "fat-tree, rails + 1 for a rail network")
                  .label("Switches")
                  .doc("network switches between nodes; the simulated topology counts a non-blocking spine or core "
                       "as one switch, so give the real count when it has more"));
  f.push_back(F(e + "switch_power", T::Quantity, "energy")
                  .dim(Dimension::Power)
                  .closed(0.0, 1e5)
                  .def(750)
                  .label("Switch power")
                  .doc("each switch's power, constant over the run. Default 750 W: an example of the order of a "
                       "64-port 400 Gb/s InfiniBand switch with passive cables (NVIDIA Quantum-2 QM9700 class); "
                       "give your switch's figure"));
  f.push_back(F(e + "pue", T::Number, "energy")
                  .closed(1.0, 5.0)
                  .def(1.2)
                  .label("PUE")
                  .doc("the data centre's power usage effectiveness: facility power / IT power. Default 1.2: an "
                       "example between Google's reported fleet-wide 1.10 (2023 environmental report) and the "
                       "Uptime Institute survey's industry average of 1.58 (2023)"));
  const std::string c = "/cost/";
  f.push_back(F(c + "model", T::Choice, "cost")
                  .choices(enum_names<PricingModel>())
                  .def("cloud")
                  .label("Pricing")
                  .doc("`cloud`: GPU-hours at `gpu_hour_price` (energy included in the price); `owned`: the "
                       "purchase amortised over `lifetime_years` plus facility energy at `electricity_price`"));
  f.push_back(F(c + "currency", T::String, "cost")
                  .def("USD")
                  .allowed("non-empty")
                  .label("Currency")
                  .doc("the currency of the prices and of the report's costs"));
  f.push_back(F(c + "gpu_hour_price", T::Number, "cost")
                  .closed(0.0, 1e6)
                  .def(2.5)
                  .unit("currency/GPU-hour")
                  .label("GPU-hour price")
                  .doc("cloud: the price of one GPU for one hour, its share of the node and network included. "
                       "Default 2.5: an example of the order of 2024 on-demand H100 list prices of GPU clouds "
                       "(about 2 to 3 USD per GPU-hour), not a quote; give your price"));
  f.push_back(F(c + "gpu_purchase_price", T::Number, "cost")
                  .closed(0.0, 1e9)
                  .def(30000)
                  .unit("currency/GPU")
                  .label("Purchase price per GPU")
                  .doc("owned: what one GPU costs to buy with its share of the server, network and installation. "
                       "Default 30,000: an example of the order of H100 prices reported in 2023-2024 (25,000 to "
                       "40,000 USD for the GPU alone); give your quote"));
  f.push_back(F(c + "lifetime_years", T::Number, "cost")
                  .positive(100.0)
                  .def(5)
                  .unit("years")
                  .label("Lifetime")
                  .doc("owned: straight-line amortisation, the hardware in use around the clock. Default 5: an "
                       "assumption, within the 4 to 6 years over which cloud providers depreciate servers"));
  f.push_back(F(c + "electricity_price", T::Number, "cost")
                  .closed(0.0, 100.0)
                  .def(0.08)
                  .unit("currency/kWh")
                  .label("Electricity price")
                  .doc("owned: per kWh drawn by the facility (PUE included). Default 0.08: an example, the US "
                       "average industrial price in 2023 (EIA, Electric Power Monthly: about 8 cents per kWh)"));
  f.push_back(F("/budget/tokens", T::Number, "budget")
                  .closed(0.0, 1e18)
                  .def(300e9)
                  .unit("tokens")
                  .label("Token budget")
                  .doc("tokens to train on, for the report's time, energy and cost to train (model training). "
                       "Default 300 billion: an example, GPT-3's training budget (Brown et al., 2020)"));
}

void reliability_fields(std::vector<F>& f) {
  const std::string r = "/reliability/";
  f.push_back(F(r + "iterations", T::Integer, "reliability")
                  .range(1, 1'000'000'000'000)
                  .def_doc("the token budget's: /budget/tokens / tokens per iteration, rounded up")
                  .label("Iterations to train")
                  .doc("the length of the training run replayed over failures and checkpoints"));
  f.push_back(F(r + "failures", T::Object, "reliability").def_doc("all defaults: nothing fails").doc("see below"));
  f.push_back(F(r + "recovery", T::Object, "reliability").def_doc("all defaults").doc("see below"));
  f.push_back(F(r + "checkpoint", T::Object, "reliability").def_doc("all defaults").doc("see below"));
  f.push_back(F(r + "inject", T::Object, "reliability")
                  .def_doc("none")
                  .doc("one failure injected into the simulated iteration itself (see below): which GPUs SimGrid "
                       "turns off and when, what each rank was doing and who notices; docs/failures.md"));
  const std::string in = r + "inject/";
  // What fails: exactly one of these indices.
  const auto what_fails = [&](const char* key, const char* label, const char* doc) {
    f.push_back(F(in + key, T::Integer, "inject")
                    .range(0, 1'000'000'000)
                    .def_doc("none: give gpu, node, nic or switch")
                    .label(label)
                    .doc(doc));
  };
  what_fails("gpu", "Failing GPU", "the GPU that fails (its index in the cluster, below the GPU count)");
  what_fails("node", "Failing node", "the node whose GPUs all fail at once (its index, below the node count)");
  what_fails("nic", "Failing NIC",
             "the NIC that fails (node x nics_per_node + its index in the node): its links are turned off, every GPU "
             "keeps running");
  what_fails(
      "switch", "Failing switch",
      "the switch that fails, every GPU running, at `level`: first, star 0 (the one switch: every NIC's link), "
      "fat_tree a leaf (the links of its nodes' NICs and its uplink), rail the switch of rail k (NIC k of every node "
      "and the rail's uplink to the spine); pod, a 3-level fat tree's pod (its leaves' uplinks and its own); top, 0 "
      "(a fat tree's core or a rail network's spine: every uplink into it)");
  f.push_back(F(in + "level", T::Choice, "inject")
                  .choices(enum_names<SwitchLevel>())
                  .def("first")
                  .allowed("with `switch` only; `pod` on a 3-level fat tree, `top` on a fat tree or rail network")
                  .label("Failing switch's level")
                  .doc("the level of the failing `switch`: `first`, the switches the NICs hang from; `pod`, a pod's "
                       "aggregation (nodes under one leaf still reach each other); `top`, the core or spine (traffic "
                       "that stays under one leaf, pod or rail still flows)"));
  f.push_back(
      F(in + "at", T::Quantity, "inject")
          .dim(Dimension::Time)
          .positive(1e7)
          .label("Failure time in the iteration")
          .doc("seconds into the simulated iteration(s) at which SimGrid turns what fails off (hosts or links)"));
  const std::string fl = r + "failures/";
  f.push_back(F(fl + "distribution", T::Choice, "failures")
                  .choices(enum_names<FailureDistribution>())
                  .def("exponential")
                  .label("Time-to-failure law")
                  .doc("each unit's time to failure: `exponential` (a constant rate) or `weibull` with "
                       "`weibull_shape`, scaled so that its mean is the MTBF; every unit starts new and a failed one "
                       "is replaced by a new one"));
  f.push_back(F(fl + "weibull_shape", T::Number, "failures")
                  .closed(0.1, 10.0)
                  .def(1.0)
                  .label("Weibull shape")
                  .doc("k: below 1, failures come early in a unit's life (infant mortality); 1, exponential; above "
                       "1, wear-out"));
  const std::pair<const char*, const char*> units[] = {
      {"gpu", "one GPU (its HBM included)"},
      {"nic", "one NIC (nodes x nics_per_node; none in one node)"},
      {"switch", "one network switch (the topology's count, as /energy/switches)"},
      {"host", "one node beyond its GPUs and NICs (CPU, memory, power, software)"}};
  for (const auto& [unit, what] : units)
    f.push_back(F(fl + unit + "_mtbf_hours", T::Number, "failures")
                    .closed(0.0, 1e12)
                    .def(0)
                    .unit("hours")
                    .label(std::string(unit) + " MTBF (hours)")
                    .doc(std::string("mean time between failures of ") + what + "; 0: it does not fail"));
  f.push_back(F(fl + "times", T::Array, "failures")
                  .type_doc("array of quantities (s)")
                  .def(nlohmann::json::array())
                  .allowed("0 to 10^6 times, 0 to 10^9 s, increasing")
                  .label("Failure times")
                  .doc("failures at these wall-clock times from the start (component `listed`), on top of the "
                       "rates"));
  f.push_back(F(fl + "times/*", T::Quantity, "").dim(Dimension::Time).closed(0.0, 1e9).doc("a failure time"));
  const std::string rc = r + "recovery/";
  f.push_back(F(rc + "policy", T::Choice, "recovery")
                  .choices(enum_names<RecoveryPolicy>())
                  .def("restart")
                  .label("Recovery policy")
                  .doc("all roll back to the last durable checkpoint: `restart` waits for the failed part's repair "
                       "(`repair_time`), `spare` swaps in a hot spare after `spare_delay`, `elastic` goes on with the "
                       "data-parallel replicas left (the same global batch on fewer replicas: slower by replicas / "
                       "replicas left) and the failed ones rejoin after `repair_time`, with a pause of "
                       "`restart_time`"));
  f.push_back(F(rc + "detection_time", T::Quantity, "recovery")
                  .dim(Dimension::Time)
                  .closed(0.0, 1e7)
                  .def(120)
                  .label("Detection time")
                  .doc("from the failure to the job knowing it (a collective's time-out, a health check). Default "
                       "120 s: an assumption"));
  f.push_back(F(rc + "restart_time", T::Quantity, "recovery")
                  .dim(Dimension::Time)
                  .closed(0.0, 1e7)
                  .def(600)
                  .label("Restart time")
                  .doc("relaunching the job: scheduling, process start, communicator set-up, before the checkpoint "
                       "is read. Default 600 s: an assumption"));
  f.push_back(F(rc + "repair_time", T::Quantity, "recovery")
                  .dim(Dimension::Time)
                  .closed(0.0, 1e8)
                  .def(3600)
                  .label("Repair time")
                  .doc("`restart`: the failed part repaired or its node replaced before the relaunch. Default "
                       "3600 s: an assumption"));
  f.push_back(F(rc + "spare_delay", T::Quantity, "recovery")
                  .dim(Dimension::Time)
                  .closed(0.0, 1e8)
                  .def(300)
                  .label("Spare delay")
                  .doc("`spare`: a hot spare takes the failed part's place. Default 300 s: an assumption"));
  f.push_back(F(rc + "min_replicas", T::Integer, "recovery")
                  .range(1, kMaxGpus)
                  .def(1)
                  .label("Minimum replicas")
                  .doc("`elastic`: with fewer data-parallel replicas left the job waits for repairs"));
  const std::string c = r + "checkpoint/";
  f.push_back(F(c + "interval", T::Quantity, "checkpoint")
                  .dim(Dimension::Time)
                  .positive(1e9)
                  .def_doc("`\"auto\"`")
                  .allowed("a time or `\"auto\"`")
                  .label("Checkpoint interval")
                  .doc("training time between checkpoints, rounded to whole iterations; `auto`: Young/Daly's "
                       "sqrt(2 x checkpoint block x job MTBF)"));
  f.push_back(F(c + "interval_iterations", T::Integer, "checkpoint")
                  .range(1, 1'000'000'000'000)
                  .def_doc("none")
                  .allowed("not with `interval`")
                  .label("Checkpoint every (iterations)")
                  .doc("iterations between checkpoints, instead of `interval`"));
  f.push_back(F(c + "size", T::Quantity, "checkpoint")
                  .dim(Dimension::Bytes)
                  .positive(1e18)
                  .def_doc("the memory model's parameters and optimizer states, summed over the writers")
                  .label("Checkpoint size")
                  .doc("bytes written per checkpoint, all writers together"));
  f.push_back(F(c + "mode", T::Choice, "checkpoint")
                  .choices(enum_names<CheckpointMode>())
                  .def("sync")
                  .label("Checkpoint mode")
                  .doc("`sync`: training stops while the checkpoint is written; `async`: it stops while each writer "
                       "copies its part to host memory, the write goes on behind training (a checkpoint is "
                       "durable when written; the next one waits for it)"));
  f.push_back(F(c + "storage_bandwidth", T::Quantity, "checkpoint")
                  .dim(Dimension::Bandwidth)
                  .positive(1e18)
                  .def(100e9)
                  .label("Storage write bandwidth")
                  .doc("all writers together. Default 100 GB/s: an assumption; give your file system's figure and "
                       "its source in `storage_source`"));
  f.push_back(F(c + "storage_read_bandwidth", T::Quantity, "checkpoint")
                  .dim(Dimension::Bandwidth)
                  .positive(1e18)
                  .def_doc("`storage_bandwidth`")
                  .label("Storage read bandwidth")
                  .doc("all readers together, for the reload after a failure"));
  f.push_back(F(c + "storage_source", T::String, "checkpoint")
                  .def("")
                  .label("Storage figures' source")
                  .doc("where the storage bandwidths come from (shown in the report)"));
  f.push_back(F(c + "host_copy_bandwidth", T::Quantity, "checkpoint")
                  .dim(Dimension::Bandwidth)
                  .positive(1e15)
                  .def(25e9)
                  .label("Host copy bandwidth")
                  .doc("`async`: one GPU's copy to host memory. Default 25 GB/s: an assumption, under PCIe 5.0 x16's "
                       "64 GB/s"));
}

std::vector<FieldSpec> all_fields() {
  std::vector<F> f;
  f.push_back(F("/schema_version", T::Integer, "top")
                  .range(kScenarioSchemaVersion, kScenarioSchemaVersion)
                  .doc("the scenario format's version"));
  f.push_back(F("/name", T::String, "top")
                  .allowed("non-empty")
                  .label("Name")
                  .doc("names the output folder `partsim-out/NAME`"));
  f.push_back(F("/description", T::String, "top")
                  .def("")
                  .label("Description")
                  .doc("one line shown in the report and by `partsim list scenarios`"));
  f.push_back(F("/cluster", T::Object, "top").doc("see below"));
  f.push_back(F("/workload", T::Object, "top").doc("see below"));
  f.push_back(F("/strategy", T::Object, "top").doc("see below"));
  f.push_back(F("/run", T::Object, "top").def_doc("all defaults").doc("see below"));
  f.push_back(F("/energy", T::Object, "top")
                  .def_doc("all defaults")
                  .doc("power of the GPUs by state, nodes, switches and the data centre; see below"));
  f.push_back(F("/cost", T::Object, "top").def_doc("all defaults (example prices)").doc("prices; see below"));
  f.push_back(F("/budget", T::Object, "top").def_doc("all defaults").doc("what training is for; see below"));
  f.push_back(F("/reliability", T::Object, "top")
                  .def_doc("absent: no failures, no checkpoints")
                  .doc("failures, recovery and checkpoints of a long training run (model training); see below"));
  f.push_back(F("/published", T::Object, "top")
                  .def_doc("absent")
                  .doc("a published measurement the scenario reproduces (a case of `validation/`); see below"));
  f.push_back(F("/published/figure", T::String, "published")
                  .allowed("a JSON pointer into report.json")
                  .doc("the report figure compared with the published value (`/summary/makespan_s`, "
                       "`/collectives/0/busbw_bytes_per_s`)"));
  f.push_back(F("/published/value", T::Number, "published")
                  .positive(1e30)
                  .doc("the published value, in the report figure's unit"));
  f.push_back(F("/published/unit", T::String, "published").def("").doc("the unit, for the table"));
  f.push_back(
      F("/published/source", T::String, "published").doc("where it was published: authors, title, table or figure"));
  f.push_back(F("/published/url", T::String, "published").doc("a link to the publication"));
  f.push_back(F("/published/note", T::String, "published")
                  .def("")
                  .doc("how the set-up was read from the source, and what the source leaves open"));
  f.push_back(F("/published/group", T::String, "published")
                  .def("")
                  .doc("the family of measurements the case belongs to (a GPU generation and software stack, a "
                       "benchmark): `partsim validation` summarises the errors per group as well as overall; \"\" for "
                       "none"));
  f.push_back(F("/expect", T::Object, "top")
                  .opaque()
                  .def_doc("none")
                  .allowed("keys: JSON pointers into report.json")
                  .doc("bounds checked after `partsim run` (exit 5 when one fails): a figure's pointer to a value it "
                       "must equal (`\"/verdict\": \"simulated\"`), or to `{\"min\", \"max\", \"value\", "
                       "\"tolerance\"}` (relative to `value`) or `{\"equals\"}`: `{\"/summary/makespan_s\": "
                       "{\"max\": 40}, \"/summary/mfu\": {\"value\": 0.5, \"tolerance\": 0.05}}`"));
  cluster_fields(f);
  network_fields(f);
  workload_fields(f);
  serving_fields(f);
  strategy_fields(f);
  parameter_server_fields(f);
  dispatch_fields(f);
  run_fields(f);
  energy_cost_fields(f);
  reliability_fields(f);
  std::vector<FieldSpec> out;
  out.reserve(f.size());
  for (F& field : f) out.push_back(std::move(field).build());
  return out;
}

std::string cell(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

} // namespace

const Schema& scenario_schema() {
  static const Schema schema(all_fields());
  return schema;
}

const std::vector<SchemaSection>& scenario_schema_sections() {
  static const std::vector<SchemaSection> sections{
      {"top", ""},
      {"cluster", "/cluster"},
      {"network", "/cluster/network"},
      {"fat_tree", "/cluster/network/fat_tree"},
      {"rail", "/cluster/network/rail"},
      {"speed_changes", "/cluster/speed_changes/*"},
      {"stragglers", "/cluster/stragglers"},
      {"stragglers_fixed", "/cluster/stragglers/fixed/*"},
      {"stragglers_random", "/cluster/stragglers/random"},
      {"stragglers_slowdown", "/cluster/stragglers/random/slowdown"},
      {"data_job", "/workload"},
      {"model_training", "/workload"},
      {"collective", "/workload"},
      {"labels", "/workload/labels"},
      {"serving", "/workload"},
      {"serving_stage", "/workload/stages/*"},
      {"serving_llm", "/workload/stages/*/llm"},
      {"serving_arrivals", "/workload/arrivals"},
      {"serving_orchestration", "/workload/orchestration"},
      {"data_parallel", "/strategy"},
      {"gradient_sync", "/strategy/gradient_sync"},
      {"model_parallel", "/strategy"},
      {"collective_strategy", "/strategy"},
      {"balancing", "/strategy/balancing"},
      {"coordination", "/strategy/coordination"},
      {"class_split", "/strategy/class_split"},
      {"parameter_server", "/strategy"},
      {"ps_jitter", "/strategy/jitter"},
      {"ps_efficiency", "/strategy/statistical_efficiency"},
      {"run", "/run"},
      {"energy", "/energy"},
      {"cost", "/cost"},
      {"budget", "/budget"},
      {"reliability", "/reliability"},
      {"failures", "/reliability/failures"},
      {"recovery", "/reliability/recovery"},
      {"checkpoint", "/reliability/checkpoint"},
      {"inject", "/reliability/inject"},
      {"published", "/published"},
  };
  return sections;
}

std::string schema_section_table(const Schema& schema, const SchemaSection& section) {
  std::string out = "| key | type | unit | default | allowed | meaning |\n|---|---|---|---|---|---|\n";
  for (const FieldSpec& f : schema.fields()) {
    if (f.section != section.id) continue;
    PARTSIM_CHECK(f.pointer.starts_with(section.base + "/")) << f.pointer << " is outside section " << section.id;
    const std::string key = f.pointer.substr(section.base.size() + 1);
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", key, cell(describe_type(f)), cell(describe_unit(f)),
                       cell(describe_default(f)), cell(describe_allowed(f)), cell(f.doc));
  }
  return out;
}

std::string update_schema_tables(const std::string& text, const std::string& source) {
  const std::string open = "<!-- fields: ";
  const std::string close = "<!-- end fields -->";
  std::string out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    ++number;
    if (inside) {
      if (line == close) {
        inside = false;
        out += line + "\n";
      }
      continue;
    }
    out += line + "\n";
    if (!line.starts_with(open)) continue;
    const std::string id = line.substr(open.size(), line.size() - open.size() - (line.ends_with(" -->") ? 4 : 0));
    const auto& sections = scenario_schema_sections();
    const auto it = std::find_if(sections.begin(), sections.end(), [&](const SchemaSection& s) { return s.id == id; });
    if (it == sections.end())
      throw InputError(source, fmt::format("line {}", number), "unknown section \"" + id + "\"");
    out += schema_section_table(scenario_schema(), *it);
    inside = true;
  }
  if (inside) throw InputError(source, "end", "a generated table is not closed by " + close);
  return out;
}

} // namespace partsim
