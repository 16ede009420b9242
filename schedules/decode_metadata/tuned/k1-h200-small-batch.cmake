# K1's prefix sum placed by batch size (not written by autotune/distill.py: K1 has no autotune
# runner workloads; these come from the family benchmark, two trees built with and without the
# knob, run side by side in one device call, 3 runs each).
# Measured on NVIDIA H200 (driver 580.159.04), 2026-12-04, commit a7f0aec+ (the knob
# scan_in_registers, schedules/common/scan_cuda.h), bench_decode_metadata, graph replay, us
# (hand = the riding grid with its scan's block totals in shared memory, registers = each
# entry's thread sums its block totals and head itself, no shared memory or barrier):
#                 bs 1    bs 8    bs 16   bs 32   bs 64   bs 256
#   ps 1  hand    2.19    2.79    2.86    2.90    3.36    7.78
#         regs    1.82    2.32    2.47    2.80    3.41    9.52
#   ps 64 hand    2.27    2.52    2.65    2.69    2.94    6.40
#         regs    1.78    2.15    2.23    2.55    3.29    9.28
# The registers form wins up to 32 requests (17-22 % below 32, 3-5 % at 32) and loses from
# 64 (each entry then sums up to bs / 8 block totals of 8 terms itself).
# Then, at e957b51, with riders_first (the riders' loops before the gather's in the fused
# block) (bench/results/2026-12-04-nvidia-h200-k1-riders-first.json):
#                              bs 1    bs 8    bs 16   bs 32   bs 64   bs 256
#   ps 1  regs                 1.83    2.32    2.48    2.81    3.41    9.51
#         regs, riders_first   1.84    2.21    2.41    2.90    3.83    10.05
#         hand, riders_first   2.13    2.71    2.73    2.78    3.42    8.54
#   ps 64 regs                 1.78    2.15    2.23    2.55    3.28    9.28
#         regs, riders_first   1.81    2.01    2.15    2.64    3.63    9.53
# riders_first takes 3-7 % off the registers form at bs 8-16 and costs the hand form from 64.
# So: the registers form with riders_first is the variant, and the hand form its batch
# alternate from 32 requests (the runtime picks it by bs, runtime/src/pipeline_call.h,
# for_batch). The full-width twins take the registers form without riders_first: with it the
# twin's long gather starts after the scan (full ps 1 bs 8: 7.32 -> 8.00 us, table E at
# 4f33616). Records: autotune/records/k1.jsonl;
# bench/results/2026-12-04-nvidia-h200-small-batch-scan.md.
foreach (form IN ITEMS bounded full)
    if (form STREQUAL "bounded")
        set(small scan_in_registers=true riders_first=true)
    else ()
        set(small scan_in_registers=true)
    endif ()
    foreach (swa IN ITEMS noswa swa)
        foreach (s IN ITEMS s32 s64)
            foreach (i IN ITEMS i32 i64)
                set(LIVEBOUND_TUNED_lb_k1_cuda_${form}_${swa}_${s}_${i} ${small})
                set(LIVEBOUND_TUNED_BATCH_lb_k1_cuda_${form}_${swa}_${s}_${i} 32 scan_in_registers=false)
            endforeach ()
        endforeach ()
    endforeach ()
endforeach ()
