#!/bin/bash
# Calls B and C in one device call (one machine start): GEMM test suite 13 and the GEMM GPU tests, then TBE test
# set 17, C2 and Gemm::run.
d=bench/results/2026-12-06-run94-device
timeout 330 bash $d/call_b.sh; echo "call B rc=$?"
timeout 250 bash $d/call_c.sh; echo "call C rc=$?"
