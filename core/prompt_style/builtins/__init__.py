"""The core's own plugins, registered through the same path as third-party ones."""

BUILTIN_PLUGINS: tuple[tuple[str, str], ...] = (
    ("builtin-fields", "prompt_style.builtins.fields"),
    ("builtin-styles", "prompt_style.builtins.styles"),
    ("builtin-meta", "prompt_style.builtins.meta"),
    ("builtin-retrievers", "prompt_style.builtins.retrievers"),
)
