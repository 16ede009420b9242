// K4 (update_trtllm_mha_graph_metadata) test cases and the helpers the CPU and CUDA tests
// share: spec §4.3's matrix plus awkward cases, the host buffers of one problem (inputs,
// poisoned outputs), the lb_trtllm_mha_graph_metadata_args that point at them (host memory
// or device copies), and the checks against the reference.
//
// Checking rules (spec §4.5 rule 1): every output storage element is poisoned before the
// call (swa_out_cache_loc's view entries hold 123 instead, spec §4.3: the tail must become
// 0); cache_seqlens[0, bs), cu_seqlens_k[1, bs] (and cu_seqlens_q[1, bs] in q modes 1/2)
// and every swa_out_cache_loc entry are compared in full; the live prefix of every
// page-table row exactly; everything else must still hold the poison: cu_seqlens_k[0],
// cu_seqlens_q in q mode 0, LB_BOUNDED columns >= live_i, columns >= max_seq_pages, rows
// >= bs, trailing entries, row padding and a guard past every tensor. LB_FULL_WIDTH must
// write every column below max_seq_pages with the same gather.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "decode_metadata_cases.h"  // HostTensor, MismatchLog, names_argument, kPoison (shared test helpers)
#include "livebound/livebound.h"
#include "reference/trtllm_metadata_reference.h"

namespace livebound::testing::k4 {

constexpr int64_t kPrefill = 123;  // swa_out_cache_loc's view before the call (spec §4.3)

struct TrtllmCase {
    std::string name;
    int64_t bs = 1;
    int32_t seqlen_offset = 0;
    int32_t q_mode = 0;
    bool with_swa = false;
    bool static_width = false;  // max_seq_pages = max_num_pages, else cdiv(max(cache_seqlens), ps)
    int32_t page_size = 128;
    int64_t max_num_pages = 16;
    int64_t pool_rows = 64;
    int64_t max_seq_len = 1500;          // seq_lens ~ U[1, max_seq_len)
    std::vector<int64_t> seq_lens;       // explicit lengths (else random)
    int64_t max_seq_pages = -1;          // >= 0: overrides static_width
    bool negative_live_slots = false;    // -1 at some live page starts (page 0 via -1/PS = 0)
    bool with_out_cache_loc = true;      // false: swa_out_cache_loc is all zeros
    int64_t swa_out_extra = 5;           // swa_out_len = num_out + this (may be negative)
    bool skip_page_table = false;
    bool page_tables_absent = false;     // skip_page_table with no page-table tensors
    int64_t stride_1d = 1;               // stride of every 1-D tensor
    uint32_t seed = 0;
};

inline std::ostream &operator<<(std::ostream &os, const TrtllmCase &c) { return os << c.name << " (seed " << c.seed << ")"; }

// Spec §4.3: bs {1,3,8,17} x seqlen_offset {0,1,4} x q_mode {0,1,2} x with_swa x static_width.
inline std::vector<TrtllmCase> spec_matrix_cases() {
    std::vector<TrtllmCase> cases;
    for (int64_t bs : {1, 3, 8, 17}) {
        for (int32_t off : {0, 1, 4}) {
            for (int32_t q : {0, 1, 2}) {
                for (bool swa : {false, true}) {
                    for (bool sw : {false, true}) {
                        TrtllmCase c;
                        c.bs = bs;
                        c.seqlen_offset = off;
                        c.q_mode = q;
                        c.with_swa = swa;
                        c.static_width = sw;
                        c.name = "bs" + std::to_string(bs) + "_off" + std::to_string(off) + "_q" + std::to_string(q) +
                                 (swa ? "_swa" : "_noswa") + (sw ? "_static" : "_tight");
                        c.seed = 0x4B4u + 7919u * static_cast<uint32_t>(cases.size());
                        cases.push_back(c);
                    }
                }
            }
        }
    }
    return cases;
}

// Awkward cases beyond the spec's matrix.
inline std::vector<TrtllmCase> extra_cases() {
    std::vector<TrtllmCase> cases;
    auto base = [](std::string name, int64_t bs, bool swa) {
        TrtllmCase c;
        c.name = std::move(name);
        c.bs = bs;
        c.with_swa = swa;
        c.q_mode = 1;
        c.static_width = true;
        return c;
    };
    {
        // -1 slots inside the live range: page_table = -1 / 128 = 0 (C truncation), swa page -1.
        TrtllmCase c = base("negative_live_slots_swa", 8, true);
        c.negative_live_slots = true;
        cases.push_back(c);
    }
    {
        // Lengths whose last live page starts past seq_lens (offset 4): its slot is the -1 tail.
        TrtllmCase c = base("offset_reaches_minus1_tail_swa", 6, true);
        c.seqlen_offset = 4;
        c.seq_lens = {128, 127, 126, 125, 256, 1024};
        cases.push_back(c);
    }
    for (int32_t ps : {1, 16, 64}) {
        TrtllmCase c = base("page_size_" + std::to_string(ps) + "_swa", 8, true);
        c.page_size = ps;
        c.max_num_pages = 2048 / ps;
        c.seqlen_offset = 1;
        c.negative_live_slots = true;
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("lengths_exceed_max_seq_pages_swa", 8, true);
        c.max_seq_pages = 3;
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("max_seq_pages_zero_swa", 4, true);
        c.max_seq_pages = 0;
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("zero_and_negative_lengths", 6, true);
        c.seqlen_offset = -3;
        c.seq_lens = {0, 3, 2, 4, 131, 1};  // L = -3, 0, -1, 1, 128, -2
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("out_cache_loc_absent_zeros", 5, true);
        c.with_out_cache_loc = false;
        cases.push_back(c);
    }
    {
        // out_cache_loc longer than swa_out_cache_loc: num_real = swa_out_len, no zero tail.
        TrtllmCase c = base("out_cache_loc_longer_than_swa_out", 5, true);
        c.swa_out_extra = -2;
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("strided_1d_tensors_q1_swa", 9, true);
        c.stride_1d = 2;
        c.seqlen_offset = 1;
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("strided_1d_tensors_q2", 9, false);
        c.stride_1d = 3;
        c.q_mode = 2;
        cases.push_back(c);
    }
    // Either side of the small-batch scan placement's limit (schedules/trtllm_metadata/tuned/:
    // below 32 requests the prefix sums are summed in registers, from 32 in shared memory).
    {
        TrtllmCase c = base("batch_31_q1_swa", 31, true);
        c.pool_rows = 40;
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("batch_32_q0", 32, false);
        c.pool_rows = 40;
        c.q_mode = 0;
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("batch_257_q1_swa", 257, true);
        c.pool_rows = 300;
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("batch_600_q2", 600, false);
        c.pool_rows = 600;
        c.q_mode = 2;
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("skip_page_table_tables_present_swa", 8, true);
        c.skip_page_table = true;
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("skip_page_table_tables_absent_swa", 8, true);
        c.skip_page_table = true;
        c.page_tables_absent = true;
        cases.push_back(c);
    }
    {
        TrtllmCase c = base("empty_batch_swa", 0, true);
        cases.push_back(c);
    }
    for (size_t i = 0; i < cases.size(); ++i) cases[i].seed = 0xE4u + 104729u * static_cast<uint32_t>(i);
    return cases;
}

inline std::vector<TrtllmCase> all_cases() {
    std::vector<TrtllmCase> all = spec_matrix_cases();
    for (auto &c : extra_cases()) all.push_back(c);
    return all;
}

inline std::vector<TrtllmCase> cases_named(const std::vector<std::string> &names) {
    std::vector<TrtllmCase> picked;
    for (const auto &c : all_cases()) {
        if (std::find(names.begin(), names.end(), c.name) != names.end()) picked.push_back(c);
    }
    return picked;
}

struct TrtllmProblem {
    TrtllmCase spec;
    lb_dtype seq_dtype = LB_INT32, index_dtype = LB_INT64, qlens_dtype = LB_INT32;
    int64_t bs = 0, ctx = 0, max_seq_pages = 0, full_slots = 0, swa_out_len = 0;
    std::vector<int64_t> seq_len_values, pool_row_of, qlen_values, swa_mapping_values, out_cache_loc_values;
    std::vector<int32_t> req_to_token_values;

    HostTensor seq_lens, req_pool_indices, req_to_token, swa_mapping, out_cache_loc, qlens;
    HostTensor cache_seqlens, cu_seqlens_k, cu_seqlens_q, page_table, swa_page_table, swa_out_cache_loc;

    std::vector<HostTensor *> inputs() { return {&seq_lens, &req_pool_indices, &req_to_token, &swa_mapping, &out_cache_loc, &qlens}; }
    std::vector<HostTensor *> outputs() {
        return {&cache_seqlens, &cu_seqlens_k, &cu_seqlens_q, &page_table, &swa_page_table, &swa_out_cache_loc};
    }

    std::string describe(lb_variant variant, const std::string &device = "cpu") const {
        std::ostringstream os;
        os << "case=" << spec.name << " seed=" << spec.seed << " seq_lens=" << dtype_name(seq_dtype)
           << " req_pool_indices=" << dtype_name(index_dtype) << " qlens=" << dtype_name(qlens_dtype)
           << " variant=" << (variant == LB_BOUNDED ? "LB_BOUNDED" : "LB_FULL_WIDTH") << " device=" << device
           << " bs=" << bs << " page_size=" << spec.page_size << " seqlen_offset=" << spec.seqlen_offset
           << " q_mode=" << spec.q_mode << " max_seq_pages=" << max_seq_pages << " swa_out_len=" << swa_out_len
           << (spec.with_swa ? " swa" : " no-swa") << (spec.skip_page_table ? " skip_page_table" : "");
        return os.str();
    }

    void set_seq_lens(const std::vector<int64_t> &values) {
        seq_len_values = values;
        for (int64_t i = 0; i < bs; ++i) seq_lens.store(seq_lens.offset(i), values[i]);
    }

    // Every output storage element poisoned; swa_out_cache_loc's view prefilled with 123.
    void poison_outputs() {
        for (HostTensor *t : outputs()) {
            if (t->present) t->fill(kPoison);
        }
        if (swa_out_cache_loc.present) {
            for (int64_t k = 0; k < swa_out_len; ++k) swa_out_cache_loc.store(swa_out_cache_loc.offset(k), kPrefill);
        }
    }

    reference::TrtllmMetadataInputs reference_inputs() const {
        reference::TrtllmMetadataInputs in;
        in.seq_lens = seq_len_values;
        in.req_pool_indices = pool_row_of;
        in.qlens = qlen_values;
        in.req_to_token = req_to_token_values.data();
        in.pool_rows = spec.pool_rows;
        in.ctx = ctx;
        in.swa_mapping = swa_mapping_values;
        in.has_out_cache_loc = spec.with_swa && spec.with_out_cache_loc;
        in.out_cache_loc = out_cache_loc_values;
        in.swa_out_len = swa_out_len;
        in.max_seq_pages = max_seq_pages;
        in.seqlen_offset = spec.seqlen_offset;
        in.page_size = spec.page_size;
        in.q_mode = spec.q_mode;
        in.q_stride = spec.q_mode == 2 ? 3 + static_cast<int32_t>(spec.seed % 5) : 0;
        in.with_swa_pages = spec.with_swa && !spec.skip_page_table;
        return in;
    }

    // The argument block over these tensors; `where(t)` gives the data pointer (host
    // storage, or a device copy).
    lb_trtllm_mha_graph_metadata_args args(lb_variant variant, const std::function<void *(HostTensor &)> &where) {
        lb_trtllm_mha_graph_metadata_args a{};
        auto d = [&](HostTensor &t) { return t.descriptor(t.present ? where(t) : nullptr); };
        a.req_pool_indices = d(req_pool_indices);
        a.seq_lens = d(seq_lens);
        a.req_to_token = d(req_to_token);
        a.swa_mapping = d(swa_mapping);
        a.out_cache_loc = d(out_cache_loc);
        a.qlens = d(qlens);
        a.cache_seqlens = d(cache_seqlens);
        a.cu_seqlens_k = d(cu_seqlens_k);
        a.cu_seqlens_q = d(cu_seqlens_q);
        a.page_table = d(page_table);
        a.swa_page_table = d(swa_page_table);
        a.swa_out_cache_loc = d(swa_out_cache_loc);
        a.bs = bs;
        a.max_seq_pages = max_seq_pages;
        a.seqlen_offset = spec.seqlen_offset;
        a.page_size = spec.page_size;
        a.q_stride = reference_inputs().q_stride;
        a.q_mode = spec.q_mode;
        a.skip_page_table = spec.skip_page_table ? 1 : 0;
        a.variant = variant;
        return a;
    }
    lb_trtllm_mha_graph_metadata_args host_args(lb_variant variant) {
        return args(variant, [](HostTensor &t) { return t.data(); });
    }
};

inline TrtllmProblem make_problem(const TrtllmCase &c, lb_dtype seq_dtype = LB_INT32, lb_dtype index_dtype = LB_INT64,
                                  lb_dtype qlens_dtype = LB_INT32) {
    TrtllmProblem p;
    p.spec = c;
    p.seq_dtype = seq_dtype;
    p.index_dtype = index_dtype;
    p.qlens_dtype = qlens_dtype;
    p.bs = c.bs;
    p.ctx = c.max_num_pages * c.page_size;
    p.full_slots = c.pool_rows * p.ctx;
    std::mt19937 rng(c.seed);

    // seq_lens ~ U[1, max_seq_len) (spec §4.3: randint[1, min(14*128, 1500)]).
    std::vector<int64_t> lengths = c.seq_lens;
    std::uniform_int_distribution<int64_t> len(1, std::min<int64_t>(c.max_seq_len, 14 * 128) - 1);
    while (static_cast<int64_t>(lengths.size()) < p.bs) lengths.push_back(len(rng));

    // max_seq_pages: static max_num_pages or cdiv(max(cache_seqlens), ps).
    if (c.max_seq_pages >= 0) {
        p.max_seq_pages = c.max_seq_pages;
    } else if (c.static_width) {
        p.max_seq_pages = c.max_num_pages;
    } else {
        int64_t most = 0;
        for (int64_t l : lengths) most = std::max(most, l + c.seqlen_offset);
        p.max_seq_pages = std::max<int64_t>(0, (most + c.page_size - 1) / c.page_size);
    }

    // req_pool_indices: distinct random rows while they last, then any rows.
    std::vector<int64_t> rows(c.pool_rows);
    std::iota(rows.begin(), rows.end(), 0);
    std::shuffle(rows.begin(), rows.end(), rng);
    std::uniform_int_distribution<int64_t> any_row(0, c.pool_rows - 1);
    for (int64_t i = 0; i < p.bs; ++i) p.pool_row_of.push_back(i < c.pool_rows ? rows[i] : any_row(rng));

    // req_to_token: [pool_rows, ctx] slots U[0, full_slots); each batch row's positions >=
    // seq_lens are -1 (unused tail), so seqlen_offset can reach a -1 in the live range.
    std::uniform_int_distribution<int32_t> slot(0, static_cast<int32_t>(p.full_slots) - 1);
    p.req_to_token_values.resize(c.pool_rows * p.ctx);
    for (auto &t : p.req_to_token_values) t = slot(rng);
    for (int64_t i = 0; i < p.bs; ++i) {
        for (int64_t pos = std::max<int64_t>(lengths[i], 0); pos < p.ctx; ++pos) {
            p.req_to_token_values[p.pool_row_of[i] * p.ctx + pos] = -1;
        }
    }
    if (c.negative_live_slots) {
        for (int64_t i = 0; i < p.bs; i += 2) {
            for (int64_t pg = 0; pg * c.page_size < lengths[i]; pg += 3) {
                p.req_to_token_values[p.pool_row_of[i] * p.ctx + pg * c.page_size] = -1;
            }
        }
    }

    // SWA mapping: [full_slots + ps + 1] int64, slot -> U[0, full_slots / 2) or -1 (10%),
    // the last entry the -1 sentinel.
    if (c.with_swa) {
        std::uniform_int_distribution<int64_t> swa_slot(0, p.full_slots / 2 - 1);
        std::uniform_int_distribution<int> pct(0, 99);
        for (int64_t s = 0; s < p.full_slots + c.page_size + 1; ++s) {
            p.swa_mapping_values.push_back(pct(rng) < 10 ? -1 : swa_slot(rng));
        }
        p.swa_mapping_values.back() = -1;
        // out_cache_loc: bs + 3 full slots, one injected -1 at index 0.
        const int64_t num_out = p.bs + 3;
        for (int64_t k = 0; k < num_out; ++k) p.out_cache_loc_values.push_back(slot(rng));
        p.out_cache_loc_values[0] = -1;
        p.swa_out_len = std::max<int64_t>(0, num_out + c.swa_out_extra);
        if (!c.with_out_cache_loc) p.out_cache_loc_values.clear();
    }
    if (c.q_mode == 1) {
        std::uniform_int_distribution<int64_t> q(1, 8);
        for (int64_t i = 0; i < p.bs; ++i) p.qlen_values.push_back(q(rng));
    }

    // Tensors.
    const int64_t s1 = c.stride_1d;
    p.seq_lens = HostTensor::contiguous_1d(seq_dtype, p.bs, s1);
    p.seq_lens.fill(7);  // skipped elements: a valid, wrong length
    p.set_seq_lens(lengths);
    p.req_pool_indices = HostTensor::contiguous_1d(index_dtype, p.bs, s1);
    p.req_pool_indices.fill(0);
    for (int64_t i = 0; i < p.bs; ++i) p.req_pool_indices.store(p.req_pool_indices.offset(i), p.pool_row_of[i]);
    p.req_to_token = HostTensor::contiguous_2d(LB_INT32, c.pool_rows, p.ctx, p.ctx);
    for (int64_t e = 0; e < c.pool_rows * p.ctx; ++e) p.req_to_token.store(e, p.req_to_token_values[e]);
    if (c.with_swa) {
        p.swa_mapping = HostTensor::contiguous_1d(LB_INT64, static_cast<int64_t>(p.swa_mapping_values.size()), s1);
        for (size_t s = 0; s < p.swa_mapping_values.size(); ++s) p.swa_mapping.store(p.swa_mapping.offset(s), p.swa_mapping_values[s]);
        if (c.with_out_cache_loc) {
            p.out_cache_loc = HostTensor::contiguous_1d(LB_INT64, static_cast<int64_t>(p.out_cache_loc_values.size()), s1);
            for (size_t k = 0; k < p.out_cache_loc_values.size(); ++k) {
                p.out_cache_loc.store(p.out_cache_loc.offset(k), p.out_cache_loc_values[k]);
            }
        }
        p.swa_out_cache_loc = HostTensor::contiguous_1d(LB_INT64, p.swa_out_len, s1);
    }
    if (c.q_mode == 1) {
        p.qlens = HostTensor::contiguous_1d(qlens_dtype, p.bs, s1);
        for (int64_t i = 0; i < p.bs; ++i) p.qlens.store(p.qlens.offset(i), p.qlen_values[i]);
    }
    p.cache_seqlens = HostTensor::contiguous_1d(LB_INT32, p.bs + 2, s1);
    p.cu_seqlens_k = HostTensor::contiguous_1d(LB_INT32, p.bs + 3, s1);
    // cu_seqlens_q is present in every mode: in mode 0 it must stay untouched.
    p.cu_seqlens_q = HostTensor::contiguous_1d(LB_INT32, p.bs + 3, s1);
    if (!c.page_tables_absent) {
        const int64_t width = c.max_num_pages + 2;
        p.page_table = HostTensor::contiguous_2d(LB_INT32, p.bs + 1, width, width + 3);
        if (c.with_swa) p.swa_page_table = HostTensor::contiguous_2d(LB_INT32, p.bs + 1, width, width + 3);
    }
    p.poison_outputs();
    return p;
}

// ---- checks ----

inline std::string poison_text() { return std::to_string(kPoison) + " (the poison, untouched)"; }

// One 1-D output: view entries [first, first + want.size()) equal `want`; every other
// storage element holds `untouched(e)`.
inline void check_1d(MismatchLog &log, const HostTensor &t, const char *name, int64_t first,
                     const std::vector<int64_t> &want) {
    if (!t.present) return;
    std::vector<int64_t> index(t.storage_elements, -1);
    for (int64_t i = 0; i < t.shape[0]; ++i) index[t.offset(i)] = i;
    for (int64_t e = 0; e < t.storage_elements; ++e) {
        const int64_t got = t.load(e);
        const int64_t i = index[e];
        if (i >= first && i < first + static_cast<int64_t>(want.size())) {
            if (got != want[i - first]) log.add(std::string(name) + "[" + std::to_string(i) + "]", std::to_string(want[i - first]), got);
        } else if (got != kPoison) {
            log.add(std::string(name) + " storage element " + std::to_string(e) +
                        (i >= 0 ? " (view index " + std::to_string(i) + ", must not be written)" : " (outside the view)"),
                    poison_text(), got);
        }
    }
}

template <class T>
std::vector<int64_t> widen(const std::vector<T> &v) {
    return std::vector<int64_t>(v.begin(), v.end());
}

// cache_seqlens, cu_seqlens_k, cu_seqlens_q, swa_out_cache_loc (empty `want` for a
// no-op call: everything must be untouched).
inline ::testing::AssertionResult check_scalars(const TrtllmProblem &p, const reference::TrtllmMetadataExpected &want,
                                                const std::string &context, bool nothing_written = false) {
    MismatchLog log(context + "\ncache_seqlens / cu_seqlens_k / cu_seqlens_q / swa_out_cache_loc");
    const std::vector<int64_t> none;
    check_1d(log, p.cache_seqlens, "cache_seqlens", 0, nothing_written ? none : widen(want.cache_seqlens));
    check_1d(log, p.cu_seqlens_k, "cu_seqlens_k", 1, nothing_written ? none : widen(want.cu_seqlens_k));
    check_1d(log, p.cu_seqlens_q, "cu_seqlens_q", 1, nothing_written ? none : widen(want.cu_seqlens_q));
    if (p.swa_out_cache_loc.present) {
        // The view is fully written: its prefill (123) must be gone; the guard stays poisoned.
        const HostTensor &t = p.swa_out_cache_loc;
        std::vector<int64_t> index(t.storage_elements, -1);
        for (int64_t i = 0; i < t.shape[0]; ++i) index[t.offset(i)] = i;
        for (int64_t e = 0; e < t.storage_elements; ++e) {
            const int64_t got = t.load(e), i = index[e];
            if (i >= 0) {
                const int64_t expect = nothing_written ? kPrefill : want.swa_out_cache_loc[i];
                if (got != expect) log.add("swa_out_cache_loc[" + std::to_string(i) + "]", std::to_string(expect), got);
            } else if (got != kPoison) {
                log.add("swa_out_cache_loc storage element " + std::to_string(e) + " (outside the view)", poison_text(), got);
            }
        }
    }
    return log.result();
}

enum class Expect { kUntouched, kBounded, kFullWidth };

inline ::testing::AssertionResult check_table(const TrtllmProblem &p, const HostTensor &table, const char *name,
                                              const reference::TrtllmMetadataExpected &want,
                                              const std::vector<std::vector<int32_t>> &rows, Expect what,
                                              const std::string &context) {
    MismatchLog log(context + "\n" + name);
    if (!table.present) return log.result();
    std::vector<std::pair<int64_t, int64_t>> position(table.storage_elements, {-1, -1});
    for (int64_t r = 0; r < table.shape[0]; ++r) {
        for (int64_t k = 0; k < table.shape[1]; ++k) position[table.offset(r, k)] = {r, k};
    }
    for (int64_t e = 0; e < table.storage_elements; ++e) {
        const int64_t got = table.load(e);
        const auto [b, k] = position[e];
        const std::string where = b < 0 ? std::string(name) + " storage element " + std::to_string(e) + " (outside the view)"
                                        : std::string(name) + "[b=" + std::to_string(b) + ", p=" + std::to_string(k) + "]";
        const bool in_grid = b >= 0 && b < p.bs && k < p.max_seq_pages;
        if (what == Expect::kUntouched || !in_grid) {
            if (got != kPoison) log.add(where, poison_text(), got);
            continue;
        }
        const int64_t live = want.live_pages[b];
        if (k < live || what == Expect::kFullWidth) {
            const int32_t expect = rows[b][k];
            if (got != expect) {
                log.add(where + (k < live ? " (live, live_i=" : " (dead, full width writes it, live_i=") +
                            std::to_string(live) + ")",
                        std::to_string(expect), got);
            }
        } else if (got != kPoison) {
            log.add(where + " (dead: live_i=" + std::to_string(live) + ", LB_BOUNDED must not write it)", poison_text(), got);
        }
    }
    return log.result();
}

inline ::testing::AssertionResult check_tables(const TrtllmProblem &p, const reference::TrtllmMetadataExpected &want,
                                               lb_variant variant, const std::string &context,
                                               bool nothing_written = false) {
    const Expect what = nothing_written || p.spec.skip_page_table ? Expect::kUntouched
                        : variant == LB_BOUNDED                   ? Expect::kBounded
                                                                  : Expect::kFullWidth;
    auto r = check_table(p, p.page_table, "page_table", want, want.page_rows, what, context);
    if (!r) return r;
    return check_table(p, p.swa_page_table, "swa_page_table", want, want.swa_page_rows, what, context);
}

// The live prefixes of two runs (LB_FULL_WIDTH, LB_BOUNDED) are identical.
inline ::testing::AssertionResult live_prefixes_identical(const TrtllmProblem &full, const TrtllmProblem &bounded,
                                                          const reference::TrtllmMetadataExpected &want,
                                                          const std::string &context) {
    MismatchLog log(context + "\nLB_FULL_WIDTH live prefix vs LB_BOUNDED live prefix");
    auto compare = [&](const HostTensor &a, const HostTensor &b, const char *name) {
        if (!a.present) return;
        for (int64_t r = 0; r < full.bs; ++r) {
            for (int64_t k = 0; k < want.live_pages[r]; ++k) {
                const int64_t x = b.load(b.offset(r, k)), y = a.load(a.offset(r, k));
                if (x != y) log.add(std::string(name) + "[b=" + std::to_string(r) + ", p=" + std::to_string(k) + "]",
                                    std::to_string(x) + " (LB_BOUNDED)", y);
            }
        }
    };
    compare(full.page_table, bounded.page_table, "page_table");
    compare(full.swa_page_table, bounded.swa_page_table, "swa_page_table");
    return log.result();
}

// Every output storage element as before the call (after a rejected call).
inline ::testing::AssertionResult outputs_untouched(const TrtllmProblem &p, const std::string &context) {
    reference::TrtllmMetadataExpected none;
    auto r = check_scalars(p, none, context, true);
    if (!r) return r;
    return check_tables(p, none, LB_BOUNDED, context, true);
}

}  // namespace livebound::testing::k4
