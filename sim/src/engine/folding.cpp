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
  Folder(const RunContext& ctx) : ctx_(ctx), plan_(ctx.plan), n_(plan_.ranks.size()) {}

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

  const std::vector<Step>& steps(int rank) const { return plan_.ranks[static_cast<std::size_t>(rank)].steps; }
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
    for (const RankProgram& program : plan_.ranks)
      for (const Step& s : program.steps)
        if (const auto* c = std::get_if<CollectiveStep>(&s))
          if (c->fidelity != Fidelity::Analytic) analytic_[static_cast<std::size_t>(c->group)] = 0;
  }

  void find_replicas() {
    DisjointSets sets(n_);
    for (std::size_t g = 0; g < plan_.groups.size(); ++g)
      if (analytic_[g] == 0)
        for (int member : plan_.groups[g]) sets.unite(plan_.groups[g].front(), member);
    for (std::size_t r = 0; r < n_; ++r)
      for (const Step& s : steps(static_cast<int>(r))) {
        if (const auto* send = std::get_if<SendStep>(&s)) {
          sets.unite(static_cast<int>(r), send->peer);
        } else if (const auto* recv = std::get_if<RecvStep>(&s)) {
          sets.unite(static_cast<int>(r), recv->peer);
        }
      }
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
      const auto& sa = steps(a);
      const auto& sb = steps(b);
      if (sa.size() != sb.size()) return false;
      for (std::size_t k = 0; k < sa.size(); ++k) {
        if (sa[k].index() != sb[k].index()) return false;
        if (const auto* ca = std::get_if<ComputeStep>(&sa[k])) {
          const auto& cb = std::get<ComputeStep>(sb[k]);
          // Samples only count throughput (one tensor rank counts a micro-batch): unfold_results sets them.
          if (ca->amount != cb.amount || ca->label != cb.label) return false;
        } else if (const auto* xa = std::get_if<CollectiveStep>(&sa[k])) {
          const auto& xb = std::get<CollectiveStep>(sb[k]);
          if (xa->op != xb.op || xa->algorithm != xb.algorithm || xa->fidelity != xb.fidelity ||
              xa->bytes != xb.bytes || xa->root != xb.root || xa->stream != xb.stream || xa->kind != xb.kind ||
              xa->channels != xb.channels || xa->protocol != xb.protocol)
            return false;
          // A program meets the same group many times in a row (a layer's tensor collectives): keep one of a run, or
          // the pairs of a production plan fill gigabytes before the sort below removes them.
          if (group_pairs.empty() || group_pairs.back() != std::pair{xa->group, xb.group})
            group_pairs.emplace_back(xa->group, xb.group);
        } else if (const auto* pa = std::get_if<SendStep>(&sa[k])) {
          const auto& pb = std::get<SendStep>(sb[k]);
          if (phi(pa->peer) != pb.peer || pa->bytes != pb.bytes || pa->channel != pb.channel || pa->kind != pb.kind)
            return false;
        } else if (const auto* ra = std::get_if<RecvStep>(&sa[k])) {
          const auto& rb = std::get<RecvStep>(sb[k]);
          if (phi(ra->peer) != rb.peer || ra->channel != rb.channel || ra->kind != rb.kind) return false;
        }
      }
    }
    std::sort(group_pairs.begin(), group_pairs.end());
    group_pairs.erase(std::unique(group_pairs.begin(), group_pairs.end()), group_pairs.end());
    std::set<std::pair<int, int>> transfers; // (from, to) of the replica's message-level traffic
    for (const int rank : replica)
      for (const Step& s : steps(rank))
        if (const auto* send = std::get_if<SendStep>(&s)) {
          transfers.emplace(rank, send->peer);
          transfers.emplace(send->peer, rank); // LV08's acknowledgements flow back
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
        for (const Step& s : steps(rank)) {
          if (const auto* x = std::get_if<CollectiveStep>(&s)) {
            const auto g = static_cast<std::size_t>(x->group);
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
          } else if (const auto* send = std::get_if<SendStep>(&s)) {
            pairs.emplace(std::min(rank, send->peer), std::max(rank, send->peer));
          }
        }
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
  const auto iterations = static_cast<std::uint64_t>(ctx.plan.iterations);
  // What each simulated rank counted per step (samples, or bytes of an analytic collective), computed once.
  struct Counted {
    std::uint64_t samples = 0, sent = 0, received = 0;
  };
  std::vector<std::vector<Counted>> counted(folding.representative.size());
  const auto counts = [&](int rank) -> const std::vector<Counted>& {
    auto& c = counted[static_cast<std::size_t>(rank)];
    if (!c.empty()) return c;
    const auto& steps = ctx.plan.ranks[static_cast<std::size_t>(rank)].steps;
    c.resize(steps.size());
    for (std::size_t k = 0; k < steps.size(); ++k)
      if (const auto* compute = std::get_if<ComputeStep>(&steps[k])) {
        c[k].samples = compute->samples;
      } else if (const auto* step = std::get_if<CollectiveStep>(&steps[k]);
                 step != nullptr && step->fidelity == Fidelity::Analytic) {
        std::tie(c[k].sent, c[k].received) = analytic_bytes(ctx, *step, rank);
      }
    return c;
  };
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
    const auto& steps = ctx.plan.ranks[r].steps;
    const std::vector<Counted>& theirs = counts(rep);
    for (std::size_t k = 0; k < steps.size(); ++k) {
      if (const auto* compute = std::get_if<ComputeStep>(&steps[k])) {
        main.samples = main.samples - theirs[k].samples * iterations + compute->samples * iterations;
        continue;
      }
      const auto* step = std::get_if<CollectiveStep>(&steps[k]);
      if (step == nullptr || step->fidelity != Fidelity::Analytic) continue;
      const auto [sent, received] = analytic_bytes(ctx, *step, static_cast<int>(r));
      RankTimeline& t = step->stream == 0 ? main : stream;
      t.bytes_sent = t.bytes_sent - theirs[k].sent * iterations + sent * iterations;
      t.bytes_received = t.bytes_received - theirs[k].received * iterations + received * iterations;
    }
  }
}

} // namespace partsim::engine
