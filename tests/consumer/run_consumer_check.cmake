# Installs the build tree into a scratch prefix, then configures, builds and runs the
# consumer project against it.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${HALCONV_BINARY_DIR}" --prefix "${WORK_DIR}/prefix"
                RESULT_VARIABLE r)
if (NOT r EQUAL 0)
    message(FATAL_ERROR "install failed")
endif ()
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${WORK_DIR}/build" -G Ninja
                        "-DCMAKE_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}" "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
                RESULT_VARIABLE r)
if (NOT r EQUAL 0)
    message(FATAL_ERROR "consumer configure failed")
endif ()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" RESULT_VARIABLE r)
if (NOT r EQUAL 0)
    message(FATAL_ERROR "consumer build failed")
endif ()
# A CPU-only halconv (WITH_CUDA OFF) must not pull CUDA into its users' programs, and a
# CUDA one only the driver (cudart is static; cuBLAS and cuFFT are opened when needed).
execute_process(COMMAND readelf -d "${WORK_DIR}/build/consumer" OUTPUT_VARIABLE needed RESULT_VARIABLE r)
if (NOT WITH_CUDA AND (NOT r EQUAL 0 OR needed MATCHES "cuda|cublas|cufft"))
    message(FATAL_ERROR "the consumer of a CPU-only halconv needs CUDA libraries (or readelf failed):\n${needed}")
endif ()
if (WITH_CUDA AND (NOT r EQUAL 0 OR needed MATCHES "cublas|cufft|cudart"))
    message(FATAL_ERROR "the consumer of halconv needs CUDA libraries beyond the driver (or readelf failed):\n${needed}")
endif ()
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE r)
if (NOT r EQUAL 0)
    message(FATAL_ERROR "consumer run failed")
endif ()

# The installed tree: Halide's headers in halconv's own folder only, the version header.
file(GLOB stray "${WORK_DIR}/prefix/include/Halide*.h")
if (stray OR NOT EXISTS "${WORK_DIR}/prefix/include/halconv/halide/HalideBuffer.h"
    OR NOT EXISTS "${WORK_DIR}/prefix/include/halconv/version.h")
    message(FATAL_ERROR "installed headers misplaced: ${stray}")
endif ()

# pkg-config: the same program built by hand from the .pc file (relocatable prefix).
find_program(PKG_CONFIG NAMES pkgconf pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} "")
file(GLOB_RECURSE pc_file "${WORK_DIR}/prefix/*/halconv.pc")
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs halconv OUTPUT_VARIABLE flags RESULT_VARIABLE r
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if (NOT r EQUAL 0)
    message(FATAL_ERROR "pkg-config halconv failed")
endif ()
separate_arguments(flags UNIX_COMMAND "${flags}")
execute_process(COMMAND c++ -std=c++20 "${CONSUMER_SOURCE_DIR}/main.cpp" -o "${WORK_DIR}/consumer_pc" ${flags}
                RESULT_VARIABLE r)
if (NOT r EQUAL 0)
    message(FATAL_ERROR "building with pkg-config's flags failed: ${flags}")
endif ()
execute_process(COMMAND "${WORK_DIR}/consumer_pc" RESULT_VARIABLE r)
if (NOT r EQUAL 0)
    message(FATAL_ERROR "the pkg-config build's run failed")
endif ()

# The installed tool finds its data in the prefix, not in the source tree.
if (EXISTS "${WORK_DIR}/prefix/bin/halconv")
    execute_process(COMMAND "${WORK_DIR}/prefix/bin/halconv" info OUTPUT_VARIABLE info RESULT_VARIABLE r)
    file(REAL_PATH "${WORK_DIR}/prefix/share/halconv" data)
    string(FIND "${info}" "Data (the demo's photo): ${data}" at)
    if (NOT r EQUAL 0 OR at LESS 0)
        message(FATAL_ERROR "installed halconv info does not use ${data}:\n${info}")
    endif ()
endif ()
