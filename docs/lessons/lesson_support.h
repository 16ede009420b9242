// What every lesson shares: the lowered statement as text, a lowering pass that records the
// trips of one loop, and the checks that make a lesson fail when its claim does not hold.
// Each lesson is one .cpp file that includes this header once.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "Halide.h"

namespace lesson {

// Line-buffered stdout, so that a lesson's lines come out in order under CTest, crash or not;
// and an uncaught error (a Halide compile error, say) printed with its message before the abort.
inline const int stdout_line_buffered = std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
inline const std::terminate_handler previous_terminate = std::set_terminate([] {
    try {
        if (std::current_exception()) std::rethrow_exception(std::current_exception());
    } catch (const Halide::Error &e) {
        std::fprintf(stderr, "lesson stopped by a Halide error: %s\n", e.what());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "lesson stopped: %s\n", e.what());
    } catch (...) {
    }
    std::abort();
});

// ---- checks: a lesson prints each claim it makes and exits non-zero if any is false ----
inline int &failed_checks() {
    static int n = 0;
    return n;
}
inline void expect(bool holds, const std::string &claim) {
    std::printf("  [%s] %s\n", holds ? "holds" : "FAILS", claim.c_str());
    if (!holds) failed_checks()++;
}
inline int finish(const char *lesson_name) {
    if (failed_checks() == 0) {
        std::printf("\n%s: every claim held.\n", lesson_name);
        return 0;
    }
    std::printf("\n%s: %d claim(s) did NOT hold.\n", lesson_name, failed_checks());
    return 1;
}

// ---- the statement Halide lowered. `conceptual` keeps GPU kernels as loop nests (the plain
//      lowered statement of a CUDA target holds them as compiled PTX bytes) ----
inline std::string lowered_stmt(Halide::Pipeline p, const std::vector<Halide::Argument> &args,
                                const Halide::Target &target, bool conceptual = false) {
    const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                       ("livebound_lesson_" + std::to_string(getpid()) + ".stmt");
    if (conceptual) {
        p.compile_to_conceptual_stmt(file.string(), args, Halide::Text, target);
    } else {
        p.compile_to_lowered_stmt(file.string(), args, Halide::Text, target);
    }
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    std::filesystem::remove(file);
    return text.str();
}

// The lines of `stmt` that contain `key`, leading spaces kept (they show the nesting).
inline std::vector<std::string> lines_with(const std::string &stmt, const std::string &key) {
    std::vector<std::string> found;
    std::istringstream in(stmt);
    for (std::string line; std::getline(in, line);) {
        if (line.find(key) != std::string::npos) found.push_back(line);
    }
    return found;
}

// The lines with any of `keys`, plus the `let tNN = ...` lines they use (Halide's CSE names), transitively,
// in the statement's order: a derived bound is often spread over a few lets.
inline std::vector<std::string> lines_with_lets(const std::string &stmt, const std::vector<std::string> &keys) {
    std::vector<std::string> all;
    std::istringstream in(stmt);
    for (std::string line; std::getline(in, line);) all.push_back(line);
    std::vector<bool> keep(all.size(), false);
    std::vector<std::string> wanted;  // CSE names still to find
    for (size_t i = 0; i < all.size(); i++) {
        for (const std::string &key : keys) {
            if (!keep[i] && all[i].find(key) != std::string::npos) keep[i] = true, wanted.push_back(all[i]);
        }
    }
    // CSE names (t12, t12.s) and the bounds TrimNoOps names (<loop>.new_min.s, <loop>.new_max.s).
    const std::regex cse_name("\\bt[0-9]+(\\.s)?\\b|[A-Za-z0-9_$.]+\\.new_(min|max)(\\.s)?");
    while (!wanted.empty()) {
        const std::string line = wanted.back();
        wanted.pop_back();
        for (std::sregex_iterator it(line.begin(), line.end(), cse_name), end; it != end; ++it) {
            const std::string def = "let " + it->str() + " = ";
            for (size_t i = 0; i < all.size(); i++) {
                if (!keep[i] && all[i].find(def) != std::string::npos) keep[i] = true, wanted.push_back(all[i]);
            }
        }
    }
    std::vector<std::string> found;
    for (size_t i = 0; i < all.size(); i++) {
        if (keep[i]) found.push_back(all[i]);
    }
    return found;
}

inline bool any_line_has(const std::vector<std::string> &lines, const std::string &key) {
    for (const auto &l : lines) {
        if (l.find(key) != std::string::npos) return true;
    }
    return false;
}

// Prints `lines`, cut at `width` characters.
inline void show(const std::vector<std::string> &lines, size_t width = 150) {
    for (const auto &l : lines) std::printf("    %s\n", l.size() > width ? (l.substr(0, width - 3) + "...").c_str() : l.c_str());
}

// ---- loop trips, as executed. RecordTrips is a custom lowering pass: it puts a call
//      `lesson_trip(id, outer, middle, inner)` at the top of every iteration of the loop the
//      algorithm names `loop` (e.g. "out.s1.r$y"), after Halide has trimmed it, so each entry
//      of trips() is one iteration that really ran (`id` tells apart the loops of several
//      RecordTrips passes on one pipeline). Halide 21 rebases every loop to start at 0
//      after trimming, so `inner` counts the loop's trips from 0 (not the chunk index), and
//      `outer` (`middle`) is the index of the enclosing loop named `outer_loop`
//      (`middle_loop`, optional; 0 without), e.g. the tile: its true value when that loop
//      starts at the output buffer's min, a trip number otherwise. The lessons run these
//      loops serially ----
struct Trip {
    int id, outer, middle, inner;
};
inline std::vector<Trip> &trips() {
    static std::vector<Trip> t;
    return t;
}

class RecordTrips : public Halide::Internal::IRMutator {
public:
    RecordTrips(std::string loop, std::string outer_loop, std::string middle_loop = "", int id = 0)
        : loop_(std::move(loop)), outer_(std::move(outer_loop)), middle_(std::move(middle_loop)), id_(id) {}

    using IRMutator::visit;
    Halide::Internal::Stmt visit(const Halide::Internal::For *op) override {
        using namespace Halide::Internal;
        auto named = [&](const std::string &name) { return !name.empty() && (op->name == name || op->name == name + ".rebased"); };
        Halide::Expr saved_outer = outer_var_, saved_middle = middle_var_;
        if (named(outer_)) outer_var_ = Variable::make(Halide::Int(32), op->name) - op->min;
        if (named(middle_)) middle_var_ = Variable::make(Halide::Int(32), op->name) - op->min;
        Stmt body = mutate(op->body);
        if (named(loop_)) {
            if (!outer_var_.defined() || (!middle_.empty() && !middle_var_.defined())) {
                throw std::runtime_error("RecordTrips: " + loop_ + " is not inside " + outer_ + " " + middle_);
            }
            Halide::Expr inner = Variable::make(Halide::Int(32), op->name) - op->min;
            Halide::Expr middle = middle_.empty() ? Halide::Expr(0) : middle_var_;
            Halide::Expr call = Call::make(Halide::Int(32), "lesson_trip", {id_, outer_var_, middle, inner}, Call::Extern);
            body = Block::make(Evaluate::make(call), body);
            found_ = true;
        }
        outer_var_ = saved_outer, middle_var_ = saved_middle;
        return For::make(op->name, op->min, op->extent, op->for_type, op->partition_policy, op->device_api, body);
    }
    // The whole statement: fails loudly when the loop is not there (a renamed loop would
    // otherwise record nothing and look like a loop trimmed to zero trips).
    using IRMutator::mutate;
    Halide::Internal::Stmt mutate(const Halide::Internal::Stmt &s) override {
        if (inside_) return IRMutator::mutate(s);
        inside_ = true;
        found_ = false;
        Halide::Internal::Stmt result = IRMutator::mutate(s);
        inside_ = false;
        if (!found_) throw std::runtime_error("RecordTrips: no loop named " + loop_);
        return result;
    }

private:
    std::string loop_, outer_, middle_;
    int id_;
    Halide::Expr outer_var_, middle_var_;
    bool inside_ = false, found_ = false;
};

// Number of trips() of loop `id` whose outer index is `outer`.
inline int trips_of(int outer, int id = 0) {
    int n = 0;
    for (const Trip &t : trips()) n += t.id == id && t.outer == outer;
    return n;
}

}  // namespace lesson

// Called by the code RecordTrips inserts; the JIT finds it in the executable's own symbols
// (the lessons are linked with ENABLE_EXPORTS).
extern "C" int lesson_trip(int id, int outer, int middle, int inner) {
    lesson::trips().push_back({id, outer, middle, inner});
    return 0;
}
