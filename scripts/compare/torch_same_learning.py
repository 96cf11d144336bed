#!/usr/bin/env python3
"""Same learning: train a PyTorch reference of a Parity model from Parity's own initial weights,
on the same dataset files, with the same hyper-parameters and batch order, and compare the
evaluation NE with Parity's run (issue 14's "same learning" target: within 0.5% relative).

    parity train --model tiny --data D --device cuda --batch 4096 --out R --export-initial R/initial.params
    python3 scripts/compare/torch_same_learning.py --data D --params R/initial.params \
        --parity-summary R/summary.json --batch 4096 --device cuda --out R/torch_same_learning.json

The reference is written from the model definition in docs/training.md (dot interaction; ReLU
after every bottom layer and every top layer but the last; BCE-with-logits mean; dense
SGD/Adagrad as torch.optim; table SGD, element-wise or row-wise Adagrad applied to the
summed per-row gradients as a fused TBE update does). fp32, TF32 off.
"""
import argparse
import json
import math
import struct
import sys
import time
import zlib

import numpy as np
import torch


def read_parameter_file(path):
    """The checkpoint container (docs/data.md "Checkpoint file"): header, blob table, blobs."""
    data = open(path, "rb").read()
    magic, version, count, table_bytes, file_bytes, table_crc, header_crc = struct.unpack_from("<8sIIQQII", data, 0)
    if magic != b"PRTYCKPT" or version != 1 or file_bytes != len(data):
        raise ValueError(f"{path}: not a version-1 checkpoint container of the right size")
    if zlib.crc32(data[:36]) != header_crc or zlib.crc32(data[40:40 + table_bytes]) != table_crc:
        raise ValueError(f"{path}: header or table checksum mismatch")
    blobs, at = {}, 40
    for _ in range(count):
        (name_len,) = struct.unpack_from("<I", data, at)
        name = data[at + 4:at + 4 + name_len].decode()
        offset, size, crc = struct.unpack_from("<QQI", data, at + 4 + name_len)
        at += 4 + name_len + 20
        blob = data[offset:offset + size]
        if zlib.crc32(blob) != crc:
            raise ValueError(f"{path}: checksum mismatch in blob '{name}'")
        blobs[name] = blob
    index = json.loads(blobs["index"])
    tensors = {name: torch.from_numpy(np.frombuffer(blobs[name], dtype=np.float32).copy()).reshape(meta["shape"])
               for name, meta in index["tensors"].items()}
    spec = index["spec"] if isinstance(index["spec"], dict) else json.loads(index["spec"])
    return spec, tensors


def load_split(data_dir, split, manifest):
    n = manifest["splits"][split]["num_samples"]
    dense = np.fromfile(f"{data_dir}/{split}/dense.f32", np.float32).reshape(n, manifest["num_dense"])
    labels = np.fromfile(f"{data_dir}/{split}/labels.u8", np.uint8).astype(np.float32)
    sparse = []
    for t, table in enumerate(manifest["tables"]):
        suffix, dtype = ("i64", np.int64) if table["index_dtype"] == "int64" else ("i32", np.int32)
        ids = np.fromfile(f"{data_dir}/{split}/sparse_{t}.{suffix}", dtype).reshape(n, table["ids_per_sample"])
        sparse.append(torch.from_numpy(ids.astype(np.int64)))
    return torch.from_numpy(dense), torch.from_numpy(labels), sparse


class Reference(torch.nn.Module):
    def __init__(self, spec, tensors):
        super().__init__()
        if spec["interaction"]["kind"] != "dot":
            raise ValueError("the reference covers dot-interaction models only")
        self.spec = spec
        self.bottom = torch.nn.ParameterList()
        self.top = torch.nn.ParameterList()
        for prefix, plist, widths in (("bottom", self.bottom, spec["bottom_mlp"]), ("top", self.top, spec["top_mlp"])):
            for layer in range(len(widths)):
                plist.append(torch.nn.Parameter(tensors[f"{prefix}.{layer}.weight"].clone()))
                plist.append(torch.nn.Parameter(tensors[f"{prefix}.{layer}.bias"].clone()))
        tables = spec["embedding"]["tables"]
        self.tables = torch.nn.ParameterList(
            [torch.nn.Parameter(tensors[f"embedding.{t}.weight"].clone()) for t in range(len(tables))])
        features = spec["embedding"].get("features") or [{"table": t} for t in range(len(tables))]
        names = [tb.get("name", str(i)) for i, tb in enumerate(tables)]
        self.table_of_feature = [f["table"] if isinstance(f["table"], int) else names.index(f["table"]) for f in features]
        self.mean_pooling = spec["embedding"].get("pooling", "sum") == "mean"

    @staticmethod
    def mlp(x, params, relu_last):
        layers = len(params) // 2
        for layer in range(layers):
            x = torch.nn.functional.linear(x, params[2 * layer], params[2 * layer + 1])
            if layer + 1 < layers or relu_last:
                x = torch.relu(x)
        return x

    def forward(self, dense, sparse):
        x = self.mlp(dense, self.bottom, True)
        pooled = []
        for f, t in enumerate(self.table_of_feature):
            rows = self.tables[t][sparse[f]]  # [B, L, D]
            pooled.append(rows.mean(1) if self.mean_pooling else rows.sum(1))
        z = torch.stack([x] + pooled, dim=1)  # [B, F+1, D]
        gram = torch.bmm(z, z.transpose(1, 2))
        li, lj = torch.tril_indices(z.shape[1], z.shape[1], offset=-1, device=z.device)
        # Parity's order: for i in 1..F, for j in 0..i-1 — tril_indices' row-major order.
        top_in = torch.cat([x, gram[:, li, lj]], dim=1)
        return self.mlp(top_in, self.top, False).squeeze(1)


def embedding_update(tables, state, opt, lr):
    kind, eps = opt.get("kind", "sgd"), opt.get("eps", 1e-8)
    with torch.no_grad():
        for t, w in enumerate(tables):
            g = w.grad
            if kind == "sgd":
                w -= lr * g
            elif kind == "rowwise_adagrad":
                state[t] += (g * g).mean(dim=1)
                w -= (lr / (state[t].sqrt() + eps)).unsqueeze(1) * g
            elif kind == "adagrad":
                state[t] += g * g
                w -= lr * g / (state[t].sqrt() + eps)
            else:
                raise ValueError(f"embedding optimiser {kind}: not covered by the reference")
            w.grad = None


def auc_exact(scores, labels):
    order = np.argsort(scores, kind="mergesort")
    s, y = scores[order], labels[order]
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i:j + 1] = (i + j) / 2 + 1
        i = j + 1
    pos = y > 0.5
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return (ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--params", required=True)
    ap.add_argument("--parity-summary", required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--eval-samples", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    spec, tensors = read_parameter_file(args.params)
    schedule = spec.get("lr_schedule", {})
    if any(schedule.get(k, 0) for k in ("warmup_steps", "decay_steps")):
        sys.exit("torch_same_learning: learning-rate schedules are not covered by the reference")
    manifest = json.load(open(f"{args.data}/manifest.json"))
    device = torch.device(args.device)
    model = Reference(spec, tensors).to(device)
    dense_opt = spec["dense_optimizer"]
    params = list(model.bottom) + list(model.top)
    if dense_opt["kind"] == "sgd":
        optimizer = torch.optim.SGD(params, lr=dense_opt["lr"], weight_decay=dense_opt.get("weight_decay", 0))
    elif dense_opt["kind"] == "adagrad":
        optimizer = torch.optim.Adagrad(params, lr=dense_opt["lr"], eps=dense_opt.get("eps", 1e-8),
                                        weight_decay=dense_opt.get("weight_decay", 0))
    else:
        optimizer = torch.optim.Adam(params, lr=dense_opt["lr"], eps=dense_opt.get("eps", 1e-8),
                                     betas=(dense_opt.get("beta1", 0.9), dense_opt.get("beta2", 0.999)),
                                     weight_decay=dense_opt.get("weight_decay", 0))
    emb_opt = spec["embedding"]["optimizer"]
    emb_state = [torch.zeros(w.shape[0] if emb_opt.get("kind") == "rowwise_adagrad" else w.shape, device=device)
                 for w in model.tables]
    dense, labels, sparse = load_split(args.data, "train", manifest)
    steps = dense.shape[0] // args.batch
    start = time.time()
    losses = []
    for step in range(steps):
        rows = slice(step * args.batch, (step + 1) * args.batch)
        logits = model(dense[rows].to(device), [s[rows].to(device) for s in sparse])
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels[rows].to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        embedding_update(model.tables, emb_state, emb_opt, emb_opt.get("lr", 0.01))
        losses.append(loss.item())
    train_seconds = time.time() - start
    dense, labels, sparse = load_split(args.data, "eval", manifest)
    n = dense.shape[0] if args.eval_samples <= 0 else min(args.eval_samples, dense.shape[0])
    scores, loss_sum = [], 0.0
    with torch.no_grad():
        for begin in range(0, n, args.batch):
            rows = slice(begin, min(begin + args.batch, n))
            logits = model(dense[rows].to(device), [s[rows].to(device) for s in sparse])
            target = labels[rows].to(device)
            loss_sum += torch.nn.functional.binary_cross_entropy_with_logits(
                logits.double(), target.double(), reduction="sum").item()
            scores.append(logits.double().cpu().numpy())
    y = labels[:n].numpy().astype(np.float64)
    p = y.mean()
    entropy = -(p * math.log(p) + (1 - p) * math.log(1 - p))
    ne = float(loss_sum / n / entropy)
    auc = float(auc_exact(np.concatenate(scores), y))
    parity = json.load(open(args.parity_summary))
    parity_eval = parity.get("final_evaluation") or parity.get("evaluation") or parity["evaluations"][-1]
    parity_ne = parity_eval["ne"]
    result = {"model": spec["name"], "batch": args.batch, "steps": steps, "device": str(device),
              "torch_version": torch.__version__, "torch_ne": ne, "torch_auc": auc,
              "torch_first_loss": losses[0], "torch_last_loss": losses[-1], "torch_train_seconds": train_seconds,
              "parity_ne": parity_ne, "parity_auc": parity_eval.get("auc"),
              "ne_relative_difference": abs(ne - parity_ne) / parity_ne, "target": 0.005}
    result["within_target"] = bool(result["ne_relative_difference"] <= 0.005)
    json.dump(result, open(args.out, "w"), indent=2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
