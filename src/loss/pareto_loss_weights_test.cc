// pareto_loss_weights vs the reference algorithm run with numpy + scipy (float64): for a gradient
// matrix G (K × M) and bounds c,
//   GGT = G Gᵀ; M = [[GGT, 1], [1ᵀ, 0]]; z = [−GGT c; 1 − Σc]; hat = (inv(MᵀM) M z)[:K]
//   x0 = nnls(I, hat); x = minimize(‖x − hat‖, x0, SLSQP, x >= 0, Σx + Σc = 1); w = x + c
#include "loss/pareto_loss_weights.h"

#include <stdexcept>

#include <gtest/gtest.h>

namespace tzrec::loss {
namespace pareto_loss_weights_test {

torch::Tensor gram_of(const std::vector<std::vector<double>>& g) {
  std::vector<torch::Tensor> rows;
  for (const auto& r : g) rows.push_back(torch::tensor(r, torch::kFloat64));
  torch::Tensor m = torch::stack(rows);
  return m.matmul(m.t());
}

void expect_weights(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-9) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "weight " << i;
}

const std::vector<std::vector<double>> kTwoTasks = {{1.0, 0.5, -0.2, 0.3}, {0.2, -1.0, 0.4, 0.1}};

TEST(ParetoLossWeights, TwoTasksWithoutBoundsMatchReference) {
  // Closed form for K = 2: w1 = (g2·g2 − g1·g2) / ‖g1 − g2‖² = (1.21 + 0.35) / (1.38 + 1.21 + 0.7).
  auto w = pareto_loss_weights(gram_of(kTwoTasks), {0.0, 0.0});
  expect_weights(w, {0.47416413373860183, 0.5258358662613983});
  EXPECT_NEAR(w[0], 1.56 / 3.29, 1e-12);
}

TEST(ParetoLossWeights, InactiveBoundsGiveTheSameWeights) {
  expect_weights(pareto_loss_weights(gram_of(kTwoTasks), {0.1, 0.3}), {0.4741641337386019, 0.5258358662613982});
}

TEST(ParetoLossWeights, ProjectionClampsToTheBounds) {
  // hat = [−0.537, 1.534, −0.396]: two weights end at their bounds.
  auto w = pareto_loss_weights(gram_of({{2.0, 0.1, 0.0}, {0.5, 0.2, 0.1}, {-0.3, 1.5, 0.7}}), {0.1, 0.1, 0.2});
  expect_weights(w, {0.1, 0.7, 0.2}, 1e-8);
  // hat = [0.236, −0.377, 1.091]: the projection moves the other two weights as well.
  w = pareto_loss_weights(gram_of({{3.0, 1.0, 0.0, 0.5}, {2.5, 1.2, 0.1, 0.4}, {0.1, 0.2, 0.3, 0.4}}),
                          {0.0, 0.05, 0.0});
  expect_weights(w, {0.047218063641007946, 0.05, 0.9027819363589917}, 1e-8);
}

TEST(ParetoLossWeights, ScaleOfTheGradientsDoesNotMatter) {
  torch::Tensor gram = gram_of(kTwoTasks);
  expect_weights(pareto_loss_weights(gram * 1e-14, {0.0, 0.0}), {0.47416413373860183, 0.5258358662613983});
  expect_weights(pareto_loss_weights(gram.to(torch::kFloat32) * 1e6, {0.0, 0.0}),
                 {0.47416413373860183, 0.5258358662613983}, 1e-6);
}

TEST(ParetoLossWeights, DependentOrZeroGradientsStillGiveValidWeights) {
  // Identical gradients: any split is optimal; the minimum-norm solution splits evenly.
  expect_weights(pareto_loss_weights(gram_of({{1.0, 2.0}, {1.0, 2.0}}), {0.0, 0.0}), {0.5, 0.5});
  // No gradient at all (e.g. an all-frozen model): the bounds plus equal shares.
  expect_weights(pareto_loss_weights(torch::zeros({3, 3}), {0.1, 0.0, 0.3}), {0.1 + 0.2, 0.2, 0.3 + 0.2});
  // One task only: its weight is 1.
  expect_weights(pareto_loss_weights(torch::full({1, 1}, 4.0), {0.25}), {1.0});
}

TEST(ParetoLossWeights, RejectsBadInput) {
  EXPECT_THROW(pareto_loss_weights(torch::eye(2), {0.5, 0.5}), std::invalid_argument);  // Σc = 1
  EXPECT_THROW(pareto_loss_weights(torch::eye(2), {-0.1, 0.0}), std::invalid_argument);
  EXPECT_THROW(pareto_loss_weights(torch::eye(3), {0.0, 0.0}), std::invalid_argument);  // size mismatch
  EXPECT_THROW(pareto_loss_weights(torch::full({2, 2}, NAN), {0.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(pareto_loss_weights(torch::eye(0), {}), std::invalid_argument);
}

TEST(ProjectOntoSimplex, HandComputedCases) {
  expect_weights(project_onto_simplex({0.2, 0.3}, 1.0), {0.45, 0.55});         // shift by −0.25
  expect_weights(project_onto_simplex({2.0, -1.0, 0.0}, 1.0), {1.0, 0.0, 0.0});  // one vertex
  expect_weights(project_onto_simplex({0.5, 0.5, 0.5}, 0.6), {0.2, 0.2, 0.2});
  expect_weights(project_onto_simplex({0.1, 0.2}, 0.3), {0.1, 0.2});  // already inside
  EXPECT_THROW(project_onto_simplex({1.0}, 0.0), std::invalid_argument);
}

}  // namespace pareto_loss_weights_test
}  // namespace tzrec::loss
