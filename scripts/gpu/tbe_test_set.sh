#!/usr/bin/env bash
# The held-out TBE test set on the device (issue 13; drawn by scripts/tbe_test_set.py, committed
# before any measurement): each configuration of bench/tbe/<set>/manifest.json once with
# `parity bench tbe` (layout file + flags; forward, step, bounds check and its floor, the copy
# measured in the same call), then torch.nn.EmbeddingBag on the same configurations in the same
# call, then $OUT/tbe_test_set.json and a table: forward % of copy (the judged byte model) against
# the per-row-size target, step ms, torch's step and the ratio (target >= 5x), bounds check / floor
# (target <= 1.2x), wall seconds per configuration.
#   scripts/gpu/tbe_test_set.sh build/cuda                          # bench/tbe/test_set_1
#   scripts/gpu/tbe_test_set.sh build/cuda bench/tbe/test_set_2     # the set directory as argument 2
#   TBE_TEST_SET=bench/tbe/test_set_2 TBE_TEST_SET_REPS=10 scripts/gpu/tbe_test_set.sh build/cuda
#   TBE_TEST_SET_FLAGS="--backward-variant vendor_sort" ...  # bench flags added to every configuration
# Budget: 10 configurations of < 20 s each including torch (the generator's limits: <= 8M
# indices, <= 12 GB of weights, 6 GB with Adam).
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
source "$here/tbe_probe_common.sh"
set_dir="${2:-${TBE_TEST_SET:-bench/tbe/test_set_1}}"
reps="${TBE_TEST_SET_REPS:-10}"
extra_flags="${TBE_TEST_SET_FLAGS:-}"
manifest="$set_dir/manifest.json"
[ -f "$manifest" ] || { echo "tbe_test_set.sh: $manifest is missing" >&2; exit 2; }
failed=0
ran=()
: > "$OUT/tbe_test_set_wall.txt"
# name<TAB>layout<TAB>flags, one line per configuration
while IFS=$'\t' read -r name layout flags; do
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # the flags are words by construction (the generator writes them)
  # and so are the extra ones
  "$parity" bench tbe --layout "$set_dir/$layout" $flags $extra_flags --reps "$reps" --warmup 3 \
    --out "$OUT/tbe_$name.json" > "$OUT/tbe_$name.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  echo "== $name rc=$rc $(python3 -c "print(f'{$end - $start:.1f} s')")"
  echo "$name $(python3 -c "print(f'{$end - $start:.2f}')")" >> "$OUT/tbe_test_set_wall.txt"
  if [ "$rc" != 0 ]; then
    tail -3 "$OUT/tbe_$name.log"
    failed=1
  else
    ran+=("$OUT/tbe_$name.json")
  fi
done < <(python3 -c "
import json, sys
for c in json.load(open(sys.argv[1]))['configurations']:
    print(c['name'], c['layout'], ' '.join(c['flags']), sep='\t')" "$manifest")

if [ "${#ran[@]}" -gt 0 ] && python3 -c "import torch, triton" 2>/dev/null; then
  start=$(date +%s)
  python3 "$here/torch_tbe_baseline.py" --from-parity "${ran[@]}" --out "$OUT/tbe_test_set_torch.json" \
    > "$OUT/tbe_test_set_torch.log" 2>&1 || failed=1
  echo "== torch $(($(date +%s) - start)) s for ${#ran[@]} configurations"
else
  echo "== torch: skipped (no results, or torch/triton not importable)"
fi

python3 - "$OUT" "$manifest" "$here" "$extra_flags" <<'PY' | tee "$OUT/tbe_test_set.txt"
import json, os, sys
out, manifest_path, extra_flags = sys.argv[1], sys.argv[2], sys.argv[4]
sys.path.insert(0, sys.argv[3])
from compare_tbe import merge_torch_entry  # noqa: E402
manifest = json.load(open(manifest_path))
torch = {}
if os.path.exists(os.path.join(out, "tbe_test_set_torch.json")):
    torch = {r["config"]: r for r in json.load(open(os.path.join(out, "tbe_test_set_torch.json")))["results"]}
wall = {}
if os.path.exists(os.path.join(out, "tbe_test_set_wall.txt")):
    wall = {l.split()[0]: float(l.split()[1]) for l in open(os.path.join(out, "tbe_test_set_wall.txt"))}
nan = float("nan")
rows = []
for c in manifest["configurations"]:
    name = c["name"]
    row = {"config": name, "summary": c["summary"], "wall_s": wall.get(name)}
    path = os.path.join(out, f"tbe_{name}.json")
    if not os.path.exists(path):
        row["error"] = "no result (see the log)"
        rows.append(row)
        continue
    d = json.load(open(path))
    fb = d.get("forward_bandwidth", {})
    row.update({"forward_ms": d["forward"]["median_ms"], "forward_tbps_every_lookup": d["forward"]["tbps"],
                "copy_tbps": fb.get("copy_tbps"), "forward_byte_model": fb.get("evaluated_byte_model"),
                "forward_ratio_to_copy": fb.get("evaluated_ratio_to_copy"),
                "forward_target_ratio": fb.get("target_ratio_to_copy"), "forward_target_met": fb.get("target_met"),
                "step_ms": d["step_fwd_bwd_opt"]["median_ms"], "optimizer": d["config"].get("optimizer"),
                "bounds_check_us": d["bounds_check_clean"]["median_ms"] * 1e3,
                "bounds_check_floor_us": d.get("bounds_check_floor_index_offsets_read", {}).get("median_ms", nan) * 1e3,
                "bounds_check_ratio": d.get("bounds_check_floor_index_offsets_read", {}).get("clean_check_ratio")})
    if row["bounds_check_ratio"] is not None:
        row["bounds_check_target_met"] = row["bounds_check_ratio"] <= 1.2
    merge_torch_entry(row, torch.get(name))
    rows.append(row)
json.dump({"benchmark": "tbe_test_set", "manifest": manifest_path, "seed": manifest["seed"],
           "extra_flags": extra_flags, "rows": rows},
          open(os.path.join(out, "tbe_test_set.json"), "w"), indent=2)
yes = {True: "yes", False: "NO", None: "-"}
print(f"{'config':14s} {'fwd ms':>8s} {'%copy':>6s} {'tgt':>4s} {'met':>4s} {'step ms':>8s} {'torch':>8s} {'x':>6s}"
      f" {'met':>4s} {'bc/floor':>8s} {'met':>4s} {'wall s':>6s}  configuration")
for r in rows:
    if "error" in r:
        print(f"{r['config']:14s} {r['error']}")
        continue
    ratio = 100 * (r["forward_ratio_to_copy"] or nan)
    print(f"{r['config']:14s} {r['forward_ms']:8.3f} {ratio:6.1f} {100 * (r['forward_target_ratio'] or nan):4.0f}"
          f" {yes[r['forward_target_met']]:>4s} {r['step_ms']:8.3f} {r.get('torch_step_ms', nan):8.3f}"
          f" {r.get('step_speedup_vs_torch', nan):6.2f} {yes[r.get('step_speedup_target_met')]:>4s}"
          f" {r['bounds_check_ratio'] or nan:8.2f} {yes[r.get('bounds_check_target_met')]:>4s}"
          f" {r['wall_s'] or nan:6.1f}  {r['summary']}")
met = [r for r in rows if "error" not in r]
print("test set: forward target met on %d/%d, step >= 5x torch on %d/%d, bounds check <= 1.2x on %d/%d" % (
    sum(1 for r in met if r["forward_target_met"]), len(met),
    sum(1 for r in met if r.get("step_speedup_target_met")), sum(1 for r in met if "step_speedup_target_met" in r),
    sum(1 for r in met if r.get("bounds_check_target_met")), len(met)))
PY
exit $failed
