#!/usr/bin/env bash
# Narrow-row TBE kernels on the device (docs/embedding.md, "Narrow rows"). Called like the
# bench_*.sh pieces (build dir as $1, $OUT set): run_all.sh runs it with `--only tbe_narrow_probe`.
#   1. the GPU tests of every TBE path (narrow rows, group per bag, backward, bounds check);
#   2. `parity bench tbe` on issue 13's narrow configurations, each twice in the same call:
#      --variant wide_rows (group-per-bag forward, warp-per-chunk backward) and --variant narrow_rows
#      (the bench checks sampled bags of the forward against fp64 before timing);
#   3. a table old vs new: forward TB/s and ms, backward and step ms ($OUT/tbe_narrow_summary.txt).
#   NARROW_CONFIGS="D1 D2" NARROW_REPS=20 scripts/gpu/tbe_narrow_probe.sh build/cuda
# NARROW_TESTS=0 skips the tests; NARROW_FILTER picks them (default *GpuTbe*). Each bench run
# allocates and fills its tables (up to ~5 GB) and times forward, backward, step and the bounds
# check: allow ~10-20 s per run, 14 runs by default; split NARROW_CONFIGS over calls if needed.
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
source "$(dirname "$0")/tbe_probe_common.sh"
reps="${NARROW_REPS:-20}"
failed=0

if [ "${NARROW_TESTS:-1}" = 1 ]; then
  run_tbe_gpu_tests narrow_tests.log "${NARROW_FILTER:-*GpuTbe*}" || failed=1
fi

# Issue 13's narrow rows: D1 (40 x 1M, D=64 bf16, one-hot), D2 (= C7: D in {16, 32} fp32,
# L ~ U[0,10]), D4 (64 x 200k, D=32 fp32, L=4, Zipf 1.15, Adam); then shapes listed nowhere:
# D=16 fp32 one-hot, D=8 weighted L in 1..3 with Adagrad, D=32 fp16 mean L=2, mixed dims 4..32.
for c in ${NARROW_CONFIGS:-D1 D2 D4 D16_onehot D8_weighted_adagrad D32_fp16_mean D4to32_mixed}; do
  case "$c" in
    D16_onehot) args=(--tables 32 --rows 1000000 --dim 16 --batch 65536 --pooling-factor one-hot) ;;
    D8_weighted_adagrad) args=(--tables 32 --rows 1000000 --dim 8 --batch 65536 --pooling-factor 1..3 --weighted
                               --optimizer adagrad) ;;
    D32_fp16_mean) args=(--tables 32 --rows 1000000 --dim 32 --batch 65536 --pooling-factor 2 --pooling mean
                         --weights-dtype fp16 --output-dtype fp32) ;;
    D4to32_mixed) args=(--tables 30 --rows 500000 --dim 4,8,16,24,32 --batch 32768 --pooling-factor 0..6
                        --zipf 0.8) ;;
    *) args=(--config "$c") ;;
  esac
  for variant in wide_rows narrow_rows; do
    # --backward-variant row: only the default backward window (the narrow kernel has one).
    "$parity" bench tbe "${args[@]}" --variant "$variant" --backward-variant row --reps "$reps" --warmup 3 \
      --out "$OUT/narrow_${c}_${variant}.json" > "$OUT/narrow_${c}_${variant}.log" 2>&1
    rc=$?
    echo "== $c $variant rc=$rc"
    if [ "$rc" != 0 ]; then
      tail -3 "$OUT/narrow_${c}_${variant}.log"
      failed=1
    fi
  done
done

python3 - "$OUT" <<'PY' | tee "$OUT/tbe_narrow_summary.txt"
import glob, json, os, sys
out = sys.argv[1]
runs = {}
for path in sorted(glob.glob(os.path.join(out, "narrow_*_*_rows.json"))):
    name = os.path.basename(path)[len("narrow_"):-len(".json")]
    config, variant = name.rsplit("_", 2)[0], "_".join(name.rsplit("_", 2)[1:])
    runs.setdefault(config, {})[variant] = json.load(open(path))
print(f"{'config':20s} {'variant':12s} {'fwd ms':>8s} {'fwd TB/s':>9s} {'% copy':>7s} {'target':>7s}"
      f" {'bwd ms':>8s} {'step ms':>8s}")
for config, by_variant in runs.items():
    for variant in ("wide_rows", "narrow_rows"):
        d = by_variant.get(variant)
        if d is None:
            continue
        f, b, s = d["forward"], d["backward_fused"], d["step_fwd_bwd_opt"]
        bw = d.get("forward_bandwidth", {})
        ratio = 100 * bw.get("evaluated_ratio_to_copy", float("nan"))
        met = {True: "met", False: "NOT met"}.get(bw.get("target_met"), "-")
        print(f"{config:20s} {variant:12s} {f['median_ms']:8.3f} {f['tbps']:9.2f} {ratio:7.1f} {met:>7s}"
              f" {b['median_ms']:8.3f} {s['median_ms']:8.3f}")
    if len(by_variant) == 2:
        w, n = by_variant["wide_rows"], by_variant["narrow_rows"]
        print(f"{config:20s} {'new/old':12s} {w['forward']['median_ms'] / n['forward']['median_ms']:7.2f}x"
              f" {'':25s} {w['backward_fused']['median_ms'] / n['backward_fused']['median_ms']:7.2f}x"
              f" {w['step_fwd_bwd_opt']['median_ms'] / n['step_fwd_bwd_opt']['median_ms']:7.2f}x")
PY
exit $failed
