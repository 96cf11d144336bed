"""Where the package's catalogue and calibration data live (installed beside the module)."""

import os
from typing import Optional


def data_dir(explicit: Optional[str] = None) -> Optional[str]:
    """``explicit`` when given, else the package's ``data`` folder when installed, else ``None``
    (the library then resolves it: ``PARITY_DATA_DIR`` or the source tree's ``data/``)."""
    if explicit is not None:
        return os.fspath(explicit)
    packaged = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    return packaged if os.path.isdir(os.path.join(packaged, "hardware")) else None
