"""Suite modules; importing this package imports every one of them so their figures register.

To add figures for a suite, drop a module here named after the suite (e.g. `idio.py`) that
uses `pmlab_report.figures.figure`. Suites without a module still get the generic run table.
"""

import importlib
import pkgutil

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
