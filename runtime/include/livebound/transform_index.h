/* livebound C ABI: K6 transform_index_page_table_prefill (spec §3.6).
 * Included by livebound/livebound.h; see that header for lb_tensor, lb_device, lb_status. */
#ifndef LIVEBOUND_TRANSFORM_INDEX_H
#define LIVEBOUND_TRANSFORM_INDEX_H

#include "livebound/livebound.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* LIVEBOUND_TRANSFORM_INDEX_H */
