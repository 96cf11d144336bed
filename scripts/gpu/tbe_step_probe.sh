#!/usr/bin/env bash
# TBE training step on the device (issue 13: step >= 5x torch on every optimizer): the backward
# variants of this round A/B'd on the element-wise optimisers, each case run without and with the
# variant in the same call.
#   1. BackwardOptions::prefetch_element_state (the default; --backward-variant no_prefetch_state
#      turns it off): Adagrad / Adam state loaded with the weight row. Set 3's 06 (D=356 fp16 one-hot, Adam; 4 vecs per lane),
#      04 (D 16-40 fp32 bags of 5, Adam; narrow rows), 08 (D 16-256 fp32 bags of 11, weighted,
#      Adam; 2 vecs per lane) and 06 again with element-wise Adagrad;
#   2. C2 (the guard: step <= 2.8 ms; row-wise Adagrad, which ignores the option).
# The GPU tests of this round's paths run first (step_tests.log).
#   STEP_REPS=10 scripts/gpu/tbe_step_probe.sh build/cuda
# Budget: 9 runs of ~4-10 s: < 90 s.
set -uo pipefail
build_dir="${1:-build/cuda}"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
source "$here/tbe_probe_common.sh"
reps="${STEP_REPS:-10}"
failed=0
set3=bench/tbe/test_set_3
run() { run_tbe_bench step "$@"; }
run_tbe_gpu_tests step_tests.log 'GpuTbeBackwardPrefetchState.*:GpuTbeBackward.*:GpuTbeBackwardShortChunks.*' || failed=1
for variant in no_prefetch_state both; do
  run "s3_06_adam_$variant" --layout "$set3/test_set_3_06.json" --batch 65536 --index-dtype int32 --optimizer adam \
    --backward-variant "$variant"
  run "s3_06_adagrad_$variant" --layout "$set3/test_set_3_06.json" --batch 65536 --index-dtype int32 \
    --optimizer adagrad --backward-variant "$variant"
  run "s3_04_adam_$variant" --layout "$set3/test_set_3_04.json" --batch 16384 --index-dtype int64 --optimizer adam \
    --backward-variant "$variant"
  run "s3_08_adam_$variant" --layout "$set3/test_set_3_08.json" --batch 65536 --index-dtype int32 --optimizer adam \
    --weighted --backward-variant "$variant"
done
run C2 --config C2
python3 - "$OUT" "$here" <<'PY' | tee "$OUT/tbe_step_summary.txt"
import sys
sys.path.insert(0, sys.argv[2])
from tbe_probe_summary import print_round_summary  # noqa: E402
print_round_summary(sys.argv[1], "step")
PY
exit $failed
