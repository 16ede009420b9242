// K5 get_k_and_s (DSA indexer key + scale gather) workloads for the autotune runner: table E's
// shapes (bench/dsa_kv_gather_shapes.h, the batches bench_dsa_kv_gather times), with the
// bench's data: a key buffer of twice the pages the batch needs, random bytes, shuffled page
// ids, int32 page_indices and int64 seq_lens. The expected k_out / s_out rows are the plain
// C++ reference's (tests/reference/), exactly. On CUDA the bounded calls run the row grid
// (lb_k5_cuda_rows_s64_i32).
#include <algorithm>
#include <numeric>
#include <random>

#include "dsa_kv_gather_shapes.h"
#include "reference/dsa_kv_gather_reference.h"
#include "runner.h"

namespace livebound::autotune {
namespace {

namespace k5 = livebound::bench::k5;

class KvGatherWorkload : public Workload {
public:
    explicit KvGatherWorkload(k5::Shape shape) : shape_(std::move(shape)) {}
    std::string name() const override { return "K5/" + shape_.name; }
    std::string workload_class() const override { return "prefill"; }

    std::string prepare(bool on_cuda) override {
        if (prepared_) return {};
        const int64_t bs = int64_t(shape_.seq_lens.size());
        sum_ = std::accumulate(shape_.seq_lens.begin(), shape_.seq_lens.end(), int64_t{0});
        const int64_t max_pages = (shape_.max_seq_len + k5::kPageSize - 1) / k5::kPageSize;
        int64_t pages_needed = 0;
        for (int64_t len : shape_.seq_lens) pages_needed += (len + k5::kPageSize - 1) / k5::kPageSize;
        const int64_t num_pages = 2 * pages_needed;
        std::mt19937 rng(7);
        buf_ = Memory(size_t(num_pages * k5::kPageBytes));
        for (int64_t i = 0; i < num_pages * k5::kPageBytes / 4; i++) buf_.host<uint32_t>()[i] = uint32_t(rng());
        std::vector<int32_t> ids(static_cast<size_t>(num_pages));
        std::iota(ids.begin(), ids.end(), 0);
        std::shuffle(ids.begin(), ids.end(), rng);
        page_indices_ = Memory(size_t(bs * max_pages) * 4);
        std::fill_n(page_indices_.host<int32_t>(), bs * max_pages, 0);
        reference::KvGatherInputs in;
        size_t next = 0;
        for (int64_t b = 0; b < bs; b++) {
            std::vector<int64_t> row(size_t(max_pages), 0);
            for (int64_t k = 0; k < (shape_.seq_lens[size_t(b)] + k5::kPageSize - 1) / k5::kPageSize; k++) {
                row[size_t(k)] = page_indices_.host<int32_t>()[b * max_pages + k] = ids[next++];
            }
            in.page_indices.push_back(row);
        }
        seq_lens_ = Memory(size_t(bs) * 8);
        std::copy(shape_.seq_lens.begin(), shape_.seq_lens.end(), seq_lens_.host<int64_t>());
        k_out_ = Memory(size_t(sum_ * k5::kD));
        s_out_ = Memory(size_t(sum_ * 4));
        in.buf = buf_.host<uint8_t>();
        in.num_pages = num_pages;
        in.buf_row_stride = k5::kPageBytes;
        in.seq_lens = shape_.seq_lens;
        in.page_size = k5::kPageSize;
        in.head_dim = k5::kD;
        expected_ = reference::get_k_and_s(in);
        if (on_cuda) {
            for (Memory *m : {&buf_, &page_indices_, &seq_lens_, &k_out_, &s_out_}) {
                if (!m->to_device()) return "device copies failed";
            }
        }
        a_.buf = tensor_2d(buf_.data(), LB_UINT8, num_pages, k5::kPageBytes);
        a_.page_indices = tensor_2d(page_indices_.data(), LB_INT32, bs, max_pages);
        a_.seq_lens = tensor_1d(seq_lens_.data(), LB_INT64, bs);
        a_.k_out = tensor_2d(k_out_.data(), LB_UINT8, sum_, k5::kD);
        a_.s_out = tensor_2d(s_out_.data(), LB_UINT8, sum_, 4);
        a_.seq_len_sum = sum_;
        a_.max_seq_len = shape_.max_seq_len;
        a_.page_size = k5::kPageSize;
        a_.index_head_dim = k5::kD;
        a_.variant = LB_BOUNDED;
        prepared_ = true;
        return {};
    }
    lb_status call(const lb_device &device) override { return lb_get_k_and_s(&a_, device); }
    bool poison() override {
        for (Memory *m : {&k_out_, &s_out_}) {
            std::fill_n(m->host<uint8_t>(), m->bytes(), uint8_t(0xa5));
            if (!m->upload()) return false;
        }
        return true;
    }
    std::string check(bool) override {
        if (!k_out_.download() || !s_out_.download()) return "download failed";
        for (size_t i = 0; i < expected_.k_rows.size(); i++) {
            if (k_out_.host<uint8_t>()[i] != expected_.k_rows[i]) {
                return "k_out[" + std::to_string(i / size_t(k5::kD)) + ", " + std::to_string(i % size_t(k5::kD)) +
                       "] differs";
            }
        }
        for (size_t i = 0; i < expected_.s_rows.size(); i++) {
            if (s_out_.host<uint8_t>()[i] != expected_.s_rows[i]) {
                return "s_out[" + std::to_string(i / 4) + ", " + std::to_string(i % 4) + "] differs";
            }
        }
        return {};
    }

private:
    k5::Shape shape_;
    int64_t sum_ = 0;
    bool prepared_ = false;
    Memory buf_, page_indices_, seq_lens_, k_out_, s_out_;
    reference::KvGatherExpected expected_;
    lb_dsa_kv_gather_args a_{};
};

WorkloadList make(bool) {
    WorkloadList w;
    for (const k5::Shape &s : k5::shapes()) w.push_back(std::make_unique<KvGatherWorkload>(s));
    return w;
}

const bool registered = register_kernel({"K5", "lb_k5_", make});

}  // namespace
}  // namespace livebound::autotune
