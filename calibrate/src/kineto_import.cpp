// Kineto trace reading, GEMM shapes of aten ops, matching to the workload model's products, report and profile.
#include "partsim/calibrate/kineto_import.hpp"

#include "partsim/calibrate/gemm_grid.hpp"
#include "partsim/calibrate/profile_writer.hpp"
#include "partsim/common/error.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/model/cost_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <tuple>

namespace partsim::calibrate {

using ordered_json = nlohmann::ordered_json;

namespace {

std::int64_t product(const std::vector<std::int64_t>& dims, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

std::int64_t integer_arg(const nlohmann::json& args, const char* key) {
  const auto it = args.find(key);
  if (it == args.end() || !it->is_number()) return -1;
  return it->get<std::int64_t>();
}

double bytes_per_element(const std::string& type) {
  if (type == "fp8" || type == "int8") return 1.0;
  if (type == "bf16" || type == "fp16") return 2.0;
  if (type == "fp64") return 8.0;
  return 4.0;
}

using ShapeKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;

/** (batch, min(m, n), max(m, n), k): C and Cᵀ = Bᵀ·Aᵀ are the same work (PyTorch computes dWᵀ for a linear layer's
 * weight, [out, in], where the cost model writes dW). */
ShapeKey key_of(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
  return {batch, std::min(m, n), std::max(m, n), k};
}
ShapeKey key_of(const GemmShape& s) {
  return key_of(s.batch, s.m, s.n, s.k);
}

struct Product {
  std::string op;
  Pass pass;
  GemmShape shape;
  std::string also; ///< other products of the model with the same shape ("mlp_up input_gradient")
};

/** Every product of the model's GEMM ops at `micro_batch`, by shape. Where two share a shape, a forward product is the
 * one named and the others are listed in `also`. */
std::map<ShapeKey, Product> model_products(const TransformerModel& model, std::int64_t micro_batch) {
  std::vector<ComputeOp> ops = model.layer_ops(micro_batch);
  for (ComputeOp& op : model.outer_ops(micro_batch)) ops.push_back(std::move(op));
  std::map<ShapeKey, Product> products;
  for (const ComputeOp& op : ops) {
    if (op.kind != OpKind::Gemm || !op.gemm) continue;
    const GemmShape& s = *op.gemm;
    std::vector<Product> mine{{op.name, Pass::Forward, s, ""}};
    if (op.input_gradient) mine.push_back({op.name, Pass::InputGradient, {s.batch, s.m, s.k, s.n}, ""});
    mine.push_back({op.name, Pass::WeightGradient, weight_gradient_shape(s), ""});
    for (Product& p : mine) {
      auto [it, inserted] = products.emplace(key_of(p.shape), p);
      if (inserted) continue;
      Product& first = it->second;
      if (p.pass == Pass::Forward && first.pass != Pass::Forward)
        std::swap(first.op, p.op), std::swap(first.pass, p.pass);
      const std::string name = fmt::format("{} {}", p.op, to_string(p.pass));
      if (first.also.find(name) == std::string::npos) first.also += (first.also.empty() ? "" : ", ") + name;
    }
  }
  return products;
}

/** The model product of a traced shape: exact, or with the batch folded into the rows. */
const Product* find_product(const std::map<ShapeKey, Product>& products, const GemmShape& s) {
  if (auto it = products.find(key_of(s)); it != products.end()) return &it->second;
  if (auto it = products.find(key_of(1, s.batch * s.m, s.n, s.k)); it != products.end()) return &it->second;
  for (const auto& [key, p] : products)
    if (p.shape.batch * p.shape.m == s.batch * s.m &&
        key_of(1, s.batch * s.m, s.n, s.k) == key_of(1, p.shape.batch * p.shape.m, p.shape.n, p.shape.k))
      return &p;
  return nullptr;
}

double matched_seconds(const std::vector<TracedGemm>& gemms, const std::map<ShapeKey, Product>& products) {
  double total = 0.0;
  for (const TracedGemm& g : gemms)
    if (find_product(products, g.shape) != nullptr) total += g.seconds;
  return total;
}

} // namespace

KinetoTrace read_kineto_trace(const nlohmann::json& doc, const std::string& source) {
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    throw InputError(source, "/traceEvents",
                     "expected a Chrome trace object with a traceEvents array (PyTorch profiler "
                     "export_chrome_trace)");
  KinetoTrace trace;
  trace.source = source;
  if (auto props = doc.find("deviceProperties"); props != doc.end() && props->is_array() && !props->empty() &&
                                                 (*props)[0].is_object() && (*props)[0].contains("name"))
    trace.device_name = (*props)[0]["name"].get<std::string>();
  const nlohmann::json& events = doc["traceEvents"];
  for (std::size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& e = events[i];
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    std::string cat = e.value("cat", "");
    std::transform(cat.begin(), cat.end(), cat.begin(), [](unsigned char c) { return std::tolower(c); });
    static const nlohmann::json kNoArgs = nlohmann::json::object();
    const nlohmann::json& args = e.contains("args") && e["args"].is_object() ? e["args"] : kNoArgs;
    if (cat == "kernel") {
      if (!e.contains("dur") || !e["dur"].is_number() || !e.contains("ts") || !e["ts"].is_number())
        throw InputError(source, fmt::format("/traceEvents/{}", i), "expected a kernel event with numbers ts and dur");
      TraceKernel k;
      k.name = e.value("name", "");
      k.start_us = e["ts"].get<double>();
      k.duration_us = e["dur"].get<double>();
      k.external_id = integer_arg(args, "External id");
      k.device = static_cast<int>(std::max<std::int64_t>(0, integer_arg(args, "device")));
      trace.kernels.push_back(std::move(k));
    } else if (cat == "cpu_op") {
      TraceOp op;
      op.name = e.value("name", "");
      op.external_id = integer_arg(args, "External id");
      if (op.external_id < 0) continue;
      try {
        if (auto dims = args.find("Input Dims"); dims != args.end() && dims->is_array())
          for (const nlohmann::json& d : *dims)
            op.input_dims.push_back(d.is_array() ? d.get<std::vector<std::int64_t>>() : std::vector<std::int64_t>{});
        if (auto types = args.find("Input type"); types != args.end() && types->is_array())
          for (const nlohmann::json& t : *types) op.input_types.push_back(t.is_string() ? t.get<std::string>() : "");
      } catch (const nlohmann::json::exception&) {
        throw InputError(source, fmt::format("/traceEvents/{}/args", i),
                         "expected Input Dims as arrays of integers and Input type as strings");
      }
      trace.ops[op.external_id] = std::move(op);
    }
  }
  return trace;
}

KinetoTrace read_kineto_trace(const std::filesystem::path& path) {
  // Profiler traces of a few steps of a large model reach hundreds of MB: a larger bound than a scenario's.
  constexpr std::size_t kMaxTraceBytes = std::size_t{2} << 30;
  return read_kineto_trace(
      parse_json_text(read_text_file(path, kMaxTraceBytes, "a Kineto trace (JSON)"), path.string()), path.string());
}

std::optional<GemmShape> gemm_shape(const TraceOp& op) {
  const auto& d = op.input_dims;
  const auto rank = [&](std::size_t i) { return i < d.size() ? d[i].size() : 0; };
  if (op.name == "aten::mm" && rank(0) == 2 && rank(1) == 2) return GemmShape{1, d[0][0], d[1][1], d[0][1]};
  if (op.name == "aten::addmm" && rank(1) == 2 && rank(2) == 2) return GemmShape{1, d[1][0], d[2][1], d[1][1]};
  if (op.name == "aten::bmm" && rank(0) == 3 && rank(1) == 3) return GemmShape{d[0][0], d[0][1], d[1][2], d[0][2]};
  if (op.name == "aten::baddbmm" && rank(1) == 3 && rank(2) == 3) return GemmShape{d[1][0], d[1][1], d[2][2], d[1][2]};
  if (op.name == "aten::linear" && rank(0) >= 1 && rank(1) == 2) {
    const auto& x = d[0];
    return GemmShape{1, product(x, 0, x.size() - 1), d[1][0], x.back()};
  }
  if ((op.name == "aten::matmul" || op.name == "aten::_scaled_mm") && rank(0) >= 2 && rank(1) >= 2) {
    const auto& a = d[0];
    const auto& b = d[1];
    const std::int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
    const std::int64_t batch = product(a, 0, a.size() - 2);
    if (b.size() == 2) return GemmShape{1, batch * m, n, k}; // a 2-D weight: the leading dimensions are more rows
    return GemmShape{batch, m, n, k};
  }
  return std::nullopt;
}

std::string data_type_of(const TraceOp& op, const std::string& float_as) {
  for (const std::string& t : op.input_types) {
    if (t == "c10::BFloat16") return "bf16";
    if (t == "c10::Half") return "fp16";
    if (t == "float") return float_as;
    if (t == "double") return "fp64";
    if (t.rfind("c10::Float8_e4m3", 0) == 0) return "fp8";
  }
  return "";
}

bool looks_like_gemm_kernel(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* key : {"gemm", "xmma", "cutlass", "nvjet", "cublas", "s16816", "hmma", "wgmma"})
    if (n.find(key) != std::string::npos) return true;
  return false;
}

std::vector<TracedGemm> traced_gemms(const KinetoTrace& trace, const std::string& float_as) {
  std::map<std::int64_t, double> seconds;
  for (const TraceKernel& k : trace.kernels)
    if (k.external_id >= 0) seconds[k.external_id] += k.duration_us * 1e-6;
  std::vector<TracedGemm> gemms;
  for (const auto& [id, t] : seconds) {
    const auto op = trace.ops.find(id);
    if (op == trace.ops.end()) continue;
    const auto shape = gemm_shape(op->second);
    const std::string type = data_type_of(op->second, float_as);
    if (!shape || type.empty()) continue;
    gemms.push_back({op->second.name, *shape, type, t, id});
  }
  return gemms;
}

std::string_view to_string(Pass pass) {
  switch (pass) {
  case Pass::Forward:
    return "forward";
  case Pass::InputGradient:
    return "input_gradient";
  case Pass::WeightGradient:
    return "weight_gradient";
  }
  return "unknown";
}

KinetoImport import_kineto(const KinetoTrace& trace, const std::string& workload, const TransformerModel& model,
                           std::int64_t micro_batch, const GpuProfile& base, const std::string& float_as) {
  const std::vector<TracedGemm> gemms = traced_gemms(trace, float_as);
  if (gemms.empty())
    throw InputError(trace.source, "/traceEvents",
                     "no GPU kernel belongs to a matrix-product op with recorded shapes; expected a trace taken with "
                     "torch.profiler.profile(activities=[CPU, CUDA], record_shapes=True)");
  KinetoImport out;
  out.workload = workload;
  if (micro_batch <= 0) {
    double best = -1.0;
    for (std::int64_t b = 1; b < 1024; ++b) {
      const double covered = matched_seconds(gemms, model_products(model, b));
      if (covered > best) {
        best = covered;
        micro_batch = b;
      }
    }
  }
  out.micro_batch = micro_batch;
  const std::map<ShapeKey, Product> products = model_products(model, micro_batch);

  for (const TraceKernel& k : trace.kernels) {
    out.kernel_seconds += k.duration_us * 1e-6;
    const auto op = trace.ops.find(k.external_id);
    if (looks_like_gemm_kernel(k.name) && (op == trace.ops.end() || !gemm_shape(op->second)))
      ++out.gemm_kernels_without_shape;
  }
  out.kernels = trace.kernels.size();

  std::map<std::tuple<std::string, int, std::string>, std::pair<Product, std::vector<double>>> groups;
  std::map<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>, std::vector<double>> by_shape;
  for (const TracedGemm& g : gemms) {
    out.gemm_seconds += g.seconds;
    by_shape[{g.data_type, g.shape.batch * g.shape.m, g.shape.n, g.shape.k}].push_back(g.seconds);
    const Product* p = find_product(products, g.shape);
    if (p == nullptr) {
      out.unmatched.push_back(g);
      continue;
    }
    out.matched_seconds += g.seconds;
    auto& group = groups[{p->op, static_cast<int>(p->pass), g.data_type}];
    group.first = *p;
    group.second.push_back(g.seconds);
  }
  for (const auto& [key, group] : groups) {
    const auto& [product, times] = group;
    OpMatch m;
    m.model_op = product.op;
    m.pass = product.pass;
    m.also = product.also;
    m.shape = product.shape;
    m.data_type = std::get<2>(key);
    m.seconds = summarize(times);
    m.flops_per_second = m.shape.flops() / m.seconds.median;
    if (base.peak_flops.contains(m.data_type)) {
      m.efficiency = m.flops_per_second / base.peak(m.data_type);
      const GemmShape& s = m.shape;
      const double bytes = bytes_per_element(m.data_type) * static_cast<double>(s.batch) *
                           static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n);
      m.predicted_seconds =
          kernel_time(base, s.flops(), base.peak(m.data_type) * gemm_efficiency(base, s, m.data_type), bytes);
    }
    out.matched.push_back(std::move(m));
  }
  std::vector<double> spreads;
  for (const auto& [key, times] : by_shape) {
    const auto& [type, m, n, k] = key;
    if (!base.peak_flops.contains(type)) continue;
    const Summary s = summarize(times);
    const double efficiency =
        2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / s.median / base.peak(type);
    out.points.push_back({m, n, k, type, std::clamp(efficiency, 1e-6, 1.0)});
    out.samples += s.count;
    if (s.count > 1) spreads.push_back(s.relative_spread());
  }
  if (!spreads.empty()) out.spread = median(spreads);
  return out;
}

ordered_json kineto_report(const KinetoImport& import, const KinetoTrace& trace) {
  ordered_json ops = ordered_json::array();
  for (const OpMatch& m : import.matched)
    ops.push_back(
        {{"model_op", m.model_op},
         {"pass", std::string(to_string(m.pass))},
         {"same_shape_as", m.also},
         {"batch", m.shape.batch},
         {"m", m.shape.m},
         {"n", m.shape.n},
         {"k", m.shape.k},
         {"data_type", m.data_type},
         {"count", m.seconds.count},
         {"median_s", m.seconds.median},
         {"relative_spread", m.seconds.relative_spread()},
         {"achieved_flops_per_second", m.flops_per_second},
         {"efficiency", m.efficiency},
         {"predicted_s", m.predicted_seconds},
         {"predicted_over_measured", m.predicted_seconds > 0.0 ? m.predicted_seconds / m.seconds.median : 0.0}});
  ordered_json unmatched = ordered_json::array();
  for (const TracedGemm& g : import.unmatched)
    unmatched.push_back({{"op", g.op},
                         {"batch", g.shape.batch},
                         {"m", g.shape.m},
                         {"n", g.shape.n},
                         {"k", g.shape.k},
                         {"data_type", g.data_type},
                         {"seconds", g.seconds},
                         {"external_id", g.external_id}});
  return {{"schema", "partsim.kineto_import"},
          {"version", 1},
          {"trace", trace.source},
          {"device", trace.device_name},
          {"workload", import.workload},
          {"micro_batch", import.micro_batch},
          {"kernels", import.kernels},
          {"kernel_seconds", import.kernel_seconds},
          {"gemm_seconds", import.gemm_seconds},
          {"matched_gemm_seconds", import.matched_seconds},
          {"gemm_kernels_without_shape", import.gemm_kernels_without_shape},
          {"ops", ops},
          {"unmatched", unmatched}};
}

ordered_json kineto_profile(const KinetoImport& import, const KinetoTrace& trace, const GpuProfile& base,
                            const std::string& name, const std::string& date, const std::string& tool) {
  if (import.points.empty())
    throw InputError(trace.source, "",
                     "no traced GEMM has a data type with a peak rate in the " + base.name + " profile");
  ordered_json out = profile_file_json(base);
  DeviceInfo device;
  device.name = trace.device_name.empty() ? "unknown (the trace has no deviceProperties)" : trace.device_name;
  const ProfileOptions options{name, "", date, tool};
  out["name"] = name;
  out["description"] = fmt::format("{} with GEMM efficiency from the Kineto trace {} of {} ({})", base.name,
                                   trace.source, import.workload, device.name);
  const double h = base.gemm_efficiency.default_curve.half_dimension;
  const CurveFit curve = fit_efficiency_curve(import.points, h);
  std::vector<std::string> types;
  for (const auto& [type, s] : curve.saturated_efficiency) {
    out["gemm_efficiency"]["default_curve"]["saturated_efficiency"][type] = s;
    types.push_back(type);
  }
  ordered_json kept = ordered_json::array();
  for (const auto& p : out["gemm_efficiency"]["points"])
    if (std::find(types.begin(), types.end(), p["data_type"].get<std::string>()) == types.end()) kept.push_back(p);
  out["gemm_efficiency"]["points"] = kept;
  out["gemm_efficiency"]["default_curve"]["provenance"] = measured_provenance(
      device, options, import.samples, import.spread,
      fmt::format(
          "saturated efficiency of {} fitted by least squares at the half dimension {:g} of the {} profile to "
          "{} traced GEMM shapes (GPU kernel time per op from the PyTorch profiler trace, over the {} peak; rms "
          "residual {:.3g}); their table points are removed, a trace holds no full grid",
          fmt::join(types, ", "), h, base.name, import.points.size(), base.name, curve.rms_residual));
  return out;
}

} // namespace partsim::calibrate
