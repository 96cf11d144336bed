#!/usr/bin/env python3
"""torch.nn.EmbeddingBag baseline for `parity bench tbe`, timed in the same device call.

What a user reaches for (after the shared torch_baselines.py probe): one EmbeddingBag of T*E
rows, sum pooling, sparse gradients, bags ordered table-major (= our feature-major CSR), indices
drawn uniformly or Zipf-skewed per table and shifted by t*E. Times forward, and a training step
(forward + backward + optimizer step) with SGD and with sparse Adagrad, each with
triton.testing.do_bench(..., return_mode="median") (L2 flushed, CUDA events), and reports TB/s
under the same forward byte model as ours: rows read + output written + indices + offsets
(the shared probe printed bytes/ms/1e9 as "GB/s"; that unit slip is fixed here). Writes JSON.
"""
import argparse
import datetime
import json
import socket
import sys

CONFIGS = {
    # name: (T, E, D, B, L, alpha, dtype)
    "C1": (32, 100_000, 128, 512, 20, 0.0, "fp32"),
    "C2": (32, 1_000_000, 128, 8192, 20, 0.0, "fp32"),
    "C2_zipf1.15": (32, 1_000_000, 128, 8192, 20, 1.15, "fp32"),
    "C2_fp16": (32, 1_000_000, 128, 8192, 20, 0.0, "fp16"),
    "C4": (26, 4_000_000, 128, 16384, 1, 0.0, "fp32"),
}


def zipf_indices(torch, n, rows, alpha, gen, dev):
    # Inverse power transform of uniforms (as the shared probe and parity's Rng::zipf_index).
    u = torch.rand(n, device=dev, generator=gen, dtype=torch.float64)
    if alpha == 0:
        return (u * rows).long().clamp_(max=rows - 1)
    x = (rows ** (1 - alpha) - 1) * u + 1
    r = x ** (1 / (1 - alpha))
    return (r.long() - 1).clamp_(0, rows - 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma list of " + ",".join(CONFIGS))
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    names = [c for c in args.configs.split(",") if c]
    for c in names:
        if c not in CONFIGS:
            sys.exit(f"torch_tbe_baseline.py: unknown config '{c}' (known: {', '.join(CONFIGS)})")

    import torch
    from triton.testing import do_bench

    dev = "cuda"
    torch.manual_seed(args.seed)
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)
    results = []
    for name in names:
        T, E, D, B, L, alpha, dtype_name = CONFIGS[name]
        dtype = torch.float32 if dtype_name == "fp32" else torch.float16
        emb = torch.nn.EmbeddingBag(T * E, D, mode="sum", dtype=dtype, device=dev, sparse=True)
        idx = torch.cat([zipf_indices(torch, B * L, E, alpha, gen, dev) + t * E for t in range(T)])
        offsets = torch.arange(0, T * B * L, L, device=dev)
        es = emb.weight.element_size()
        out = emb(idx, offsets)
        fwd_bytes = T * B * L * D * es + out.numel() * out.element_size() + idx.numel() * 8 + offsets.numel() * 8
        fwd_ms = do_bench(lambda: emb(idx, offsets), warmup=25, rep=200, return_mode="median")
        g = torch.randn_like(out)
        entry = {"config": name, "T": T, "E": E, "D": D, "B": B, "L": L, "zipf_alpha": alpha, "dtype": dtype_name,
                 "forward_ms": fwd_ms, "forward_bytes": fwd_bytes, "forward_tbps": fwd_bytes / (fwd_ms * 1e-3) / 1e12}
        for opt_name, make in (("sgd", lambda p: torch.optim.SGD(p, lr=0.01)),
                               ("adagrad", lambda p: torch.optim.Adagrad(p, lr=0.01))):
            if opt_name == "adagrad" and (dtype != torch.float32 or name not in ("C2", "C1")):
                continue
            opt = make(emb.parameters())

            def step():
                o = emb(idx, offsets)
                o.backward(g)
                opt.step()
                opt.zero_grad(set_to_none=True)
            try:
                entry[f"step_{opt_name}_ms"] = do_bench(step, warmup=5, rep=50, return_mode="median")
            except Exception as e:  # report, keep going
                entry[f"step_{opt_name}_error"] = str(e)
            del opt
            torch.cuda.empty_cache()
        print(f"torch EmbeddingBag {name}: forward {fwd_ms:.3f} ms ({entry['forward_tbps']:.2f} TB/s)"
              + "".join(f", step {k[5:-3]} {v:.2f} ms" for k, v in entry.items() if k.startswith("step_") and k.endswith("_ms")),
              flush=True)
        results.append(entry)
        del emb, idx, offsets, out, g
        torch.cuda.empty_cache()
    doc = {"benchmark": "torch_embedding_bag",
           "provenance": {"torch": torch.__version__, "device": torch.cuda.get_device_name(),
                          "hostname": socket.gethostname(),
                          "utc": datetime.datetime.now(datetime.timezone.utc).isoformat(), "seed": args.seed},
           "results": results}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
