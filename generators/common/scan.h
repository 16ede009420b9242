// Exclusive prefix sums, written as algorithms (both give identical integers;
// the schedule's target decides which one a variant uses, through the
// `scan_block` GeneratorParam).
#pragma once

#include <functional>
#include <string>

#include "Halide.h"

namespace livebound::scan {

// out(0) = 0, out(i + 1) = out(i) + value(i) for i in [0, n): a recurrence.
// One serial loop: the right shape for a CPU, the wrong one for a GPU.
// `i` names out's dimension (a schedule fusing out with another Func needs the names to match).
inline void define_serial(Halide::Func out, const Halide::Func &value, const Halide::Expr &n, const Halide::Var &i) {
    out(i) = 0;
    Halide::RDom r(0, n, "scan_r");
    out(r + 1) = out(r) + value(r);
}

// The same sums as a two-level blocked scan, every element independent:
//   block_total(k) = sum of value over [k*block, (k+1)*block)
//   out(i)         = sum of block_total(k) for k < i / block
//                  + sum of value(j) for j in [(i / block) * block, i)
// (the second sum runs over the whole block with the terms j >= i masked to 0)
// Each out(i) costs at most n / block + block additions and no element depends on
// another, so a GPU computes all of them at once (SGLang's kernel walks the batch
// in one thread: ~55 ns per request). `value` must be defined (zero or not) for
// indices past n-1 inside the last block; `padded` below provides that.
// Returns the intermediate Funcs so that a schedule can place them.
struct Blocked {
    Halide::Func block_total;   // (k): sum of block k
    Halide::Func before_block;  // (i): sum of the blocks before i's block
    Halide::Func block_head;    // (i): sum of i's block up to, excluding, i
    Halide::RDom in_block;      // [0, block): block_total's reduction
    Halide::RDom earlier;       // [0, num_blocks) where < i / block: before_block's
    Halide::RDom head;          // [0, block), terms with head >= i % block are 0: block_head's
    Halide::Func terms;         // (j): the padded values summed (a schedule may stage them)
};
// `prefix` names the intermediates (`<prefix>block_total`, ...): a pipeline with two
// blocked scans needs distinct names.
inline Blocked define_blocked(Halide::Func out, const Halide::Func &padded_value, const Halide::Expr &n, int block,
                              const Halide::Var &i, const std::string &prefix = "") {
    Halide::Var k{"k"};
    Blocked f{Halide::Func{prefix + "block_total"}, Halide::Func{prefix + "before_block"},
              Halide::Func{prefix + "block_head"}, Halide::RDom(0, block, prefix + "in_block"),
              Halide::RDom(0, (n + block - 1) / block, prefix + "earlier"), Halide::RDom(0, block, prefix + "head"),
              padded_value};
    f.block_total(k) = 0;
    f.block_total(k) += padded_value(k * block + f.in_block);

    f.earlier.where(f.earlier < i / block);
    f.before_block(i) = 0;
    f.before_block(i) += f.block_total(f.earlier);

    // A select, not an RDom predicate: every term is a load that is always in bounds
    // (padded), so an unrolled head issues its loads together.
    f.block_head(i) = 0;
    f.block_head(i) += Halide::select(f.head < i % block, padded_value((i / block) * block + f.head), 0);

    out(i) = f.before_block(i) + f.block_head(i);
    return f;
}

// value(i) for i in [0, n), zero elsewhere (indices clamped for bounds inference).
inline Halide::Func padded(const Halide::Func &value, const Halide::Expr &n) {
    Halide::Var i{"i"};
    Halide::Func p{"padded_" + value.name()};
    p(i) = Halide::select(i < n, value(Halide::clamp(i, 0, n - 1)), 0);
    return p;
}

// owner(i) = the largest b in [0, n) with prefix(b) <= i, for a non-decreasing `prefix`
// (prefix sums: the request that holds row i; an empty request ties with the next one and
// loses to it), or 0: a binary search of ceil(log2 n) halvings over the RDom returned.
// `prefix(b)` is called with b in [0, n) only where it counts; it clamps b itself for
// bounds inference.
inline Halide::RDom define_owner_search(Halide::Func owner, const std::function<Halide::Expr(Halide::Expr)> &prefix,
                                        const Halide::Expr &n, const Halide::Var &i) {
    Halide::Expr steps = Halide::select(n > 1, 32 - Halide::count_leading_zeros(n - 1), 0);
    Halide::RDom search(0, steps, "search");
    owner(i) = 0;
    Halide::Expr candidate = owner(i) + (Halide::Expr(1) << (steps - 1 - search));
    owner(i) = Halide::select(candidate < n && prefix(candidate) <= i, candidate, owner(i));
    return search;
}

}  // namespace livebound::scan
