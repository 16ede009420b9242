// ConvergenceCheck: a custom lowering pass used as a verifier by the tensor-core generators.
// mma.sync, movmatrix and shfl.sync are warp-collective: all 32 lanes must execute them
// together. Halide can put them under lane-dependent control flow in three ordinary ways
// (a select-masked producer gets an `if (used)`, a row-dependent RDom predicate gets
// per-lane loop bounds, a row-predicated store shrinks its producer per lane; probe:
// ../shared/reference/tensorize-halide21.md). The pass runs after all of Halide's lowering,
// where the GPU lane loops are still explicit, and throws (failing the build) when a
// collective call sits under a condition or loop bound that depends on the lane.
//
// The shared-S exchange's block barrier (lb_share_barrier) is stricter: every thread of the
// block must reach it, so it may not sit under any condition or loop bound that depends on
// any thread index (x, y or z), nor on a value a thread computed. Its group form
// (lb_share_barrier_group, a named barrier per q tile when a block holds several, thread_id_z
// the q tile) binds the threads of one thread_id_z index: it may sit under conditions on
// thread_id_z (the q tile's key-tile bounds) but on no other thread index or computed value.
//
// Lane-dependent: the `.thread_id_x` loop variable (the 32 lanes: the kernels run
// thread_id_x over exactly 32, so thread_id_y/z index whole warps and are uniform), lets
// of lane-dependent values, loads from kernel-local allocations (registers hold per-lane
// values) and extern call results.
#pragma once

#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "Halide.h"

namespace livebound {

class ConvergenceCheck : public Halide::Internal::IRMutator {
public:
    explicit ConvergenceCheck(std::string kernel) : kernel_(std::move(kernel)) {}

    using IRMutator::mutate;
    Halide::Internal::Stmt mutate(const Halide::Internal::Stmt &s) override {
        Finder f;
        s.accept(&f);
        if (f.collective_calls == 0) {
            throw std::runtime_error("ConvergenceCheck(" + kernel_ + "): no warp-collective call found (not a tensor-core kernel?)");
        }
        if (!f.errors.empty()) {
            std::ostringstream o;
            o << "ConvergenceCheck(" << kernel_ << "): " << f.errors.size()
              << " warp-collective call(s) under lane-dependent control flow (or block barriers under "
                 "thread-dependent control flow), e.g.:";
            for (const auto &e : f.errors) o << "\n  " << e;
            throw std::runtime_error(o.str());
        }
        return s;
    }

private:
    std::string kernel_;

    static bool is_block_barrier(const std::string &name) { return name == "lb_share_barrier"; }
    static bool is_group_barrier(const std::string &name) { return name == "lb_share_barrier_group"; }

    static bool is_collective(const std::string &name) {
        for (const char *prefix : {"lb_mma", "lb_movmatrix", "llvm.nvvm.shfl"}) {
            if (name.rfind(prefix, 0) == 0) return true;
        }
        return false;
    }

    struct Finder : public Halide::Internal::IRVisitor {
        using IRVisitor::visit;
        std::set<std::string> lane_dependent, thread_dependent, group_dependent, kernel_allocations;
        std::vector<std::string> guards;         // lane-dependent conditions around the current point
        std::vector<std::string> thread_guards;  // thread-dependent ones (a superset)
        std::vector<std::string> group_guards;   // dependent on a thread index other than z (between the two)
        std::vector<std::string> errors;
        int collective_calls = 0;
        int in_kernel = 0;

        bool depends_on_lane(const Halide::Expr &e) { return depends_on(e, lane_dependent); }
        bool depends_on_thread(const Halide::Expr &e) { return depends_on(e, thread_dependent); }
        bool depends_on_group(const Halide::Expr &e) { return depends_on(e, group_dependent); }
        bool depends_on(const Halide::Expr &e, const std::set<std::string> &vars) {
            struct Uses : public Halide::Internal::IRVisitor {
                using IRVisitor::visit;
                Finder *f = nullptr;
                const std::set<std::string> *vars = nullptr;
                bool found = false;
                void visit(const Halide::Internal::Variable *op) override { found |= vars->count(op->name) > 0; }
                void visit(const Halide::Internal::Load *op) override {
                    found |= f->kernel_allocations.count(op->name) > 0;
                    IRVisitor::visit(op);
                }
                void visit(const Halide::Internal::Call *op) override {
                    found |= op->call_type == Halide::Internal::Call::Extern ||
                             op->call_type == Halide::Internal::Call::PureExtern;
                    IRVisitor::visit(op);
                }
            } uses;
            uses.f = this;
            uses.vars = &vars;
            e.accept(&uses);
            return uses.found;
        }
        static bool ends_with(const std::string &s, const std::string &suffix) {
            return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
        }
        void visit(const Halide::Internal::For *op) override {
            using Halide::Internal::ForType;
            const bool block = op->for_type == ForType::GPUBlock;
            const bool thread = op->for_type == ForType::GPUThread || op->for_type == ForType::GPULane;
            const bool lanes = thread && ends_with(op->name, ".thread_id_x");
            if (lanes && !Halide::Internal::is_const(op->extent, 32)) {
                errors.push_back("lane loop " + op->name + " must span exactly 32 lanes");
            }
            op->min.accept(this);
            op->extent.accept(this);
            const bool divergent = in_kernel && (depends_on_lane(op->min) || depends_on_lane(op->extent));
            const bool thread_divergent = in_kernel && (depends_on_thread(op->min) || depends_on_thread(op->extent));
            const bool group_divergent = in_kernel && (depends_on_group(op->min) || depends_on_group(op->extent));
            if (lanes || divergent) lane_dependent.insert(op->name);
            if (thread || thread_divergent) thread_dependent.insert(op->name);
            if ((thread && !ends_with(op->name, ".thread_id_z")) || group_divergent) group_dependent.insert(op->name);
            std::ostringstream o;
            o << "loop " << op->name << " (" << op->min << ", " << op->extent << ")";
            if (divergent) guards.push_back(o.str());
            if (thread_divergent) thread_guards.push_back(o.str());
            if (group_divergent) group_guards.push_back(o.str());
            const int entered = (block || thread) ? 1 : 0;
            in_kernel += entered;
            op->body.accept(this);
            in_kernel -= entered;
            if (divergent) guards.pop_back();
            if (thread_divergent) thread_guards.pop_back();
            if (group_divergent) group_guards.pop_back();
        }
        void visit(const Halide::Internal::IfThenElse *op) override {
            op->condition.accept(this);
            const bool divergent = in_kernel && depends_on_lane(op->condition);
            const bool thread_divergent = in_kernel && depends_on_thread(op->condition);
            const bool group_divergent = in_kernel && depends_on_group(op->condition);
            std::ostringstream o;
            o << "if (" << op->condition << ")";
            std::string text = o.str();
            if (text.size() > 200) text = text.substr(0, 200) + "...";
            if (divergent) guards.push_back(text);
            if (thread_divergent) thread_guards.push_back(text);
            if (group_divergent) group_guards.push_back(text);
            op->then_case.accept(this);
            if (op->else_case.defined()) op->else_case.accept(this);
            if (divergent) guards.pop_back();
            if (thread_divergent) thread_guards.pop_back();
            if (group_divergent) group_guards.pop_back();
        }
        void visit(const Halide::Internal::LetStmt *op) override {
            op->value.accept(this);
            if (in_kernel && depends_on_lane(op->value)) lane_dependent.insert(op->name);
            if (in_kernel && depends_on_thread(op->value)) thread_dependent.insert(op->name);
            if (in_kernel && depends_on_group(op->value)) group_dependent.insert(op->name);
            op->body.accept(this);
        }
        void visit(const Halide::Internal::Let *op) override {
            op->value.accept(this);
            if (in_kernel && depends_on_lane(op->value)) lane_dependent.insert(op->name);
            if (in_kernel && depends_on_thread(op->value)) thread_dependent.insert(op->name);
            if (in_kernel && depends_on_group(op->value)) group_dependent.insert(op->name);
            op->body.accept(this);
        }
        void visit(const Halide::Internal::Allocate *op) override {
            if (in_kernel) kernel_allocations.insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Halide::Internal::Call *op) override {
            if (in_kernel && is_collective(op->name)) {
                collective_calls++;
                if (!guards.empty() && errors.size() < 6) errors.push_back(op->name + " under " + guards.back());
            }
            if (in_kernel && is_block_barrier(op->name) && !thread_guards.empty() && errors.size() < 6) {
                errors.push_back(op->name + " (a block barrier) under " + thread_guards.back());
            }
            if (in_kernel && is_group_barrier(op->name) && !group_guards.empty() && errors.size() < 6) {
                errors.push_back(op->name + " (a q tile's barrier) under " + group_guards.back());
            }
            IRVisitor::visit(op);
        }
    };
};

}  // namespace livebound
