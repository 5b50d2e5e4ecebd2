// The enum-name tables: every value named once, names unique, both directions agree, and the parser's choices are
// the table's names.
#include "partsim/common/enum_names.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/model/cnn.hpp"
#include "partsim/model/collective_cost.hpp"
#include "partsim/model/compute_op.hpp"
#include "partsim/model/transformer.hpp"
#include "partsim/plan/class_split.hpp"
#include "partsim/report/timeline.hpp"

#include <gtest/gtest.h>

#include <set>

namespace partsim {
namespace {

template <NamedEnum E>
void expect_table_is_a_bijection(std::size_t values) {
  const auto& entries = EnumNames<E>::entries;
  EXPECT_EQ(entries.size(), values) << "every value of the enum has a name";
  std::set<int> seen_values;
  std::set<std::string_view> seen_names;
  for (const EnumEntry<E>& entry : entries) {
    EXPECT_TRUE(seen_values.insert(static_cast<int>(entry.value)).second) << entry.name;
    EXPECT_TRUE(seen_names.insert(entry.name).second) << entry.name;
    EXPECT_FALSE(entry.name.empty());
    EXPECT_EQ(enum_name(entry.value), entry.name);
    EXPECT_EQ(enum_value<E>(entry.name), entry.value);
  }
  for (int v = 0; v < static_cast<int>(values); ++v) EXPECT_NE(enum_name(static_cast<E>(v)), "?") << v;
  EXPECT_EQ(enum_value<E>("no such name"), std::nullopt);
  EXPECT_EQ(enum_names<E>().size(), values);
}

TEST(EnumNames, EveryTableIsABijection) {
  expect_table_is_a_bijection<CollectiveOp>(5);
  expect_table_is_a_bijection<CollectiveAlgorithm>(7);
  expect_table_is_a_bijection<Fidelity>(3);
  expect_table_is_a_bijection<CommKind>(5);
  expect_table_is_a_bijection<NetworkModel>(2);
  expect_table_is_a_bijection<GradientSync>(2);
  expect_table_is_a_bijection<Optimizer>(3);
  expect_table_is_a_bijection<BalancingPolicy>(4);
  expect_table_is_a_bijection<PipelineSchedule>(3);
  expect_table_is_a_bijection<ParallelAxis>(3);
  expect_table_is_a_bijection<ContextComm>(3);
  expect_table_is_a_bijection<ExpertDispatch>(2);
  expect_table_is_a_bijection<ExpertDistribution>(3);
  expect_table_is_a_bijection<SwitchLevel>(3);
  expect_table_is_a_bijection<SplitMethod>(3);
  expect_table_is_a_bijection<TransformerArchitecture>(2);
  expect_table_is_a_bijection<MlpKind>(2);
  expect_table_is_a_bijection<PositionEmbedding>(2);
  expect_table_is_a_bijection<NormKind>(2);
  expect_table_is_a_bijection<Recomputation>(3);
  expect_table_is_a_bijection<OpKind>(8);
  expect_table_is_a_bijection<AttentionKernel>(4);
  expect_table_is_a_bijection<TrainingStack>(4);
  expect_table_is_a_bijection<IntervalKind>(5);
  expect_table_is_a_bijection<CnnLayerKind>(7);
}

TEST(EnumNames, ToStringReadsTheTable) {
  EXPECT_EQ(to_string(CollectiveOp::ReduceScatter), "reduce_scatter");
  EXPECT_EQ(to_string(PipelineSchedule::OneFOneB), "1f1b");
  EXPECT_EQ(to_string(Recomputation::Selective), "selective");
  EXPECT_EQ(to_string(SplitMethod::StratifiedOversample), "stratified_oversample");
  EXPECT_EQ(parse_split_method("stratified"), SplitMethod::Stratified);
}

} // namespace
} // namespace partsim
