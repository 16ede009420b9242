/* livebound C ABI: K2 fused_dsa_decode_metadata and K3 fused_dsa_target_verify_metadata (spec §3.2, §3.3).
 * Included by livebound/livebound.h; see that header for lb_tensor, lb_device, lb_status. */
#ifndef LIVEBOUND_DSA_METADATA_H
#define LIVEBOUND_DSA_METADATA_H

#include "livebound/livebound.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* LIVEBOUND_DSA_METADATA_H */
