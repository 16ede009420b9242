// The fuzz target without libFuzzer (any compiler; CI builds it against the sanitized
// runtime): runs LLVMFuzzerTestOneInput on every file of the corpus directories given, then
// on --runs random inputs (lengths 0 .. --max-len bytes) from std::mt19937_64(--seed): every
// other input has all its bytes below 240, which the target reads as in-range values (more
// accepted calls), the rest any bytes (mostly garbage, refused).
//   fuzz_c_abi_replay [--runs N] [--seed S] [--max-len L] [corpus_dir...]
// A broken property aborts inside the target; the input that did it is written to
// ./fuzz_c_abi_failure.bin first (random inputs only; a corpus file is named).
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

int main(int argc, char **argv) {
    int64_t runs = 1000, max_len = 256;
    uint64_t seed = 1;
    std::vector<std::string> dirs;
    for (int i = 1; i < argc; i++) {
        const std::string arg = argv[i];
        if ((arg == "--runs" || arg == "--seed" || arg == "--max-len") && i + 1 < argc) {
            const long long v = std::atoll(argv[++i]);
            if (arg == "--runs") runs = v;
            if (arg == "--seed") seed = uint64_t(v);
            if (arg == "--max-len") max_len = v;
        } else {
            dirs.push_back(arg);
        }
    }
    int64_t files = 0;
    for (const std::string &dir : dirs) {
        for (const auto &entry : std::filesystem::directory_iterator(dir)) {
            if (!entry.is_regular_file()) continue;
            std::ifstream f(entry.path(), std::ios::binary);
            const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
            std::fprintf(stderr, "corpus %s\n", entry.path().c_str());
            LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
            files++;
        }
    }
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> input;
    for (int64_t r = 0; r < runs; r++) {
        input.resize(size_t(rng() % uint64_t(max_len + 1)));
        const bool in_range = r % 2 == 0;
        for (auto &b : input) b = uint8_t(in_range ? rng() % 240 : rng());
        std::ofstream("fuzz_c_abi_failure.bin", std::ios::binary).write(reinterpret_cast<const char *>(input.data()),
                                                                         std::streamsize(input.size()));
        LLVMFuzzerTestOneInput(input.data(), input.size());
    }
    std::remove("fuzz_c_abi_failure.bin");
    int64_t accepted = 0, refused = 0;
    fuzz_c_abi_counts(&accepted, &refused);
    std::printf("fuzz_c_abi: %lld corpus inputs and %lld random inputs (seed %llu) held every property: %lld calls "
                "accepted and checked against the reference, %lld refused with nothing written\n",
                static_cast<long long>(files), static_cast<long long>(runs), static_cast<unsigned long long>(seed),
                static_cast<long long>(accepted), static_cast<long long>(refused));
    return 0;
}
