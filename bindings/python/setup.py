"""Build hook: a wheel that carries libnativeauth.so (`make wheel` puts it in src/nativeauth/) is tagged for this
platform — and for any Python 3, since the library does not use Python's C API (py3-none-<platform>). Without the
library inside (a plain `pip install ./bindings/python`), the wheel stays pure and finds the library elsewhere (see
nativeauth/_loader.py)."""
import pathlib

from setuptools import Distribution, setup

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = pathlib.Path(__file__).resolve().parent


def bundles_library() -> bool:
    return any((HERE / "src" / "nativeauth").glob("libnativeauth.so*"))


class LibraryDistribution(Distribution):
    """With the library inside, the package is platform-specific: installed to platlib, wheel not pure."""

    def has_ext_modules(self) -> bool:
        return bundles_library()


class PlatformWheel(bdist_wheel):  # type: ignore[misc, valid-type]
    def get_tag(self) -> tuple:
        python, abi, plat = super().get_tag()
        if bundles_library():
            return "py3", "none", plat
        return python, abi, plat


setup(distclass=LibraryDistribution, cmdclass={"bdist_wheel": PlatformWheel})
