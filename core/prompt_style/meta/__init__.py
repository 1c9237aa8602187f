"""Step 5 of the pipeline: meta templates turn a dialogue into what a model takes
(the ``apply_meta_template`` hook)."""

from .model_args import ModelArgs, parse_model_args
from .roles import API_ROLES, api_role

__all__ = ["API_ROLES", "api_role", "ModelArgs", "parse_model_args"]
