#!/usr/bin/env bash
# Every forward variant of `parity bench tbe` on chosen configurations of a TBE set (development
# sets only: a held-out test set is scored by tbe_test_set_probe.sh, once). Shows which kernel is
# fastest where before kAuto's rule is changed. run_all.sh runs it only when named:
#   TBE_SWEEP_SET=bench/tbe/test_set_3 TBE_SWEEP_CONFIGS=test_set_3_00,test_set_3_05 \
#   TBE_SWEEP_VARIANTS=auto,warp_tile_one_hot,... scripts/gpu/run_all.sh --prebuilt ... --only tbe_forward_sweep_probe
# Writes $OUT/tbe_sweep_<config>.json and $OUT/tbe_forward_sweep.txt (variant, median ms, % of copy).
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
parity="$build_dir/bin/parity"
set_dir="${TBE_SWEEP_SET:-bench/tbe/test_set_3}"
configs="${TBE_SWEEP_CONFIGS:-test_set_3_00,test_set_3_05}"
variants="${TBE_SWEEP_VARIANTS:-auto,narrow_rows,wide_rows,fitted_groups,narrow_rows_deep,narrow_rows_light,warp_tile_one_hot,warp_tile_one_hot_prefetch,warp_tile_short_bags,warp_tile_short_bags_prefetch,warp_tile_short_bags_light,wide_rows_dedup,wide_rows_one_launch,warp_tile_one_hot_wide_rows,lane_rows,narrow_rows_split_bags,warp_tile_one_hot_eight_passes}"
case "$set_dir" in *test_set_18*) echo "tbe_forward_sweep_probe: $set_dir is a held-out test set; sweep development sets only" >&2; exit 2 ;; esac
failed=0
for name in ${configs//,/ }; do
  flags="$(python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    if c['name'] == sys.argv[2]: print(' '.join(c['flags']))" "$set_dir/manifest.json" "$name")"
  # shellcheck disable=SC2086  # flags are words by construction
  "$parity" bench tbe --layout "$set_dir/$name.json" $flags --forward-variant "$variants" --forward-only \
    --out "$OUT/tbe_sweep_$name.json" > "$OUT/tbe_sweep_$name.log" 2>&1
  rc=$?
  echo "== $name rc=$rc"
  [[ $rc == 0 ]] || { tail -5 "$OUT/tbe_sweep_$name.log"; failed=1; }
done
python3 - "$OUT" "$configs" <<'PY' | tee "$OUT/tbe_forward_sweep.txt"
import json, os, sys
out = sys.argv[1]
for name in sys.argv[2].split(","):
    path = os.path.join(out, f"tbe_sweep_{name}.json")
    if not os.path.exists(path):
        continue
    doc = json.load(open(path))
    # --forward-only runs: every variant (auto included) under forward_variants, each with the
    # copy measured in the same call and its ratio under the judged byte model.
    rows = doc.get("forward_variants", {})
    print(f"{name}: kAuto takes {doc.get('forward_auto_kernel', '?')}")
    for variant, stats in sorted(rows.items(), key=lambda kv: kv[1].get("median_ms", float("inf"))):
        if "median_ms" not in stats:
            print(f"  {variant:34s} {'-':>8s}    {(stats.get('skipped') or stats.get('error') or 'not run')[:70]}")
            continue
        band = stats.get("forward_bandwidth", {})
        pct = 100.0 * band.get("evaluated_ratio_to_copy", 0.0)
        target = 100.0 * band.get("target_ratio_to_copy", 0.0)
        print(f"  {variant:34s} {stats['median_ms']:8.4f} ms {pct:6.1f}% of copy "
              f"({band.get('evaluated_byte_model', '?')}; target {target:.1f}%)")
PY
exit $failed
