"""prompt-style: the exact prompts LLM evaluations send to models.

Public API; everything not re-exported here is private.

The names below are imported when first used (PEP 562), so that ``import
prompt_style`` (the ``prompt-style`` command, a plugin's ``from prompt_style
import hookimpl``) costs only what it uses; ``from prompt_style import X`` works
as ever.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import exports
from ._markers import hookimpl, hookspec
from .errors import (
    ChatTemplateError,
    DataError,
    FieldError,
    LimitError,
    OptionError,
    PluginConflictError,
    PluginError,
    PluginLoadWarning,
    PluginNotFoundError,
    PromptStyleError,
    RecordErrors,
    RenderError,
    SandboxError,
    StyleError,
    TargetError,
    TaskFileError,
    TaskFileWarning,
    TokenizerError,
    YamlLimitError,
)

if TYPE_CHECKING:
    from .axes import Axis, Constraint, StyleAxes, cell_id
    from .chat import Conversation, chat_meta, read_conversation, render_chat
    from .choice_order import ChoiceOrder
    from .data import iter_records, load_records
    from .fields import compile_field, process_field, resolve_gold
    from .formats import load_task_config
    from .formats.task_template import instantiate_task_template, read_task_template
    from .grid import Cell, Grid, make_grid
    from .harness import (
        ChatModel,
        ChatRequest,
        ChatResult,
        ScoringChatModel,
        accuracy,
        chat_requests,
        run_chat_model,
    )
    from .lint import Finding, lint_task
    from .load_options import TASK_OPTIONS, task_options
    from .loading import Task, load_task, render_records
    from .map_function import PromptMapper, as_map_function
    from .meta import ModelArgs, api_role, parse_model_args
    from .meta.opencompass import OpenCompassMeta
    from .meta.pieces import message_pieces
    from .options import check_options
    from .plugins import PluginInfo, PluginManager, Provider, create_plugin_manager, default_plugin_manager
    from .render import Candidate, RenderedPrompt, TaskRenderer, dialogue_to_json
    from .retrievers.checks import check_ids_agree, check_pool_size, example_count, ranking_count
    from .retrievers.opencompass import input_columns_option, input_text
    from .safe.files import read_bytes_file, read_text_file
    from .safe.jinja_env import JinjaLimits, JinjaProfile
    from .safe.limits import YamlLimits
    from .safe.yaml_loader import YamlDocument, load_yaml
    from .scoring import Score, score_predictions
    from .spread import CellResult, Spread, read_results, spread_of
    from .styles import (
        DEFAULT_LABELS,
        ChoiceStyle,
        ClozeTemplateConfig,
        MCQTemplateConfig,
        PassthroughStyle,
        QAStyle,
        TemplateConfig,
        TemplateFactory,
        choice_style,
        resolve_target,
    )
    from .styles.answers import ChoiceAnswerParser, choice_answer_parser
    from .styles.axes import choice_axes
    from .task import TaskConfig
    from .types import (
        AnswerParser,
        AnswerParserFactory,
        AxesFactory,
        Dialogue,
        Exporter,
        ExportRequest,
        ExportResult,
        FieldExtractor,
        FormattedPrompt,
        Formatter,
        MetaTemplate,
        ModelInput,
        ParsedAnswer,
        ReadOptions,
        Retriever,
        Sample,
        Style,
        StyleSettings,
        TaskReader,
        TaskSource,
        Tokenizer,
        TokenizerLoader,
        Turn,
    )

__all__ = [
    "hookimpl",
    "hookspec",
    # loading and rendering
    "load_task",
    "task_options",
    "TASK_OPTIONS",
    "render_records",
    "as_map_function",
    "PromptMapper",
    "render_chat",
    "chat_meta",
    "message_pieces",
    "read_conversation",
    "Conversation",
    "parse_model_args",
    "ModelArgs",
    "load_task_config",
    # task-template files
    "read_task_template",
    "instantiate_task_template",
    "Task",
    "TaskConfig",
    "TaskRenderer",
    "RenderedPrompt",
    "Candidate",
    "dialogue_to_json",
    "iter_records",
    "load_records",
    # harnesses: chat models
    "ChatModel",
    "ScoringChatModel",
    "ChatRequest",
    "ChatResult",
    "chat_requests",
    "run_chat_model",
    "accuracy",
    # plugins
    "create_plugin_manager",
    "default_plugin_manager",
    "PluginManager",
    "PluginInfo",
    "Provider",
    # the data model
    "TaskSource",
    "ReadOptions",
    "TaskReader",
    "Sample",
    "Turn",
    "Dialogue",
    "FormattedPrompt",
    "ModelInput",
    "StyleSettings",
    "FieldExtractor",
    "Style",
    "MetaTemplate",
    "Retriever",
    "Formatter",
    "Tokenizer",
    "TokenizerLoader",
    "ExportRequest",
    "ExportResult",
    "Exporter",
    # building blocks for plugins
    "compile_field",
    "resolve_gold",
    "load_yaml",
    "YamlDocument",
    "read_text_file",
    "read_bytes_file",
    "JinjaProfile",
    "JinjaLimits",
    "YamlLimits",
    "api_role",
    "OpenCompassMeta",
    "check_options",
    "QAStyle",
    "ChoiceStyle",
    "PassthroughStyle",
    "choice_style",
    "resolve_target",
    "DEFAULT_LABELS",
    # format grids and generative multiple choice
    "Axis",
    "Constraint",
    "StyleAxes",
    "AxesFactory",
    "cell_id",
    "choice_axes",
    "ParsedAnswer",
    "AnswerParser",
    "AnswerParserFactory",
    "ChoiceAnswerParser",
    "choice_answer_parser",
    "score_predictions",
    "Score",
    "make_grid",
    "Grid",
    "Cell",
    "ChoiceOrder",
    "read_results",
    "spread_of",
    "Spread",
    "CellResult",
    "lint_task",
    "Finding",
    "example_count",
    "check_pool_size",
    "check_ids_agree",
    "ranking_count",
    "input_columns_option",
    "input_text",
    # lm-evaluation-harness's template system
    "TemplateConfig",
    "MCQTemplateConfig",
    "ClozeTemplateConfig",
    "TemplateFactory",
    "process_field",
    # errors
    "PromptStyleError",
    "TaskFileError",
    "DataError",
    "FieldError",
    "StyleError",
    "TargetError",
    "OptionError",
    "RenderError",
    "RecordErrors",
    "ChatTemplateError",
    "PluginError",
    "PluginNotFoundError",
    "PluginConflictError",
    "PluginLoadWarning",
    "LimitError",
    "SandboxError",
    "YamlLimitError",
    "TaskFileWarning",
    "TokenizerError",
]

# name -> the module that defines it (the imports above, made on first use)
_LAZY: dict[str, str] = {
    "Axis": ".axes",
    "Constraint": ".axes",
    "StyleAxes": ".axes",
    "cell_id": ".axes",
    "choice_axes": ".styles.axes",
    "ChoiceAnswerParser": ".styles.answers",
    "Score": ".scoring",
    "make_grid": ".grid",
    "Grid": ".grid",
    "Cell": ".grid",
    "ChoiceOrder": ".choice_order",
    "read_results": ".spread",
    "spread_of": ".spread",
    "Spread": ".spread",
    "CellResult": ".spread",
    "lint_task": ".lint",
    "Finding": ".lint",
    "score_predictions": ".scoring",
    "choice_answer_parser": ".styles.answers",
    "AnswerParser": ".types",
    "AnswerParserFactory": ".types",
    "AxesFactory": ".types",
    "ParsedAnswer": ".types",
    "iter_records": ".data",
    "load_records": ".data",
    "compile_field": ".fields",
    "process_field": ".fields",
    "resolve_gold": ".fields",
    "load_task_config": ".formats",
    "instantiate_task_template": ".formats.task_template",
    "read_task_template": ".formats.task_template",
    "ChatModel": ".harness",
    "ChatRequest": ".harness",
    "ChatResult": ".harness",
    "ScoringChatModel": ".harness",
    "accuracy": ".harness",
    "chat_requests": ".harness",
    "run_chat_model": ".harness",
    "Task": ".loading",
    "load_task": ".loading",
    "render_records": ".loading",
    "PromptMapper": ".map_function",
    "as_map_function": ".map_function",
    "Conversation": ".chat",
    "ModelArgs": ".meta",
    "api_role": ".meta",
    "chat_meta": ".chat",
    "parse_model_args": ".meta",
    "read_conversation": ".chat",
    "render_chat": ".chat",
    "message_pieces": ".meta.pieces",
    "check_options": ".options",
    "PluginInfo": ".plugins",
    "PluginManager": ".plugins",
    "Provider": ".plugins",
    "create_plugin_manager": ".plugins",
    "default_plugin_manager": ".plugins",
    "Candidate": ".render",
    "RenderedPrompt": ".render",
    "TaskRenderer": ".render",
    "dialogue_to_json": ".render",
    "check_ids_agree": ".retrievers.checks",
    "check_pool_size": ".retrievers.checks",
    "example_count": ".retrievers.checks",
    "ranking_count": ".retrievers.checks",
    "input_columns_option": ".retrievers.opencompass",
    "input_text": ".retrievers.opencompass",
    "OpenCompassMeta": ".meta.opencompass",
    "JinjaLimits": ".safe.jinja_env",
    "JinjaProfile": ".safe.jinja_env",
    "YamlLimits": ".safe.limits",
    "YamlDocument": ".safe.yaml_loader",
    "load_yaml": ".safe.yaml_loader",
    "read_text_file": ".safe.files",
    "read_bytes_file": ".safe.files",
    "DEFAULT_LABELS": ".styles",
    "ChoiceStyle": ".styles",
    "ClozeTemplateConfig": ".styles",
    "MCQTemplateConfig": ".styles",
    "PassthroughStyle": ".styles",
    "QAStyle": ".styles",
    "TemplateConfig": ".styles",
    "TemplateFactory": ".styles",
    "choice_style": ".styles",
    "resolve_target": ".styles",
    "TaskConfig": ".task",
    "TASK_OPTIONS": ".load_options",
    "task_options": ".load_options",
    "Dialogue": ".types",
    "Exporter": ".types",
    "ExportRequest": ".types",
    "ExportResult": ".types",
    "FieldExtractor": ".types",
    "FormattedPrompt": ".types",
    "Formatter": ".types",
    "MetaTemplate": ".types",
    "ModelInput": ".types",
    "ReadOptions": ".types",
    "Retriever": ".types",
    "Sample": ".types",
    "Style": ".types",
    "StyleSettings": ".types",
    "TaskReader": ".types",
    "TaskSource": ".types",
    "Tokenizer": ".types",
    "TokenizerLoader": ".types",
    "Turn": ".types",
}

_getattr, _dir = exports(__name__, _LAZY, submodules=True)


def __getattr__(name: str):
    if name == "__version__":
        global __version__
        __version__ = _version()
        return __version__
    return _getattr(name)


def __dir__() -> list[str]:
    return sorted({*_dir(), "__version__"})


def _version() -> str:
    """The installed version of prompt-style (``prompt_style.__version__``), read from
    the distribution's metadata when first asked for (not at import: start-up stays
    small); ``0+unknown`` when run from a source tree that was never installed."""
    from ._entry_points import distribution_version

    return distribution_version("prompt-style") or "0+unknown"
