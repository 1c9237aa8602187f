"""Untrusted input, handled in one place: the Jinja sandbox every template renders
in, and the YAML loader every file is read with.

This package is public for plugins that render templates of their own (the
``hf`` plugin's chat templates, and its compiled fast path): the names below are
the sandbox's API (``jinja_env.py`` documents how to use it, docs/security.md
the budgets). The modules themselves are private; everything else a plugin
needs is re-exported from ``prompt_style``.
"""

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .jinja_env import (
        AMPLIFYING_STR_METHODS,
        CHEAP_TEXT,
        COMPARE_FILTER,
        CONCAT_FILTER,
        LOOP_FILTER,
        JinjaProfile,
        binop_value,
        bound_runner,
        budget_getter,
        call_method,
        check_method_call,
        check_str_call,
        compile_expression,
        compile_template,
        concat_values,
        current_budget,
        current_time,
        environment,
        errors,
        evaluate,
        fixed_clock,
        loop_items,
        plus_values,
        prepare_tree,
        print_value,
        render,
        run,
        runner,
    )
    from .limits import JinjaLimits, configure, limits_scope, reload

__all__ = [
    # compiling and rendering in the sandbox
    "JinjaProfile",
    "JinjaLimits",
    "environment",
    "compile_template",
    "compile_expression",
    "render",
    "evaluate",
    "errors",
    "fixed_clock",
    "current_time",
    # budgets
    "configure",
    "limits_scope",
    "reload",
    # for code generators that render a template's parsed tree themselves
    "prepare_tree",
    "run",
    "runner",
    "bound_runner",
    "current_budget",
    "budget_getter",
    "loop_items",
    "binop_value",
    "plus_values",
    "concat_values",
    "check_str_call",
    "call_method",
    "check_method_call",
    "CHEAP_TEXT",
    "AMPLIFYING_STR_METHODS",
    "print_value",
    "LOOP_FILTER",
    "CONCAT_FILTER",
    "COMPARE_FILTER",
    "compare_values",
]

# Imported on first use: reading a task file must not import jinja2 for nothing.
__getattr__, __dir__ = exports(
    __name__,
    {
        **dict.fromkeys(
            [name for name in __all__ if name not in ("JinjaLimits", "configure", "limits_scope", "reload")],
            ".jinja_env",
        ),
        **dict.fromkeys(["JinjaLimits", "configure", "limits_scope", "reload"], ".limits"),
    },
)
