#!/usr/bin/env python3
"""Merges `parity bench tbe` results ($OUT/tbe_<config>.json) with the torch EmbeddingBag baseline
($OUT/tbe_torch.json, same call, same configurations) into one comparison: per config our forward /
step times and TB/s, the forward against the copy measured in the same call under both byte
models with the per-row-size target (issue 13), torch's times, the ratios, the step >= 5x torch
target (same optimiser family), and the named configurations' targets, with pass/fail. Prints a
table."""
import argparse
import glob
import json
import os

STEP_SPEEDUP_TARGET = 5.0  # issue 13: training step >= 5x torch's, every optimiser, every configuration
TARGETS = {  # config: (forward TB/s at least, fwd+bwd+rowwise Adagrad step ms at most)
    "C2": (3.4, 2.8),
    "C2_fp16": (3.0, None),
    "C4": (2.4, None),
}


def merge_torch_entry(row, t):
    """Adds torch's entry for the same configuration (torch_tbe_baseline.py) to our row: its notes,
    times and the speed-ups, with the step target (also used by tbe_test_set.sh)."""
    if not t:
        return
    for k in ("not_expressible", "output_dtype_differs", "step_error", "error"):
        if k in t:
            row["torch_" + k] = t[k]
    if "forward_ms" in t:
        row["torch_forward_ms"] = t["forward_ms"]
        row["forward_speedup_vs_torch"] = t["forward_ms"] / row["forward_ms"]
    if "step_ms" in t:
        row["torch_step_ms"] = t["step_ms"]
        row["torch_optimizer"] = t["torch_optimizer"]
        row["step_speedup_vs_torch"] = t["step_ms"] / row["step_ms"]
        row["step_speedup_target_met"] = row["step_speedup_vs_torch"] >= STEP_SPEEDUP_TARGET


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
    paths = [p for pattern in ("tbe_C*.json", "tbe_D*.json", "tbe_BC.json", "tbe_layout.json")
             for p in sorted(glob.glob(os.path.join(args.dir, pattern)))]
    for path in paths:
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
        fb = ours.get("forward_bandwidth")
        if fb:  # the copy in the same call, both byte models, the per-row-size target
            row.update({"copy_tbps": fb["copy_tbps"], "forward_unique_rows_tbps": fb["unique_rows_tbps"],
                        "forward_ratio_every_lookup": fb["every_lookup_ratio_to_copy"],
                        "forward_ratio_unique_rows": fb["unique_rows_ratio_to_copy"],
                        "forward_evaluated_byte_model": fb["evaluated_byte_model"],
                        "forward_target_ratio": fb["target_ratio_to_copy"],
                        "forward_ratio_target_met": fb["target_met"]})
        row["optimizer"] = ours["config"].get("optimizer")
        if "backward_fused_batched_row_updates" in ours:  # the other backward variant, same call
            row["backward_batched_ms"] = ours["backward_fused_batched_row_updates"]["median_ms"]
        merge_torch_entry(row, torch_doc.get(name))
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
    nan = float("nan")
    print(f"{'config':<13}{'fwd ms':>9}{'TB/s':>7}{'uniq':>7}{'copy':>7}{'%copy':>7}{'target':>7}{'met':>5}"
          f"{'step ms':>9}{'bwd ms':>8}{'bc us':>8}{'bad x':>7}{'torch fwd':>10}{'torch step':>11}{'x torch':>8}")
    for r in rows:
        evaluated = r.get("forward_ratio_unique_rows" if r.get("forward_evaluated_byte_model") == "unique_rows"
                          else "forward_ratio_every_lookup", nan)
        met = {True: "yes", False: "NO"}.get(r.get("forward_ratio_target_met"), "-")
        print(f"{r['config']:<13}{r['forward_ms']:9.3f}{r['forward_tbps']:7.2f}{r.get('forward_unique_rows_tbps', nan):7.2f}"
              f"{r.get('copy_tbps', nan):7.2f}{100 * evaluated:6.1f}%{100 * r.get('forward_target_ratio', nan):6.0f}%{met:>5}"
              f"{r['step_ms']:9.3f}{r['backward_ms']:8.3f}{r['bounds_check_us']:8.1f}"
              f"{r['bounds_check_bad_ratio']:7.2f}{r.get('torch_forward_ms', nan):10.3f}"
              f"{r.get('torch_step_ms', nan):11.2f}{r.get('step_speedup_vs_torch', nan):8.2f}")
    for k, v in derived.items():
        print(f"{k}: {v:.3f}")


if __name__ == "__main__":
    main()
