"""The package version: the one place it is written (pyproject.toml reads it from here). It equals the C library's
``NA_VERSION_STRING`` in ``include/nativeauth.h``; a test checks that."""

__version__ = "0.1.0"
