// K6 transform_index_page_table_prefill workloads for the autotune runner: the prefill shapes
// of bench/bench_transform_index.cpp (top-k 2048 over 8192 kv positions) on CUDA, the same
// batches scaled down 4x on the CPU (an experiment that runs in CI in seconds). The expected
// result is the plain C++ reference (tests/reference/), exactly.
#include <algorithm>
#include <random>

#include "reference/transform_index_reference.h"
#include "runner.h"

namespace livebound::autotune {
namespace {

constexpr uint32_t kPoison = 0x7f7f7f7fu;

class TransformIndexWorkload : public Workload {
public:
    TransformIndexWorkload(std::string name, std::vector<int64_t> lens, int64_t width, int64_t topk)
        : name_(std::move(name)), lens_(std::move(lens)), width_(width), topk_(topk) {}
    std::string name() const override { return name_; }
    std::string workload_class() const override { return "prefill"; }

    std::string prepare(bool on_cuda) override {
        if (prepared_) return {};
        const int64_t bs = int64_t(lens_.size());
        std::vector<int64_t> cu(1, 0);
        for (int64_t l : lens_) cu.push_back(cu.back() + l);
        n_ = cu.back();
        rows_ = n_ + 64;  // padding rows: the -1 fill
        page_table_ = Memory(size_t(bs * width_) * 4);
        topk_indices_ = Memory(size_t(n_ * topk_) * 4);
        cu_ = Memory(size_t(bs + 1) * 4);
        result_ = Memory(size_t(rows_ * topk_) * 4);
        std::mt19937 rng(61);
        std::uniform_int_distribution<int32_t> slot(0, (1 << 26) - 1), position(-1, int32_t(width_) - 1);
        for (int64_t i = 0; i < bs * width_; i++) page_table_.host<int32_t>()[i] = slot(rng);
        for (int64_t i = 0; i < n_ * topk_; i++) topk_indices_.host<int32_t>()[i] = position(rng);
        for (int64_t i = 0; i <= bs; i++) cu_.host<int32_t>()[i] = int32_t(cu[size_t(i)]);
        reference::TransformIndexInputs in;
        in.page_table = page_table_.host<int32_t>();
        in.page_table_rows = bs;
        in.max_seqlen_k = width_;
        in.page_table_row_stride = width_;
        in.topk_indices = topk_indices_.host<int32_t>();
        in.num_rows = n_;
        in.topk = topk_;
        in.topk_row_stride = topk_;
        in.cu_seqlens_q = cu;
        in.output_num_tokens = rows_;
        for (const auto &row : reference::transform_index(in)) expected_.insert(expected_.end(), row.begin(), row.end());
        if (on_cuda && !(page_table_.to_device() && topk_indices_.to_device() && cu_.to_device() && result_.to_device())) {
            return "device copies failed";
        }
        args_.page_table = tensor_2d(page_table_.data(), LB_INT32, bs, width_);
        args_.topk_indices = tensor_2d(topk_indices_.data(), LB_INT32, n_, topk_);
        args_.cu_seqlens_q = tensor_1d(cu_.data(), LB_INT32, bs + 1);
        args_.result = tensor_2d(result_.data(), LB_INT32, rows_, topk_);
        args_.num_tokens = n_;
        args_.max_extend_len = *std::max_element(lens_.begin(), lens_.end());
        args_.output_num_tokens = rows_;
        args_.page_size = 1;
        args_.variant = LB_BOUNDED;
        prepared_ = true;
        return {};
    }
    lb_status call(const lb_device &device) override { return lb_transform_index_page_table_prefill(&args_, device); }
    bool poison() override {
        fill32(result_, kPoison);
        return result_.upload();
    }
    std::string check(bool) override {
        if (!result_.download()) return "download failed";
        const int32_t *got = result_.host<int32_t>();
        for (size_t i = 0; i < expected_.size(); i++) {
            if (got[i] != expected_[i]) {
                return "result[" + std::to_string(i / size_t(topk_)) + ", " + std::to_string(i % size_t(topk_)) +
                       "] = " + std::to_string(got[i]) + ", expected " + std::to_string(expected_[i]);
            }
        }
        return {};
    }

private:
    std::string name_;
    std::vector<int64_t> lens_;
    int64_t width_, topk_, n_ = 0, rows_ = 0;
    bool prepared_ = false;
    Memory page_table_, topk_indices_, cu_, result_;
    std::vector<int32_t> expected_;
    lb_transform_index_args args_{};
};

WorkloadList make(bool on_cuda) {
    const int64_t scale = on_cuda ? 1 : 4, width = 8192 / scale, topk = 2048 / scale;
    std::vector<int64_t> ragged = {4096, 1024, 512, 512, 1024, 256, 512, 256}, uniform(8, 1024), single = {8192};
    WorkloadList w;
    for (auto *shape : {&ragged, &uniform, &single}) {
        for (auto &l : *shape) l /= scale;
    }
    const std::string suffix = on_cuda ? "" : "/cpu_quarter";
    w.push_back(std::make_unique<TransformIndexWorkload>("K6/ragged" + suffix, ragged, width, topk));
    w.push_back(std::make_unique<TransformIndexWorkload>("K6/uniform" + suffix, uniform, width, topk));
    w.push_back(std::make_unique<TransformIndexWorkload>("K6/single" + suffix, single, width, topk));
    return w;
}

const bool registered = register_kernel({"K6", "lb_k6_", make});

}  // namespace
}  // namespace livebound::autotune
