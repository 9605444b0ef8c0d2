#pragma once

// Queues a one-thread kernel spinning for `cycles` clock cycles on `stream` (a
// cudaStream_t); returns a cudaError_t.
int queue_gpu_delay(long long cycles, void *stream);
