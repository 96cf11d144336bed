#!/usr/bin/env bash
# TBE round 7 on the device (issue 13; bench/tbe/dev/README.md): the candidates of this round on the
# development cases drawn from spent test set 2, the old path timed beside in the same call.
# run_all.sh runs it when named:  scripts/gpu/run_all.sh --only tbe_round7_probe
#   1. 05 (D 32/16/488/256 fp32 one-hot): the width-class launches (wide_rows, kAuto's path) against
#      the wide one-hot tiles in one launch (warp_tile_one_hot_wide_rows);
#   2. 04 (D=164 bf16 one-hot, off 16-byte boundaries): the one-hot tiles (kAuto) against the wide
#      tiles' three 8-byte pieces per lane;
#   3. set 2's 02 (D 60/32 fp16, bags U[0, 58], mean): narrow rows (kAuto) against narrow_rows_deep
#      on 8-byte pieces;
#   4. 00 and 07 steps by the default (sorted, deterministic) backward: the radix sort now runs
#      three kernels a pass instead of four (compare with run 56's 0.152 / 0.279 ms);
#   5. C2 (the guard: >= 3.4 TB/s forward, step <= 2.8 ms).
# The GPU tests of this round's kernels run first (round7_tests.log).
#   ROUND7_REPS=10 scripts/gpu/tbe_round7_probe.sh build/cuda
# Budget: 6 runs of ~4-10 s: < 70 s.
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
source "$here/tbe_probe_common.sh"
reps="${ROUND7_REPS:-10}"
failed=0
dev=bench/tbe/dev
run() { run_tbe_bench round7 "$@"; }
# This round's GPU tests first (the new and changed kernels against fp64, the sort against std::stable_sort).
run_tbe_gpu_tests round7_tests.log \
  'GpuTbeForwardWideTiles.*:GpuTbeForwardTilesOffBoundary.*:GpuTbeBackwardAtomicSgd.*:GpuRadixSort.*:GpuTbeBackwardShortChunks.*' ||
  failed=1
run s2_05_wide_tiles --layout "$dev/dev_s2_05.json" --batch 65536 --index-dtype int64 --optimizer adam \
  --forward-variant wide_rows,warp_tile_one_hot_wide_rows
run s2_04_wide_tiles --layout "$dev/dev_s2_04.json" --batch 32768 --index-dtype int64 --optimizer adam --weighted \
  --forward-variant warp_tile_one_hot,warp_tile_one_hot_wide_rows
run s2_02_deep --layout bench/tbe/test_set_2/test_set_2_02.json --batch 65536 --index-dtype int32 \
  --optimizer rowwise-adagrad --forward-variant narrow_rows,narrow_rows_deep
run s2_00_default --layout "$dev/dev_s2_00.json" --batch 4096 --index-dtype int32 --optimizer sgd
run s2_07_default --layout "$dev/dev_s2_07.json" --batch 32768 --index-dtype int64 --optimizer sgd
run C2 --config C2
python3 - "$OUT" "$here" <<'PY' | tee "$OUT/tbe_round7_summary.txt"
import sys
sys.path.insert(0, sys.argv[2])
from tbe_probe_summary import print_round_summary  # noqa: E402
print_round_summary(sys.argv[1], "round7")
PY
exit $failed
