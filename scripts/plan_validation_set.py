#!/usr/bin/env python3
"""Draws a held-out validation set for the planner (issue 16): seeded single-GPU configurations
(preset, batch, precision, checkpointing, optimizer) from a space that excludes the 11
development configurations of `parity plan validate`'s default list (which the model was
examined against), the per-component diagnostics at batch 32768, and every configuration of the
earlier sets given with --exclude (a scored set becomes development data: its
(preset, batch, precision, checkpointing) is excluded whatever the optimizer). Writes one
MODEL:BATCH:PRECISION:CHECKPOINTING[:OPTIMIZER] per line, the format of
`parity plan validate --configs-file`.

    scripts/plan_validation_set.py --set 1 --seed 20261201 --count 12 --out bench/plan/validation_set_1.txt
    scripts/plan_validation_set.py --set 2 --seed 20261202 --count 12 \
        --exclude bench/plan/validation_set_1.txt --out bench/plan/validation_set_2.txt
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


def read_set(path):
    """The (preset, batch, precision, checkpointing) of every configuration line of a set file."""
    keys = set()
    try:
        lines = open(path)
    except OSError as error:
        sys.exit("--exclude: cannot read '%s': %s" % (path, error.strerror))
    with lines:
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split(":")
            if len(fields) not in (4, 5):
                sys.exit("%s: '%s' is not MODEL:BATCH:PRECISION:CHECKPOINTING[:OPTIMIZER]" % (path, line))
            keys.add((fields[0], int(fields[1]), fields[2], fields[3]))
    return keys


def space(excluded=frozenset()):
    for model, batches in BATCHES.items():
        for batch in batches:
            for precision in ("bf16", "tf32", "fp32"):
                if model == "dlrm-v2" and precision != "bf16" and batch > MAX_V2_FP32_ACTIVATIONS_BATCH:
                    continue
                for checkpointing in ("none", "full"):
                    key = (model, batch, precision, checkpointing)
                    if key in DEVELOPMENT or key in DIAGNOSTIC or key in excluded:
                        continue
                    for optimizer in OPTIMIZERS[model]:
                        yield key + (optimizer,)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", type=int, default=1, help="the set's number (its header)")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--exclude", action="append", default=[],
                        help="an earlier set file whose configurations are excluded (repeatable)")
    parser.add_argument("--count", type=int, default=12, help="configurations, half per preset")
    parser.add_argument("--out", default="-")
    args = parser.parse_args()
    if args.count < 2:
        sys.exit("--count: %d must be >= 2" % args.count)
    rng = random.Random(args.seed)
    excluded = set()
    for path in args.exclude:
        excluded |= read_set(path)
    candidates = sorted(space(excluded))
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
    command = "scripts/plan_validation_set.py --set %d --seed %d --count %d%s" % (
        args.set, args.seed, args.count, "".join(" --exclude " + path for path in args.exclude))
    exclusions = "the 11 development and 4 diagnostic configurations"
    if args.exclude:
        exclusions += " and the %d of %s" % (len(excluded), ", ".join(args.exclude))
    lines = ["# Planner validation set %d (held out): %s" % (args.set, command),
             "# drawn from %d candidates that exclude %s" % (len(candidates), exclusions),
             "# run: parity plan validate --device cuda --hw h200 --configs-file bench/plan/validation_set_%d.txt" %
             args.set]
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
