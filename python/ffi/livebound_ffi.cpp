// livebound's compiled Python binding (issue 12), on Apache TVM FFI: one shared library,
// liblivebound_ffi.so, whose functions Python loads with tvm_ffi.load_module() and calls
// with torch tensors, numpy arrays or anything else that speaks DLPack. It links the C
// ABI (livebound) and TVM FFI's C library, and nothing of Python: the same binary serves
// every Python version the tvm_ffi wheel supports, and no torch is needed to build it.
//
// Per call: each DLPack tensor becomes an lb_tensor (no copy), the device is the first
// tensor's, the stream is TVM FFI's current stream for that device (tvm_ffi sets it to
// torch's current stream when a torch CUDA tensor is passed), and a refused call raises
// ValueError (bad argument) or RuntimeError (device, unsupported, kernel) with
// lb_last_error()'s text, which names the argument. Validation is the C ABI's; nothing is
// checked twice. python/livebound/ffi.py gives these functions SGLang's names and keywords.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>

#include <cstdint>
#include <string>

#include "livebound/livebound.h"

namespace livebound::ffi {
namespace {

using tvm::ffi::Optional;
using tvm::ffi::TensorView;

// DLPack's element type as livebound's (LB_DTYPE_NONE for any other: the C ABI then refuses
// the tensor by name, listing the dtypes it takes).
lb_dtype dtype_of(DLDataType t) {
    if (t.lanes != 1) return LB_DTYPE_NONE;
    switch (t.code) {
    case kDLInt: return t.bits == 32 ? LB_INT32 : t.bits == 64 ? LB_INT64 : LB_DTYPE_NONE;
    case kDLUInt: return t.bits == 8 ? LB_UINT8 : LB_DTYPE_NONE;
    case kDLBool: return t.bits == 8 ? LB_UINT8 : LB_DTYPE_NONE;  // torch.bool masks: one byte each
    case kDLFloat: return t.bits == 16 ? LB_FLOAT16 : t.bits == 32 ? LB_FLOAT32 : LB_DTYPE_NONE;
    case kDLBfloat: return t.bits == 16 ? LB_BFLOAT16 : LB_DTYPE_NONE;
    case kDLFloat8_e4m3fn: return t.bits == 8 ? LB_FLOAT8_E4M3FN : LB_DTYPE_NONE;
    default: return LB_DTYPE_NONE;
    }
}

[[noreturn]] void refuse(const char *name, const std::string &why) {
    TVM_FFI_THROW(ValueError) << "argument '" << name << "': " << why;
    __builtin_unreachable();  // (the error builder throws when the statement ends)
}

// The lb_tensor view of a DLPack tensor (its byte offset folded into the pointer).
lb_tensor tensor_of(const TensorView &t, const char *name) {
    if (t.ndim() < 1 || t.ndim() > LB_MAX_DIMS) {
        refuse(name, "has " + std::to_string(t.ndim()) + " dimensions (1 to " + std::to_string(LB_MAX_DIMS) +
                         " are taken)");
    }
    lb_tensor out{};
    out.data = t.data_ptr() == nullptr ? nullptr : static_cast<char *>(t.data_ptr()) + t.byte_offset();
    out.dtype = dtype_of(t.dtype());
    out.ndim = t.ndim();
    for (int i = 0; i < t.ndim(); i++) {
        out.shape[i] = t.size(i);
        out.strides[i] = t.stride(i);  // (TVM FFI fills DLPack's NULL strides in)
    }
    return out;
}
lb_tensor optional_tensor(const Optional<TensorView> &t, const char *name) {
    return t.has_value() ? tensor_of(*t, name) : lb_tensor{};
}

// The call's device: the first tensor's (the C ABI checks that every other tensor lives
// there), with TVM FFI's current stream on CUDA.
lb_device device_of(const TensorView &t, const char *name) {
    const DLDevice d = t.device();
    switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost: return lb_device{LB_DEVICE_CPU, 0, nullptr};
    case kDLCUDA: return lb_device{LB_DEVICE_CUDA, d.device_id, TVMFFIEnvGetStream(kDLCUDA, d.device_id)};
    default:
        refuse(name, "is on DLPack device type " + std::to_string(int(d.device_type)) +
                         " (livebound runs on the CPU and on CUDA devices)");
    }
}

void check(lb_status status) {
    if (status == LB_OK) return;
    if (status == LB_ERROR_INVALID_ARGUMENT) TVM_FFI_THROW(ValueError) << lb_last_error();
    TVM_FFI_THROW(RuntimeError) << lb_last_error();
}

lb_variant variant_of(int64_t v) { return static_cast<lb_variant>(static_cast<int32_t>(v)); }

// K1, lb_normal_decode_set_metadata: argument order as lb_decode_metadata_args.
void normal_decode_set_metadata(TensorView seq_lens, TensorView req_pool_indices, TensorView req_to_token,
                                Optional<TensorView> full_to_swa, TensorView cache_seqlens, TensorView cu_seqlens_k,
                                Optional<TensorView> page_table, Optional<TensorView> swa_page_table,
                                int64_t max_seq_pages, int64_t seq_len_delta, int64_t page_size,
                                bool skip_page_table, int64_t variant) {
    lb_decode_metadata_args a{};
    a.seq_lens = tensor_of(seq_lens, "seq_lens");
    a.req_pool_indices = tensor_of(req_pool_indices, "req_pool_indices");
    a.req_to_token = tensor_of(req_to_token, "req_to_token");
    a.full_to_swa = optional_tensor(full_to_swa, "full_to_swa");
    a.cache_seqlens = tensor_of(cache_seqlens, "cache_seqlens");
    a.cu_seqlens_k = tensor_of(cu_seqlens_k, "cu_seqlens_k");
    a.page_table = optional_tensor(page_table, "page_table");
    a.swa_page_table = optional_tensor(swa_page_table, "swa_page_table");
    a.max_seq_pages = max_seq_pages;
    a.seq_len_delta = static_cast<int32_t>(seq_len_delta);
    a.page_size = static_cast<int32_t>(page_size);
    a.skip_page_table = skip_page_table;
    a.variant = variant_of(variant);
    check(lb_normal_decode_set_metadata(&a, device_of(seq_lens, "seq_lens")));
}

// K2, lb_fused_dsa_decode_metadata: argument order as lb_dsa_decode_metadata_args.
void fused_dsa_decode_metadata(TensorView seq_lens, TensorView req_pool_indices, TensorView req_to_token,
                               TensorView cache_seqlens, TensorView cu_seqlens_k, Optional<TensorView> page_table_1,
                               TensorView dsa_cache_seqlens, TensorView dsa_cu_seqlens_k,
                               Optional<TensorView> real_page_table, int64_t max_len, int64_t dsa_index_topk,
                               int64_t real_page_size, int64_t index_kpool, int64_t variant) {
    lb_dsa_decode_metadata_args a{};
    a.seq_lens = tensor_of(seq_lens, "seq_lens");
    a.req_pool_indices = tensor_of(req_pool_indices, "req_pool_indices");
    a.req_to_token = tensor_of(req_to_token, "req_to_token");
    a.cache_seqlens = tensor_of(cache_seqlens, "cache_seqlens");
    a.cu_seqlens_k = tensor_of(cu_seqlens_k, "cu_seqlens_k");
    a.page_table_1 = optional_tensor(page_table_1, "page_table_1");
    a.dsa_cache_seqlens = tensor_of(dsa_cache_seqlens, "dsa_cache_seqlens");
    a.dsa_cu_seqlens_k = tensor_of(dsa_cu_seqlens_k, "dsa_cu_seqlens_k");
    a.real_page_table = optional_tensor(real_page_table, "real_page_table");
    a.max_len = max_len;
    a.dsa_index_topk = static_cast<int32_t>(dsa_index_topk);
    a.real_page_size = static_cast<int32_t>(real_page_size);
    a.index_kpool = static_cast<int32_t>(index_kpool);
    a.variant = variant_of(variant);
    check(lb_fused_dsa_decode_metadata(&a, device_of(seq_lens, "seq_lens")));
}

// K3, lb_fused_dsa_target_verify_metadata: argument order as lb_dsa_target_verify_metadata_args.
void fused_dsa_target_verify_metadata(TensorView seq_lens, TensorView req_pool_indices, TensorView req_to_token,
                                      TensorView cache_seqlens, TensorView cu_seqlens_k,
                                      Optional<TensorView> page_table_1, TensorView seqlens_expanded,
                                      TensorView dsa_cache_seqlens, TensorView dsa_cu_seqlens_k,
                                      Optional<TensorView> real_page_table, Optional<TensorView> paged_mqa_ctx_lens_2d,
                                      int64_t max_seqlen_k, int64_t dsa_index_topk, int64_t real_page_size,
                                      int64_t next_n, int64_t index_kpool, int64_t variant) {
    lb_dsa_target_verify_metadata_args a{};
    a.seq_lens = tensor_of(seq_lens, "seq_lens");
    a.req_pool_indices = tensor_of(req_pool_indices, "req_pool_indices");
    a.req_to_token = tensor_of(req_to_token, "req_to_token");
    a.cache_seqlens = tensor_of(cache_seqlens, "cache_seqlens");
    a.cu_seqlens_k = tensor_of(cu_seqlens_k, "cu_seqlens_k");
    a.page_table_1 = optional_tensor(page_table_1, "page_table_1");
    a.seqlens_expanded = tensor_of(seqlens_expanded, "seqlens_expanded");
    a.dsa_cache_seqlens = tensor_of(dsa_cache_seqlens, "dsa_cache_seqlens");
    a.dsa_cu_seqlens_k = tensor_of(dsa_cu_seqlens_k, "dsa_cu_seqlens_k");
    a.real_page_table = optional_tensor(real_page_table, "real_page_table");
    a.paged_mqa_ctx_lens_2d = optional_tensor(paged_mqa_ctx_lens_2d, "paged_mqa_ctx_lens_2d");
    a.max_seqlen_k = max_seqlen_k;
    a.dsa_index_topk = static_cast<int32_t>(dsa_index_topk);
    a.real_page_size = static_cast<int32_t>(real_page_size);
    a.next_n = static_cast<int32_t>(next_n);
    a.index_kpool = static_cast<int32_t>(index_kpool);
    a.variant = variant_of(variant);
    check(lb_fused_dsa_target_verify_metadata(&a, device_of(seq_lens, "seq_lens")));
}

// K4, lb_update_trtllm_mha_graph_metadata: argument order as lb_trtllm_mha_graph_metadata_args.
void update_trtllm_mha_graph_metadata(TensorView req_pool_indices, TensorView seq_lens, TensorView req_to_token,
                                      Optional<TensorView> swa_mapping, Optional<TensorView> out_cache_loc,
                                      Optional<TensorView> qlens, TensorView cache_seqlens, TensorView cu_seqlens_k,
                                      Optional<TensorView> cu_seqlens_q, Optional<TensorView> page_table,
                                      Optional<TensorView> swa_page_table, Optional<TensorView> swa_out_cache_loc,
                                      int64_t bs, int64_t max_seq_pages, int64_t seqlen_offset, int64_t page_size,
                                      int64_t q_stride, int64_t q_mode, bool skip_page_table, int64_t variant) {
    lb_trtllm_mha_graph_metadata_args a{};
    a.req_pool_indices = tensor_of(req_pool_indices, "req_pool_indices");
    a.seq_lens = tensor_of(seq_lens, "seq_lens");
    a.req_to_token = tensor_of(req_to_token, "req_to_token");
    a.swa_mapping = optional_tensor(swa_mapping, "swa_mapping");
    a.out_cache_loc = optional_tensor(out_cache_loc, "out_cache_loc");
    a.qlens = optional_tensor(qlens, "qlens");
    a.cache_seqlens = tensor_of(cache_seqlens, "cache_seqlens");
    a.cu_seqlens_k = tensor_of(cu_seqlens_k, "cu_seqlens_k");
    a.cu_seqlens_q = optional_tensor(cu_seqlens_q, "cu_seqlens_q");
    a.page_table = optional_tensor(page_table, "page_table");
    a.swa_page_table = optional_tensor(swa_page_table, "swa_page_table");
    a.swa_out_cache_loc = optional_tensor(swa_out_cache_loc, "swa_out_cache_loc");
    a.bs = bs;
    a.max_seq_pages = max_seq_pages;
    a.seqlen_offset = static_cast<int32_t>(seqlen_offset);
    a.page_size = static_cast<int32_t>(page_size);
    a.q_stride = static_cast<int32_t>(q_stride);
    a.q_mode = static_cast<int32_t>(q_mode);
    a.skip_page_table = skip_page_table;
    a.variant = variant_of(variant);
    check(lb_update_trtllm_mha_graph_metadata(&a, device_of(seq_lens, "seq_lens")));
}

// K5, lb_get_k_and_s: argument order as lb_dsa_kv_gather_args.
void get_k_and_s(TensorView buf, TensorView page_indices, TensorView seq_lens, TensorView k_out, TensorView s_out,
                 int64_t seq_len_sum, int64_t max_seq_len, int64_t page_size, int64_t index_head_dim, int64_t variant) {
    lb_dsa_kv_gather_args a{};
    a.buf = tensor_of(buf, "buf");
    a.page_indices = tensor_of(page_indices, "page_indices");
    a.seq_lens = tensor_of(seq_lens, "seq_lens");
    a.k_out = tensor_of(k_out, "k_out");
    a.s_out = tensor_of(s_out, "s_out");
    a.seq_len_sum = seq_len_sum;
    a.max_seq_len = max_seq_len;
    a.page_size = static_cast<int32_t>(page_size);
    a.index_head_dim = static_cast<int32_t>(index_head_dim);
    a.variant = variant_of(variant);
    check(lb_get_k_and_s(&a, device_of(buf, "buf")));
}

// K6, lb_transform_index_page_table_prefill: argument order as lb_transform_index_args.
void transform_index_page_table_prefill(TensorView page_table, TensorView topk_indices, TensorView cu_seqlens_q,
                                        TensorView result, int64_t num_tokens, int64_t max_extend_len,
                                        int64_t output_num_tokens, int64_t page_size, bool page_table_is_expanded,
                                        int64_t variant) {
    lb_transform_index_args a{};
    a.page_table = tensor_of(page_table, "page_table");
    a.topk_indices = tensor_of(topk_indices, "topk_indices");
    a.cu_seqlens_q = tensor_of(cu_seqlens_q, "cu_seqlens_q");
    a.result = tensor_of(result, "result");
    a.num_tokens = num_tokens;
    a.max_extend_len = max_extend_len;
    a.output_num_tokens = output_num_tokens;
    a.page_size = static_cast<int32_t>(page_size);
    a.page_table_is_expanded = page_table_is_expanded;
    a.variant = variant_of(variant);
    check(lb_transform_index_page_table_prefill(&a, device_of(page_table, "page_table")));
}

// K7, lb_extend_attention_fwd: argument order as lb_extend_attention_args.
void extend_attention_fwd(TensorView q_extend, TensorView k_extend, TensorView v_extend, TensorView o_extend,
                          TensorView k_buffer, TensorView v_buffer, TensorView qo_indptr, TensorView kv_indptr,
                          TensorView kv_indices, Optional<TensorView> sinks, Optional<TensorView> lse_extend,
                          Optional<TensorView> custom_mask, Optional<TensorView> mask_indptr,
                          Optional<TensorView> window_kv_offsets, int64_t max_len_extend, bool is_causal,
                          int64_t sliding_window_size, double sm_scale, double logit_cap, double k_scale,
                          double v_scale, bool skip_prefix_custom_mask, int64_t xai_temperature_len, bool skip_prefix,
                          bool skip_extend, int64_t variant) {
    lb_extend_attention_args a{};
    a.q_extend = tensor_of(q_extend, "q_extend");
    a.k_extend = tensor_of(k_extend, "k_extend");
    a.v_extend = tensor_of(v_extend, "v_extend");
    a.o_extend = tensor_of(o_extend, "o_extend");
    a.k_buffer = tensor_of(k_buffer, "k_buffer");
    a.v_buffer = tensor_of(v_buffer, "v_buffer");
    a.qo_indptr = tensor_of(qo_indptr, "qo_indptr");
    a.kv_indptr = tensor_of(kv_indptr, "kv_indptr");
    a.kv_indices = tensor_of(kv_indices, "kv_indices");
    a.sinks = optional_tensor(sinks, "sinks");
    a.lse_extend = optional_tensor(lse_extend, "lse_extend");
    a.custom_mask = optional_tensor(custom_mask, "custom_mask");
    a.mask_indptr = optional_tensor(mask_indptr, "mask_indptr");
    a.window_kv_offsets = optional_tensor(window_kv_offsets, "window_kv_offsets");
    a.max_len_extend = max_len_extend;
    a.is_causal = is_causal;
    a.sliding_window_size = static_cast<int32_t>(sliding_window_size);
    a.sm_scale = static_cast<float>(sm_scale);
    a.logit_cap = static_cast<float>(logit_cap);
    a.k_scale = static_cast<float>(k_scale);
    a.v_scale = static_cast<float>(v_scale);
    a.skip_prefix_custom_mask = skip_prefix_custom_mask;
    a.xai_temperature_len = static_cast<int32_t>(xai_temperature_len);
    a.skip_prefix = skip_prefix;
    a.skip_extend = skip_extend;
    a.variant = variant_of(variant);
    check(lb_extend_attention_fwd(&a, device_of(q_extend, "q_extend")));
}

// K8, lb_extend_attention_fwd_unified: argument order as lb_extend_attention_unified_args.
void extend_attention_fwd_unified(TensorView q, TensorView o, TensorView k_buffer, TensorView v_buffer,
                                  TensorView qo_indptr, TensorView kv_indptr, TensorView kv_indices,
                                  TensorView prefix_lens, Optional<TensorView> sinks, Optional<TensorView> custom_mask,
                                  Optional<TensorView> mask_indptr, int64_t max_len_extend, bool is_causal,
                                  int64_t sliding_window_size, double sm_scale, double logit_cap, double k_scale,
                                  double v_scale, int64_t xai_temperature_len, int64_t variant) {
    lb_extend_attention_unified_args a{};
    a.q = tensor_of(q, "q");
    a.o = tensor_of(o, "o");
    a.k_buffer = tensor_of(k_buffer, "k_buffer");
    a.v_buffer = tensor_of(v_buffer, "v_buffer");
    a.qo_indptr = tensor_of(qo_indptr, "qo_indptr");
    a.kv_indptr = tensor_of(kv_indptr, "kv_indptr");
    a.kv_indices = tensor_of(kv_indices, "kv_indices");
    a.prefix_lens = tensor_of(prefix_lens, "prefix_lens");
    a.sinks = optional_tensor(sinks, "sinks");
    a.custom_mask = optional_tensor(custom_mask, "custom_mask");
    a.mask_indptr = optional_tensor(mask_indptr, "mask_indptr");
    a.max_len_extend = max_len_extend;
    a.is_causal = is_causal;
    a.sliding_window_size = static_cast<int32_t>(sliding_window_size);
    a.sm_scale = static_cast<float>(sm_scale);
    a.logit_cap = static_cast<float>(logit_cap);
    a.k_scale = static_cast<float>(k_scale);
    a.v_scale = static_cast<float>(v_scale);
    a.xai_temperature_len = static_cast<int32_t>(xai_temperature_len);
    a.variant = variant_of(variant);
    check(lb_extend_attention_fwd_unified(&a, device_of(q, "q")));
}

}  // namespace
}  // namespace livebound::ffi

TVM_FFI_DLL_EXPORT_TYPED_FUNC(normal_decode_set_metadata, livebound::ffi::normal_decode_set_metadata);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fused_dsa_decode_metadata, livebound::ffi::fused_dsa_decode_metadata);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fused_dsa_target_verify_metadata, livebound::ffi::fused_dsa_target_verify_metadata);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(update_trtllm_mha_graph_metadata, livebound::ffi::update_trtllm_mha_graph_metadata);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(get_k_and_s, livebound::ffi::get_k_and_s);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(transform_index_page_table_prefill, livebound::ffi::transform_index_page_table_prefill);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(extend_attention_fwd, livebound::ffi::extend_attention_fwd);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(extend_attention_fwd_unified, livebound::ffi::extend_attention_fwd_unified);
