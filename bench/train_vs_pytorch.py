#!/usr/bin/python3
"""CPU training steps/s of bfhpo's default network against the same network
in Python PyTorch, in one run, interleaved.

For each shape (batch B, items J, persons P) and each memory setting (plain;
item chunk 10 with gradient checkpointing), the C++ side is
`bench_train_throughput worker` (trials::Trainer::train_step, the CPU
tracking allocator installed as in a trial) and the Python side is the
network below, written from models/ (summary network, running
standardization, coupling flow), trained with the step Trainer::train_step
takes (zero_grad, NLL, backward, gradient-norm clip 1.0, Adam 5e-4).

The worker writes its initial weights and its batches; Python loads both, so
the two sides start from the same parameters and train on the same data.
Checked: the same parameter and buffer names and shapes, the same parameter
count, and the same loss at each of the first --checked-steps steps within
--loss-tolerance (relative; float32 arithmetic in a different reduction
order differs by ~1e-6, a wrong layer by far more). The step-0 loss alone
would not do: the flow's output layers start at zero, so it does not depend
on the summary network; the losses after the first update do. Later steps
are not checked: Adam scales each parameter's update by its gradient's
running size, so rounding differences in near-zero gradients grow into
loss differences of ~1e-3 after ~60 steps (measured at the small shape). Then --rounds rounds, each running a
shape's steps (times --scale) on the C++ side and then on the Python side.
Per side: the median over the rounds of steps per wall second, of steps per
CPU second (user + system of the process: what a step costs, unaffected by
waiting for a CPU on a loaded machine) and of minor page faults per step;
the ratios C++/Python of the medians, and the range of the rounds' wall ratios.

  /usr/bin/python3 bench/train_vs_pytorch.py [--bench build/bench/bench_train_throughput]
      [--rounds 5] [--threads 1] [--shapes small,medium,large] [--modes plain,chunked]
"""
import argparse
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def threads_argument():
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--threads", type=int, default=1)
    return parser.parse_known_args()[0].threads


# Debian's libtorch calls OpenBLAS, whose thread pool torch.set_num_threads
# does not size: it starts one thread a core unless told before it loads.
# Both sides get --threads BLAS threads (the C++ worker inherits this, and
# bfhpo sets the same count itself: trials/training_threads.hpp).
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads_argument()))

import torch  # noqa: E402 (after OPENBLAS_NUM_THREADS)
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.checkpoint import checkpoint  # noqa: E402

LOG_TWO_PI = math.log(2.0 * math.pi)

# name: (B, J_min, J_max, P_min, P_max, steps a round)
SHAPES = {
    "small": (16, 10, 20, 100, 200, 12),
    "medium": (32, 30, 30, 300, 300, 4),
    "large": (32, 50, 50, 500, 500, 2),
}
# name: (item chunk, 0 = all items at once; gradient checkpointing)
MODES = {"plain": (0, False), "chunked": (10, True)}


class Mlp(nn.Module):
    """models/networks/mlp: Linear layers linear0..n, SiLU and dropout between."""

    def __init__(self, in_dim, widths):
        super().__init__()
        self.n = len(widths)
        for i, width in enumerate(widths):
            setattr(self, f"linear{i}", nn.Linear(in_dim, width))
            in_dim = width
        self.dropout = nn.Dropout(0.0)

    def forward(self, x):
        for i in range(self.n - 1):
            x = self.dropout(F.silu(getattr(self, f"linear{i}")(x)))
        return getattr(self, f"linear{self.n - 1}")(x)


class RunningStandardization(nn.Module):
    """models/networks/mlp: Welford statistics updated in training, then (x - mean) / std."""

    def __init__(self, dim, epsilon=1e-6):
        super().__init__()
        self.epsilon = epsilon
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("m2", torch.zeros(dim))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                rows = x.detach().reshape(-1, x.size(-1)).to(self.mean.dtype)
                n_b = float(rows.size(0))
                n_a = self.count.item()
                batch_mean = rows.mean(0)
                batch_m2 = (rows - batch_mean).pow(2).sum(0)
                delta = batch_mean - self.mean
                n = n_a + n_b
                self.mean.add_(delta * (n_b / n))
                self.m2.add_(batch_m2 + delta.pow(2) * (n_a * n_b / n))
                self.count.fill_(n)
        return (x - self.mean) / self.std()

    def std(self):
        n = self.count.item()
        if n < 2:
            return torch.ones_like(self.mean)
        return (self.m2 / (n - 1)).sqrt().clamp_min(self.epsilon)

    def log_det_jacobian(self):
        return -self.std().log().sum()


class SetAttentionBlock(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.attention = nn.MultiheadAttention(width, heads)
        self.norm_attention = nn.LayerNorm(width)
        self.feed_forward = Mlp(width, [width, width])
        self.norm_feed_forward = nn.LayerNorm(width)

    def forward(self, x):
        seq = x.transpose(0, 1)
        attended = self.attention(seq, seq, seq, need_weights=False)[0]
        h = self.norm_attention(x + attended.transpose(0, 1))
        return self.norm_feed_forward(h + self.feed_forward(h))


def cell_features(responses, mask, answered, person_sum, person_count, n_items):
    # Binary items (K = 2): the response, the person's score, the item's
    # p-value, the centred response, the person's and the item's answered
    # shares, the rest score standardized over the item's persons, its
    # product with the response centred by the p-value, and log(answered) /
    # log(1000).
    scaled = responses * mask
    total, count = person_sum.unsqueeze(2), person_count.unsqueeze(2)
    score = total / count.clamp_min(1.0)
    p_value = scaled.sum(1, keepdim=True) / answered.clamp_min(1.0)
    rest = (total - scaled) / (count - mask).clamp_min(1.0)
    rest_mean = (rest * mask).sum(1, keepdim=True) / answered.clamp_min(1.0)
    rest_centred = (rest - rest_mean) * mask
    rest_sd = (rest_centred.square().sum(1, keepdim=True) / answered.clamp_min(1.0) + 1e-4).sqrt()
    rest_z = rest_centred / rest_sd
    features = [
        responses.ge(1).to(mask.dtype) * mask,
        score.expand_as(responses),
        p_value.expand_as(responses),
        (scaled - score) * mask,
        (count / float(n_items)).expand_as(responses),
        (answered / float(responses.size(1))).expand_as(responses),
        rest_z,
        (scaled - p_value) * rest_z,
        (answered.clamp_min(1.0).log() / math.log(1000.0)).expand_as(responses),
    ]
    return torch.stack(features, -1)


class SummaryNetwork(nn.Module):
    def __init__(self, item_chunk, checkpointing):
        super().__init__()
        self.item_chunk = item_chunk
        self.checkpointing = checkpointing
        self.phi = Mlp(8, [64, 64, 32])
        self.item_projection = nn.Linear(32, 64)
        self.attention_blocks = nn.ModuleList([SetAttentionBlock(64, 4) for _ in range(2)])
        self.global_mlp = Mlp(64, [64, 32])

    def pool_persons(self, responses, mask, person_sum, person_count, n_items):
        answered = mask.sum(1, keepdim=True)
        phi = self.phi(cell_features(responses, mask, answered, person_sum, person_count, n_items))
        phi.mul_(mask.unsqueeze(-1))
        return phi.sum(1) / answered.clamp_min(1.0).squeeze(1).unsqueeze(-1)

    def per_item_stage(self, responses, mask):
        n_items = responses.size(2)
        person_count = mask.sum(2)
        person_sum = (responses * mask).sum(2)
        chunk = min(self.item_chunk or n_items, n_items)
        pooled = []
        for r, m in zip(responses.split(chunk, 2), mask.split(chunk, 2)):
            if self.checkpointing:
                pooled.append(checkpoint(self.pool_persons, r, m, person_sum, person_count, n_items,
                                         use_reentrant=False))
            else:
                pooled.append(self.pool_persons(r, m, person_sum, person_count, n_items))
        return torch.cat(pooled, 1)

    def forward(self, responses, mask):
        h = self.item_projection(self.per_item_stage(responses, mask))
        for block in self.attention_blocks:
            h = block(h)
        return h, self.global_mlp(h.mean(1))


class ActNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.log_scale = nn.Parameter(torch.zeros(dim))
        self.shift = nn.Parameter(torch.zeros(dim))
        self.register_buffer("initialized", torch.zeros(()))

    def forward(self, x):
        if self.training and x.size(0) >= 2 and self.initialized.item() == 0:
            with torch.no_grad():
                mean = x.mean(0)
                std = (x - mean).pow(2).mean(0).sqrt() + 1e-6
                self.log_scale.copy_(-std.log())
                self.shift.copy_(-mean / std)
                self.initialized.fill_(1)
        return x * self.log_scale.exp() + self.shift, self.log_scale.sum()


class DualAffineCoupling(nn.Module):
    def __init__(self, dim, context_dim, clamp=1.9):
        super().__init__()
        self.first_half = dim // 2
        self.clamp = clamp
        second_half = dim - self.first_half
        self.subnet1 = Mlp(self.first_half + context_dim, [128, 128, 2 * second_half])
        self.subnet2 = Mlp(second_half + context_dim, [128, 128, 2 * self.first_half])

    def scale_shift(self, subnet, conditioner, context):
        raw_scale, shift = subnet(torch.cat([conditioner, context], 1)).chunk(2, 1)
        return (self.clamp * 2.0 / math.pi) * torch.atan(raw_scale / self.clamp), shift

    def forward(self, x, context):
        x1, x2 = x[:, :self.first_half], x[:, self.first_half:]
        s1, t1 = self.scale_shift(self.subnet1, x1, context)
        y2 = x2 * s1.exp() + t1
        s2, t2 = self.scale_shift(self.subnet2, y2, context)
        y1 = x1 * s2.exp() + t2
        return torch.cat([y1, y2], 1), s1.sum(1) + s2.sum(1)


class CouplingFlow(nn.Module):
    def __init__(self, param_dim, context_dim, depth=6):
        super().__init__()
        self.param_dim = param_dim
        self.depth = depth
        for k in range(depth):
            setattr(self, f"actnorm{k}", ActNorm(param_dim))
            # Filled from the C++ model's buffers.
            self.register_buffer(f"permutation{k}", torch.arange(param_dim))
            self.register_buffer(f"inverse_permutation{k}", torch.arange(param_dim))
            setattr(self, f"coupling{k}", DualAffineCoupling(param_dim, context_dim))

    def log_prob(self, theta, context):
        x = theta
        log_det = torch.zeros(theta.size(0))
        for k in range(self.depth):
            normed, actnorm_log_det = getattr(self, f"actnorm{k}")(x)
            x, coupling_log_det = getattr(self, f"coupling{k}")(
                normed.index_select(1, getattr(self, f"permutation{k}")), context)
            log_det = log_det + actnorm_log_det + coupling_log_det
        return -0.5 * x.pow(2).sum(1) - 0.5 * self.param_dim * LOG_TWO_PI + log_det


class ContinuousApproximator(nn.Module):
    def __init__(self, item_chunk, checkpointing):
        super().__init__()
        self.summary = SummaryNetwork(item_chunk, checkpointing)
        self.standardization = RunningStandardization(2)
        self.flow = CouplingFlow(2, 64 + 32)

    def loss(self, responses, item_params, mask):
        theta = self.standardization(item_params.reshape(-1, 2))
        item_context, summary = self.summary(responses, mask)
        condition = torch.cat([item_context, summary.unsqueeze(1).expand(-1, item_context.size(1), -1)], -1)
        log_q = self.flow.log_prob(theta, condition.reshape(-1, condition.size(-1)))
        return -(log_q + self.standardization.log_det_jacobian()).mean()


class PythonTrainer:
    def __init__(self, state, item_chunk, checkpointing):
        self.model = ContinuousApproximator(item_chunk, checkpointing)
        own = dict(self.model.named_parameters())
        own.update(self.model.named_buffers())
        theirs = {k: v for k, v in state.items() if not k.startswith("batch")}
        if set(own) != set(theirs):
            sys.exit(f"train_vs_pytorch: names differ; only in C++: {sorted(set(theirs) - set(own))}; "
                     f"only in Python: {sorted(set(own) - set(theirs))}")
        with torch.no_grad():
            for name, tensor in own.items():
                if tensor.shape != theirs[name].shape:
                    sys.exit(f"train_vs_pytorch: {name} is {tuple(theirs[name].shape)} in C++, "
                             f"{tuple(tensor.shape)} in Python")
                tensor.copy_(theirs[name])
        self.batches = []
        while f"batch{len(self.batches)}.responses" in state:
            prefix = f"batch{len(self.batches)}."
            self.batches.append((state[prefix + "responses"], state[prefix + "item_params"], state[prefix + "mask"]))
        self.next = 0
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=5e-4)
        self.model.train()

    def parameter_count(self):
        return sum(p.numel() for p in self.model.parameters())

    def steps(self, n):
        losses = []
        usage_before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        for _ in range(n):
            responses, item_params, mask = self.batches[self.next % len(self.batches)]
            self.next += 1
            self.optimizer.zero_grad(set_to_none=False)
            loss = self.model.loss(responses, item_params, mask)
            losses.append(loss.item())
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=False)
        seconds = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = usage.ru_utime + usage.ru_stime - usage_before.ru_utime - usage_before.ru_stime
        return Timing(seconds, cpu, usage.ru_minflt - usage_before.ru_minflt), losses


class Timing:
    def __init__(self, seconds, cpu_seconds, minor_faults):
        self.seconds, self.cpu_seconds, self.minor_faults = seconds, cpu_seconds, minor_faults


class CppWorker:
    def __init__(self, bench, shape, mode, threads, n_batches, state_file):
        b, j_min, j_max, p_min, p_max, _ = shape
        chunk, checkpointing = mode
        args = [bench, "worker", b, j_min, j_max, p_min, p_max, chunk, int(checkpointing), threads, n_batches,
                state_file]
        self.process = subprocess.Popen([str(a) for a in args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)
        ready = self.process.stdout.readline().split()
        if len(ready) != 2 or ready[0] != "ready":
            sys.exit(f"train_vs_pytorch: {bench} worker did not start (said {ready!r})")
        self.parameter_count = int(ready[1])

    def steps(self, n):
        self.process.stdin.write(f"steps {n}\n")
        self.process.stdin.flush()
        reply = self.process.stdout.readline().split()
        if len(reply) < 7 or reply[0:7:2] != ["seconds", "cpu", "faults", "losses"]:
            sys.exit(f"train_vs_pytorch: unexpected worker reply {reply!r}")
        return Timing(float(reply[1]), float(reply[3]), int(reply[5])), [float(x) for x in reply[7:]]

    def close(self):
        self.process.stdin.write("quit\n")
        self.process.stdin.close()
        self.process.wait()


def load_text():
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def compare(args, shape_name, mode_name, tmp):
    shape, mode = SHAPES[shape_name], MODES[mode_name]
    steps = max(1, round(shape[5] * args.scale))
    state_file = os.path.join(tmp, f"{shape_name}-{mode_name}.pt")
    cpp = CppWorker(args.bench, shape, mode, args.threads, args.batches, state_file)
    try:
        python = PythonTrainer(torch.load(state_file), *mode)
        if cpp.parameter_count != python.parameter_count():
            sys.exit(f"train_vs_pytorch: {cpp.parameter_count} parameters in C++, "
                     f"{python.parameter_count()} in Python")
        # Step 0 from the same weights on the same batch (also a warm-up), then the rounds.
        _, cpp_losses = cpp.steps(1)
        _, python_losses = python.steps(1)
        cpp_loss0 = cpp_losses[0]
        cpp_rounds, python_rounds = [], []
        for _ in range(args.rounds):
            timing, losses = cpp.steps(steps)
            cpp_rounds.append(timing)
            cpp_losses += losses
            timing, losses = python.steps(steps)
            python_rounds.append(timing)
            python_losses += losses
    finally:
        cpp.close()
    checked = list(zip(cpp_losses, python_losses))[:args.checked_steps]
    relative = max(abs(c - p) / abs(p) for c, p in checked)
    if relative > args.loss_tolerance:
        sys.exit(f"train_vs_pytorch: losses C++ {cpp_losses} and Python {python_losses} differ by up to "
                 f"{relative:.2e} (relative) > {args.loss_tolerance}")

    def median(rounds, value):
        return statistics.median(value(t) for t in rounds)

    wall = [median(r, lambda t: steps / t.seconds) for r in (cpp_rounds, python_rounds)]
    cpu = [median(r, lambda t: steps / t.cpu_seconds) for r in (cpp_rounds, python_rounds)]
    faults = [median(r, lambda t: t.minor_faults / steps) for r in (cpp_rounds, python_rounds)]
    ratios = [p.seconds / c.seconds for c, p in zip(cpp_rounds, python_rounds)]
    print(f"{shape_name:7} {mode_name:8} {python.parameter_count():8d} {cpp_loss0:9.6f} {relative:8.1e} "
          f"{steps:5d} {wall[0]:7.3f} {wall[1]:7.3f} {wall[0] / wall[1]:5.2f} {min(ratios):5.2f}-{max(ratios):4.2f} "
          f"{cpu[0]:7.3f} {cpu[1]:7.3f} {cpu[0] / cpu[1]:5.2f} {faults[0]:8.0f} {faults[1]:8.0f}  {load_text()}",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", default="build/bench/bench_train_throughput")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies each shape's steps a round")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads on both sides")
    parser.add_argument("--batches", type=int, default=4, help="simulated batches both sides cycle through")
    parser.add_argument("--shapes", default="small,medium,large")
    parser.add_argument("--modes", default="plain,chunked")
    parser.add_argument("--loss-tolerance", type=float, default=1e-4)
    parser.add_argument("--checked-steps", type=int, default=10, help="steps whose losses must agree")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"C++ {args.bench} vs Python PyTorch {torch.__version__}; {args.threads} thread(s) each, "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}; {os.cpu_count()} CPUs; "
          f"load {load_text()} at start")
    print("shapes: " + "; ".join(f"{n} B={s[0]} J={s[1]}-{s[2]} P={s[3]}-{s[4]}" for n, s in SHAPES.items())
          + "; chunked = item chunk 10 + gradient checkpointing (Python: torch.utils.checkpoint)")
    print("steps/s: per wall second; steps/cpu-s: per CPU second of the process; faults: minor page faults a step")
    print("loss0: the step-0 loss; rel diff: the largest relative difference of C++'s and Python's loss "
          f"over the first {args.checked_steps} steps")
    print(f"{'shape':7} {'mode':8} {'params':>8} {'loss0':>9} {'rel diff':>8} {'steps':>5} {'C++/s':>7} {'Py/s':>7} "
          f"{'ratio':>5} {'rounds':>10} {'C++/cpu':>7} {'Py/cpu':>7} {'ratio':>5} {'C++ flt':>8} {'Py flt':>8}  load")
    with tempfile.TemporaryDirectory(prefix="train_vs_pytorch.") as tmp:
        for shape_name in args.shapes.split(","):
            for mode_name in args.modes.split(","):
                compare(args, shape_name, mode_name, tmp)


if __name__ == "__main__":
    main()
