// Collectives on SimGrid (engine-internal): each algorithm at each fidelity level.
#pragma once

#include "run_context.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace partsim::engine {

/** Builds the per-group state of every collective in the plan: mailboxes for the step-level algorithms it uses,
 * rendezvous for flows and analytic, the path figures (latency, bandwidth) between members. Call once after the
 * platform is built and ctx.positions is filled, before actors run. Throws InputError for a hierarchical all-reduce
 * over a group with different member counts per node. */
void prepare_collectives(RunContext& ctx);

/** After folding (`simulated` per rank): makes passive the communication streams whose collectives are all analytic or
 * flows on groups whose members' streams are all passive (RunContext::CommStream::passive), and starts the flow
 * driver actors of those groups. */
void prepare_passive_streams(RunContext& ctx, const std::vector<char>& simulated);

/** A passive stream's rank arrives now at `step` (the head of its queue); the last simulated member begins it. */
void arrive_passively(RunContext& ctx, int rank, const CollectiveStep& step);

/** Runs `step` for the member at position `pos` of its group (RunContext::position) in the calling actor until its
 * part of the collective is done, recording wait and communication in `timeline`. Collectives of different groups may
 * run at once on one rank (from different actors); those of one group run in the same order on every member. */
void run_collective(RunContext& ctx, int pos, RankTimeline& timeline, const CollectiveStep& step);

/** Whether collectives over groups `a` and `b` have the same closed form: the same size, members per node, nodes,
 * path figures and network ports (so analytic collectives of the same step take the same time). */
bool same_closed_form(const RunContext& ctx, int a, int b);

/** Bytes `rank` sends and receives in an analytic collective: they depend on its position in the group. */
std::pair<std::uint64_t, std::uint64_t> analytic_bytes(const RunContext& ctx, const CollectiveStep& step, int rank);

} // namespace partsim::engine
