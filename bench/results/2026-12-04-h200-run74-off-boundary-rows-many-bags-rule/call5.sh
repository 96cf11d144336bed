#!/bin/bash
# Session call 5 (diagnostic): ncu on the one-hot forward of bf16 D=28 (56-byte rows, off 16-byte boundaries)
# against D=32 (64-byte rows), same tables and bags: DRAM bytes, sectors, occupancy, registers.
T=/tmp/c5; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
for d in 28 32; do
  timeout 120 $NCU --clock-control none --metrics $M -k regex:tbe_forward --launch-skip 3 --launch-count 1 $P bench tbe --tables 31 --rows 3000000 --dim $d --batch 65536 --pooling-factor one-hot --dtype bf16 --index-dtype int32 --forward-only --reps 5 --warmup 3 > $T/ncu_$d.log 2>&1; echo "ncu D=$d rc=$?"
  grep -E "tbe_forward|duration|dram__bytes|sectors|requests|warps_active|registers|grid_size|block_size|throughput" $T/ncu_$d.log | head -16
done
tar czf $OUT/all.tgz -C $T .
