#!/usr/bin/env python3
"""Before/after table of bench/results/2026-12-02-plan-model-notes: the planner's predictions (the
text of `parity plan validate --predict-only --hw h200 --configs-file FILE`, for the development
list and set 1, from two revisions) against the newest measurement of each configuration.

    D=bench/results/2026-12-02-plan-model-notes   # run from the repository root
    parity plan validate --predict-only --hw h200 --configs-file $D/development_list.txt > $D/pred_new_dev.txt
    parity plan validate --predict-only --hw h200 --configs-file bench/plan/validation_set_1.txt \
        > $D/pred_new_validation_set_1.txt   # pred_old_*: the same at 24b81a6
    python3 $D/compare.py $D
"""
import json, re, sys
PRED = sys.argv[1] if len(sys.argv) > 1 else '.'
R = 'bench/results/2026-12-01-h200-'
def key(r): return (r['model'], r['batch'], r['precision'], r['checkpointing'], r.get('optimizer', 'spec'))
def load_pred(path):
    out = {}
    for line in open(path):
        m = re.match(r'(\S+) (\d+) (\S+) ?(full|none)? ?(\S+)? +([\d.]+) .*embeddings ([\d.]+) gemms ([\d.]+) interaction ([\d.]+) other ([\d.]+)', line)
        if not m: continue
        g = m.groups()
        out[(g[0], int(g[1]), g[2], g[3] or 'none', g[4] or 'spec')] = {'predicted_step_ms': float(g[5]), 'phases_ms': {'gemms': {'predicted': float(g[7])}}}
    return out
old = {**load_pred(PRED + '/pred_old_dev.txt'), **load_pred(PRED + '/pred_old_validation_set_1.txt')}
new = {**load_pred(PRED + '/pred_new_dev.txt'), **load_pred(PRED + '/pred_new_validation_set_1.txt')}
meas = {}
for r in json.load(open(R + 'run29-final/plan_validate.json'))['rows']:
    meas[key(r)] = ('run 29 (older trainer)', r['measured_step_ms'], None, 'dev')
for f, k, src in [('run35-train-attention-tbe/train_dlrm_kaggle_bf16.json', ('dlrm-kaggle', 65536, 'bf16', 'none', 'spec'), 'run 35'),
                  ('run35-train-attention-tbe/train_dlrm_kaggle_tf32.json', ('dlrm-kaggle', 65536, 'tf32', 'none', 'spec'), 'run 35'),
                  ('run37-dlrm-v2/train_dlrm_v2_bf16.json', ('dlrm-v2', 65536, 'bf16', 'none', 'spec'), 'run 37'),
                  ('run37-dlrm-v2/train_dlrm_v2_bf16_sgd.json', ('dlrm-v2', 65536, 'bf16', 'none', 'sgd'), 'run 37')]:
    d = json.load(open(R + f))
    meas[k] = (src + ' (`bench train`, kMeasured)', d['median_step_ms'], d['breakdown']['phase_ms']['gemms'], 'dev')
for r in json.load(open(R + 'run33-heldout-plan-train/plan_validate_validation_set_1.json'))['rows']:
    meas[key(r)] = ('run 33 (set 1; bf16 heuristic, TF32 model choice)', r['measured_step_ms'], r['phases_ms']['gemms']['measured'], 'set 1')
def name(k): return '%s %d %s%s%s' % (k[0], k[1], k[2], ', ckpt' if k[3] == 'full' else '', ', ' + k[4] if k[4] != 'spec' else '')
print('| set | configuration | measured in | step ms | before | after | GEMM phase ms | before | after |')
print('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
within = {'old': 0, 'new': 0}; n = 0
pairs = {'old': [], 'new': []}
for k in list(meas):
    src, step, gemm, setname = meas[k]
    o, w = old[k], new[k]
    e = lambda p: 100 * (p / step - 1)
    po, pn = o['predicted_step_ms'], w['predicted_step_ms']
    go = o['phases_ms']['gemms']['predicted'] if 'phases_ms' in o else None
    gn = w['phases_ms']['gemms']['predicted'] if 'phases_ms' in w else None
    n += 1; within['old'] += abs(e(po)) <= 10; within['new'] += abs(e(pn)) <= 10
    pairs['old'].append((po, step)); pairs['new'].append((pn, step))
    gtxt = ('%.3f | %.3f (%+.1f%%) | %.3f (%+.1f%%)' % (gemm, go, 100 * (go / gemm - 1), gn, 100 * (gn / gemm - 1))) if gemm else ('- | %.3f | %.3f' % (go, gn))
    print('| %s | %s | %s | %.3f | %.3f (%+.1f%%) | %.3f (%+.1f%%) | %s |' % (setname, name(k), src, step, po, e(po), pn, e(pn), gtxt))
def tau(p):
    c = d = 0
    for i in range(len(p)):
        for j in range(i + 1, len(p)):
            s = (p[i][0] - p[j][0]) * (p[i][1] - p[j][1])
            c += s > 0; d += s < 0
    return (c - d) / (len(p) * (len(p) - 1) / 2)
print('\nwithin 10%%: before %d of %d, after %d of %d; tau before %.3f after %.3f' % (within['old'], n, within['new'], n, tau(pairs['old']), tau(pairs['new'])))
