// Energy and cost arithmetic against hand-computed cases, the scenario's /energy, /cost and /budget, and the time to
// train against Megatron-LM's closed form.
#include "partsim/input/hardware.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/model/transformer.hpp"
#include "partsim/report/energy_cost.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

namespace partsim {
namespace {

using nlohmann::json;

PowerFigures h100_power() {
  PowerFigures p;
  p.tdp.value = 700.0;
  p.idle.value = 70.0;
  return p;
}

/** The GPU powers only: nodes, switches and PUE drop out. */
EnergySpec gpus_only() {
  EnergySpec e;
  e.compute_power_fraction = 1.0;
  e.communication_power_fraction = 0.5;
  e.node_power = 0.0;
  e.switches = 0;
  e.switch_power = 0.0;
  e.pue = 1.0;
  return e;
}

TEST(Energy, IsThePowerTimesTimeOfEachState) {
  // 4 GPUs over 10 s: 25 GPU-s computing, 5 exposed communication, 10 idle (waits and the tail).
  const GpuStateTimes times{25.0, 5.0, 10.0};
  const RunExtent run{4, 1, 10.0, 2, std::nullopt};
  const EnergyFigures e = energy_figures(gpus_only(), h100_power(), times, run, 0.0);
  EXPECT_DOUBLE_EQ(e.gpu_compute, 25.0 * 700.0);
  EXPECT_DOUBLE_EQ(e.gpu_communication, 5.0 * 350.0);
  EXPECT_DOUBLE_EQ(e.gpu_idle, 10.0 * 70.0);
  EXPECT_DOUBLE_EQ(e.it_energy, 17500.0 + 1750.0 + 700.0);
  EXPECT_DOUBLE_EQ(e.facility_energy, 19950.0);
  EXPECT_DOUBLE_EQ(e.per_iteration, 19950.0 / 2);
  EXPECT_DOUBLE_EQ(e.average_power, 1995.0);
  EXPECT_FALSE(e.per_token);
  EXPECT_FALSE(e.budget);
}

TEST(Energy, IdleGpusDrawIdlePower) {
  // 8 GPUs that never compute nor communicate over 3 s draw 8 x 70 W.
  const RunExtent run{8, 1, 3.0, 1, std::nullopt};
  const EnergyFigures e = energy_figures(gpus_only(), h100_power(), GpuStateTimes{0.0, 0.0, 24.0}, run, 0.0);
  EXPECT_DOUBLE_EQ(e.gpu_idle, 8 * 3.0 * 70.0);
  EXPECT_DOUBLE_EQ(e.gpu_compute + e.gpu_communication, 0.0);
  EXPECT_DOUBLE_EQ(e.average_power, 8 * 70.0);
}

TEST(Energy, NodesSwitchesAndPue) {
  EnergySpec spec = gpus_only();
  spec.compute_power_fraction = 0.8; // 560 W
  spec.node_power = 4600.0;
  spec.switches = 3;
  spec.switch_power = 750.0;
  spec.pue = 1.25;
  // 2 nodes of 8 GPUs, 100 s, all computing.
  const RunExtent run{16, 2, 100.0, 4, 1e6};
  const EnergyFigures e = energy_figures(spec, h100_power(), GpuStateTimes{1600.0, 0.0, 0.0}, run, 3e9);
  EXPECT_DOUBLE_EQ(e.gpu_compute, 1600.0 * 560.0);      // 896 kJ
  EXPECT_DOUBLE_EQ(e.node_energy, 2 * 4600.0 * 100.0);  // 920 kJ
  EXPECT_DOUBLE_EQ(e.switch_energy, 3 * 750.0 * 100.0); // 225 kJ
  EXPECT_DOUBLE_EQ(e.it_energy, 2'041'000.0);
  EXPECT_DOUBLE_EQ(e.facility_energy, 2'551'250.0);
  EXPECT_DOUBLE_EQ(e.average_power, 25'512.5);
  EXPECT_DOUBLE_EQ(e.per_iteration, 2'551'250.0 / 4);
  ASSERT_TRUE(e.per_token && e.budget);
  EXPECT_DOUBLE_EQ(*e.per_token, 2.55125);
  EXPECT_DOUBLE_EQ(*e.budget, 2.55125 * 3e9);
}

TEST(Cost, CloudIsGpuHoursTimesThePrice) {
  CostSpec spec;
  spec.model = PricingModel::Cloud;
  spec.gpu_hour_price = 2.5;
  // 8 GPUs for 1800 s = 4 GPU-hours = 10; 1e6 tokens per run.
  const RunExtent run{8, 1, 1800.0, 10, 1e6};
  const CostFigures c = cost_figures(spec, EnergyFigures{}, run, 3e11);
  EXPECT_DOUBLE_EQ(c.hardware, 10.0);
  EXPECT_DOUBLE_EQ(c.electricity, 0.0);
  EXPECT_DOUBLE_EQ(c.total, 10.0);
  EXPECT_DOUBLE_EQ(c.per_iteration, 1.0);
  ASSERT_TRUE(c.per_million_tokens && c.budget && c.budget_time_days && c.budget_gpu_hours);
  EXPECT_DOUBLE_EQ(*c.per_million_tokens, 10.0);
  EXPECT_DOUBLE_EQ(*c.budget, 10.0 * 3e5);
  EXPECT_DOUBLE_EQ(*c.budget_gpu_hours, 4.0 * 3e5);
  EXPECT_DOUBLE_EQ(*c.budget_time_days, 1800.0 * 3e5 / 86400.0); // 6,250 days
}

TEST(Cost, OwnedIsAmortisedPurchasePlusElectricity) {
  CostSpec spec;
  spec.model = PricingModel::Owned;
  spec.gpu_purchase_price = 35064.0; // over 4 years of 8766 h: 1 per GPU-hour
  spec.lifetime_years = 4.0;
  spec.electricity_price = 0.1;
  EnergyFigures energy;
  energy.facility_energy = 36e6; // 10 kWh
  const RunExtent run{2, 1, 7200.0, 1, std::nullopt};
  const CostFigures c = cost_figures(spec, energy, run, 3e11);
  EXPECT_DOUBLE_EQ(c.gpu_hour_rate, 1.0);
  EXPECT_DOUBLE_EQ(c.hardware, 4.0);
  EXPECT_DOUBLE_EQ(c.electricity, 1.0);
  EXPECT_DOUBLE_EQ(c.total, 5.0);
  EXPECT_FALSE(c.per_million_tokens); // no tokens: no budget figures
  EXPECT_FALSE(c.budget);
}

TEST(Cost, MegatronClosedFormReproducesThePaper) {
  // Narayanan et al. (SC'21), section 5.1: GPT-3 175B on 300B tokens, 1024 A100s at 140 TFLOP/s: about 34 days; the
  // 1T model (1,008 billion parameters, table 1) on 450B tokens, 3072 A100s at 163 TFLOP/s: about 84 days.
  EXPECT_NEAR(megatron_time_to_train(300e9, 175e9, 1024, 140e12) / 86400.0, 34.0, 0.5);
  EXPECT_NEAR(megatron_time_to_train(450e9, 1.008e12, 3072, 163e12) / 86400.0, 84.0, 0.5);
}

TEST(Cost, TimeToTrainAgreesWithMegatronsClosedForm) {
  // GPT-3 175B with full recomputation, batch 1536 x 2048 tokens, an iteration at 140 TFLOP/s per GPU on 1024 GPUs:
  // the budget's days from partsim's flops against 8 x tokens x parameters / (GPUs x FLOP/s). The closed form leaves
  // out the attention scores and the logits (1 + s/6h + V/16lh = 1.031 for this model): within 4%, and above it.
  TransformerConfig c;
  c.layers = 96;
  c.hidden = 12288;
  c.heads = 96;
  c.ffn = 4 * 12288;
  c.vocab = 51200;
  c.sequence_length = 2048;
  const TransformerModel model(c);
  const std::int64_t batch = 1536;
  const double flops = model.training_flops(batch, Recomputation::Full).total();
  const double gpus = 1024;
  const double achieved = 140e12;
  const double tokens = static_cast<double>(batch * c.sequence_length);
  const RunExtent run{1024, 128, flops / (gpus * achieved), 1, tokens};
  CostSpec spec;
  spec.gpu_hour_price = 1.0;
  const CostFigures cost = cost_figures(spec, EnergyFigures{}, run, 300e9);
  ASSERT_TRUE(cost.budget_time_days);
  const double closed = megatron_time_to_train(300e9, model.parameters(), gpus, achieved) / 86400.0;
  EXPECT_GT(*cost.budget_time_days, closed);
  EXPECT_NEAR(*cost.budget_time_days / closed, 1.031, 0.01);
}

TEST(EnergyCostReport, GptThreeOn1024GpusAddsUpAndMeetsTheClosedForm) {
  // The shipped GPT-3 175B run with full recomputation (about 3 s): the report's energy is its states' power x time,
  // its GPU-state times fill GPUs x makespan, and its days to train are Megatron's closed form at the run's achieved
  // rate (HFU x the A100's 312 TFLOP/s) within the terms the closed form leaves out.
  const json r = test::run_scenario_json("gpt3-175b-3d-1024gpus.json", {"/workload/recomputation=full"});
  ASSERT_TRUE(r.contains("energy") && r.contains("cost")) << r.dump().substr(0, 200);
  const json& e = r["energy"];
  const double gpus = r["summary"]["gpus"].get<double>();
  const double makespan = r["summary"]["makespan_s"].get<double>();
  EXPECT_NEAR(e["gpu_compute_gpu_s"].get<double>() + e["gpu_communication_gpu_s"].get<double>() +
                  e["gpu_idle_gpu_s"].get<double>(),
              gpus * makespan, 1e-9 * gpus * makespan);
  EXPECT_DOUBLE_EQ(e["gpu_compute_power_w"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(e["gpu_idle_power_w"].get<double>(), 40.0);
  const double it = e["gpu_compute_gpu_s"].get<double>() * 400.0 + e["gpu_communication_gpu_s"].get<double>() * 200.0 +
                    e["gpu_idle_gpu_s"].get<double>() * 40.0 + 128 * 4600.0 * makespan +
                    e["switches"].get<double>() * 750.0 * makespan;
  EXPECT_NEAR(e["it_j"].get<double>(), it, 1e-9 * it);
  EXPECT_NEAR(e["facility_j"].get<double>(), 1.2 * it, 1e-9 * it);
  EXPECT_EQ(r["cost"]["assumed"], json::array({"/cost/gpu_hour_price", "/budget/tokens"}));
  EXPECT_TRUE(r["cost"]["example_prices"].get<bool>());
  EXPECT_EQ(r["energy"]["assumed"].back(), "/budget/tokens");

  TransformerConfig c;
  c.layers = 96;
  c.hidden = 12288;
  c.heads = 96;
  c.ffn = 4 * 12288;
  c.vocab = 50257; // models/workloads/gpt3-175b.json
  c.sequence_length = 2048;
  const double achieved = r["summary"]["hfu"].get<double>() * 312e12;
  const double closed = megatron_time_to_train(300e9, TransformerModel(c).parameters(), gpus, achieved) / 86400.0;
  const double days = r["cost"]["budget_days"].get<double>();
  EXPECT_GT(days / closed, 1.0);
  EXPECT_LT(days / closed, 1.05);
}

// --- the scenario's fields ----------------------------------------------------------------------------------

TEST(EnergyCostScenario, DefaultsAreResolvedAndListed) {
  json doc = test::base_scenario(4, 8); // 4 nodes on a star
  const Scenario s = test::parse(doc);
  EXPECT_DOUBLE_EQ(s.energy.node_power, 575.0 * 8);
  EXPECT_EQ(s.energy.switches, 1);
  EXPECT_DOUBLE_EQ(s.energy.switch_power, 750.0);
  EXPECT_DOUBLE_EQ(s.energy.pue, 1.2);
  EXPECT_EQ(s.energy.defaulted.size(), 6u);
  EXPECT_EQ(s.cost.model, PricingModel::Cloud);
  EXPECT_DOUBLE_EQ(s.cost.gpu_hour_price, 2.5);
  EXPECT_EQ(s.cost.defaulted, std::vector<std::string>{"/cost/gpu_hour_price"});
  EXPECT_DOUBLE_EQ(s.budget.tokens, 300e9);
  EXPECT_TRUE(s.budget.defaulted);
}

TEST(EnergyCostScenario, GivenFieldsAreTakenAndNotListed) {
  json doc = test::base_scenario(1, 8);
  doc["energy"] = {{"node_power", "2kW"}, {"pue", 1.1}, {"switches", 0}};
  doc["cost"] = {{"model", "owned"},
                 {"gpu_purchase_price", 40000},
                 {"lifetime_years", 4},
                 {"electricity_price", 0.12},
                 {"currency", "EUR"}};
  doc["budget"] = {{"tokens", 1e12}};
  const Scenario s = test::parse(doc);
  EXPECT_DOUBLE_EQ(s.energy.node_power, 2000.0);
  EXPECT_DOUBLE_EQ(s.energy.pue, 1.1);
  EXPECT_EQ(s.energy.defaulted,
            (std::vector<std::string>{"/energy/compute_power_fraction", "/energy/communication_power_fraction",
                                      "/energy/switch_power"}));
  EXPECT_EQ(s.cost.model, PricingModel::Owned);
  EXPECT_EQ(s.cost.currency, "EUR");
  EXPECT_TRUE(s.cost.defaulted.empty());
  EXPECT_DOUBLE_EQ(s.budget.tokens, 1e12);
  EXPECT_FALSE(s.budget.defaulted);
}

TEST(EnergyCostScenario, TopologySwitches) {
  json doc = test::base_scenario(1, 8);
  EXPECT_EQ(test::parse(doc).energy.switches, 0); // one node: NVLink only
}

TEST(EnergyCostScenario, BadInputNamesThePointer) {
  json doc = test::base_scenario();
  doc["energy"] = {{"pue", 0.9}};
  InputError e = test::input_error([&] { test::parse(doc); });
  EXPECT_EQ(e.pointer(), "/energy/pue");
  doc = test::base_scenario();
  doc["cost"] = {{"model", "leased"}};
  e = test::input_error([&] { test::parse(doc); });
  EXPECT_EQ(e.pointer(), "/cost/model");
  doc = test::base_scenario();
  doc["energy"] = {{"switch_power", "3 apples"}};
  e = test::input_error([&] { test::parse(doc); });
  EXPECT_EQ(e.pointer(), "/energy/switch_power");
  doc = test::base_scenario();
  doc["budget"] = {{"token", 1e9}};
  e = test::input_error([&] { test::parse(doc); });
  EXPECT_EQ(e.pointer(), "/budget/token");
  doc = test::base_scenario();
  doc["cost"] = {{"currency", ""}};
  e = test::input_error([&] { test::parse(doc); });
  EXPECT_EQ(e.pointer(), "/cost/currency");
}

} // namespace
} // namespace partsim
