#!/bin/bash
# Call D, as it ran (two commands on the warm machine after call B+C's trimmed run): the Gemm::run part of call_c.sh.
# The first command was cut from call_c.sh with its line setting T removed by mistake, so bench gemm-run wrote
# /dlrm-kaggle.json and /dlrm-v2.json (and their logs) and packing failed; the second command copied them into
# /tmp/r94d, summarised them (below) and packed call_d.tgz.
d=bench/results/2026-12-06-run94-device
(sed -n '1,9p' $d/call_c.sh | grep -v "set17\|packer"; sed -n '/^for model in/,$p' $d/call_c.sh) > /tmp/call_d.sh
sed -i 's/call_c.tgz/call_d.tgz/; s#T=/tmp/r94c#T=/tmp/r94d#' /tmp/call_d.sh; bash /tmp/call_d.sh
# second command:
# mkdir -p /tmp/r94d && cp /dlrm-*.json /dlrm-*.log /tmp/r94d/; python3 <the summary of call_c.sh> /tmp/r94d; tar czf $OUT/call_d.tgz -C /tmp/r94d .
