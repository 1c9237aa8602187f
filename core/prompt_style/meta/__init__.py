"""Step 5 of the pipeline: meta templates turn a dialogue into what a model takes
(the ``apply_meta_template`` hook)."""

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .model_args import ModelArgs, parse_model_args
    from .roles import API_ROLES, api_role

__all__ = [
    "API_ROLES",
    "api_role",
    "ModelArgs",
    "parse_model_args",
]

# Imported on first use: the built-in meta templates' plugin imports this package.
__getattr__, __dir__ = exports(
    __name__,
    {
        "ModelArgs": ".model_args",
        "parse_model_args": ".model_args",
        "API_ROLES": ".roles",
        "api_role": ".roles",
    },
)
