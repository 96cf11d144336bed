#!/usr/bin/env python3
"""Baseline of `parity bench hstu-layer --device gpu`: the same HSTU layer in PyTorch, as a user of
generative-recommenders would run it, on the same shape and length distribution (B sequences,
lengths U[0.9 N, N), num_targets U[1, 20], D = H d, bf16 activations and weights).

  n = LayerNorm(x); u, v, q, k = split(Linear(n)); a = attention(q, k, v); g = SiLU(u) * LayerNorm(a)
  y = x + Linear(g)

attention:
  triton  generative-recommenders' Triton HSTU kernel (jagged; forward only: its backward faults
          under Triton 3.6, see ../shared/baselines/measured/2026-12-01-h200-anchors.md)
  padded  the plain PyTorch padded implementation (../shared/baselines/torch_hstu.py's math:
          SiLU(alpha q k^T) / N, masked), forward and backward through autograd

Timed with triton.testing.do_bench (median, its L2 clearing). FLOPs as hstu_layer_flops: the two
projections 2 T D (2 H (d_v + d_qk) + H d_v) plus the attention's useful FLOPs; backward twice the
projections plus the attention's (3 f1 + 2 f2). Usage: torch_hstu_layer_baseline.py OUT.json [B] [N...]
"""
import json
import sys

import torch
import torch.nn.functional as F
from triton.testing import do_bench

dev = "cuda"
H, d = 4, 128
D = H * d


def draw(B, N, seed):
    g = torch.Generator(device=dev).manual_seed(seed)
    lens = torch.randint(int(0.9 * N), N, (B,), device=dev, generator=g)
    offs = torch.zeros(B + 1, dtype=torch.int64, device=dev)
    offs[1:] = lens.cumsum(0)
    targets = torch.randint(1, 21, (B,), device=dev, generator=g, dtype=torch.int64)
    return lens, offs, targets


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(D, eps=1e-6)
        self.uvqk = torch.nn.Linear(D, 4 * H * d)
        self.out_norm = torch.nn.LayerNorm(H * d, eps=1e-6)
        self.out = torch.nn.Linear(H * d, D)

    def forward(self, x, attention):
        u, v, q, k = self.uvqk(self.norm(x)).split(H * d, dim=-1)
        a = attention(q.reshape(-1, H, d), k.reshape(-1, H, d), v.reshape(-1, H, d)).reshape(-1, H * d)
        return x + self.out(F.silu(u) * self.out_norm(a))


def flops(lens, T):
    n2 = float((lens.double() ** 2).sum())
    f1 = 2 * H * d * n2 / 2
    projections = 2.0 * T * D * (4 * H * d + H * d)
    return projections + 2 * f1, 2 * projections + 5 * f1


def padded_attention(lens, offs, N):
    B = lens.numel()
    valid = torch.arange(N, device=dev)[None, :] < lens[:, None]
    keep = valid[:, None, :, None] & valid[:, None, None, :] & torch.ones(N, N, device=dev, dtype=torch.bool).tril()

    def attention(q, k, v):
        def pad(t):
            out = t.new_zeros(B, N, H, d)
            out[valid] = t
            return out.transpose(1, 2)
        s = torch.einsum("bhnd,bhmd->bhnm", pad(q), pad(k)) * (1.0 / d ** 0.5)
        a = torch.einsum("bhnm,bhmd->bhnd", F.silu(s) / N * keep, pad(v))
        return a.transpose(1, 2)[valid]
    return attention


def main():
    out_path = sys.argv[1]
    B = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    Ns = [int(n) for n in sys.argv[3:]] or [2048, 4096]
    torch.manual_seed(0)
    layer = Layer().to(dev, torch.bfloat16)
    results = []
    for N in Ns:
        lens, offs, targets = draw(B, N, 1)
        T = int(offs[-1])
        fwd_flops, bwd_flops = flops(lens, T)
        x = torch.randn(T, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
        row = {"B": B, "N": N, "D": D, "H": H, "d": d, "tokens": T}
        try:
            from generative_recommenders.ops.triton.triton_hstu_attention import triton_hstu_mha
            triton = lambda q, k, v: triton_hstu_mha(N, 1 / d ** 0.5, q, k, v, offs, targets, 0, 0)
            with torch.no_grad():
                ms = do_bench(lambda: layer(x, triton), warmup=25, rep=200, return_mode="median")
            row.update({"triton_forward_ms": ms, "triton_forward_tflops": fwd_flops / ms / 1e9})
        except Exception as error:  # noqa: BLE001 - a missing package or a fault is reported, not fatal
            row["triton_forward_error"] = repr(error)[:300]
        torch.cuda.empty_cache()
        try:
            attention = padded_attention(lens, offs, N)
            grad = torch.randn(T, D, device=dev, dtype=torch.bfloat16)
            with torch.no_grad():
                fwd_ms = do_bench(lambda: layer(x, attention), warmup=5, rep=50, return_mode="median")

            def forward_backward():
                x.grad = None
                layer.zero_grad(set_to_none=True)
                layer(x, attention).backward(grad)
            fb_ms = do_bench(forward_backward, warmup=3, rep=30, return_mode="median")
            row.update({"padded_forward_ms": fwd_ms, "padded_forward_tflops": fwd_flops / fwd_ms / 1e9,
                        "padded_backward_ms": fb_ms - fwd_ms,
                        "padded_backward_tflops": bwd_flops / (fb_ms - fwd_ms) / 1e9,
                        "padded_peak_bytes": torch.cuda.max_memory_allocated()})
        except Exception as error:  # noqa: BLE001 - out of memory at large N is a result
            row["padded_error"] = repr(error)[:300]
        del x
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        print(json.dumps(row), flush=True)
        results.append(row)
    json.dump(results, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
