// Errors inside the runtime are exceptions; the C ABI turns them into an lb_status
// plus the thread's last-error text (c_api.cpp). Nothing is written before all
// arguments are validated, so an error never leaves partial output behind.
#pragma once

#include <stdexcept>
#include <string>

#include "livebound/livebound.h"

namespace livebound {

class Failure : public std::runtime_error {
public:
    Failure(lb_status status, const std::string &message) : std::runtime_error(message), status(status) {}
    lb_status status;
};

// "argument 'page_table': expected int32, got int64"
[[noreturn]] inline void bad_argument(const std::string &argument, const std::string &what) {
    throw Failure(LB_ERROR_INVALID_ARGUMENT, "argument '" + argument + "': " + what);
}

// Runs `body` and converts what it throws into a status, recording the message
// (prefixed with the entry point's name) as this thread's last error.
lb_status guarded_call(const char *entry_point, void (*body)(const void *), const void *arg);

// Records `name` (a pipeline's generated function name, static storage) as the AOT variant
// this thread's current call ran (lb_last_variant(); guarded_call clears it).
void note_variant(const char *name);

}  // namespace livebound
