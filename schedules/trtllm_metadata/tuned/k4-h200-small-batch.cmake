# K4's prefix sums placed by batch size, for the fused (one-launch) variants (not written by
# autotune/distill.py: K4 has no autotune runner workloads; these come from the family
# benchmark, two trees built with and without the knob, run side by side in one device call,
# 3 runs each).
# Measured on NVIDIA H200 (driver 580.159.04), 2026-12-04, commit a7f0aec+ (the knob
# scan_in_registers, schedules/common/scan_cuda.h), bench_trtllm_metadata, graph replay, us
# (hand = the riding scans' block totals in shared memory, registers = each entry's thread
# sums its block totals and head itself, no shared memory or barrier):
#                  bs 1    bs 8    bs 16   bs 32   bs 64   bs 256
#   noswa  hand    2.21    2.30    2.45    2.50    2.53    2.81
#          regs    1.82    1.94    2.20    2.47    2.97    6.89
#   swa    hand    2.50    2.64    2.79    2.84    2.93    3.31
#          regs    2.25    2.30    2.53    2.79    3.34    7.27
# The registers form wins up to 32 requests (10-18 % below 32, 1-2 % at 32) and loses from
# 64. So: the registers form is the variant, the hand form its batch alternate from 32
# requests (runtime/src/pipeline_call.h, for_batch). Records:
# bench/results/2026-12-04-nvidia-h200-small-batch-scan.md.
foreach (form IN ITEMS bounded full)
    foreach (swa IN ITEMS noswa swa)
        foreach (s IN ITEMS s32 s64)
            foreach (i IN ITEMS i32 i64)
                foreach (q IN ITEMS qnone qcumsum32 qcumsum64 qstrided)
                    set(LIVEBOUND_TUNED_lb_k4_cuda_${form}_${swa}_${s}_${i}_${q} scan_in_registers=true)
                    set(LIVEBOUND_TUNED_BATCH_lb_k4_cuda_${form}_${swa}_${s}_${i}_${q} 32 scan_in_registers=false)
                endforeach ()
            endforeach ()
        endforeach ()
    endforeach ()
endforeach ()
