"""Role names: the dialogue's roles as chat formats and API models name them."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["API_ROLES", "api_role"]

# OpenCompass dialogue templates say HUMAN, BOT and SYSTEM.
API_ROLES: Mapping[str, str] = {
    "HUMAN": "user",
    "BOT": "assistant",
    "SYSTEM": "system",
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    # A raw-text item of an OpenCompass PromptList (an empty role): sent as the user's.
    "": "user",
}


def api_role(role: str) -> str:
    """``user``, ``assistant`` or ``system`` for a dialogue role; other roles pass through."""
    return API_ROLES.get(role, role)
