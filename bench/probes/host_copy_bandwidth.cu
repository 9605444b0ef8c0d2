// Stand-alone probe of the host's copy bandwidth with one and two GPUs (what bounds the
// bands of host-resident images over several GPUs): pinned copies in only, out only and
// both at once, 32 MiB chunks on 4 streams per direction and GPU, each GPU moving its
// share; host memory allocated by the main thread or by a thread on each GPU's local CPUs.
// Build: nvcc -O2 -std=c++17 <this> -o host_copy_bandwidth; run: host_copy_bandwidth [GiB]
#include <cuda_runtime.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>
#define CK(x)                                                   \
    do {                                                        \
        cudaError_t e = (x);                                    \
        if (e != cudaSuccess) {                                 \
            std::printf("%s: %s\n", #x, cudaGetErrorString(e)); \
            std::exit(1);                                       \
        }                                                       \
    } while (0)

static std::string local_cpus(int dev) {
    char bus[64];
    CK(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
    std::string b(bus);
    for (auto &c : b) c = std::tolower(c);
    std::ifstream f("/sys/bus/pci/devices/" + b + "/local_cpulist");
    std::string s;
    std::getline(f, s);
    std::ifstream g("/sys/bus/pci/devices/" + b + "/numa_node");
    std::string n;
    std::getline(g, n);
    std::printf("GPU %d bus %s numa_node %s local_cpulist %s\n", dev, b.c_str(), n.c_str(), s.c_str());
    return s;
}
static void bind_to(const std::string &list) {
    cpu_set_t set;
    CPU_ZERO(&set);
    size_t i = 0;
    while (i < list.size()) {
        size_t j = list.find(',', i);
        if (j == std::string::npos) j = list.size();
        std::string part = list.substr(i, j - i);
        size_t d = part.find('-');
        int a = std::atoi(part.c_str()), b = d == std::string::npos ? a : std::atoi(part.c_str() + d + 1);
        for (int c = a; c <= b; c++) CPU_SET(c, &set);
        i = j + 1;
    }
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

int main(int argc, char **argv) {
    const size_t total = size_t(std::atoi(argc > 1 ? argv[1] : "4")) << 30;  // per direction
    const size_t chunk = size_t(32) << 20;
    int n = 0;
    CK(cudaGetDeviceCount(&n));
    std::vector<std::string> cpus;
    for (int d = 0; d < n; d++) cpus.push_back(local_cpus(d));
    // placement: 0 = main thread allocates all; 1 = each GPU's half allocated by a thread on its local CPUs
    for (int placement = 0; placement < 2; placement++) {
        for (int set = 0; set < (n > 1 ? 3 : 1); set++) {
            std::vector<int> gpus = set == 0   ? std::vector<int>{0}
                                    : set == 1 ? std::vector<int>{1}
                                               : std::vector<int>{0, 1};
            const int g = int(gpus.size());
            const size_t part = total / g;
            std::vector<char *> hin(g), hout(g);
            std::vector<void *> din(g), dout(g);
            std::vector<std::vector<cudaStream_t>> st(g);
            for (int i = 0; i < g; i++) {
                auto alloc = [&] {
                    CK(cudaSetDevice(gpus[i]));
                    if (placement == 1) bind_to(cpus[gpus[i]]);
                    CK(cudaMallocHost(reinterpret_cast<void **>(&hin[i]), part));
                    CK(cudaMallocHost(reinterpret_cast<void **>(&hout[i]), part));
                    std::memset(hin[i], 1, part);
                    std::memset(hout[i], 1, part);
                };
                std::thread t(alloc);
                t.join();
                CK(cudaSetDevice(gpus[i]));
                CK(cudaMalloc(&din[i], chunk * 4));
                CK(cudaMalloc(&dout[i], chunk * 4));
                st[i].resize(8);
                for (auto &s : st[i]) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
            }
            for (int dir = 0; dir < 3; dir++) {  // 0 in only, 1 out only, 2 both
                std::vector<double> ms;
                for (int rep = 0; rep < 5; rep++) {
                    auto t0 = std::chrono::steady_clock::now();
                    std::vector<std::thread> th;
                    for (int i = 0; i < g; i++)
                        th.emplace_back([&, i] {
                            CK(cudaSetDevice(gpus[i]));
                            const size_t chunks = part / chunk;
                            for (size_t c = 0; c < chunks; c++) {
                                const int k = int(c % 4);
                                if (dir != 1)
                                    CK(cudaMemcpyAsync(static_cast<char *>(din[i]) + k * chunk, hin[i] + c * chunk,
                                                       chunk, cudaMemcpyHostToDevice, st[i][k]));
                                if (dir != 0)
                                    CK(cudaMemcpyAsync(hout[i] + c * chunk, static_cast<char *>(dout[i]) + k * chunk,
                                                       chunk, cudaMemcpyDeviceToHost, st[i][4 + k]));
                            }
                            for (auto &s : st[i]) CK(cudaStreamSynchronize(s));
                        });
                    for (auto &t : th) t.join();
                    ms.push_back(
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
                }
                std::sort(ms.begin(), ms.end());
                const double bytes = double(total) * (dir == 2 ? 2 : 1);
                std::printf("placement %s gpus %s dir %-4s: %8.2f ms  %6.1f GB/s\n", placement ? "local" : "main ",
                            g == 2         ? "0+1"
                            : gpus[0] == 0 ? "0  "
                                           : "1  ",
                            dir == 0   ? "in"
                            : dir == 1 ? "out"
                                       : "both",
                            ms[2], bytes / ms[2] / 1e6);
            }
            for (int i = 0; i < g; i++) {
                CK(cudaSetDevice(gpus[i]));
                for (auto &s : st[i]) cudaStreamDestroy(s);
                cudaFree(din[i]);
                cudaFree(dout[i]);
                cudaFreeHost(hin[i]);
                cudaFreeHost(hout[i]);
            }
        }
    }
}
