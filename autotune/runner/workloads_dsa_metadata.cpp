// K2 fused_dsa_decode_metadata and K3 fused_dsa_target_verify_metadata workloads for the
// autotune runner: table E's cases (width 16384, real pages of 64, top-k 2048, both tables
// written, int64 seq_lens). K2: skip (kv 1024) at bs 1 / 8 / 64, half_live (kv 8192, bs 8)
// and noskip (every column live, bs 64). K3: skip at bs 1 / 8 / 64 with next_n 4 and
// paged_mqa_ctx_lens_2d (bench_dsa_metadata's K3 rows). The expected outputs are the plain
// C++ reference's (tests/reference/), exactly: every 1-D output, K3's ctx lengths, and each
// table row's live prefix (columns past it are not the kernel's to write).
#include <random>

#include "reference/dsa_metadata_reference.h"
#include "runner.h"

namespace livebound::autotune {
namespace {

constexpr int64_t kWidth = 16384, kPoolRows = 128;
constexpr int32_t kRps = 64, kTopk = 2048;
constexpr uint32_t kPoison = 0x7f7f7f7fu;

class DsaWorkload : public Workload {
public:
    // next_n 0: K2; else K3 with next_n draft tokens per request.
    DsaWorkload(std::string name, int64_t bs, int64_t seq_len, int32_t next_n = 0)
        : name_(std::move(name)), bs_(bs), seq_(seq_len), next_n_(next_n), rows_(bs * (next_n > 0 ? next_n : 1)) {}
    std::string name() const override { return name_; }
    std::string workload_class() const override { return "decode"; }

    std::string prepare(bool on_cuda) override {
        if (prepared_) return {};
        r2t_ = Memory(size_t(kPoolRows * kWidth) * 4);
        std::mt19937 rng(11);
        std::uniform_int_distribution<int32_t> slot(0, (1 << 26) - 1);
        for (int64_t i = 0; i < kPoolRows * kWidth; i++) r2t_.host<int32_t>()[i] = slot(rng);
        seq_lens_ = Memory(size_t(bs_) * 8);
        rpi_ = Memory(size_t(bs_) * 8);
        for (int64_t b = 0; b < bs_; b++) {
            seq_lens_.host<int64_t>()[b] = seq_;
            rpi_.host<int64_t>()[b] = (b * 7 + 1) % kPoolRows;
        }
        const int64_t real_cols = kWidth / kRps;
        cache_ = Memory(size_t(bs_) * 4);
        cu_ = Memory(size_t(bs_ + 1) * 4);
        dsa_ = Memory(size_t(rows_) * 4);
        dsa_cu_ = Memory(size_t(rows_ + 1) * 4);
        expanded_ = Memory(size_t(next_n_ > 0 ? rows_ : 0) * 4);
        ctx_ = Memory(size_t(next_n_ > 0 ? rows_ : 0) * 4);
        pt1_ = Memory(size_t(rows_ * kWidth) * 4);
        real_ = Memory(size_t(rows_ * real_cols) * 4);
        reference::DsaMetadataInputs in;
        in.seq_lens.assign(seq_lens_.host<int64_t>(), seq_lens_.host<int64_t>() + bs_);
        in.req_pool_indices.assign(rpi_.host<int64_t>(), rpi_.host<int64_t>() + bs_);
        in.req_to_token = r2t_.host<int32_t>();
        in.pool_rows = kPoolRows;
        in.ctx = kWidth;
        in.row_stride = kWidth;
        in.width = kWidth;
        in.topk = kTopk;
        in.real_page_size = kRps;
        in.next_n = next_n_;
        expected_ = reference::dsa_metadata(in);
        if (on_cuda) {
            for (Memory *m : all()) {
                if (!m->to_device()) return "device copies failed";
            }
        }
        if (next_n_ > 0) {
            k3_.seq_lens = tensor_1d(seq_lens_.data(), LB_INT64, bs_);
            k3_.req_pool_indices = tensor_1d(rpi_.data(), LB_INT64, bs_);
            k3_.req_to_token = tensor_2d(r2t_.data(), LB_INT32, kPoolRows, kWidth);
            k3_.cache_seqlens = tensor_1d(cache_.data(), LB_INT32, bs_);
            k3_.cu_seqlens_k = tensor_1d(cu_.data(), LB_INT32, bs_ + 1);
            k3_.seqlens_expanded = tensor_1d(expanded_.data(), LB_INT32, rows_);
            k3_.dsa_cache_seqlens = tensor_1d(dsa_.data(), LB_INT32, rows_);
            k3_.dsa_cu_seqlens_k = tensor_1d(dsa_cu_.data(), LB_INT32, rows_ + 1);
            k3_.paged_mqa_ctx_lens_2d = tensor_2d(ctx_.data(), LB_INT32, bs_, next_n_);
            k3_.page_table_1 = tensor_2d(pt1_.data(), LB_INT32, rows_, kWidth);
            k3_.real_page_table = tensor_2d(real_.data(), LB_INT32, rows_, real_cols);
            k3_.max_seqlen_k = kWidth;
            k3_.dsa_index_topk = kTopk;
            k3_.real_page_size = kRps;
            k3_.next_n = next_n_;
            k3_.variant = LB_BOUNDED;
            prepared_ = true;
            return {};
        }
        a_.seq_lens = tensor_1d(seq_lens_.data(), LB_INT64, bs_);
        a_.req_pool_indices = tensor_1d(rpi_.data(), LB_INT64, bs_);
        a_.req_to_token = tensor_2d(r2t_.data(), LB_INT32, kPoolRows, kWidth);
        a_.cache_seqlens = tensor_1d(cache_.data(), LB_INT32, bs_);
        a_.cu_seqlens_k = tensor_1d(cu_.data(), LB_INT32, bs_ + 1);
        a_.dsa_cache_seqlens = tensor_1d(dsa_.data(), LB_INT32, bs_);
        a_.dsa_cu_seqlens_k = tensor_1d(dsa_cu_.data(), LB_INT32, bs_ + 1);
        a_.page_table_1 = tensor_2d(pt1_.data(), LB_INT32, bs_, kWidth);
        a_.real_page_table = tensor_2d(real_.data(), LB_INT32, bs_, real_cols);
        a_.max_len = kWidth;
        a_.dsa_index_topk = kTopk;
        a_.real_page_size = kRps;
        a_.variant = LB_BOUNDED;
        prepared_ = true;
        return {};
    }
    lb_status call(const lb_device &device) override {
        return next_n_ > 0 ? lb_fused_dsa_target_verify_metadata(&k3_, device) : lb_fused_dsa_decode_metadata(&a_, device);
    }
    bool poison() override {
        for (Memory *m : outputs()) {
            fill32(*m, kPoison);
            if (!m->upload()) return false;
        }
        return true;
    }
    std::string check(bool) override {
        for (Memory *m : outputs()) {
            if (!m->download()) return "download failed";
        }
        auto vec = [](Memory &m, const std::vector<int32_t> &want, const char *what) -> std::string {
            for (size_t i = 0; i < want.size(); i++) {
                if (m.host<int32_t>()[i] != want[i]) {
                    return std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(m.host<int32_t>()[i]) +
                           ", expected " + std::to_string(want[i]);
                }
            }
            return {};
        };
        for (const std::string &e : {vec(cache_, expected_.cache_seqlens, "cache_seqlens"),
                                     vec(cu_, expected_.cu_seqlens_k, "cu_seqlens_k"),
                                     vec(dsa_, expected_.dsa_cache_seqlens, "dsa_cache_seqlens"),
                                     vec(dsa_cu_, expected_.dsa_cu_seqlens_k, "dsa_cu_seqlens_k")}) {
            if (!e.empty()) return e;
        }
        if (next_n_ > 0) {
            std::vector<int32_t> ctx;
            for (const auto &row : expected_.ctx_lens_2d) ctx.insert(ctx.end(), row.begin(), row.end());
            for (const std::string &e : {vec(expanded_, expected_.seqlens_expanded, "seqlens_expanded"),
                                         vec(ctx_, ctx, "paged_mqa_ctx_lens_2d")}) {
                if (!e.empty()) return e;
            }
        }
        const int64_t real_cols = kWidth / kRps;
        for (int64_t b = 0; b < rows_; b++) {
            for (int64_t c = 0; c < expected_.live_tokens[size_t(b)]; c++) {
                if (pt1_.host<int32_t>()[b * kWidth + c] != expected_.page_table_1[size_t(b)][size_t(c)]) {
                    return "page_table_1[" + std::to_string(b) + ", " + std::to_string(c) + "] differs";
                }
            }
            for (int64_t j = 0; j < expected_.live_pages[size_t(b)]; j++) {
                if (real_.host<int32_t>()[b * real_cols + j] != expected_.real_page_table[size_t(b)][size_t(j)]) {
                    return "real_page_table[" + std::to_string(b) + ", " + std::to_string(j) + "] differs";
                }
            }
        }
        return {};
    }

private:
    std::vector<Memory *> outputs() {
        std::vector<Memory *> o = {&cache_, &cu_, &dsa_, &dsa_cu_, &pt1_, &real_};
        if (next_n_ > 0) o.insert(o.end(), {&expanded_, &ctx_});
        return o;
    }
    std::vector<Memory *> all() {
        std::vector<Memory *> a = outputs();
        a.insert(a.end(), {&r2t_, &seq_lens_, &rpi_});
        return a;
    }
    std::string name_;
    int64_t bs_, seq_;
    int32_t next_n_;
    int64_t rows_;
    bool prepared_ = false;
    Memory r2t_, seq_lens_, rpi_, cache_, cu_, dsa_, dsa_cu_, expanded_, ctx_, pt1_, real_;
    reference::DsaMetadataExpected expected_;
    lb_dsa_decode_metadata_args a_{};
    lb_dsa_target_verify_metadata_args k3_{};
};

WorkloadList make_k2(bool) {
    WorkloadList w;
    for (int64_t bs : {1, 8, 64}) {
        w.push_back(std::make_unique<DsaWorkload>("K2/skip/bs:" + std::to_string(bs), bs, 1024));
    }
    w.push_back(std::make_unique<DsaWorkload>("K2/half_live/bs:8", 8, 8192));
    w.push_back(std::make_unique<DsaWorkload>("K2/noskip/bs:64", 64, kWidth));
    return w;
}

WorkloadList make_k3(bool) {
    WorkloadList w;
    for (int64_t bs : {1, 8, 64}) {
        w.push_back(std::make_unique<DsaWorkload>("K3/skip/next_n:4/bs:" + std::to_string(bs), bs, 1024, 4));
    }
    return w;
}

const bool registered_k2 = register_kernel({"K2", "lb_k2_", make_k2});
const bool registered_k3 = register_kernel({"K3", "lb_k3_", make_k3});

}  // namespace
}  // namespace livebound::autotune
