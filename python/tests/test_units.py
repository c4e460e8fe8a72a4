import pytest

from pmlab_report.units import compact, format_quantity, sig, size_label


@pytest.mark.parametrize("value, unit, expected", [
    (89908053.1, "ops/s", "89.9 Mops/s"),
    (5487.55, "MiB/s", "5.36 GiB/s"),
    (732.4, "MiB/s", "732 MiB/s"),
    (10.566, "ns", "10.6 ns"),
    (1234.5, "ns", "1.23 µs"),
    (999.96, "ns", "1.00 µs"),
    (0.98063, "ratio", "0.981"),
    (1.0, "count", "1"),
    (0, "count", "0"),
    (1e7, "count", "10.0 M"),
    (32768, "B", "32 KiB"),
    (1073741824, "B", "1 GiB"),
    (2.45, "GHz", "2.45 GHz"),
    (None, "ns", "\u2014"),
])
def test_format_quantity(value, unit, expected):
    assert format_quantity(value, unit) == expected


def test_sig_three_digits():
    assert sig(3.14159) == "3.14"
    assert sig(0.0012345) == "0.00123"
    assert sig(123456.0) == "123000"
    assert sig(9.996) == "10.0"


def test_tick_labels():
    assert [compact(v) for v in (10, 100, 1000, 20000, 0.5)] == ["10", "100", "1k", "20k", "0.5"]
    assert [size_label(v) for v in (64, 1024, 16384)] == ["64 B", "1 KiB", "16 KiB"]
