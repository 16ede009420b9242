# Tuned knobs of experiment k5-h200 (autotune/experiments/k5-h200.json), written by
# autotune/distill.py --margin 0.02 from autotune/records/k5-h200.jsonl: review before committing.
# Measured on NVIDIA H200 (driver 580.159.04), target x86-64-linux-sse41-avx-f16c-fma-avx2-cuda-cuda_capability_86, Halide
# 21.0.0, commit 383f893, 2026-12-03T17:57:40Z. The build applies each set() over the
# hand knobs (cmake/LiveboundKernel.cmake); a variant without one keeps the hand schedule.

# lb_k5_cuda_rows_s64_i32, workload class 'prefill' (the build's class)
#   hand schedule kept: no candidate 2% faster on the geometric mean and not slower on any workload
#   K5/prefill_bs8_32k/max_seq_len:8192: hand 4.006 us
#   K5/prefill_bs8_32k/max_seq_len:16384: hand 4.024 us
#   K5/prefill_bs1_16k/max_seq_len:16384: hand 2.814 us
#   K5/prefill_bs32_32k/max_seq_len:16384: hand 4.674 us
