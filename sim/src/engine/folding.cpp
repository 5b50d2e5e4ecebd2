// Folding identical replicas (engine-internal). See folding.hpp.
#include "folding.hpp"

#include "collectives.hpp"
#include "partsim/common/random.hpp"
#include "platform.hpp"

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

/** A message-level group bigger than this makes its replica's paths too many to check pairwise: no folding. */
constexpr std::size_t kMaxCheckedGroup = 64;
/** More distinct replica classes than this: folding would save little; the search stops. */
constexpr std::size_t kMaxClasses = 64;

struct DisjointSets {
  std::vector<int> parent;
  explicit DisjointSets(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[static_cast<std::size_t>(x)] != x) {
      auto& p = parent[static_cast<std::size_t>(x)];
      p = parent[static_cast<std::size_t>(p)];
      x = p;
    }
    return x;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
  }
};

class Folder {
 public:
  Folder(const RunContext& ctx) : ctx_(ctx), plan_(ctx.plan), n_(plan_.ranks.size()) { summarise_programs(); }

  /** The folding, or why there is none (std::nullopt with reason_ set). */
  std::optional<Folding> run() {
    if (!std::holds_alternative<ProgramRun>(plan_.mode)) return fail("work is dispatched or coordinated at run time");
    if (n_ < 2) return fail("one rank");
    classify_groups();
    find_replicas();
    if (replicas_.size() < 2)
      return fail("all ranks form one replica (they exchange messages at steps or flows "
                  "fidelity, or pipeline transfers)");
    if (!match_replicas()) return std::nullopt;
    if (classes_.size() == replicas_.size())
      return fail(fmt::format("no two of the {} replicas are interchangeable", replicas_.size()));
    if (!same_partners() || !disjoint_resources()) return std::nullopt;
    return build();
  }

  const std::string& reason() const { return reason_; }

 private:
  std::optional<Folding> fail(std::string why) {
    reason_ = std::move(why);
    return std::nullopt;
  }
  bool refuse(std::string why) {
    reason_ = std::move(why);
    return false;
  }

  /** What the checks need of a program (ranks may share one, relabeled: Plan::steps_of), gathered once. */
  struct ProgramSummary {
    std::vector<int> peers;          ///< of its sends and receives, distinct
    std::vector<int> send_peers;     ///< of its sends, distinct
    std::vector<int> groups;         ///< of its collectives, distinct
    std::vector<int> message_groups; ///< of its collectives at steps or flows fidelity, distinct
  };
  void summarise_programs() {
    summaries_.resize(n_);
    const auto distinct = [](std::vector<int>& v) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    };
    for (std::size_t q = 0; q < n_; ++q) {
      if (plan_.ranks[q].like >= 0) continue;
      ProgramSummary& p = summaries_[q];
      for (const Step& s : plan_.ranks[q].own_steps)
        if (const auto* c = std::get_if<CollectiveStep>(&s)) {
          if (p.groups.empty() || p.groups.back() != c->group) p.groups.push_back(c->group);
          if (c->fidelity != Fidelity::Analytic && (p.message_groups.empty() || p.message_groups.back() != c->group))
            p.message_groups.push_back(c->group);
        } else if (const auto* send = std::get_if<SendStep>(&s)) {
          p.peers.push_back(send->peer);
          p.send_peers.push_back(send->peer);
        } else if (const auto* recv = std::get_if<RecvStep>(&s)) {
          p.peers.push_back(recv->peer);
        }
      distinct(p.peers);
      distinct(p.send_peers);
      distinct(p.groups);
      distinct(p.message_groups);
    }
  }
  const ProgramSummary& summary(int rank) const { return summaries_[static_cast<std::size_t>(plan_.owner(rank))]; }
  /** Rank `rank`'s name for peer `peer` / group `group` of the program it runs. */
  int peer(int rank, int peer) const { return peer + plan_.ranks[static_cast<std::size_t>(rank)].peer_shift; }
  int group(int rank, int group) const { return plan_.ranks[static_cast<std::size_t>(rank)].group(group); }
  /** Whether traffic can saturate `link` (Platform::never_saturated). */
  bool saturable(const sg4::Link* link) const { return ctx_.platform.never_saturated.count(link) == 0; }

  sg4::Host* host(int rank) const {
    return ctx_.platform.gpus.at(static_cast<std::size_t>(plan_.ranks[static_cast<std::size_t>(rank)].gpu));
  }

  int node_of(int rank) const { return ctx_.platform.node_of(plan_.ranks[static_cast<std::size_t>(rank)].gpu); }

  /** Whether two nodes' speeds change alike over time (the hosts' speeds at time 0 are compared separately). */
  bool same_speed_changes(int a, int b) const {
    const SpeedChange* ca = ctx_.platform.speed_change[static_cast<std::size_t>(a)];
    const SpeedChange* cb = ctx_.platform.speed_change[static_cast<std::size_t>(b)];
    return ca == cb || (ca != nullptr && cb != nullptr && ca->points == cb->points && ca->period == cb->period);
  }

  /** Whether the GPUs of ranks `a` and `b` have the same straggler factors in every iteration: compared by a
   * signature of each GPU's factors first, then exactly (a replica joins at most one class, so the exact comparisons
   * cost ranks x iterations draws in all). */
  bool same_stragglers(int a, int b) {
    const StragglerDraws* draws = ctx_.stragglers;
    if (draws == nullptr) return true;
    const int ga = plan_.ranks[static_cast<std::size_t>(a)].gpu;
    const int gb = plan_.ranks[static_cast<std::size_t>(b)].gpu;
    if (ga == gb) return true;
    if (straggler_signature_.empty()) {
      straggler_signature_.assign(ctx_.platform.gpus.size(), 0);
      for (const RankProgram& p : plan_.ranks) {
        std::uint64_t& h = straggler_signature_[static_cast<std::size_t>(p.gpu)];
        h = std::bit_cast<std::uint64_t>(draws->fixed_factor(p.gpu));
        for (std::int64_t it = 0; it < plan_.iterations; ++it)
          if (const auto [straggles, f] = draws->random_draw(p.gpu, it); straggles)
            h = SplitMix64(h ^ static_cast<std::uint64_t>(it) ^ std::bit_cast<std::uint64_t>(f)).next();
      }
    }
    return straggler_signature_[static_cast<std::size_t>(ga)] == straggler_signature_[static_cast<std::size_t>(gb)] &&
           draws->same_factors(ga, gb, plan_.iterations);
  }

  /** A group is analytic when every collective on it is: it touches no link, so replicas may meet there. */
  void classify_groups() {
    analytic_.assign(plan_.groups.size(), 1);
    for (std::size_t r = 0; r < n_; ++r)
      for (const int g : summary(static_cast<int>(r)).message_groups)
        analytic_[static_cast<std::size_t>(group(static_cast<int>(r), g))] = 0;
  }

  void find_replicas() {
    DisjointSets sets(n_);
    for (std::size_t g = 0; g < plan_.groups.size(); ++g)
      if (analytic_[g] == 0)
        for (int member : plan_.groups[g]) sets.unite(plan_.groups[g].front(), member);
    for (std::size_t r = 0; r < n_; ++r)
      for (const int p : summary(static_cast<int>(r)).peers)
        sets.unite(static_cast<int>(r), peer(static_cast<int>(r), p));
    replica_of_.assign(n_, -1);
    index_in_replica_.assign(n_, -1);
    std::vector<int> replica_of_root(n_, -1);
    for (std::size_t r = 0; r < n_; ++r) {
      int& replica = replica_of_root[static_cast<std::size_t>(sets.find(static_cast<int>(r)))];
      if (replica < 0) {
        replica = static_cast<int>(replicas_.size());
        replicas_.emplace_back();
      }
      auto& members = replicas_[static_cast<std::size_t>(replica)];
      replica_of_[r] = replica;
      index_in_replica_[r] = static_cast<int>(members.size());
      members.push_back(static_cast<int>(r));
    }
  }

  /** Assigns every replica a class: the first earlier replica it is interchangeable with, or a new one. */
  bool match_replicas() {
    class_of_.assign(replicas_.size(), -1);
    for (std::size_t c = 0; c < replicas_.size(); ++c) {
      for (std::size_t k = 0; k < classes_.size() && class_of_[c] < 0; ++k) {
        const int first = classes_[k].front();
        if (interchangeable(replicas_[c], replicas_[static_cast<std::size_t>(first)])) {
          class_of_[c] = static_cast<int>(k);
          classes_[k].push_back(static_cast<int>(c));
        }
      }
      if (class_of_[c] >= 0) continue;
      if (classes_.size() == kMaxClasses)
        return refuse(fmt::format("more than {} kinds of replica (a class per replica that differs)", kMaxClasses));
      class_of_[c] = static_cast<int>(classes_.size());
      classes_.push_back({static_cast<int>(c)});
    }
    return true;
  }

  /** Rank `a` of one replica against rank `b` at the same index of another: `phi` maps the first replica's ranks to
   * the second's. Records the analytic group pairs and the message-level group images met. */
  bool interchangeable(const std::vector<int>& replica, const std::vector<int>& reference) {
    if (replica.size() != reference.size()) return false;
    const auto phi = [&](int rank) {
      return reference[static_cast<std::size_t>(index_in_replica_[static_cast<std::size_t>(rank)])];
    };
    std::vector<std::pair<int, int>> group_pairs;
    for (std::size_t i = 0; i < replica.size(); ++i) {
      const int a = replica[i];
      const int b = reference[i];
      sg4::Host* ha = host(a);
      sg4::Host* hb = host(b);
      if (ha->get_speed() != hb->get_speed() || ha->get_core_count() != hb->get_core_count() ||
          !same_speed_changes(node_of(a), node_of(b)) || !same_stragglers(a, b))
        return false;
      if (plan_.owner(a) == plan_.owner(b)) {
        // One program, relabeled for each: equal step for step but for the peers and the groups.
        for (const int p : summary(a).peers)
          if (phi(peer(a, p)) != peer(b, p)) return false;
        for (const int g : summary(a).groups) group_pairs.emplace_back(group(a, g), group(b, g));
        continue;
      }
      const StepsView sa = plan_.steps_of(a);
      const StepsView sb = plan_.steps_of(b);
      if (sa.size() != sb.size()) return false;
      for (std::size_t k = 0; k < sa.size(); ++k) {
        const Step ska = sa[k];
        const Step skb = sb[k];
        if (ska.index() != skb.index()) return false;
        if (const auto* ca = std::get_if<ComputeStep>(&ska)) {
          const auto& cb = std::get<ComputeStep>(skb);
          // Samples only count throughput (one tensor rank counts a micro-batch): unfold_results sets them.
          if (ca->amount != cb.amount || ca->label != cb.label || ca->beside_next != cb.beside_next) return false;
        } else if (const auto* xa = std::get_if<CollectiveStep>(&ska)) {
          const auto& xb = std::get<CollectiveStep>(skb);
          if (xa->op != xb.op || xa->algorithm != xb.algorithm || xa->fidelity != xb.fidelity ||
              xa->bytes != xb.bytes || xa->root != xb.root || xa->stream != xb.stream || xa->kind != xb.kind ||
              xa->channels != xb.channels || xa->protocol != xb.protocol)
            return false;
          // A program meets the same group many times in a row (a layer's tensor collectives): keep one of a run, or
          // the pairs of a production plan fill gigabytes before the sort below removes them.
          if (group_pairs.empty() || group_pairs.back() != std::pair{xa->group, xb.group})
            group_pairs.emplace_back(xa->group, xb.group);
        } else if (const auto* pa = std::get_if<SendStep>(&ska)) {
          const auto& pb = std::get<SendStep>(skb);
          if (phi(pa->peer) != pb.peer || pa->bytes != pb.bytes || pa->channel != pb.channel || pa->kind != pb.kind)
            return false;
        } else if (const auto* ra = std::get_if<RecvStep>(&ska)) {
          const auto& rb = std::get<RecvStep>(skb);
          if (phi(ra->peer) != rb.peer || ra->channel != rb.channel || ra->kind != rb.kind) return false;
        } else if (const auto* wa = std::get_if<StreamSyncStep>(&ska)) {
          if (wa->pending != std::get<StreamSyncStep>(skb).pending) return false;
        } else if (const auto* ha = std::get_if<HostStep>(&ska)) {
          if (ha->seconds != std::get<HostStep>(skb).seconds) return false;
        }
      }
    }
    std::sort(group_pairs.begin(), group_pairs.end());
    group_pairs.erase(std::unique(group_pairs.begin(), group_pairs.end()), group_pairs.end());
    std::set<std::pair<int, int>> transfers; // (from, to) of the replica's message-level traffic
    for (const int rank : replica)
      for (const int p : summary(rank).send_peers) {
        transfers.emplace(rank, peer(rank, p));
        transfers.emplace(peer(rank, p), rank); // LV08's acknowledgements flow back
      }
    for (const auto& [ga, gb] : group_pairs) {
      const auto ia = static_cast<std::size_t>(ga);
      if (analytic_[ia] != analytic_[static_cast<std::size_t>(gb)]) return false;
      if (analytic_[ia]) {
        if (!same_closed_form(ctx_, ga, gb)) return false;
      } else {
        const auto& ma = plan_.groups[ia];
        const auto& mb = plan_.groups[static_cast<std::size_t>(gb)];
        if (ma.size() != mb.size()) return false;
        for (std::size_t m = 0; m < ma.size(); ++m)
          if (phi(ma[m]) != mb[m]) return false;
        if (ma.size() <= kMaxCheckedGroup) // larger ones: disjoint_resources() refuses to fold
          for (const int x : ma)
            for (const int y : ma)
              if (x != y) transfers.emplace(x, y);
      }
    }
    if (!same_routes(transfers, phi)) return false;
    for (const auto& pair : group_pairs) image_pairs_.push_back(pair);
    return true;
  }

  /** Equal programs on equal GPUs are not enough: the same transfer can cross NVLink in one replica and the network
   * in another (a pipeline split across a node boundary), or an extra leaf uplink. Corresponding transfers must cross
   * links of the same figures, and a link of one replica must always stand for the same link of the other and no
   * other (a bijection), so the transfers share links alike and contend alike. */
  template <typename Phi>
  bool same_routes(const std::set<std::pair<int, int>>& transfers, const Phi& phi) const {
    std::unordered_map<const sg4::Link*, const sg4::Link*> image;
    std::unordered_map<const sg4::Link*, const sg4::Link*> preimage;
    std::vector<sg4::Link*> la;
    std::vector<sg4::Link*> lb;
    for (const auto& [x, y] : transfers) {
      la.clear();
      lb.clear();
      double latency_a = 0.0;
      double latency_b = 0.0;
      host(x)->route_to(host(y), la, &latency_a);
      host(phi(x))->route_to(host(phi(y)), lb, &latency_b);
      if (la.size() != lb.size() || latency_a != latency_b) return false;
      for (std::size_t i = 0; i < la.size(); ++i) {
        const sg4::Link* a = la[i];
        const sg4::Link* b = lb[i];
        if (a->get_bandwidth() != b->get_bandwidth() || a->get_latency() != b->get_latency() ||
            a->get_sharing_policy() != b->get_sharing_policy())
          return false;
        // A link that never limits a rate need not stand for one link only: who else crosses it does not matter.
        if (saturable(a) != saturable(b)) return false;
        if (!saturable(a)) continue;
        if (image.emplace(a, b).first->second != b || preimage.emplace(b, a).first->second != a) return false;
      }
    }
    return true;
  }

  /** The simulated rank whose timeline `rank` takes: the one at its index in its class's first replica. */
  int representative(int rank) const {
    const auto replica = static_cast<std::size_t>(replica_of_[static_cast<std::size_t>(rank)]);
    const auto first = classes_[static_cast<std::size_t>(class_of_[replica])].front();
    return replicas_[static_cast<std::size_t>(first)]
                    [static_cast<std::size_t>(index_in_replica_[static_cast<std::size_t>(rank)])];
  }

  /** An analytic instance starts when its last member arrives, and a member arrives when its representative does.
   * The folded run waits only for the simulated members of the group that stands for it, so the group's members must
   * have exactly those as representatives: the same classes are not enough (a group holding the representative of
   * one class and a folded rank of another, whose representative sits in a second group, would not wait for it). A
   * group with simulated members stands for itself only. Also fixes each group's image (a group with no simulated
   * member is replaced by one that has). */
  bool same_partners() {
    const auto representatives = [&](int g) {
      std::vector<int> reps;
      for (const int member : plan_.groups[static_cast<std::size_t>(g)]) reps.push_back(representative(member));
      std::sort(reps.begin(), reps.end());
      reps.erase(std::unique(reps.begin(), reps.end()), reps.end());
      return reps;
    };
    const auto simulated_members = [&](int g) {
      std::vector<int> sim;
      for (const int member : plan_.groups[static_cast<std::size_t>(g)])
        if (representative(member) == member) sim.push_back(member);
      std::sort(sim.begin(), sim.end());
      return sim;
    };
    std::sort(image_pairs_.begin(), image_pairs_.end());
    image_pairs_.erase(std::unique(image_pairs_.begin(), image_pairs_.end()), image_pairs_.end());
    image_.assign(plan_.groups.size(), -1);
    for (const auto& [ga, gb] : image_pairs_) {
      if (analytic_[static_cast<std::size_t>(ga)]) {
        const std::vector<int> own = simulated_members(ga);
        if (!own.empty() && ga != gb)
          return refuse(fmt::format("group {} has simulated members but stands for group {}", ga, gb));
        if (representatives(ga) != (own.empty() ? simulated_members(gb) : own))
          return refuse(fmt::format("analytic group {} would not wait for all its members: their representatives are "
                                    "not the simulated members of group {}",
                                    ga, gb));
      }
      if (ga == gb) continue;
      int& image = image_[static_cast<std::size_t>(ga)];
      if (image >= 0 && image != gb)
        return refuse(fmt::format("group {} stands for groups {} and {} in different replicas", ga, image, gb));
      image = gb;
    }
    return true;
  }

  /** No two replicas may share a GPU or a link their message-level traffic uses, so none slows another down. */
  bool disjoint_resources() {
    std::unordered_map<const sg4::Host*, int> host_owner;
    std::unordered_map<const sg4::Link*, int> link_owner;
    std::vector<sg4::Link*> links;
    std::vector<int> group_seen_in(plan_.groups.size(), -1); // the replica whose pairs of it were added
    for (std::size_t c = 0; c < replicas_.size(); ++c) {
      std::set<std::pair<int, int>> pairs;
      for (int rank : replicas_[c]) {
        auto [it, fresh] = host_owner.emplace(host(rank), static_cast<int>(c));
        if (!fresh && it->second != static_cast<int>(c))
          return refuse(fmt::format("replicas {} and {} share a GPU", it->second, c));
        for (const int program_group : summary(rank).groups) {
          const auto g = static_cast<std::size_t>(group(rank, program_group));
          // Every pair of a message-level group's members, once per group (not per collective and member).
          if (analytic_[g] || group_seen_in[g] == static_cast<int>(c)) continue;
          group_seen_in[g] = static_cast<int>(c);
          const auto& members = plan_.groups[g];
          if (members.size() > kMaxCheckedGroup)
            return refuse(fmt::format("a message-level group of {} ranks (more than {} to check pairwise)",
                                      members.size(), kMaxCheckedGroup));
          for (std::size_t i = 0; i < members.size(); ++i)
            for (std::size_t j = i + 1; j < members.size(); ++j)
              pairs.emplace(std::min(members[i], members[j]), std::max(members[i], members[j]));
        }
        for (const int p : summary(rank).send_peers)
          pairs.emplace(std::min(rank, peer(rank, p)), std::max(rank, peer(rank, p)));
      }
      for (const auto& [a, b] : pairs) {
        for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
          links.clear();
          double latency = 0.0;
          host(from)->route_to(host(to), links, &latency);
          for (const sg4::Link* link : links) {
            if (!saturable(link)) continue; // replicas may share it: it never slows one down
            auto [it, fresh] = link_owner.emplace(link, static_cast<int>(c));
            if (!fresh && it->second != static_cast<int>(c))
              return refuse(fmt::format("replicas {} and {} share link {}", it->second, c, link->get_name()));
          }
        }
      }
    }
    return true;
  }

  Folding build() const {
    Folding f;
    f.active = true;
    f.representative.resize(n_);
    f.simulated.assign(n_, 0);
    for (std::size_t r = 0; r < n_; ++r) {
      const int rep = representative(static_cast<int>(r));
      f.representative[r] = rep;
      f.simulated[r] = static_cast<char>(rep == static_cast<int>(r));
      f.simulated_ranks += f.simulated[r] != 0 ? 1 : 0;
    }
    // A group with a simulated member stands for itself and for the groups whose image it is.
    f.group_weight.assign(plan_.groups.size(), 0);
    std::vector<char> has_simulated(plan_.groups.size(), 0);
    for (std::size_t g = 0; g < plan_.groups.size(); ++g)
      for (int member : plan_.groups[g])
        if (f.simulated[static_cast<std::size_t>(member)] != 0) has_simulated[g] = 1;
    for (std::size_t g = 0; g < plan_.groups.size(); ++g)
      if (has_simulated[g] != 0) f.group_weight[g] += 1;
    // An image is a group of its class's first replica, which is simulated whole.
    for (std::size_t g = 0; g < plan_.groups.size(); ++g)
      if (has_simulated[g] == 0 && image_[g] >= 0) f.group_weight[static_cast<std::size_t>(image_[g])] += 1;
    f.note = fmt::format("{} replicas in {} class{}: simulated {} of {} ranks", replicas_.size(), classes_.size(),
                         classes_.size() == 1 ? "" : "es", f.simulated_ranks, n_);
    return f;
  }

  const RunContext& ctx_;
  const Plan& plan_;
  std::size_t n_;
  std::string reason_;
  std::vector<char> analytic_;                     ///< per group
  std::vector<std::uint64_t> straggler_signature_; ///< per GPU, with stragglers (same_stragglers)
  std::vector<std::vector<int>> replicas_;         ///< ranks, in rank order
  std::vector<int> replica_of_;                    ///< per rank
  std::vector<int> index_in_replica_;              ///< per rank
  std::vector<int> class_of_;                      ///< per replica
  std::vector<std::vector<int>> classes_;          ///< replicas, first = the simulated one
  std::vector<std::pair<int, int>> image_pairs_;   ///< (group, its counterpart in the class's first replica)
  std::vector<int> image_;                         ///< per group: its counterpart, -1: itself
  std::vector<ProgramSummary> summaries_;          ///< per rank that runs its own program
};

} // namespace

Folding fold_replicas(const RunContext& ctx, bool enabled) {
  const std::size_t n = ctx.plan.ranks.size();
  Folding none;
  none.representative.resize(n);
  std::iota(none.representative.begin(), none.representative.end(), 0);
  none.simulated.assign(n, 1);
  none.group_weight.assign(ctx.plan.groups.size(), 1);
  none.simulated_ranks = n;
  if (!enabled) {
    none.note = "off (run.fold_replicas = false)";
    return none;
  }
  Folder folder(ctx);
  if (std::optional<Folding> folded = folder.run()) return *std::move(folded);
  none.note = "not folded: " + folder.reason();
  return none;
}

void unfold_results(const RunContext& ctx, const Folding& folding, RunResult& result) {
  if (!folding.active) return;
  const Plan& plan = ctx.plan;
  const auto iterations = static_cast<std::uint64_t>(plan.iterations);
  // Per program (ranks may share one, relabeled): the samples of its compute steps, and its analytic collectives
  // with how often each occurs (their bytes depend on the rank's position in its group), computed once.
  struct Tally {
    bool done = false;
    std::uint64_t samples = 0;
    std::vector<std::pair<CollectiveStep, std::uint64_t>> analytic;
  };
  std::vector<Tally> tallies(plan.ranks.size());
  const auto tally = [&](int rank) -> const Tally& {
    Tally& t = tallies[static_cast<std::size_t>(plan.owner(rank))];
    if (t.done) return t;
    t.done = true;
    const auto key = [](const CollectiveStep& c) {
      return std::tuple{c.group, c.op, c.algorithm, c.kind, c.bytes, c.root, c.stream, c.protocol, c.channels};
    };
    std::map<decltype(key(CollectiveStep{})), std::size_t> index; // into t.analytic
    for (const Step& s : plan.steps_of(rank).unrelabeled())
      if (const auto* compute = std::get_if<ComputeStep>(&s)) {
        t.samples += compute->samples;
      } else if (const auto* c = std::get_if<CollectiveStep>(&s); c != nullptr && c->fidelity == Fidelity::Analytic) {
        const auto [it, fresh] = index.try_emplace(key(*c), t.analytic.size());
        if (fresh) t.analytic.emplace_back(*c, 0);
        ++t.analytic[it->second].second;
      }
    return t;
  };
  // An analytic collective's bytes per iteration on each timeline (program, stream) of `rank`, under its groups.
  struct Bytes {
    std::uint64_t sent[2] = {0, 0}, received[2] = {0, 0};
  };
  const auto analytic = [&](int rank) {
    Bytes b;
    for (const auto& [step, count] : tally(rank).analytic) {
      CollectiveStep mine = step;
      mine.group = plan.ranks[static_cast<std::size_t>(rank)].group(step.group);
      const auto [sent, received] = analytic_bytes(ctx, mine, rank);
      const int t = step.stream == 0 ? 0 : 1;
      b.sent[t] += sent * count;
      b.received[t] += received * count;
    }
    return b;
  };
  std::vector<std::optional<Bytes>> simulated_bytes(plan.ranks.size());
  // Everything but the intervals, which stay with the representative (RunResult::intervals_of).
  const auto copy_figures = [](RankTimeline& to, RankTimeline& from) {
    std::vector<Interval> intervals = std::move(from.intervals);
    to = from;
    from.intervals = std::move(intervals);
  };
  result.representative = folding.representative;
  for (std::size_t r = 0; r < folding.representative.size(); ++r) {
    const int rep = folding.representative[r];
    if (rep == static_cast<int>(r)) continue;
    RankTimeline& main = result.ranks[r];
    RankTimeline& stream = result.streams[r];
    copy_figures(main, result.ranks[static_cast<std::size_t>(rep)]);
    copy_figures(stream, result.streams[static_cast<std::size_t>(rep)]);
    // The same times, but the programs (equal step for step, as fold_replicas checked) may count different samples,
    // and an analytic collective's bytes depend on the member's position in its group.
    main.samples = main.samples - tally(rep).samples * iterations + tally(static_cast<int>(r)).samples * iterations;
    auto& theirs = simulated_bytes[static_cast<std::size_t>(rep)];
    if (!theirs) theirs = analytic(rep);
    const Bytes mine = analytic(static_cast<int>(r));
    for (int t = 0; t < 2; ++t) {
      RankTimeline& line = t == 0 ? main : stream;
      line.bytes_sent = line.bytes_sent - theirs->sent[t] * iterations + mine.sent[t] * iterations;
      line.bytes_received = line.bytes_received - theirs->received[t] * iterations + mine.received[t] * iterations;
    }
  }
}

} // namespace partsim::engine
