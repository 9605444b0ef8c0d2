# The machinery behind variants.cmake (halconv's registry of variants): every registry
# row becomes AOT Halide libraries, one per precision (and per form), CPU as one
# multitarget library each, CUDA one library each, all sharing one Halide runtime; and
# halconv_write_registry() derives from the rows what the rest of the build reads:
#   <build>/generated/include/halconv/algorithm.h   the public algorithm enums
#   <build>/generated/halconv_registry.inc          src/'s table of rows and entry points
# Sets HALCONV_HALIDE_LIBRARIES and HALCONV_HALIDE_OBJECTS.

# The CPU pipelines' Halide multitarget, best first: each call runs the first target the
# CPU supports. Never 'host': shipped code must not depend on the build machine.
set(HALCONV_CPU_TARGETS x86-64-linux-avx512_skylake-avx2-fma-f16c-sse41 x86-64-linux-avx2-fma-f16c-sse41 x86-64-linux
    CACHE STRING "Halide targets of the CPU pipelines, best first (a multitarget library)")
# A CPU-only build (HALCONV_WITH_CUDA=OFF) has no CUDA target: its registry keeps the
# CUDA rows' algorithms in the enums (the same values in every build) but builds none
# of their pipelines.
if (HALCONV_WITH_CUDA)
    set(HALCONV_CUDA_TARGET x86-64-linux-cuda-cuda_capability_86)
else ()
    set(HALCONV_CUDA_TARGET "")
endif ()
# In halconv::Precision, Mode and Boundary order (include/halconv/types.h).
set(HALCONV_PRECISIONS f64 f32 f16 f16f32)
set(HALCONV_MODES valid same full)
set(HALCONV_BOUNDARIES constant nearest reflect mirror wrap)
set(HALCONV_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)

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

# Every generator and schedule file: a new one needs no edit here.
file(GLOB HALCONV_GENERATOR_SOURCES CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/generators/*_generator.cpp ${CMAKE_SOURCE_DIR}/schedules/*_schedules.cpp)
add_halide_generator(halconv_generators SOURCES ${HALCONV_GENERATOR_SOURCES})
# runtime_kernels/contract.h: the extern stages' names and limits, shared with the kernels.
target_include_directories(halconv_generators PRIVATE generators schedules include runtime_kernels)
halconv_warnings(halconv_generators)

add_halide_runtime(halconv_runtime TARGETS ${HALCONV_CPU_TARGETS} ${HALCONV_CUDA_TARGET})

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

# halconv_generator(<name> SIGNATURE <kernel2d|kernel2d_extended|separable|low_rank|edges|unsharp|recursive_gaussian|
#                                     bilateral>
#                   SCHEDULE_PARAM <GeneratorParam the rows' schedule sets>
#                   [PRECISIONS <default precisions>] [FIXED_TYPES | TYPED <buffer>...]
#                   [VALID_FORM] [BATCH_FORM] [TENSOR_CORES] [FINITE_INPUT])
# Declares the Halide generator halconv_<name> (generators/<name>_generator.cpp): how
# src/ calls its pipelines (SIGNATURE, internal::Signature), which of its buffers take
# the precision's storage type (TYPED; `output` takes the output type), FIXED_TYPES when
# it has no precision parameter (one library per row), VALID_FORM when a second
# generator halconv_<name>_valid computes the valid correlation of the image as it is;
# BATCH_FORM when halconv_<name>_batch (and _valid_batch) take a batch of images
# (x, y, n) in one call: built for its CUDA rows that are not autoscheduled, where one
# launch per batch is what fills the device with small images (src/plan.cpp, batches);
# FINITE_INPUT when every output of a tile depends on every sample of it (a transform):
# a call whose image holds NaN or Inf runs a direct variant instead (src/plan.cpp).
function(halconv_generator name)
    cmake_parse_arguments(ARG "FIXED_TYPES;VALID_FORM;BATCH_FORM;TENSOR_CORES;FINITE_INPUT" "SIGNATURE;SCHEDULE_PARAM"
                          "PRECISIONS;TYPED" ${ARGN})
    if (NOT ARG_SIGNATURE OR NOT ARG_SCHEDULE_PARAM)
        message(FATAL_ERROR "halconv_generator(${name}): SIGNATURE and SCHEDULE_PARAM are required")
    endif ()
    if (NOT ARG_PRECISIONS)
        set(ARG_PRECISIONS ${HALCONV_PRECISIONS})
    endif ()
    foreach (key SIGNATURE SCHEDULE_PARAM PRECISIONS TYPED FIXED_TYPES VALID_FORM BATCH_FORM TENSOR_CORES FINITE_INPUT)
        set_property(GLOBAL PROPERTY HALCONV_GENERATOR_${name}_${key} "${ARG_${key}}")
    endforeach ()
    set_property(GLOBAL PROPERTY HALCONV_GENERATOR_${name}_DECLARED TRUE)
endfunction()

# The generators of generators/, as src/ calls them.
halconv_generator(conv2d SIGNATURE kernel2d SCHEDULE_PARAM schedule TYPED input kernel output BATCH_FORM)
halconv_generator(conv2d_cuda SIGNATURE kernel2d SCHEDULE_PARAM form TYPED input kernel output BATCH_FORM)
halconv_generator(separable SIGNATURE separable SCHEDULE_PARAM schedule TYPED input row_kernel col_kernel output)
halconv_generator(separable_cuda SIGNATURE separable SCHEDULE_PARAM form TYPED input row_kernel col_kernel output)
halconv_generator(low_rank SIGNATURE low_rank SCHEDULE_PARAM schedule TYPED input row_factors col_factors output)
halconv_generator(low_rank_cuda SIGNATURE low_rank SCHEDULE_PARAM form TYPED input row_factors col_factors output)
halconv_generator(tensor_core SIGNATURE kernel2d_extended SCHEDULE_PARAM variant PRECISIONS f16 f16f32 f32
                  TYPED input kernel output VALID_FORM BATCH_FORM TENSOR_CORES)
halconv_generator(fft SIGNATURE kernel2d SCHEDULE_PARAM tile TYPED input kernel output FINITE_INPUT)
halconv_generator(cufft SIGNATURE kernel2d_extended SCHEDULE_PARAM form TYPED input kernel output VALID_FORM)
halconv_generator(multichannel SIGNATURE kernel2d SCHEDULE_PARAM schedule TYPED input kernel output)
halconv_generator(multichannel_gemm SIGNATURE kernel2d SCHEDULE_PARAM gemm PRECISIONS f32 f16 f16f32
                  TYPED input kernel output VALID_FORM)
halconv_generator(edges SIGNATURE edges SCHEDULE_PARAM schedule PRECISIONS f32 FIXED_TYPES)
halconv_generator(edges_cuda SIGNATURE edges SCHEDULE_PARAM form PRECISIONS f32 FIXED_TYPES)
halconv_generator(unsharp SIGNATURE unsharp SCHEDULE_PARAM schedule PRECISIONS f32 FIXED_TYPES)
halconv_generator(recursive_gaussian SIGNATURE recursive_gaussian SCHEDULE_PARAM schedule PRECISIONS f64 f32 f16f32
                  TYPED input output)
halconv_generator(recursive_gaussian_cuda SIGNATURE recursive_gaussian SCHEDULE_PARAM form
                  PRECISIONS f64 f32 f16f32 TYPED input output)
halconv_generator(bilateral SIGNATURE bilateral SCHEDULE_PARAM schedule PRECISIONS f64 f32 f16f32 TYPED input output)
halconv_generator(bilateral_tensor_core SIGNATURE bilateral SCHEDULE_PARAM layout PRECISIONS f16f32 TYPED input output
                  TENSOR_CORES)

# halconv_api(<api> [ENUM <name>] [AUTOMATIC "<doc>"]): the rows that follow belong to
# entry point <api>; its algorithms form the public enum <name> (value 0 `automatic`
# first when AUTOMATIC is given).
function(halconv_api api)
    cmake_parse_arguments(ARG "" "ENUM;AUTOMATIC" "" ${ARGN})
    set_property(GLOBAL APPEND PROPERTY HALCONV_APIS ${api})
    set_property(GLOBAL PROPERTY HALCONV_API_${api}_ENUM "${ARG_ENUM}")
    set_property(GLOBAL PROPERTY HALCONV_API_${api}_AUTOMATIC "${ARG_AUTOMATIC}")
    set_property(GLOBAL PROPERTY HALCONV_CURRENT_API ${api})
endfunction()

# A C++ string literal of `text`.
function(_halconv_cxx_string text out_var)
    string(REPLACE "\\" "\\\\" text "${text}")
    string(REPLACE "\"" "\\\"" text "${text}")
    set(${out_var} "\"${text}\"" PARENT_SCOPE)
endfunction()

# The bit mask of `items` within `all` (bit i for the i-th of `all`); fails on an unknown item.
function(_halconv_mask what all items out_var)
    set(mask 0)
    foreach (item IN LISTS items)
        list(FIND all ${item} i)
        if (i LESS 0)
            message(FATAL_ERROR "variants.cmake: unknown ${what} '${item}'; allowed: ${all}")
        endif ()
        math(EXPR mask "${mask} | (1 << ${i})")
    endforeach ()
    set(${out_var} ${mask} PARENT_SCOPE)
endfunction()

# Adds one AOT library; appends it to the library and object lists.
function(_halconv_add_library name generator targets)
    add_halide_library(${name} FROM halconv_generators
        GENERATOR ${generator}
        TARGETS ${targets}
        USE_RUNTIME halconv_runtime
        ${ARGN})
    get_target_property(objects ${name} SOURCES)  # absolute paths of the generated objects
    set_property(GLOBAL APPEND PROPERTY HALCONV_LIBRARY_LIST ${name})
    set_property(GLOBAL APPEND PROPERTY HALCONV_OBJECT_LIST ${objects})
endfunction()

# halconv_variant(<algorithm> <device> <generator> <schedule> ...): see variants.cmake.
function(halconv_variant algorithm device generator schedule)
    cmake_parse_arguments(ARG "" "AUTOSCHEDULER;API;DOC" "PRECISIONS;MODES;BOUNDARIES;REQUIRES;PARAMS" ${ARGN})
    if (ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "halconv_variant(${algorithm} ...): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
    endif ()
    get_property(declared GLOBAL PROPERTY HALCONV_GENERATOR_${generator}_DECLARED)
    if (NOT declared)
        message(FATAL_ERROR "halconv_variant(${algorithm} ...): no generator '${generator}' is declared "
                            "(halconv_generator in cmake/halconv_registry.cmake)")
    endif ()
    foreach (key SIGNATURE SCHEDULE_PARAM PRECISIONS TYPED FIXED_TYPES VALID_FORM BATCH_FORM TENSOR_CORES FINITE_INPUT)
        get_property(gen_${key} GLOBAL PROPERTY HALCONV_GENERATOR_${generator}_${key})
    endforeach ()
    if (NOT ARG_API)
        get_property(ARG_API GLOBAL PROPERTY HALCONV_CURRENT_API)
    endif ()
    if (device STREQUAL "cpu")
        set(targets ${HALCONV_CPU_TARGETS})
        set(cxx_device cpu)
    elseif (device STREQUAL "cuda")
        set(targets ${HALCONV_CUDA_TARGET})
        set(cxx_device cuda)
    else ()
        message(FATAL_ERROR "halconv_variant(${algorithm} ...): device '${device}'; allowed cpu, cuda")
    endif ()
    if (NOT ARG_PRECISIONS)
        set(ARG_PRECISIONS ${gen_PRECISIONS})
    endif ()
    foreach (p IN LISTS ARG_PRECISIONS)
        list(FIND gen_PRECISIONS ${p} i)
        if (i LESS 0)
            message(FATAL_ERROR "halconv_variant(${algorithm} ...): generator ${generator} has no precision ${p}")
        endif ()
    endforeach ()
    if (NOT ARG_MODES)
        set(ARG_MODES ${HALCONV_MODES})
    endif ()
    if (NOT ARG_BOUNDARIES)
        set(ARG_BOUNDARIES ${HALCONV_BOUNDARIES})
    endif ()
    _halconv_mask(mode "${HALCONV_MODES}" "${ARG_MODES}" modes)
    _halconv_mask(boundary "${HALCONV_BOUNDARIES}" "${ARG_BOUNDARIES}" boundaries)
    set(as_args "")
    set(autoscheduled false)
    if (ARG_AUTOSCHEDULER)
        set(as_args AUTOSCHEDULER Halide::${ARG_AUTOSCHEDULER})
        set(autoscheduled true)
    endif ()

    # The algorithm's place in its API's enum: order of first appearance, after
    # `automatic` (0) when the API has one.
    get_property(algorithms GLOBAL PROPERTY HALCONV_API_${ARG_API}_ALGORITHMS)
    list(FIND algorithms ${algorithm} index)
    if (index LESS 0)
        list(LENGTH algorithms index)
        set_property(GLOBAL APPEND PROPERTY HALCONV_API_${ARG_API}_ALGORITHMS ${algorithm})
        set_property(GLOBAL PROPERTY HALCONV_ALGORITHM_${ARG_API}_${algorithm}_DOC "${ARG_DOC}")
    elseif (ARG_DOC)
        message(FATAL_ERROR "halconv_variant(${algorithm} ...): DOC belongs on the algorithm's first row")
    endif ()
    get_property(automatic GLOBAL PROPERTY HALCONV_API_${ARG_API}_AUTOMATIC)
    set(value ${index})
    if (automatic)
        math(EXPR value "${index} + 1")
    endif ()
    if (device STREQUAL "cuda" AND NOT HALCONV_WITH_CUDA)
        return()
    endif ()

    # One library per precision (and per form); the row's entry points in Precision order.
    set(fns "")
    set(libraries "")
    set(includes "")
    foreach (p IN LISTS HALCONV_PRECISIONS)
        list(FIND ARG_PRECISIONS ${p} supported)
        if (supported LESS 0)
            list(APPEND fns "{}")
            list(APPEND libraries "nullptr")
            continue()
        endif ()
        if (gen_FIXED_TYPES)
            set(name halconv_${generator}_${schedule})
            set(params ${gen_SCHEDULE_PARAM}=${schedule})
        else ()
            set(name halconv_${generator}_${schedule}_${p})
            halconv_precision_types(${p} storage out)
            set(params ${gen_SCHEDULE_PARAM}=${schedule} precision=${p})
            foreach (b IN LISTS gen_TYPED)
                if (b STREQUAL "output")
                    list(APPEND params output.type=${out})
                else ()
                    list(APPEND params ${b}.type=${storage})
                endif ()
            endforeach ()
        endif ()
        _halconv_add_library(${name} halconv_${generator} "${targets}" ${as_args} PARAMS ${params} ${ARG_PARAMS})
        list(APPEND includes ${name})
        set(fn ".${gen_SIGNATURE} = ${name}")
        if (gen_VALID_FORM)
            _halconv_add_library(${name}_valid halconv_${generator}_valid "${targets}" PARAMS ${params})
            list(APPEND includes ${name}_valid)
            string(APPEND fn ", .valid = ${name}_valid")
        endif ()
        if (gen_BATCH_FORM AND device STREQUAL "cuda" AND NOT ARG_AUTOSCHEDULER)
            _halconv_add_library(${name}_batch halconv_${generator}_batch "${targets}" PARAMS ${params})
            list(APPEND includes ${name}_batch)
            string(APPEND fn ", .${gen_SIGNATURE}_batch = ${name}_batch")
            if (gen_VALID_FORM)
                _halconv_add_library(${name}_valid_batch halconv_${generator}_valid_batch "${targets}"
                                     PARAMS ${params})
                list(APPEND includes ${name}_valid_batch)
                string(APPEND fn ", .valid_batch = ${name}_valid_batch")
            endif ()
        endif ()
        list(APPEND fns "{${fn}}")
        list(APPEND libraries "\"${name}\"")
    endforeach ()

    set(limits "")
    foreach (limit IN LISTS ARG_REQUIRES)
        list(APPEND limits "limit_${limit}")
    endforeach ()
    list(LENGTH limits limit_count)
    if (limit_count GREATER 4)
        message(FATAL_ERROR "halconv_variant(${algorithm} ...): at most 4 REQUIRES")
    endif ()
    set(tensor_cores false)
    if (gen_TENSOR_CORES)
        set(tensor_cores true)
    endif ()
    set(finite_input false)
    if (gen_FINITE_INPUT)
        set(finite_input true)
    endif ()
    _halconv_cxx_string("${ARG_DOC}" doc)
    list(JOIN fns ", " fns_text)
    list(JOIN libraries ", " libraries_text)
    list(JOIN limits ", " limits_text)
    set(row "    {.api = Api::${ARG_API},\n")
    string(APPEND row "     .algorithm = \"${algorithm}\",\n")
    string(APPEND row "     .value = ${value},\n")
    string(APPEND row "     .device = Device::${cxx_device},\n")
    string(APPEND row "     .generator = \"${generator}\",\n")
    string(APPEND row "     .schedule = \"${schedule}\",\n")
    string(APPEND row "     .signature = Signature::${gen_SIGNATURE},\n")
    string(APPEND row "     .tensor_cores = ${tensor_cores},\n")
    string(APPEND row "     .autoscheduled = ${autoscheduled},\n")
    string(APPEND row "     .finite_input = ${finite_input},\n")
    string(APPEND row "     .modes = ${modes},\n")
    string(APPEND row "     .boundaries = ${boundaries},\n")
    string(APPEND row "     .limits = {${limits_text}},\n")
    string(APPEND row "     .pipelines = {${fns_text}},\n")
    string(APPEND row "     .libraries = {${libraries_text}},\n")
    string(APPEND row "     .doc = ${doc}},\n")
    set_property(GLOBAL APPEND_STRING PROPERTY HALCONV_ROWS_TEXT "${row}")
    set_property(GLOBAL APPEND PROPERTY HALCONV_ROW_INCLUDES ${includes})
endfunction()

# Writes algorithm.h and halconv_registry.inc (only when their text changes, so an
# unchanged registry rebuilds nothing) and sets HALCONV_HALIDE_LIBRARIES / _OBJECTS.
function(halconv_write_registry)
    get_property(apis GLOBAL PROPERTY HALCONV_APIS)
    set(enums "")
    set(api_table "")
    foreach (api IN LISTS apis)
        get_property(enum GLOBAL PROPERTY HALCONV_API_${api}_ENUM)
        get_property(automatic GLOBAL PROPERTY HALCONV_API_${api}_AUTOMATIC)
        get_property(algorithms GLOBAL PROPERTY HALCONV_API_${api}_ALGORITHMS)
        set(names "")
        set(docs "")
        set(value 0)
        set(values "")
        if (automatic)
            list(APPEND names "\"auto\"")
            _halconv_cxx_string("${automatic}" d)
            list(APPEND docs "${d}")
            string(APPEND values "    automatic = 0,  // ${automatic}\n")
            set(value 1)
        endif ()
        foreach (a IN LISTS algorithms)
            get_property(doc GLOBAL PROPERTY HALCONV_ALGORITHM_${api}_${a}_DOC)
            string(APPEND values "    ${a} = ${value},  // ${doc}\n")
            list(APPEND names "\"${a}\"")
            _halconv_cxx_string("${doc}" d)
            list(APPEND docs "${d}")
            math(EXPR value "${value} + 1")
        endforeach ()
        if (enum)
            string(APPEND enums "// The algorithms of ${api} (variants.cmake).\nenum class ${enum} : int32_t {\n${values}};\n\n")
        endif ()
        set(has_automatic false)
        if (automatic)
            set(has_automatic true)
        endif ()
        list(JOIN names ", " names_text)
        list(JOIN docs ",\n      " docs_text)
        _halconv_cxx_string("${enum}" enum_text)
        string(APPEND api_table "    {.api = Api::${api}, .name = \"${api}\", .enum_name = ${enum_text}, "
                                ".has_automatic = ${has_automatic},\n     .algorithms = {${names_text}},\n"
                                "     .docs = {${docs_text}}},\n")
    endforeach ()

    set(header "// Generated by cmake/halconv_registry.cmake from variants.cmake, halconv's registry\n")
    string(APPEND header "// of variants: edit the registry, not this file. Values follow the registry's order.\n")
    string(APPEND header "#pragma once\n\n#include <cstdint>\n\nnamespace halconv {\n\n${enums}}  // namespace halconv\n")
    file(WRITE ${HALCONV_GENERATED_DIR}/algorithm.h.tmp "${header}")
    configure_file(${HALCONV_GENERATED_DIR}/algorithm.h.tmp ${HALCONV_GENERATED_DIR}/include/halconv/algorithm.h
                   COPYONLY)

    get_property(includes GLOBAL PROPERTY HALCONV_ROW_INCLUDES)
    list(SORT includes)
    set(inc "// Generated by cmake/halconv_registry.cmake from variants.cmake, halconv's registry\n")
    string(APPEND inc "// of variants: edit the registry, not this file. Included once, by src/registry.cpp.\n")
    foreach (i IN LISTS includes)
        string(APPEND inc "#include \"${i}.h\"\n")
    endforeach ()
    get_property(rows GLOBAL PROPERTY HALCONV_ROWS_TEXT)
    string(APPEND inc "\nnamespace halconv::internal {\n\n")
    string(APPEND inc "const VariantRow generated_rows[] = {\n${rows}};\n\n")
    string(APPEND inc "const ApiInfo generated_apis[] = {\n${api_table}};\n\n")
    string(APPEND inc "}  // namespace halconv::internal\n")
    file(WRITE ${HALCONV_GENERATED_DIR}/halconv_registry.inc.tmp "${inc}")
    configure_file(${HALCONV_GENERATED_DIR}/halconv_registry.inc.tmp ${HALCONV_GENERATED_DIR}/halconv_registry.inc
                   COPYONLY)

    get_property(libraries GLOBAL PROPERTY HALCONV_LIBRARY_LIST)
    get_property(objects GLOBAL PROPERTY HALCONV_OBJECT_LIST)
    get_target_property(rt_sources halconv_runtime SOURCES)
    list(TRANSFORM rt_sources PREPEND "${CMAKE_BINARY_DIR}/")
    list(APPEND objects ${rt_sources})
    set(HALCONV_HALIDE_LIBRARIES ${libraries} PARENT_SCOPE)
    set(HALCONV_HALIDE_OBJECTS ${objects} PARENT_SCOPE)
endfunction()
