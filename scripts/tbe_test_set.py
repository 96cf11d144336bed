#!/usr/bin/env python3
"""Draws a held-out TBE test set (issue 13: "measured on configurations that are not listed
anywhere"): seeded configurations from the ranges users run, none of them a named configuration
(C1-C7, D1-D7) nor sharing one's table count, batch and dims. Each is written as a table-layout
file (docs/embedding.md, schema 1) plus the `parity bench tbe` flags the layout cannot carry
(index dtype, optimiser, per-sample weights), and listed in manifest.json. The set is committed
before anything is measured, and no kernel or rule may be tuned on it afterwards.

  scripts/tbe_test_set.py --seed 20261202 --count 10 --out bench/tbe/test_set_1
  scripts/tbe_test_set.py --seed 20261203 --count 10 --out bench/tbe/test_set_2 --exclude bench/tbe/test_set_1

--exclude names earlier sets (spent as test sets, now development sets): a draw that shares table
count, batch and dims with one of their configurations is rejected like a named one.

Ranges (one draw per configuration unless said): tables 2-64 (log-uniform); rows 50k-20M per table
(log-uniform); D a multiple of 4 in [16, 512], half from the common {16, 32, 64, 128, 256, 512} and
half any multiple of 4 (odd multiples of 4 included), one D for all tables or one per table; bag
length one-hot, fixed L in [2, 100] (log-uniform) or uniform [0, 2L]; Zipf alpha 0 or U[0, 1.4];
batch 2048-65536; fp32/fp16/bf16 weights, int32/int64 indices, sum/mean pooling, per-sample weights
(sum only), SGD / row-wise Adagrad / Adam. The categorical choices are dealt from balanced decks
(each value about equally often across the set), the rest drawn freely.
Budget so that one configuration runs in < 20 s on an H200 with torch in the same call: at most
8M indices, 12 GB of weights (6 GB with Adam: two more fp32 copies), 2 GB of pooled output.
"""
import argparse
import json
import math
import os
import random
import sys

COMMON_DIMS = (16, 32, 64, 128, 256, 512)
# (tables, batch, dims) of the named configurations (docs/embedding.md): a drawn configuration
# with the same three is rejected, as is one whose every table equals a named table shape.
NAMED = {
    "C1": (32, 512, {128}), "C2": (32, 8192, {128}), "C3": (26, 8192, {128}), "C4": (26, 16384, {128}),
    "C5": (32, 8192, None), "C6": (32, 8192, {128}), "C7": (32, 65536, {16, 32}),
    "D1": (40, 32768, {64}), "D2": (32, 65536, {16, 32}), "D3": (24, 8192, {160}), "D4": (64, 65536, {32}),
    "D5": (16, 16384, {96}), "D6": (8, 8192, {256}), "D7": (4, 2048, {128}),
}
NAMED_TABLE_SHAPES = {(100000, 128), (1000000, 128), (4000000, 128), (1000000, 16), (1000000, 32),
                      (1000000, 64), (500000, 160), (200000, 32), (2000000, 96), (5000000, 256),
                      (10000000, 128)}
MAX_INDICES = 8_000_000
MAX_WEIGHT_BYTES = 12e9
MAX_WEIGHT_BYTES_ADAM = 6e9
MAX_OUTPUT_BYTES = 2e9
DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


def log_uniform_int(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def draw_dim(rng):
    if rng.random() < 0.5:
        return rng.choice(COMMON_DIMS)
    return 4 * rng.randint(4, 128)


def draw_bag(rng, kind):
    if kind == "one-hot":
        return "one-hot", 1.0
    length = log_uniform_int(rng, 2, 100)
    if kind == "fixed":
        return length, float(length)
    return {"uniform": [0, 2 * length]}, float(length)


def draw_config(rng, k, deck):
    batch = rng.choice((2048, 4096, 8192, 16384, 32768, 65536))
    tables = log_uniform_int(rng, 2, 64)
    mixed_dims = rng.random() < 0.4
    shared_dim = draw_dim(rng)
    dtype, optimizer = deck["dtype"][k], deck["optimizer"][k]
    pooling, index_dtype, bag_kind = deck["pooling"][k], deck["index_dtype"][k], deck["bag"][k]
    alpha = 0.0 if rng.random() < 0.25 else round(rng.uniform(0.0, 1.4), 2)
    bag, mean_length = draw_bag(rng, bag_kind)
    weighted = pooling == "sum" and rng.random() < 0.4
    layout_tables = []
    for t in range(tables):
        rows = round(log_uniform_int(rng, 50_000, 20_000_000), -3)
        dim = draw_dim(rng) if mixed_dims else shared_dim
        layout_tables.append({"name": f"t{t}", "rows": rows, "dim": dim, "weights_dtype": dtype,
                              "pooling": pooling, "bag_length": bag, "zipf_alpha": alpha})
    return {"batch": batch, "tables": layout_tables, "index_dtype": index_dtype, "optimizer": optimizer,
            "weighted": weighted, "mean_bag_length": mean_length, "dtype": dtype}


def budget(cfg):
    tables = cfg["tables"]
    weight_bytes = sum(t["rows"] * t["dim"] for t in tables) * DTYPE_BYTES[cfg["dtype"]]
    indices = len(tables) * cfg["batch"] * cfg["mean_bag_length"]
    output_bytes = cfg["batch"] * sum(t["dim"] for t in tables) * DTYPE_BYTES[cfg["dtype"]]
    return weight_bytes, indices, output_bytes


def excluded_shapes(set_dirs):
    """(tables, batch, dims) of every configuration in the given sets' layout files."""
    shapes = {}
    for set_dir in set_dirs:
        manifest = json.load(open(os.path.join(set_dir, "manifest.json")))
        for c in manifest["configurations"]:
            layout = json.load(open(os.path.join(set_dir, c["layout"])))
            dims = frozenset(t["dim"] for t in layout["tables"])
            shapes[(len(layout["tables"]), layout["batch_size"], dims)] = c["name"]
    return shapes


def rejection(cfg, excluded):
    weight_bytes, indices, output_bytes = budget(cfg)
    limit = MAX_WEIGHT_BYTES_ADAM if cfg["optimizer"] == "adam" else MAX_WEIGHT_BYTES
    if weight_bytes > limit:
        return f"weights {weight_bytes / 1e9:.1f} GB > {limit / 1e9:.0f} GB"
    if indices > MAX_INDICES:
        return f"{indices / 1e6:.1f}M indices > {MAX_INDICES / 1e6:.0f}M"
    if indices < 1e5:
        return f"{indices:.0f} indices: too small to time the bandwidth"
    if output_bytes > MAX_OUTPUT_BYTES:
        return f"output {output_bytes / 1e9:.1f} GB > {MAX_OUTPUT_BYTES / 1e9:.0f} GB"
    dims = {t["dim"] for t in cfg["tables"]}
    for name, (tables, batch, named_dims) in NAMED.items():
        if len(cfg["tables"]) == tables and cfg["batch"] == batch and (named_dims is None or dims == named_dims):
            return f"shares tables, batch and dims with {name}"
    if all((t["rows"], t["dim"]) in NAMED_TABLE_SHAPES for t in cfg["tables"]):
        return "every table has a named configuration's shape"
    earlier = excluded.get((len(cfg["tables"]), cfg["batch"], frozenset(dims)))
    if earlier is not None:
        return f"shares tables, batch and dims with {earlier}"
    return None


def deal(rng, values, count):
    deck = [values[i % len(values)] for i in range(count)]
    rng.shuffle(deck)
    return deck


def flags(cfg):
    args = ["--batch", str(cfg["batch"]), "--index-dtype", cfg["index_dtype"], "--optimizer", cfg["optimizer"]]
    return args + (["--weighted"] if cfg["weighted"] else [])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--out", required=True)
    parser.add_argument("--exclude", nargs="*", default=[], metavar="SET_DIR",
                        help="earlier sets whose configurations a draw must not repeat")
    args = parser.parse_args()
    excluded = excluded_shapes(args.exclude)
    rng = random.Random(args.seed)
    deck = {"dtype": deal(rng, ["fp32", "fp16", "bf16"], args.count),
            "optimizer": deal(rng, ["sgd", "rowwise-adagrad", "adam"], args.count),
            "pooling": deal(rng, ["sum", "sum", "mean"], args.count),
            "index_dtype": deal(rng, ["int32", "int64"], args.count),
            "bag": deal(rng, ["one-hot", "fixed", "fixed", "uniform"], args.count)}
    os.makedirs(args.out, exist_ok=True)
    set_name = os.path.basename(os.path.normpath(args.out))
    manifest = {"seed": args.seed, "generator": "scripts/tbe_test_set.py", "configurations": []}
    if args.exclude:
        manifest["excluded_sets"] = [os.path.normpath(d) for d in args.exclude]
    for k in range(args.count):
        rejected = []
        for _ in range(10000):
            cfg = draw_config(rng, k, deck)
            reason = rejection(cfg, excluded)
            if reason is None:
                break
            rejected.append(reason)
        else:
            sys.exit(f"tbe_test_set.py: configuration {k}: no draw within the budget in 10000 tries")
        name = f"{set_name}_{k:02d}"
        layout = {"schema_version": 1, "name": name, "batch_size": cfg["batch"], "tables": cfg["tables"]}
        layout_file = f"{name}.json"
        with open(os.path.join(args.out, layout_file), "w") as f:
            json.dump(layout, f, indent=1)
            f.write("\n")
        weight_bytes, indices, output_bytes = budget(cfg)
        dims = sorted({t["dim"] for t in cfg["tables"]})
        manifest["configurations"].append({
            "name": name, "layout": layout_file, "flags": flags(cfg),
            "summary": (f"{len(cfg['tables'])} tables, rows {min(t['rows'] for t in cfg['tables'])}-"
                        f"{max(t['rows'] for t in cfg['tables'])}, D {dims if len(dims) < 6 else str(dims[:5]) + '...'}, "
                        f"B={cfg['batch']}, bags {cfg['tables'][0]['bag_length']}, "
                        f"Zipf {cfg['tables'][0]['zipf_alpha']}, {cfg['dtype']}, {cfg['index_dtype']}, "
                        f"{cfg['tables'][0]['pooling']}{', weighted' if cfg['weighted'] else ''}, {cfg['optimizer']}"),
            "weight_bytes": weight_bytes, "num_indices_expected": int(indices), "output_bytes": output_bytes,
            "draws_rejected": len(rejected)})
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    for c in manifest["configurations"]:
        print(f"{c['name']}: {c['summary']}")


if __name__ == "__main__":
    main()
