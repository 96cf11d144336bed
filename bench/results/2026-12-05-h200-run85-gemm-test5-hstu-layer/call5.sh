#!/bin/bash
# Call 5: where the GPU HSTU layer's time goes — Nsight Compute's duration of every kernel of one
# forward and one backward at N = 2048 (B=512, H=4, d=128, D=512; kernels serialised, clocks as found),
# summed per kernel name. Call 4's binaries (9f72a72).
T=/tmp/c5; mkdir -p $T build/prebuilt
tar -C build/prebuilt -xaf build/carry/c2/prebuilt.tar.xz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=build/prebuilt/bin/parity
pack() { tar czf $OUT/all.tgz -C $T . ; }
ncu_bin="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)"
echo "ncu: $ncu_bin"
s=$(date +%s)
timeout 400 $ncu_bin --clock-control none --metrics gpu__time_duration.sum --csv --page raw $P bench hstu-layer --device gpu \
  --batch 512 --seq-len 2048 --model-dim 512 --heads 4 --dim-qk 128 --dim-v 128 --max-targets 20 --warmup 0 --reps 1 \
  > $T/ncu.csv 2> $T/ncu.err
echo "ncu rc=$? $(( $(date +%s) - s ))s"; tail -3 $T/ncu.err; gzip -kf $T/ncu.csv; pack
python3 - $T/ncu.csv <<'PY' | tee $T/breakdown.txt
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next(i for i, r in enumerate(rows) if 'Kernel Name' in r)
h = rows[head]; ki = h.index('Kernel Name'); ti = h.index('gpu__time_duration.sum')
unit = rows[head + 1][ti]; scale = {'nsecond': 1e6, 'usecond': 1e3, 'msecond': 1.0}.get(unit, 1e6)
print('unit', unit)
total = collections.OrderedDict(); count = collections.Counter(); seq = []
for r in rows[head + 2:]:
    try: t = float(r[ti])
    except ValueError: continue
    name = r[ki][:90]; seq.append((name, t))
    total[name] = total.get(name, 0) + t; count[name] += 1
print('kernel launches in order (ns):')
for name, t in seq: print(f'  {t/scale:9.3f} ms  {name}')
print('per kernel name:')
for name, t in sorted(total.items(), key=lambda x: -x[1]): print(f'  {t/scale:9.3f} ms  x{count[name]:3d}  {name}')
PY
pack
