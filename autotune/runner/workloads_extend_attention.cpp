// K7 extend_attention_fwd workloads for the autotune runner (bf16, causal, no window, no LSE),
// in two classes an experiment picks by name ("workloads" in its json, the runner's
// --workloads substring):
//   prefill_d128 ("d128"): the variant lb_k7_cuda_tc_bounded_bf16_d128_nolse; targets.md's
//     cases B (one causal request of 8192 rows) and C (its ragged paged batch of 8), 32 q /
//     8 kv heads;
//   prefill_mla ("mla"): MLA's absorbed head dims 576/512 (16 q heads, one kv head), the
//     variant lb_k7_cuda_tc_bounded_bf16_d576_512_nolse; the benchmark's case E on the same
//     two shapes, in MLA's absorbed layout as there: v_buffer / v_extend views of K's first
//     512 dims (on the device too: a view shares its key tensor's copy).
// In each class a small ragged batch is checked against the fp64 reference with the CUDA
// suite's tensor-core tolerance; the large cases are checked against the hand schedule's
// output (within 1e-2; bf16 has 8 mantissa bits) since an fp64 reference of them takes
// minutes.
#include <cmath>
#include <cstring>

#include "extend_attention/cases.h"
#include "runner.h"

namespace livebound::autotune {
namespace {

using testing::ExtendBuffers;
using testing::ExtendCase;

class ExtendWorkload : public Workload {
public:
    ExtendWorkload(std::string name, std::string workload_class, ExtendCase c, bool exact_reference)
        : name_(std::move(name)), class_(std::move(workload_class)), case_(std::move(c)), exact_(exact_reference) {}
    std::string name() const override { return name_; }
    std::string workload_class() const override { return class_; }

    std::string prepare(bool on_cuda) override {
        if (prepared_) return {};
        problem_ = testing::make_problem(case_);
        const bool absorbed = case_.Lv < case_.Lq;  // MLA: V the first Lv dims of K
        if (absorbed) testing::absorb_values(&problem_);
        testing::make_args(problem_, case_, LB_BOUNDED, &buffers_, /*with_lse=*/false);
        if (absorbed) testing::values_as_key_views(problem_, &buffers_.args);
        if (exact_) {
            r64_ = reference::reference_fp64(problem_);
            r32p_ = reference::reference_naive_fp32(problem_, true);
        }
        args_ = buffers_.args;
        lb_tensor *tensors[] = {&args_.q_extend, &args_.k_extend, &args_.v_extend, &args_.o_extend, &args_.k_buffer,
                                &args_.v_buffer, &args_.qo_indptr, &args_.kv_indptr, &args_.kv_indices};
        if (on_cuda) {
            const std::vector<const lb_tensor *> host(std::begin(tensors), std::end(tensors));
            std::vector<int> viewed;  // per tensor: the earlier one it is a view of, or -1
            for (size_t i = 0; i < host.size(); i++) viewed.push_back(testing::viewed_tensor(host, i));
            for (size_t i = 0; i < host.size(); i++) {
                lb_tensor *t = tensors[i];
                if (t->data == nullptr) continue;
                if (viewed[i] >= 0) {  // a view: the same device memory as its tensor's copy
                    t->data = tensors[viewed[i]]->data;
                    continue;
                }
                auto m = std::make_unique<Memory>(testing::tensor_bytes(*t));
                std::memcpy(m->host<uint8_t>(), t->data, m->bytes());
                if (!m->to_device()) return "device copies failed";
                t->data = m->data();
                if (t == &args_.o_extend) o_ = m.get();
                device_.push_back(std::move(m));
            }
        }
        prepared_ = true;
        return {};
    }
    lb_status call(const lb_device &device) override { return lb_extend_attention_fwd(&args_, device); }
    bool poison() override {
        buffers_.o.assign(buffers_.o.size(), testing::kPoison16);
        if (o_ == nullptr) return true;
        std::memcpy(o_->host<uint8_t>(), buffers_.o.data(), o_->bytes());
        return o_->upload();
    }
    std::string check(bool hand_first) override {
        if (o_ != nullptr) {
            if (!o_->download()) return "download failed";
            std::memcpy(buffers_.o.data(), o_->host<uint8_t>(), o_->bytes());
        }
        const reference::ExtendProblem &p = problem_;
        std::vector<float> o(buffers_.o.size());
        for (size_t i = 0; i < o.size(); i++) o[i] = p.to_f(buffers_.o[i]);
        for (size_t i = 0; i < o.size(); i++) {
            if (!std::isfinite(o[i])) return "o[" + std::to_string(i) + "] is not finite (unwritten or NaN)";
        }
        if (exact_) {
            double err = 0, err_naive = 0;
            for (size_t i = 0; i < o.size(); i++) {
                err = std::max(err, std::fabs(double(o[i]) - r64_.o[i]));
                err_naive = std::max(err_naive, std::fabs(double(r32p_.o[i]) - r64_.o[i]));
            }
            if (!(err <= 2 * err_naive + 1e-5)) {
                return "o: error " + std::to_string(err) + " vs the fp64 reference, more than 2x the naive " +
                       std::to_string(err_naive) + " + 1e-5";
            }
            return {};
        }
        if (hand_first) {
            hand_o_ = o;
            return {};
        }
        if (hand_o_.size() != o.size()) return "no hand-schedule output to compare with (its own check failed)";
        for (size_t i = 0; i < o.size(); i++) {
            if (!(std::fabs(o[i] - hand_o_[i]) <= 1e-2f)) {
                return "o[" + std::to_string(i) + "] = " + std::to_string(o[i]) + ", the hand schedule's " +
                       std::to_string(hand_o_[i]);
            }
        }
        return {};
    }

private:
    std::string name_, class_;
    ExtendCase case_;
    bool exact_, prepared_ = false;
    reference::ExtendProblem problem_;
    ExtendBuffers buffers_;
    lb_extend_attention_args args_{};
    std::vector<std::unique_ptr<Memory>> device_;
    Memory *o_ = nullptr;
    reference::Result<double> r64_;
    reference::Result<float> r32p_;
    std::vector<float> hand_o_;
};

WorkloadList make(bool) {
    WorkloadList w;
    const char *d128 = "prefill_d128", *mla = "prefill_mla";
    // targets.md's case C: a ragged batch of 8 extends over paged prefixes.
    const std::vector<int64_t> c_extend{8192, 353, 187, 131, 174, 426, 145, 471};
    const std::vector<int64_t> c_prefix{687, 806, 2905, 1939, 142, 252, 129, 2835};
    w.push_back(std::make_unique<ExtendWorkload>(
        "K7/check/uneven_causal_d128", d128,
        ExtendCase{"uneven_causal", 11, true, 8, 2, 128, 128, {150, 1, 33, 0, 64, 5}, {40, 0, 200, 17, 0, 3}}, true));
    w.push_back(std::make_unique<ExtendWorkload>(
        "K7/C/ragged_paged_d128/bs:8", d128, ExtendCase{"C8", 300, true, 32, 8, 128, 128, c_extend, c_prefix}, false));
    w.push_back(std::make_unique<ExtendWorkload>(
        "K7/B/causal_d128/seq:8192", d128, ExtendCase{"B8192", 200, true, 32, 8, 128, 128, {8192}, {0}}, false));
    w.push_back(std::make_unique<ExtendWorkload>(
        "K7/check/uneven_causal_mla_576_512", mla,
        ExtendCase{"uneven_causal_mla", 12, true, 16, 1, 576, 512, {150, 1, 33, 0, 64, 5}, {40, 0, 200, 17, 0, 3}},
        true));
    w.push_back(std::make_unique<ExtendWorkload>(
        "K7/E/ragged_paged_mla_576_512/bs:8", mla,
        ExtendCase{"E8", 300, true, 16, 1, 576, 512, c_extend, c_prefix}, false));
    w.push_back(std::make_unique<ExtendWorkload>(
        "K7/E/causal_mla_576_512/seq:8192", mla, ExtendCase{"E8192", 500, true, 16, 1, 576, 512, {8192}, {0}},
        false));
    return w;
}

const bool registered = register_kernel({"K7", "lb_k7_", make});

}  // namespace
}  // namespace livebound::autotune
