# Tuned knobs of experiment k3-h200 (autotune/experiments/k3-h200.json), written by
# autotune/distill.py --margin 0.02 from autotune/records/k3-h200.jsonl: review before committing.
# Measured on NVIDIA H200 (driver 580.159.04), target x86-64-linux-sse41-avx-f16c-fma-avx2-cuda-cuda_capability_86, Halide
# 21.0.0, commit 16d7936, 2026-12-03T17:59:31Z. The build applies each set() over the
# hand knobs (cmake/LiveboundKernel.cmake); a variant without one keeps the hand schedule.

# lb_k3_cuda_bounded_both_ctx_i64, workload class 'verify_bs_1_8' (the build's class)
#   tuned: stage_totals=true (geometric mean 0.958x the hand schedule's time)
#   K3/skip/next_n:4/bs:1: hand 4.706 us, tuned 4.726 us (1.004x)
#   K3/skip/next_n:4/bs:8: hand 5.922 us, tuned 5.408 us (0.913x)
set(LIVEBOUND_TUNED_lb_k3_cuda_bounded_both_ctx_i64 stage_totals=true)

# lb_k3_cuda_bounded_both_ctx_i64, workload class 'verify_bs_64' (calls of batch >= 64)
#   tuned: riding_grid=true col_threads=128 stage_totals=true col_groups=2 (geometric mean 0.782x the hand schedule's time)
#   K3/skip/next_n:4/bs:64: hand 7.909 us, tuned 6.184 us (0.782x)
set(LIVEBOUND_TUNED_BATCH_lb_k3_cuda_bounded_both_ctx_i64 64 riding_grid=true col_threads=128 stage_totals=true col_groups=2)
