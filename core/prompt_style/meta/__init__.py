"""Step 5 of the pipeline: meta templates turn a dialogue into what a model takes
(the ``apply_meta_template`` hook)."""

from .roles import API_ROLES, api_role

__all__ = ["API_ROLES", "api_role"]
