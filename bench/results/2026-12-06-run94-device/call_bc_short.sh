#!/bin/bash
# Calls B and C trimmed to the two held-out scores (device time ran short after failed machine starts): GEMM test
# suite 13 and the selection latency, then TBE test set 17 and C2; no GPU tests, no Gemm::run.
d=bench/results/2026-12-06-run94-device
sed -e "/parity_gpu_tests/d" -e "/gemm gpu tests/d" $d/call_b.sh > /tmp/call_b_short.sh
sed -e '/^for model in/,$d' $d/call_c.sh > /tmp/call_c_short.sh
timeout 300 bash /tmp/call_b_short.sh; echo "call B rc=$?"
timeout 170 bash /tmp/call_c_short.sh; echo "call C rc=$?"
