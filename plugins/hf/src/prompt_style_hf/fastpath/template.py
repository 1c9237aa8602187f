"""A chat template compiled by the fast code generator, rendered with a directly built context; the cache."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import nodes
from jinja2.environment import Template
from jinja2.nodes import EvalContext
from jinja2.runtime import Context

from prompt_style import safe as _safe

from .analysis import _charge_printed_constants, _plain_message_reads
from .codegen import FastCodeGenerator
from .hoist import hoist_macros
from .names import _CONTEXT_FIELDS_OK

_FILENAME = "<chat template>"


class FastTemplate:
    """A template compiled by :class:`FastCodeGenerator`, rendered with a directly
    built ``Context``.

    :param environment: the sandboxed environment (from the profile).
    :param source: the template source.
    :param plain_messages: compile for renders whose messages are all plain
        (``{"role": str, "content": str}``, nothing else): a ``{% for message in
        messages %}`` loop reads ``message.role`` and ``message.content`` directly
        (see ``analysis._plain_message_reads``). Such a template must only be given
        such messages, and no variable named in :attr:`plain_names`;
        :attr:`specialized` says whether it reads any that way.
    """

    def __init__(self, environment: Any, source: str, *, plain_messages: bool = False) -> None:
        self.environment = environment
        ast = environment.parse(source)
        python, self._root_takes_parent, names = _generated(environment, ast, plain_messages)
        self.specialized = names is not None
        """Whether it reads plain messages directly (only with ``plain_messages``)."""
        self.plain_names: frozenset[str] = names or frozenset()
        """The names other than ``messages`` whose lists of messages it reads as plain
        (``loop_messages``): a render's variables must not name them (or it must be
        rendered by the general compilation)."""
        code = compile(python, _FILENAME, "exec")
        self.template = Template.from_code(environment, code, dict(environment.globals))
        self._root = self.template.root_render_func
        self._globals = dict(environment.globals)
        self._globals_keys = set(self._globals)
        self._shared_eval_ctx = None
        if ast.find(nodes.EvalContextModifier) is None and ast.find(nodes.ScopedEvalContextModifier) is None:
            self._shared_eval_ctx = EvalContext(environment, None)
        self._direct_context = _CONTEXT_FIELDS_OK and not self.template.blocks
        self.render_context = self._renderer()
        """``render_context(parent) -> str``: one render, without budgets of its own."""
        self.runner = _safe.runner()
        """jinja_env's runner: ``runner(render_context, None, template, None, None, (parent,))``
        is :meth:`render_owned` without its frame."""
        self.run_owned = _safe.bound_runner(self.render_context, self.template)
        """``run_owned(parent)``: :meth:`render_owned`, as one call."""

    def new_variables(self) -> dict[str, Any]:
        """A fresh mapping of the environment's globals, to add a render's variables
        to and pass to :meth:`render_owned`."""
        return self._globals.copy()

    def render(self, variables: Mapping[str, Any]) -> str:
        """Render with ``variables`` as the template's context."""
        parent = self.new_variables()
        parent.update(variables)
        return self.render_owned(parent)

    def render_owned(self, parent: dict[str, Any]) -> str:
        """Render with ``parent`` (globals and variables, from :meth:`new_variables`)
        as the context; ``parent`` becomes the context's own."""
        # One render's budgets (loops, sizes, time, output), as jinja_env.render keeps them.
        return self.run_owned(parent)

    def _renderer(self) -> Callable[[dict[str, Any]], str]:
        root = self._root
        if self._root_takes_parent:
            return root  # it makes its context and returns the text (see FastCodeGenerator)
        if not self._direct_context:
            new_context = self.template.new_context
            return lambda parent: "".join(root(new_context(parent)))
        new = Context.__new__
        environment = self.environment
        shared_eval_ctx = self._shared_eval_ctx
        globals_keys = self._globals_keys
        # Contexts of finished renders, to reuse: the generated code adds nothing to a
        # context but its variables (see FastCodeGenerator.writeline), which are new each time.
        spare: list[Context] = []
        take, give = spare.pop, spare.append

        def render(parent: dict[str, Any]) -> str:
            try:
                context = take()
            except IndexError:
                # Context(environment, parent, None, {}) with its attributes set directly.
                context = new(Context)
                context.environment = environment
                context.exported_vars = set()
                context.name = None
                context.globals_keys = globals_keys
                context.blocks = {}
            context.parent = parent
            context.vars = {}
            context.eval_ctx = shared_eval_ctx or EvalContext(environment, None)
            try:
                return "".join(root(context))
            finally:
                context.parent = context.vars = None  # nothing of this render is kept
                if len(spare) < 8:
                    give(context)

        return render

    def template_line(self, python_line: int) -> int:
        """The template line of a line of the generated code."""
        return self.template.get_corresponding_lineno(python_line)

    @property
    def filename(self) -> str:
        return _FILENAME


def _generate(environment: Any, ast: nodes.Template, plain_messages: bool = False) -> str:
    return _generated(environment, ast, plain_messages)[0]


def _generated(
    environment: Any, ast: nodes.Template, plain_messages: bool = False
) -> tuple[str, bool, frozenset[str] | None]:
    """The Python source of ``ast`` from :class:`FastCodeGenerator`, whether its root
    takes the parent mapping, and, when it reads plain messages directly (only with
    ``plain_messages``: see :class:`FastTemplate`), the names of the lists it reads
    them from besides ``messages`` (else ``None``). A sandbox with budgets rewrites the
    tree first (``jinja_env.prepare_tree``: every loop counted, every ``~`` sized), as
    its own compiler does."""
    ast = _safe.prepare_tree(ast)
    _charge_printed_constants(ast)
    generator = FastCodeGenerator(environment, None, _FILENAME, optimized=environment.optimized)
    names = None
    if plain_messages:
        generator._plain_messages, names = _plain_message_reads(ast)
    generator.visit(ast)
    source = generator.stream.getvalue()
    if generator._owned_context:
        source = source.replace("def root(context, missing=missing,", "def root(parent, missing=missing,", 1)
    if generator._buffered_root:
        # The root's preamble names that the code never uses: not set (a line of `pass`
        # instead, so that line numbers stay as the debug information has them).
        for name, line in _PREAMBLE:
            if f"{name}(" not in source:
                source = source.replace(line, "    pass", 1)
    if generator._owned_context:
        source = hoist_macros(source, generator._hoisted_macros, _FILENAME)
    return source, generator._owned_context, names if generator._plain_messages else None


_PREAMBLE = [
    (name, f"    {name} = {value}")
    for name, value in (
        ("resolve", "context.resolve_or_missing"),
        ("concat", "environment.concat"),
        ("cond_expr_undefined", "Undefined"),
    )
]


_FAST: dict[tuple[int, str], FastTemplate] = {}
_FAST_PLAIN: dict[tuple[int, str], FastTemplate] = {}


def compile_fast(environment: Any, source: str, *, plain_messages: bool = False) -> FastTemplate:
    """The fast template for ``source`` (compiled once per process and environment);
    with ``plain_messages``, the one for renders of plain messages (see
    :class:`FastTemplate`), which is the general one when no loop reads them."""
    key = (id(environment), source)
    cache = _FAST_PLAIN if plain_messages else _FAST
    found = cache.get(key)
    if found is None or found.environment is not environment:
        found = FastTemplate(environment, source, plain_messages=plain_messages)
        if plain_messages and not found.specialized:
            found = compile_fast(environment, source)
        cache[key] = found
    return found
