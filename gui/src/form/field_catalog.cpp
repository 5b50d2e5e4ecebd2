// The scenario form's catalog: sections and widget hints here, every field's facts from the core's scenario schema.
#include "form/field_catalog.hpp"

#include "partsim/input/scenario_schema.hpp"

#include <QDir>
#include <QFile>

#include <stdexcept>

namespace partsim::gui {

using partsim::Dimension;

QStringList units_of(partsim::Dimension dimension) {
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
  case Dimension::FlopRate:
    return {QStringLiteral("FLOPs"), QStringLiteral("GFLOPs"), QStringLiteral("TFLOPs"), QStringLiteral("PFLOPs")};
  case Dimension::Power:
    return {QStringLiteral("W"), QStringLiteral("kW"), QStringLiteral("MW")};
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

/** A field of the form: its pointer, a slider up to `slider_max` (0: none), and the value written when an optional
 * field without a schema default is switched on. */
struct Hint {
  const char* pointer;
  int slider_max = 0;
  nlohmann::json fallback = nullptr;
};

/** The form's field for `hint`, from every schema entry of its pointer (one per kind where ranges differ: the form
 * offers their union, the parser checks the kind's own). */
FieldSpec from_schema(const Hint& hint, const QStringList& library_choices) {
  const std::string pointer = hint.pointer;
  FieldSpec f;
  f.pointer = pointer;
  bool first = true;
  QStringList kinds;
  bool every_kind = false;
  for (const partsim::FieldSpec& e : scenario_schema().fields()) {
    if (e.pointer != pointer) continue;
    if (first) {
      f.label = QString::fromStdString(e.label.empty() ? pointer.substr(pointer.rfind('/') + 1) : e.label);
      f.tooltip = QString::fromStdString(e.doc);
      f.optional = e.default_value.has_value() || !e.default_doc.empty();
      f.default_value = e.default_value ? *e.default_value : hint.fallback;
      f.dimension = e.dimension;
      switch (e.type) {
      case FieldType::Integer:
        f.kind = FieldKind::Integer;
        f.min = static_cast<double>(e.int_min);
        f.max = static_cast<double>(e.int_max);
        break;
      case FieldType::Number:
        f.kind = FieldKind::Number;
        f.min = e.min;
        f.max = e.max;
        break;
      case FieldType::Quantity:
        f.kind = FieldKind::Quantity;
        break;
      case FieldType::Choice:
        f.kind = FieldKind::Choice;
        for (const std::string& c : e.choices) f.choices << QString::fromStdString(c);
        break;
      case FieldType::String:
        f.kind = e.library.empty() ? FieldKind::Text : FieldKind::Choice;
        f.choices = library_choices;
        break;
      default:
        // A library name or an inline object (the GPU, the model): the form offers the library's names.
        f.kind = !e.library.empty()              ? FieldKind::Choice
                 : pointer == "/strategy/shares" ? FieldKind::Shares
                                                 : FieldKind::Json;
        if (!e.library.empty()) f.choices = library_choices;
        break;
      }
      if (f.kind == FieldKind::Choice && f.default_value.is_null())
        f.default_value = f.choices.isEmpty() ? nlohmann::json("") : nlohmann::json(f.choices.first().toStdString());
      if (f.default_value.is_null())
        f.default_value = f.kind == FieldKind::Text ? nlohmann::json("") : nlohmann::json(0);
      first = false;
    } else if (f.kind == FieldKind::Integer) {
      f.min = std::min(f.min, static_cast<double>(e.int_min));
      f.max = std::max(f.max, static_cast<double>(e.int_max));
    }
    if (e.kinds.empty()) every_kind = true;
    for (const std::string& k : e.kinds) kinds << QString::fromStdString(k);
  }
  if (first) throw std::logic_error("the scenario schema has no field " + pointer);
  f.max = std::min(f.max, 9.2e18);
  f.slider_max = hint.slider_max;
  if (!every_kind) {
    if (pointer.starts_with("/workload/")) f.workload_kinds = kinds;
    if (pointer.starts_with("/strategy/")) f.strategy_kinds = kinds;
  }
  return f;
}

SectionSpec section(QString title, std::string pointer, bool optional, nlohmann::json default_object,
                    const std::vector<Hint>& hints, const std::map<std::string, QStringList>& libraries) {
  SectionSpec s{std::move(title), std::move(pointer), optional, std::move(default_object), {}};
  for (const Hint& h : hints) {
    const auto it = libraries.find(h.pointer);
    s.fields.push_back(from_schema(h, it == libraries.end() ? QStringList() : it->second));
  }
  return s;
}
} // namespace

std::vector<SectionSpec> scenario_catalog(const QString& data_dir) {
  const QString models = QDir(data_dir).filePath(QStringLiteral("models"));
  const std::map<std::string, QStringList> libraries{
      {"/cluster/gpu", profiles(models + QStringLiteral("/hardware"), {})},
      {"/cluster/intra_node_link/profile", profiles(models + QStringLiteral("/links"), QStringLiteral("intra_node"))},
      {"/cluster/network/profile", profiles(models + QStringLiteral("/links"), QStringLiteral("inter_node"))},
      {"/workload/model", profiles(models + QStringLiteral("/workloads"), {})},
  };
  std::vector<SectionSpec> out;
  out.push_back(section(QStringLiteral("Scenario"), "", false, {}, {{"/name"}, {"/description"}}, libraries));
  out.push_back(section(QStringLiteral("Cluster"), "/cluster", false, {},
                        {{"/cluster/nodes", 64},
                         {"/cluster/gpus_per_node", 16},
                         {"/cluster/gpu"},
                         {"/cluster/intra_node_link/profile"},
                         {"/cluster/intra_node_link/bandwidth", 0, "300GBps"},
                         {"/cluster/intra_node_link/latency", 0, "1us"},
                         {"/cluster/network/topology"},
                         {"/cluster/network/nics_per_node", 16, 1},
                         {"/cluster/network/profile"},
                         {"/cluster/network/bandwidth", 0, "25GBps"},
                         {"/cluster/network/latency", 0, "2us"},
                         {"/cluster/node_speed_factors", 0, nlohmann::json::array()},
                         {"/cluster/speed_changes"}},
                        libraries));
  out.push_back(section(
      QStringLiteral("Workload"), "/workload", false, {},
      {{"/workload/kind"},
       {"/workload/model"},
       {"/workload/sequence_length", 0, 2048},
       {"/workload/global_batch", 0, 512},
       {"/workload/micro_batch", 64},
       {"/workload/recomputation"},
       {"/workload/recompute_num_layers", 0, 1},
       {"/workload/recompute_modules", 0, nlohmann::json::parse(R"(["core_attn", "layernorm"])")},
       {"/workload/recompute_policy"},
       {"/workload/expert_routing", 0, nlohmann::json::parse(R"({"distribution": "zipf", "zipf_exponent": 1.0})")},
       {"/workload/optimizer"},
       {"/workload/workspace"},
       {"/workload/operation"},
       {"/workload/bytes", 0, "1GB"},
       {"/workload/root"},
       {"/workload/samples", 0, 1000},
       {"/workload/flop_per_sample", 0, "1GFLOP"},
       {"/workload/bytes_read_per_sample"},
       {"/workload/data_type"},
       {"/workload/fp8"},
       {"/workload/fp8_param_gather"},
       {"/workload/iterations"},
       {"/workload/gradient_bytes"},
       {"/workload/serial_fraction", 1000},
       {"/workload/labels", 0, nlohmann::json::parse(R"({"generate": {"positive_rate": 0.01}})")},
       // Serving: how requests arrive and how long the run sends them (the stages are edited as JSON in the file).
       {"/workload/arrivals/process"},
       {"/workload/arrivals/rate", 0, 100},
       {"/workload/arrivals/cv", 0, 2.0},
       {"/workload/arrivals/clients", 0, 16},
       {"/workload/arrivals/trace", 0, nlohmann::json::parse(R"({"csv": "trace.csv", "time_column": "arrival_s"})")},
       {"/workload/requests", 0, 10000},
       {"/workload/duration", 0, "60s"},
       {"/workload/warmup"}},
      libraries));
  out.push_back(section(
      QStringLiteral("Strategy"), "/strategy", false, {},
      {{"/strategy/kind"},
       {"/strategy/partitions", 128, 1},
       {"/strategy/shares"},
       {"/strategy/data", 64},
       {"/strategy/tensor", 16},
       {"/strategy/pipeline", 64},
       {"/strategy/expert", 64},
       {"/strategy/context", 64},
       {"/strategy/context_comm"},
       {"/strategy/schedule"},
       {"/strategy/virtual_stages", 8, 2},
       {"/strategy/microbatch_group", 64, 8},
       {"/strategy/sequence_parallel"},
       {"/strategy/tp_comm_overlap"},
       {"/strategy/tp_async_backward", 0, false},
       {"/strategy/zero"},
       {"/strategy/placement"},
       {"/strategy/stage_layers", 0, nlohmann::json::array()},
       {"/strategy/tensor_collectives", 0, nlohmann::json::parse(R"({"fidelity": "auto", "granularity": "layer"})")},
       {"/strategy/gradient_sync", 0, "all_reduce"},
       // Parameter servers (stale gradients, seed situation 9).
       {"/strategy/policy"},
       {"/strategy/workers", 256},
       {"/strategy/server_shards", 64},
       {"/strategy/staleness_bound", 16},
       {"/strategy/local_steps", 64},
       {"/strategy/worker_speeds", 0, nlohmann::json::array()}},
      libraries));
  // Seed situation 9: stragglers, failures and checkpoints, each an optional section.
  out.push_back(
      section(QStringLiteral("Stragglers"), "/cluster/stragglers", true,
              nlohmann::json::parse(R"({"random": {"probability": 0.01, "slowdown": 0.7}})"),
              {{"/cluster/stragglers/random", 0, nlohmann::json::parse(R"({"probability": 0.01, "slowdown": 0.7})")},
               {"/cluster/stragglers/fixed", 0, nlohmann::json::array()}},
              libraries));
  out.push_back(section(QStringLiteral("Failures and checkpoints"), "/reliability", true,
                        nlohmann::json::parse(R"({"failures": {"gpu_mtbf_hours": 50000}})"),
                        {{"/reliability/iterations"},
                         {"/reliability/failures/distribution"},
                         {"/reliability/failures/weibull_shape"},
                         {"/reliability/failures/gpu_mtbf_hours"},
                         {"/reliability/failures/nic_mtbf_hours"},
                         {"/reliability/failures/switch_mtbf_hours"},
                         {"/reliability/failures/host_mtbf_hours"},
                         {"/reliability/recovery/policy"},
                         {"/reliability/recovery/detection_time"},
                         {"/reliability/recovery/restart_time"},
                         {"/reliability/checkpoint/interval"},
                         {"/reliability/checkpoint/mode"},
                         {"/reliability/checkpoint/storage_bandwidth"}},
                        libraries));
  out.push_back(section(QStringLiteral("Injected failure (in the iteration)"), "/reliability/inject", true,
                        nlohmann::json::parse(R"({"gpu": 0, "at": "100ms"})"),
                        {{"/reliability/inject/gpu"}, {"/reliability/inject/node"}, {"/reliability/inject/at"}},
                        libraries));
  out.push_back(section(QStringLiteral("Run-time balancing"), "/strategy/balancing", true,
                        nlohmann::json::parse(R"({"policy": "work_queue", "chunk_samples": 10000})"),
                        {{"/strategy/balancing/policy"},
                         {"/strategy/balancing/chunk_samples"},
                         {"/strategy/balancing/dispatch_overhead"},
                         {"/strategy/balancing/sample_bytes"},
                         {"/strategy/balancing/request_bytes"}},
                        libraries));
  out.push_back(section(QStringLiteral("Coordination"), "/strategy/coordination", true, nlohmann::json::object(),
                        {{"/strategy/coordination/per_partition"},
                         {"/strategy/coordination/data_bytes"},
                         {"/strategy/coordination/result_bytes"},
                         {"/strategy/coordination/boundary_bytes"}},
                        libraries));
  out.push_back(section(QStringLiteral("Class-aware split"), "/strategy/class_split", true,
                        nlohmann::json::parse(R"({"method": "stratified"})"),
                        {{"/strategy/class_split/method"},
                         {"/strategy/class_split/starved_threshold"},
                         {"/strategy/class_split/oversample_target"},
                         {"/strategy/class_split/minority_class"},
                         {"/strategy/class_split/scan_per_sample"},
                         {"/strategy/class_split/replicate_per_sample"}},
                        libraries));
  out.push_back(
      section(QStringLiteral("Run"), "/run", false, {},
              {{"/run/seed"},
               {"/run/network_model"},
               {"/run/max_events"},
               {"/run/fold_replicas"},
               {"/run/outputs", 0, nlohmann::json::parse(R"(["table", "report_json", "ranks_csv", "trace"])")}},
              libraries));
  return out;
}

} // namespace partsim::gui
