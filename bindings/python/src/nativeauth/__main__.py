"""``python -m nativeauth …``: runs the native ``nativeauth`` command (see ``_nativeauth_command``)."""
from _nativeauth_command import main

if __name__ == "__main__":
    main()
