# Warnings as errors on the project's own code (never on generated or third-party code).
# -Wno-restrict: GCC 12 reports a false positive inside libstdc++'s string concatenation
# at -O3 (GCC bug 105329).
function(halconv_warnings target)
    target_compile_options(${target} PRIVATE
        $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Werror -Wshadow -Wconversion -Wno-sign-conversion -Wno-restrict>
        $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic -Werror>
        $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
endfunction()
