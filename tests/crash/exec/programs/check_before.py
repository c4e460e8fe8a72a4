"""Judges a crash image: exit 1 when the 64 bytes at offset LATER hold LATER_BYTE but the 64 at EARLIER do
not hold EARLIER_BYTE (a record persisted before the one it depends on), else 0.
usage: check_before.py IMAGE EARLIER EARLIER_BYTE LATER LATER_BYTE"""
import sys

image, earlier, earlier_byte, later, later_byte = sys.argv[1:6]
data = open(image, "rb").read()


def holds(at, byte):
    return data[int(at):int(at) + 64] == byte.encode() * 64


sys.exit(1 if holds(later, later_byte) and not holds(earlier, earlier_byte) else 0)
