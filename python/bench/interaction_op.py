#!/usr/bin/env python3
"""The dot interaction alone, forward and forward + backward, as examples/torch_dlrm.py runs it
(B=65536, 26 features of D=128, bf16 dense, fp32 pooled embeddings from the TBE):
  torch     the shared baseline's pooled.to(bf16), cat, bmm, tril gather, cat (and autograd's backward)
  parity    parity.torch.DotInteraction(pad_to=8) on the fp32 pooled embeddings (the op rounds them)
  parity_bf16_in  the same op on bf16 pooled embeddings (what EmbeddingDotInteraction feeds it)
Timed by triton.testing.do_bench (median) on the GPU. Writes JSON with the medians.

  python python/bench/interaction_op.py --out interaction.json
  python python/bench/interaction_op.py --device cpu --batch 64 --reps 3   # a CPU smoke run
"""

import argparse
import json
import statistics
import sys
import time

import torch

import parity.torch as ptorch
from parity.torch.interaction import reference_dot_interaction


def median_ms(fn, device, reps):
    """triton's do_bench on the GPU (L2 flushed between repetitions, CUDA events, median), as the
    other torch baselines; a plain wall-clock median on the CPU (smoke runs)."""
    if device.type == "cuda":
        from triton.testing import do_bench
        return do_bench(fn, return_mode="median")
    fn()
    times = []
    for _ in range(reps):
        begin = time.perf_counter()
        fn()
        times.append((time.perf_counter() - begin) * 1e3)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=65536)
    parser.add_argument("--features", type=int, default=26)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--reps", type=int, default=5, help="CPU repetitions (the GPU: do_bench's own)")
    parser.add_argument("--out", help="write the results here")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    dtype = torch.bfloat16
    generator = torch.Generator().manual_seed(0)
    dense = torch.randn(args.batch, args.dim, generator=generator).to(device, dtype).requires_grad_()
    pooled = torch.randn(args.batch, args.features * args.dim, generator=generator).to(device).requires_grad_()
    pooled_bf16 = pooled.detach().to(dtype).requires_grad_()
    module = ptorch.DotInteraction(args.features, args.dim, pad_to=8)
    pairs = torch.tril_indices(args.features + 1, args.features + 1, -1, device=device)
    grads = {width: torch.randn(args.batch, width, generator=generator).to(device, dtype)
             for width in (module.unpadded_dim, module.output_dim)}
    variants = {
        "torch": lambda: reference_dot_interaction(dense, pooled, pairs),
        "parity": lambda: module(dense, pooled),
        "parity_bf16_in": lambda: module(dense, pooled_bf16),
    }
    results = {}
    for name, forward in variants.items():
        def step():
            out = forward()
            out.backward(grads[out.shape[1]])
        with torch.no_grad():
            forward_ms = median_ms(forward, device, args.reps)
        step_ms = median_ms(step, device, args.reps)
        results[name] = {"forward_ms": forward_ms, "forward_backward_ms": step_ms}
        print(f"interaction {name}: forward {forward_ms:.3f} ms, forward + backward {step_ms:.3f} ms", flush=True)
    summary = {"batch": args.batch, "features": args.features, "dim": args.dim, "dtype": "bf16",
               "device": str(device), "torch": torch.__version__, "results": results,
               "speedup": results["torch"]["forward_backward_ms"] / results["parity"]["forward_backward_ms"]}
    print(f"interaction: parity forward + backward {summary['speedup']:.2f}x torch's", flush=True)
    if args.out:
        with open(args.out, "w") as out:
            json.dump(summary, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
