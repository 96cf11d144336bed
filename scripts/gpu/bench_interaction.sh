#!/usr/bin/env bash
# Interaction piece of the device run (called by run_all.sh with the build dir as $1, $OUT set):
# `parity bench interaction` on dlrm-kaggle's shape (batch 65536, 26 embeddings of 128, output
# padded to 480) in bf16 and fp32 (the TF32 trainer's activations): every GPU variant of the dot
# interaction checked against fp64, then timed alone; one summary line per dtype at the end.
#   INTERACTION_BATCH=65536 INTERACTION_DTYPES="bf16 fp32" scripts/gpu/bench_interaction.sh build/cuda
set -uo pipefail
build_dir="${1:-build/cuda}"
parity="$build_dir/bin/parity"
: "${OUT:?OUT must be set}"
here="$(dirname "$0")"
# shellcheck source=common.sh
source "$here/common.sh"  # step NAME COMMAND..., failed
batch="${INTERACTION_BATCH:-65536}"
for dtype in ${INTERACTION_DTYPES:-bf16 fp32}; do
  step "interaction_$dtype" "$parity" bench interaction --batch "$batch" --embeddings 26 --dim 128 --dtype "$dtype" \
    --out "$OUT/interaction_$dtype.json"
done
for dtype in ${INTERACTION_DTYPES:-bf16 fp32}; do
  python3 - "$OUT/interaction_$dtype.json" "$dtype" <<'PY' || failed=1
import json, sys
document = json.load(open(sys.argv[1]))
parts = []
for row in document["variants"]:
    if "stats" in row:
        name = row["variant"].replace("dot_interaction_", "")
        parts.append(f'{name} {row["stats"]["median_ms"]:.3f} ms ({row["effective_gbps"]:.0f} GB/s)')
print(f"interaction {sys.argv[2]} summary: " + "; ".join(parts))
PY
done
exit $failed
