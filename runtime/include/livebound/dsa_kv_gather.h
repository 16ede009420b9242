/* livebound C ABI: K5, the DSA indexer K + scale gather (spec §3.5).
 * Included by livebound/livebound.h; see that header for lb_tensor, lb_device, lb_status. */
#ifndef LIVEBOUND_DSA_KV_GATHER_H
#define LIVEBOUND_DSA_KV_GATHER_H

#include "livebound/livebound.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* LIVEBOUND_DSA_KV_GATHER_H */
