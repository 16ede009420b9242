// Lesson 5: a predicate that depends on the lane makes the lanes of a warp diverge.
//
// On a GPU, 32 lanes (threads) of a warp execute together. livebound's tensor-core attention
// gives each warp a tile of query rows, one row per lane here, and each lane walks the key
// chunks in a loop of its own. Two ways to state which keys a row sees:
//   uniform:   only tile-level facts go into where() (can this chunk meet this tile at all?),
//              and the row-level visibility is an additive mask on the value;
//   per lane:  the row-level visibility itself goes into where().
// Halide derives loop bounds from whatever where() says. From the second form it derives a
// bound per row, i.e. per lane: each lane gets its own trip count and an `if` on its own row.
// The lanes diverge, and a warp-collective instruction in that loop (mma.sync, a shuffle),
// which needs all 32 lanes at once, is undefined. So livebound's tensor-core kernel keeps only
// warp-uniform predicates in where() (generators/extend_attention_generator.cpp,
// define_tensor_core) and a lowering pass refuses the build otherwise
// (generators/common/convergence_check.h). The work here is a running max, as in softmax.
#include "lesson_support.h"

#include <algorithm>
#include <set>
#include <vector>

using namespace Halide;

const int kLanes = 32, kChunk = 32;  // rows per tile (one per lane); keys per chunk
const int kMasked = -1000000;        // additive mask: a masked key's value drops far below any max

// out(lane, tile) = max of value[n] over the keys n row m = tile*32 + lane sees (causal,
// window W), or -1 if none. `per_lane`: the row-level predicate goes into where().
Func running_max(ImageParam value, Param<int> E, Param<int> W, bool per_lane) {
    Var lane("lane"), tile("tile");
    RDom r(0, kChunk, 0, (E + kChunk - 1) / kChunk, "r");  // r.x: key within a chunk, r.y: the chunk
    Expr m = tile * kLanes + lane, n = r.y * kChunk + r.x;
    Expr row_sees_key = m < E && n < E && n <= m && m - n <= W;
    Expr key_value = value(clamp(n, 0, E - 1));
    Func out(per_lane ? "per_lane" : "uniform");  // (32, tiles) int32
    out(lane, tile) = -1;
    r.where(r.y * kChunk < E);
    if (per_lane) {
        r.where(row_sees_key);  // mentions the lane
        out(lane, tile) = max(out(lane, tile), key_value);
    } else {
        r.where(tile * kLanes - (r.y * kChunk + kChunk - 1) <= W);  // the tile's first row sees the chunk's last key
        r.where(r.y * kChunk - (tile * kLanes + kLanes - 1) <= 0);  // the chunk's first key is not after the last row
        out(lane, tile) = max(out(lane, tile), key_value + select(row_sees_key, 0, kMasked));
    }
    out.bound(lane, 0, kLanes);
    return out;
}

int main() {
    ImageParam value(Int(32), 1, "value");  // [E] int32
    Param<int> E("E"), W("W");              // keys (= query rows); window
    std::printf("Lesson 5: lane-dependent predicates give every lane its own loop; uniform ones do not.\n\n");

    // ---- lowered for CUDA: a block per tile, a lane per row, the key loops serial in each lane ----
    const Target cuda = get_host_target().with_feature(Target::CUDA).with_feature(Target::CUDACapability86);
    std::string stmt[2];
    for (int per_lane = 0; per_lane < 2; per_lane++) {
        Func out = running_max(value, E, W, per_lane);
        Var lane = out.args()[0], tile = out.args()[1];
        RVar rx("r$x"), ry("r$y");
        out.gpu_blocks(tile).gpu_threads(lane);
        out.update().reorder(rx, ry, lane, tile).gpu_blocks(tile).gpu_threads(lane);
        const std::string full = lesson::lowered_stmt(Pipeline(out), {value, E, W}, cuda, /*conceptual=*/true);
        // The update's kernel, from the host lets in front of it (after the init kernel) on.
        const size_t update_kernel = full.find("gpu_block<CUDA> (" + out.name() + ".s1");
        stmt[per_lane] = full.substr(full.rfind("_halide_buffer_set_device_dirty", update_kernel));
        std::printf("%s, its update kernel's loops and the lets that size them:\n",
                    per_lane ? "Per-lane predicate in where()" : "Uniform predicates in where(), row mask additive");
        lesson::show(lesson::lines_with_lets(stmt[per_lane], {"for (", "if (", "gpu_"}), 160);
        std::printf("\n");
    }
    const auto uniform_control = lesson::lines_with_lets(stmt[0], {"for (", "if ("});
    const auto lane_control = lesson::lines_with_lets(stmt[1], {"for (", "if ("});
    const auto lane_chunk_loop = lesson::lines_with_lets(stmt[1], {"for (per_lane.s1.r$y"});
    std::printf("Uniform: the chunk loop's bounds come from the block (the tile) alone; every lane runs the same\n"
                "trips, and the mask is a select inside the value. Per lane: an `if` on the lane's row, a key-loop\n"
                "extent computed from .thread_id_x, and no tile-level bound at all: the chunk loop spans every chunk.\n\n");

    // ---- the CPU: the same two algorithms, lane loop outside the key loops, one tile per run ----
    const int num_keys = 300, window = 40, tiles = (num_keys + kLanes - 1) / kLanes;
    Buffer<int32_t> values(num_keys);
    for (int k = 0; k < num_keys; k++) values(k) = 1 + (37 * k) % 101;
    value.set(values);
    E.set(num_keys);
    W.set(window);
    int wrong = 0, uniform_tiles_diverging = 0, lane_tiles_diverging = 0;
    std::printf("E = %d keys, W = %d. Tile 4 (rows 128..159): key-loop trips of each chunk-loop trip, per lane:\n",
                num_keys, window);
    for (int per_lane = 0; per_lane < 2; per_lane++) {
        Func out = running_max(value, E, W, per_lane);
        out.update().reorder(RVar("r$x"), RVar("r$y"), out.args()[0], out.args()[1]);
        Pipeline p(out);
        const std::string name = out.name();  // two recorders: the key loop (id 0), the chunk loop (id 1)
        p.add_custom_lowering_pass(new lesson::RecordTrips(name + ".s1.r$x", name + ".s1.lane", name + ".s1.r$y", 0));
        p.add_custom_lowering_pass(new lesson::RecordTrips(name + ".s1.r$y", name + ".s1.lane", "", 1));
        for (int t = 0; t < tiles; t++) {
            Buffer<int32_t> result(kLanes, 1);
            result.set_min(0, t);  // this tile only: the lane loop's index is the lane
            lesson::trips().clear();
            p.realize(result);
            // keys_per_chunk[lane][chunk-loop trip] = trips of the key loop in it
            std::vector<std::vector<int>> keys_per_chunk(kLanes);
            for (int lane = 0; lane < kLanes; lane++) keys_per_chunk[lane].resize(lesson::trips_of(lane, 1), 0);
            for (const lesson::Trip &trip : lesson::trips()) {
                if (trip.id == 0) keys_per_chunk[trip.outer].at(trip.middle)++;
            }
            std::set<std::vector<int>> distinct(keys_per_chunk.begin(), keys_per_chunk.end());
            (per_lane ? lane_tiles_diverging : uniform_tiles_diverging) += distinct.size() > 1;
            for (int lane = 0; lane < kLanes; lane++) {  // the plain C++ loop
                const int m = t * kLanes + lane;
                int want = -1;
                for (int k = std::max(m - window, 0); k <= m && m < num_keys; k++) want = std::max(want, values(k));
                wrong += result(lane, t) != want;
            }
            for (int lane : {0, 1, 8, 31}) {
                if (t != 4) break;
                std::printf("  %-8s lane %2d:", per_lane ? "per lane" : "uniform", lane);
                for (int k : keys_per_chunk[lane]) std::printf(" %2d", k);
                std::printf("\n");
            }
        }
    }
    std::printf("\nUniform: every lane runs the same chunks and 32 keys in each (the mask zeroes the rest). Per\n"
                "lane: every lane walks all the chunks, and in each runs its own number of keys. Tiles whose 32 lanes\n"
                "ran different loops: uniform %d of %d, per lane %d of %d.\n\n",
                uniform_tiles_diverging, tiles, lane_tiles_diverging, tiles);

    lesson::expect(!lesson::any_line_has(uniform_control, ".thread_id_x"),
                   "uniform form (CUDA): no loop bound and no `if` depends on the lane");
    lesson::expect(lesson::any_line_has(lesson::lines_with(stmt[1], "if ("), ".thread_id_x"),
                   "per-lane form (CUDA): an `if` on the lane's row wraps the key loops");
    lesson::expect(lesson::any_line_has(lane_control, ".thread_id_x") && !lesson::any_line_has(lane_chunk_loop, "W"),
                   "per-lane form (CUDA): loop bounds depend on the lane, and the chunk loop lost its window bound");
    lesson::expect(uniform_tiles_diverging == 0, "uniform form (CPU): in every tile all lanes ran the same loops");
    lesson::expect(lane_tiles_diverging == tiles, "per-lane form (CPU): in every tile the lanes ran different loops");
    lesson::expect(wrong == 0, "both forms compute every row's windowed max as the plain C++ loop does");
    return lesson::finish("lesson_05");
}
