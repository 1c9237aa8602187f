"""prompt-style: the exact prompts LLM evaluations send to models.

Public API; everything not re-exported here is private.
"""

from ._markers import hookimpl, hookspec
from .data import iter_records, load_records
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
    RenderError,
    SandboxError,
    StyleError,
    TargetError,
    TaskFileError,
    TaskFileWarning,
    TokenizerError,
    YamlLimitError,
)
from .fields import compile_field, process_field, resolve_gold
from .formats import load_task_config
from .formats.task_template import instantiate_task_template, read_task_template
from .harness import (
    ChatModel,
    ChatRequest,
    ChatResult,
    ScoringChatModel,
    accuracy,
    chat_requests,
    run_chat_model,
)
from .loading import Task, default_plugin_manager, load_task, render_records
from .meta import Conversation, ModelArgs, api_role, chat_meta, parse_model_args, read_conversation, render_chat
from .options import check_options
from .plugins import PluginInfo, PluginManager, Provider, create_plugin_manager
from .render import Candidate, RenderedPrompt, TaskRenderer, dialogue_to_json
from .safe.jinja_env import JinjaLimits, JinjaProfile
from .safe.limits import YamlLimits
from .safe.yaml_loader import YamlDocument, load_yaml
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
from .task import TaskConfig
from .types import (
    Dialogue,
    FieldExtractor,
    FormattedPrompt,
    Formatter,
    MetaTemplate,
    ModelInput,
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
    "render_records",
    "render_chat",
    "chat_meta",
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
    # building blocks for plugins
    "compile_field",
    "resolve_gold",
    "load_yaml",
    "YamlDocument",
    "JinjaProfile",
    "JinjaLimits",
    "YamlLimits",
    "api_role",
    "check_options",
    "QAStyle",
    "ChoiceStyle",
    "PassthroughStyle",
    "choice_style",
    "resolve_target",
    "DEFAULT_LABELS",
    # lm-evaluation-harness's template system (seed 000)
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
