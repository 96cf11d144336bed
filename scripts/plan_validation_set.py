#!/usr/bin/env python3
"""Draws the planner's held-out validation set (issue 16): seeded single-GPU configurations
(preset, batch, precision, checkpointing, optimizer) from a space that excludes the 11
development configurations of `parity plan validate`'s default list (which the model was
examined against) and the per-component diagnostics at batch 32768 (LEAD_REQUEST of the planner
work). Writes one MODEL:BATCH:PRECISION:CHECKPOINTING[:OPTIMIZER] per line, the format of
`parity plan validate --configs-file`.

    scripts/plan_validation_set.py --seed 20261201 --count 12 --out bench/plan/validation_set_1.txt
"""
import argparse
import random
import sys

# The development set (src/plan/validate.cpp default_validation_configs): excluded whatever the optimizer.
DEVELOPMENT = {
    ("dlrm-kaggle", 16384, "bf16", "none"), ("dlrm-kaggle", 65536, "bf16", "none"),
    ("dlrm-kaggle", 65536, "bf16", "full"), ("dlrm-kaggle", 131072, "bf16", "none"),
    ("dlrm-kaggle", 65536, "tf32", "none"), ("dlrm-kaggle", 65536, "fp32", "none"),
    ("dlrm-v2", 16384, "bf16", "none"), ("dlrm-v2", 65536, "bf16", "none"),
    ("dlrm-v2", 65536, "bf16", "full"), ("dlrm-v2", 65536, "tf32", "none"),
    ("dlrm-v2", 16384, "fp32", "none"),
}
# Per-component diagnostics asked of the device (bench train breakdowns): excluded too.
DIAGNOSTIC = {(m, 32768, p, "none") for m in ("dlrm-kaggle", "dlrm-v2") for p in ("bf16", "tf32")}

BATCHES = {
    "dlrm-kaggle": [8192, 16384, 24576, 32768, 49152, 65536, 98304, 131072, 196608, 262144],
    # dlrm-v2 holds 105 GB of tables: fp32 activations fit the 141 GB H200 up to 65536 per GPU.
    "dlrm-v2": [8192, 16384, 24576, 32768, 49152, 65536, 98304],
}
MAX_V2_FP32_ACTIVATIONS_BATCH = 65536
# "" = the preset's own optimisers (kaggle: SGD; dlrm-v2: row-wise Adagrad tables, Adagrad dense).
# Adam tables (3x the weights) and element-wise state do not fit dlrm-v2 on one GPU: sgd only there.
OPTIMIZERS = {"dlrm-kaggle": ["", "adagrad", "adam"], "dlrm-v2": ["", "sgd"]}


def space():
    for model, batches in BATCHES.items():
        for batch in batches:
            for precision in ("bf16", "tf32", "fp32"):
                if model == "dlrm-v2" and precision != "bf16" and batch > MAX_V2_FP32_ACTIVATIONS_BATCH:
                    continue
                for checkpointing in ("none", "full"):
                    key = (model, batch, precision, checkpointing)
                    if key in DEVELOPMENT or key in DIAGNOSTIC:
                        continue
                    for optimizer in OPTIMIZERS[model]:
                        yield key + (optimizer,)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--count", type=int, default=12, help="configurations, half per preset")
    parser.add_argument("--out", default="-")
    args = parser.parse_args()
    if args.count < 2:
        sys.exit("--count: %d must be >= 2" % args.count)
    rng = random.Random(args.seed)
    candidates = sorted(space())
    drawn = []
    for model in BATCHES:  # stratified: half from each preset, no (model, batch, precision, ckpt) twice
        pool = [c for c in candidates if c[0] == model]
        rng.shuffle(pool)
        seen = set()
        for config in pool:
            if len([d for d in drawn if d[0] == model]) == args.count // 2 + (model == "dlrm-kaggle") * (args.count % 2):
                break
            if config[:4] in seen:
                continue
            seen.add(config[:4])
            drawn.append(config)
    lines = ["# Planner validation set 1 (held out): scripts/plan_validation_set.py --seed %d --count %d" %
             (args.seed, args.count),
             "# drawn from %d candidates that exclude the 11 development and 4 diagnostic configurations" %
             len(candidates),
             "# run: parity plan validate --device cuda --hw h200 --configs-file bench/plan/validation_set_1.txt"]
    for model, batch, precision, checkpointing, optimizer in drawn:
        lines.append(":".join([model, str(batch), precision, checkpointing] + ([optimizer] if optimizer else [])))
    text = "\n".join(lines) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as out:
            out.write(text)


if __name__ == "__main__":
    main()
