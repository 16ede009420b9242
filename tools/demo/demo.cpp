#include "demo.h"

#include <algorithm>
#include <chrono>

namespace livebound::demo {
namespace {
std::vector<std::pair<std::string, Fn>> &registry() {
    static std::vector<std::pair<std::string, Fn>> r;
    return r;
}
}  // namespace

bool register_demo(const char *kernel, Fn fn) {
    registry().emplace_back(kernel, fn);
    std::sort(registry().begin(), registry().end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    return true;
}

const std::vector<std::pair<std::string, Fn>> &registered() { return registry(); }

double cpu_median_us(void (*call)(void *), void *arg, int repetitions) {
    std::vector<double> t;
    for (int i = 0; i < repetitions; i++) {
        auto t0 = std::chrono::steady_clock::now();
        call(arg);
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace livebound::demo
