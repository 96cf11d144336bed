#!/usr/bin/env python3
"""Writes docs/benchmarks.md from device runs' results folders (bench/results/<run>/).

Every figure comes from a file in those folders; within a file, ours and the baseline were timed
in the same device call. Each section uses the first folder (in the order given) that holds its
file. Usage: scripts/gpu/summarize.py bench/results/<newest> [older ...] > docs/benchmarks.md
"""
import gzip
import json
import pathlib
import sys


def stored(folder, name):
    """The file `name` in `folder` as stored: plain, or gzipped as `name`.gz (recorded runs keep
    their large raw outputs compressed); None when neither exists."""
    for candidate in (folder / name, folder / (name + ".gz")):
        if candidate.exists():
            return candidate
    return None


def read_bytes(path):
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


def find(folders, name):
    for folder in folders:
        if stored(folder, name):
            return folder
    return None


def load(folders, name):
    folder = find(folders, name) if isinstance(folders, list) else folders
    path = stored(folder, name) if folder else None
    return json.loads(read_bytes(path)) if path else None


def fmt(value, digits=3):
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "**no**"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def provenance_line(folder, names):
    for name in names:
        doc = load(folder, name)
        if doc and "provenance" in doc:
            p = doc["provenance"]
            d = p.get("device") or {}
            clocks = d.get("clocks") or {}
            return (f"Source: `{folder}`: {p.get('timestamp_utc')}, commit `{p.get('commit')}`, "
                    f"{d.get('name')} ({d.get('sm_count')} SMs, {(d.get('l2_bytes') or 0) / 2**20:.0f} MiB L2), "
                    f"driver/runtime {d.get('driver_version')}/{d.get('runtime_version')}, "
                    f"build {p.get('build_type')} for {p.get('compiled_archs')}; clocks as found "
                    f"(never changed), SM clock {clocks.get('sm_clock_mhz')} MHz at the start of `{name}`.\n")
    return f"Source: `{folder}`.\n"


def foundation(folders, out):
    folder = find(folders, "foundation_comparison.json")
    if not folder:
        return
    doc = load(folder, "foundation_comparison.json")
    hbm = doc.get("hbm", {})
    out.append("## Foundation: the harness against the field's standard (issue 2)\n")
    out.append(provenance_line(folder, ["bench_hbm.json", "bench_gemm_llama70b_r1.json", "bench_gemm_llama70b.json"]))
    out.append("Device copy, bytes read + written, L2 flushed, median (`parity bench hbm` vs torch `copy_` "
               "timed by `triton.testing.do_bench`, same byte count):\n")
    out.append("| ours (method) | ours TB/s | torch `copy_` TB/s | ratio ours/torch | within 3% |")
    out.append("| --- | --- | --- | --- | --- |")
    torch_tbps = hbm.get("torch_copy_median_tbps")
    for method, tbps in hbm.get("ours_methods_median_tbps", {}).items():
        ratio = tbps / torch_tbps if torch_tbps else None
        out.append(f"| {method} | {fmt(tbps)} | {fmt(torch_tbps)} | {fmt(ratio)} | "
                   f"{fmt(abs(ratio - 1) <= doc.get('tolerance', 0.03)) if ratio else '–'} |")
    out.append("")
    gemm_tables = (
        ("foundation_comparison.json",
         "bf16 GEMM, harness check: `parity bench gemm --library cublas` makes the call torch's default "
         "backend makes for `F.linear` (cublasGemmEx, cuBLAS's own kernel choice), so both sides time "
         "the same kernel; torch timed by do_bench; L2 flushed, median; both sides warmed up for the same "
         "time (`--warmup-ms`, do_bench's `warmup`) so both are timed at the clocks the GPU holds under "
         "sustained load; rounds interleaved (ours, torch, ours, torch), median of the rounds:"),
        ("foundation_comparison_boost.json",
         "bf16 GEMM, harness check at the maximum clock (boost protocol): the same call on both sides, each "
         "timing started after 1.5 s idle and kept to ~25 ms (5 ms warm-up, 20 ms of repetitions), before the "
         "power limit lowers the SM clock; three rounds, median of rounds:"),
        ("foundation_comparison_cublaslt.json",
         "bf16 GEMM, our default path (`parity bench gemm`: cuBLASLt's heuristic top-1) against the same "
         "torch `F.linear` (where the two libraries choose different kernels, the ratio compares kernels, "
         "not timers):"),
    )
    for name, caption in gemm_tables:
        table = load(folder, name)
        if not table:
            continue
        out.append(caption + "\n")
        out.append("| shape | m×n×k | ours ms | torch ms | ratio ours/torch | ours TFLOP/s | within 3% | "
                   "rounds ours / torch (ms) | ours configuration |")
        out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for row in table.get("gemm", []):
            rounds = (" ".join(fmt(v, 4) for v in row.get("ours_round_medians_ms", [])) + " / " +
                      " ".join(fmt(v, 4) for v in row.get("torch_round_medians_ms", [])))
            out.append(f"| {row['name']} | {row['m']}×{row['n']}×{row['k']} | {fmt(row['ours_median_ms'], 4)} | "
                       f"{fmt(row['torch_median_ms'], 4)} | {fmt(row['time_ratio_ours_over_torch'])} | "
                       f"{fmt(row['ours_median_tflops'], 1)} | {fmt(row['within_3_percent'])} | {rounds} | "
                       f"{row.get('ours_configuration', '')} |")
        out.append("")
    probe = load(folder, "hw_probe.json")
    if probe:
        cal = probe.get("calibration", {})
        out.append(f"Probe (`parity hw probe`, written to `data/calibration/h200.json`): copy "
                   f"{fmt(cal.get('copy_bandwidth_tbps'))} TB/s (vendor spec 4.8), bf16 GEMM "
                   f"{fmt(cal.get('bf16_gemm_tflops'), 1)} TFLOP/s (dense spec 989.5), "
                   f"{cal.get('sm_count')} SMs, L2 {(cal.get('l2_bytes') or 0) / 2**20:.0f} MiB.\n")


def gemm_passes(folders):
    """Every evaluation pass (a folder or its immediate subfolder holding gemm_eval.json) measured
    with the calibration of the newest one: all of them are reported, none picked."""
    passes = []
    for folder in folders:
        for candidate in [folder] + sorted(p for p in folder.iterdir() if p.is_dir()):
            if stored(candidate, "gemm_eval.json"):
                calibration = stored(candidate, "h200_gemm.json")
                passes.append((candidate, read_bytes(calibration) if calibration else None))
    if not passes:
        return []
    reference = passes[0][1]
    return [folder for folder, calibration in passes if calibration == reference]


def gemm(folders, out):
    passes = gemm_passes(folders)
    if not passes:
        return
    doc = load(passes[0], "gemm_eval.json")
    out.append("## GEMM selection (issue 3): selector vs cuBLASLt heuristic top-1 vs oracle\n")
    for folder in passes:
        out.append(provenance_line(folder, ["gemm_measurements_evaluation.json"]))
    out.append(f"Held-out {doc.get('split')} split of `bench/shapes/gemm_shapes_dev.csv`; model scalars "
               f"{doc.get('calibration')}. Ratio = t_oracle / t_chosen (1.0 = the fastest measured "
               "candidate; all timed L2 flushed, median of >= 30 interleaved repetitions, more for "
               "short kernels: rounds until ~2 ms of kernel time per candidate, at most 300). Every "
               "pass measured with this calibration is listed; per shape: `gemm_eval.md` in each "
               "pass's folder. Binaries from commit 4861103 on (4c19b35 in the provenance lines) "
               "queue the timed runs behind a stream hold, so host-side enqueue time is never "
               "timed (docs/benchmarking.md); earlier ones do not.\n")
    out.append("| pass | chooser | shapes | geomean | worst | within 5% | within noise | target |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for folder in passes:
        pass_doc = load(folder, "gemm_eval.json")
        for key, label, target in (("selector", "analytical selector", "≥ 0.98 geomean, ≥ 0.90 worst, ≥ 90% within 5%"),
                                   ("heuristic_top1", "cuBLASLt heuristic top-1", "(baseline)")):
            s = pass_doc.get(key, {})
            out.append(f"| `{folder}` | {label} | {s.get('shapes')} | {fmt(s.get('geomean_oracle_over_chosen'))} | "
                       f"{fmt(s.get('worst'))} | {fmt(100 * s.get('fraction_within_5_percent', 0), 0)}% | "
                       f"{fmt(100 * s.get('fraction_within_noise', 0), 0)}% | {target} |")
    out.append(f"\nMean Kendall τ of predicted vs measured order per shape (first pass listed): "
               f"{fmt(doc.get('mean_kendall_tau'))}.\n")


def tbe(folders, out):
    folder = find(folders, "tbe_comparison.json")
    if not folder:
        return
    doc = load(folder, "tbe_comparison.json")
    out.append("## Table-batched embeddings (issue 4) vs torch `nn.EmbeddingBag` (same call)\n")
    out.append(provenance_line(folder, ["tbe_C2.json"]))
    out.append("Effective TB/s uses the explicit byte model of `docs/embedding.md`; step = forward + "
               "backward fused with row-wise Adagrad (ours) vs torch forward + backward + optimizer. Bounds "
               "check: after the default flush (a memset, as do_bench; its dirty lines are written back "
               "during the check) and, in brackets, after a flush that leaves no dirty lines "
               "(`--cache flush-clean`). Floors under the default flush: one plain 16-byte-vector read "
               "kernel over the index array alone and, in brackets, a one-block kernel reading 16 bytes "
               "(launch, events and the flush's tail).\n")
    out.append("| config | fwd ms | fwd TB/s | torch fwd ms | fwd speed-up | step ms | bwd ms (batched variant) | "
               "torch SGD step ms | torch Adagrad step ms | bounds check µs (flush-clean) | bad/clean | "
               "plain read of the indices µs (one-block kernel) |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in doc.get("rows", []):
        out.append(f"| {r['config']} | {fmt(r.get('forward_ms'))} | {fmt(r.get('forward_tbps'), 2)} | "
                   f"{fmt(r.get('torch_forward_ms'))} | {fmt(r.get('forward_speedup_vs_torch'), 2)}"
                   f"{'×' if r.get('forward_speedup_vs_torch') else ''} | {fmt(r.get('step_ms'))} | "
                   f"{fmt(r.get('backward_ms'))} ({fmt(r.get('backward_batched_ms'))}) | "
                   f"{fmt(r.get('torch_step_sgd_ms'))} | {fmt(r.get('torch_step_adagrad_ms'))} | "
                   f"{fmt(r.get('bounds_check_us'), 1)} ({fmt(r.get('bounds_check_writeback_free_us'), 1)}) | "
                   f"{fmt(r.get('bounds_check_bad_ratio'), 2)} | "
                   f"{fmt(r.get('bounds_check_floor_index_read_us'), 1)} "
                   f"({fmt(r.get('bounds_check_floor_tiny_kernel_us'), 1)}) |")
    extras = {k: v for k, v in doc.items() if k != "rows" and not isinstance(v, (list, dict))}
    if extras:
        out.append("")
        for k, v in extras.items():
            out.append(f"- {k.replace('_', ' ')}: {fmt(v)}")
    out.append("")


def main():
    folders = [pathlib.Path(a) for a in sys.argv[1:]]
    out = ["# Benchmarks: measured figures", "",
           "Generated by `scripts/gpu/summarize.py " + " ".join(str(f) for f in folders) + "`; method and "
           "formulas: [benchmarking.md](benchmarking.md). Every figure is a median with the L2 flushed "
           "between repetitions, ours and the baseline timed in the same device call. Ratios side by side; "
           "no lone absolute figure is a claim.", ""]
    foundation(folders, out)
    gemm(folders, out)
    tbe(folders, out)
    print("\n".join(out))


if __name__ == "__main__":
    main()
