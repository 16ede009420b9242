# Tuned knobs of experiment k2-h200-round5 (autotune/experiments/k2-h200-round5.json), written by
# autotune/distill.py --margin 0.02 from autotune/records/k2-h200-round5.jsonl: review before committing.
# Measured on NVIDIA H200 (driver 580.159.04), target x86-64-linux-sse41-avx-f16c-fma-avx2-cuda-cuda_capability_86, Halide
# 21.0.0, commit 5201d95+, 2026-12-04T18:56:00Z. The build applies each set() over the
# hand knobs (cmake/LiveboundKernel.cmake); a variant without one keeps the hand schedule.

# lb_k2_cuda_bounded_both_i64, workload class 'decode_bs_1_8' (the build's class)
#   tuned: riding_grid=true col_threads=128 scan_in_registers=true scan_block=8 col_groups=32 tables_from_zero=true (geometric mean 0.661x the hand schedule's time)
#   K2/skip/bs:1: hand 3.808 us, tuned 2.102 us (0.552x)
#   K2/skip/bs:8: hand 3.962 us, tuned 2.675 us (0.675x)
#   K2/half_live/bs:8: hand 4.213 us, tuned 3.261 us (0.774x)
set(LIVEBOUND_TUNED_lb_k2_cuda_bounded_both_i64 riding_grid=true col_threads=128 scan_in_registers=true scan_block=8 col_groups=32 tables_from_zero=true)

# lb_k2_cuda_bounded_both_i64, workload class 'decode_bs_64' (calls of batch >= 64)
#   tuned: riding_grid=true col_threads=128 stage_totals=true tables_from_zero=true (geometric mean 0.833x the hand schedule's time)
#   K2/skip/bs:64: hand 5.840 us, tuned 4.496 us (0.770x)
#   K2/noskip/bs:64: hand 6.840 us, tuned 6.160 us (0.901x)
set(LIVEBOUND_TUNED_BATCH_lb_k2_cuda_bounded_both_i64 64 riding_grid=true col_threads=128 stage_totals=true tables_from_zero=true)
