// K7 and K8 for the multi-GPU tests (kernel_runs.h): one small bf16 128/128 problem each
// (GQA 8/2, causal, sliding window 16, sinks; an empty request and one of a single row;
// K7 with lse_extend), every tensor mirrored (AttentionDeviceArgs), and the outputs held
// to the CUDA suites' accuracy rule against the fp64 reference: the kernel's largest error
// at most twice that of the naive fp32 reference (the larger of its two forms, P rounded to
// bf16 as a tensor-core kernel rounds it, or not: the call may run either kind of variant)
// plus 1e-5, NaN exactly where the reference has NaN, and the poison in every element
// outside the batch's rows [qo_indptr[0], qo_indptr[B]).
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_util.h"
#include "extend_attention/device_args.h"
#include "extend_attention/unified_cases.h"
#include "livebound/extend_attention.h"
#include "livebound/livebound.h"
#include "multi_gpu/kernel_runs.h"

namespace livebound::testing::multi_gpu {
namespace {

// The accuracy rule above over o [T, Hq, Lv] (and lse [T, Hq] when given) of problem p.
template <class Problem>
::testing::AssertionResult within_tolerance(const Problem &p, const reference::Result<double> &exact,
                                            const reference::Result<float> &naive,
                                            const reference::Result<float> &naive_rounded_p,
                                            const std::vector<uint16_t> &o, const std::vector<float> *lse,
                                            const std::string &context) {
    const size_t row0 = size_t(p.qo_indptr.front()), row1 = size_t(p.qo_indptr.back());
    auto check = [&](const std::vector<float> &got, const std::vector<double> &want,
                     const std::vector<float> &naive_a, const std::vector<float> &naive_b, size_t per_row,
                     const char *what) -> ::testing::AssertionResult {
        const size_t begin = row0 * per_row, end = row1 * per_row;
        const double err = max_abs_diff_nan(got, want, begin, end);
        const double bound = 2 * std::max(max_abs_diff_nan(naive_a, want, begin, end),
                                          max_abs_diff_nan(naive_b, want, begin, end)) + 1e-5;
        if (!(err <= bound)) {
            return ::testing::AssertionFailure() << context << ": " << what << " error " << err << " > bound " << bound
                                                 << " (2x the naive fp32 reference's + 1e-5)";
        }
        return ::testing::AssertionSuccess();
    };
    std::vector<float> o_values(o.size());
    for (size_t i = 0; i < o.size(); i++) o_values[i] = p.to_f(o[i]);
    const size_t o_row = size_t(p.Hq * p.Lv);
    if (auto r = check(o_values, exact.o, naive.o, naive_rounded_p.o, o_row, "o"); !r) return r;
    for (size_t i = 0; i < o.size(); i++) {
        if ((i < row0 * o_row || i >= row1 * o_row) && o[i] != kPoison16) {
            return ::testing::AssertionFailure() << context << ": o element " << i << " (row " << i / o_row
                                                 << ") is outside the batch's rows but was written";
        }
    }
    if (lse != nullptr) {
        if (auto r = check(*lse, exact.lse, naive.lse, naive_rounded_p.lse, size_t(p.Hq), "lse"); !r) return r;
        for (size_t i = 0; i < lse->size(); i++) {
            if ((i < row0 * size_t(p.Hq) || i >= row1 * size_t(p.Hq)) && std::memcmp(&(*lse)[i], &kPoisonLse, 4) != 0) {
                return ::testing::AssertionFailure() << context << ": lse element " << i << " was written";
            }
        }
    }
    return ::testing::AssertionSuccess();
}

// Every element of o (and lse) still the poison.
::testing::AssertionResult all_poison(const std::vector<uint16_t> &o, const std::vector<float> *lse,
                                      const std::string &context) {
    for (size_t i = 0; i < o.size(); i++) {
        if (o[i] != kPoison16) return ::testing::AssertionFailure() << context << ": o element " << i << " was written";
    }
    for (size_t i = 0; lse != nullptr && i < lse->size(); i++) {
        if (std::memcmp(&(*lse)[i], &kPoisonLse, 4) != 0) {
            return ::testing::AssertionFailure() << context << ": lse element " << i << " was written";
        }
    }
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult as_result(const std::string &error) {
    if (!error.empty()) return ::testing::AssertionFailure() << error;
    return ::testing::AssertionSuccess();
}

// Per request: extend rows E and prefix keys P (request 3 empty, request 1 one row).
const std::vector<int64_t> kExtendLens = {40, 1, 17, 0}, kPrefixLens = {30, 0, 70, 5};

// ---- K7 extend_attention_fwd (with lse_extend) ----
class K7Run : public KernelRun {
public:
    K7Run() : c_(make_case()), p_(make_problem(c_)) { make_args(p_, c_, LB_BOUNDED, &buf_, true); }
    std::string name() const override { return "K7 extend_attention_fwd (" + c_.name + ")"; }

    std::string mirror() override { return dev_.mirror(buf_.args, kExtendTensors); }
    lb_status call(const lb_device &device) override { return lb_extend_attention_fwd(&dev_.args, device); }
    ::testing::AssertionResult check(const std::string &context) override {
        if (auto r = as_result(download()); !r) return r;
        if (exact_.o.empty()) {
            exact_ = reference::reference_fp64(p_);
            naive_ = reference::reference_naive_fp32(p_);
            naive_rounded_p_ = reference::reference_naive_fp32(p_, true);
        }
        return within_tolerance(p_, exact_, naive_, naive_rounded_p_, buf_.o, &buf_.lse, describe(context));
    }
    ::testing::AssertionResult untouched(const std::string &context) override {
        if (auto r = as_result(download()); !r) return r;
        return all_poison(buf_.o, &buf_.lse, describe(context));
    }
    std::string repoison() override {
        std::fill(buf_.o.begin(), buf_.o.end(), kPoison16);
        std::fill(buf_.lse.begin(), buf_.lse.end(), kPoisonLse);
        std::string error = dev_.upload(&lb_extend_attention_args::o_extend);
        if (error.empty()) error = dev_.upload(&lb_extend_attention_args::lse_extend);
        return error;
    }
    std::vector<uint8_t> output_bytes() override {
        std::vector<uint8_t> out;
        append_bytes(buf_.o.data(), buf_.o.size(), &out);
        append_bytes(buf_.lse.data(), buf_.lse.size(), &out);
        return out;
    }

private:
    static ExtendCase make_case() {
        ExtendCase c{"multi_gpu_window_sinks", 41, true, 8, 2, 128, 128, kExtendLens, kPrefixLens};
        c.window = 16;
        c.sinks = true;
        return c;
    }
    std::string download() {
        std::string error = dev_.download(&lb_extend_attention_args::o_extend);
        if (error.empty()) error = dev_.download(&lb_extend_attention_args::lse_extend);
        return error;
    }
    std::string describe(const std::string &context) const {
        std::ostringstream os;
        os << c_ << " bounded with lse on " << context;
        return os.str();
    }

    ExtendCase c_;
    ExtendProblem p_;
    ExtendBuffers buf_;
    AttentionDeviceArgs<lb_extend_attention_args> dev_;
    reference::Result<double> exact_;
    reference::Result<float> naive_, naive_rounded_p_;
};

// ---- K8 extend_attention_fwd_unified (3 lead and 5 tail rows outside the batch) ----
class K8Run : public KernelRun {
public:
    K8Run() : c_(make_case()), p_(with_padding(make_unified_problem(c_), 3, 5, c_.seed + 1)) {
        make_unified_args(p_, c_, LB_BOUNDED, &buf_);
    }
    std::string name() const override { return "K8 extend_attention_fwd_unified (" + c_.name + ")"; }

    std::string mirror() override { return dev_.mirror(buf_.args, kUnifiedTensors); }
    lb_status call(const lb_device &device) override { return lb_extend_attention_fwd_unified(&dev_.args, device); }
    ::testing::AssertionResult check(const std::string &context) override {
        if (auto r = as_result(dev_.download(&lb_extend_attention_unified_args::o)); !r) return r;
        if (exact_.o.empty()) {
            exact_ = reference::reference_unified_fp64(p_);
            naive_ = reference::reference_unified_naive_fp32(p_);
            naive_rounded_p_ = reference::reference_unified_naive_fp32(p_, true);
        }
        return within_tolerance(p_, exact_, naive_, naive_rounded_p_, buf_.o, nullptr, describe(context));
    }
    ::testing::AssertionResult untouched(const std::string &context) override {
        if (auto r = as_result(dev_.download(&lb_extend_attention_unified_args::o)); !r) return r;
        return all_poison(buf_.o, nullptr, describe(context));
    }
    std::string repoison() override {
        std::fill(buf_.o.begin(), buf_.o.end(), kPoison16);
        return dev_.upload(&lb_extend_attention_unified_args::o);
    }
    std::vector<uint8_t> output_bytes() override {
        std::vector<uint8_t> out;
        append_bytes(buf_.o.data(), buf_.o.size(), &out);
        return out;
    }

private:
    static UnifiedCase make_case() {
        UnifiedCase c{"multi_gpu_window_sinks", 42, true, 8, 2, 128, 128, kExtendLens, kPrefixLens};
        c.window = 16;
        c.sinks = true;
        return c;
    }
    std::string describe(const std::string &context) const {
        std::ostringstream os;
        os << c_ << " bounded on " << context;
        return os.str();
    }

    UnifiedCase c_;
    UnifiedProblem p_;
    UnifiedBuffers buf_;
    AttentionDeviceArgs<lb_extend_attention_unified_args> dev_;
    reference::Result<double> exact_;
    reference::Result<float> naive_, naive_rounded_p_;
};

}  // namespace

void add_attention_runs(KernelRuns *runs) {
    runs->push_back(std::make_unique<K7Run>());
    runs->push_back(std::make_unique<K8Run>());
}

}  // namespace livebound::testing::multi_gpu
