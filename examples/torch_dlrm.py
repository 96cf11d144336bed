#!/usr/bin/env python3
"""DLRM training step in PyTorch, three variants timed side by side in one process:
  stock               one ``nn.EmbeddingBag`` over all tables (sparse gradients, SGD), the dot
                      interaction as torch's ``cat([x, bmm(z, z^T)[:, li, lj]], 1)``;
  parity              Parity's embeddings (``parity.torch.EmbeddingBagCollection``: one TBE lookup,
                      SGD fused into the backward), the interaction still torch's;
  parity+interaction  Parity's embeddings and Parity's interaction: one library kernel forward, one
                      backward; by default ``parity.torch.EmbeddingDotInteraction`` (the lookup and
                      the interaction in one autograd node: the TBE writes bf16, the interaction's
                      fp32 gradient goes straight into the TBE backward), ``--interaction separate``
                      ``parity.torch.DotInteraction`` after the lookup; output padded to a multiple
                      of --interaction-pad columns, the top MLP's first layer as wide (its padding
                      columns see zeros).

The model is the shared DLRM baseline's: bottom MLP 13-512-256-128, 26 Criteo-sized tables (rows
capped) of dim 128, pairwise dot interaction, top MLP 1024-1024-512-256-1, BCE loss, SGD lr 0.1,
bf16 autocast by default. Inputs are one random index per table and sample, resident on the device.

  python examples/torch_dlrm.py                          # all three variants, batch 65536, bf16, CUDA
  python examples/torch_dlrm.py --device cpu --batch 256 --rows-cap 1000 --reps 3   # a CPU smoke run
"""

import argparse
import json
import statistics
import sys
import time

import torch
from torch import nn

import parity.torch as ptorch

INTERACTION = "parity+interaction"
KINDS = ["stock", "parity", INTERACTION]
CRITEO_ROWS = [1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194, 27, 14992,
               5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572]


def mlp(widths):
    layers = []
    for index, (fan_in, fan_out) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(nn.Linear(fan_in, fan_out))
        if index < len(widths) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class StockEmbeddings(nn.Module):
    """All tables stacked in one nn.EmbeddingBag (sparse gradients); global row = table base + row."""

    def __init__(self, rows, dim, device):
        super().__init__()
        self.bag = nn.EmbeddingBag(sum(rows), dim, mode="sum", sparse=True, device=device)
        self.register_buffer("bases", torch.tensor([0] + rows[:-1]).cumsum(0))

    def forward(self, local_ids, batch):  # local_ids: [T, B] -> [B, T, D]
        flat = (local_ids + self.bases[:, None]).reshape(-1)
        offsets = torch.arange(0, flat.numel(), device=flat.device)  # one index per bag
        return self.bag(flat, offsets).view(local_ids.shape[0], batch, -1).transpose(0, 1)  # [B, T, D]


class ParityEmbeddings(nn.Module):
    """One EmbeddingBagCollection, one feature per table; the SGD step happens in the backward."""

    def __init__(self, rows, dim, lr, device):
        super().__init__()
        tables = [ptorch.EmbeddingBagConfig(f"t{t}", r, dim, (f"f{t}",)) for t, r in enumerate(rows)]
        # Inputs are checked once before timing (see run), so the per-step check is off.
        self.collection = ptorch.EmbeddingBagCollection(tables, seed=0, bounds_check="off", device=device,
                                                        optimizer=ptorch.OptimizerConfig("sgd", lr))

    @staticmethod
    def batch(local_ids):  # local_ids: [T, B] -> the collection's values and offsets (one index per bag)
        return local_ids.reshape(-1), torch.arange(0, local_ids.numel() + 1, device=local_ids.device)

    def forward(self, local_ids, batch):  # local_ids: [T, B] -> [B, T, D]
        pooled = self.collection(*self.batch(local_ids))  # [B, T*D], feature t in columns t*D..
        return pooled.view(batch, local_ids.shape[0], -1)  # [B, T, D]


class Dlrm(nn.Module):
    """`interaction`: "torch" (the expression), "separate" (``parity.torch.DotInteraction`` on the
    pooled embeddings) or "fused" (``parity.torch.EmbeddingDotInteraction``: the lookup and the
    interaction in one autograd node, no cast pass between them; Parity embeddings only)."""

    def __init__(self, embeddings, num_tables, dim, interaction="torch", interaction_pad=8):
        super().__init__()
        self.embeddings, self.num_tables, self.dim = embeddings, num_tables, dim
        self.interaction_kind, self.interaction = interaction, None
        if interaction == "separate":
            self.interaction = ptorch.DotInteraction(num_tables, dim, pad_to=interaction_pad)
        elif interaction == "fused":
            self.interaction = ptorch.EmbeddingDotInteraction(embeddings.collection, pad_to=interaction_pad)
        self.bottom = mlp([13, 512, 256, dim])
        features = num_tables + 1
        interaction_dim = (self.interaction.output_dim if self.interaction is not None
                           else dim + features * (features - 1) // 2)
        self.top = mlp([interaction_dim, 1024, 1024, 512, 256, 1])
        rows, cols = torch.tril_indices(features, features, offset=-1)
        self.register_buffer("pair_rows", rows)
        self.register_buffer("pair_cols", cols)

    def forward(self, dense, local_ids):
        batch = dense.shape[0]
        x = self.bottom(dense)
        if self.interaction_kind == "fused":  # the TBE writes x's dtype; its fp32 gradient goes straight back
            return self.top(self.interaction(x, *self.embeddings.batch(local_ids))).squeeze(1)
        pooled = self.embeddings(local_ids, batch)  # [B, T, D]
        if self.interaction_kind == "separate":  # fp32 pooled in, rounded to x's dtype by the op
            return self.top(self.interaction(x, pooled)).squeeze(1)
        z = torch.cat([x.unsqueeze(1), pooled.to(x.dtype)], 1)  # [B, T+1, D]
        dots = torch.bmm(z, z.transpose(1, 2))[:, self.pair_rows, self.pair_cols]
        return self.top(torch.cat([x, dots], 1)).squeeze(1)


def make_model(kind, rows, dim, lr, device, interaction="fused", interaction_pad=8):
    embeddings = StockEmbeddings(rows, dim, device) if kind == "stock" else ParityEmbeddings(rows, dim, lr, device)
    interaction = interaction if kind == INTERACTION else "torch"
    model = Dlrm(embeddings, len(rows), dim, interaction, interaction_pad).to(device)
    dense_params = list(model.bottom.parameters()) + list(model.top.parameters())
    optimizers = [torch.optim.SGD(dense_params, lr=lr)]
    if kind == "stock":
        optimizers.append(torch.optim.SGD(model.embeddings.parameters(), lr=lr))
    return model, optimizers


def median_ms(step, device, warmup, reps):
    """Median of `reps` timed steps after `warmup` (CUDA events on the GPU, wall clock on the CPU)."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(reps):
        if device.type == "cuda":
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        else:
            begin = time.perf_counter()
            step()
            times.append((time.perf_counter() - begin) * 1e3)
    return statistics.median(times)


def run(kind, args, device, rows, dense, local_ids, labels):
    torch.manual_seed(0)
    model, optimizers = make_model(kind, rows, args.dim, args.lr, device, args.interaction, args.interaction_pad)
    loss_fn = nn.BCEWithLogitsLoss()
    if kind != "stock":  # the one-time check of the whole input (the timed steps run unchecked)
        ptorch.ops.bounds_check(model.embeddings.collection._config, local_ids.reshape(-1),
                                torch.arange(0, local_ids.numel() + 1, device=device), "error")
    use_bf16 = args.bf16 and device.type == "cuda"

    def step():
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16):
            loss = loss_fn(model(dense, local_ids).float(), labels)
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        return loss

    first_loss = step().item()
    ms = median_ms(step, device, args.warmup, args.reps)
    interaction = model.interaction_kind
    del model, optimizers
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return {"embeddings": kind, "interaction": interaction, "batch": args.batch, "bf16": use_bf16, "median_ms": ms,
            "samples_per_s": args.batch / ms * 1e3, "first_loss": first_loss}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embeddings", choices=KINDS + ["both", "all"], default="all",
                        help="the variant(s) to time: both = stock and parity, all = the three")
    parser.add_argument("--batch", type=int, default=65536)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--rows-cap", type=int, default=4_000_000, help="cap on each table's rows")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=True, help="bf16 autocast (CUDA)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--interaction", choices=["fused", "separate"], default="fused",
                        help="parity+interaction: EmbeddingDotInteraction (fused) or DotInteraction after the lookup")
    parser.add_argument("--interaction-pad", type=int, default=8,
                        help="parity+interaction: output columns rounded up to a multiple of this (1: none)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    rows = [min(r, args.rows_cap) for r in CRITEO_ROWS]
    generator = torch.Generator().manual_seed(0)
    dense = torch.randn(args.batch, 13, generator=generator).to(device)
    labels = (torch.rand(args.batch, generator=generator) < 0.25).float().to(device)
    local_ids = torch.stack([torch.randint(0, r, (args.batch,), generator=generator) for r in rows]).to(device)
    kinds = {"both": KINDS[:2], "all": KINDS}.get(args.embeddings, [args.embeddings])
    results = [run(kind, args, device, rows, dense, local_ids, labels) for kind in kinds]
    for r in results:
        print(f"torch_dlrm embeddings={r['embeddings']} B={r['batch']} bf16={r['bf16']}: {r['median_ms']:.3f} ms/step, "
              f"{r['samples_per_s'] / 1e6:.2f} M samples/s (first loss {r['first_loss']:.4f})", flush=True)
    summary = {"results": results, "device": str(device),
               "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
               "torch": torch.__version__}
    ms = {r["embeddings"]: r["median_ms"] for r in results}
    for kind, key, what in [("parity", "parity_speedup", "Parity embeddings"),
                            (INTERACTION, "parity_interaction_speedup", "Parity embeddings + interaction")]:
        if "stock" in ms and kind in ms:
            summary[key] = ms["stock"] / ms[kind]
            print(f"torch_dlrm: {what} step {summary[key]:.2f}x the stock step", flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(summary, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
