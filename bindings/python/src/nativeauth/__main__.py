"""``python -m nativeauth …``: the command line (see :mod:`nativeauth.cli`)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
