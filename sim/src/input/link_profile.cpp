// Link profile parsing, lookup by name under models/links, and serialisation.
#include "partsim/input/link_profile.hpp"

#include "partsim/input/data_dir.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/json_reader.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace partsim {

LinkProfile parse_link_profile(JsonReader& reader) {
  LinkProfile link;
  reader.integer("schema_version", kLinkSchemaVersion, kLinkSchemaVersion);
  reader.choice("kind", {"link"});
  link.name = reader.string("name");
  link.description = reader.string_or("description", "");
  link.scope = reader.choice("scope", {"intra_node", "inter_node"});
  link.bandwidth_per = reader.choice("bandwidth_per", {"gpu", "port", "switch"});
  link.bandwidth = parse_figure(reader.child("bandwidth"), Dimension::Bandwidth, Bounds::positive());
  link.latency = parse_figure(reader.child("latency"), Dimension::Time, Bounds::closed(0.0, 10.0));
  if (reader.has("efficiency"))
    link.efficiency = parse_fraction_figure(reader.child("efficiency"), Bounds::closed(0.01, 1.0));
  if (reader.has("nvls")) {
    JsonReader nvls = reader.child("nvls");
    if (link.scope != "intra_node")
      throw nvls.error("NVLink SHARP is a feature of an intra-node switch; expected it only with scope \"intra_node\"");
    link.nvls = LinkProfile::Nvls{parse_fraction_figure(nvls.child("efficiency"), Bounds::closed(0.01, 1.0)),
                                  parse_figure(nvls.child("latency"), Dimension::Time, Bounds::closed(0.0, 1e-3)),
                                  std::nullopt, std::nullopt};
    if (nvls.has("tree_head_bandwidth")) {
      JsonReader head = nvls.child("tree_head_bandwidth");
      link.nvls->tree_head_two_nodes = parse_figure(head.child("two_nodes"), Dimension::Bandwidth, Bounds::positive());
      link.nvls->tree_head_more_nodes =
          parse_figure(head.child("three_or_more_nodes"), Dimension::Bandwidth, Bounds::positive());
      head.finish();
    }
    nvls.finish();
  }
  if (reader.has("ll_max_bandwidth")) {
    if (link.scope != "intra_node")
      throw reader.child("ll_max_bandwidth")
          .error("LL's bandwidth between the GPUs of one node; expected it only with scope \"intra_node\"");
    link.ll_max_bandwidth = parse_figure(reader.child("ll_max_bandwidth"), Dimension::Bandwidth, Bounds::positive());
  }
  if (link.scope == "intra_node" && reader.has("transport"))
    link.transport = reader.choice("transport", {"nvlink", "pcie"});
  else if (reader.has("transport"))
    throw reader.child("transport")
        .error("the transport of an intra-node link; expected it only with scope "
               "\"intra_node\"");
  link.switch_profile = reader.string_or("switch", "");
  if (!link.switch_profile.empty() && (link.scope != "inter_node" || link.bandwidth_per == "switch"))
    throw reader.child("switch").error(
        "names the switch a NIC's network uses; expected it only on an inter_node link with bandwidth per port");
  reader.finish();
  return link;
}

LinkProfile load_link_profile(const std::filesystem::path& data_dir, const std::string& name, const std::string& source,
                              const std::string& pointer) {
  const auto path = library_file(data_dir, kLinkProfiles, name, source, pointer);
  const nlohmann::json doc = read_json_file(path);
  JsonReader reader(doc, path.string());
  LinkProfile link = parse_link_profile(reader);
  if (link.name != name)
    throw reader.error(fmt::format("profile name \"{}\" does not match its file name \"{}\"", link.name, name));
  return link;
}

std::vector<std::string> list_link_profiles(const std::filesystem::path& data_dir) {
  return list_library(data_dir, kLinkProfiles);
}

nlohmann::json to_json(const LinkProfile& link) {
  nlohmann::json out = {{"name", link.name},
                        {"description", link.description},
                        {"scope", link.scope},
                        {"bandwidth_per", link.bandwidth_per},
                        {"bandwidth", to_json(link.bandwidth)},
                        {"latency", to_json(link.latency)}};
  if (link.efficiency) out["efficiency"] = to_json(*link.efficiency);
  if (!link.switch_profile.empty()) out["switch"] = link.switch_profile;
  if (!link.transport.empty()) out["transport"] = link.transport;
  if (link.nvls) {
    out["nvls"] = {{"efficiency", to_json(link.nvls->efficiency)}, {"latency", to_json(link.nvls->latency)}};
    if (link.nvls->tree_head_two_nodes && link.nvls->tree_head_more_nodes)
      out["nvls"]["tree_head_bandwidth"] = {{"two_nodes", to_json(*link.nvls->tree_head_two_nodes)},
                                            {"three_or_more_nodes", to_json(*link.nvls->tree_head_more_nodes)}};
  }
  if (link.ll_max_bandwidth) out["ll_max_bandwidth"] = to_json(*link.ll_max_bandwidth);
  return out;
}

} // namespace partsim
