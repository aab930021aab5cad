#!/usr/bin/python3
"""Reference learning-rate sequences for src/optim/lr_scheduler_test.cc.

Re-implements TorchEasyRec's schedules (tzrec/optim/lr_scheduler.py,
docs/tzrec-compatibility.md §2.7) from their formulas on top of torch's own LR scheduler base
class, so that the step counting (the initial step done by the constructor, `_step_count`) is
torch's and not ours. A real torch.optim.SGD holds the learning rate; the value recorded after k
calls of step() is optimizer.param_groups[0]["lr"].

Run with Debian's python (torch 1.13):  /usr/bin/python3 src/optim/lr_schedule_reference.py
and paste the printed C++ table into kReferenceCases in lr_scheduler_test.cc.
"""

import math

import torch

_Base = getattr(torch.optim.lr_scheduler, "LRScheduler", None) or torch.optim.lr_scheduler._LRScheduler


class _Schedule(_Base):
    """t = number of scheduler steps after construction (torch `_step_count - 1`)."""

    def get_lr(self):
        t = max(self._step_count - 1, 0)
        # A base learning rate of 0 is never changed by the schedule.
        return [b if b == 0 else self.value(b, t) for b in self.base_lrs]

    def value(self, base, t):
        raise NotImplementedError


def _linear_warmup(start, end, t, size):
    return (end - start) * (t / size) + start


class Constant(_Schedule):
    def value(self, base, t):
        return base


class ExponentialDecay(_Schedule):
    def __init__(self, opt, decay_size, decay_factor, staircase, warmup_lr, warmup_size, min_lr):
        self.a = (decay_size, decay_factor, staircase, warmup_lr, warmup_size, min_lr)
        super().__init__(opt)

    def value(self, base, t):
        decay_size, factor, staircase, warmup_lr, warmup_size, min_lr = self.a
        if t < warmup_size:
            return _linear_warmup(warmup_lr, base, t, warmup_size)
        exponent = (t - warmup_size) / decay_size
        if staircase:
            exponent = math.floor(exponent)
        return max(base * math.pow(factor, exponent), min_lr)


class ManualStep(_Schedule):
    def __init__(self, opt, sizes, rates, warmup):
        self.a = (sizes, rates, warmup)
        super().__init__(opt)

    def value(self, base, t):
        sizes, rates, warmup = self.a
        # number of boundaries strictly below t (bisect_left)
        passed = sum(1 for s in sizes if s < t)
        if passed > 0:
            return rates[passed - 1]
        if warmup:
            return _linear_warmup(base, rates[0], t, sizes[0])
        return base


class Cosine(_Schedule):
    def __init__(self, opt, t_max, min_lr, warmup_lr, warmup_size):
        self.a = (t_max, min_lr, warmup_lr, warmup_size)
        super().__init__(opt)

    def value(self, base, t):
        t_max, min_lr, warmup_lr, warmup_size = self.a
        if t < warmup_size:
            return _linear_warmup(warmup_lr, base, t, warmup_size)
        cur = min(t - warmup_size, t_max)
        return min_lr + (base - min_lr) * (0.5 * (1 + math.cos(math.pi * cur / t_max)))


class WarmRestarts(_Schedule):
    def __init__(self, opt, t_0, t_mult, min_lr, warmup_lr, warmup_size):
        self.a = (t_0, t_mult, min_lr, warmup_lr, warmup_size)
        super().__init__(opt)

    def value(self, base, t):
        t_0, t_mult, min_lr, warmup_lr, warmup_size = self.a
        if t < warmup_size:
            return _linear_warmup(warmup_lr, base, t, warmup_size)
        e = t - warmup_size
        if t_mult == 1:
            period, cur = t_0, e % t_0
        else:
            # The restart index is found with a floating-point log, as TorchEasyRec does: at some
            # restart boundaries (e.g. T_0=1, T_mult=10, e=111) the log lands just below an
            # integer and the step is treated as the end of the previous period.
            k = math.floor(math.log(e / t_0 * (t_mult - 1) + 1, t_mult))
            period = t_0 * t_mult**k
            cur = e - t_0 * (t_mult**k - 1) // (t_mult - 1)
        return min_lr + (base - min_lr) * (0.5 * (1 + math.cos(math.pi * cur / period)))


def run(name, base_lr, make, steps):
    """lr after k = 0..max(steps) scheduler steps; returns the values at k in `steps`."""
    param = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([param], lr=base_lr)
    sched = make(opt)
    values = {0: opt.param_groups[0]["lr"]}
    for k in range(1, max(steps) + 1):
        opt.step()  # keeps torch from warning about the call order
        sched.step()
        values[k] = opt.param_groups[0]["lr"]
    return name, base_lr, [(k, values[k]) for k in steps]


def cases():
    r = lambda n: list(range(n + 1))  # noqa: E731
    yield run("constant", 0.01, Constant, r(3))
    yield run("exp_staircase_warmup_min", 0.01,
              lambda o: ExponentialDecay(o, 3, 0.7, True, 0.002, 4, 0.003), r(20))
    yield run("exp_smooth", 0.1, lambda o: ExponentialDecay(o, 5, 0.5, False, 0.0, 0, 0.0), r(15))
    yield run("exp_by_epoch_tzrec_test", 0.01,
              lambda o: ExponentialDecay(o, 1, 0.7, True, 0.0, 0, 0.0), r(3))
    yield run("exp_base_zero", 0.0,
              lambda o: ExponentialDecay(o, 2, 0.5, True, 0.01, 3, 0.001), r(6))
    yield run("manual", 0.01, lambda o: ManualStep(o, [2, 4, 8], [0.008, 0.004, 0.002], False),
              r(11))
    yield run("manual_warmup", 0.004,
              lambda o: ManualStep(o, [2, 4, 8], [0.008, 0.004, 0.002], True), r(11))
    yield run("manual_warmup_long", 0.001,
              lambda o: ManualStep(o, [5, 7], [0.01, 0.02], True), r(9))
    yield run("manual_empty", 0.03, lambda o: ManualStep(o, [], [], False), r(3))
    yield run("cosine_warmup_min", 0.02, lambda o: Cosine(o, 10, 0.001, 0.0005, 3), r(16))
    yield run("cosine_plain", 0.01, lambda o: Cosine(o, 4, 0.0, 0.0, 0), r(6))
    yield run("restarts_mult1", 0.01, lambda o: WarmRestarts(o, 4, 1, 0.001, 0.002, 2), r(14))
    yield run("restarts_mult2", 0.05, lambda o: WarmRestarts(o, 3, 2, 0.0, 0.0, 0), r(24))
    yield run("restarts_mult10_float_log", 0.01, lambda o: WarmRestarts(o, 1, 10, 0.0, 0.0, 0),
              r(12) + list(range(105, 116)))
    yield run("restarts_mult3_float_log", 0.01, lambda o: WarmRestarts(o, 1, 3, 0.001, 0.0, 0),
              r(5) + list(range(118, 124)))


def main():
    for name, base, values in cases():
        print(f'    {{"{name}", {base!r}, {{')
        line = "     "
        for k, v in values:
            item = f" {{{k}, {v!r}}},"
            if len(line) + len(item) > 100:
                print(line)
                line = "     "
            line += item
        print(line)
        print("    }},")


if __name__ == "__main__":
    main()
