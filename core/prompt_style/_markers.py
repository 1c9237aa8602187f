"""The pluggy markers, in a module of their own so that plugins import nothing heavy."""

import pluggy

PROJECT_NAME = "prompt_style"
ENTRY_POINT_GROUP = "prompt_style"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
