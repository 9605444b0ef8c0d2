// Smallest real use of the installed package: a 3x3 box filter on the CPU, checked.
#include <halconv/halconv.h>

#include <cstdio>

int main() {
    Halide::Runtime::Buffer<float> image(5, 4), kernel(3, 3);
    image.for_each_element([&](int x, int y) { image(x, y) = float(x + 10 * y); });
    kernel.fill(1.0f);
    halconv::Options options;
    options.device = halconv::Device::cpu;
    options.mode = halconv::Mode::valid;
    Halide::Runtime::Buffer<> out = halconv::correlate2d(image, kernel, options);
    Halide::Runtime::Buffer<float> result(out);
    // Window sums of x + 10y over 3x3 = 9 * centre value.
    int bad = 0;
    result.for_each_element([&](int x, int y) { bad += result(x, y) != 9.0f * float((x + 1) + 10 * (y + 1)); });
    std::printf("consumer: %s\n", bad == 0 ? "ok" : "WRONG");
    return bad == 0 ? 0 : 1;
}
