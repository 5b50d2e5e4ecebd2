// A checkpoint's writes simulated on SimGrid (checkpoint_write.hpp).
#include "checkpoint_write.hpp"

#include "child_process.hpp"
#include "platform.hpp"

#include "partsim/common/error.hpp"

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <xbt/log.h>

#include <cmath>
#include <memory>
#include <string>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

double simulate_checkpoint_write_in_child(const Scenario& scenario, const std::vector<CheckpointWrite>& writes,
                                          double storage_bandwidth) {
  PARTSIM_CHECK(!writes.empty() && storage_bandwidth > 0.0) << writes.size() << " writers at " << storage_bandwidth;
  const std::string text = run_in_child("the checkpoint-write run", [&] {
    xbt_log_control_set("root.thresh:warning xbt_cfg.thresh:warning");
    auto& engine = new_engine("partsim-checkpoint");
    configure_network(scenario.run.network_model);
    configure_contexts(writes.size());
    const Platform platform = build_platform(scenario.cluster, workload_data_type(scenario.workload),
                                             /*with_coordinator=*/false, 1.0, storage_bandwidth);
    sg4::Mailbox* pool = sg4::Mailbox::by_name("checkpoint");
    double done = 0.0;
    // The pool receives every part, all posted at once; each writer sends its part as one transfer.
    sg4::Actor::create("storage", platform.storage, [&] {
      std::vector<sg4::CommPtr> comms;
      std::vector<double*> parts(writes.size(), nullptr);
      for (std::size_t i = 0; i < writes.size(); ++i) comms.push_back(pool->get_async<double>(&parts[i]));
      for (const sg4::CommPtr& c : comms) c->wait(); // not wait_all: quadratic in their number
      for (double* p : parts) std::unique_ptr<double>{p};
      done = sg4::Engine::get_clock();
    });
    for (const CheckpointWrite& w : writes)
      sg4::Actor::create("writer", platform.gpus.at(static_cast<std::size_t>(w.gpu)),
                         [pool, w] { pool->put(std::make_unique<double>(w.bytes).release(), std::ceil(w.bytes)); });
    engine.run();
    return fmt::format("{:.17g}", done);
  });
  return std::stod(text);
}

} // namespace partsim::engine
