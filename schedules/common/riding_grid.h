// The riding grid, shared by the one-launch CUDA schedules (K1, K4; K2/K3 as a knob): a
// 2-D table's compact gather grid, col_groups blocks per row, with 1-D outputs riding on its
// blocks (compute_with at the block loops). compute_with matches fused loops by their full
// names, so both block dims are made from the same Var `b` in every Func: the table splits b
// by 1 and fuses the extent-1 part with its column group into `gx`; a rider splits b by
// `threads`, then the inner part by 1 into `gx`. Every loop is left unpartitioned (Halide 21's
// PartitionLoops rejected the fused block loops: "Unexpected construct inside if statement").
#pragma once

#include <utility>
#include <vector>

#include "Halide.h"

namespace livebound::schedules {

struct RidingGrid {
    Halide::Var b;              // the rows' Var (requests / table rows) in every Func
    Halide::Var column;         // the table's column Var
    int col_threads = 256;      // threads per block along the columns
    int col_groups = 16;        // blocks per row, column chunks interleaved
    bool rows_on_x = false;     // true: rows on the grid's x dimension (more than 65535 rows)
    // The loops the schedules name: threads `ci`, serial chunks `co`, the fused column-group
    // block `gx`; a rider's thread `ii` and its extent-1 serial `unit` (where its scan's
    // block totals go, so that only riding blocks compute them).
    Halide::Var chunk{"chunk"}, ci{"ci"}, co{"co"}, group{"group"}, lane{"lane"}, gx{"gx"}, ii{"ii"},
        unit{"unit"};

    // The table `f` (column, b): each thread walks its column chunks in a serial loop that
    // Halide trims to the row's live prefix.
    void gather(Halide::Func f) const {
        using namespace Halide;
        f.split(column, chunk, ci, col_threads, TailStrategy::GuardWithIf)
            .split(chunk, co, group, col_groups, TailStrategy::GuardWithIf)
            .split(b, b, lane, 1)
            .fuse(lane, group, gx);
        if (rows_on_x) {
            f.reorder(co, ci, b, gx).gpu_blocks(b, gx);
        } else {
            f.reorder(co, ci, gx, b).gpu_blocks(gx, b);
        }
        f.gpu_threads(ci).partition(gx, Partition::Never).partition(b, Partition::Never);
    }

    // A 1-D output f (b), or a 2-D one (d, b) whose d is a serial loop: one thread per row.
    void ride(Halide::Func f) const {
        using namespace Halide;
        f.split(b, b, lane, col_threads, TailStrategy::GuardWithIf)
            .split(lane, gx, ii, col_threads)
            .split(ii, unit, ii, col_threads);
        const bool serial_d = f.dimensions() == 2;
        Var d = f.args()[0];
        if (rows_on_x) {
            serial_d ? f.reorder(d, ii, unit, b, gx) : f.reorder(ii, unit, b, gx);
            f.gpu_blocks(b, gx);
        } else {
            serial_d ? f.reorder(d, ii, unit, gx, b) : f.reorder(ii, unit, gx, b);
            f.gpu_blocks(gx, b);
        }
        f.gpu_threads(ii).partition(gx, Partition::Never).partition(b, Partition::Never);
    }

    // The tables of one grid: `table`, and `second` (undefined when absent) fused into its
    // thread loop, or, when the riders' loops come first (`riders_first`), into the riders'
    // block loop at `anchor`. `row` (a table row's req_to_token row) is loaded once per
    // thread before the column loop when there is one table; with two it stays inline:
    // computed at the loop both share, Halide allocates it in global memory on every call.
    void tables(Halide::Func table, Halide::Func second, Halide::Func row, const Halide::Func &anchor,
                bool riders_first) const {
        gather(table);
        if (!second.defined()) {
            row.compute_at(table, ci);
            return;
        }
        gather(second);
        if (riders_first) {
            second.compute_with(anchor, gx, on_last_group());
        } else {
            second.compute_with(table, ci);
        }
    }

    // The fused block loop a rider (or a second table) is compute_with'ed at, and the
    // alignment that puts riders on the last column group.
    Halide::Var fused_level() const { return rows_on_x ? b : gx; }
    std::vector<std::pair<Halide::VarOrRVar, Halide::LoopAlignStrategy>> on_last_group() const {
        return {{gx, Halide::LoopAlignStrategy::AlignEnd}};
    }
};

}  // namespace livebound::schedules
