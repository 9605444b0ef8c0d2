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
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE r)
if (NOT r EQUAL 0)
    message(FATAL_ERROR "consumer run failed")
endif ()
