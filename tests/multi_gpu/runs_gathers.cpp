// K5 and K6 for the multi-GPU tests (kernel_runs.h): one case of each CUDA suite, every
// storage mirrored whole (padding and guards included), checked byte for byte / element
// for element with the suite's checks.
#include <string>
#include <utility>
#include <vector>

#include "cuda_test_util.h"
#include "dsa_kv_gather/cases.h"
#include "livebound/livebound.h"
#include "multi_gpu/kernel_runs.h"
#include "transform_index/cases.h"

namespace livebound::testing::multi_gpu {
namespace {

::testing::AssertionResult as_result(const std::string &error) {
    if (!error.empty()) return ::testing::AssertionFailure() << error;
    return ::testing::AssertionSuccess();
}

// ---- K5 get_k_and_s: 8 ragged requests, page size 64 ----
class K5Run : public KernelRun {
public:
    K5Run() : p_(k5::make_problem(k5::kv_gather_cases_named({"prefill_B8_ragged_ps64"}).at(0), LB_INT64, LB_INT32)) {}
    std::string name() const override { return "K5 get_k_and_s (" + p_.spec.name + ")"; }

    std::string mirror() override {
        // (host storage, bytes, device copy) of buf, page_indices, seq_lens, k_out, s_out.
        const std::pair<DeviceBuffer *, std::pair<const void *, size_t>> all[] = {
            {&buf_, {p_.buf.data(), p_.buf.storage_bytes()}},
            {&page_indices_, {p_.page_indices.words.data(), p_.page_indices.storage_bytes()}},
            {&seq_lens_, {p_.seq_lens.words.data(), p_.seq_lens.storage_bytes()}},
            {&k_out_, {p_.k_out.data(), p_.k_out.storage_bytes()}},
            {&s_out_, {p_.s_out.data(), p_.s_out.storage_bytes()}}};
        for (const auto &[device, host] : all) {
            std::string error = device->allocate(host.second);
            if (error.empty()) error = device->upload(host.first, host.second);
            if (!error.empty()) return error;
        }
        return {};
    }
    lb_status call(const lb_device &device) override {
        const lb_dsa_kv_gather_args args = p_.args(LB_BOUNDED, [this](void *host) -> void * {
            if (host == p_.buf.data()) return buf_.pointer();
            if (host == p_.page_indices.data()) return page_indices_.pointer();
            if (host == p_.seq_lens.data()) return seq_lens_.pointer();
            if (host == p_.k_out.data()) return k_out_.pointer();
            return s_out_.pointer();
        });
        return lb_get_k_and_s(&args, device);
    }
    ::testing::AssertionResult check(const std::string &context) override {
        if (auto r = as_result(download()); !r) return r;
        return k5::check_outputs(p_, reference::get_k_and_s(p_.reference_inputs()), p_.describe(LB_BOUNDED, context));
    }
    ::testing::AssertionResult untouched(const std::string &context) override {
        if (auto r = as_result(download()); !r) return r;
        return k5::outputs_untouched(p_, p_.describe(LB_BOUNDED, context));
    }
    std::string repoison() override {
        p_.poison_outputs();
        std::string error = k_out_.upload(p_.k_out.data(), p_.k_out.storage_bytes());
        if (error.empty()) error = s_out_.upload(p_.s_out.data(), p_.s_out.storage_bytes());
        return error;
    }
    std::vector<uint8_t> output_bytes() override {
        std::vector<uint8_t> out;
        append_bytes(p_.k_out.data(), p_.k_out.storage_bytes(), &out);
        append_bytes(p_.s_out.data(), p_.s_out.storage_bytes(), &out);
        return out;
    }

private:
    std::string download() {
        std::string error = k_out_.download(p_.k_out.data(), p_.k_out.storage_bytes());
        if (error.empty()) error = s_out_.download(p_.s_out.data(), p_.s_out.storage_bytes());
        return error;
    }

    k5::KvGatherProblem p_;
    DeviceBuffer buf_, page_indices_, seq_lens_, k_out_, s_out_;
};

// ---- K6 transform_index_page_table_prefill: the tile-edge extend lengths ----
class K6Run : public KernelRun {
public:
    K6Run() : p_(k6::make_problem(k6::transform_index_cases_named({"tile_edges"}).at(0))) {}
    std::string name() const override { return "K6 transform_index_page_table_prefill (" + p_.spec.name + ")"; }

    std::string mirror() override {
        for (k6::HostTable *t : {&p_.page_table, &p_.topk_indices, &p_.cu_seqlens_q, &p_.result}) {
            std::string error = mirror_.add(*t);
            if (!error.empty()) return error;
        }
        return {};
    }
    lb_status call(const lb_device &device) override {
        const lb_transform_index_args args =
            p_.args(LB_BOUNDED, [this](k6::HostTable &t) { return mirror_.device_pointer(t); });
        return lb_transform_index_page_table_prefill(&args, device);
    }
    ::testing::AssertionResult check(const std::string &context) override {
        if (auto r = as_result(mirror_.download(p_.result)); !r) return r;
        return k6::check_result(p_, reference::transform_index(p_.reference_inputs()), p_.describe(LB_BOUNDED, context));
    }
    ::testing::AssertionResult untouched(const std::string &context) override {
        if (auto r = as_result(mirror_.download(p_.result)); !r) return r;
        return k6::result_untouched(p_, p_.describe(LB_BOUNDED, context));
    }
    std::string repoison() override {
        p_.poison_result();
        return mirror_.upload(p_.result);
    }
    std::vector<uint8_t> output_bytes() override {
        std::vector<uint8_t> out;
        append_bytes(p_.result.storage.data(), p_.result.storage.size(), &out);
        return out;
    }

private:
    k6::TransformIndexProblem p_;
    DeviceCopies<k6::HostTable> mirror_;
};

}  // namespace

void add_gather_runs(KernelRuns *runs) {
    runs->push_back(std::make_unique<K5Run>());
    runs->push_back(std::make_unique<K6Run>());
}

}  // namespace livebound::testing::multi_gpu
