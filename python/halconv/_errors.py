"""halconv's exceptions: one class per halconv::ErrorCode, each also the built-in
exception Python code expects for that kind of failure."""


class Error(Exception):
    """Every failure halconv reports; ``code`` names the C++ library's ErrorCode."""

    code = ""


class InvalidArgumentError(Error, ValueError):
    """The call is malformed: arrays, shapes, dtypes, option values, a non-finite kernel."""

    code = "invalid_argument"


class UnsupportedError(Error, ValueError):
    """A well-formed request the chosen algorithm or device cannot run (its limits)."""

    code = "unsupported"


class DeviceError(Error, RuntimeError):
    """The CUDA device or driver failed, or none is usable where one was required."""

    code = "device"


class OutOfMemoryError(Error, MemoryError):
    """Host or device memory ran out."""

    code = "out_of_memory"


class FileError(Error, OSError):
    """A file could not be read or written, or holds what was not expected."""

    code = "io"


class InternalError(Error, RuntimeError):
    """A Halide runtime or pipeline failure that no validation foresaw."""

    code = "internal"


ERROR_TYPES = {cls.code: cls for cls in (InvalidArgumentError, UnsupportedError, DeviceError, OutOfMemoryError,
                                         FileError, InternalError)}
