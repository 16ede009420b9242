// Prints the C ABI's struct layout as JSON: for every struct of runtime/include/livebound/*.h,
// its sizeof, alignof and every field's offsetof and sizeof, in declaration order; plus the
// sizes of the enums. python/tests/test_abi.py compares the ctypes mirrors against it.
// Built by python/CMakeLists.txt (target livebound_abi_sizes); nothing links it.
#include <cstddef>
#include <cstdio>

#include "livebound/livebound.h"

namespace {

bool first_struct = true;
bool first_field = true;

void begin_struct(const char *name, size_t size, size_t align) {
    std::printf("%s\n  \"%s\": {\"size\": %zu, \"align\": %zu, \"fields\": [", first_struct ? "" : ",", name,
                size, align);
    first_struct = false;
    first_field = true;
}

void field(const char *name, size_t offset, size_t size) {
    std::printf("%s\n    {\"name\": \"%s\", \"offset\": %zu, \"size\": %zu}", first_field ? "" : ",", name,
                offset, size);
    first_field = false;
}

void end_struct() { std::printf("]}"); }

}  // namespace

#define LB_STRUCT(T) begin_struct(#T, sizeof(T), alignof(T))
#define LB_FIELD(T, f) field(#f, offsetof(T, f), sizeof(((T *)nullptr)->f))

int main() {
    std::printf("{\"enums\": {\"lb_status\": %zu, \"lb_dtype\": %zu, \"lb_device_type\": %zu, "
                "\"lb_variant\": %zu},\n \"structs\": {",
                sizeof(lb_status), sizeof(lb_dtype), sizeof(lb_device_type), sizeof(lb_variant));

    LB_STRUCT(lb_device);
    LB_FIELD(lb_device, type);
    LB_FIELD(lb_device, index);
    LB_FIELD(lb_device, stream);
    end_struct();

    LB_STRUCT(lb_tensor);
    LB_FIELD(lb_tensor, data);
    LB_FIELD(lb_tensor, dtype);
    LB_FIELD(lb_tensor, ndim);
    LB_FIELD(lb_tensor, shape);
    LB_FIELD(lb_tensor, strides);
    end_struct();

    LB_STRUCT(lb_decode_metadata_args);
    LB_FIELD(lb_decode_metadata_args, seq_lens);
    LB_FIELD(lb_decode_metadata_args, req_pool_indices);
    LB_FIELD(lb_decode_metadata_args, req_to_token);
    LB_FIELD(lb_decode_metadata_args, full_to_swa);
    LB_FIELD(lb_decode_metadata_args, cache_seqlens);
    LB_FIELD(lb_decode_metadata_args, cu_seqlens_k);
    LB_FIELD(lb_decode_metadata_args, page_table);
    LB_FIELD(lb_decode_metadata_args, swa_page_table);
    LB_FIELD(lb_decode_metadata_args, max_seq_pages);
    LB_FIELD(lb_decode_metadata_args, seq_len_delta);
    LB_FIELD(lb_decode_metadata_args, page_size);
    LB_FIELD(lb_decode_metadata_args, skip_page_table);
    LB_FIELD(lb_decode_metadata_args, variant);
    end_struct();

    LB_STRUCT(lb_dsa_decode_metadata_args);
    LB_FIELD(lb_dsa_decode_metadata_args, seq_lens);
    LB_FIELD(lb_dsa_decode_metadata_args, req_pool_indices);
    LB_FIELD(lb_dsa_decode_metadata_args, req_to_token);
    LB_FIELD(lb_dsa_decode_metadata_args, cache_seqlens);
    LB_FIELD(lb_dsa_decode_metadata_args, cu_seqlens_k);
    LB_FIELD(lb_dsa_decode_metadata_args, page_table_1);
    LB_FIELD(lb_dsa_decode_metadata_args, dsa_cache_seqlens);
    LB_FIELD(lb_dsa_decode_metadata_args, dsa_cu_seqlens_k);
    LB_FIELD(lb_dsa_decode_metadata_args, real_page_table);
    LB_FIELD(lb_dsa_decode_metadata_args, max_len);
    LB_FIELD(lb_dsa_decode_metadata_args, dsa_index_topk);
    LB_FIELD(lb_dsa_decode_metadata_args, real_page_size);
    LB_FIELD(lb_dsa_decode_metadata_args, index_kpool);
    LB_FIELD(lb_dsa_decode_metadata_args, variant);
    end_struct();

    LB_STRUCT(lb_dsa_target_verify_metadata_args);
    LB_FIELD(lb_dsa_target_verify_metadata_args, seq_lens);
    LB_FIELD(lb_dsa_target_verify_metadata_args, req_pool_indices);
    LB_FIELD(lb_dsa_target_verify_metadata_args, req_to_token);
    LB_FIELD(lb_dsa_target_verify_metadata_args, cache_seqlens);
    LB_FIELD(lb_dsa_target_verify_metadata_args, cu_seqlens_k);
    LB_FIELD(lb_dsa_target_verify_metadata_args, page_table_1);
    LB_FIELD(lb_dsa_target_verify_metadata_args, seqlens_expanded);
    LB_FIELD(lb_dsa_target_verify_metadata_args, dsa_cache_seqlens);
    LB_FIELD(lb_dsa_target_verify_metadata_args, dsa_cu_seqlens_k);
    LB_FIELD(lb_dsa_target_verify_metadata_args, real_page_table);
    LB_FIELD(lb_dsa_target_verify_metadata_args, paged_mqa_ctx_lens_2d);
    LB_FIELD(lb_dsa_target_verify_metadata_args, max_seqlen_k);
    LB_FIELD(lb_dsa_target_verify_metadata_args, dsa_index_topk);
    LB_FIELD(lb_dsa_target_verify_metadata_args, real_page_size);
    LB_FIELD(lb_dsa_target_verify_metadata_args, next_n);
    LB_FIELD(lb_dsa_target_verify_metadata_args, index_kpool);
    LB_FIELD(lb_dsa_target_verify_metadata_args, variant);
    end_struct();

    LB_STRUCT(lb_trtllm_mha_graph_metadata_args);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, req_pool_indices);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, seq_lens);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, req_to_token);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, swa_mapping);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, out_cache_loc);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, qlens);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, cache_seqlens);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, cu_seqlens_k);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, cu_seqlens_q);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, page_table);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, swa_page_table);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, swa_out_cache_loc);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, bs);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, max_seq_pages);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, seqlen_offset);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, page_size);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, q_stride);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, q_mode);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, skip_page_table);
    LB_FIELD(lb_trtllm_mha_graph_metadata_args, variant);
    end_struct();

    LB_STRUCT(lb_dsa_kv_gather_args);
    LB_FIELD(lb_dsa_kv_gather_args, buf);
    LB_FIELD(lb_dsa_kv_gather_args, page_indices);
    LB_FIELD(lb_dsa_kv_gather_args, seq_lens);
    LB_FIELD(lb_dsa_kv_gather_args, k_out);
    LB_FIELD(lb_dsa_kv_gather_args, s_out);
    LB_FIELD(lb_dsa_kv_gather_args, seq_len_sum);
    LB_FIELD(lb_dsa_kv_gather_args, max_seq_len);
    LB_FIELD(lb_dsa_kv_gather_args, page_size);
    LB_FIELD(lb_dsa_kv_gather_args, index_head_dim);
    LB_FIELD(lb_dsa_kv_gather_args, variant);
    end_struct();

    LB_STRUCT(lb_transform_index_args);
    LB_FIELD(lb_transform_index_args, page_table);
    LB_FIELD(lb_transform_index_args, topk_indices);
    LB_FIELD(lb_transform_index_args, cu_seqlens_q);
    LB_FIELD(lb_transform_index_args, result);
    LB_FIELD(lb_transform_index_args, num_tokens);
    LB_FIELD(lb_transform_index_args, max_extend_len);
    LB_FIELD(lb_transform_index_args, output_num_tokens);
    LB_FIELD(lb_transform_index_args, page_size);
    LB_FIELD(lb_transform_index_args, page_table_is_expanded);
    LB_FIELD(lb_transform_index_args, variant);
    end_struct();

    LB_STRUCT(lb_extend_attention_args);
    LB_FIELD(lb_extend_attention_args, q_extend);
    LB_FIELD(lb_extend_attention_args, k_extend);
    LB_FIELD(lb_extend_attention_args, v_extend);
    LB_FIELD(lb_extend_attention_args, o_extend);
    LB_FIELD(lb_extend_attention_args, k_buffer);
    LB_FIELD(lb_extend_attention_args, v_buffer);
    LB_FIELD(lb_extend_attention_args, qo_indptr);
    LB_FIELD(lb_extend_attention_args, kv_indptr);
    LB_FIELD(lb_extend_attention_args, kv_indices);
    LB_FIELD(lb_extend_attention_args, sinks);
    LB_FIELD(lb_extend_attention_args, lse_extend);
    LB_FIELD(lb_extend_attention_args, custom_mask);
    LB_FIELD(lb_extend_attention_args, mask_indptr);
    LB_FIELD(lb_extend_attention_args, window_kv_offsets);
    LB_FIELD(lb_extend_attention_args, max_len_extend);
    LB_FIELD(lb_extend_attention_args, is_causal);
    LB_FIELD(lb_extend_attention_args, sliding_window_size);
    LB_FIELD(lb_extend_attention_args, sm_scale);
    LB_FIELD(lb_extend_attention_args, logit_cap);
    LB_FIELD(lb_extend_attention_args, k_scale);
    LB_FIELD(lb_extend_attention_args, v_scale);
    LB_FIELD(lb_extend_attention_args, skip_prefix_custom_mask);
    LB_FIELD(lb_extend_attention_args, xai_temperature_len);
    LB_FIELD(lb_extend_attention_args, skip_prefix);
    LB_FIELD(lb_extend_attention_args, skip_extend);
    LB_FIELD(lb_extend_attention_args, variant);
    end_struct();

    LB_STRUCT(lb_extend_attention_unified_args);
    LB_FIELD(lb_extend_attention_unified_args, q);
    LB_FIELD(lb_extend_attention_unified_args, o);
    LB_FIELD(lb_extend_attention_unified_args, k_buffer);
    LB_FIELD(lb_extend_attention_unified_args, v_buffer);
    LB_FIELD(lb_extend_attention_unified_args, qo_indptr);
    LB_FIELD(lb_extend_attention_unified_args, kv_indptr);
    LB_FIELD(lb_extend_attention_unified_args, kv_indices);
    LB_FIELD(lb_extend_attention_unified_args, prefix_lens);
    LB_FIELD(lb_extend_attention_unified_args, sinks);
    LB_FIELD(lb_extend_attention_unified_args, custom_mask);
    LB_FIELD(lb_extend_attention_unified_args, mask_indptr);
    LB_FIELD(lb_extend_attention_unified_args, max_len_extend);
    LB_FIELD(lb_extend_attention_unified_args, is_causal);
    LB_FIELD(lb_extend_attention_unified_args, sliding_window_size);
    LB_FIELD(lb_extend_attention_unified_args, sm_scale);
    LB_FIELD(lb_extend_attention_unified_args, logit_cap);
    LB_FIELD(lb_extend_attention_unified_args, k_scale);
    LB_FIELD(lb_extend_attention_unified_args, v_scale);
    LB_FIELD(lb_extend_attention_unified_args, xai_temperature_len);
    LB_FIELD(lb_extend_attention_unified_args, variant);
    end_struct();

    std::printf("\n }\n}\n");
    return 0;
}
