# Tuned knobs of experiment k2-h200-round4 (autotune/experiments/k2-h200-round4.json), written by
# autotune/distill.py --margin 0.02 from autotune/records/k2-h200-round4.jsonl: review before committing.
# Measured on NVIDIA H200 (driver 580.159.04), target x86-64-linux-sse41-avx-f16c-fma-avx2-cuda-cuda_capability_86, Halide
# 21.0.0, commit a7f0aec+, 2026-12-04T18:04:40Z. The build applies each set() over the
# hand knobs (cmake/LiveboundKernel.cmake); a variant without one keeps the hand schedule.

# lb_k2_cuda_bounded_both_i64, workload class 'decode_bs_1_8' (the build's class)
#   tuned: riding_grid=true col_threads=128 scan_in_registers=true scan_block=8 col_groups=32 (geometric mean 0.683x the hand schedule's time)
#   K2/skip/bs:1: hand 3.822 us, tuned 2.277 us (0.596x)
#   K2/skip/bs:8: hand 4.094 us, tuned 2.810 us (0.686x)
#   K2/half_live/bs:8: hand 4.350 us, tuned 3.395 us (0.780x)
set(LIVEBOUND_TUNED_lb_k2_cuda_bounded_both_i64 riding_grid=true col_threads=128 scan_in_registers=true scan_block=8 col_groups=32)

# lb_k2_cuda_bounded_both_i64, workload class 'decode_bs_64' (calls of batch >= 64)
#   tuned: riding_grid=true col_threads=128 stage_totals=true (geometric mean 0.871x the hand schedule's time)
#   K2/skip/bs:64: hand 5.867 us, tuned 4.773 us (0.814x)
#   K2/noskip/bs:64: hand 6.861 us, tuned 6.398 us (0.933x)
set(LIVEBOUND_TUNED_BATCH_lb_k2_cuda_bounded_both_i64 64 riding_grid=true col_threads=128 stage_totals=true)
