// `livebound picture`: PNG pictures of the work the derived bounds remove, made from real
// runs. Each kernel contributes one picture (registered at start-up, like the demos):
//   K1-K6: the output cells a CPU run of the bounded and of the full-width variant wrote,
//          found by filling the outputs with a poison value first (tools/demo/*_demo.cpp);
//   K7-K8: the (query tile x key chunk) pairs the chunk loops visit, recorded by the chunk-map
//          instrument whose loops Halide derives from the kernels' own predicates
//          (tools/instruments/), bounded next to full width, and for K7 SGLang's hand bound.
// The counts printed on the picture and on stdout are counted from those cells.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace livebound::picture {

// What happened to one cell (one output element, or one tile-by-chunk pair).
enum Cell : uint8_t {
    kOutside = 0,  // not part of the request (past its keys); drawn as background
    kLeft = 1,     // in the grid, and this form left it alone (not written / not visited)
    kDone = 2,     // written / visited
    kExtra = 3,    // done by this form although the derived bound skips it (SGLang's bound)
};

// One grid of cells, rows x cols, row-major; rows are grouped by request.
struct Panel {
    std::string title;                // e.g. "bounded (derived)"
    int64_t rows = 0, cols = 0;
    std::vector<uint8_t> cells;       // [rows, cols] Cell
    std::vector<int64_t> group_start; // first row of each request after the first (a gap is drawn)
    std::vector<int64_t> col_gap;     // columns before which a gap is drawn (K7: prefix | extend)

    Panel(std::string t, int64_t r, int64_t c) : title(std::move(t)), rows(r), cols(c), cells(r * c, kOutside) {}
    uint8_t &at(int64_t r, int64_t c) { return cells[r * cols + c]; }
    int64_t count(Cell c) const;
};

struct Picture {
    std::string kernel;    // "K1"
    std::string title;     // the workload, one line
    std::string rows_are;  // e.g. "rows: 64 requests"
    std::string cols_are;  // e.g. "columns: page-table columns (131072)"
    std::string done_is = "written", left_is = "left alone", extra_is;
    std::vector<Panel> panels;
};

// A panel of an output's cells, [rows, cols] with the given row stride: done where the run
// changed the poison it was filled with, left where it did not.
template <typename T>
Panel written_panel(std::string title, const std::vector<T> &out, int64_t rows, int64_t cols, int64_t row_stride,
                    T poison) {
    Panel p(std::move(title), rows, cols);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < cols; c++) p.at(r, c) = out[r * row_stride + c] != poison ? kDone : kLeft;
    }
    return p;
}

// A panel over a grid of (request, position) pairs, `width` positions per request, for the
// families whose output packs the requests' tokens row after row: done where request b has a
// token at the position and the run wrote its output row (`row_written(row)`), left at the
// grid's positions past the request's length (no output row exists for them).
template <typename RowWritten>
Panel token_panel(std::string title, const std::vector<int64_t> &lengths, int64_t width, RowWritten row_written) {
    Panel p(std::move(title), static_cast<int64_t>(lengths.size()), width);
    int64_t first_row = 0;
    for (size_t b = 0; b < lengths.size(); b++) {
        for (int64_t pos = 0; pos < width; pos++) {
            p.at(b, pos) = pos < lengths[b] && row_written(first_row + pos) ? kDone : kLeft;
        }
        first_row += lengths[b];
    }
    return p;
}

// A horizontal bar chart of measured times (autotune/picture.py draws each experiment's with
// `livebound chart`): one group of bars per workload, one bar per schedule.
enum BarKind : int { kBarHand = 0, kBarCandidate = 1, kBarBest = 2, kBarAutoscheduler = 3, kBarError = 4 };
struct Bar {
    std::string label;  // the schedule (its knobs)
    double value = 0;   // the time; ignored for kBarError
    BarKind kind = kBarCandidate;
};
struct BarGroup {
    std::string title;  // the workload
    std::vector<Bar> bars;
};
bool save_bar_chart(const std::string &title, const std::string &unit, const std::vector<BarGroup> &groups,
                    const std::string &path, std::string *error);

// Fills *p from real runs; false with *error when a run failed.
using Fn = bool (*)(Picture *p, std::string *error);
bool register_picture(const char *kernel, Fn fn);
const std::vector<std::pair<std::string, Fn>> &registered();

// Draws the panels side by side, with titles, counts and a legend, into a PNG file.
bool save_png(const Picture &p, const std::string &path, std::string *error);

// "" when every cell the first panel (the bounded form) marks done is done in the last one
// (the full-width form): the bound only removes work. Else
// what breaks that.
std::string check_bound_removes_only(const Picture &p);

// The picture's counts as text (one line per panel), for stdout.
std::string summary(const Picture &p);

}  // namespace livebound::picture
