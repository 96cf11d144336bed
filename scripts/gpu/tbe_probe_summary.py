"""Shared by the TBE probes' summaries (imported from their inline Python): one results file's
forward kernels as table rows."""


def print_forward_rows(label, d, label_width, name_width):
    """Prints a row per forward kernel of the `parity bench tbe` results `d` (auto first unless the
    run was forward-only: ms, TB/s every lookup, % of copy under the judged byte model, the
    target's verdict; a skipped or failed kernel says so) and returns {kernel: % of copy}."""
    rows = [] if d.get("forward_only") else [("auto", d["forward"], d.get("forward_bandwidth", {}))]
    rows += [(name, v, v.get("forward_bandwidth", {})) for name, v in d.get("forward_variants", {}).items()]
    ratios = {}
    for name, f, bw in rows:
        head = f"{label:{label_width}s} {name:{name_width}s} "
        if "skipped" in f or "check_failed" in f:
            print(head + (f"skipped: {f['skipped']}" if "skipped" in f else f"CHECK FAILED: {f['check_failed']}"))
            continue
        ratios[name] = 100 * bw.get("evaluated_ratio_to_copy", float("nan"))
        met = {True: "met", False: "NOT met"}.get(bw.get("target_met"), "-")
        print(head + f"{f['median_ms']:8.4f} {f['tbps']:7.2f} {ratios[name]:7.1f}"
              f" {bw.get('evaluated_byte_model', '-'):>12s} {met:>7s}")
    return ratios


def print_round_summary(out_dir, prefix):
    """Every `<prefix>_*.json` results file under out_dir: its forward rows, then its step (median
    ms, the optimiser and the backward variant)."""
    import glob
    import json
    import os

    for path in sorted(glob.glob(os.path.join(out_dir, f"{prefix}_*.json"))):
        d = json.load(open(path))
        name = os.path.basename(path)[len(prefix) + 1:-len(".json")]
        print_forward_rows(name, d, 22, 20)
        step = d.get("step_fwd_bwd_opt", {})
        print(f"{name:22s} step {step.get('median_ms', float('nan')):.3f} ms"
              f" ({d.get('config', {}).get('optimizer')}, backward {d.get('backward_variant', '-')})")
