"""What a ``doc_to_choice`` value reads as: a list of choices, as lm-evaluation-harness reads it.

The renderer reads every record's choices with :func:`choice_list`, and the
template system (``TemplateConfig.wrap_doc_to_choice``) reads them the same way.
"""

from __future__ import annotations

import ast
from typing import Any

from ..errors import FieldError, cut

__all__ = ["choice_list"]


def choice_list(value: Any) -> list[Any] | None:
    """``value`` as a list of choices: a list as it is, a tuple as a list, a string
    that is a Python literal of a list or tuple (a rendered template gives text;
    lm-evaluation-harness reads it with ``ast.literal_eval``); ``None`` stays ``None``.

    :raises FieldError: for anything else (key ``doc_to_choice``).
    """
    if value is None or isinstance(value, list):
        return value
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, str):
        # A rendered template gives text; lm-evaluation-harness reads it as a Python literal.
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, (list, tuple)):
            return list(parsed)
    raise FieldError(
        f"gave {type(value).__name__} {cut(value)}, not a list of choices",
        key="doc_to_choice",
        hint="use a single {{ expression }} such as '{{choices}}' to keep the list",
    )
