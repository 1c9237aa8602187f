"""The code generator for chat templates: Jinja's ``CodeGenerator`` with each part's fast paths mixed in."""

from __future__ import annotations

from typing import Any

from jinja2 import nodes
from jinja2.compiler import Frame

from .codegen_access import AccessGenerator
from .codegen_budget import InlineBudgetGenerator
from .codegen_loops import LoopGenerator
from .codegen_root import BufferedRootGenerator


class FastCodeGenerator(LoopGenerator, AccessGenerator, BufferedRootGenerator, InlineBudgetGenerator):
    """Jinja's code generator with the fast paths described in :mod:`prompt_style_hf.fastpath`
    (each part's methods in its own module; none is defined twice)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fast_loops: dict[str, tuple[str, str, str]] = {}
        self._hoisted: dict[str, str | None] = {}
        self._buffered_root = False
        self._root_frame: Frame | None = None
        self._commons_written = False
        self._module_lines: list[str] = []
        self._root_resolved: set[str] = set()
        self._def_pending: str | bool = False
        self._uncounted_body = False
        self._print_temps: list[str | None] = []
        self._printed_chain: nodes.Node | None = None
        self._namespace_keys: set[str] = set()
        self._eager_selections: set[int] = set()
        self._direct_macros: dict[str, int] = {}
        self._truth_nodes: set[int] = set()
        self._plain_messages: set[int] = set()  # names read as plain messages (_plain_message_reads)
        self._printed_names: set[int] = set()
        self._no_loop_vars = False
        self._owned_context = False
        self._hoist_next_def = False
        self._hoist_start = 0
        self._hoisted_macros: list[tuple[int, int]] = []
