"""Number formatting: three significant digits with SI-ish prefixes.

Pure functions only; used by the HTML tables and by figure tick labels.
"""

from __future__ import annotations

import math

DASH = "\u2014"

_SI_UP = ["", "k", "M", "G", "T", "P", "E"]
_SI_DOWN = ["", "m", "\u00b5", "n", "p", "f"]
_BINARY = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]

# Units whose value is a plain number: shown without a unit suffix in cells
# (the column header carries the unit).
PLAIN_UNITS = {"", "ratio", "count", "x", "\u00d7"}

_TIME_SCALE = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "\u00b5s": 1e-6, "ns": 1e-9, "ps": 1e-12}
_BYTE_SCALE = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def sig(value: float, digits: int = 3, keep_integers: bool = True) -> str:
    """`value` rounded to `digits` significant digits, without exponent notation.

    Small integral values stay integers ('64', not '64.0') unless `keep_integers` is false.
    """
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    if keep_integers and float(value).is_integer() and abs(value) < 10**digits:
        return str(int(value))
    exponent = math.floor(math.log10(abs(value)))
    decimals = digits - 1 - exponent
    rounded = round(value, decimals)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > exponent:
        decimals -= 1  # 9.996 -> 10.0, not 10.00
        rounded = round(value, decimals)
    if decimals > 0:
        return f"{rounded:.{decimals}f}"
    return f"{rounded:.0f}"


def _round_sig(value: float, digits: int = 3) -> float:
    if value == 0 or not math.isfinite(value):
        return value
    exponent = math.floor(math.log10(abs(value)))
    return round(value, digits - 1 - exponent)


def format_si(value: float, unit: str = "", digits: int = 3) -> str:
    """`value` with a decimal SI prefix, e.g. 8.99e7 ops/s -> '89.9 Mops/s'."""
    if not math.isfinite(value):
        return f"{value} {unit}".strip()
    rounded = _round_sig(value, digits)
    if rounded == 0:
        return f"0 {unit}".strip()
    step = math.floor(math.log10(abs(rounded)) / 3)
    if step > 0:
        step = min(step, len(_SI_UP) - 1)
        prefix = _SI_UP[step]
    elif step < 0:
        step = max(step, -(len(_SI_DOWN) - 1))
        prefix = _SI_DOWN[-step]
    else:
        prefix = ""
    scaled = value / 1000.0**step
    return f"{sig(scaled, digits, keep_integers=step == 0)} {prefix}{unit}".strip()


def format_binary(value: float, unit: str = "B", digits: int = 3) -> str:
    """`value` bytes (or bytes/s etc.) with a binary prefix, e.g. 5.75e9 B/s -> '5.36 GiB/s'."""
    if not math.isfinite(value) or value == 0:
        return f"{sig(value, digits)} {unit}"
    step = 0
    scaled = float(value)
    while abs(scaled) >= 1024 and step < len(_BINARY) - 1:
        scaled /= 1024.0
        step += 1
    # Exact powers of two stay exact ('32 KiB', not '32.0 KiB').
    return f"{sig(scaled, digits, keep_integers=scaled.is_integer())} {_BINARY[step]}{unit}"


def format_quantity(value, unit: str | None) -> str:
    """A metric value for display; `None` (a metric that could not be computed) becomes a dash."""
    if value is None or not _is_number(value):
        return DASH
    unit = unit or ""
    if unit in PLAIN_UNITS:
        if abs(value) >= 1e4:
            return format_si(value)
        if value != 0 and abs(value) < 1e-3:
            return f"{value:.3g}"
        return sig(value)
    if unit == "%":
        return f"{sig(value)}%"
    if unit in _TIME_SCALE:
        return format_si(value * _TIME_SCALE[unit], "s")
    if unit in _BYTE_SCALE:
        return format_binary(value * _BYTE_SCALE[unit], "B")
    if unit.endswith("/s") and unit[:-2] in _BYTE_SCALE:
        return format_binary(value * _BYTE_SCALE[unit[:-2]], "B/s")
    return format_si(value, unit)


def compact(value: float) -> str:
    """Short tick label: 1000 -> '1k', 0.5 -> '0.5', 25000 -> '25k'."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    step = math.floor(math.log10(abs(value)) / 3)
    step = min(step, len(_SI_UP) - 1)
    if step <= 0:
        return f"{value:.3g}"
    prefix = _SI_UP[step]
    return f"{value / 1000.0**step:.3g}{prefix}"


def size_label(num_bytes: float) -> str:
    """Compact byte size for axis ticks: 64 -> '64 B', 4096 -> '4 KiB'."""
    step = 0
    scaled = float(num_bytes)
    while abs(scaled) >= 1024 and step < len(_BINARY) - 1:
        scaled /= 1024.0
        step += 1
    return f"{scaled:.3g} {_BINARY[step]}B"
