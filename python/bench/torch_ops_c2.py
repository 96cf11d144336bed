#!/usr/bin/env python3
"""Parity's TBE through torch (torch.ops.parity.*) against the C++ path (`parity bench tbe`) on one
configuration (C2 by default: T=32 tables of E=1e6 rows, D=128, B=8192, L=20 indices per bag,
uniform, fp32 weights, int64 indices), timed in the same process call on the GPU.

Both paths run the same kernels; what differs is the call path (Python, the torch dispatcher,
argument checks, output allocation by torch's caching allocator). Timed like the C++ bench and the
torch baselines: triton.testing.do_bench (L2 flushed between repetitions, CUDA events, median).
  forward: torch.ops.parity.tbe_forward
  step:    forward + torch.ops.parity.tbe_backward_with_optimizer (row-wise Adagrad), as the C++
           bench's step_fwd_bwd_opt
  module:  the same step through parity.torch.EmbeddingBagCollection and autograd (bounds check off)
Writes JSON with both paths' medians and the ratios (target: torch path within 3% of C++).
"""

import argparse
import json
import os
import subprocess
import sys

CONFIGS = {"C2": (32, 1_000_000, 128, 8192, 20), "C1": (32, 100_000, 128, 512, 20)}


def cxx_path(parity_cli, config, reps, out_dir):
    """Runs `parity bench tbe --config NAME` and returns its forward and step medians (ms)."""
    out = os.path.join(out_dir, f"cxx_tbe_{config}.json")
    command = [parity_cli, "bench", "tbe", "--config", config, "--reps", str(reps), "--warmup", "5", "--out", out]
    subprocess.run(command, check=True)
    with open(out) as f:
        result = json.load(f)
    return {"forward_ms": result["forward"]["median_ms"], "step_ms": result["step_fwd_bwd_opt"]["median_ms"],
            "optimizer": result["config"].get("optimizer"), "json": out}


def torch_path(config, seed):
    import torch
    from triton.testing import do_bench

    import parity.torch as ptorch

    tables, rows, dim, batch, length = CONFIGS[config]
    device = "cuda"
    generator = torch.Generator(device=device).manual_seed(seed)
    op_config = ptorch.TbeConfig((rows,) * tables, (dim,) * tables, tuple(range(tables)), "sum", torch.float32,
                                 "rowwise_adagrad", 0.01, 1e-8, 0.0, "none", 0.0, 0.9, 0.999)
    weights = torch.empty(tables * rows * dim, device=device).uniform_(-0.01, 0.01, generator=generator)
    state1 = torch.zeros(tables * rows, device=device)
    state2 = torch.zeros(0, device=device)
    step_counter = torch.zeros(1, dtype=torch.long)
    indices = torch.randint(0, rows, (tables * batch * length,), device=device, generator=generator)
    offsets = torch.arange(0, tables * batch * length + 1, length, device=device)
    grad = torch.randn(batch, tables * dim, device=device, generator=generator)

    def forward():
        return ptorch.ops.tbe_forward(op_config, weights, indices, offsets)

    def step():
        forward()
        ptorch.ops.tbe_backward_with_optimizer(op_config, weights, state1, state2, step_counter, indices, offsets,
                                               None, grad)

    result = {"forward_ms": do_bench(forward, warmup=25, rep=200, return_mode="median"),
              "step_ms": do_bench(step, warmup=10, rep=100, return_mode="median")}
    del weights, state1
    torch.cuda.empty_cache()

    specs = [ptorch.EmbeddingBagConfig(f"t{t}", rows, dim, (f"f{t}",)) for t in range(tables)]
    module = ptorch.EmbeddingBagCollection(specs, device=device, bounds_check="off",
                                           optimizer=ptorch.OptimizerConfig("rowwise_adagrad", 0.01))

    def module_step():
        module(indices, offsets).backward(grad)

    result["module_step_ms"] = do_bench(module_step, warmup=10, rep=100, return_mode="median")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="C2", choices=sorted(CONFIGS))
    parser.add_argument("--parity-cli", required=True, help="the CUDA build's parity binary (the C++ path)")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    cxx = cxx_path(args.parity_cli, args.config, args.reps, os.path.dirname(os.path.abspath(args.out)))
    ours = torch_path(args.config, args.seed)
    summary = {"config": args.config, "cxx": cxx, "torch_ops": ours,
               "forward_ratio": ours["forward_ms"] / cxx["forward_ms"],
               "step_ratio": ours["step_ms"] / cxx["step_ms"],
               "module_step_ratio": ours["module_step_ms"] / cxx["step_ms"], "target_ratio_max": 1.03}
    summary["targets_met"] = summary["forward_ratio"] <= 1.03 and summary["step_ratio"] <= 1.03
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=2)
    print(f"{args.config}: forward torch ops {ours['forward_ms']:.3f} ms vs C++ {cxx['forward_ms']:.3f} ms "
          f"({summary['forward_ratio']:.3f}x); step {ours['step_ms']:.3f} vs {cxx['step_ms']:.3f} ms "
          f"({summary['step_ratio']:.3f}x); module step {ours['module_step_ms']:.3f} ms "
          f"({summary['module_step_ratio']:.3f}x); within 3%: {summary['targets_met']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
