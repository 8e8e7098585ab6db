"""Kubernetes resource quantities ("64", "500m", "512Gi") as numbers, for checks and quota arithmetic."""

from __future__ import annotations

import re
from decimal import Decimal

_SUFFIXES = {
    "": Decimal(1),
    "m": Decimal("0.001"),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
}
QUANTITY = re.compile(r"(?P<number>\d+(?:\.\d+)?)(?P<suffix>m|k|M|G|T|Ki|Mi|Gi|Ti|Pi)?")
GIB = Decimal(2**30)
MIB = Decimal(2**20)


def quantity_value(text: str) -> Decimal:
    match = QUANTITY.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a Kubernetes quantity")
    return Decimal(match.group("number")) * _SUFFIXES[match.group("suffix") or ""]
