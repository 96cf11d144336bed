#!/usr/bin/env bash
# Instructions per GEMM selection (callgrind): the latency report's draws of one class, top-5,
# steady state, each selection collected and dumped alone by the probe
# (tests/bench/gemm_selection_probe.cpp). Prints mean / p50 / p99 (p = the latency report's
# percentile: the sorted value at floor(q n)).
# usage: gemm_selection_instructions.sh PROBE HW tiles|configs misaligned|aligned
set -euo pipefail
probe=$1 hw=$2 list=$3 shape_class=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --collect-atstart=no --dump-instr=no --dump-line=no \
  --callgrind-out-file="$out/cg.out" "$probe" count "$hw" "$list" "$shape_class" >/dev/null 2>"$out/log"
# Each dump's "totals:" line holds its instructions; the final dump at exit collects nothing.
grep -h '^totals:' "$out"/cg.out.* | awk '{print $2}' | sort -n | awk -v hw="$hw" -v list="$list" \
  -v cls="$shape_class" '{v[NR] = $1; s += $1} END {
    n = NR; p50 = v[int(0.50 * n) + 1]; p99 = v[int(0.99 * n) + 1];
    printf "%s %s %s: %d selections, mean %.1fk p50 %.1fk p99 %.1fk\n", hw, list, cls, n,
           s / n / 1000, p50 / 1000, p99 / 1000 }'
