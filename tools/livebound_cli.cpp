// `livebound`: the main job, and a window onto what the compiler derived.
//
//   livebound demo [--json]                      every kernel family on its embedded workload
//   livebound explain [cpu|cuda] [bounded|full]  K1's page-table loop nest as Halide lowered it
//   livebound explain k7|k8 [cpu|cuda] [bounded|full]  the attention chunk loops and their bounds
//   livebound explain k2|k3|k4|k5|k6 [cpu|cuda] [bounded|full]  the family's loop skeleton
//   livebound explain --where k1..k8          every variant's lowered statements and HTML views, by path
//   livebound picture k1..k8|all [--out PATH]  a PNG of the work the bounds remove (tools/picture/)
//   livebound chart SPEC [--out PATH]         a bar chart of measured times (autotune/picture.py)
//
// `demo` runs each family's demo (tools/demo/<family>_demo.cpp): bounded and full-width
// forms on the CPU and, when a device is present, on CUDA; checks every result against the
// plain C++ reference; prints how much of the full width each form wrote, and the times.
// `explain` prints K1's page-table loop nest from the statement files the build writes
// next to each variant, marking the loop bounds Halide derived from the live-length
// predicate.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "demo/demo.h"
#include "livebound/livebound.hpp"
#include "picture/picture.h"

namespace {

using livebound::demo::Row;

std::string json_escape(const std::string &s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

int demo(bool json) {
    livebound::demo::Context ctx;
    ctx.cuda = lb_cuda_device_available(0) != 0;
    std::vector<Row> rows;
    std::string note;
    for (const auto &[kernel, fn] : livebound::demo::registered()) fn(ctx, &rows, &note);
    bool all_ok = true;
    for (const auto &r : rows) all_ok &= r.mismatch.empty();
    if (json) {
        std::printf("{\n  \"cuda\": %s,\n  \"ok\": %s,\n  \"runs\": [\n", ctx.cuda ? "true" : "false",
                    all_ok ? "true" : "false");
        for (size_t i = 0; i < rows.size(); i++) {
            const Row &r = rows[i];
            std::printf("    {\"kernel\": \"%s\", \"batch\": \"%s\", \"device\": \"%s\", \"variant\": \"%s\", "
                        "\"matches_reference\": %s, \"written\": %lld, \"full_width\": %lld, \"unit\": \"%s\", "
                        "\"time_us\": %.2f",
                        r.kernel.c_str(), json_escape(r.batch).c_str(), r.device.c_str(), r.variant.c_str(),
                        r.mismatch.empty() ? "true" : "false", (long long)r.written, (long long)r.full_width,
                        r.unit.c_str(), r.time_us);
            if (r.eager_us >= 0) std::printf(", \"eager_us\": %.2f", r.eager_us);
            std::printf("}%s\n", i + 1 < rows.size() ? "," : "");
        }
        std::printf("  ]\n}\n");
        return all_ok ? 0 : 1;
    }
    std::printf("livebound demo: every kernel on its embedded workload\n");
    std::printf("  bounded = loop bounds Halide derived from the live-length predicates; "
                "full-width = same algorithm, bound off\n");
    std::printf("  CUDA: %s\n\n", ctx.cuda ? "device 0 present (time: CUDA-graph replay, median per call)"
                                           : "no device: CPU only");
    std::printf("%-4s %-36s %-7s %-11s %-10s %28s %11s %11s\n", "", "batch", "device", "variant", "reference",
                "written / full width", "time (us)", "eager (us)");
    for (const Row &r : rows) {
        char written[64], eager[32] = "-";
        std::snprintf(written, sizeof written, "%lld / %lld %s", (long long)r.written, (long long)r.full_width,
                      r.unit.c_str());
        if (r.eager_us >= 0) std::snprintf(eager, sizeof eager, "%.2f", r.eager_us);
        std::printf("%-4s %-36s %-7s %-11s %-10s %28s %11.2f %11s\n", r.kernel.c_str(), r.batch.c_str(),
                    r.device.c_str(), r.variant.c_str(), r.mismatch.empty() ? "match" : "MISMATCH", written,
                    r.time_us, eager);
        if (!r.mismatch.empty()) std::printf("     first difference: %s\n", r.mismatch.c_str());
    }
    if (!note.empty()) std::printf("\n%s", note.c_str());
    std::printf("\n%s\n", all_ok ? "all results match the reference; bounded runs left every dead element untouched"
                                 : "SOME RESULTS DIFFER FROM THE REFERENCE");
    return all_ok ? 0 : 1;
}

// Prints the lines of K1's page-table loop nest from the variant's lowered statement.
int explain(const std::string &target, const std::string &form) {
    const std::string variant = "lb_k1_" + target + "_" + form + "_noswa_s64_i64";
    const std::string path = std::string(LIVEBOUND_STMT_DIR) + "/" + variant +
                             (target == "cuda" ? ".conceptual.stmt" : ".stmt");
    FILE *f = std::fopen(path.c_str(), "r");
    if (!f) {
        std::fprintf(stderr, "livebound explain: cannot read %s (run from the build that made it)\n", path.c_str());
        return 1;
    }
    std::printf("K1 page-table loop nest of %s (%s)\n", variant.c_str(), path.c_str());
    // A tuned batch alternate (schedules/decode_metadata/tuned/) serves the larger batches.
    const std::string alternate = std::string(LIVEBOUND_STMT_DIR) + "/" + variant + "__b32.conceptual.stmt";
    if (FILE *a = target == "cuda" ? std::fopen(alternate.c_str(), "r") : nullptr) {
        std::fclose(a);
        std::printf("(calls below 32 requests; from 32 the runtime runs %s__b32: %s)\n", variant.c_str(),
                    alternate.c_str());
    }
    std::printf("lines marked >> hold a loop bound Halide derived from `column < live_pages(b)`\n\n");
    // CPU: the parallel task body; CUDA: the one kernel (the page table's grid, with the prefix
    // sums riding on it: its loops are named after whichever stage comes first).
    // (The CPU task loses its `_rebased` suffix when page_table's min is the constant 0.)
    const std::string start = target == "cuda" ? "gpu_block<CUDA> (" : "par_for_page_table_s0_b";
    char line[1 << 16];
    bool inside = false;
    int depth = 0, printed = 0;
    while (std::fgets(line, sizeof line, f) && printed < 200) {
        std::string text(line);
        if (!inside && text.find(start) != std::string::npos) inside = true;
        if (!inside) continue;
        if (text.find("load_typed_struct_member") != std::string::npos || text.find("closure_prototype") != std::string::npos) continue;
        for (char c : text) depth += (c == '{') - (c == '}');
        bool derived = text.find("new_max") != std::string::npos && text.find("seq_lens") != std::string::npos;
        std::printf("%s %s", derived ? ">>" : "  ", text.size() > 240 ? (text.substr(0, 237) + "...\n").c_str() : text.c_str());
        printed++;
        if (depth <= 0) break;
    }
    std::fclose(f);
    return 0;
}

// Prints the lines of statement file `f` that contain one of `keep` (at most `max_lines`),
// skipping the PTX of a CUDA .stmt, and marks with >> the lets and loops of a bound Halide
// trimmed (new_min / new_max). Returns whether any line was so marked.
bool print_marked_lines(FILE *f, const std::vector<const char *> &keep, int max_lines) {
    char line[1 << 16];
    int printed = 0;
    bool any_derived = false;
    while (std::fgets(line, sizeof line, f) && printed < max_lines) {
        std::string text(line);
        if (text.find("// ") == 0 || text.find("\t") == 0) continue;  // PTX lines of a CUDA .stmt
        bool show = false;
        for (const char *k : keep) show |= text.find(k) != std::string::npos;
        if (!show) continue;
        const bool derived = text.find(".new_min") != std::string::npos || text.find(".new_max") != std::string::npos;
        std::printf("%s %s", derived ? ">>" : "  ", text.size() > 200 ? (text.substr(0, 197) + "...\n").c_str() : text.c_str());
        printed++;
        any_derived |= derived;
    }
    return any_derived;
}

// K7 / K8: the attention loop nest is long (the unrolled head dimension), so print only the
// lines that carry its structure: the grid (CUDA), the state's compute condition, the chunk
// and key loops of each stage and the lets of their bounds (>> = derived by Halide from the
// window / causal / live-tile predicates: new_min / new_max).
int explain_attention(const std::string &kernel, const std::string &target, const std::string &form) {
    const std::string variant = "lb_" + kernel + "_" + target + "_" + form + "_bf16_d128_128" +
                                (target == "cuda" && kernel == "k7" ? "_nolse" : "");
    const std::string path = std::string(LIVEBOUND_STMT_DIR) + "/" + variant +
                             (target == "cuda" ? ".conceptual.stmt" : ".stmt");
    FILE *f = std::fopen(path.c_str(), "r");
    if (!f) {
        std::fprintf(stderr, "livebound explain: cannot read %s (run from the build that made it)\n", path.c_str());
        return 1;
    }
    std::printf("%s chunk loops of %s (%s)\n", kernel == "k7" ? "K7" : "K8", variant.c_str(), path.c_str());
    std::printf("state.s1 = the %s stage, state.s2 = the extend chunk (K7); rp/re$y = chunk, $x = key in chunk;\n"
                "lines marked >> are loop bounds Halide derived from the visibility predicates\n\n",
                kernel == "k7" ? "paged prefix" : "unified list");
    print_marked_lines(f,
                       {"gpu_block", "gpu_thread", "state.used", "for (state.s", "rp$y.new_", "re$y.new_", "rp_y.new_",
                        "re_y.new_", "rp$x.new_", "re$x.new_", "if (((state.s1.qt*32) + 1)", "ro$y.block_id_y*32) + 1)"},
                       60);
    std::fclose(f);
    return 0;
}

// The statement files of every variant of `kernel` ("k1".."k8") the build wrote, sorted.
std::vector<std::string> statement_files(const std::string &kernel) {
    std::vector<std::string> files;
    const std::string prefix = "lb_" + kernel + "_";
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(LIVEBOUND_STMT_DIR, ec)) {
        const std::string name = entry.path().filename().string();
        auto ends_with = [&](const char *suffix) {
            const size_t n = std::strlen(suffix);
            return name.size() > n && name.compare(name.size() - n, n, suffix) == 0;
        };
        if ((ends_with(".stmt") || ends_with(".stmt.html")) && name.compare(0, prefix.size(), prefix) == 0) {
            files.push_back(entry.path().string());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

// `explain --where k`: where Halide's inspectable outputs of each variant of kernel k are:
// the lowered statement (.stmt; for CUDA variants with the device code), the conceptual
// statement (.conceptual.stmt: the loop nest before host/device code is split) and, in a
// build configured with -DLIVEBOUND_STMT_HTML=ON, the HTML view of the lowered statement
// (.stmt.html: loops beside device code and assembly).
int explain_where(const std::string &kernel) {
    const std::vector<std::string> files = statement_files(kernel);
    if (files.empty()) {
        std::fprintf(stderr, "livebound explain --where: no statements for %s in %s (k1..k8; run from the build)\n",
                     kernel.c_str(), LIVEBOUND_STMT_DIR);
        return 1;
    }
    std::printf("%s: %zu statement files in %s (.stmt and .conceptual.stmt per variant; .stmt.html with\n"
                "-DLIVEBOUND_STMT_HTML=ON, except for the tensor-core variants: Halide 21's HTML printer fails on\n"
                "their device code)\n",
                kernel.c_str(), files.size(), LIVEBOUND_STMT_DIR);
    for (const auto &f : files) std::printf("  %s\n", f.c_str());
    return 0;
}

// K2-K6: the loop skeleton of the family's first variant for the target and form: every
// loop (for / gpu_block / gpu_thread) and the lets of trimmed bounds (>> = new_min / new_max,
// a bound Halide derived from the family's live-length predicates).
int explain_skeleton(const std::string &kernel, const std::string &target, const std::string &form) {
    const std::string want = "lb_" + kernel + "_" + target + "_" + form + "_";
    const std::string suffix = target == "cuda" ? ".conceptual.stmt" : ".stmt";
    std::string path;
    for (const auto &f : statement_files(kernel)) {
        const std::string name = std::filesystem::path(f).filename().string();
        const bool right_kind = name.size() > suffix.size() &&
                                name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
                                (target == "cuda" || name.find(".conceptual.") == std::string::npos);
        if (right_kind && name.compare(0, want.size(), want) == 0) {
            path = f;
            break;
        }
    }
    FILE *f = path.empty() ? nullptr : std::fopen(path.c_str(), "r");
    if (!f) {
        std::fprintf(stderr, "livebound explain: no %s*%s in %s (run from the build that made it)\n", want.c_str(),
                     suffix.c_str(), LIVEBOUND_STMT_DIR);
        return 1;
    }
    std::printf("%s loop skeleton of %s\n", kernel.c_str(), path.c_str());
    std::printf("every loop, and (>>) the bounds Halide derived from the live-length predicates (new_min / new_max)\n\n");
    const bool any_derived = print_marked_lines(f, {"for (", "gpu_block", "gpu_thread", ".new_min", ".new_max"}, 80);
    std::fclose(f);
    if (!any_derived) {
        std::printf("\nno loop of this variant was trimmed: its loops span the outputs' extents, and the live-length\n"
                    "predicate stays a select in the store (see the family's schedule for why)\n");
    }
    return 0;
}

// `picture k`: kernel k's picture, from real CPU runs (tools/picture/picture.h), to `out`
// (default livebound-<k>.png); `picture all`: every kernel's, into the directory `out`
// (default .). Prints each picture's counts and where it went.
int picture(const std::string &which, const std::string &out) {
    int made = 0;
    for (const auto &[kernel, fn] : livebound::picture::registered()) {
        std::string lower = kernel;
        for (char &c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (which != "all" && which != lower) continue;
        livebound::picture::Picture p;
        std::string error;
        if (!fn(&p, &error)) {
            std::fprintf(stderr, "livebound picture %s: %s\n", lower.c_str(), error.c_str());
            return 1;
        }
        error = livebound::picture::check_bound_removes_only(p);
        if (!error.empty()) {
            std::fprintf(stderr, "livebound picture %s: %s\n", lower.c_str(), error.c_str());
            return 1;
        }
        std::string path = "livebound-" + lower + ".png";
        if (which == "all" && !out.empty()) path = (std::filesystem::path(out) / path).string();
        if (which != "all" && !out.empty()) path = out;
        if (!livebound::picture::save_png(p, path, &error)) {
            std::fprintf(stderr, "livebound picture %s: %s\n", lower.c_str(), error.c_str());
            return 1;
        }
        std::printf("%s: %s\n%swrote %s\n\n", p.kernel.c_str(), p.title.c_str(), livebound::picture::summary(p).c_str(),
                    path.c_str());
        made++;
    }
    if (made == 0) {
        std::fprintf(stderr, "livebound picture: no picture '%s' in this build (k1..k8 or all)\n", which.c_str());
        return 2;
    }
    return 0;
}

}  // namespace

// `chart SPEC`: a bar chart of measured times (autotune/picture.py writes SPEC): tab-separated
// lines "title\t<text>", "unit\t<text>", "group\t<workload>", then its bars as
// "bar\t<kind 0 hand | 1 candidate | 2 best | 3 autoscheduler | 4 error>\t<value>\t<label>".
int chart(const std::string &spec, const std::string &out) {
    std::FILE *f = std::fopen(spec.c_str(), "r");
    if (f == nullptr) {
        std::fprintf(stderr, "livebound chart: cannot read %s\n", spec.c_str());
        return 1;
    }
    std::string title, unit = "us";
    std::vector<livebound::picture::BarGroup> groups;
    char line[4096];
    while (std::fgets(line, sizeof line, f)) {
        std::vector<std::string> fields(1);
        for (const char *c = line; *c && *c != '\n'; c++) {
            if (*c == '\t') {
                fields.emplace_back();
            } else {
                fields.back() += *c;
            }
        }
        if (fields[0] == "title" && fields.size() > 1) title = fields[1];
        if (fields[0] == "unit" && fields.size() > 1) unit = fields[1];
        if (fields[0] == "group" && fields.size() > 1) groups.push_back({fields[1], {}});
        if (fields[0] == "bar" && fields.size() > 3 && !groups.empty()) {
            const int kind = std::atoi(fields[1].c_str());
            groups.back().bars.push_back({fields[3], std::atof(fields[2].c_str()),
                                          static_cast<livebound::picture::BarKind>(std::clamp(kind, 0, 4))});
        }
    }
    std::fclose(f);
    std::string error;
    if (!livebound::picture::save_bar_chart(title, unit, groups, out, &error)) {
        std::fprintf(stderr, "livebound chart: %s\n", error.c_str());
        return 1;
    }
    std::printf("wrote %s\n", out.c_str());
    return 0;
}

// `livebound list [word...]`: every variant this build made, with the facts it was generated
// from (its generator and params, from the manifest through CMake:
// generated/livebound/variant_list.inc), the rows whose text holds every word.
struct VariantRow {
    const char *name, *generator_target, *generator, *kind, *params;
};
const VariantRow kVariantRows[] = {
#define LB_VARIANT_ROW(name, generator_target, generator, kind, params) {name, generator_target, generator, kind, params},
#include "livebound/variant_list.inc"
#undef LB_VARIANT_ROW
    {nullptr, nullptr, nullptr, nullptr, nullptr},  // end (a build may list none)
};

int list_variants(const std::vector<std::string> &words) {
    size_t shown = 0;
    std::printf("variant\tgenerator\tkind\tparams\n");
    size_t total = 0;
    for (const VariantRow &r : kVariantRows) {
        if (!r.name) break;
        total++;
        const std::string text = std::string(r.name) + " " + r.generator + " " + r.kind + " " + r.params;
        bool all = true;
        for (const std::string &w : words) all = all && text.find(w) != std::string::npos;
        if (!all) continue;
        std::printf("%s\t%s\t%s\t%s\n", r.name, r.generator, r.kind, r.params);
        shown++;
    }
    std::printf("%zu of %zu variants\n", shown, total);
    return shown ? 0 : 1;
}

int main(int argc, char **argv) {
    std::string cmd = argc > 1 ? argv[1] : "";
    bool json = false;
    for (int i = 2; i < argc; i++) json |= std::strcmp(argv[i], "--json") == 0;
    try {
        if (cmd == "demo") return demo(json);
        if (cmd == "list") return list_variants(std::vector<std::string>(argv + 2, argv + argc));
        if (cmd == "explain") {
            std::string target = "cpu", form = "bounded", kernel = "k1";
            bool where = false;
            for (int i = 2; i < argc; i++) {
                std::string a = argv[i];
                if (a == "cpu" || a == "cuda") {
                    target = a;
                } else if (a == "bounded" || a == "full") {
                    form = a;
                } else if (a.size() == 2 && a[0] == 'k' && a[1] >= '1' && a[1] <= '8') {
                    kernel = a;
                } else if (a == "--where") {
                    where = true;
                } else {
                    std::fprintf(stderr, "livebound explain: unknown argument '%s' (k1..k8, cpu|cuda, bounded|full, --where)\n",
                                 a.c_str());
                    return 2;
                }
            }
            if (where) return explain_where(kernel);
            if (kernel == "k7" || kernel == "k8") return explain_attention(kernel, target, form);
            if (kernel != "k1") return explain_skeleton(kernel, target, form);
            return explain(target, form);
        }
        if (cmd == "chart" && argc >= 3) {
            std::string out = "chart.png";
            for (int i = 3; i < argc; i++) {
                if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
                    out = argv[++i];
                } else {
                    std::fprintf(stderr, "livebound chart: unknown argument '%s' (--out PATH)\n", argv[i]);
                    return 2;
                }
            }
            return chart(argv[2], out);
        }
        if (cmd == "picture" && argc >= 3) {
            std::string out;
            for (int i = 3; i < argc; i++) {
                if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
                    out = argv[++i];
                } else {
                    std::fprintf(stderr, "livebound picture: unknown argument '%s' (--out PATH)\n", argv[i]);
                    return 2;
                }
            }
            return picture(argv[2], out);
        }
    } catch (const livebound::Error &e) {
        std::fprintf(stderr, "livebound: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "usage: livebound demo [--json] | livebound explain [k1..k8] [cpu|cuda] [bounded|full] | "
                         "livebound explain --where k1..k8 | livebound picture k1..k8|all [--out PATH] | "
                         "livebound chart SPEC [--out PATH] | livebound list [word...]\n");
    return 2;
}
