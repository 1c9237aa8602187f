"""The core's own plugins, registered through the same path as third-party ones.

Listed in pipeline order: task-file formats, field specs, retrievers, styles,
meta templates; then the task-template feature (a reader, its style and a formatter).
"""

BUILTIN_PLUGINS: tuple[tuple[str, str], ...] = (
    ("builtin-formats", "prompt_style.formats.builtin"),
    ("builtin-fields", "prompt_style.fields.builtin"),
    ("builtin-retrievers", "prompt_style.retrievers.builtin"),
    ("builtin-styles", "prompt_style.styles.builtin"),
    ("builtin-meta", "prompt_style.meta.builtin"),
    ("builtin-task-templates", "prompt_style.formats.task_template.plugin"),
)
