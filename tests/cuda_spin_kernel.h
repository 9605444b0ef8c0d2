#pragma once

// Launches the spin-then-fill kernel on `stream` (a cudaStream_t); returns a cudaError_t.
// out[i] = 1 + 0.5 * (i % 97) once about spin_cycles clock cycles have passed.
int launch_spin_then_fill(float *device_out, int n, long long spin_cycles, void *stream);
