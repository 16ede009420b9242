# Tuned knobs of experiment k6-cpu (autotune/experiments/k6-cpu.json), written by
# autotune/distill.py --margin 0.05 from autotune/records/k6-cpu.jsonl: review before committing.
# Measured on Intel(R) Xeon(R) Processor (2 threads) (driver -), target x86-64-linux-sse41-avx-f16c-fma-avx2, Halide
# 21.0.0, commit a534959, 2026-12-03T17:52:08Z. The build applies each set() over the
# hand knobs (cmake/LiveboundKernel.cmake); a variant without one keeps the hand schedule.

# lb_k6_cpu_bounded_req, workload class 'prefill' (the build's class)
#   hand schedule kept: no candidate 5% faster on the geometric mean and not slower on any workload
#   K6/ragged/cpu_quarter: hand 735.026 us
#   K6/uniform/cpu_quarter: hand 725.468 us
#   K6/single/cpu_quarter: hand 728.177 us
