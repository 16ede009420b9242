// K1, K2, K3 and K4 for the multi-GPU tests (kernel_runs.h): one case of each CUDA suite,
// mirrored with DeviceCopies (whole storages, guards included), checked with the suite's
// exact checks (live prefix equal to the reference, the poison everywhere else).
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_util.h"
#include "decode_metadata_cases.h"
#include "dsa_metadata/cases.h"
#include "livebound/livebound.h"
#include "multi_gpu/kernel_runs.h"
#include "trtllm_metadata/cases.h"

namespace livebound::testing::multi_gpu {
namespace {

// A problem whose host tensors (type Tensor: data(), bytes(), present) are mirrored whole;
// Problem has inputs(), outputs() and poison_outputs().
template <class Problem, class Tensor>
class MirroredRun : public KernelRun {
public:
    explicit MirroredRun(Problem problem) : p_(std::move(problem)) {}

    std::string mirror() override { return mirror_.mirror(p_); }
    std::string repoison() override {
        p_.poison_outputs();
        for (Tensor *t : p_.outputs()) {
            if (!t->present) continue;
            std::string error = mirror_.upload(*t);
            if (!error.empty()) return error;
        }
        return {};
    }
    std::vector<uint8_t> output_bytes() override {
        std::vector<uint8_t> out;
        for (Tensor *t : p_.outputs()) {
            if (t->present) append_bytes(static_cast<const uint8_t *>(t->data()), t->bytes(), &out);
        }
        return out;
    }

protected:
    // Device -> host for every output; a failure as an AssertionResult.
    ::testing::AssertionResult download() {
        const std::string error = mirror_.download_outputs(p_);
        if (!error.empty()) return ::testing::AssertionFailure() << error;
        return ::testing::AssertionSuccess();
    }
    std::function<void *(Tensor &)> device_pointers() {
        return [this](Tensor &t) { return mirror_.device_pointer(t); };
    }

    Problem p_;
    DeviceCopies<Tensor> mirror_;
};

// ---- K1 normal_decode_set_metadata: 16 requests, page size 64, SWA tables ----
class K1Run : public MirroredRun<DecodeMetadataProblem, HostTensor> {
public:
    K1Run() : MirroredRun(make_problem(decode_metadata_cases_named({"B16_len512_ps64_swa"}).at(0), LB_INT64, LB_INT64)) {}
    std::string name() const override { return "K1 normal_decode_set_metadata (" + p_.spec.name + ")"; }
    lb_status call(const lb_device &device) override {
        const lb_decode_metadata_args args = p_.args(LB_BOUNDED, device_pointers());
        return lb_normal_decode_set_metadata(&args, device);
    }
    ::testing::AssertionResult check(const std::string &context) override {
        if (auto r = download(); !r) return r;
        const reference::DecodeMetadataExpected want = reference::decode_metadata(p_.reference_inputs());
        const std::string what = p_.describe(LB_BOUNDED, context);
        if (auto r = check_seqlens(p_, want, what); !r) return r;
        return check_page_tables(p_, want, PageTableExpectation::kBounded, what);
    }
    ::testing::AssertionResult untouched(const std::string &context) override {
        if (auto r = download(); !r) return r;
        return outputs_untouched(p_, p_.describe(LB_BOUNDED, context));
    }
};

// ---- K2 fused_dsa_decode_metadata / K3 fused_dsa_target_verify_metadata ----
// The CUDA suite's default-stream cases: decode_cases()[3] (K2), verify_cases()[1] (K3).
class DsaRun : public MirroredRun<dsa_testing::DsaProblem, dsa_testing::Buf> {
public:
    explicit DsaRun(const dsa_testing::DsaCase &c) : MirroredRun(dsa_testing::make_problem(c, LB_INT64)) {}
    std::string name() const override {
        return std::string(p_.verify() ? "K3 fused_dsa_target_verify_metadata" : "K2 fused_dsa_decode_metadata") + " (" +
               p_.c.name + ")";
    }
    lb_status call(const lb_device &device) override { return p_.call(LB_BOUNDED, device_pointers(), device); }
    ::testing::AssertionResult check(const std::string &context) override {
        if (auto r = download(); !r) return r;
        const reference::DsaMetadataExpected want = reference::dsa_metadata(p_.reference_inputs());
        return dsa_testing::check_outputs(p_, want, LB_BOUNDED, p_.describe(LB_BOUNDED, context));
    }
    ::testing::AssertionResult untouched(const std::string &context) override {
        if (auto r = download(); !r) return r;
        return dsa_testing::outputs_untouched(p_, p_.describe(LB_BOUNDED, context));
    }
    std::vector<uint8_t> output_bytes() override {
        // (Buf has no const data(): its int32 or int64 storage directly.)
        std::vector<uint8_t> out;
        for (dsa_testing::Buf *b : p_.outputs()) {
            if (!b->present) continue;
            if (b->dtype == LB_INT64) {
                append_bytes(b->v64.data(), b->v64.size(), &out);
            } else {
                append_bytes(b->v32.data(), b->v32.size(), &out);
            }
        }
        return out;
    }
};

// ---- K4 update_trtllm_mha_graph_metadata: 17 requests, SWA, a static q ----
class K4Run : public MirroredRun<k4::TrtllmProblem, HostTensor> {
public:
    K4Run() : MirroredRun(k4::make_problem(k4::cases_named({"bs17_off1_q1_swa_static"}).at(0))) {}
    std::string name() const override { return "K4 update_trtllm_mha_graph_metadata (" + p_.spec.name + ")"; }
    lb_status call(const lb_device &device) override {
        const lb_trtllm_mha_graph_metadata_args args = p_.args(LB_BOUNDED, device_pointers());
        return lb_update_trtllm_mha_graph_metadata(&args, device);
    }
    ::testing::AssertionResult check(const std::string &context) override {
        if (auto r = download(); !r) return r;
        const reference::TrtllmMetadataExpected want = reference::trtllm_metadata(p_.reference_inputs());
        const std::string what = p_.describe(LB_BOUNDED, context);
        if (auto r = k4::check_scalars(p_, want, what); !r) return r;
        return k4::check_tables(p_, want, LB_BOUNDED, what);
    }
    ::testing::AssertionResult untouched(const std::string &context) override {
        if (auto r = download(); !r) return r;
        return k4::outputs_untouched(p_, p_.describe(LB_BOUNDED, context));
    }
};

}  // namespace

void add_metadata_runs(KernelRuns *runs) {
    runs->push_back(std::make_unique<K1Run>());
    runs->push_back(std::make_unique<DsaRun>(dsa_testing::decode_cases()[3]));
    runs->push_back(std::make_unique<DsaRun>(dsa_testing::verify_cases()[1]));
    runs->push_back(std::make_unique<K4Run>());
}

}  // namespace livebound::testing::multi_gpu
