// `livebound picture k7|k8`: extend attention's (query tile x key chunk) pairs, visited or
// skipped, for an embedded windowed, causal, ragged chunked-prefill batch.
//
// The cells come from the chunk-map instrument (tools/instruments/): its chunk loops carry
// the kernels' own predicates (generators/common/extend_attention_tiles.h), so Halide
// derives the same loop bounds for it as for the kernels, and it records each chunk its
// loops run. Tiles are the tensor-core kernels' at head dim 128: 16 query rows by 32 keys.
// K7 adds a panel with SGLang's hand-written bounds (stage 1 walks every prefix chunk of a
// live tile; stage 2 starts at floor(max(m0 - W, 0) / BLOCK_N)); its orange cells are the
// chunks that bound visits and the derived one skips.
#include <algorithm>
#include <string>
#include <vector>

#include "HalideBuffer.h"
#include "lb_k7_cpu_map_bounded.h"
#include "lb_k7_cpu_map_full.h"
#include "lb_k8_cpu_map_bounded.h"
#include "lb_k8_cpu_map_full.h"
#include "picture.h"

namespace {

using livebound::picture::Cell;
using livebound::picture::Panel;
using livebound::picture::Picture;
using Halide::Runtime::Buffer;

constexpr int kBlockM = 16, kBlockN = 32;  // lb_k*_cpu_map_* (tools/CMakeLists.txt)
constexpr int kWindow = 128;

// The batch: request b has prefix[b] cached keys and extend[b] new tokens; the grid spans
// max_len_extend rows of tiles for every request, as the kernels' grid does.
struct Batch {
    std::vector<int32_t> prefix = {2048, 384, 0, 1024};
    std::vector<int32_t> extend = {192, 256, 96, 32};
    int32_t max_len_extend = 256;
    int bs() const { return static_cast<int>(prefix.size()); }
    int tiles() const { return (max_len_extend + kBlockM - 1) / kBlockM; }
};

int chunks(int64_t keys) { return static_cast<int>((keys + kBlockN - 1) / kBlockN); }

using MapFn = int (*)(void *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, bool, int32_t, int32_t, bool,
                      int32_t, int32_t, halide_buffer_t *);

// visited(chunk, stage, qt, b) from one instrument; K8's list holds prefix and extend keys.
bool run_map(MapFn fn, const Batch &batch, bool unified, Buffer<uint8_t, 4> *visited, std::string *error) {
    Buffer<int32_t, 1> qo(batch.bs() + 1), kv(batch.bs() + 1), prefix_lens(batch.bs());
    qo(0) = kv(0) = 0;
    for (int b = 0; b < batch.bs(); b++) {
        qo(b + 1) = qo(b) + batch.extend[b];
        kv(b + 1) = kv(b) + batch.prefix[b] + (unified ? batch.extend[b] : 0);
        prefix_lens(b) = batch.prefix[b];
    }
    const int32_t num_tokens = qo(batch.bs()), num_indices = kv(batch.bs());
    const int chunk_extent = std::max(chunks(num_indices), chunks(int64_t(batch.tiles()) * kBlockM));
    *visited = Buffer<uint8_t, 4>(chunk_extent, 2, batch.tiles(), batch.bs());
    const int rc = fn(nullptr, qo, kv, prefix_lens, /*is_causal=*/true, kWindow, batch.max_len_extend,
                      /*has_mask=*/false, num_tokens, num_indices, *visited);
    if (rc != 0) *error = "the chunk-map instrument failed with Halide error " + std::to_string(rc);
    return rc == 0;
}

// A panel over every request's tiles: list chunks, then (K7) a gap and the extend chunks.
Panel make_panel(const std::string &title, const Batch &batch, bool unified) {
    int list_cols = 0;
    for (int b = 0; b < batch.bs(); b++) list_cols = std::max(list_cols, chunks(batch.prefix[b] + (unified ? batch.extend[b] : 0)));
    const int extend_cols = unified ? 0 : chunks(batch.max_len_extend);
    Panel p(title, int64_t(batch.bs()) * batch.tiles(), list_cols + extend_cols);
    for (int b = 1; b < batch.bs(); b++) p.group_start.push_back(int64_t(b) * batch.tiles());
    if (!unified) p.col_gap.push_back(list_cols);
    return p;
}

// Fills the panel from a map: cells inside the request's keys are done or left.
void fill(Panel *p, const Buffer<uint8_t, 4> &visited, const Batch &batch, bool unified) {
    const int list_cols = static_cast<int>(p->cols) - (unified ? 0 : chunks(batch.max_len_extend));
    for (int b = 0; b < batch.bs(); b++) {
        const int list_chunks = chunks(batch.prefix[b] + (unified ? batch.extend[b] : 0));
        for (int qt = 0; qt < batch.tiles(); qt++) {
            const int64_t row = int64_t(b) * batch.tiles() + qt;
            for (int c = 0; c < list_chunks; c++) p->at(row, c) = visited(c, 0, qt, b) ? Cell::kDone : Cell::kLeft;
            if (unified) continue;
            for (int c = 0; c < chunks(batch.extend[b]); c++) {
                p->at(row, list_cols + c) = visited(c, 1, qt, b) ? Cell::kDone : Cell::kLeft;
            }
        }
    }
}

// SGLang's two-stage kernel: a live tile (m0 < E) walks every prefix chunk; its extend loop
// runs from floor(max(m0 - W, 0) / BLOCK_N) to the causal end min(E, m0 + BLOCK_M).
// Cells the derived bound skips are kExtra; a cell the derived bound visits and SGLang's
// does not would be a bug in one of them and is reported.
bool fill_sglang(Panel *p, const Buffer<uint8_t, 4> &derived, const Batch &batch, std::string *error) {
    const int list_cols = static_cast<int>(p->cols) - chunks(batch.max_len_extend);
    for (int b = 0; b < batch.bs(); b++) {
        const int E = batch.extend[b];
        for (int qt = 0; qt < batch.tiles(); qt++) {
            const int64_t row = int64_t(b) * batch.tiles() + qt;
            const int m0 = qt * kBlockM;
            const bool live = m0 < E;
            const int extend_start = std::max(m0 - kWindow, 0) / kBlockN, extend_end = std::min(E, m0 + kBlockM);
            auto mark = [&](int col, bool sglang, bool ours) {
                if (ours && !sglang) {
                    *error = "the derived bound visits a chunk SGLang's skips (request " + std::to_string(b) + ", tile " +
                             std::to_string(qt) + ")";
                    return false;
                }
                p->at(row, col) = !sglang ? Cell::kLeft : ours ? Cell::kDone : Cell::kExtra;
                return true;
            };
            for (int c = 0; c < chunks(batch.prefix[b]); c++) {
                if (!mark(c, live, derived(c, 0, qt, b))) return false;
            }
            for (int c = 0; c < chunks(E); c++) {
                const bool sglang = live && c >= extend_start && c * kBlockN < extend_end;
                if (!mark(list_cols + c, sglang, derived(c, 1, qt, b))) return false;
            }
        }
    }
    return true;
}

std::string describe(const Batch &batch) {
    std::string s = "windowed causal prefill with cache, W " + std::to_string(kWindow) + ", requests (prefix+new):";
    for (int b = 0; b < batch.bs(); b++) s += " " + std::to_string(batch.prefix[b]) + "+" + std::to_string(batch.extend[b]);
    return s;
}

bool attention_picture(Picture *p, bool unified, std::string *error) {
    const Batch batch;
    Buffer<uint8_t, 4> bounded, full;
    if (!run_map(unified ? MapFn(lb_k8_cpu_map_bounded) : MapFn(lb_k7_cpu_map_bounded), batch, unified, &bounded, error) ||
        !run_map(unified ? MapFn(lb_k8_cpu_map_full) : MapFn(lb_k7_cpu_map_full), batch, unified, &full, error)) {
        return false;
    }
    p->kernel = unified ? "K8" : "K7";
    p->title = describe(batch);
    p->rows_are = "rows: query tiles of 16 rows, " + std::to_string(batch.tiles()) + " per request (the grid spans max_len_extend " +
                  std::to_string(batch.max_len_extend) + ")";
    p->cols_are = unified ? "columns: chunks of 32 keys of each request's unified list (prefix, then new keys)"
                          : "columns: chunks of 32 keys: the cached prefix | the new (extend) keys";
    p->done_is = "visited";
    p->left_is = "skipped";
    p->panels.push_back(make_panel("bounded: the loops Halide derived", batch, unified));
    fill(&p->panels.back(), bounded, batch, unified);
    if (!unified) {
        p->extra_is = "visited beyond the derived bound";
        p->panels.push_back(make_panel("SGLang's hand-written bounds", batch, unified));
        if (!fill_sglang(&p->panels.back(), bounded, batch, error)) return false;
    }
    p->panels.push_back(make_panel("full width: the bound off", batch, unified));
    fill(&p->panels.back(), full, batch, unified);
    return true;
}

bool k7_picture(Picture *p, std::string *error) { return attention_picture(p, false, error); }
bool k8_picture(Picture *p, std::string *error) { return attention_picture(p, true, error); }

const bool registered_k7 = livebound::picture::register_picture("K7", k7_picture);
const bool registered_k8 = livebound::picture::register_picture("K8", k8_picture);

}  // namespace
