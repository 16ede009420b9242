# Tuned knobs of experiment k3-h200-round3 (autotune/experiments/k3-h200-round3.json), written by
# autotune/distill.py --margin 0.02 from autotune/records/k3-h200-round3.jsonl: review before committing.
# Measured on NVIDIA H200 (driver 580.159.04), target x86-64-linux-sse41-avx-f16c-fma-avx2-cuda-cuda_capability_86, Halide
# 21.0.0, commit 5201d95+, 2026-12-04T18:56:00Z. The build applies each set() over the
# hand knobs (cmake/LiveboundKernel.cmake); a variant without one keeps the hand schedule.

# lb_k3_cuda_bounded_both_ctx_i64, workload class 'verify_bs_1_8' (the build's class)
#   tuned: riding_grid=true col_threads=128 scan_in_registers=true scan_block=8 col_groups=8 tables_from_zero=true (geometric mean 0.787x the hand schedule's time)
#   K3/skip/next_n:4/bs:1: hand 4.731 us, tuned 3.174 us (0.671x)
#   K3/skip/next_n:4/bs:8: hand 5.886 us, tuned 5.429 us (0.922x)
set(LIVEBOUND_TUNED_lb_k3_cuda_bounded_both_ctx_i64 riding_grid=true col_threads=128 scan_in_registers=true scan_block=8 col_groups=8 tables_from_zero=true)

# lb_k3_cuda_bounded_both_ctx_i64, workload class 'verify_bs_64' (calls of batch >= 64)
#   tuned: riding_grid=true col_threads=128 stage_totals=true col_groups=2 tables_from_zero=true (geometric mean 0.761x the hand schedule's time)
#   K3/skip/next_n:4/bs:64: hand 7.882 us, tuned 5.995 us (0.761x)
set(LIVEBOUND_TUNED_BATCH_lb_k3_cuda_bounded_both_ctx_i64 64 riding_grid=true col_threads=128 stage_totals=true col_groups=2 tables_from_zero=true)
