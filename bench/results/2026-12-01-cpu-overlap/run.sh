#!/usr/bin/env bash
# Dense gradient reduction on CPU ranks, blocking (after the backward) vs overlapped (buckets started
# during the backward), from the distributed trainer's own timings (`--reduction-timings`, rank 0).
# Usage: run.sh PARITY_BINARY OUT_DIR [REPS]. Configurations alternate within each repetition so
# that the machine's load (2 cores, shared) hits every configuration alike; medians per config.
set -euo pipefail
parity=$1
out=$2
reps=${3:-3}
mkdir -p "$out"
log="$out/runs.log"
: > "$log"
echo "start: $(uptime)" > "$out/load.txt"
configs=("after-backward 4MiB" "overlapped 4MiB" "after-backward 1MiB" "overlapped 1MiB")
for ranks in 2 4; do
  for rep in $(seq 1 "$reps"); do
    for config in "${configs[@]}"; do
      read -r mode bucket <<< "$config"
      line=$(mpirun --allow-run-as-root --oversubscribe -np "$ranks" "$parity" train --model dlrm-kaggle \
               --table-cap 1000 --synthetic 20000 --batch 512 --steps 12 --eval-samples 512 \
               --out "$out/run-$ranks-$mode-$bucket" --distributed --dense-reduction "$mode" \
               --bucket-bytes "$bucket" --reduction-timings 2>/dev/null | grep -E "^done:|^reduction timings" | tr '\n' ' ')
      echo "ranks=$ranks rep=$rep mode=$mode bucket=$bucket $line" | tee -a "$log"
    done
  done
done
echo "end: $(uptime)" >> "$out/load.txt"
python3 - "$log" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    key = re.search(r"ranks=(\d+) rep=\d+ mode=(\S+) bucket=(\S+)", line).groups()
    samples_per_s = float(re.search(r"([\d.]+) samples/s", line).group(1))
    backward, exposed, waits, flight = map(float, re.search(
        r"dense backward ([\d.]+) ms/step, exposed communication ([\d.]+) ms/step \(waits ([\d.]+)\), "
        r"buckets in flight ([\d.]+)", line).groups())
    buckets = int(re.search(r"(\d+) bucket\(s\)", line).group(1))
    rows.setdefault(key, []).append((512 / samples_per_s * 1000, backward, exposed, waits, flight, buckets))
print("| ranks | mode | bucket | buckets | step ms (all 12) | dense backward ms | exposed comm ms | of which waits ms | in flight ms | runs |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for (ranks, mode, bucket), values in rows.items():
    med = [statistics.median(v[i] for v in values) for i in range(5)]
    print(f"| {ranks} | {mode} | {bucket} | {values[0][5]} | {med[0]:.1f} | {med[1]:.1f} | {med[2]:.1f} | {med[3]:.1f} | {med[4]:.1f} | {len(values)} |")
PY
