"""A faster code generator for chat templates: Jinja's own, with cheaper hot paths.

Jinja compiles a template to Python source. Chat templates spend most of their
time in a few places of that code: the sandbox's ``getattr``/``getitem`` for
every ``message['role']`` and ``message.content``, the sandbox's ``call`` for
every ``content.strip()``, ``LoopContext`` objects for ``loop.index0`` and
``loop.last``, and the creation of a ``Context`` per render. This module
subclasses Jinja's ``CodeGenerator`` and changes only those:

* ``x.attr`` and ``x[key]`` on a plain ``dict``, ``list``, ``tuple`` or ``str``
  read the value directly when it is there (a dict key that is not a dict
  method name; an index in range); anything else goes to the sandbox's own
  ``getattr``/``getitem``, unchanged.
* Calling a bound method of a ``str`` or ``dict`` that the sandbox already
  handed out (``strip``, ``split``, ``get``, ``items``, ...; never
  ``str.format``) calls it directly; any other call goes to the sandbox's
  ``call``, unchanged.
* A ``for`` loop whose body reads only ``loop.index0``, ``index``, ``first``,
  ``last``, ``length``, ``revindex``, ``revindex0``, ``previtem``,
  ``nextitem``, ``depth`` or ``depth0`` (no loop filter, not recursive) runs
  over a list with ``enumerate`` and computes those values inline.
* A render builds its ``Context`` directly (same attributes as Jinja's).

Everything else — scoping, macros, filters, tests, Undefined, whitespace — is
Jinja's code generator itself. The result is checked against Jinja's own
rendering on every corpus template and golden conversation (the ``jinja``
engine of the tests). The environment (with its sandbox) is the one
:mod:`prompt_style.safe.jinja_env` builds for the profile.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import BuiltinMethodType
from typing import Any

from jinja2 import filters as jinja_filters
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, DependencyFinderVisitor, Frame, optimizeconst
from jinja2.environment import Template
from jinja2.exceptions import FilterArgumentError
from jinja2.filters import _prepare_attribute_parts
from jinja2.idtracking import VAR_LOAD_PARAMETER, VAR_LOAD_RESOLVE
from jinja2.nodes import EvalContext
from jinja2.runtime import Context, LoopContext, Macro, Undefined, missing
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import _PassArg
from markupsafe import Markup

from prompt_style.safe import jinja_env as _jinja_env

from .environment import TemplateNamespace

__all__ = ["FastTemplate", "compile_fast", "FAST_LOOP_ATTRIBUTES"]

_FILENAME = "<chat template>"
_DICT_ATTRIBUTES = frozenset(dir(dict))
_SEQUENCE_ATTRIBUTES = frozenset(dir(str)) | frozenset(dir(list)) | frozenset(dir(tuple))
_LOOP_ATTRIBUTES = frozenset(name for name in dir(LoopContext) if not name.startswith("_"))

# The filters with a fast version, used when the environment has Jinja's own.
_FAST_FILTERS = {
    name: f"fast_{name}"
    for name in ("select", "reject", "selectattr", "rejectattr", "map")
    if name in jinja_filters.FILTERS
}
# Filters of one string and no arguments, with a fast path for a plain str
# (Jinja's: soft_str(value).strip(), .lower(), .upper()).
_STR_FILTERS = {"trim": "strip", "lower": "lower", "upper": "upper"}

# Bound methods the sandbox hands out and that only read their object (the
# sandbox wraps str.format and str.format_map, so they are not here).
# The str methods whose result can be far larger than their input (``replace``,
# ``join``, ``center``...) always go through the sandbox's ``call``, which sizes them.
AMPLIFYING_STR_METHODS = getattr(
    _jinja_env,
    "AMPLIFYING_STR_METHODS",
    frozenset({"center", "ljust", "rjust", "zfill", "expandtabs", "replace", "join", "translate"}),
)
_SAFE_STR_METHODS = (
    frozenset(
        """capitalize casefold count endswith find index isalnum isalpha isascii isdecimal isdigit
        isidentifier islower isnumeric isprintable isspace istitle isupper lower lstrip
        partition removeprefix removesuffix rfind rindex rpartition rsplit rstrip split
        splitlines startswith strip swapcase title upper""".split()
    )
    - AMPLIFYING_STR_METHODS
)
_SAFE_DICT_METHODS = frozenset({"get", "items", "keys", "values"})

FAST_LOOP_ATTRIBUTES = frozenset(
    {"index0", "index", "first", "last", "length", "revindex", "revindex0", "previtem", "nextitem", "depth", "depth0"}
)

_HELPERS: dict[int, tuple[Any, dict[str, Callable[..., Any]]]] = {}


def helpers(environment: Any) -> dict[str, Callable[..., Any]]:
    """The fast accessors and filters for ``environment``; the generated code imports them."""
    found = _HELPERS.get(id(environment))
    if found is not None and found[0] is environment:
        return found[1]
    env_getattr = environment.getattr
    env_getitem = environment.getitem
    env_call = environment.call
    undefined = environment.undefined
    tests = environment.tests

    def fast_getattr(obj: Any, attribute: str) -> Any:
        kind = type(obj)
        if kind is dict:
            if attribute not in _DICT_ATTRIBUTES:
                # The sandbox: getattr fails, so obj[attribute], else undefined.
                try:
                    return obj[attribute]
                except KeyError:
                    return undefined(obj=obj, name=attribute)
            if attribute in _SAFE_DICT_METHODS:
                return getattr(obj, attribute)
        elif kind is str:
            if attribute in _SAFE_STR_METHODS:
                return getattr(obj, attribute)
            if attribute not in _SEQUENCE_ATTRIBUTES:
                return undefined(obj=obj, name=attribute)
        elif kind is TemplateNamespace:
            if attribute[:1] != "_":
                # The sandbox allows a namespace's attributes that do not start with "_".
                try:
                    return obj._Namespace__attrs[attribute]
                except KeyError:
                    return undefined(obj=obj, name=attribute)
        elif kind is LoopContext and attribute in _LOOP_ATTRIBUTES:
            return getattr(obj, attribute)
        return env_getattr(obj, attribute)

    def fast_getitem(obj: Any, argument: Any) -> Any:
        kind = type(obj)
        if kind is dict:
            try:
                return obj[argument]
            except Exception:
                pass  # the sandbox decides: an attribute, or undefined
        elif kind is str or kind is list or kind is tuple:
            if type(argument) is str:
                # A name on a sequence: its attribute (for the sandbox to check), else undefined.
                if argument in _SEQUENCE_ATTRIBUTES:
                    return env_getitem(obj, argument)
                return undefined(obj=obj, name=argument)
            try:
                return obj[argument]
            except Exception:
                pass
        return env_getitem(obj, argument)

    def fast_call(context: Any, func: Any, /, *args: Any, **kwargs: Any) -> Any:
        kind = type(func)
        if kind is BuiltinMethodType:
            owner = type(func.__self__)
            name = func.__name__
            if (owner is str and name in _SAFE_STR_METHODS) or (owner is dict and name in _SAFE_DICT_METHODS):
                kwargs.pop("_loop_vars", None)
                kwargs.pop("_block_vars", None)
                return func(*args, **kwargs)
        elif kind is Macro or func is TemplateNamespace:
            # What the sandbox's call does for the template's own macros (which take the
            # eval context) and namespace(): both are safe callables.
            kwargs.pop("_loop_vars", None)
            kwargs.pop("_block_vars", None)
            try:
                if kind is not Macro:
                    return func(*args, **kwargs)
                count = func._argument_count
                if (
                    not kwargs
                    and len(args) <= count
                    and not (func.caller or func.catch_kwargs or func.catch_varargs)
                    and (len(args) == count or "caller" not in func.arguments)
                ):
                    # Macro.__call__ for positional arguments only: the missing ones are
                    # `missing` (the macro fills in its defaults), then _invoke.
                    if len(args) < count:
                        args = (*args, *([missing] * (count - len(args))))
                    rv = func._func(*args)
                    return Markup(rv) if context.eval_ctx.autoescape else rv
                return func(context.eval_ctx, *args, **kwargs)
            except StopIteration:
                return undefined("value was undefined because a callable raised a StopIteration exception")
        return env_call(context, func, *args, **kwargs)

    def attrgetter(attribute: Any, default: Any = None) -> Callable[[Any], Any]:
        """Jinja's ``make_attrgetter`` with the fast item access."""
        parts = _prepare_attribute_parts(attribute)
        if len(parts) == 1 and default is None:
            part = parts[0]
            return lambda item: fast_getitem(item, part)

        def get(item: Any) -> Any:
            for part in parts:
                item = fast_getitem(item, part)
                if default is not None and isinstance(item, Undefined):
                    item = default
            return item

        return get

    def tester(context: Any, name: Any, args: tuple, kwargs: dict) -> Callable[[Any], Any]:
        """``environment.call_test(name, item, args, kwargs, context)`` as a function of item."""
        func = tests.get(name) if isinstance(name, str) else None
        if func is None or _PassArg.from_obj(func) is not None:
            return lambda item: environment.call_test(name, item, args, kwargs, context)
        if kwargs:
            return lambda item: func(item, *args, **kwargs)
        if args:
            return lambda item: func(item, *args)
        return func

    def select_or_reject(context: Any, value: Any, args: tuple, kwargs: dict, negate: bool, lookup_attr: bool):
        # Jinja's select_or_reject (a generator: nothing runs before the first item is asked for).
        if value:
            if lookup_attr:
                try:
                    attr = args[0]
                except LookupError:
                    raise FilterArgumentError("Missing parameter for attribute name") from None
                transform = attrgetter(attr)
                off = 1
            else:
                transform = None
                off = 0
            try:
                name = args[off]
                test = tester(context, name, args[1 + off :], kwargs)
            except LookupError:
                test = bool
            for item in value:
                result = test(transform(item) if transform is not None else item)
                if (not result) if negate else result:
                    yield item

    def fast_select(context: Any, value: Any, *args: Any, **kwargs: Any):
        return select_or_reject(context, value, args, kwargs, False, False)

    def fast_reject(context: Any, value: Any, *args: Any, **kwargs: Any):
        return select_or_reject(context, value, args, kwargs, True, False)

    def fast_selectattr(context: Any, value: Any, *args: Any, **kwargs: Any):
        return select_or_reject(context, value, args, kwargs, False, True)

    def fast_rejectattr(context: Any, value: Any, *args: Any, **kwargs: Any):
        return select_or_reject(context, value, args, kwargs, True, True)

    def fast_map(context: Any, value: Any, *args: Any, **kwargs: Any):
        # Jinja's sync_do_map (a generator).
        if value:
            if not args and "attribute" in kwargs:
                attribute = kwargs.pop("attribute")
                default = kwargs.pop("default", None)
                if kwargs:
                    raise FilterArgumentError(f"Unexpected keyword argument {next(iter(kwargs))!r}")
                func = attrgetter(attribute, default)
            else:
                try:
                    name = args[0]
                    args = args[1:]
                except LookupError:
                    raise FilterArgumentError("map requires a filter argument") from None

                def func(item: Any) -> Any:
                    return environment.call_filter(name, item, args, kwargs, context=context)

            for item in value:
                yield func(item)

    new = object.__new__
    autoescape = environment.autoescape

    def fast_macro(
        func: Any,
        name: Any,
        arguments: tuple,
        catch_kwargs: bool,
        catch_varargs: bool,
        caller: bool,
        default_autoescape: Any,
    ) -> Any:
        # Macro(environment, ...) with the attributes Macro.__init__ sets, set directly.
        macro = new(Macro)
        macro._environment = environment
        macro._func = func
        macro._argument_count = len(arguments)
        macro.name = name
        macro.arguments = arguments
        macro.catch_kwargs = catch_kwargs
        macro.catch_varargs = catch_varargs
        macro.caller = caller
        macro.explicit_caller = "caller" in arguments
        if default_autoescape is None:
            default_autoescape = autoescape(None) if callable(autoescape) else autoescape
        macro._default_autoescape = default_autoescape
        return macro

    made = {
        "fast_macro": fast_macro if _MACRO_FIELDS_OK else None,
        "fast_getattr": fast_getattr,
        "fast_getitem": fast_getitem,
        "fast_call": fast_call,
        "fast_select": fast_select,
        "fast_reject": fast_reject,
        "fast_selectattr": fast_selectattr,
        "fast_rejectattr": fast_rejectattr,
        "fast_map": fast_map,
    }
    _HELPERS[id(environment)] = (environment, made)
    return made


def _simple_loop_use(body: list[nodes.Node]) -> bool:
    """Whether every ``loop`` in ``body`` is ``loop.<one of FAST_LOOP_ATTRIBUTES>``."""
    ok = True

    def walk(node: nodes.Node, parent: nodes.Node | None) -> None:
        nonlocal ok
        if not ok:
            return
        # A macro may be called after the loop (a call block, filter block or block
        # assignment runs at once, inside the iteration).
        if isinstance(node, (nodes.Macro, nodes.Block)):
            if any(n.name == "loop" for n in node.find_all(nodes.Name)):
                ok = False
                return
        if isinstance(node, nodes.Name) and node.name == "loop":
            if not (isinstance(parent, nodes.Getattr) and parent.attr in FAST_LOOP_ATTRIBUTES):
                ok = False
            return
        for child in node.iter_child_nodes():
            walk(child, node)

    for node in body:
        walk(node, None)
    return ok


class FastCodeGenerator(CodeGenerator):
    """Jinja's code generator with the fast paths described in the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fast_loops: dict[str, tuple[str, str, str]] = {}
        self._hoisted: set[str] = set()
        self._buffered_root = False
        self._root_frame: Frame | None = None
        self._commons_written = False
        self._module_lines: list[str] = []
        self._root_resolved: set[str] = set()

    # -- the root function fills a list instead of yielding ------------------------------

    def write_commons(self) -> None:
        if self._buffered_root and not self._commons_written:
            # The root's preamble, without the dead `yield` that makes it a generator.
            self._commons_written = True
            self.writeline("resolve = context.resolve_or_missing")
            self.writeline("undefined = environment.undefined")
            self.writeline("concat = environment.concat")
            self.writeline("cond_expr_undefined = Undefined")
            self.writeline("_ps_parent_get = context.parent.get")
            return
        super().write_commons()

    def pull_dependencies(self, nodes_: Any) -> None:
        if not self._buffered_root:
            super().pull_dependencies(nodes_)
            return
        # The filters and tests are looked up once, when the template is loaded (module
        # level, after the root function), not at every render; a missing one still
        # fails only when it is called, as in Jinja.
        visitor = DependencyFinderVisitor()
        for node in nodes_:
            visitor.visit(node)
        for id_map, names, dependency in (
            (self.filters, visitor.filters, "filters"),
            (self.tests, visitor.tests, "tests"),
        ):
            for name in sorted(names):
                if name not in id_map:
                    id_map[name] = self.temporary_identifier()
                self._module_lines.extend(
                    [
                        "try:",
                        f"    {id_map[name]} = environment.{dependency}[{name!r}]",
                        "except KeyError:",
                        "    @internalcode",
                        f"    def {id_map[name]}(*unused):",
                        f'        raise TemplateRuntimeError("No {dependency[:-1]} named {name!r} found.")',
                    ]
                )

    def enter_frame(self, frame: Frame) -> None:
        if self._buffered_root and frame.rootlevel and frame.buffer is None and self._root_frame is None:
            frame.buffer = "_ps_out"
            self._root_frame = frame
            self.writeline("_ps_out = []")
            # At the start of a render the context has no template-level variables
            # yet: a name is looked up in the render's variables and the globals.
            loads = frame.symbols.loads
            for target, (action, param) in list(loads.items()):
                if action == VAR_LOAD_RESOLVE:
                    self.writeline(f"{target} = _ps_parent_get({param!r}, missing)")
                    self._root_resolved.add(target)
            saved = {target: loads.pop(target) for target in self._root_resolved}
            try:
                super().enter_frame(frame)
            finally:
                loads.update(saved)
            return
        hoisted, self._hoisted = self._hoisted, set()  # for the loop frame being entered only
        if not hoisted:
            super().enter_frame(frame)
            return
        saved = {target: frame.symbols.loads.pop(target) for target in hoisted if target in frame.symbols.loads}
        try:
            super().enter_frame(frame)
        finally:
            frame.symbols.loads.update(saved)

    def leave_frame(self, frame: Frame, with_python_scope: bool = False) -> None:
        super().leave_frame(frame, with_python_scope)
        if frame is self._root_frame:
            self.writeline("return _ps_out")

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        # Without inheritance, blocks or includes, the root returns a list of strings.
        self._buffered_root = all(
            node.find(kind) is None
            for kind in (nodes.Extends, nodes.Block, nodes.Include, nodes.Import, nodes.FromImport)
        )
        self.writeline("from prompt_style_hf.fastpath import helpers as _ps_helpers")
        self.writeline("_ps_fast = _ps_helpers(environment)")
        self.writeline("fast_getattr = _ps_fast['fast_getattr']")
        self.writeline("fast_getitem = _ps_fast['fast_getitem']")
        self.writeline("fast_call = _ps_fast['fast_call']")
        if _MACRO_FIELDS_OK:
            self.writeline("fast_macro = _ps_fast['fast_macro']")
        for name in _FAST_FILTERS.values():
            self.writeline(f"{name} = _ps_fast[{name!r}]")
        super().visit_Template(node, frame)
        for line in self._module_lines:
            self.writeline(line)

    @optimizeconst
    def visit_Filter(self, node: nodes.Filter, frame: Frame) -> None:
        method = _STR_FILTERS.get(node.name)
        if (
            method is not None
            and node.node is not None
            and not (node.args or node.kwargs or node.dyn_args or node.dyn_kwargs)
            and self.environment.filters.get(node.name) is jinja_filters.FILTERS[node.name]
        ):
            # x|trim on a str is x.strip(); anything else goes to the filter itself.
            value = self.temporary_identifier()
            self.write(f"({value}.{method}() if type({value} := ")
            self.visit(node.node, frame)
            self.write(f") is str else {self.filters[node.name]}({value}))")
            return
        fast = _FAST_FILTERS.get(node.name)
        if (
            fast is not None
            and node.node is not None
            and self.environment.filters.get(node.name) is jinja_filters.FILTERS[node.name]
        ):
            self.write(f"{fast}(context, ")
            self.visit(node.node, frame)
            self.signature(node, frame)
            self.write(")")
            return
        super().visit_Filter(node, frame)

    # -- attribute and item access ----------------------------------------------------

    def macro_def(self, macro_ref: Any, frame: Frame) -> None:
        if not _MACRO_FIELDS_OK:
            super().macro_def(macro_ref, frame)
            return
        arg_tuple = ", ".join(repr(x.name) for x in macro_ref.node.args)
        name = getattr(macro_ref.node, "name", None)
        if len(macro_ref.node.args) == 1:
            arg_tuple += ","
        self.write(
            f"fast_macro(macro, {name!r}, ({arg_tuple}),"
            f" {macro_ref.accesses_kwargs!r}, {macro_ref.accesses_varargs!r},"
            f" {macro_ref.accesses_caller!r}, context.eval_ctx.autoescape)"
        )

    @property
    def _sandbox_access(self) -> bool:
        """Whether the environment reads attributes and items as Jinja's immutable
        sandbox does (the fast paths reproduce exactly that); an environment with
        rules of its own is asked every time."""
        kind = type(self.environment)
        return (
            kind.getattr is ImmutableSandboxedEnvironment.getattr
            and kind.getitem is ImmutableSandboxedEnvironment.getitem
            and kind.is_safe_attribute is ImmutableSandboxedEnvironment.is_safe_attribute
        )

    def visit_Getattr(self, node: nodes.Getattr, frame: Frame) -> None:
        if not self._sandbox_access:
            super().visit_Getattr(node, frame)
            return
        if isinstance(node.node, nodes.Name) and node.node.name == "loop" and node.node.ctx == "load":
            ref = frame.symbols.find_ref("loop")
            fast = self._fast_loops.get(ref) if ref is not None else None
            if fast is not None and node.attr in FAST_LOOP_ATTRIBUTES:
                self.write(self._loop_value(fast, node.attr))
                return
        if node.attr not in _DICT_ATTRIBUTES:
            # message.content on a dict that has the key: read it inline.
            self._inline_key(node.node, repr(node.attr), "fast_getattr", frame)
            return
        self.write("fast_getattr(")
        self.visit(node.node, frame)
        self.write(f", {node.attr!r})")

    def _inline_key(self, subject: nodes.Node, key: str, fallback: str, frame: Frame) -> None:
        """``subject[key]`` read inline when ``subject`` is a dict holding ``key``,
        else ``fallback(subject, key)`` (the subject is evaluated once)."""
        code = self._simple_code(subject, frame)
        if code is not None:
            self.write(f"({code}[{key}] if type({code}) is dict and {key} in {code} else {fallback}({code}, {key}))")
            return
        value = self.temporary_identifier()
        self.write(f"({value}[{key}] if type({value} := ")
        self.visit(subject, frame)
        self.write(f") is dict and {key} in {value} else {fallback}({value}, {key}))")

    def _simple_code(self, node: nodes.Node, frame: Frame) -> str | None:
        """The code of ``node`` when it is a plain local variable (so it may be
        written several times), else ``None``."""
        if not isinstance(node, nodes.Name) or node.ctx != "load":
            return None
        ref = frame.symbols.find_ref(node.name)
        if ref is None or frame.symbols.find_load(ref) != (VAR_LOAD_PARAMETER, None):
            return None
        if self.parameter_is_undeclared(ref):
            return None
        return ref

    @staticmethod
    def _loop_value(fast: tuple[str, str, str], attr: str) -> str:
        seq, i, n = fast
        return {
            "index0": i,
            "index": f"({i} + 1)",
            "first": f"({i} == 0)",
            "last": f"({i} == {n} - 1)",
            "length": n,
            "revindex": f"({n} - {i})",
            "revindex0": f"({n} - {i} - 1)",
            "previtem": f"({seq}[{i} - 1] if {i} else undefined('there is no previous item'))",
            "nextitem": f"({seq}[{i} + 1] if {i} + 1 < {n} else undefined('there is no next item'))",
            "depth": "1",
            "depth0": "0",
        }[attr]

    @optimizeconst
    def visit_Getitem(self, node: nodes.Getitem, frame: Frame) -> None:
        if isinstance(node.arg, nodes.Slice) or not self._sandbox_access:
            super().visit_Getitem(node, frame)
            return
        if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            # message['role'] on a dict that has the key: read it inline.
            self._inline_key(node.node, repr(node.arg.value), "fast_getitem", frame)
            return
        self.write("fast_getitem(")
        self.visit(node.node, frame)
        self.write(", ")
        self.visit(node.arg, frame)
        self.write(")")

    def visit_Call(self, node: nodes.Call, frame: Frame, forward_caller: bool = False) -> None:
        self.write("fast_call(context, ")
        self.visit(node.node, frame)
        extra_kwargs = {"caller": "caller"} if forward_caller else None
        loop_kwargs = {"_loop_vars": "_loop_vars"} if frame.loop_frame else {}
        block_kwargs = {"_block_vars": "_block_vars"} if frame.block_frame else {}
        if extra_kwargs:
            extra_kwargs.update(loop_kwargs, **block_kwargs)
        elif loop_kwargs or block_kwargs:
            extra_kwargs = dict(loop_kwargs, **block_kwargs)
        self.signature(node, frame, extra_kwargs)
        self.write(")")

    # -- loops ------------------------------------------------------------------------

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        from jinja2.compiler import find_undeclared

        extended = "loop" in find_undeclared(node.iter_child_nodes(only=("body",)), ("loop",))
        if (
            node.recursive
            or node.test is not None
            or not extended
            or any(block.scoped for block in node.find_all(nodes.Block))
            or not _simple_loop_use(node.body)
        ):
            super().visit_For(node, frame)
            return
        # Jinja's visit_For for an extended loop, with the LoopContext replaced by
        # enumerate over a list (no loop filter, not recursive: see _simple_loop_use).
        loop_frame = frame.inner()
        loop_frame.loop_frame = True
        else_frame = frame.inner()
        loop_ref = loop_frame.symbols.declare_parameter("loop")
        loop_frame.symbols.analyze_node(node, for_branch="body")
        if node.else_:
            else_frame.symbols.analyze_node(node, for_branch="else")
        self.writeline(f"{loop_ref} = missing")
        for name in node.find_all(nodes.Name):
            if name.ctx == "store" and name.name == "loop":
                self.fail("Can't assign to special loop variable in for-loop target", name.lineno)
        iteration_indicator = None
        if node.else_:
            iteration_indicator = self.temporary_identifier()
            self.writeline(f"{iteration_indicator} = 1")
        # Names the body only reads from the context are read once, before the loop:
        # the context's variables cannot change while a loop runs (only top-level
        # assignments write them). A name the body also assigns is read afresh at
        # every iteration, as in Jinja (an assignment lasts one iteration).
        hoisted = set()
        stores = loop_frame.symbols.stores
        for target, (action, param) in loop_frame.symbols.loads.items():
            if action == VAR_LOAD_RESOLVE and param not in stores:
                self.writeline(f"{target} = {self.get_resolve_func()}({param!r})")
                hoisted.add(target)
        seq, index, length = (self.temporary_identifier() for _ in range(3))
        self.writeline(f"{seq} = list(", node)
        self.visit(node.iter, frame)
        self.write(")")
        self.writeline(f"{length} = len({seq})")
        self.writeline(f"for {index}, (")
        self.visit(node.target, loop_frame)
        self.write(f") in enumerate({seq}):")
        self.indent()
        self._hoisted = hoisted
        self.enter_frame(loop_frame)
        outer = self._fast_loops.get(loop_ref)
        self._fast_loops[loop_ref] = (seq, index, length)
        self.writeline("_loop_vars = {}")
        self.blockvisit(node.body, loop_frame)
        # Loop identifiers are reused by sibling loops: this one ends here.
        if outer is None:
            del self._fast_loops[loop_ref]
        else:
            self._fast_loops[loop_ref] = outer
        if node.else_:
            self.writeline(f"{iteration_indicator} = 0")
        self.outdent()
        self.leave_frame(loop_frame)
        if node.else_:
            self.writeline(f"if {iteration_indicator}:")
            self.indent()
            self.enter_frame(else_frame)
            self.blockvisit(node.else_, else_frame)
            self.leave_frame(else_frame)
            self.outdent()
        if self._assign_stack:
            self._assign_stack[-1].difference_update(loop_frame.symbols.stores)


class FastTemplate:
    """A template compiled by :class:`FastCodeGenerator`, rendered with a directly
    built ``Context``.

    :param environment: the sandboxed environment (from the profile).
    :param source: the template source.
    """

    def __init__(self, environment: Any, source: str) -> None:
        self.environment = environment
        ast = environment.parse(source)
        code = compile(_generate(environment, ast), _FILENAME, "exec")
        self.template = Template.from_code(environment, code, dict(environment.globals))
        self._root = self.template.root_render_func
        self._globals = dict(environment.globals)
        self._globals_keys = set(self._globals)
        self._shared_eval_ctx = None
        if ast.find(nodes.EvalContextModifier) is None and ast.find(nodes.ScopedEvalContextModifier) is None:
            self._shared_eval_ctx = EvalContext(environment, None)
        self._direct_context = _CONTEXT_FIELDS_OK and not self.template.blocks

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
        if _RUN is not None:
            # One render's budgets (loops, sizes, time, output), as jinja_env.render keeps them.
            return _RUN(lambda: self._render(parent), template=self.template)
        return self._render(parent)

    def _render(self, parent: dict[str, Any]) -> str:
        if self._direct_context:
            context = Context.__new__(Context)
            context.parent = parent
            context.vars = {}
            context.environment = self.environment
            context.eval_ctx = self._shared_eval_ctx or EvalContext(self.environment, None)
            context.exported_vars = set()
            context.name = None
            context.globals_keys = self._globals_keys
            context.blocks = {}
        else:
            context = self.template.new_context(parent)
        return "".join(self._root(context))

    def template_line(self, python_line: int) -> int:
        """The template line of a line of the generated code."""
        return self.template.get_corresponding_lineno(python_line)

    @property
    def filename(self) -> str:
        return _FILENAME


def _generate(environment: Any, ast: nodes.Template) -> str:
    """The Python source of ``ast`` from :class:`FastCodeGenerator`. A sandbox with
    budgets rewrites the tree first (``jinja_env.prepare_tree``: every loop counted,
    every ``~`` sized), as its own compiler does."""
    prepare = getattr(_jinja_env, "prepare_tree", None)
    if prepare is not None:
        ast = prepare(ast)
    generator = FastCodeGenerator(environment, None, _FILENAME, optimized=environment.optimized)
    generator.visit(ast)
    return generator.stream.getvalue()


def _context_fields() -> set[str]:
    from jinja2 import Environment

    env = Environment()
    return set(vars(Context(env, {}, None, {}, {})))


# The directly built Context sets exactly the attributes Jinja's Context.__init__ sets;
# should a Jinja release add one, contexts are built by Jinja again.
_CONTEXT_FIELDS_OK = _context_fields() == {
    "parent",
    "vars",
    "environment",
    "eval_ctx",
    "exported_vars",
    "name",
    "globals_keys",
    "blocks",
}


def _macro_fields() -> set[str]:
    from jinja2 import Environment

    return set(vars(Macro(Environment(), lambda: "", "m", ("a",), False, False, False, False)))


# The directly built Macro sets exactly the attributes Jinja's Macro.__init__ sets.
_MACRO_FIELDS_OK = _macro_fields() == {
    "_environment",
    "_func",
    "_argument_count",
    "name",
    "arguments",
    "catch_kwargs",
    "catch_varargs",
    "caller",
    "explicit_caller",
    "_default_autoescape",
}

_FAST: dict[tuple[int, str], FastTemplate] = {}

# A sandbox with per-render budgets offers run(): fast templates render inside it.
_RUN = getattr(_jinja_env, "run", None)


def compile_fast(environment: Any, source: str) -> FastTemplate:
    """The fast template for ``source`` (compiled once per process and environment)."""
    key = (id(environment), source)
    found = _FAST.get(key)
    if found is None or found.environment is not environment:
        found = _FAST[key] = FastTemplate(environment, source)
    return found
