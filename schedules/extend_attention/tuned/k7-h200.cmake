# Tuned knobs of experiment k7-h200 (autotune/experiments/k7-h200.json), written by
# autotune/distill.py --margin 0.02 from autotune/records/k7-h200.jsonl: review before committing.
# Measured on NVIDIA H200 (driver 580.159.04), target x86-64-linux-sse41-avx-f16c-fma-avx2-cuda-cuda_capability_86, Halide
# 21.0.0, commit 591859e, 2026-12-03T17:33:06Z. The build applies each set() over the
# hand knobs (cmake/LiveboundKernel.cmake); a variant without one keeps the hand schedule.

# lb_k7_cuda_tc_bounded_bf16_d128_nolse, workload class 'prefill_d128' (the build's class)
#   hand schedule kept: no candidate 2% faster on the geometric mean and not slower on any workload
#   K7/C/ragged_paged_d128/bs:8: hand 5099.467 us
#   K7/B/causal_d128/seq:8192: hand 4164.976 us
