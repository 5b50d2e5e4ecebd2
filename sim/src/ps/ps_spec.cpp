// Reads `/strategy` of kind `parameter_server` and describes it.
#include "partsim/ps/ps_spec.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/scenario.hpp"

#include <fmt/format.h>

namespace partsim {

int ParameterServer::gate_bound() const {
  switch (policy) {
  case PsPolicy::Async:
    return -1;
  case PsPolicy::Ssp:
    return staleness_bound;
  case PsPolicy::Sync:
  case PsPolicy::LocalSgd:
    break;
  }
  return 0;
}

std::optional<double> StatisticalEfficiency::steps_needed(double mean_staleness) const {
  if (points.empty() || mean_staleness < points.front().mean_staleness || mean_staleness > points.back().mean_staleness)
    return std::nullopt;
  for (std::size_t i = 1; i < points.size(); ++i) {
    const StalenessPoint& a = points[i - 1];
    const StalenessPoint& b = points[i];
    if (mean_staleness <= b.mean_staleness) {
      const double f = (mean_staleness - a.mean_staleness) / (b.mean_staleness - a.mean_staleness);
      return a.steps + f * (b.steps - a.steps);
    }
  }
  return points.back().steps;
}

namespace {

StatisticalEfficiency parse_statistical_efficiency(JsonReader reader) {
  StatisticalEfficiency model;
  model.source = reader.string("source");
  if (model.source.empty())
    throw InputError(reader.source(), reader.pointer() + "/source",
                     "expected where the points come from (a publication, a measurement): the effect of staleness "
                     "on convergence is not something partsim simulates");
  model.target = reader.string("target");
  JsonReader points = reader.child("points");
  for (JsonReader& item : points.elements(2, 1000)) {
    StalenessPoint p;
    p.mean_staleness = item.number("mean_staleness");
    p.steps = item.number("steps");
    if (!model.points.empty() && p.mean_staleness <= model.points.back().mean_staleness)
      throw InputError(item.source(), item.pointer() + "/mean_staleness",
                       fmt::format("expected points in increasing mean_staleness, got {} after {}", p.mean_staleness,
                                   model.points.back().mean_staleness));
    item.finish();
    model.points.push_back(p);
  }
  reader.finish();
  return model;
}

} // namespace

ParameterServer parse_parameter_server(JsonReader& reader, const ClusterSpec& cluster) {
  ParameterServer ps;
  ps.policy = reader.enum_choice_or<PsPolicy>("policy", PsPolicy::Sync);
  ps.staleness_bound = static_cast<int>(reader.integer("staleness_bound"));
  ps.local_steps = static_cast<int>(reader.integer("local_steps"));
  ps.server_shards = static_cast<int>(reader.integer("server_shards"));
  if (ps.server_shards >= cluster.nodes)
    throw InputError(reader.source(), reader.pointer() + "/server_shards",
                     fmt::format("the shards take the last nodes, one each, and the workers the others: expected "
                                 "fewer shards than the {} nodes, got {}",
                                 cluster.nodes, ps.server_shards));
  const int available = (cluster.nodes - ps.server_shards) * cluster.gpus_per_node;
  ps.workers = static_cast<int>(reader.integer_or("workers", available));
  if (ps.workers > available)
    throw InputError(reader.source(), reader.pointer() + "/workers",
                     fmt::format("expected at most the {} GPUs of the nodes the shards leave ({} nodes of {} GPUs), "
                                 "got {}",
                                 available, cluster.nodes - ps.server_shards, cluster.gpus_per_node, ps.workers));
  if (auto speeds = reader.optional_child("worker_speeds")) {
    const auto n = static_cast<std::size_t>(ps.workers);
    if (!speeds->value().is_array() || speeds->value().size() != n)
      throw speeds->error(fmt::format("expected an array of one speed per worker ({}), got {}", n,
                                      speeds->value().is_array() ? fmt::format("{} speeds", speeds->value().size())
                                                                 : speeds->type_name()));
    for (const JsonReader& item : speeds->elements(n, n)) ps.worker_speeds.push_back(item.as_number());
  } else {
    ps.worker_speeds.assign(static_cast<std::size_t>(ps.workers), 1.0);
  }
  if (auto jitter = reader.optional_child("jitter")) {
    ComputeJitter j;
    j.kind = jitter->enum_choice<DistributionKind>("distribution");
    if (j.kind == DistributionKind::Empirical)
      throw InputError(jitter->source(), jitter->pointer() + "/distribution",
                       "a jitter factor is drawn from a shape; expected fixed, exponential, lognormal or gamma");
    const bool shaped = j.kind == DistributionKind::LogNormal || j.kind == DistributionKind::Gamma;
    if (shaped) {
      j.cv = jitter->number("cv");
    } else if (jitter->has("cv")) {
      throw InputError(jitter->source(), jitter->pointer() + "/cv",
                       fmt::format("a {} factor has no cv to set (fixed: 0, exponential: 1); expected no such key",
                                   enum_name(j.kind)));
    } else {
      j.cv = j.kind == DistributionKind::Exponential ? 1.0 : 0.0;
    }
    jitter->finish();
    ps.jitter = j;
  }
  if (reader.has("update_time")) ps.update_time = reader.quantity("update_time");
  ps.request_bytes = reader.quantity("request_bytes");
  if (reader.has("statistical_efficiency"))
    ps.statistical_efficiency = parse_statistical_efficiency(reader.child("statistical_efficiency"));
  reader.finish();
  return ps;
}

std::string describe(const ParameterServer& ps) {
  std::string policy(enum_name(ps.policy));
  if (ps.policy == PsPolicy::Ssp) policy += fmt::format(" s={}", ps.staleness_bound);
  if (ps.policy == PsPolicy::LocalSgd) policy += fmt::format(" H={}", ps.local_steps);
  return fmt::format("parameter server: {} workers, {} server shard{}, {}", ps.workers, ps.server_shards,
                     ps.server_shards == 1 ? "" : "s", policy);
}

} // namespace partsim
