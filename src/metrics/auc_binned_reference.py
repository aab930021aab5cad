"""Reference values for metrics::Auc::compute_binned() (used by auc_test.cc).

torchmetrics is not installed here, so this re-states torchmetrics 1.0.3's
BinaryAUROC(thresholds=N) with plain torch 1.13 ops, step by step:
  _binary_precision_recall_curve_format: sigmoid if any pred outside [0, 1];
      thresholds = torch.linspace(0, 1, N)
  _binary_precision_recall_curve_update: confmat[t, target, pred >= thr_t] counts
  _binary_roc_compute: tpr = safe_divide(tp, tp + fn).flip(0), same for fpr
  _auc_compute_without_check: torch.trapz(tpr, fpr)
Run: /usr/bin/python3 src/metrics/auc_binned_reference.py
"""
import json
import os

import torch


def safe_divide(num, denom):
    denom = denom.clone()
    denom[denom == 0.0] = 1
    return num.float() / denom.float()


def binned_auroc(preds, target, n):
    preds = preds.flatten()
    target = target.flatten().long()
    if not torch.all((0 <= preds) * (preds <= 1)):
        preds = preds.sigmoid()
    thresholds = torch.linspace(0, 1, n)
    preds_t = (preds.unsqueeze(-1) >= thresholds.unsqueeze(0)).long()
    mapping = preds_t + 2 * target.unsqueeze(-1) + 4 * torch.arange(n)
    state = torch.bincount(mapping.flatten(), minlength=4 * n).reshape(n, 2, 2)
    tps, fps, fns, tns = state[:, 1, 1], state[:, 0, 1], state[:, 1, 0], state[:, 0, 0]
    tpr = safe_divide(tps, tps + fns).flip(0)
    fpr = safe_divide(fps, fps + tns).flip(0)
    return torch.trapz(tpr, fpr).item()


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    ref = json.load(open(os.path.join(here, "../../tests/data/metrics/metric_reference.json")))
    for case in ref["cases"]:
        p = torch.tensor(case["preds"], dtype=torch.float32)
        y = torch.tensor(case["labels"])
        print(case["name"], {n: repr(binned_auroc(p, y, n)) for n in (2, 5, 200)})
    # Logits input (values outside [0, 1]) and the torchmetrics docstring example.
    print("logits", repr(binned_auroc(torch.tensor([-2.0, 0.3, 1.5, 0.1]), torch.tensor([0, 1, 1, 0]), 7)))
    print("docstring", repr(binned_auroc(torch.tensor([0, 0.5, 0.7, 0.8]), torch.tensor([0, 1, 1, 0]), 5)))
