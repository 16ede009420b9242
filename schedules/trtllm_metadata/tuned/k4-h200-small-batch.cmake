# K4's prefix sums placed by batch size, for the fused (one-launch) variants (not written by
# autotune/distill.py: K4 has no autotune runner workloads; these come from the family
# benchmark, trees built with each knob set, run side by side in one device call, 3 runs each).
#
# 1. The registers placement (knob scan_in_registers: each entry's thread sums its block totals
#    and head itself, no shared memory or barrier) against the hand one (block totals in shared
#    memory). NVIDIA H200 (driver 580.159.04), 2026-12-04, a7f0aec+, bench_trtllm_metadata,
#    graph replay, us:
#                  bs 1    bs 8    bs 16   bs 32   bs 64   bs 256
#   noswa  hand    2.21    2.30    2.45    2.50    2.53    2.81
#          regs    1.82    1.94    2.20    2.47    2.97    6.89
#   swa    hand    2.50    2.64    2.79    2.84    2.93    3.31
#          regs    2.25    2.30    2.53    2.79    3.34    7.27
#    It wins below 32 requests and loses from 64 (each entry then sums up to bs / 8 block
#    totals of 8 terms itself).
# 2. Then, at e957b51 (bench/results/2026-12-04-nvidia-h200-k4-riders-first.json):
#                                        bs 1    bs 8    bs 16   bs 32   bs 64   bs 256
#   noswa  hand                          2.22    2.29    2.45    2.50    2.53    2.82
#          riders_first                  2.19    2.30    2.33    2.36    2.39    2.57
#          regs, col_groups 2            1.78    1.85    2.14    2.40    2.90    6.88
#   swa    hand                          2.51    2.65    2.80    2.85    2.93    3.30
#          riders_first                  2.46    2.59    2.66    2.69    2.75    2.98
#    riders_first (the riders' loops before the gather's in the fused block: the riding
#    block's scan loads issue first) is 6-10 % faster from 32 requests; a second column group
#    for noswa (the riders on a block with no live column at decode lengths, as SWA has had
#    since 2026-12-03) takes 2-5 % off the registers form.
# 3. From 32 requests, riders_first with another block shape, at c3a8634
#    (bench/results/2026-12-04-nvidia-h200-k4-large-batch-shape.json):
#                                        bs 32   bs 64   bs 256
#   noswa  riders_first                  2.37    2.40    2.57
#          + col_groups 2                2.30    2.34    2.52
#          + col_threads 64              2.34    2.36    2.57
#   swa    riders_first (2 groups)       2.69    2.76    3.02
#          + col_threads 64              2.65    2.71    2.92
#    2-3 % each at decode lengths. noswa takes the second column group. swa keeps 128-thread
#    blocks: with every page live, 64-thread blocks took its noskip case from 5.40 to 7.24 us
#    (table E, the run that checked this file).
# So: below 32 requests the registers form with 2 column groups, from 32 the hand placement
# with riders_first and, without SWA, 2 column groups (the runtime picks by bs: runtime/src/pipeline_call.h,
# for_batch). The
# full-width twins keep the registers form below 32 and the hand form from 32: riders_first
# delays the twin's long gather (full noswa bs 64: 3.23 -> 4.03 us, bs 256 4.85 -> 7.00;
# table E at e957b51 and 4f33616).
# Records: autotune/records/k4.jsonl; bench/results/2026-12-04-nvidia-h200-small-batch-scan.md.
foreach (form IN ITEMS bounded full)
    foreach (swa IN ITEMS noswa swa)
        if (form STREQUAL "full")
            set(small scan_in_registers=true)
            set(large scan_in_registers=false)
        elseif (swa STREQUAL "noswa")
            set(small scan_in_registers=true col_groups=2)
            set(large riders_first=true col_groups=2)
        else ()
            set(small scan_in_registers=true col_groups=2)
            set(large riders_first=true)
        endif ()
        foreach (s IN ITEMS s32 s64)
            foreach (i IN ITEMS i32 i64)
                foreach (q IN ITEMS qnone qcumsum32 qcumsum64 qstrided)
                    set(LIVEBOUND_TUNED_lb_k4_cuda_${form}_${swa}_${s}_${i}_${q} ${small})
                    set(LIVEBOUND_TUNED_BATCH_lb_k4_cuda_${form}_${swa}_${s}_${i}_${q} 32 ${large})
                endforeach ()
            endforeach ()
        endforeach ()
    endforeach ()
endforeach ()
