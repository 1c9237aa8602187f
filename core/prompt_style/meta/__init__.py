"""Step 5 of the pipeline: meta templates turn a dialogue into what a model takes
(the ``apply_meta_template`` hook)."""

from .chat import Conversation, chat_meta, read_conversation, render_chat
from .roles import API_ROLES, api_role

__all__ = ["API_ROLES", "api_role", "Conversation", "chat_meta", "read_conversation", "render_chat"]
