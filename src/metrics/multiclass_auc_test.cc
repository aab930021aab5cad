// Tests for MulticlassAuc: exact mode against sklearn roc_auc_score per class, binned mode against
// a restatement of torchmetrics 1.0.3's multiclass binned AUROC in torch 1.13, degenerate classes.
#include "metrics/multiclass_auc.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tzrec::metrics {
namespace multiclass_auc_test {

// rng = np.random.RandomState(7); logits = rng.randn(40, 3); probs = softmax(logits) rounded to 0.1
// (ties), as float32; labels = rng.randint(0, 3, 40).
const std::vector<double> kProbs = {
    0.8, 0.1, 0.1, 0.5, 0.2, 0.3, 0.3, 0.0, 0.7, 0.6, 0.2, 0.3, 0.5, 0.2, 0.2, 0.1, 0.6, 0.4, 0.2, 0.0, 0.8, 0.1, 0.1, 0.8,
    0.5, 0.1, 0.4, 0.0, 0.8, 0.2, 0.1, 0.8, 0.1, 0.7, 0.1, 0.2, 0.0, 0.4, 0.6, 0.2, 0.6, 0.2, 0.7, 0.2, 0.1, 0.0, 0.1, 0.9,
    0.2, 0.1, 0.8, 0.3, 0.3, 0.4, 0.5, 0.4, 0.1, 0.3, 0.2, 0.6, 0.4, 0.1, 0.5, 0.8, 0.1, 0.1, 0.2, 0.3, 0.5, 0.1, 0.8, 0.1,
    0.1, 0.4, 0.5, 0.2, 0.3, 0.5, 0.3, 0.1, 0.7, 0.6, 0.3, 0.1, 0.4, 0.3, 0.4, 0.4, 0.5, 0.2, 0.4, 0.4, 0.2, 0.4, 0.2, 0.4,
    0.8, 0.2, 0.1, 0.2, 0.2, 0.6, 0.4, 0.1, 0.5, 0.1, 0.7, 0.2, 0.8, 0.1, 0.1, 0.2, 0.5, 0.3, 0.1, 0.5, 0.4, 0.1, 0.1, 0.8};
const std::vector<int64_t> kLabels = {1, 1, 0, 1, 2, 0, 0, 0, 1, 0, 1, 1, 1, 2, 2, 0, 0, 0, 2, 2,
                                      0, 2, 2, 2, 1, 1, 1, 0, 1, 2, 0, 1, 0, 2, 1, 1, 1, 2, 2, 0};

torch::Tensor probs() { return torch::tensor(kProbs, torch::kFloat32).reshape({40, 3}); }
torch::Tensor labels() { return torch::tensor(kLabels); }

// sklearn 1.2.1: per = [roc_auc_score(labels == c, probs[:, c]) for c in range(3)]
//   = [0.368945868945869, 0.4573333333333333, 0.33779761904761907];
//   macro = mean(per) = 0.38802560710894046; weighted by bincount(labels) = 0.39274669312169314.
TEST(MulticlassAuc, ExactMatchesSklearnPerClass) {
  MulticlassAuc macro(3, 0, AucAverage::kMacro), weighted(3, 0, AucAverage::kWeighted), other(3, 0);
  macro.update(probs().slice(0, 0, 15), labels().slice(0, 0, 15));
  other.update(probs().slice(0, 15), labels().slice(0, 15));
  macro.merge(other);
  weighted.update(probs(), labels());
  auto per = macro.compute_per_class();
  ASSERT_EQ(per.size(), 3u);
  EXPECT_NEAR(per[0], 0.368945868945869, 1e-12);
  EXPECT_NEAR(per[1], 0.4573333333333333, 1e-12);
  EXPECT_NEAR(per[2], 0.33779761904761907, 1e-12);
  EXPECT_NEAR(macro.compute(), 0.38802560710894046, 1e-12);
  EXPECT_NEAR(weighted.compute(), 0.39274669312169314, 1e-12);
  EXPECT_EQ(macro.num_samples(), 40);
}

// torchmetrics 1.0.3 multiclass binned, restated in torch 1.13:
//   thr = linspace(0, 1, N); preds_t = (preds[..., None] >= thr).long(); target_t = one_hot(target, C)
//   m = preds_t + 2 * target_t[..., None] + 4 * arange(C)[None, :, None] + 4 * C * arange(N)
//   state = bincount(m.flatten(), minlength=4*C*N).reshape(N, C, 2, 2)
//   tpr = safe_divide(tp, tp + fn).flip(0).T; fpr likewise; res = trapz(tpr, fpr, dim=1)
//   macro = res.mean(); weighted = (res * safe_divide(w, w.sum())).sum(), w = state[0][:, 1, :].sum(-1)
// N=5: res = [0.40028488636016846, 0.4399999976158142, 0.3422619104385376], macro 0.3941822946071625,
//      weighted 0.3977711498737335. N=200: macro 0.3880256116390228, weighted 0.3927466869354248.
TEST(MulticlassAuc, BinnedMatchesTorchmetrics) {
  MulticlassAuc m5(3, 5), w5(3, 5, AucAverage::kWeighted), m200(3, 200), w200(3, 200, AucAverage::kWeighted);
  for (auto* m : {&m5, &w5, &m200, &w200}) m->update(probs(), labels());
  auto per = m5.compute_per_class();
  EXPECT_NEAR(per[0], 0.40028488636016846, 1e-6);
  EXPECT_NEAR(per[1], 0.4399999976158142, 1e-6);
  EXPECT_NEAR(per[2], 0.3422619104385376, 1e-6);
  EXPECT_NEAR(m5.compute(), 0.3941822946071625, 1e-6);
  EXPECT_NEAR(w5.compute(), 0.3977711498737335, 1e-6);
  EXPECT_NEAR(m200.compute(), 0.3880256116390228, 1e-6);
  EXPECT_NEAR(w200.compute(), 0.3927466869354248, 1e-6);
}

// Logits (values outside [0, 1]) → softmax over classes. Reference (same restatement, N=200):
//   per class [0.8333333730697632, 1.0, 1.0], macro 0.944444477558136; sklearn on the softmax: same.
// Labels without class 2 ([0, 1, 1, 0, 0]): torchmetrics scores class 2 as 0 and keeps it in the
//   macro mean: per class [1.0, 0.6666666269302368, 0.0], macro 0.555555522441864, weighted
//   (weights = positives 3, 2, 0) 0.8666666746139526.
TEST(MulticlassAuc, LogitsAndClassWithoutPositives) {
  auto lg = torch::tensor({2.0, -1.0, 0.5, 0.1, 0.2, 3.0, -0.5, 1.5, 0.0, 1.0, 1.0, -2.0, 0.3, -0.3, 0.9}).reshape({5, 3});
  MulticlassAuc binned(3, 200), exact(3, 0);
  binned.update(lg, torch::tensor({0, 2, 1, 1, 0}));
  exact.update(lg, torch::tensor({0, 2, 1, 1, 0}));
  EXPECT_NEAR(binned.compute(), 0.944444477558136, 1e-6);
  EXPECT_NEAR(exact.compute(), (0.8333333333333334 + 2.0) / 3.0, 1e-12);
  MulticlassAuc macro(3, 200), weighted(3, 200, AucAverage::kWeighted), ex(3, 0, parse_auc_average("weighted"));
  auto y2 = torch::tensor({0, 1, 1, 0, 0});
  macro.update(lg, y2);
  weighted.update(lg, y2);
  ex.update(lg, y2);
  auto per = macro.compute_per_class();
  EXPECT_NEAR(per[0], 1.0, 1e-6);
  EXPECT_NEAR(per[1], 0.6666666269302368, 1e-6);
  EXPECT_EQ(per[2], 0.0);
  EXPECT_NEAR(macro.compute(), 0.555555522441864, 1e-6);
  EXPECT_NEAR(weighted.compute(), 0.8666666746139526, 1e-6);
  EXPECT_NEAR(ex.compute(), (3 * 1.0 + 2 * 0.6666666666666667) / 5, 1e-12);
}

TEST(MulticlassAuc, EdgeCasesAndErrors) {
  MulticlassAuc m(3, 200);
  EXPECT_EQ(m.compute(), 0.0);  // nothing seen: every class scores 0
  m.update(torch::zeros({0, 3}), torch::zeros({0}, torch::kInt64));
  EXPECT_EQ(m.num_samples(), 0);
  // Single class present: no class has both positives and negatives → 0.
  m.update(torch::tensor({0.7, 0.2, 0.1, 0.6, 0.3, 0.1}).reshape({2, 3}), torch::tensor({0, 0}));
  EXPECT_EQ(m.compute(), 0.0);
  m.reset();
  EXPECT_EQ(m.num_samples(), 0);
  EXPECT_THROW(m.update(torch::tensor({NAN, 0.2f, 0.1f}).reshape({1, 3}), torch::tensor({0})), DataError);
  EXPECT_THROW(m.update(torch::tensor({0.7, 0.2, 0.1}).reshape({1, 3}), torch::tensor({3})), DataError);
  EXPECT_THROW(m.update(torch::tensor({0.7, 0.2, 0.1}).reshape({1, 3}), torch::tensor({-1})), DataError);
  EXPECT_THROW(m.update(torch::tensor({0.7, 0.2, 0.1}).reshape({1, 3}), torch::tensor({0.5})), DataError);
  EXPECT_THROW(m.update(torch::tensor({0.7, 0.3}).reshape({1, 2}), torch::tensor({0})), UsageError);
  EXPECT_THROW(MulticlassAuc(1), ConfigError);
  EXPECT_THROW(MulticlassAuc(3, 1), ConfigError);
  EXPECT_THROW(parse_auc_average("micro"), ConfigError);
  MulticlassAuc none(3, 0, AucAverage::kNone);
  EXPECT_THROW(none.compute(), UsageError);
}

}  // namespace multiclass_auc_test
}  // namespace tzrec::metrics
