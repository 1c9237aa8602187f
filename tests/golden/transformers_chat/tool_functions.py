"""Python functions passed as tools: transformers turns each into a JSON schema
(``get_json_schema``); tools/golden/make_chat_golden.py records what it made and
the hf plugin's tests check that prompt-style makes the same."""

from __future__ import annotations

from enum import Enum
from typing import Literal, Optional, Union


def get_weather(city: str) -> list[dict]:
    """Get the weather for a city

    Args:
        city: City name
    """


def search(query: str, limit: int = 10, exact: bool = False, fields: Optional[list[str]] = None) -> dict[str, int]:
    """
    Search the index for documents.

    A longer description that spans
    two lines.

    Args:
        query: The text to look for,
            continued on an indented line.
        limit: How many results to return
        exact: Match the whole phrase
        fields: Which fields to search (choices: ["title", "body"])

    Returns:
        Counts per field.
    """


class Unit(Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


def convert(
    value: float, unit: Unit, mode: Literal["round", "floor", 3], pair: tuple[int, str], either: Union[int, str, None]
):
    """Convert a temperature.

    Args:
        value: The value
        unit: The target unit
        mode: How to round
        pair: A pair
        either: Anything simple
    """


class Calculator:
    def add(self, a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: The first number
            b: The second number

        Returns:
            The sum
        """
        return a + b


TOOLS = {"get_weather": get_weather, "search": search, "convert": convert, "Calculator.add": Calculator().add}
