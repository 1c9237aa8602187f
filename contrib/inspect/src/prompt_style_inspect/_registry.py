"""What inspect_ai loads through the ``inspect_ai`` entry point: the task, the
solver, the scorer and the offline model API, registered by importing them."""

from inspect_ai.model import modelapi

from .scorer import style_answer
from .solver import render
from .task import prompt_style_task


@modelapi(name="prompt_style_inspect")
def offline_model() -> type:
    from .model import OfflineModel

    return OfflineModel


__all__ = ["prompt_style_task", "render", "style_answer", "offline_model"]
