/* livebound C ABI: K7 extend_attention_fwd and K8 extend_attention_fwd_unified (spec §3.7, §3.8).
 * Included by livebound/livebound.h; see that header for lb_tensor, lb_device, lb_status. */
#ifndef LIVEBOUND_EXTEND_ATTENTION_H
#define LIVEBOUND_EXTEND_ATTENTION_H

#include "livebound/livebound.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* LIVEBOUND_EXTEND_ATTENTION_H */
