"""transformers' clock, frozen for golden files (imported by the generators beside it).

transformers' ``strftime_now`` (the chat templates' ``strftime_now("%d %b %Y")``) reads
``datetime.now()`` in ``transformers.utils.chat_template_utils``: frozen, a template that
prints today's date gives the same text whenever a golden file is made, and the tests
render with the same moment (``now``).
"""

from __future__ import annotations

import datetime as _datetime


def freeze_transformers_clock(moment: _datetime.datetime) -> None:
    """Make transformers' ``strftime_now`` read ``moment`` from now on, in this process."""
    from transformers.utils import chat_template_utils

    class Frozen(_datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return moment

    chat_template_utils.datetime = Frozen
