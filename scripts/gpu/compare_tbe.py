#!/usr/bin/env python3
"""Merges `parity bench tbe` results ($OUT/tbe_<config>.json) with the torch EmbeddingBag baseline
($OUT/tbe_torch.json, same call) into one comparison: per config our forward / step times and
TB/s, torch's, the ratios, and the issue's targets with pass/fail. Prints a table."""
import argparse
import glob
import json
import os

TARGETS = {  # config: (forward TB/s at least, fwd+bwd+rowwise Adagrad step ms at most)
    "C2": (3.4, 2.8),
    "C2_fp16": (3.0, None),
    "C4": (2.4, None),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch_doc = {}
    path = os.path.join(args.dir, "tbe_torch.json")
    if os.path.exists(path):
        with open(path) as f:
            torch_doc = {r["config"]: r for r in json.load(f)["results"]}
    rows = []
    for path in sorted(glob.glob(os.path.join(args.dir, "tbe_C*.json")) + glob.glob(os.path.join(args.dir, "tbe_BC.json"))):
        name = os.path.basename(path)[4:-5]
        with open(path) as f:
            ours = json.load(f)
        row = {"config": name,
               "forward_ms": ours["forward"]["median_ms"], "forward_tbps": ours["forward"]["tbps"],
               "step_ms": ours["step_fwd_bwd_opt"]["median_ms"], "backward_ms": ours["backward_fused"]["median_ms"],
               "bounds_check_us": ours["bounds_check_clean"]["median_ms"] * 1e3,
               "bounds_check_bad_ratio": ours["bounds_check_bad"]["ratio_to_clean"],
               "bounds_check_writeback_free_us": ours.get("bounds_check_clean_writeback_free_flush", {}).get(
                   "median_ms", float("nan")) * 1e3,
               "bounds_check_floor_index_read_us": ours.get("bounds_check_floor_index_read", {}).get(
                   "median_ms", float("nan")) * 1e3,
               "bounds_check_floor_tiny_kernel_us": ours.get("bounds_check_floor_tiny_kernel", {}).get(
                   "median_ms", float("nan")) * 1e3,
               "num_indices": ours["config"]["num_indices"],
               "step_ns_per_index": ours["step_fwd_bwd_opt"]["median_ms"] * 1e6 / max(1, ours["config"]["num_indices"]),
               "workspace_bytes_per_index": ours["workspace_bytes_per_index"],
               "peak_device_bytes": ours["peak_device_bytes"]}
        if "backward_fused_batched_row_updates" in ours:  # the other backward variant, same call
            row["backward_batched_ms"] = ours["backward_fused_batched_row_updates"]["median_ms"]
        t = torch_doc.get(name)
        if t:
            row["torch_forward_ms"] = t["forward_ms"]
            row["forward_speedup_vs_torch"] = t["forward_ms"] / row["forward_ms"]
            for k in ("step_sgd_ms", "step_adagrad_ms"):
                if k in t:
                    row["torch_" + k] = t[k]
                    row[k.replace("_ms", "") + "_speedup_vs_torch"] = t[k] / row["step_ms"]
        target = TARGETS.get(name)
        if target:
            row["target_forward_tbps"] = target[0]
            row["forward_target_met"] = row["forward_tbps"] >= target[0]
            if target[1]:
                row["target_step_ms"] = target[1]
                row["step_target_met"] = row["step_ms"] <= target[1]
        rows.append(row)
    by = {r["config"]: r for r in rows}
    derived = {}
    if "C2" in by and "C2_zipf1.15" in by:
        derived["zipf1.15_step_per_index_vs_uniform"] = by["C2_zipf1.15"]["step_ns_per_index"] / by["C2"]["step_ns_per_index"]
    if "C2" in by and "C6" in by:
        derived["one_hot_row_step_per_index_vs_uniform"] = by["C6"]["step_ns_per_index"] / by["C2"]["step_ns_per_index"]
    doc = {"benchmark": "tbe_comparison", "rows": rows, "derived": derived,
           "torch_provenance": json.load(open(os.path.join(args.dir, "tbe_torch.json")))["provenance"] if torch_doc else None}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(f"{'config':<13}{'fwd ms':>9}{'TB/s':>7}{'step ms':>9}{'bwd ms':>8}{'bwd bat':>8}{'bc us':>8}{'bad x':>7}{'torch fwd':>10}{'torch sgd':>10}{'torch adagrad':>14}")
    for r in rows:
        print(f"{r['config']:<13}{r['forward_ms']:9.3f}{r['forward_tbps']:7.2f}{r['step_ms']:9.3f}{r['backward_ms']:8.3f}"
              f"{r.get('backward_batched_ms', float('nan')):8.3f}{r['bounds_check_us']:8.1f}"
              f"{r['bounds_check_bad_ratio']:7.2f}{r.get('torch_forward_ms', float('nan')):10.3f}"
              f"{r.get('torch_step_sgd_ms', float('nan')):10.2f}{r.get('torch_step_adagrad_ms', float('nan')):14.2f}")
    for k, v in derived.items():
        print(f"{k}: {v:.3f}")


if __name__ == "__main__":
    main()
