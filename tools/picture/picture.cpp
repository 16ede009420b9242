#include "picture.h"

#include <algorithm>
#include <array>
#include <cassert>  // halide_image_io.h (Halide 21) uses assert without including it
#include <cctype>
#include <cstdio>
#include <map>

#include "HalideBuffer.h"
#include "halide_image_io.h"  // Halide's own PNG writer (Halide::ImageIO, over libpng)

namespace livebound::picture {

namespace {

std::vector<std::pair<std::string, Fn>> &registry() {
    static std::vector<std::pair<std::string, Fn>> r;
    return r;
}

using Rgb = std::array<int, 3>;
const Rgb kBackground = {255, 255, 255}, kInk = {35, 35, 35};
// Cell colours, in Cell order: outside (background), left alone, done, done beyond the bound.
const Rgb kCellColour[4] = {{255, 255, 255}, {222, 222, 222}, {31, 95, 168}, {230, 97, 1}};

// A 3 x 5 pixel font (rows top to bottom, '#' on), enough for titles, counts and legends.
const std::map<char, const char *> &glyphs() {
    static const std::map<char, const char *> g = {
        {'0', "####.##.##.####"}, {'1', ".#.##..#..#.###"}, {'2', "###..#####..###"}, {'3', "###..#.##..####"},
        {'4', "#.##.####..#..#"}, {'5', "####..###..####"}, {'6', "####..####.####"}, {'7', "###..#.#..#..#."},
        {'8', "####.#####.####"}, {'9', "####.####..####"}, {'A', ".#.#.#####.##.#"}, {'B', "##.#.###.#.###."},
        {'C', ".###..#..#...##"}, {'D', "##.#.##.##.###."}, {'E', "####..##.#..###"}, {'F', "####..##.#..#.."},
        {'G', ".###..#.##.#.##"}, {'H', "#.##.#####.##.#"}, {'I', "###.#..#..#.###"}, {'J', "..#..#..##.#.#."},
        {'K', "#.###.#..##.#.#"}, {'L', "#..#..#..#..###"}, {'M', "#.########.##.#"}, {'N', "##.#.##.##.##.#"},
        {'O', ".#.#.##.##.#.#."}, {'P', "##.#.###.#..#.."}, {'Q', ".#.#.##.###..##"}, {'R', "##.#.###.#.##.#"},
        {'S', ".###...#...###."}, {'T', "###.#..#..#..#."}, {'U', "#.##.##.##.####"}, {'V', "#.##.##.##.#.#."},
        {'W', "#.##.########.#"}, {'X', "#.##.#.#.#.##.#"}, {'Y', "#.##.#.#..#..#."}, {'Z', "###..#.#.#..###"},
        {' ', "..............."}, {':', "....#.....#...."}, {';', "....#.....#.#.."}, {'/', "..#..#.#.#..#.."}, {'-', "......###......"},
        {'=', "...###...###..."}, {'(', ".#.#..#..#...#."}, {')', ".#...#..#..#.#."}, {',', "..........#.#.."},
        {'.', ".............#."}, {'%', "#.#..#.#.#..#.#"}, {'+', "....#.###.#...."}, {'<', "..#.#.#...#...#"},
        {'>', "#...#...#.#.#.."}, {'_', "............###"}, {'?', "###..#.#.....#."}, {'|', ".#..#..#..#..#."},
        {'\'', ".#..#.........."},
    };
    return g;
}

class Canvas {
public:
    Canvas(int w, int h) : image_(w, h, 3) {
        for (int c = 0; c < 3; c++) image_.sliced(2, c).fill(static_cast<uint8_t>(kBackground[c]));
    }
    int width() const { return image_.width(); }
    void put(int x, int y, const Rgb &rgb) {
        if (x < 0 || y < 0 || x >= image_.width() || y >= image_.height()) return;
        for (int c = 0; c < 3; c++) image_(x, y, c) = static_cast<uint8_t>(rgb[c]);
    }
    void rect(int x, int y, int w, int h, const Rgb &rgb) {
        for (int j = 0; j < h; j++)
            for (int i = 0; i < w; i++) put(x + i, y + j, rgb);
    }
    // Text at (x, y), 2x-scaled glyphs, 8 px per character; lower case drawn as upper.
    void text(int x, int y, const std::string &s) {
        for (char ch : s) {
            const char key = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
            auto it = glyphs().find(key);
            const char *g = it == glyphs().end() ? glyphs().at('?') : it->second;
            for (int r = 0; r < 5; r++)
                for (int c = 0; c < 3; c++)
                    if (g[r * 3 + c] == '#') rect(x + 2 * c, y + 2 * r, 2, 2, kInk);
            x += 8;
        }
    }
    bool save(const std::string &path, std::string *error) {
        try {
            Halide::Tools::save_image(image_, path);
        } catch (...) {
            *error = "could not write " + path;
            return false;
        }
        return true;
    }

private:
    Halide::Runtime::Buffer<uint8_t> image_;
};

constexpr int kMargin = 16, kLine = 14, kMaxGridW = 560, kMaxGridH = 520, kGap = 3;

std::string with_commas(int64_t v) {
    std::string s = std::to_string(v), out;
    for (size_t i = 0; i < s.size(); i++) {
        if (i && (s.size() - i) % 3 == 0) out += ',';
        out += s[i];
    }
    return out;
}

// How a panel's cells map onto pixels: `per_px` cells per pixel block of `px` pixels.
struct Axis {
    int64_t cells, per_px, px, blocks;
    Axis(int64_t n, int max_px) : cells(n) {
        per_px = std::max<int64_t>(1, (n + max_px - 1) / max_px);
        blocks = (n + per_px - 1) / per_px;
        px = std::max<int64_t>(1, std::min<int64_t>(10, max_px / std::max<int64_t>(blocks, 1)));
    }
};

struct Layout {
    Axis x, y;
    int width, height;  // of the grid, gaps included
    Layout(const Panel &p)
        : x(p.cols, kMaxGridW - 4 * static_cast<int>(p.col_gap.size())),
          y(p.rows, kMaxGridH - kGap * static_cast<int>(p.group_start.size())) {
        width = static_cast<int>(x.blocks * x.px) + 4 * static_cast<int>(p.col_gap.size());
        height = static_cast<int>(y.blocks * y.px) + kGap * static_cast<int>(p.group_start.size());
    }
};

// Gaps before block `b` of an axis, for the given gap-start cells.
int gaps_before(int64_t block, int64_t per_px, const std::vector<int64_t> &starts, int gap) {
    int n = 0;
    for (int64_t s : starts) n += (s / per_px) <= block ? gap : 0;
    return n;
}

std::string counts_line(const Picture &p, const Panel &panel) {
    std::string line = p.done_is + " " + with_commas(panel.count(kDone));
    if (panel.count(kExtra)) line += " + " + with_commas(panel.count(kExtra));
    line += ", " + p.left_is + " " + with_commas(panel.count(kLeft));
    return line;
}

void draw_panel(Canvas &canvas, const Panel &panel, const Layout &l, int x0, int y0) {
    for (int64_t by = 0; by < l.y.blocks; by++) {
        const int py = y0 + static_cast<int>(by * l.y.px) + gaps_before(by, l.y.per_px, panel.group_start, kGap);
        for (int64_t bx = 0; bx < l.x.blocks; bx++) {
            const int px = x0 + static_cast<int>(bx * l.x.px) + gaps_before(bx, l.x.per_px, panel.col_gap, 4);
            // The block's colour: the mean of its cells' colours (partly written blocks shade).
            int64_t sum[3] = {0, 0, 0}, n = 0;
            for (int64_t r = by * l.y.per_px; r < std::min(panel.rows, (by + 1) * l.y.per_px); r++) {
                for (int64_t c = bx * l.x.per_px; c < std::min(panel.cols, (bx + 1) * l.x.per_px); c++) {
                    const Rgb &rgb = kCellColour[panel.cells[r * panel.cols + c] & 3];
                    for (int k = 0; k < 3; k++) sum[k] += rgb[k];
                    n++;
                }
            }
            const Rgb mean = {int(sum[0] / n), int(sum[1] / n), int(sum[2] / n)};
            // Cells of 3 px and more keep a 1 px white seam so single cells stay countable.
            const int seam = l.x.px >= 3 && l.x.per_px == 1 ? 1 : 0, seam_y = l.y.px >= 3 && l.y.per_px == 1 ? 1 : 0;
            canvas.rect(px, py, static_cast<int>(l.x.px) - seam, static_cast<int>(l.y.px) - seam_y, mean);
        }
    }
}

}  // namespace

int64_t Panel::count(Cell c) const { return std::count(cells.begin(), cells.end(), static_cast<uint8_t>(c)); }

bool register_picture(const char *kernel, Fn fn) {
    registry().emplace_back(kernel, fn);
    std::sort(registry().begin(), registry().end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    return true;
}

const std::vector<std::pair<std::string, Fn>> &registered() { return registry(); }

std::string check_bound_removes_only(const Picture &p) {
    if (p.panels.size() < 2) return "fewer than two panels";
    const Panel &bounded = p.panels.front(), &full = p.panels.back();
    if (bounded.rows != full.rows || bounded.cols != full.cols) return "the bounded and full-width panels differ in shape";
    for (int64_t i = 0; i < bounded.rows * bounded.cols; i++) {
        if (bounded.cells[i] == kDone && full.cells[i] != kDone) {
            return "the bounded form did work the full-width form did not, at row " + std::to_string(i / bounded.cols) +
                   ", column " + std::to_string(i % bounded.cols);
        }
    }
    return "";
}

std::string summary(const Picture &p) {
    std::string s;
    for (const Panel &panel : p.panels) s += "  " + panel.title + ": " + counts_line(p, panel) + "\n";
    return s;
}

bool save_png(const Picture &p, const std::string &path, std::string *error) {
    std::vector<Layout> layouts;
    int width = kMargin, grid_h = 0;
    for (const Panel &panel : p.panels) {
        layouts.emplace_back(panel);
        const int text_w = 8 * static_cast<int>(std::max(panel.title.size(), counts_line(p, panel).size()));
        width += std::max(layouts.back().width, text_w) + kMargin;
        grid_h = std::max(grid_h, layouts.back().height);
    }
    const std::string title = p.kernel + ": " + p.title;
    width = std::max(width, 2 * kMargin + 8 * static_cast<int>(std::max(title.size(), p.cols_are.size() + 4)));
    const int height = kMargin + 2 * kLine + kLine / 2 + 2 * kLine + grid_h + kLine + 3 * kLine + kMargin;
    Canvas canvas(width, height);
    int y = kMargin;
    canvas.text(kMargin, y, title);
    y += 2 * kLine + kLine / 2;
    int x = kMargin;
    for (size_t i = 0; i < p.panels.size(); i++) {
        const Panel &panel = p.panels[i];
        canvas.text(x, y, panel.title);
        canvas.text(x, y + kLine, counts_line(p, panel));
        draw_panel(canvas, panel, layouts[i], x, y + 2 * kLine + 4);
        const int text_w = 8 * static_cast<int>(std::max(panel.title.size(), counts_line(p, panel).size()));
        x += std::max(layouts[i].width, text_w) + kMargin;
    }
    y += 2 * kLine + 4 + grid_h + kLine;
    // Legend: the swatches, then what rows and columns are.
    int lx = kMargin;
    auto swatch = [&](Cell c, const std::string &label) {
        canvas.rect(lx, y, 10, 10, kCellColour[c]);
        if (c == kOutside) {  // outline the background swatch
            canvas.rect(lx, y, 10, 1, kInk), canvas.rect(lx, y + 9, 10, 1, kInk);
            canvas.rect(lx, y, 1, 10, kInk), canvas.rect(lx + 9, y, 1, 10, kInk);
        }
        canvas.text(lx + 14, y, label);
        lx += 14 + 8 * static_cast<int>(label.size()) + 16;
    };
    swatch(kDone, p.done_is);
    if (!p.extra_is.empty()) swatch(kExtra, p.extra_is);
    swatch(kLeft, p.left_is);
    swatch(kOutside, "not in the request");
    canvas.text(kMargin, y + kLine, p.rows_are);
    canvas.text(kMargin, y + 2 * kLine, p.cols_are);
    return canvas.save(path, error);
}


bool save_bar_chart(const std::string &title, const std::string &unit, const std::vector<BarGroup> &groups,
                    const std::string &path, std::string *error) {
    // Colours by kind: hand (grey), candidate (blue), best (green), autoscheduler (orange),
    // error (red, a short stub: no time).
    const Rgb colour[5] = {{120, 120, 120}, {31, 95, 168}, {26, 152, 80}, {230, 97, 1}, {200, 30, 30}};
    constexpr int kBarH = 12, kBarGap = 4, kBarMaxW = 420, kGroupGap = 18;
    size_t label_chars = 0;
    int height = kMargin + 3 * kLine + kMargin;
    for (const BarGroup &g : groups) {
        height += kLine + static_cast<int>(g.bars.size()) * (kBarH + kBarGap) + kGroupGap;
        for (const Bar &b : g.bars) label_chars = std::max(label_chars, b.label.size());
    }
    label_chars = std::min<size_t>(label_chars, 72);
    const int label_w = 8 * static_cast<int>(label_chars) + 8;
    const int width = std::max<int>(kMargin * 2 + label_w + kBarMaxW + 120, 8 * static_cast<int>(title.size()) + 2 * kMargin);
    Canvas canvas(width, height);
    int y = kMargin;
    canvas.text(kMargin, y, title);
    y += kLine + 4;
    const char *names[5] = {"hand schedule", "candidate", "best", "autoscheduler", "error (no time)"};
    int x = kMargin;
    for (int k = 0; k < 5; k++) {
        canvas.rect(x, y, 10, 10, colour[k]);
        canvas.text(x + 14, y, names[k]);
        x += 14 + 8 * static_cast<int>(std::string(names[k]).size()) + 16;
    }
    y += 2 * kLine;
    for (const BarGroup &g : groups) {
        double max_v = 0;
        for (const Bar &b : g.bars) {
            if (b.kind != kBarError) max_v = std::max(max_v, b.value);
        }
        canvas.text(kMargin, y, g.title + " (" + unit + ")");
        y += kLine;
        for (const Bar &b : g.bars) {
            canvas.text(kMargin, y, b.label.substr(0, label_chars));
            const int bx = kMargin + label_w;
            int w = 6;
            std::string value = "error";
            if (b.kind != kBarError && max_v > 0) {
                w = std::max(1, static_cast<int>(b.value / max_v * kBarMaxW));
                char buf[32];
                std::snprintf(buf, sizeof buf, "%.4g", b.value);
                value = buf;
            }
            canvas.rect(bx, y, w, kBarH - 2, colour[b.kind]);
            canvas.text(bx + w + 6, y, value);
            y += kBarH + kBarGap;
        }
        y += kGroupGap;
    }
    return canvas.save(path, error);
}

}  // namespace livebound::picture
