// The scenario form's catalog, after docs/scenario-reference.md.
#include "form/field_catalog.hpp"

#include <QDir>
#include <QFile>

namespace partsim::gui {

QStringList units_of(Dimension dimension) {
  switch (dimension) {
  case Dimension::Time:
    return {QStringLiteral("s"), QStringLiteral("ms"), QStringLiteral("us"), QStringLiteral("ns")};
  case Dimension::Bytes:
    return {QStringLiteral("B"),  QStringLiteral("kB"),  QStringLiteral("MB"),  QStringLiteral("GB"),
            QStringLiteral("TB"), QStringLiteral("KiB"), QStringLiteral("MiB"), QStringLiteral("GiB")};
  case Dimension::Bandwidth:
    return {QStringLiteral("Bps"),  QStringLiteral("MBps"), QStringLiteral("GBps"),
            QStringLiteral("TBps"), QStringLiteral("Gbps"), QStringLiteral("GiBps")};
  case Dimension::Flop:
    return {QStringLiteral("FLOP"), QStringLiteral("MFLOP"), QStringLiteral("GFLOP"), QStringLiteral("TFLOP"),
            QStringLiteral("PFLOP")};
  case Dimension::None:
    break;
  }
  return {};
}

namespace {
QStringList profiles(const QString& folder, const QString& scope) {
  QStringList out;
  for (const QString& file : QDir(folder).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
    if (!scope.isEmpty()) {
      QFile f(QDir(folder).filePath(file));
      if (!f.open(QIODevice::ReadOnly)) continue;
      const QByteArray text = f.readAll();
      const nlohmann::json doc =
          nlohmann::json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
      if (!doc.is_object() || doc.value("scope", "") != scope.toStdString() ||
          doc.value("bandwidth_per", "") == "switch")
        continue;
    }
    out << file.chopped(5);
  }
  return out;
}

FieldSpec integer(std::string pointer, QString label, double min, double max, bool optional = false, int slider_max = 0,
                  nlohmann::json def = 1) {
  FieldSpec f;
  f.pointer = std::move(pointer);
  f.label = std::move(label);
  f.kind = FieldKind::Integer;
  f.min = min;
  f.max = max;
  f.optional = optional;
  f.slider_max = slider_max;
  f.default_value = std::move(def);
  return f;
}

FieldSpec number(std::string pointer, QString label, double min, double max, bool optional, int slider_max = 0,
                 nlohmann::json def = 0) {
  FieldSpec f = integer(std::move(pointer), std::move(label), min, max, optional, slider_max, std::move(def));
  f.kind = FieldKind::Number;
  return f;
}

FieldSpec quantity(std::string pointer, QString label, Dimension d, bool optional, nlohmann::json def) {
  FieldSpec f;
  f.pointer = std::move(pointer);
  f.label = std::move(label);
  f.kind = FieldKind::Quantity;
  f.dimension = d;
  f.optional = optional;
  f.default_value = std::move(def);
  return f;
}

FieldSpec choice(std::string pointer, QString label, QStringList choices, bool optional = false) {
  FieldSpec f;
  f.pointer = std::move(pointer);
  f.label = std::move(label);
  f.kind = FieldKind::Choice;
  f.optional = optional;
  f.default_value = choices.isEmpty() ? nlohmann::json("") : nlohmann::json(choices.first().toStdString());
  f.choices = std::move(choices);
  return f;
}

FieldSpec text(std::string pointer, QString label, bool optional = false) {
  FieldSpec f;
  f.pointer = std::move(pointer);
  f.label = std::move(label);
  f.kind = FieldKind::Text;
  f.optional = optional;
  f.default_value = "";
  return f;
}

FieldSpec json_field(std::string pointer, QString label, nlohmann::json def, QString tooltip = {}) {
  FieldSpec f;
  f.pointer = std::move(pointer);
  f.label = std::move(label);
  f.kind = FieldKind::Json;
  f.optional = true;
  f.default_value = std::move(def);
  f.tooltip = std::move(tooltip);
  return f;
}
} // namespace

std::vector<SectionSpec> scenario_catalog(const QString& data_dir) {
  const QString models = QDir(data_dir).filePath(QStringLiteral("models"));
  const QStringList gpus = profiles(models + QStringLiteral("/hardware"), {});
  const QStringList intra = profiles(models + QStringLiteral("/links"), QStringLiteral("intra_node"));
  const QStringList inter = profiles(models + QStringLiteral("/links"), QStringLiteral("inter_node"));
  const QStringList data_types{QStringLiteral("bf16"), QStringLiteral("fp16"), QStringLiteral("fp32"),
                               QStringLiteral("tf32"), QStringLiteral("fp64"), QStringLiteral("fp8"),
                               QStringLiteral("int8"), QStringLiteral("fp4")};
  std::vector<SectionSpec> out;

  SectionSpec scenario{QStringLiteral("Scenario"), "", false, {}, {}};
  scenario.fields = {text("/name", QStringLiteral("Name")), text("/description", QStringLiteral("Description"), true)};
  out.push_back(scenario);

  SectionSpec cluster{QStringLiteral("Cluster"), "/cluster", false, {}, {}};
  cluster.fields = {
      integer("/cluster/nodes", QStringLiteral("Nodes"), 1, 65536, false, 64),
      integer("/cluster/gpus_per_node", QStringLiteral("GPUs per node"), 1, 1024, false, 16),
      choice("/cluster/gpu", QStringLiteral("GPU"), gpus),
      choice("/cluster/intra_node_link/profile", QStringLiteral("Intra-node link"), intra, true),
      quantity("/cluster/intra_node_link/bandwidth", QStringLiteral("Intra-node bandwidth"), Dimension::Bandwidth, true,
               "300GBps"),
      quantity("/cluster/intra_node_link/latency", QStringLiteral("Intra-node latency"), Dimension::Time, true, "1us"),
      choice("/cluster/network/topology", QStringLiteral("Network topology"),
             {QStringLiteral("star"), QStringLiteral("fat_tree"), QStringLiteral("rail")}, true),
      integer("/cluster/network/nics_per_node", QStringLiteral("NICs per node"), 1, 1024, true, 16, 1),
      choice("/cluster/network/profile", QStringLiteral("Network profile"), inter, true),
      quantity("/cluster/network/bandwidth", QStringLiteral("NIC bandwidth"), Dimension::Bandwidth, true, "25GBps"),
      quantity("/cluster/network/latency", QStringLiteral("Network latency"), Dimension::Time, true, "2us"),
      json_field("/cluster/node_speed_factors", QStringLiteral("Node speed factors"), nlohmann::json::array(),
                 QStringLiteral("one number per node, 1 = nominal: [1, 1, 0.5]")),
      json_field("/cluster/speed_changes", QStringLiteral("Speed changes"), nlohmann::json::array(),
                 QStringLiteral("[{\"node\": 7, \"points\": [[\"0s\", 0.25]]}]")),
  };
  out.push_back(cluster);

  SectionSpec workload{QStringLiteral("Workload"), "/workload", false, {}, {}};
  const QStringList data_job{QStringLiteral("data_job")};
  const QStringList training{QStringLiteral("model_training")};
  const QStringList collective{QStringLiteral("collective")};
  auto only = [](FieldSpec f, QStringList kinds) {
    f.workload_kinds = std::move(kinds);
    return f;
  };
  workload.fields = {
      choice("/workload/kind", QStringLiteral("Kind"),
             {QStringLiteral("data_job"), QStringLiteral("model_training"), QStringLiteral("collective")}),
      only(
          choice("/workload/model", QStringLiteral("Model"), profiles(models + QStringLiteral("/workloads"), {}), true),
          training),
      only(integer("/workload/sequence_length", QStringLiteral("Sequence length"), 1, 1e7, true, 0, 2048), training),
      only(integer("/workload/global_batch", QStringLiteral("Global batch"), 1, 1e8, false, 0, 512), training),
      only(integer("/workload/micro_batch", QStringLiteral("Micro-batch"), 1, 1e6, true, 64, 1), training),
      only(choice("/workload/recomputation", QStringLiteral("Recomputation"),
                  {QStringLiteral("none"), QStringLiteral("selective"), QStringLiteral("full")}, true),
           training),
      only(choice("/workload/optimizer", QStringLiteral("Optimizer"),
                  {QStringLiteral("adam"), QStringLiteral("sgd_momentum"), QStringLiteral("sgd")}, true),
           training),
      only(quantity("/workload/workspace", QStringLiteral("Workspace"), Dimension::Bytes, true, "1GiB"), training),
      only(choice("/workload/operation", QStringLiteral("Collective"),
                  {QStringLiteral("all_reduce"), QStringLiteral("reduce_scatter"), QStringLiteral("all_gather"),
                   QStringLiteral("all_to_all"), QStringLiteral("broadcast")}),
           collective),
      only(quantity("/workload/bytes", QStringLiteral("Bytes"), Dimension::Bytes, false, "1GB"), collective),
      only(integer("/workload/root", QStringLiteral("Root rank"), 0, 65535, true, 0, 0), collective),
      only(integer("/workload/samples", QStringLiteral("Samples"), 1, 1e15, true, 0, 1000), data_job),
      only(
          quantity("/workload/flop_per_sample", QStringLiteral("Compute per sample"), Dimension::Flop, false, "1GFLOP"),
          data_job),
      only(quantity("/workload/bytes_read_per_sample", QStringLiteral("Bytes read per sample"), Dimension::Bytes, true,
                    "0B"),
           data_job),
      only(choice("/workload/data_type", QStringLiteral("Data type"), data_types, true), data_job + training),
      integer("/workload/iterations", QStringLiteral("Iterations"), 1, 1e9, true, 0, 1),
      only(quantity("/workload/gradient_bytes", QStringLiteral("Gradient bytes"), Dimension::Bytes, true, "0B"),
           data_job),
      only(number("/workload/serial_fraction", QStringLiteral("Serial fraction"), 0, 0.999999, true, 1000, 0.1),
           data_job),
      only(json_field("/workload/labels", QStringLiteral("Labels"),
                      nlohmann::json::parse(R"({"generate": {"positive_rate": 0.01}})")),
           data_job),
  };
  out.push_back(workload);

  SectionSpec strategy{QStringLiteral("Strategy"), "/strategy", false, {}, {}};
  FieldSpec shares;
  shares.pointer = "/strategy/shares";
  shares.label = QStringLiteral("Shares");
  shares.kind = FieldKind::Shares;
  shares.optional = true;
  shares.default_value = "balanced";
  const QStringList data_parallel{QStringLiteral("data_parallel")};
  const QStringList model_parallel{QStringLiteral("model_parallel")};
  auto for_strategy = [](FieldSpec f, QStringList kinds) {
    f.strategy_kinds = std::move(kinds);
    return f;
  };
  strategy.fields = {
      choice("/strategy/kind", QStringLiteral("Kind"),
             {QStringLiteral("data_parallel"), QStringLiteral("model_parallel")}),
      for_strategy(integer("/strategy/partitions", QStringLiteral("Partitions"), 1, 1e7, true, 128, 1), data_parallel),
      for_strategy(shares, data_parallel),
      for_strategy(integer("/strategy/data", QStringLiteral("Data-parallel degree"), 1, 65536, true, 64, 1),
                   model_parallel),
      for_strategy(integer("/strategy/tensor", QStringLiteral("Tensor-parallel degree"), 1, 65536, true, 16, 1),
                   model_parallel),
      for_strategy(integer("/strategy/pipeline", QStringLiteral("Pipeline stages"), 1, 65536, true, 64, 1),
                   model_parallel),
      for_strategy(choice("/strategy/schedule", QStringLiteral("Schedule"),
                          {QStringLiteral("1f1b"), QStringLiteral("gpipe"), QStringLiteral("interleaved")}, true),
                   model_parallel),
      for_strategy(integer("/strategy/virtual_stages", QStringLiteral("Virtual stages"), 1, 1024, true, 8, 2),
                   model_parallel),
      for_strategy(json_field("/strategy/sequence_parallel", QStringLiteral("Sequence parallel"), true,
                              QStringLiteral("true or false")),
                   model_parallel),
      for_strategy(
          json_field("/strategy/zero", QStringLiteral("ZeRO stage"), 1, QStringLiteral("0, 1, 2, 3 or \"fsdp\"")),
          model_parallel),
      for_strategy(json_field("/strategy/placement", QStringLiteral("Placement"),
                              nlohmann::json::parse(R"(["tensor", "data", "pipeline"])"),
                              QStringLiteral("\"tensor_first\" or the three axes, fastest-varying first")),
                   model_parallel),
      for_strategy(json_field("/strategy/stage_layers", QStringLiteral("Layers per stage"), nlohmann::json::array(),
                              QStringLiteral("one count per (virtual) stage: [6, 6, 6, 6]")),
                   model_parallel),
      for_strategy(json_field("/strategy/tensor_collectives", QStringLiteral("Tensor collectives"),
                              nlohmann::json::parse(R"({"fidelity": "auto", "granularity": "layer"})"),
                              QStringLiteral("{\"algorithm\": ..., \"fidelity\": ..., \"granularity\": \"layer\"}")),
                   model_parallel),
      choice("/strategy/gradient_sync", QStringLiteral("Gradient sync"),
             {QStringLiteral("none"), QStringLiteral("ring_allreduce")}, true),
  };
  out.push_back(strategy);

  SectionSpec balancing{QStringLiteral("Run-time balancing"),
                        "/strategy/balancing",
                        true,
                        nlohmann::json::parse(R"({"policy": "work_queue", "chunk_samples": 10000})"),
                        {}};
  balancing.fields = {
      choice("/strategy/balancing/policy", QStringLiteral("Policy"),
             {QStringLiteral("static"), QStringLiteral("work_queue"), QStringLiteral("measured_rate"),
              QStringLiteral("work_stealing")}),
      integer("/strategy/balancing/chunk_samples", QStringLiteral("Chunk samples"), 1, 1e18, true, 0, 1),
      quantity("/strategy/balancing/dispatch_overhead", QStringLiteral("Dispatch overhead"), Dimension::Time, true,
               "0s"),
      quantity("/strategy/balancing/sample_bytes", QStringLiteral("Bytes per sample"), Dimension::Bytes, true, "0B"),
      quantity("/strategy/balancing/request_bytes", QStringLiteral("Request bytes"), Dimension::Bytes, true, "64B"),
  };
  out.push_back(balancing);

  SectionSpec coordination{
      QStringLiteral("Coordination"), "/strategy/coordination", true, nlohmann::json::object(), {}};
  coordination.fields = {
      quantity("/strategy/coordination/per_partition", QStringLiteral("Per partition"), Dimension::Time, true, "0s"),
      quantity("/strategy/coordination/data_bytes", QStringLiteral("Input bytes"), Dimension::Bytes, true, "0B"),
      quantity("/strategy/coordination/result_bytes", QStringLiteral("Result bytes"), Dimension::Bytes, true, "0B"),
      quantity("/strategy/coordination/boundary_bytes", QStringLiteral("Halo bytes"), Dimension::Bytes, true, "0B"),
  };
  out.push_back(coordination);

  SectionSpec split{QStringLiteral("Class-aware split"),
                    "/strategy/class_split",
                    true,
                    nlohmann::json::parse(R"({"method": "stratified"})"),
                    {}};
  split.fields = {
      choice("/strategy/class_split/method", QStringLiteral("Method"),
             {QStringLiteral("random"), QStringLiteral("stratified"), QStringLiteral("stratified_oversample")}),
      integer("/strategy/class_split/starved_threshold", QStringLiteral("Starved below"), 0, 1e18, true, 0, 1),
      integer("/strategy/class_split/oversample_target", QStringLiteral("Oversample to"), 0, 1e18, true, 0, 0),
      text("/strategy/class_split/minority_class", QStringLiteral("Minority class"), true),
      quantity("/strategy/class_split/scan_per_sample", QStringLiteral("Scan per sample"), Dimension::Time, true, "0s"),
      quantity("/strategy/class_split/replicate_per_sample", QStringLiteral("Replicate per sample"), Dimension::Time,
               true, "0s"),
  };
  out.push_back(split);

  SectionSpec run{QStringLiteral("Run"), "/run", false, {}, {}};
  run.fields = {
      integer("/run/seed", QStringLiteral("Seed"), 0, 9.2e18, true, 0, 1),
      choice("/run/network_model", QStringLiteral("Network model"), {QStringLiteral("CM02"), QStringLiteral("LV08")},
             true),
      integer("/run/max_events", QStringLiteral("Max events"), 1, 1e18, true, 0, 200000000),
      json_field("/run/fold_replicas", QStringLiteral("Fold replicas"), false,
                 QStringLiteral("true (default): simulate one of each class of identical replicas; false: every rank")),
      json_field("/run/outputs", QStringLiteral("Outputs"),
                 nlohmann::json::parse(R"(["table", "report_json", "ranks_csv", "trace"])")),
  };
  out.push_back(run);
  return out;
}

} // namespace partsim::gui
