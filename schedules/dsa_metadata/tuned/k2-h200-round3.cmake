# Tuned knobs of experiment k2-h200-round3 (autotune/experiments/k2-h200-round3.json), written by
# autotune/distill.py --margin 0.02 from autotune/records/k2-h200-round3.jsonl: review before committing.
# Measured on NVIDIA H200 (driver 580.159.04), target x86-64-linux-sse41-avx-f16c-fma-avx2-cuda-cuda_capability_86, Halide
# 21.0.0, commit 1577674, 2026-12-03T17:38:28Z. The build applies each set() over the
# hand knobs (cmake/LiveboundKernel.cmake); a variant without one keeps the hand schedule.

# lb_k2_cuda_bounded_both_i64, workload class 'decode_bs_1_8' (the build's class)
#   hand schedule kept: no candidate 2% faster on the geometric mean and not slower on any workload
#   K2/skip/bs:1: hand 3.763 us
#   K2/skip/bs:8: hand 4.058 us
#   K2/half_live/bs:8: hand 4.278 us

# lb_k2_cuda_bounded_both_i64, workload class 'decode_bs_64' (calls of batch >= 64)
#   tuned: riding_grid=true col_threads=128 stage_totals=true (geometric mean 0.872x the hand schedule's time)
#   K2/skip/bs:64: hand 5.934 us, tuned 4.782 us (0.806x)
#   K2/noskip/bs:64: hand 6.894 us, tuned 6.498 us (0.943x)
set(LIVEBOUND_TUNED_BATCH_lb_k2_cuda_bounded_both_i64 64 riding_grid=true col_threads=128 stage_totals=true)
