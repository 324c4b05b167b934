"""Shapes and their areas."""

from __future__ import annotations

import math
from typing import (
    Iterable,
    Protocol,
)


class Shape(Protocol):
    """Anything with an area."""

    def area(self) -> float:
        ...


# A circle, by its radius.
@dataclass(frozen=True)
class Circle:
    r: float

    def area(self) -> float:
        s = f"{self.r!r:>{10}} and {'nested'}"
        return math.pi * self.r ** 2

    @property
    def diameter(self) -> float:
        text = """a long
        docstring-like string"""
        return 2 * self.r


def total(shapes: Iterable[Shape]) -> float:
    return sum(s.area() for s in shapes)


if __name__ == "__main__":
    print(total([Circle(1.0)]))
