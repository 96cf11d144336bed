#!/usr/bin/env python3
"""torch.nn.EmbeddingBag baseline for `parity bench tbe`, timed in the same device call.

Reads the configurations from our own results files ($OUT/tbe_<name>.json, the "config" block:
tables, features, bag lengths, Zipf alpha, pooling, per-sample weights, dtypes, optimiser), so
torch runs the same workload: one packed EmbeddingBag per dim group (the group's tables stacked,
shared tables once), bags ordered feature-major as ours, indices drawn with the same exact Zipf
pmf (rejection-inversion, vectorised) and the same rank -> row bijection, sparse gradients.
Times forward and a training step (forward + backward + optimiser) with the optimiser torch has
for ours: SGD for sgd, sparse Adagrad for rowwise_adagrad and adagrad, SparseAdam for adam; each
with triton.testing.do_bench(..., return_mode="median") (L2 flushed, CUDA events). What torch
cannot express is said in the entry: per-sample weights with mean pooling ("not_expressible",
not timed), an output dtype other than the weights' ("output_dtype_differs", timed with torch's). TB/s under our forward byte model (rows read + output +
indices + offsets + per-sample weights). Writes JSON.
"""
import argparse
import datetime
import json
import os
import socket
import sys

PRIMES = (1000003, 999983)  # the scatter multipliers of src/embedding/tbe_synthetic.cpp
MASK64 = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def scatter(torch, ranks, rows, feature):
    """Rank k (1-based) -> row: the bijection of scatter_rank in tbe_synthetic.cpp."""
    mult = next((p for p in PRIMES if rows % p != 0), 1)
    shift = splitmix64(feature) % rows
    return ((ranks - 1) % rows * (mult % rows) + shift) % rows  # < 2^63 for rows < 2^43


def zipf_ranks(torch, n, rows, alpha, gen, dev):
    """Exact Zipf ranks in [1, rows], P(k) ~ k^-alpha (Hörmann-Derflinger rejection-inversion)."""
    if alpha == 0 or rows == 1:
        return torch.randint(1, rows + 1, (n,), device=dev, generator=gen)
    a = alpha

    def H(x):
        lx = torch.log(x)
        t = (1 - a) * lx
        return lx * torch.where(t.abs() > 1e-8, torch.expm1(t) / t, 1 + t / 2)

    def Hinv(y):
        t = torch.clamp((1 - a) * y, min=-1 + 1e-16)
        return torch.exp(y * torch.where(t.abs() > 1e-8, torch.log1p(t) / t, 1 - t / 2))

    f64 = dict(device=dev, dtype=torch.float64)
    first = H(torch.tensor(1.5, **f64)) - 1
    last = H(torch.tensor(rows + 0.5, **f64))
    squeeze = 2 - Hinv(H(torch.tensor(2.5, **f64)) - 2.0 ** -a)
    out = torch.empty(n, device=dev, dtype=torch.int64)
    todo = torch.arange(n, device=dev)
    while todo.numel() > 0:
        u = last + torch.rand(todo.numel(), generator=gen, **f64) * (first - last)
        x = Hinv(u)
        k = torch.clamp((x + 0.5).floor(), 1, rows)
        ok = (k - x <= squeeze) | (u >= H(k + 0.5) - k ** -a)
        out[todo[ok]] = k[ok].long()
        todo = todo[~ok]
    return out


def bag_lengths(torch, text, count, gen, dev):
    if text == "one-hot":
        return torch.ones(count, dtype=torch.int64, device=dev)
    kind, value = text.split(" ", 1)
    if kind == "fixed":
        return torch.full((count,), int(value), dtype=torch.int64, device=dev)
    low, high = (int(v) for v in value.split(".."))
    return torch.randint(low, high + 1, (count,), device=dev, generator=gen)


def build_groups(torch, cfg, gen, dev):
    """One packed table per dim: (D, total_rows, indices, offsets, per_sample_weights, n)."""
    B = cfg["batch_size"]
    groups = {}
    for f, feat in enumerate(cfg["features"]):
        g = groups.setdefault(feat["dim"], {"bases": {}, "rows": 0, "idx": [], "lengths": []})
        if feat["table"] not in g["bases"]:
            g["bases"][feat["table"]] = g["rows"]
            g["rows"] += feat["rows"]
        lengths = bag_lengths(torch, feat["bag_lengths"], B, gen, dev)
        n = int(lengths.sum())
        if cfg.get("hot_rows", 0) > 0:
            rows = torch.randint(0, min(cfg["hot_rows"], feat["rows"]), (n,), device=dev, generator=gen)
        elif feat["zipf_alpha"] > 0:
            rows = scatter(torch, zipf_ranks(torch, n, feat["rows"], feat["zipf_alpha"], gen, dev), feat["rows"], f)
        else:
            rows = torch.randint(0, feat["rows"], (n,), device=dev, generator=gen)
        g["idx"].append(rows + g["bases"][feat["table"]])
        g["lengths"].append(lengths)
    idx_dtype = torch.int32 if cfg["index_dtype"] == "int32" else torch.int64
    out = []
    for dim, g in groups.items():
        idx = torch.cat(g["idx"]).to(idx_dtype)
        lengths = torch.cat(g["lengths"])
        offsets = torch.zeros(lengths.numel() + 1, dtype=torch.int64, device=dev)
        offsets[1:] = torch.cumsum(lengths, 0)
        psw = None
        if cfg["per_sample_weights"]:
            psw = torch.rand(idx.numel(), device=dev, generator=gen) + 0.5
        out.append((dim, g["rows"], idx, offsets.to(idx_dtype), psw))
    return out


TORCH_OPTIMIZER = {"sgd": "SGD", "rowwise_adagrad": "sparse Adagrad", "adagrad": "sparse Adagrad",
                   "adam": "SparseAdam"}


def make_optimizer(torch, name, params):
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.01)
    if name in ("rowwise_adagrad", "adagrad"):
        return torch.optim.Adagrad(params, lr=0.01)
    return torch.optim.SparseAdam(params, lr=0.01)


def run_config(torch, do_bench, name, cfg, gen, dev):
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[cfg["weight_dtype"]]
    entry = {"config": name, "torch_optimizer": TORCH_OPTIMIZER[cfg["optimizer"]], "pooling": cfg["pooling"],
             "per_sample_weights": cfg["per_sample_weights"], "weight_dtype": cfg["weight_dtype"]}
    if cfg["per_sample_weights"] and cfg["pooling"] != "sum":
        entry["not_expressible"] = "per-sample weights with mean pooling"
        return entry
    if cfg.get("output_dtype", cfg["weight_dtype"]) != cfg["weight_dtype"]:  # timed with the weights' dtype out
        entry["output_dtype_differs"] = "torch outputs %s, ours %s" % (cfg["weight_dtype"], cfg["output_dtype"])
    # torch wants per-sample weights in the weights' dtype; offsets end with N (include_last_offset).
    groups = [(dim, rows, idx, off, None if psw is None else psw.to(dtype))
              for dim, rows, idx, off, psw in build_groups(torch, cfg, gen, dev)]
    bags = [torch.nn.EmbeddingBag(rows, dim, mode=cfg["pooling"], dtype=dtype, device=dev, sparse=True,
                                  include_last_offset=True)
            for dim, rows, _, _, _ in groups]

    def forward():
        return [bag(idx, off, per_sample_weights=psw) for bag, (_, _, idx, off, psw) in zip(bags, groups)]

    outs = forward()
    es = bags[0].weight.element_size()
    fwd_bytes = 0
    for (dim, _, idx, off, psw), out in zip(groups, outs):
        fwd_bytes += idx.numel() * dim * es + out.numel() * out.element_size()
        fwd_bytes += (idx.numel() + off.numel()) * idx.element_size() + (psw.numel() * psw.element_size() if psw is not None else 0)
    fwd_ms = do_bench(forward, warmup=25, rep=200, return_mode="median")
    entry.update({"num_indices": sum(g[2].numel() for g in groups), "dim_groups": [g[0] for g in groups],
                  "forward_ms": fwd_ms, "forward_bytes": fwd_bytes,
                  "forward_tbps": fwd_bytes / (fwd_ms * 1e-3) / 1e12})
    grads = [torch.randn_like(o) for o in outs]
    opt = make_optimizer(torch, cfg["optimizer"], [p for b in bags for p in b.parameters()])

    def step():
        for o, g in zip(forward(), grads):
            o.backward(g)
        opt.step()
        opt.zero_grad(set_to_none=True)
    try:
        entry["step_ms"] = do_bench(step, warmup=5, rep=50, return_mode="median")
    except Exception as e:  # e.g. sparse Adagrad on 16-bit weights: report, keep going
        entry["step_error"] = str(e)[:300]
    del opt, bags, groups, outs, grads
    torch.cuda.empty_cache()
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from-parity", nargs="+", required=True, help="our results files, tbe_<name>.json")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    configs = []
    for path in args.from_parity:
        if not os.path.exists(path):
            print(f"torch_tbe_baseline.py: {path} is missing (our run failed?); skipped", file=sys.stderr)
            continue
        with open(path) as f:
            cfg = json.load(f)["config"]
        if "features" not in cfg:
            sys.exit(f"torch_tbe_baseline.py: {path} has no config.features (written by an older parity)")
        configs.append((os.path.basename(path)[4:-5], cfg))

    import torch
    from triton.testing import do_bench

    dev = "cuda"
    torch.manual_seed(args.seed)
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)
    results = []
    for name, cfg in configs:
        try:
            entry = run_config(torch, do_bench, name, cfg, gen, dev)
        except Exception as e:  # out of memory or an unsupported combination: report, keep going
            entry = {"config": name, "error": str(e)[:300]}
            torch.cuda.empty_cache()
        line = f"torch EmbeddingBag {name}:"
        if "forward_ms" in entry:
            line += f" forward {entry['forward_ms']:.3f} ms ({entry['forward_tbps']:.2f} TB/s)"
        if "step_ms" in entry:
            line += f", step ({entry['torch_optimizer']}) {entry['step_ms']:.2f} ms"
        for key in ("not_expressible", "output_dtype_differs", "step_error", "error"):
            if key in entry:
                line += f"; {key}: {entry[key]}"
        print(line, flush=True)
        results.append(entry)
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
