#!/usr/bin/env bash
# TBE round 6 on the device (issue 13; bench/tbe/dev/README.md): the off-boundary 16-bit warp tiles,
# the atomic SGD backward and short backward chunks, on the development cases drawn from spent test
# set 2 (bench/tbe/dev/dev_s2_*.json) and the C2 guard, same call. run_all.sh runs it when named:
#   scripts/gpu/run_all.sh --only tbe_round6_probe   (after tbe_test_set_probe for torch's figures)
#   1. 04 forward: the old path (wide_rows) against the tiles (warp_tile_one_hot), step with short chunks;
#   2. 05 step with short chunks; 00 and 07 steps with atomic_sgd and with short chunks;
#   3. C2 with the row backward (the guard: >= 3.4 TB/s forward, step <= 2.8 ms) and with short chunks.
# The default-choice figures of 00/04/05/07 and torch's come from tbe_test_set_probe on set 2.
#   ROUND6_REPS=10 scripts/gpu/tbe_round6_probe.sh build/cuda
# Budget: 8 runs of ~4-10 s: < 90 s. (Short chunks became the default after run 56; long_chunks is the
# old length, so `--backward-variant row` here now also means short chunks.)
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
source "$here/tbe_probe_common.sh"
reps="${ROUND6_REPS:-10}"
failed=0
dev=bench/tbe/dev
run() { run_tbe_bench round6 "$@"; }
run s2_04_tiles --layout "$dev/dev_s2_04.json" --batch 32768 --index-dtype int64 --optimizer adam --weighted \
  --forward-variant wide_rows,warp_tile_one_hot --backward-variant short_chunks
run s2_05_short_chunks --layout "$dev/dev_s2_05.json" --batch 65536 --index-dtype int64 --optimizer adam \
  --backward-variant short_chunks
for v in atomic_sgd short_chunks; do
  run "s2_00_$v" --layout "$dev/dev_s2_00.json" --batch 4096 --index-dtype int32 --optimizer sgd --backward-variant "$v"
  run "s2_07_$v" --layout "$dev/dev_s2_07.json" --batch 32768 --index-dtype int64 --optimizer sgd --backward-variant "$v"
done
run C2_row --config C2 --backward-variant row
run C2_short_chunks --config C2 --backward-variant short_chunks
python3 - "$OUT" "$here" <<'PY' | tee "$OUT/tbe_round6_summary.txt"
import glob, json, os, sys
sys.path.insert(0, sys.argv[2])
from tbe_probe_summary import print_forward_rows  # noqa: E402
for path in sorted(glob.glob(os.path.join(sys.argv[1], "round6_*.json"))):
    d = json.load(open(path))
    name = os.path.basename(path)[len("round6_"):-len(".json")]
    print_forward_rows(name, d, 22, 20)
    step = d.get("step_fwd_bwd_opt", {})
    bounds = d.get("bounds_check", {})
    print(f"{name:22s} step {step.get('median_ms', float('nan')):.3f} ms"
          f" ({d.get('config', {}).get('optimizer')}, backward {d.get('backward_variant', '-')})")
PY
exit $failed
