# Tuned knobs of experiment k7-mla-h200 (autotune/experiments/k7-mla-h200.json), written by
# autotune/distill.py --margin 0.02 from autotune/records/k7-mla-h200.jsonl: review before committing.
# Measured on NVIDIA H200 (driver 580.159.04), target x86-64-linux-sse41-avx-f16c-fma-avx2-cuda-cuda_capability_86, Halide
# 21.0.0, commit b064898, 2026-12-04T16:25:44Z. The build applies each set() over the
# hand knobs (cmake/LiveboundKernel.cmake); a variant without one keeps the hand schedule.

# lb_k7_cuda_tc_bounded_bf16_d576_512_nolse, workload class 'prefill_mla' (the build's class)
#   hand schedule kept: no candidate 2% faster on the geometric mean and at most 1% slower on every workload
#   K7/E/ragged_paged_mla_576_512/bs:8: hand 30415.311 us
#   K7/E/causal_mla_576_512/seq:8192: hand 24972.774 us
