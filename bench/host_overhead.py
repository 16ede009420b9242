#!/usr/bin/env python3
"""Host time of one eager Python call (issue 12): livebound's compiled binding
(livebound.ffi, Apache TVM FFI) next to its ctypes layer (livebound.kernels), on torch CUDA
tensors, for K1 at table E's shapes and K7 on tensor cores (and the binding's module
function called directly, to show what the Python wrapper adds; and, to split the module
call's time, the same call on tensors converted to tvm_ffi.Tensor beforehand (the binding
without torch's DLPack conversion) and the C ABI entry point alone, called through ctypes
with its argument struct built beforehand). Each call is timed alone
(time.perf_counter_ns around the call, the kernel launched asynchronously, the stream
synchronised every 100 calls so the launch queue never fills); median and 10th/90th
percentiles of 2000 calls after 50 warm-up calls, in 5 rounds with the paths interleaved. Both paths' outputs are compared first.
SGLang's wrappers' host times are in ../shared/spec/targets.md, table E (23-60 µs).

    PYTHONPATH=python LIVEBOUND_LIB=.../liblivebound.so LIVEBOUND_FFI_LIB=.../liblivebound_ffi.so \\
        python3 bench/host_overhead.py [--json OUT]
"""

import argparse
import json
import statistics
import time

import ctypes

import torch
import tvm_ffi

import livebound
import livebound._lib as _lib
import livebound.ffi as ffi
import livebound.kernels as kernels

CALLS, WARMUP, ROUNDS = 2000, 50, 5


def timed(fn):
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    ns = []
    for i in range(CALLS):
        t0 = time.perf_counter_ns()
        fn()
        ns.append(time.perf_counter_ns() - t0)
        if i % 100 == 99:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    us = sorted(x / 1000.0 for x in ns)
    return {"median_us": statistics.median(us), "p10_us": us[len(us) // 10], "p90_us": us[9 * len(us) // 10]}


def c_abi_only(via_ctypes):
    """The C ABI entry point alone: one ctypes call of it with the argument struct and the
    device that livebound.kernels built for `via_ctypes` (captured once, reused)."""
    captured = {}
    saved = kernels.call
    kernels.call = lambda name, args, device: captured.update(name=name, args=args, device=device)
    try:
        via_ctypes()
    finally:
        kernels.call = saved
    fn = getattr(_lib.load_library(), captured["name"])
    ref, device = ctypes.byref(captured["args"]), captured["device"]
    return lambda: fn(ref, device)


def preconverted(raw, args):
    """The module function on the same arguments, tensors converted to tvm_ffi.Tensor once
    (no DLPack exchange per call; the call then runs on the stream TVM FFI's environment
    holds, not torch's: for timing only)."""
    converted = [tvm_ffi.from_dlpack(a) if isinstance(a, torch.Tensor) else a for a in args]
    return lambda: raw(*converted)


def k1_case(bs, ps, max_pages, seed):
    g = torch.Generator().manual_seed(seed)
    dev = "cuda"
    ctx = max_pages * ps
    t = {
        "seq_lens": torch.randint(1, ctx, (bs,), generator=g, dtype=torch.int64).to(dev),
        "rpi": torch.randperm(bs + 3, generator=g)[:bs].to(dev),
        "r2t": torch.randint(0, 1 << 20, (bs + 3, ctx), generator=g, dtype=torch.int32).to(dev),
    }
    outs = [[torch.full((bs,), -1, dtype=torch.int32, device=dev), torch.full((bs + 1,), -1, dtype=torch.int32, device=dev),
             torch.full((bs, max_pages), -1, dtype=torch.int32, device=dev)] for _ in range(2)]

    def call(mod, out):
        return lambda: mod.normal_decode_set_metadata(out[0], out[1], out[2], t["r2t"], t["rpi"], max_pages,
                                                      t["seq_lens"], 0, ps)

    raw = ffi.module().normal_decode_set_metadata
    o = outs[0]
    direct_args = [t["seq_lens"], t["rpi"], t["r2t"], None, o[0], o[1], o[2], None, max_pages, 0, ps, False, 0]
    return call(ffi, outs[0]), call(livebound, outs[1]), outs, raw, direct_args


def k7_case(seed):
    g = torch.Generator().manual_seed(seed)
    dev, dt = "cuda", torch.bfloat16
    E, P, hq, hkv, d = [64, 32, 128, 16], [512, 0, 256, 1024], 32, 8, 128
    T, slots = sum(E), sum(P) + 64
    q = torch.randn((T, hq, d), generator=g).to(dev, dt)
    ke, ve = (torch.randn((T, hkv, d), generator=g).to(dev, dt) for _ in range(2))
    kb, vb = (torch.randn((slots, hkv, d), generator=g).to(dev, dt) for _ in range(2))
    qo = torch.tensor([0] + list(torch.tensor(E).cumsum(0)), dtype=torch.int32, device=dev)
    kvp = torch.tensor([0] + list(torch.tensor(P).cumsum(0)), dtype=torch.int32, device=dev)
    kvi = torch.randperm(slots, generator=g)[: sum(P)].to(dev)
    outs = [[torch.zeros((T, hq, d), dtype=dt, device=dev), torch.zeros((T, hq), dtype=torch.float32, device=dev)]
            for _ in range(2)]

    def call(mod, out):
        return lambda: mod.extend_attention_fwd(q, ke, ve, out[0], kb, vb, qo, kvp, kvi, None, True, None, max(E),
                                                lse_extend=out[1])

    raw = ffi.module().extend_attention_fwd
    o = outs[0]
    direct_args = [q, ke, ve, o[0], kb, vb, qo, kvp, kvi, None, o[1], None, None, None, max(E), True, -1, 0.0, 0.0, 1.0,
                   1.0, True, -1, False, False, 0]
    return call(ffi, outs[0]), call(livebound, outs[1]), outs, raw, direct_args


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--only", default="", help="run only the cases whose name contains this (e.g. K7)")
    ap.add_argument("--rounds", type=int, default=ROUNDS, help="rounds per path (default %d)" % ROUNDS)
    args = ap.parse_args()
    cases = {
        "K1/ps:1/bs:64": k1_case(64, 1, 8192, 1),
        "K1/ps:64/bs:64": k1_case(64, 64, 128, 2),
        "K1/ps:1/bs:1": k1_case(1, 1, 8192, 3),
        "K7/tc/bf16/d128/bs:4": k7_case(4),
    }
    results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "livebound": livebound.version(),
               "calls": CALLS, "cases": {}}
    for name, (via_ffi, via_ctypes, outs, raw, direct_args) in cases.items():
        if args.only not in name:
            continue
        direct = lambda: raw(*direct_args)  # noqa: E731
        via_ffi()
        via_ctypes()
        torch.cuda.synchronize()
        for a, b in zip(outs[0], outs[1]):
            assert torch.equal(a, b), "%s: livebound.ffi and livebound.kernels differ" % name
        # ffi: livebound.ffi's SGLang-named function; ffi_module: the loaded module's function
        # called directly (positional, no Python wrapper); ctypes: livebound.kernels;
        # ffi_module_preconverted and c_abi: the splits of ffi_module (above).
        # ROUNDS rounds, the paths interleaved in each; the row keeps every round and the
        # median of the round medians (the machine's host timing drifts between runs).
        paths = (("ffi", via_ffi), ("ffi_module", direct), ("ctypes", via_ctypes),
                 ("ffi_module_preconverted", preconverted(raw, direct_args)), ("c_abi", c_abi_only(via_ctypes)))
        rounds = {key: [] for key, _ in paths}
        for _ in range(args.rounds):
            for key, fn in paths:
                rounds[key].append(timed(fn))
        row = {k: {"median_us": statistics.median(r["median_us"] for r in v), "rounds": v} for k, v in rounds.items()}
        results["cases"][name] = row
        print("%-22s " % name + "   ".join("%s %6.2f us (rounds %s)" % (
            k, v["median_us"], " ".join("%.2f" % r["median_us"] for r in v["rounds"])) for k, v in row.items()),
            flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
