#!/usr/bin/env bash
# TBE round 8 on the device (issue 13): kAuto now takes the wide one-hot tiles
# (warp_tile_one_hot_wide_rows) for one-hot rows of 129-2048 bytes (wide_one_hot_forward_fits).
# Each run times the old path beside kAuto (or beside the wide tiles where kAuto did not move) in
# one call, on development cases only (sets 1-3, bench/tbe/dev):
#   1. rows kAuto moved: dev s2_05 (D 16/32/256/488 fp32) and s3_07 (D 64/300 fp32, mean) from the
#      width-class launches (wide_rows), s3_06 (D=356 fp16) from the group per bag, s2_04 (D=164 bf16,
#      off 16-byte boundaries) and s1_00 (D=44 fp32, 176 bytes: the one case of 129-512 bytes not yet
#      measured on the wide tiles) from the one-hot tiles;
#   2. narrow rows kAuto keeps (<= 128 bytes), one-hot: s3_00 (D=16 fp16, 20 tables), s1_02 (D=32
#      fp32), s1_04 (D=64 bf16); short bags: s3_05 (D=16 bf16, L=7, mean), s3_01 (D=16 bf16, L=7,
#      weighted), s1_08 (D=32 fp16, L=6, weighted): kAuto against the new lane rows (lane_rows: a lane
#      owns whole rows, 4/2/1 bags per lane) and, one-hot, the wide tiles (one lane per bag there),
#      to decide whether the rule should take either for narrow rows.
# The GPU tests of the forward first (round8_tests.log).
#   scripts/gpu/run_all.sh --only tbe_round8_probe     (or: ROUND8_REPS=10 scripts/gpu/tbe_round8_probe.sh build/cuda)
# Budget: 12 runs of ~4-10 s: < 120 s.
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
source "$here/tbe_probe_common.sh"
reps="${ROUND8_REPS:-10}"
failed=0
dev=bench/tbe/dev
s1=bench/tbe/test_set_1
s3=bench/tbe/test_set_3
run() { run_tbe_bench round8 "$@"; }
run_tbe_gpu_tests round8_tests.log \
  'GpuTbeForwardOp.*:GpuTbeForwardWidths.*:GpuTbeForwardTilesOffBoundary.*:GpuTbeForwardWideTiles.*:GpuTbeForwardLaneRows.*' || failed=1
run s2_05 --layout "$dev/dev_s2_05.json" --batch 65536 --index-dtype int64 --optimizer adam \
  --forward-variant wide_rows,auto
run s3_07 --layout "$s3/test_set_3_07.json" --batch 65536 --index-dtype int64 --optimizer sgd \
  --forward-variant wide_rows,auto
run s3_06 --layout "$s3/test_set_3_06.json" --batch 65536 --index-dtype int32 --optimizer adam \
  --forward-variant wide_rows,auto
run s2_04 --layout "$dev/dev_s2_04.json" --batch 32768 --index-dtype int64 --optimizer adam --weighted \
  --forward-variant warp_tile_one_hot,auto
run s1_00 --layout "$s1/test_set_1_00.json" --batch 8192 --index-dtype int64 --optimizer sgd --weighted \
  --forward-variant warp_tile_one_hot,auto
run s3_00 --layout "$s3/test_set_3_00.json" --batch 32768 --index-dtype int32 --optimizer sgd \
  --forward-variant auto,lane_rows,warp_tile_one_hot_wide_rows
run s1_02 --layout "$s1/test_set_1_02.json" --batch 65536 --index-dtype int64 --optimizer adam --weighted \
  --forward-variant auto,lane_rows,warp_tile_one_hot_wide_rows
run s1_04 --layout "$s1/test_set_1_04.json" --batch 65536 --index-dtype int32 --optimizer adam \
  --forward-variant auto,lane_rows,warp_tile_one_hot_wide_rows
run s3_05 --layout "$s3/test_set_3_05.json" --batch 65536 --index-dtype int32 --optimizer sgd \
  --forward-variant auto,lane_rows
run s3_01 --layout "$s3/test_set_3_01.json" --batch 65536 --index-dtype int64 --optimizer sgd --weighted \
  --forward-variant auto,lane_rows
run s1_08 --layout "$s1/test_set_1_08.json" --batch 65536 --index-dtype int32 --optimizer rowwise-adagrad --weighted \
  --forward-variant auto,lane_rows
run C2 --config C2
python3 - "$OUT" "$here" <<'PY' | tee "$OUT/tbe_round8_summary.txt"
import sys
sys.path.insert(0, sys.argv[2])
from tbe_probe_summary import print_round_summary  # noqa: E402
print_round_summary(sys.argv[1], "round8")
PY
exit $failed
