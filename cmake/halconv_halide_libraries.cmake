# Every AOT Halide pipeline of halconv: one generator executable per algorithm, many
# variants (precision x schedule), CPU as one multitarget library each, CUDA one library
# each, all sharing one Halide runtime. Sets HALCONV_HALIDE_LIBRARIES / _OBJECTS.

# Never 'host': shipped code must not depend on the build machine.
set(HALCONV_CPU_TARGETS x86-64-linux-avx2-fma-f16c-sse41 x86-64-linux)
set(HALCONV_CUDA_TARGET x86-64-linux-cuda-cuda_capability_86)

get_filename_component(_halide_libdir "${Halide_DIR}/../.." ABSOLUTE)
foreach (_as IN ITEMS Anderson2021 Mullapudi2016)
    string(TOLOWER ${_as} _as_lower)
    if (NOT TARGET Halide::${_as})
        add_library(Halide::${_as} MODULE IMPORTED)
        set_target_properties(Halide::${_as} PROPERTIES
            IMPORTED_LOCATION "${_halide_libdir}/libautoschedule_${_as_lower}.so")
    endif ()
endforeach ()

# Halide's headers are third-party code: keep our warnings-as-errors off them.
foreach (_t IN ITEMS Halide::Halide Halide::Runtime)
    get_target_property(_inc ${_t} INTERFACE_INCLUDE_DIRECTORIES)
    set_property(TARGET ${_t} APPEND PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${_inc})
endforeach ()

get_target_property(_halide_runtime_inc Halide::Runtime INTERFACE_INCLUDE_DIRECTORIES)
set(HALCONV_HALIDE_RUNTIME_INCLUDE ${_halide_runtime_inc})
set(HALCONV_HALIDE_RUNTIME_HEADERS
    ${_halide_runtime_inc}/HalideRuntime.h ${_halide_runtime_inc}/HalideBuffer.h
    ${_halide_runtime_inc}/HalideRuntimeCuda.h)

add_halide_generator(halconv_generators
    SOURCES generators/conv2d_generator.cpp generators/separable_generator.cpp
            generators/tensor_core_generator.cpp generators/edges_generator.cpp generators/unsharp_generator.cpp
            generators/multichannel_generator.cpp generators/im2col_generator.cpp
            schedules/conv2d_schedules.cpp schedules/separable_schedules.cpp schedules/tensor_core_schedules.cpp
            schedules/edges_schedules.cpp schedules/unsharp_schedules.cpp schedules/multichannel_schedules.cpp)
target_include_directories(halconv_generators PRIVATE generators schedules include)
halconv_warnings(halconv_generators)

add_halide_runtime(halconv_runtime TARGETS ${HALCONV_CPU_TARGETS} ${HALCONV_CUDA_TARGET})

set(HALCONV_HALIDE_LIBRARIES "")
set(HALCONV_HALIDE_OBJECTS "")

# halconv_precision_types(<precision> <storage var> <output var>): the Halide type names
# of a precision's image / kernel storage and of its output.
function(halconv_precision_types precision storage_var output_var)
    if (precision STREQUAL "f64")
        set(${storage_var} float64 PARENT_SCOPE)
        set(${output_var} float64 PARENT_SCOPE)
    elseif (precision STREQUAL "f32")
        set(${storage_var} float32 PARENT_SCOPE)
        set(${output_var} float32 PARENT_SCOPE)
    elseif (precision STREQUAL "f16")
        set(${storage_var} float16 PARENT_SCOPE)
        set(${output_var} float16 PARENT_SCOPE)
    else ()
        set(${storage_var} float16 PARENT_SCOPE)
        set(${output_var} float32 PARENT_SCOPE)
    endif ()
endfunction()

# halconv_add_pipeline(<generator> <precision> <schedule> [AUTOSCHEDULER <plugin> PARAMS ...])
# defines the function halconv_<generator>_<precision>_<schedule>.
function(halconv_add_pipeline gen precision schedule)
    cmake_parse_arguments(ARG "" "AUTOSCHEDULER" "PARAMS" ${ARGN})
    set(name halconv_${gen}_${precision}_${schedule})
    halconv_precision_types(${precision} storage out)
    if (gen STREQUAL "conv2d" OR gen STREQUAL "multichannel")
        set(type_params input.type=${storage} kernel.type=${storage} output.type=${out})
    else ()
        set(type_params input.type=${storage} row_kernel.type=${storage} col_kernel.type=${storage}
            output.type=${out})
    endif ()
    if (schedule MATCHES "^gpu_")
        set(targets ${HALCONV_CUDA_TARGET})
    else ()
        set(targets ${HALCONV_CPU_TARGETS})
    endif ()
    set(as_args "")
    if (ARG_AUTOSCHEDULER)
        set(as_args AUTOSCHEDULER ${ARG_AUTOSCHEDULER})
    endif ()
    add_halide_library(${name} FROM halconv_generators
        GENERATOR halconv_${gen}
        TARGETS ${targets}
        USE_RUNTIME halconv_runtime
        ${as_args}
        PARAMS precision=${precision} schedule=${schedule} ${type_params} ${ARG_PARAMS})
    get_target_property(objects ${name} SOURCES)  # absolute paths of the generated objects
    set(HALCONV_HALIDE_LIBRARIES ${HALCONV_HALIDE_LIBRARIES} ${name} PARENT_SCOPE)
    set(HALCONV_HALIDE_OBJECTS ${HALCONV_HALIDE_OBJECTS} ${objects} PARENT_SCOPE)
endfunction()

foreach (p IN ITEMS f64 f32 f16 f16f32)
    halconv_add_pipeline(conv2d ${p} cpu_naive)
    halconv_add_pipeline(conv2d ${p} cpu_tiled)
    halconv_add_pipeline(conv2d ${p} cpu_auto AUTOSCHEDULER Halide::Mullapudi2016
        PARAMS autoscheduler.parallelism=16)
    halconv_add_pipeline(conv2d ${p} gpu_naive)
    halconv_add_pipeline(conv2d ${p} gpu_shared_tiled)
    # 132 = the H100's SM count; Anderson2021's default (16) starves it. H100, 4096x4096
    # f32 (bench/results/h100/core-f32-4096.csv): K=3 0.775 ms, K=15 2.14 ms, K=31 6.52 ms.
    halconv_add_pipeline(conv2d ${p} gpu_auto AUTOSCHEDULER Halide::Anderson2021
        PARAMS autoscheduler.parallelism=132)
    halconv_add_pipeline(separable ${p} cpu_separable)
    halconv_add_pipeline(separable ${p} gpu_separable)
    halconv_add_pipeline(separable ${p} cpu_separable_two_pass)
    halconv_add_pipeline(separable ${p} gpu_separable_two_pass)
endforeach ()

# Tensor-core pipelines: the extern stages of runtime_kernels/, f16 operands only.
# halconv_tensor_core_<variant>_<precision>[_valid]; the valid form takes the image as
# it is, the other builds the boundary/mode stage in Halide first.
function(halconv_add_tensor_core_pipeline variant precision form)
    set(name halconv_tensor_core_${variant}_${precision})
    set(generator halconv_tensor_core)
    if (form STREQUAL "valid")
        set(name ${name}_valid)
        set(generator halconv_tensor_core_valid)
    endif ()
    halconv_precision_types(${precision} storage out)
    add_halide_library(${name} FROM halconv_generators
        GENERATOR ${generator}
        TARGETS ${HALCONV_CUDA_TARGET}
        USE_RUNTIME halconv_runtime
        PARAMS precision=${precision} variant=${variant} output.type=${out})
    get_target_property(objects ${name} SOURCES)
    set(HALCONV_HALIDE_LIBRARIES ${HALCONV_HALIDE_LIBRARIES} ${name} PARENT_SCOPE)
    set(HALCONV_HALIDE_OBJECTS ${HALCONV_HALIDE_OBJECTS} ${objects} PARENT_SCOPE)
endfunction()

foreach (p IN ITEMS f16 f16f32)
    foreach (v IN ITEMS im2tensor im2tensor_fused im2tensor_atomic dki_m16n16k16 dki_m32n8k16)
        halconv_add_tensor_core_pipeline(${v} ${p} padded)
        halconv_add_tensor_core_pipeline(${v} ${p} valid)
    endforeach ()
endforeach ()

# Multi-channel convolution: the direct Halide pipelines (every precision, CPU and GPU);
# the im2col extern stage (f16 operands on tensor cores, f32 through cuBLAS),
# halconv_im2col_<precision>[_valid] in the two forms of the tensor-core pipelines; and
# the same generators with the implicit GEMM as the extern stage (no column buffer, f16
# operands only), halconv_implicit_<precision>[_valid].
foreach (p IN ITEMS f64 f32 f16 f16f32)
    halconv_add_pipeline(multichannel ${p} cpu_direct)
    halconv_add_pipeline(multichannel ${p} gpu_direct)
endforeach ()
function(halconv_add_im2col_pipeline variant precision form)
    set(name halconv_${variant}_${precision})
    set(generator halconv_im2col)
    if (form STREQUAL "valid")
        set(name ${name}_valid)
        set(generator halconv_im2col_valid)
    endif ()
    set(is_implicit false)
    if (variant STREQUAL "implicit")
        set(is_implicit true)
    endif ()
    halconv_precision_types(${precision} storage out)
    set(types input.type=${storage} kernel.type=${storage} output.type=${out})
    add_halide_library(${name} FROM halconv_generators
        GENERATOR ${generator}
        TARGETS ${HALCONV_CUDA_TARGET}
        USE_RUNTIME halconv_runtime
        PARAMS precision=${precision} ${types} implicit=${is_implicit})
    get_target_property(objects ${name} SOURCES)
    set(HALCONV_HALIDE_LIBRARIES ${HALCONV_HALIDE_LIBRARIES} ${name} PARENT_SCOPE)
    set(HALCONV_HALIDE_OBJECTS ${HALCONV_HALIDE_OBJECTS} ${objects} PARENT_SCOPE)
endfunction()

foreach (form IN ITEMS padded valid)
    foreach (p IN ITEMS f16 f16f32 f32)
        halconv_add_im2col_pipeline(im2col ${p} ${form})
    endforeach ()
    foreach (p IN ITEMS f16 f16f32)
        halconv_add_im2col_pipeline(implicit ${p} ${form})
    endforeach ()
endforeach ()

# Composed pipelines (float32 images, fixed types): halconv_<generator>_<schedule>.
function(halconv_add_composed_pipeline gen schedule)
    set(name halconv_${gen}_${schedule})
    if (schedule MATCHES "^gpu_")
        set(targets ${HALCONV_CUDA_TARGET})
    else ()
        set(targets ${HALCONV_CPU_TARGETS})
    endif ()
    add_halide_library(${name} FROM halconv_generators
        GENERATOR halconv_${gen}
        TARGETS ${targets}
        USE_RUNTIME halconv_runtime
        PARAMS schedule=${schedule})
    get_target_property(objects ${name} SOURCES)
    set(HALCONV_HALIDE_LIBRARIES ${HALCONV_HALIDE_LIBRARIES} ${name} PARENT_SCOPE)
    set(HALCONV_HALIDE_OBJECTS ${HALCONV_HALIDE_OBJECTS} ${objects} PARENT_SCOPE)
endfunction()

foreach (s IN ITEMS cpu_fused cpu_staged gpu_fused gpu_staged)
    halconv_add_composed_pipeline(edges ${s})
endforeach ()
halconv_add_composed_pipeline(unsharp cpu_tiled)
halconv_add_composed_pipeline(unsharp gpu_tensor_core)

get_target_property(_rt_sources halconv_runtime SOURCES)
list(TRANSFORM _rt_sources PREPEND "${CMAKE_CURRENT_BINARY_DIR}/")
list(APPEND HALCONV_HALIDE_OBJECTS ${_rt_sources})
