// Device copies of an attention call's argument block (K7 lb_extend_attention_args, K8
// lb_extend_attention_unified_args) for the CUDA suites: every present tensor of the host
// block gets a cuMemAlloc copy of the bytes its view spans, and `args` is the same block
// with device pointers. Absent tensors stay absent; a host nullptr (an empty std::vector's
// data()) stays nullptr. Needs the device's primary context current (CudaFixture).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"           // tensor_bytes, viewed_tensor
#include "cuda_test_util.h"  // DeviceBuffer
#include "livebound/extend_attention.h"
#include "livebound/livebound.h"

namespace livebound::testing {

template <class Args>
struct AttentionDeviceArgs {
    using Member = lb_tensor Args::*;
    struct Named {
        const char *name;
        Member member;
    };

    Args args{};
    Args host{};
    std::vector<std::pair<Member, DeviceBuffer>> buffers;

    // Mirrors the tensors of `h` named in `tensors`; "" or "<tensor>: <error>". A tensor whose
    // host storage starts where an earlier one's does, inside its span (a view of it, as
    // MLA's v_buffer of k_buffer), is the same view of that tensor's device copy.
    template <size_t N>
    std::string mirror(const Args &h, const Named (&tensors)[N]) {
        host = h;
        args = h;
        std::vector<const lb_tensor *> all;
        for (const Named &t : tensors) all.push_back(&(h.*t.member));
        for (size_t i = 0; i < N; i++) {
            const Named &t = tensors[i];
            const lb_tensor &src = h.*t.member;
            if (src.data == nullptr) continue;
            if (int e = viewed_tensor(all, i); e >= 0) {
                (args.*t.member).data = (args.*tensors[e].member).data;
                continue;
            }
            const size_t bytes = tensor_bytes(src);
            DeviceBuffer buffer;
            std::string error = buffer.allocate(bytes);
            if (error.empty() && bytes > 0) error = buffer.upload(src.data, bytes);
            if (!error.empty()) return std::string(t.name) + ": " + error;
            (args.*t.member).data = buffer.pointer();
            buffers.emplace_back(t.member, std::move(buffer));
        }
        return {};
    }
    const DeviceBuffer *find(Member m) const {
        for (const auto &[member, buffer] : buffers) {
            if (member == m) return &buffer;
        }
        return nullptr;
    }
    // Host -> device again for one tensor (its host storage changed). A zero-byte tensor
    // (e.g. the output of a batch without rows: T = 0) has nothing to copy.
    std::string upload(Member m) const {
        const size_t bytes = tensor_bytes(host.*m);
        if (bytes == 0) return {};
        const DeviceBuffer *b = find(m);
        if (b == nullptr) return "upload: no device copy";
        return b->upload((host.*m).data, bytes);
    }
    // Device -> host storage for one tensor (nothing for a zero-byte one, as upload()).
    std::string download(Member m) const {
        const size_t bytes = tensor_bytes(host.*m);
        if (bytes == 0) return {};
        const DeviceBuffer *b = find(m);
        if (b == nullptr) return "download: no device copy";
        return b->download((host.*m).data, bytes);
    }
};

// Every tensor of a K7 / K8 argument block, under its argument name (what mirror() copies,
// what the error tests put in host memory one by one).
inline const AttentionDeviceArgs<lb_extend_attention_args>::Named kExtendTensors[] = {
    {"q_extend", &lb_extend_attention_args::q_extend},
    {"k_extend", &lb_extend_attention_args::k_extend},
    {"v_extend", &lb_extend_attention_args::v_extend},
    {"o_extend", &lb_extend_attention_args::o_extend},
    {"k_buffer", &lb_extend_attention_args::k_buffer},
    {"v_buffer", &lb_extend_attention_args::v_buffer},
    {"qo_indptr", &lb_extend_attention_args::qo_indptr},
    {"kv_indptr", &lb_extend_attention_args::kv_indptr},
    {"kv_indices", &lb_extend_attention_args::kv_indices},
    {"sinks", &lb_extend_attention_args::sinks},
    {"lse_extend", &lb_extend_attention_args::lse_extend},
    {"custom_mask", &lb_extend_attention_args::custom_mask},
    {"mask_indptr", &lb_extend_attention_args::mask_indptr},
    {"window_kv_offsets", &lb_extend_attention_args::window_kv_offsets},
};
inline const AttentionDeviceArgs<lb_extend_attention_unified_args>::Named kUnifiedTensors[] = {
    {"q", &lb_extend_attention_unified_args::q},
    {"o", &lb_extend_attention_unified_args::o},
    {"k_buffer", &lb_extend_attention_unified_args::k_buffer},
    {"v_buffer", &lb_extend_attention_unified_args::v_buffer},
    {"qo_indptr", &lb_extend_attention_unified_args::qo_indptr},
    {"kv_indptr", &lb_extend_attention_unified_args::kv_indptr},
    {"kv_indices", &lb_extend_attention_unified_args::kv_indices},
    {"prefix_lens", &lb_extend_attention_unified_args::prefix_lens},
    {"sinks", &lb_extend_attention_unified_args::sinks},
    {"custom_mask", &lb_extend_attention_unified_args::custom_mask},
    {"mask_indptr", &lb_extend_attention_unified_args::mask_indptr},
};

// ---- garbage in host index tensors (the CUDA suites' garbage tests) ----

// Element i of a host 1-D index tensor (int32 or int64) set to v (int32: int32(v)).
inline void store_index(const lb_tensor &t, int64_t i, int64_t v) {
    if (t.dtype == LB_INT64) {
        static_cast<int64_t *>(t.data)[i * t.strides[0]] = v;
    } else {
        static_cast<int32_t *>(t.data)[i * t.strides[0]] = static_cast<int32_t>(v);
    }
}

// A huge index of t's dtype: int64 2^40 - 1 (its low word, the int32 view the runtime
// passes, is -1), int32 INT32_MAX.
inline int64_t huge_index(const lb_tensor &t) {
    return t.dtype == LB_INT64 ? (int64_t{1} << 40) - 1 : int64_t{INT32_MAX};
}

// What a garbage test wrote: a description, and the requests whose rows may show it.
struct Injected {
    std::string what;
    std::vector<int64_t> requests;
};

// The index arguments the garbage tests corrupt (prefix_lens: K8 only).
enum class IndexGarbage { kv_indices, kv_indptr, prefix_lens, mask_indptr, qo_indptr };

inline void store_prefix_lens_garbage(lb_extend_attention_args *) {}
inline void store_prefix_lens_garbage(lb_extend_attention_unified_args *a) {
    // Negative, and past the request's list (P + E): requests 1 and 3.
    store_index(a->prefix_lens, 1, -3);
    store_index(a->prefix_lens, 3, huge_index(a->prefix_lens));
}

// Writes garbage of kind g into the host index tensors of a K7 or K8 argument block `a`
// (before it is mirrored); p is its clean problem (5 requests, request 2 with >= 6 list
// keys).
template <class Problem, class Args>
Injected inject_index_garbage(IndexGarbage g, const Problem &p, Args *a) {
    switch (g) {
        case IndexGarbage::kv_indices: {
            // Request 2's slots: negative, num_slots, 2^30, INT32_MAX, huge, 2^40 / INT32_MIN.
            const int64_t k0 = p.kv_indptr[2];
            const int64_t slots[] = {-1, p.num_slots, int64_t{1} << 30, INT32_MAX, huge_index(a->kv_indices),
                                     a->kv_indices.dtype == LB_INT64 ? int64_t{1} << 40 : int64_t{INT32_MIN}};
            for (int i = 0; i < 6; i++) store_index(a->kv_indices, k0 + i, slots[i]);
            return {"kv_indices[" + std::to_string(k0) + " ..] of request 2", {2}};
        }
        case IndexGarbage::kv_indptr:
            // Past len(kv_indices), then negative (non-monotone): requests 1, 2 and 3's lists.
            store_index(a->kv_indptr, 2, huge_index(a->kv_indptr));
            store_index(a->kv_indptr, 3, -7);
            return {"kv_indptr[2] huge, kv_indptr[3] = -7", {1, 2, 3}};
        case IndexGarbage::prefix_lens:
            store_prefix_lens_garbage(a);
            return {"prefix_lens[1] = -3, prefix_lens[3] huge", {1, 3}};
        case IndexGarbage::mask_indptr:
            // Before the mask, 2^40, past its end: requests 1, 2 and 3.
            store_index(a->mask_indptr, 1, -5);
            store_index(a->mask_indptr, 2, int64_t{1} << 40);
            store_index(a->mask_indptr, 3, int64_t(p.custom_mask.size()) + 1000);
            return {"mask_indptr[1..3] = -5, 2^40, past the mask", {1, 2, 3}};
        case IndexGarbage::qo_indptr:
            store_index(a->qo_indptr, 1, huge_index(a->qo_indptr));
            store_index(a->qo_indptr, 2, -3);
            store_index(a->qo_indptr, 3, int64_t{1} << 30);
            store_index(a->qo_indptr, p.B, INT32_MAX);
            return {"qo_indptr[1..3] = huge, -3, 2^30, qo_indptr[B] = INT32_MAX", {0, 1, 2, 3, 4}};
    }
    return {};
}

}  // namespace livebound::testing
