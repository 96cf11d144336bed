#!/usr/bin/env bash
# Two `parity` binaries on the same TBE configurations in one device call, alternating (old, new,
# old, new), so a kernel change is judged against the build before it under the same clocks.
#   OUT=... TBE_AB_OLD=build/ab/parity_old scripts/gpu/tbe_ab_probe.sh BUILD_DIR
#   TBE_AB_CONFIGS="C2 BC 11:01 10:01"   # named configurations, or SET:CASE of bench/tbe/test_set_SET
#   TBE_AB_METRIC=bounds|step|forward      # the figure summarised (the JSON has them all)
#   TBE_AB_ROUNDS=2 TBE_AB_REPS=30
# Writes $OUT/ab/<config>_<old|new>_<round>.json and $OUT/tbe_ab.txt (per configuration: each
# round's median, the same-call floor for the bounds check, new / old).
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
: "${TBE_AB_OLD:?TBE_AB_OLD must name the other parity binary}"
# shellcheck source=tbe_probe_common.sh
source "$(dirname "$0")/tbe_probe_common.sh"
configs="${TBE_AB_CONFIGS:-C2 BC}"
metric="${TBE_AB_METRIC:-bounds}"
rounds="${TBE_AB_ROUNDS:-2}"
reps="${TBE_AB_REPS:-30}"
mkdir -p "$OUT/ab"

# The bench flags of a configuration: --config NAME, or a test-set layout with its manifest flags.
config_flags() {
  local config="$1"
  if [[ "$config" != *:* ]]; then
    echo "--config $config"
    return
  fi
  local set_no="${config%%:*}" case_no="${config##*:}"
  local dir="bench/tbe/test_set_$set_no" name="test_set_${set_no}_${case_no}"
  python3 - "$dir/manifest.json" "$name" "$dir/$name.json" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["configurations"]:
    if c["name"] == sys.argv[2]:
        print("--layout", sys.argv[3], " ".join(c["flags"]))
PY
}

failed=0
for config in $configs; do
  label="${config/:/_}"
  read -r -a flags <<< "$(config_flags "$config")"
  for ((round = 1; round <= rounds; ++round)); do
    for which in old new; do
      bin="$parity"
      [[ $which == old ]] && bin="$TBE_AB_OLD"
      timeout 60 "$bin" bench tbe "${flags[@]}" --reps "$reps" --warmup 5 \
        --out "$OUT/ab/${label}_${which}_$round.json" > "$OUT/ab/${label}_${which}_$round.log" 2>&1 ||
        { echo "$config $which $round failed"; failed=1; }
    done
  done
done

python3 - "$OUT/ab" "$metric" <<'PY' | tee "$OUT/tbe_ab.txt"
import glob, json, os, statistics, sys
folder, metric = sys.argv[1], sys.argv[2]
key = {"bounds": "bounds_check_clean", "step": "step_fwd_bwd_opt", "forward": "forward"}[metric]
floor_key = "bounds_check_floor_index_offsets_read" if metric == "bounds" else None
labels = sorted({os.path.basename(p).rsplit("_", 2)[0] for p in glob.glob(folder + "/*.json")})
print(f"{'config':14s} {'old us (rounds)':24s} {'new us (rounds)':24s} {'floor us':>9s} {'new/old':>8s}")
for label in labels:
    def medians(which, k):
        values = []
        for path in sorted(glob.glob(f"{folder}/{label}_{which}_*.json")):
            report = json.load(open(path))
            if k in report and "median_ms" in report[k]:
                values.append(report[k]["median_ms"] * 1000)
        return values
    old, new = medians("old", key), medians("new", key)
    if not old or not new:
        print(f"{label:14s} missing")
        continue
    floors = medians("new", floor_key) if floor_key else []
    floor = f"{statistics.median(floors):9.2f}" if floors else f"{'-':>9s}"
    print(f"{label:14s} {' '.join('%.2f' % v for v in old):24s} {' '.join('%.2f' % v for v in new):24s} "
          f"{floor} {statistics.median(new) / statistics.median(old):8.3f}")
PY
exit $failed
