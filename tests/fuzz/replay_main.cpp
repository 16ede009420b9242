// The fuzz target without libFuzzer (any compiler; CI builds it against the sanitized
// runtime): runs LLVMFuzzerTestOneInput on every file of the corpus directories (or single
// files) given, then on --runs random inputs (lengths 0 .. --max-len bytes) from
// std::mt19937_64(--seed): every other input has all its bytes below 240, which the
// harnesses read as in-range values (more accepted calls), the rest any bytes (mostly
// garbage, refused).
//   fuzz_c_abi_replay [--kernel kN] [--runs N] [--seed S] [--max-len L] [--save DIR]
//                     [corpus_dir_or_file...]
// --kernel kN (k1 .. k8) fixes the kernel: the selector byte (N - 1) is prepended to every
// input, corpus files and random inputs alike, so corpus/kN holds inputs without it (the
// harness's bytes only). Without --kernel the first byte of each input selects the kernel
// (byte % 8), as under libFuzzer.
// --save DIR writes the first 8 random inputs the target accepted and the first 4 it refused
// to DIR (as DIR/accepted_NN.bin, DIR/refused_NN.bin, without the selector byte under
// --kernel): how the committed corpora were made.
// A broken property aborts inside the target; the random input that did it is then written to
// ./fuzz_c_abi_failure.bin by a SIGABRT / SIGSEGV handler or the sanitizers' death callback
// (under --kernel without the selector byte: replay it with `--kernel kN --runs 0 FILE`; a
// corpus file is named on stderr before it runs).
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" void fuzz_c_abi_counts(int64_t *accepted, int64_t *refused);
extern "C" void fuzz_c_abi_kernel_counts(int kernel, int64_t *accepted, int64_t *refused);
// Present when a sanitizer runtime is linked in (they exit without raising SIGABRT).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace {

// The random input being run, for the failure handlers (async-signal-safe: open / write only).
const uint8_t *g_input = nullptr;
size_t g_input_size = 0;

void write_failing_input() {
    if (g_input == nullptr) return;
    const int fd = open("fuzz_c_abi_failure.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    for (size_t done = 0; done < g_input_size;) {
        const ssize_t n = write(fd, g_input + done, g_input_size - done);
        if (n <= 0) break;
        done += size_t(n);
    }
    close(fd);
}

void on_fatal_signal(int sig) {
    write_failing_input();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

void write_file(const std::string &path, const uint8_t *data, size_t size) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(data), std::streamsize(size));
}

}  // namespace

int main(int argc, char **argv) {
    int64_t runs = 1000, max_len = 256;
    uint64_t seed = 1;
    int kernel = 0;  // 0: the input's first byte selects
    std::string save_dir;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; i++) {
        const std::string arg = argv[i];
        if ((arg == "--runs" || arg == "--seed" || arg == "--max-len") && i + 1 < argc) {
            const long long v = std::atoll(argv[++i]);
            if (arg == "--runs") runs = v;
            if (arg == "--seed") seed = uint64_t(v);
            if (arg == "--max-len") max_len = v;
        } else if (arg == "--kernel" && i + 1 < argc) {
            const std::string k = argv[++i];
            kernel = k.size() == 2 && (k[0] == 'k' || k[0] == 'K') && k[1] >= '1' && k[1] <= '8' ? k[1] - '0' : -1;
            if (kernel < 0) {
                std::fprintf(stderr, "fuzz_c_abi_replay: --kernel takes k1 .. k8, got %s\n", k.c_str());
                return 2;
            }
        } else if (arg == "--save" && i + 1 < argc) {
            save_dir = argv[++i];
        } else {
            paths.push_back(arg);
        }
    }
    // buffer = [selector byte under --kernel] + the input's bytes.
    const size_t prefix = kernel > 0 ? 1 : 0;
    std::vector<uint8_t> buffer;
    auto run_one = [&](const uint8_t *bytes, size_t size) {
        buffer.assign(prefix, uint8_t(kernel - 1));
        buffer.insert(buffer.end(), bytes, bytes + size);
        return LLVMFuzzerTestOneInput(buffer.data(), buffer.size());
    };
    int64_t files = 0;
    auto run_file = [&](const std::filesystem::path &path) {
        std::ifstream f(path, std::ios::binary);
        const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        std::fprintf(stderr, "corpus %s\n", path.c_str());
        run_one(bytes.data(), bytes.size());
        files++;
    };
    for (const std::string &path : paths) {
        if (std::filesystem::is_regular_file(path)) {
            run_file(path);
            continue;
        }
        for (const auto &entry : std::filesystem::directory_iterator(path)) {
            if (entry.is_regular_file()) run_file(entry.path());
        }
    }
    std::signal(SIGABRT, on_fatal_signal);
    std::signal(SIGSEGV, on_fatal_signal);
    if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(write_failing_input);
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> input;
    int saved_accepted = 0, saved_refused = 0;
    for (int64_t r = 0; r < runs; r++) {
        input.resize(size_t(rng() % uint64_t(max_len + 1)));
        const bool in_range = r % 2 == 0;
        for (auto &b : input) b = uint8_t(in_range ? rng() % 240 : rng());
        g_input = input.data();
        g_input_size = input.size();
        int64_t accepted_before = 0, refused_before = 0, accepted = 0, refused = 0;
        if (!save_dir.empty()) fuzz_c_abi_counts(&accepted_before, &refused_before);
        run_one(input.data(), input.size());
        if (!save_dir.empty()) {
            fuzz_c_abi_counts(&accepted, &refused);
            char name[64];
            if (accepted > accepted_before && saved_accepted < 8) {
                std::snprintf(name, sizeof(name), "/accepted_%02d.bin", saved_accepted++);
                write_file(save_dir + name, input.data(), input.size());
            } else if (refused > refused_before && saved_refused < 4) {
                std::snprintf(name, sizeof(name), "/refused_%02d.bin", saved_refused++);
                write_file(save_dir + name, input.data(), input.size());
            }
        }
    }
    g_input = nullptr;
    int64_t accepted = 0, refused = 0;
    fuzz_c_abi_counts(&accepted, &refused);
    std::printf("fuzz_c_abi%s%s: %lld corpus inputs and %lld random inputs (seed %llu) held every property: %lld calls "
                "accepted and checked against the reference, %lld refused with nothing written\n",
                kernel > 0 ? " --kernel k" : "", kernel > 0 ? std::to_string(kernel).c_str() : "",
                static_cast<long long>(files), static_cast<long long>(runs), static_cast<unsigned long long>(seed),
                static_cast<long long>(accepted), static_cast<long long>(refused));
    if (kernel == 0) {
        for (int k = 1; k <= 8; k++) {
            fuzz_c_abi_kernel_counts(k, &accepted, &refused);
            std::printf("  K%d: %lld accepted, %lld refused\n", k, static_cast<long long>(accepted),
                        static_cast<long long>(refused));
        }
    }
    return 0;
}
