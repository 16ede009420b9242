/* livebound C ABI: K4 update_trtllm_mha_graph_metadata (spec §3.4).
 * Included by livebound/livebound.h; see that header for lb_tensor, lb_device, lb_status. */
#ifndef LIVEBOUND_TRTLLM_METADATA_H
#define LIVEBOUND_TRTLLM_METADATA_H

#include "livebound/livebound.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* LIVEBOUND_TRTLLM_METADATA_H */
