#!/usr/bin/env bash
# A/B of TBE builds in one device call (how the session-3 kernel changes in docs/embedding.md were
# decided): every `parity_<NAME>` binary in ARCHIVE runs `bench tbe` on each config, the variants
# interleaved over ROUNDS rounds (so drift hits all alike); then one ncu pass per variant gives
# the per-kernel time, DRAM bytes and instructions of the TBE kernels. If the archive holds
# parity_gpu_tests, the TBE/sort GPU tests run first. Results in $OUT/ab/.
# Usage (on the device, repository root): scripts/gpu/experiments/ab_tbe.sh ARCHIVE [CONFIG...]
#   ARCHIVE: tar.gz of parity_A, parity_B, ... (+ parity_gpu_tests), e.g. carried as
#            build/carry/variants.tar.gz; CONFIG: bench tbe arguments as one word, e.g.
#            C2 "C2 --optimizer sgd" (default: C2). ROUNDS (env, default 2); AB_NCU=0 skips
#            the ncu pass.
set -uo pipefail
archive="${1:?usage: ab_tbe.sh ARCHIVE [CONFIG...]}"
shift
configs=("$@")
[[ ${#configs[@]} -eq 0 ]] && configs=(C2)
: "${OUT:?OUT must be set}"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
export PARITY_DATA_DIR="$PWD/data"
bin="$(mktemp -d /tmp/parity_ab.XXXXXX)"
tar -C "$bin" -xzf "$archive"
results="$OUT/ab"
mkdir -p "$results"
variants=()
for f in "$bin"/parity_*; do
  name="${f##*/parity_}"
  [[ "$name" == "gpu_tests" ]] || variants+=("$name")
done
if [[ -x "$bin/parity_gpu_tests" ]]; then
  timeout 300 "$bin/parity_gpu_tests" --gtest_filter='GpuTbe*:GpuRadixSort*' > "$results/tests.log" 2>&1
  tail -3 "$results/tests.log"
fi
for round in $(seq 1 "${ROUNDS:-2}"); do
  for config in "${configs[@]}"; do
    for v in "${variants[@]}"; do
      echo "== $v round $round: $config" >> "$results/sweep.log"
      # shellcheck disable=SC2086  # a config is several bench arguments in one word
      timeout 90 "$bin/parity_$v" bench tbe --config $config --reps 20 --warmup 3 --backward-variant row \
        2>&1 | grep -E "forward  |backward|fwd|bounds|floor" >> "$results/sweep.log"
    done
  done
done
ncu_bin="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)"
if [[ -n "$ncu_bin" && "${AB_NCU:-1}" == "1" ]]; then
  for v in "${variants[@]}"; do
    echo "== $v" >> "$results/ncu.csv"
    timeout 120 "$ncu_bin" --clock-control none -k regex:'tbe_|radix|bounds' --launch-count 20 --csv \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum \
      "$bin/parity_$v" bench tbe --config C2 --reps 1 --warmup 0 --backward-variant row 2>&1 |
      grep -E '^"[0-9]' >> "$results/ncu.csv"
  done
fi
cat "$results/sweep.log"
