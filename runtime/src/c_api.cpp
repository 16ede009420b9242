// The parts of the C ABI shared by every kernel: errors, devices, version.
#include <string>

#include "cuda_driver.h"
#include "errors.h"
#include "halide_glue.h"
#include "livebound/livebound.h"

namespace livebound {
namespace {
thread_local std::string t_last_error;
thread_local const char *t_last_variant = "";
}

void note_variant(const char *name) { t_last_variant = name; }

lb_status guarded_call(const char *entry_point, void (*body)(const void *), const void *arg) {
    t_last_error.clear();
    t_last_variant = "";
    glue::take_halide_error();
    lb_status status = LB_ERROR_KERNEL;
    try {
        body(arg);
        return LB_OK;
    } catch (const Failure &f) {
        t_last_error = std::string(entry_point) + ": " + f.what();
        status = f.status;
    } catch (const std::exception &e) {
        t_last_error = std::string(entry_point) + ": internal error: " + e.what();
    } catch (...) {
        // Nothing may cross the C ABI: an exception of any other type (a callback's, a
        // library's) is an internal error too.
        t_last_error = std::string(entry_point) + ": internal error: an exception that is not a std::exception";
    }
    t_last_variant = "";  // (a failed call reports no variant)
    return status;
}

}  // namespace livebound

extern "C" {

const char *lb_last_error(void) { return livebound::t_last_error.c_str(); }

const char *lb_last_variant(void) { return livebound::t_last_variant; }

int32_t lb_cuda_device_count(void) {
#ifdef LIVEBOUND_WITH_CUDA
    return livebound::cuda::device_count();
#else
    return 0;
#endif
}

int lb_cuda_device_available(int32_t index) {
#ifdef LIVEBOUND_WITH_CUDA
    std::string error;
    return index >= 0 && index < livebound::cuda::device_count() &&
           livebound::cuda::primary_context(index, &error) != nullptr;
#else
    (void)index;
    return 0;
#endif
}

const char *lb_version(void) { return LIVEBOUND_VERSION; }

}  // extern "C"
