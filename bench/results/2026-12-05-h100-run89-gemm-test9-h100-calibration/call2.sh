#!/bin/bash
# Call 2 (named nvidia-h200; the device may be an H100): Gemm::run on the dense layers of dlrm-kaggle and dlrm-v2
# at batch 65536 with the trainer's default choice (measured: the device model's top 4 and the heuristic's top 4
# timed), against the oracle (every accepted candidate timed with the run epilogue). Same binary as call 1.
T=/tmp/r89c2; mkdir -p $T build/pm
tar -C build/pm -xaf build/carry/main/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $T/smi.txt; cat $T/smi.txt
s=$(date +%s)
OUT=$T GEMM_RUN_CHOICES=measured timeout 420 bash scripts/gpu/bench_gemm_run.sh build/pm > $T/gemm_run.log 2>&1
echo "gemm_run rc=$? $(( $(date +%s) - s ))s"; grep -E "^---- " $T/gemm_run.log
tar czf $OUT/call2.tgz -C $T .
