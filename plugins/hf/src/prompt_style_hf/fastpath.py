"""A faster code generator for chat templates: Jinja's own, with cheaper hot paths.

Jinja compiles a template to Python source. Chat templates spend most of their
time in a few places of that code: the sandbox's ``getattr``/``getitem`` for
every ``message['role']`` and ``message.content``, the sandbox's ``call`` for
every ``content.strip()``, its budget checks on every ``+`` and printed value,
``LoopContext`` objects for ``loop.index0`` and ``loop.last``, and the
creation of a ``Context`` per render. This module subclasses Jinja's
``CodeGenerator`` and changes only those:

* ``x.attr`` and ``x[key]`` on a plain ``dict``, ``list``, ``tuple`` or ``str``
  read the value directly when it is there (a dict key that is not a dict
  method name; an index in range), and so do comparisons of such a value with
  a constant and ``is defined`` tests of it; anything else goes to the
  sandbox's own ``getattr``/``getitem``, unchanged.
* Calling a bound method of a ``str`` or ``dict`` that the sandbox already
  handed out (``strip``, ``split``, ``get``, ``items``, ...; never
  ``str.format``) calls it directly (inline when its arguments are
  constants), a str method that can amplify after the sandbox's size check,
  and a macro of the template with all its arguments calls its function;
  any other call goes to the sandbox's ``call``, unchanged.
* ``for`` loops run over the sequence itself (counted at once), and a loop
  whose body reads only ``loop.index0``, ``index``, ``first``, ``last``,
  ``length``, ``revindex``, ``revindex0``, ``previtem``, ``nextitem``,
  ``depth`` or ``depth0`` (no loop filter, not recursive) with ``enumerate``,
  computing those values inline.
* **Budgets are checked inline** (the contract of
  ``jinja_env.prepare_tree``): ``+`` and ``~`` of strings (a chain of ``+``
  joined at once, in Jinja's order of evaluation), printed strings, ``trim``
  and case filters, and the filters that only read their value count what
  they build in a local number charged to the render's budget at a
  threshold; every loop iteration and macro call is a deadline check point;
  anything unusual goes through the sandbox's own functions.
* A render builds its ``Context`` directly (same attributes as Jinja's), and
  reuses those of finished renders.

Everything else — scoping, macros, filters, tests, Undefined, whitespace — is
Jinja's code generator itself. The result is checked against Jinja's own
rendering on every corpus template and golden conversation (the ``jinja``
engine of the tests), and the budgets with the sandbox's payloads
(``tests/test_fast_budgets.py``). The environment (with its sandbox) is the one
:mod:`prompt_style.safe.jinja_env` builds for the profile.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import partial
from types import BuiltinMethodType, FunctionType
from typing import Any

from jinja2 import filters as jinja_filters
from jinja2 import nodes
from jinja2 import tests as jinja_tests
from jinja2.compiler import CodeGenerator, DependencyFinderVisitor, Frame, find_undeclared, optimizeconst
from jinja2.environment import Template
from jinja2.exceptions import FilterArgumentError
from jinja2.filters import _prepare_attribute_parts
from jinja2.idtracking import VAR_LOAD_PARAMETER, VAR_LOAD_RESOLVE
from jinja2.nodes import EvalContext
from jinja2.runtime import Context, LoopContext, Macro, Undefined, missing
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import _PassArg
from markupsafe import Markup

from prompt_style import LimitError
from prompt_style.safe import jinja_env as _jinja_env
from prompt_style.safe.jinja_env import check_str_call, current_budget

from .environment import GENERATION_END, GENERATION_START, NAMESPACE_ATTRIBUTES, GenerationBlocks, TemplateNamespace

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
_STR_FILTERS = {"trim": "strip", "lower": "lower", "upper": "upper", "capitalize": "capitalize"}
# Filters that only read (or copy) their value, written inline (see _inline_selection).
# Jinja's tests that take no argument, as expressions of the tested value.
_INLINE_TESTS = {
    "string": "isinstance({0}, str)",
    "none": "{0} is None",
    "mapping": "isinstance({0}, _ps_Mapping)",
    "boolean": "({0} is True or {0} is False)",
    "true": "{0} is True",
    "false": "{0} is False",
}
_SELECTIONS = frozenset({"select", "reject", "selectattr", "rejectattr"})
_SELECTION_FILTERS = frozenset({"length", "count", "first", "last", "default", "d", "string", "list"})

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

# str methods the generated code calls directly on a str with constant arguments:
# how many times the text's length the result can have (0: the result is not a string).
# Case changes can make a text longer ('ß'.upper() is 'SS', 'ﬃ'.upper() is 'FFI').
_INLINE_STR_METHODS = {
    **dict.fromkeys(("startswith", "endswith", "find", "rfind", "count", "index", "rindex"), 0),
    **dict.fromkeys(("isalnum", "isalpha", "isdigit", "isspace", "islower", "isupper", "istitle"), 0),
    **dict.fromkeys(("strip", "lstrip", "rstrip", "removeprefix", "removesuffix", "replace"), 1),
    **dict.fromkeys(("lower", "upper", "title", "capitalize", "swapcase", "casefold"), 3),
}

EAGER_ITEMS = 4096
"""The most items a select/reject filter whose items are all taken at once filters
in one go (its deadline is checked before; longer inputs are filtered item by item)."""

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
    namespace_attrs = NAMESPACE_ATTRIBUTES.__get__
    env_range = environment.globals.get("range")

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
            if attribute in _SAFE_STR_METHODS or attribute in AMPLIFYING_STR_METHODS:
                # What the sandbox hands out (fast_call sizes the amplifying ones before they run).
                return getattr(obj, attribute)
            if attribute not in _SEQUENCE_ATTRIBUTES:
                return undefined(obj=obj, name=attribute)
        elif kind is TemplateNamespace:
            if attribute[:1] != "_":
                # The sandbox allows a namespace's attributes that do not start with "_".
                try:
                    return namespace_attrs(obj)[attribute]
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
            except (TypeError, LookupError):
                # The sandbox's getitem: a dict's attribute of that name, else undefined.
                if type(argument) is not str or argument not in _DICT_ATTRIBUTES:
                    return undefined(obj=obj, name=argument)
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
            if (owner is str and (name in _SAFE_STR_METHODS or name in AMPLIFYING_STR_METHODS)) or (
                owner is dict and name in _SAFE_DICT_METHODS
            ):
                kwargs.pop("_loop_vars", None)
                kwargs.pop("_block_vars", None)
                if name in AMPLIFYING_STR_METHODS and owner is str:
                    args = check_str_call(func, args, kwargs)  # sized before it runs, as the sandbox does
                result = func(*args, **kwargs)
                kind = type(result)
                if kind is str or kind is list:
                    # What the sandbox's call charges: strings and lists built (upper, split...).
                    budget = current_budget()
                    size = len(result)
                    if kind is list and size > budget.limits.max_items:
                        limit = budget.limits.max_items
                        raise LimitError(
                            f"calling the method {name!r} would build {size:,} items (more than {limit:,})",
                            limit="max_items",
                            value=limit,
                        )
                    budget.work += size
                    if budget.work > budget.work_check:
                        budget.over_size(size, lambda: f"calling the method {name!r}")
                    if budget.due:
                        budget.tick()
                return result
        elif kind is Macro or kind.__base__ is Macro or func is TemplateNamespace:
            # What the sandbox's call does for the template's own macros (which take the
            # eval context) and namespace(): both are safe callables.
            kwargs.pop("_loop_vars", None)
            kwargs.pop("_block_vars", None)
            try:
                if func is TemplateNamespace:
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
        elif func is env_range and env_range is not None:
            # range(n): the sandbox's own range (which checks max_range), called as its call does.
            kwargs.pop("_loop_vars", None)
            kwargs.pop("_block_vars", None)
            if not kwargs:
                budget = current_budget()
                if budget.due:
                    budget.tick()
                result = func(*args)
                budget.work += 1
                if budget.work > budget.work_check:
                    budget.over_size(1, "calling range")
                return result
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
        if func is _JINJA_EQUALTO and len(args) == 1 and not kwargs and type(args[0]) is str:
            # selectattr('role', 'equalto', 'user'): == of a string and the attribute.
            expected = args[0]
            test = lambda item: item == expected  # noqa: E731
        elif func is None or _PassArg.from_obj(func) is not None:
            return lambda item: environment.call_test(name, item, args, kwargs, context)
        elif kwargs:
            test = lambda item: func(item, *args, **kwargs)  # noqa: E731
        elif args:
            test = lambda item: func(item, *args)  # noqa: E731
        else:
            return func
        if func in _PURE_TESTS:
            test.ps_pure = True  # type: ignore[attr-defined]
        return test

    def sized_input(name: str, value: Any) -> Any:
        """The guard's checks before an iterating filter runs; the render's budget."""
        budget = current_budget()
        if budget.due:
            budget.tick()
        if hasattr(value, "__len__") and not isinstance(value, Undefined) and len(value) > budget.limits.max_items:
            limit = budget.limits.max_items
            raise LimitError(
                f"filter {name!r} got {len(value):,} items (more than {limit:,})", limit="max_items", value=limit
            )
        return budget

    def prepare_selection(context: Any, args: tuple, kwargs: dict, lookup_attr: bool) -> tuple:
        """``(transform, test, on_text)`` of a select/reject filter's arguments (Jinja's
        ``prepare_select_or_reject``)."""
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
        simple_key = transform is not None and type(attr) is str and "." not in attr and not attr.isdigit()
        if simple_key and (test is _JINJA_DEFINED or test is _JINJA_UNDEFINED) and attr not in _DICT_ATTRIBUTES:
            # selectattr('tool_calls', 'defined') on dicts: whether the key holds a value,
            # without making an undefined for each item that has none.
            transform, test = None, _defined_key(attr, test is _JINJA_DEFINED, transform, test)
        # On a string item, an attribute that strings do not have is an undefined value,
        # and the test's result on it is the same for every such item (Jinja's tests
        # look at what a value is, and an undefined value is nothing): worked out on the
        # first one, then reused (content|selectattr('type', 'equalto', 'image') on a
        # text content, one character at a time).
        pure = test in _PURE_TESTS or getattr(test, "ps_pure", False)
        on_text = _NOTHING if simple_key and attr not in _SEQUENCE_ATTRIBUTES and pure else None
        return transform, test, on_text

    def selected(value: Any, transform: Any, test: Any, on_text: Any, negate: bool, budget: Any):
        # The items of a prepared select/reject (a generator), each counted as a loop
        # iteration as it is given, as the guard counts a lazy filter's items.
        if value:
            for item in value:
                if on_text is not None and type(item) is str:
                    if on_text is _NOTHING:
                        on_text = test(transform(item))
                    result = on_text
                else:
                    result = test(transform(item) if transform is not None else item)
                if (not result) if negate else result:
                    budget.iterations += 1
                    if budget.iterations > budget.iter_limit or budget.due:
                        budget.count(0)  # raises for the loop budget or the deadline
                    yield item

    def select_or_reject(
        context: Any, value: Any, args: tuple, kwargs: dict, negate: bool, lookup_attr: bool, budget: Any
    ):
        # Jinja's select_or_reject (a generator: nothing runs before the first item is asked for).
        if value:
            transform, test, on_text = prepare_selection(context, args, kwargs, lookup_attr)
            yield from selected(value, transform, test, on_text, negate, budget)

    def selector(name: str, args: tuple, kwargs: dict) -> tuple[Callable[[Any], Any], Callable[[Any], Any]] | None:
        """``(lazy, eager)`` for ``value|name(*args, **kwargs)`` (select, reject, selectattr,
        rejectattr) with constant arguments, prepared once: ``lazy(value)`` is the filter
        (a generator), ``eager(value)`` its items as a list, for a caller that takes them
        all at once (a ``for`` loop, ``|list``): a list or tuple of at most
        :data:`EAGER_ITEMS` items is filtered at once, its items counted after. ``None``
        when the arguments need the render (a test that takes the context, an error)."""
        negate = name in ("reject", "rejectattr")
        lookup_attr = name in ("selectattr", "rejectattr")
        off = 1 if lookup_attr else 0
        if len(args) > off:
            func = tests.get(args[off]) if isinstance(args[off], str) else None
            if func is None or _PassArg.from_obj(func) is not None:
                return None
        try:
            transform, test, on_text = prepare_selection(None, args, kwargs, lookup_attr)
        except Exception:
            return None  # raised by the render, as Jinja raises it

        def lazy(value: Any):
            return selected(value, transform, test, on_text, negate, sized_input(name, value))

        def eager(value: Any) -> list:
            budget = sized_input(name, value)
            kind = type(value)
            if (kind is not list and kind is not tuple) or len(value) > EAGER_ITEMS:
                return list(selected(value, transform, test, on_text, negate, budget))
            if transform is None:
                out = [item for item in value if not test(item)] if negate else [item for item in value if test(item)]
            elif negate:
                out = [item for item in value if not test(transform(item))]
            else:
                out = [item for item in value if test(transform(item))]
            budget.iterations += len(out)
            if budget.iterations > budget.iter_limit or budget.due:
                budget.count(0)  # raises for the loop budget or the deadline
            return out

        return lazy, eager

    def fast_select(context: Any, value: Any, *args: Any, **kwargs: Any):
        budget = sized_input("select", value)
        return select_or_reject(context, value, args, kwargs, False, False, budget)

    def fast_reject(context: Any, value: Any, *args: Any, **kwargs: Any):
        budget = sized_input("reject", value)
        return select_or_reject(context, value, args, kwargs, True, False, budget)

    def fast_selectattr(context: Any, value: Any, *args: Any, **kwargs: Any):
        budget = sized_input("selectattr", value)
        return select_or_reject(context, value, args, kwargs, False, True, budget)

    def fast_rejectattr(context: Any, value: Any, *args: Any, **kwargs: Any):
        budget = sized_input("rejectattr", value)
        return select_or_reject(context, value, args, kwargs, True, True, budget)

    def fast_map(context: Any, value: Any, *args: Any, **kwargs: Any):
        return mapped(context, value, args, kwargs, sized_input("map", value))

    def mapped(context: Any, value: Any, args: tuple, kwargs: dict, budget: Any):
        # Jinja's sync_do_map (a generator), each item counted as select_or_reject counts.
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
                budget.iterations += 1
                if budget.iterations > budget.iter_limit or budget.due:
                    budget.count(0)
                yield func(item)

    def str_filter(func: Any, value: Any, pending: int, factor: int) -> Any:
        """The slow path of an inline trim/lower/upper: charge what was counted inline
        (``factor`` times the value's length for a string), then the guarded filter."""
        if pending:
            if type(value) is str:
                pending -= factor * len(value)
            current_budget().charge(pending)
        return func(value)

    def spill(pending: int, size: int) -> int:
        """Charge ``pending`` characters counted inline, the last operation having built
        ``size`` (checked against ``max_string``); the count starts again from 0."""
        budget = current_budget()
        budget.work += pending
        if budget.work > budget.work_check:
            budget.over_size(size, "a macro's result")
        return 0

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

    def macro_site(
        name: Any, arguments: tuple, catch_kwargs: bool, catch_varargs: bool, caller: bool, default_autoescape: Any
    ) -> type:
        """A class of one macro definition: Macro's attributes (all but the function) as
        class attributes, so that a render makes its macro with one attribute set."""
        return type(
            "Macro",
            (Macro,),
            {
                "__slots__": (),
                "_environment": environment,
                "_argument_count": len(arguments),
                "name": name,
                "arguments": arguments,
                "catch_kwargs": catch_kwargs,
                "catch_varargs": catch_varargs,
                "caller": caller,
                "explicit_caller": "caller" in arguments,
                "_default_autoescape": default_autoescape,
                # How many positional arguments a call passes straight to the function (-1: none).
                "_ps_positional": -1 if caller or catch_kwargs or catch_varargs else len(arguments),
            },
        )

    def bind_macro(site: type, func: Any) -> Any:
        macro = new(site)
        macro._func = func
        return macro

    globals_keys = set(environment.globals)

    def new_context() -> Context:
        # Context(environment, {}, None, {}) with its attributes set directly; the render
        # sets `parent` and `vars`.
        context = new(Context)
        context.environment = environment
        context.eval_ctx = EvalContext(environment, None)
        context.exported_vars = set()
        context.name = None
        context.globals_keys = globals_keys
        context.blocks = {}
        return context

    made = {
        "new_context": new_context,
        "fast_macro": fast_macro if _MACRO_FIELDS_OK else None,
        "macro_site": macro_site,
        "bind_macro": bind_macro,
        "fast_getattr": fast_getattr,
        "fast_getitem": fast_getitem,
        "fast_call": fast_call,
        "fast_select": fast_select,
        "fast_reject": fast_reject,
        "fast_selectattr": fast_selectattr,
        "fast_rejectattr": fast_rejectattr,
        "fast_map": fast_map,
        "selector": selector,
        "budget": current_budget,
        "active": _jinja_env.budget_getter(),
        "loop_items": _jinja_env.loop_items,
        "binop": partial(_jinja_env.binop_value, environment),
        "plus": partial(_jinja_env.plus_values, environment),
        "concat": _jinja_env.concat_values,
        "print": _jinja_env.print_value,
        "str_filter": str_filter,
        "spill": spill,
        "namespace": TemplateNamespace,
        "namespace_attrs": namespace_attrs,
        "namespace_set": NAMESPACE_ATTRIBUTES.__set__,
        "new": object.__new__,
        "function": FunctionType,
        "Mapping": Mapping,
        "generation_start": GENERATION_START,
        "generation_end": GENERATION_END,
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


_NOTHING = object()
# Jinja's tests whose result on an undefined value depends on nothing else (not its name
# or object): every test of jinja2.tests, and the tester of equalto with a string.
_PURE_TESTS: set[Any] = set(jinja_tests.TESTS.values())
_JINJA_DEFINED = jinja_tests.TESTS["defined"]
_JINJA_UNDEFINED = jinja_tests.TESTS["undefined"]
_JINJA_EQUALTO = jinja_tests.TESTS["equalto"]


def _defined_key(key: str, defined: bool, transform: Callable[[Any], Any], test: Callable[[Any], Any]):
    """``test(transform(item))`` for the defined/undefined test of ``item[key]``,
    without an undefined value for a dict that has no ``key``."""

    def check(item: Any) -> bool:
        if type(item) is dict:
            present = key in item and not isinstance(item[key], Undefined)
            return present if defined else not present
        return test(transform(item))

    return check


def _context_callables(environment: Any) -> bool:
    """Whether a template of ``environment`` can call a function that takes the
    context (``pass_context``): only such a call reads the variables a loop body sets
    (Jinja's ``_loop_vars``). Its globals are what a template can call besides its own
    macros and the methods of its data (a chat template's variables are plain data)."""
    for value in environment.globals.values():
        if _PassArg.from_obj(value) is not None:
            return True
        # Not a callable() test: Jinja reads pass_context off the object's __call__.
        call = getattr(type(value), "__call__", None) if not isinstance(value, type) else None  # noqa: B004
        if call is not None and _PassArg.from_obj(call) is not None:
            return True
    return False


def _truth_tested(tree: nodes.Template) -> set[int]:
    """The ids of the names and constant-key lookups (``x``, ``x.key``, ``x['key']``)
    whose value is only ever tested for truth: an ``if``'s or an inline if's test,
    the operand of ``not``, and the operands of ``and``/``or`` in such a test. An
    undefined value there is false (Jinja's ``Undefined``), so none needs making."""
    found: set[int] = set()

    def mark(node: nodes.Node) -> None:
        if isinstance(node, (nodes.And, nodes.Or)):
            mark(node.left)
            mark(node.right)
        elif isinstance(node, nodes.Not):
            mark(node.node)
        elif isinstance(node, (nodes.Name, nodes.Getattr, nodes.Getitem)):
            found.add(id(node))

    for node in tree.find_all((nodes.If, nodes.CondExpr, nodes.Not)):
        mark(node.node if isinstance(node, nodes.Not) else node.test)
    return found


def _plain_const(node: nodes.Node) -> bool:
    """Whether ``node`` is a constant whose ``repr`` is Python source for it."""
    return type(node) is nodes.Const and type(node.value) in (str, int, float, bool, type(None))


def _const_str(node: nodes.Node) -> str | None:
    """The value of a string constant node, else ``None``."""
    if type(node) is nodes.Const and type(node.value) is str:
        return node.value
    return None


def _own_nodes(body: list[nodes.Node]):
    """The nodes of a loop body, without those of the macros and call blocks it defines
    (they run in frames of their own); inner loops are given, not walked into."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (nodes.Macro, nodes.CallBlock, nodes.For)):
            stack.extend(node.iter_child_nodes())


def _plus_chain(node: nodes.Add) -> list[nodes.Expr] | None:
    """The operands of ``o1 + o2 + ... + on`` (left-nested, as Jinja parses it) when
    it is worth joining at once: one of them a string constant (a chain of
    strings), at most four that are not constants, none of them large or itself a
    ``+`` (the slow path repeats the code of the operands after the first one that
    is not a string)."""
    operands: list[nodes.Expr] = []
    while isinstance(node, nodes.Add):
        operands.append(node.right)
        node = node.left
    operands.append(node)
    operands.reverse()
    if len(operands) < 2 or all(_const_str(operand) is None for operand in operands):
        return None
    variable = [operand for operand in operands if _const_str(operand) is None]
    if len(variable) > 4:
        return None
    for operand in variable:
        if isinstance(operand, nodes.Add) or operand.find(nodes.Add) is not None:
            return None
        if sum(1 for _ in operand.find_all(nodes.Node)) > 24:
            return None
    return operands


def _charge_printed_constants(tree: nodes.Template) -> None:
    """Add the string constants a loop body prints (``{{ 'text' }}``) to the literal
    text its ``ps-loop`` filter charges per iteration: the generator prints them as
    literal text."""
    for loop in tree.find_all(nodes.For):
        counted = loop.iter
        if not (
            isinstance(counted, nodes.Filter)
            and counted.name == _jinja_env.LOOP_FILTER
            and len(counted.args) == 1
            and isinstance(counted.args[0], nodes.Const)
        ):
            continue
        extra = 0
        stack = list(loop.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (nodes.For, nodes.Macro, nodes.CallBlock)):
                continue  # they charge their own
            if isinstance(node, nodes.Output):
                extra += sum(len(c) for child in node.nodes if (c := _const_str(child)) is not None)
            stack.extend(node.iter_child_nodes())
        if extra:
            counted.args[0] = nodes.Const(counted.args[0].value + extra, lineno=counted.args[0].lineno)


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
        self._def_pending = False
        self._print_temps: list[str | None] = []
        self._printed_chain: nodes.Node | None = None
        self._namespace_keys: set[str] = set()
        self._eager_selections: set[int] = set()
        self._direct_macros: dict[str, int] = {}
        self._truth_nodes: set[int] = set()
        self._no_loop_vars = False

    # -- budgets checked inline ---------------------------------------------------------------
    #
    # In a buffered root (see visit_Template) the root keeps the render's budget in
    # `_ps_b`, and counts the characters that `+`, `~`, printed strings and string
    # filters build in `_ps_w`, kept below `_ps_room` (the budget's step, at most
    # max_string and max_output): an operation that would reach it takes the slow path,
    # which charges `_ps_w` and checks the operation (jinja_env.prepare_tree describes
    # the contract). Every function the template defines (macros, call blocks, loop
    # filters) shares `_ps_w` (nonlocal) and is a check point of the deadline.

    @property
    def _inline_budget(self) -> bool:
        return self._buffered_root

    def func(self, name: str) -> str:
        if self._inline_budget and name != "root":
            self._def_pending = True
        return super().func(name)

    def write(self, x: str) -> None:
        if self._buffered_root and x.startswith("context.exported_vars."):
            # What a template exports matters to {% import %} only, which there is none of
            # (a buffered root has no imports, and the sandbox has no loader).
            return
        super().write(x)

    def writeline(self, x: str, node: Any = None, extra: int = 0) -> None:
        if self._owned_context and x.endswith("')") and " = resolve('" in x:
            # Context.resolve_or_missing(name), inline: the render's own variables, then the
            # context's parent (see write_commons for _ps_vars).
            target, _, call = x.partition(" = resolve(")
            name = call[:-1]
            if _RESOLVED_NAME.fullmatch(target) and _RESOLVED_KEY.fullmatch(name):
                x = f"{target} = _ps_vars[{name}] if {name} in _ps_vars else _ps_parent_get({name}, missing)"
        super().writeline(x, node, extra)
        if self._def_pending and x.startswith(("def ", "async def ")):
            self._def_pending = False
            self.indent()
            super().writeline("nonlocal _ps_w")
            super().writeline("if _ps_b.due: _ps_b.tick()")
            self.outdent()

    def visit_Output(self, node: nodes.Output, frame: Frame) -> None:
        if self._inline_budget and not (frame.eval_ctx.volatile or frame.eval_ctx.autoescape):
            # {{ 'text' }} prints as literal text does: as it is (loops charge it per
            # iteration, see _charge_printed_constants; macros when they return).
            node = nodes.Output(
                [
                    nodes.TemplateData(c, lineno=child.lineno) if (c := _const_str(child)) is not None else child
                    for child in node.nodes
                ],
                lineno=node.lineno,
            )
        super().visit_Output(node, frame)

    def return_buffer_contents(self, frame: Frame, force_unescaped: bool = False) -> None:
        if not self._inline_budget or not force_unescaped:
            super().return_buffer_contents(frame, force_unescaped)
            return
        # A macro's result: counted as the sandbox's call counts it.
        result = self.temporary_identifier()
        self.writeline(f"{result} = concat({frame.buffer})")
        self.writeline(f"if (_ps_w := _ps_w + len({result})) >= _ps_room: _ps_w = _ps_spill(_ps_w, len({result}))")
        self.writeline(f"return {result}")

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        if not self._inline_budget or frame.eval_ctx.volatile or frame.eval_ctx.autoescape:
            self._print_temps.append("")
            super()._output_child_pre(node, frame, finalize)
            return
        if (isinstance(node, nodes.Add) and _plus_chain(node) is not None) or self._inline_concat_ok(node):
            # Printed as part of the chain's own code (see _write_plus_chain).
            self._print_temps.append(None)
            self._printed_chain = node
            return
        value = self.temporary_identifier()
        self._print_temps.append(value)
        self.write(f"({value} if type({value} := ")

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        value = self._print_temps.pop()
        if value is None:
            self._printed_chain = None
            return
        if not value:
            super()._output_child_post(node, frame, finalize)
            return
        # A printed string: counted inline; anything else: the sandbox's finalize.
        self.write(
            f") is str and (_ps_w := _ps_w + len({value})) < _ps_room"
            f" else (_ps_print(context.eval_ctx, {value}, _ps_w), (_ps_w := 0))[0])"
        )

    def visit_Add(self, node: nodes.Add, frame: Frame) -> None:
        if not self._inline_budget:
            super().visit_Add(node, frame)
            return
        operands = _plus_chain(node)
        if operands is not None:
            self._write_plus_chain(operands, frame, printed=node is self._printed_chain)
            return
        if self._known_int(node.left, frame) and self._known_int(node.right, frame):
            # loop.index0 + 1: ints, nothing to check.
            self.write("(")
            self.visit(node.left, frame)
            self.write(" + ")
            self.visit(node.right, frame)
            self.write(")")
            return
        constant = _const_str(node.left) if _const_str(node.right) is None else None
        if constant is not None or _const_str(node.right) is not None:
            # A string constant and something else: only the other operand's type is checked.
            other = self.temporary_identifier()
            if constant is not None:
                self.write(f"({constant!r} + {other} if type({other} := ")
                self.visit(node.right, frame)
                operands = f"{constant!r}, {other}"
            else:
                constant = _const_str(node.right)
                self.write(f"({other} + {constant!r} if type({other} := ")
                self.visit(node.left, frame)
                operands = f"{other}, {constant!r}"
            self.write(
                f") is str and (_ps_w := _ps_w + len({other}) + {len(constant)}) < _ps_room"
                f" else (_ps_binop('+', {operands}, _ps_w), (_ps_w := 0))[0])"
            )
            return
        left, right, kind = (self.temporary_identifier() for _ in range(3))
        self.write(f"({left} + {right} if ({kind} := type({left} := ")
        self.visit(node.left, frame)
        self.write(f")) is type({right} := ")
        self.visit(node.right, frame)
        # Two strings: counted inline; two ints: safe; anything else: the sandbox's call_binop.
        self.write(
            f") and ({kind} is str and (_ps_w := _ps_w + len({left}) + len({right})) < _ps_room or {kind} is int)"
            f" else (_ps_binop('+', {left}, {right}, _ps_w), (_ps_w := 0))[0])"
        )

    def _write_plus_chain(self, operands: list[nodes.Expr], frame: Frame, printed: bool) -> None:
        """``o1 + o2 + ... + on`` (strings, some of them constants) joined at once when
        every operand is a string, with the exact order of Jinja's evaluation: each
        operand that is not a constant is evaluated and checked in turn, and when one
        is not a string, the sum so far and the operands left are added one ``+`` at a
        time by the sandbox (so errors, budgets and results are Jinja's). ``printed``:
        the chain is a printed value, counted once more for the print."""
        constants = [_const_str(operand) for operand in operands]
        names = [repr(c) if c is not None else self.temporary_identifier() for c in constants]
        variable = [i for i, c in enumerate(constants) if c is None]
        known = sum(len(c) for c in constants if c is not None)
        size = " + ".join([f"len({names[i]})" for i in variable] + [str(known)])
        factor = "2 * " if printed else ""
        joined = " + ".join(names) if len(names) <= 3 else f"''.join(({', '.join(names)},))"

        def slow(values: str, pending: str, counted: bool) -> str:
            text = f"(_ps_plus(({values},), {pending}, {counted}), (_ps_w := 0))[0]"
            return text

        def printed_slow(value_code: str) -> str:
            # The chain's value printed as the sandbox prints a value (anything can come out of the slow path).
            return f"(_ps_print(context.eval_ctx, {value_code}, _ps_w, False), (_ps_w := 0))[0]"

        self.write("(" * len(variable))
        every = ", ".join(names)
        all_slow = slow(every, f"_ps_w - {factor}({size})", False)
        self.write(
            f"({joined} if (_ps_w := _ps_w + {factor}({size})) < _ps_room"
            f" else {printed_slow(all_slow) if printed else all_slow})"
        )
        for k in reversed(range(len(variable))):
            position = variable[k]
            self.write(f" if type({names[position]} := ")
            self.visit(operands[position], frame)
            self.write(") is str else ")
            # Operand `position` is not a string: the sum so far, then the rest one at a time.
            if printed:
                self.write("(_ps_print(context.eval_ctx, ")
            rest = operands[position + 1 :]
            self.write("_ps_binop('+', " * len(rest))
            self.write(slow(", ".join(names[: position + 1]), "_ps_w", False))
            for operand in rest:
                self.write(", ")
                self.visit(operand, frame)
                self.write(")")
            if printed:
                self.write(", _ps_w, False), (_ps_w := 0))[0]")
            self.write(")")

    def visit_Mod(self, node: nodes.Mod, frame: Frame) -> None:
        if not self._inline_budget:
            super().visit_Mod(node, frame)
            return
        left, right = self.temporary_identifier(), self.temporary_identifier()
        divisor = node.right.value if isinstance(node.right, nodes.Const) else None
        if type(divisor) is int and self._known_int(node.left, frame):
            # loop.index0 % 2: ints, nothing to check.
            self.write("(")
            self.visit(node.left, frame)
            self.write(f" % {divisor!r})")
            return
        if type(divisor) is int and divisor:
            # loop.index0 % 2: only the left operand's type is checked.
            self.write(f"({left} % {divisor!r} if type({left} := ")
            self.visit(node.left, frame)
            self.write(f") is int else _ps_binop('%', {left}, {divisor!r}))")
            return
        self.write(f"({left} % {right} if (type({left} := ")
        self.visit(node.left, frame)
        self.write(f") is int) & (type({right} := ")
        self.visit(node.right, frame)
        self.write(f") is int) else _ps_binop('%', {left}, {right}))")

    def _known_int(self, node: nodes.Node, frame: Frame) -> bool:
        """Whether ``node`` is an int whatever the data: an int constant, or a counter of
        a loop that this generator turned into ``enumerate`` (loop.index0, loop.length...)."""
        if type(node) is nodes.Const:
            return type(node.value) is int
        if (
            isinstance(node, nodes.Getattr)
            and isinstance(node.node, nodes.Name)
            and node.node.name == "loop"
            and node.attr in ("index0", "index", "length", "revindex", "revindex0", "depth", "depth0")
        ):
            ref = frame.symbols.find_ref("loop")
            return ref is not None and ref in self._fast_loops
        return False

    def _inline_concat(self, node: nodes.Filter, frame: Frame) -> bool:
        """``a ~ b ~ ...`` (``ps-concat`` of a tuple) of strings, counted inline."""
        items = node.node.items if isinstance(node.node, nodes.Tuple) else None
        if not self._inline_budget or not items or node.args or node.kwargs or node.dyn_args or node.dyn_kwargs:
            return False
        constants = [_const_str(item) for item in items]
        if all(c is not None for c in constants):
            return False
        names = [repr(c) if c is not None else self.temporary_identifier() for c in constants]
        joined = " + ".join(names) if len(names) <= 4 else f"''.join(({', '.join(names)},))"
        self.write(f"({joined} if ")
        first = True
        for name, item, constant in zip(names, items, constants):
            if constant is not None:
                continue  # a string constant: nothing to check
            self.write(f"{'' if first else ' & '}(type({name} := ")
            first = False
            self.visit(item, frame)
            self.write(") is str)")
        sizes = " + ".join(
            [f"len({name})" for name, c in zip(names, constants) if c is None]
            + [str(sum(len(c) for c in constants if c is not None))]
        )
        if node is self._printed_chain:
            # Printed: counted once more for the print, and printed by the sandbox on the slow path.
            self.write(
                f" and (_ps_w := _ps_w + 2 * ({sizes})) < _ps_room else (_ps_print(context.eval_ctx,"
                f" _ps_concat(({', '.join(names)},), _ps_w, 2), 0, False), (_ps_w := 0))[0])"
            )
            return True
        self.write(
            f" and (_ps_w := _ps_w + {sizes}) < _ps_room"
            f" else (_ps_concat(({', '.join(names)},), _ps_w), (_ps_w := 0))[0])"
        )
        return True

    def _inline_concat_ok(self, node: nodes.Node) -> bool:
        """Whether :meth:`_inline_concat` takes ``node``."""
        return (
            isinstance(node, nodes.Filter)
            and node.name == _jinja_env.CONCAT_FILTER
            and isinstance(node.node, nodes.Tuple)
            and bool(node.node.items)
            and not (node.args or node.kwargs or node.dyn_args or node.dyn_kwargs)
            and any(_const_str(item) is None for item in node.node.items)
        )

    # -- the root function fills a list instead of yielding ------------------------------

    def write_commons(self) -> None:
        if self._buffered_root and not self._commons_written:
            # The root's preamble, without the dead `yield` that makes it a generator.
            self._commons_written = True
            if self._owned_context:
                # (the parameter is `parent`, the render's variables: see _generate)
                self.writeline("try:")
                self.writeline("    context = _ps_take()")
                self.writeline("except IndexError:")
                self.writeline("    context = _ps_new_context()")
                self.writeline("context.parent = parent")
                self.writeline("context.vars = _ps_vars = {}")
            self.writeline("resolve = context.resolve_or_missing")
            self.writeline("undefined = environment.undefined")
            self.writeline("concat = environment.concat")
            self.writeline("cond_expr_undefined = Undefined")
            self.writeline(f"_ps_parent_get = {'parent' if self._owned_context else 'context.parent'}.get")
            self.writeline("_ps_b = _ps_active() or _ps_budget()")
            self.writeline("_ps_room = _ps_b.step")
            self.writeline("_ps_w = 0")
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
            # What is left of the count, charged (budget.charge, inline).
            self.writeline("if _ps_w:")
            self.writeline("    _ps_b.work += _ps_w")
            self.writeline("    if _ps_b.work > _ps_b.work_check: _ps_b.over()")
            if self._owned_context:
                # The context goes back for the next render, holding nothing of this one
                # (the spare contexts are as many as renders of this template run at once).
                self.writeline("context.parent = context.vars = None")
                self.writeline("_ps_give(context)")
                self.writeline("return ''.join(_ps_out)")
            else:
                self.writeline("return _ps_out")

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        # Without inheritance, blocks or includes, the root returns a list of strings.
        self._buffered_root = all(
            node.find(kind) is None
            for kind in (nodes.Extends, nodes.Block, nodes.Include, nodes.Import, nodes.FromImport)
        )
        # The root makes its own context from the render's variables (`root(parent)`), from
        # contexts of finished renders when there are some: one call less per render.
        self._owned_context = (
            self._buffered_root
            and _CONTEXT_FIELDS_OK
            and node.find(nodes.EvalContextModifier) is None
            and node.find(nodes.ScopedEvalContextModifier) is None
        )
        # The attribute names this template gives its namespaces: read namespace-first.
        self._namespace_keys = {ref.attr for ref in node.find_all(nodes.NSRef)}
        for call in node.find_all(nodes.Call):
            if isinstance(call.node, nodes.Name) and call.node.name == "namespace":
                self._namespace_keys.update(kw.key for kw in call.kwargs)
        if self._buffered_root:
            self._direct_macros = self._find_direct_macros(node)
            if self.environment.undefined is Undefined:
                self._truth_nodes = _truth_tested(node)
            self._no_loop_vars = not _context_callables(self.environment)
        self.writeline("from prompt_style_hf.fastpath import helpers as _ps_helpers")
        self.writeline("from types import GeneratorType")
        self.writeline("_ps_fast = _ps_helpers(environment)")
        self.writeline("fast_getattr = _ps_fast['fast_getattr']")
        self.writeline("fast_getitem = _ps_fast['fast_getitem']")
        self.writeline("fast_call = _ps_fast['fast_call']")
        if _MACRO_FIELDS_OK:
            self.writeline("fast_macro = _ps_fast['fast_macro']")
        for name in _FAST_FILTERS.values():
            self.writeline(f"{name} = _ps_fast[{name!r}]")
        for name in (
            "active",
            "budget",
            "loop_items",
            "binop",
            "plus",
            "concat",
            "print",
            "str_filter",
            "spill",
            "bind_macro",
            "new_context",
            "namespace",
            "namespace_attrs",
            "namespace_set",
            "new",
            "generation_start",
            "generation_end",
            "function",
            "Mapping",
        ):
            self.writeline(f"_ps_{name} = _ps_fast[{name!r}]")
        # Contexts of finished renders of this template, to reuse (see write_commons).
        self.writeline("_ps_spare = []")
        self.writeline("_ps_take, _ps_give = _ps_spare.pop, _ps_spare.append")
        super().visit_Template(node, frame)
        for line in self._module_lines:
            self.writeline(line)

    def _inline_selection(self, node: nodes.Filter, frame: Frame) -> bool:
        """Jinja's filters that only read their value, written inline for the common
        types (``length``, ``first``, ``last``, ``default``, ``string``; and ``list``
        of a list, counted): the sandbox's guard on anything else."""
        name = node.name
        if (
            not self._inline_budget
            or name not in _SELECTION_FILTERS
            or node.node is None
            or node.kwargs
            or node.dyn_args
            or node.dyn_kwargs
            or not self._jinja_filter(name)
        ):
            return False
        if name in ("default", "d"):
            if len(node.args) > 1 or not all(isinstance(arg, nodes.Const) for arg in node.args):
                return False  # boolean=..., or a default that is evaluated whatever the value
        elif node.args:
            return False
        value, guarded = self.temporary_identifier(), self.filters[name]
        self.write("(")
        if name in ("length", "count"):
            self.write(f"len({value}) if type({value} := ")
            self.visit(node.node, frame)
            self.write(
                f") is str or type({value}) is list or type({value}) is dict or type({value}) is tuple"
                f" else {guarded}({value}))"
            )
        elif name in ("first", "last"):
            self.write(f"{value}[{0 if name == 'first' else -1}] if type({value} := ")
            self.visit(node.node, frame)
            self.write(f") is list and {value} else {guarded}(environment, {value}))")
        elif name in ("default", "d"):
            fallback = repr(node.args[0].value) if node.args else "''"
            self.write(f"{fallback} if isinstance({value} := ")
            self.visit(node.node, frame)
            self.write(f", Undefined) else {value})")
        elif name == "string":
            self.write(f"{value} if type({value} := ")
            self.visit(node.node, frame)
            self.write(f") is str else {guarded}({value}))")
        else:
            # list: a copy of a list or tuple, or the items of a select/map filter of this
            # generator (a generator that counts its own items), counted inline.
            items = self.temporary_identifier()
            self._mark_eager(node.node)
            self.write(
                f"({items} if (_ps_w := _ps_w + len({items} := list({value}))) < _ps_room"
                f" else ((_ps_w := _ps_spill(_ps_w - len({items}), 0)) or {guarded}(context.eval_ctx, {items})))"
                f" if type({value} := "
            )
            self.visit(node.node, frame)
            self.write(
                f") is list or type({value}) is tuple or type({value}) is GeneratorType"
                f" else {guarded}(context.eval_ctx, {value}))"
            )
        return True

    def _jinja_filter(self, name: str) -> bool:
        """Whether the environment's filter ``name`` is Jinja's own (or the sandbox's
        guard around it)."""
        func = self.environment.filters.get(name)
        return func is not None and getattr(func, "__wrapped__", func) is jinja_filters.FILTERS.get(name)

    @optimizeconst
    def visit_Filter(self, node: nodes.Filter, frame: Frame) -> None:
        if node.name == _jinja_env.CONCAT_FILTER and self._inline_concat(node, frame):
            return
        if self._inline_selection(node, frame):
            return
        method = _STR_FILTERS.get(node.name)
        if (
            method is not None
            and node.node is not None
            and not (node.args or node.kwargs or node.dyn_args or node.dyn_kwargs)
            and self._jinja_filter(node.name)
        ):
            # x|trim on a str is x.strip(); anything else goes to the filter itself.
            value = self.temporary_identifier()
            if not self._inline_budget:
                if self.environment.filters.get(node.name) is not jinja_filters.FILTERS[node.name]:
                    super().visit_Filter(node, frame)  # the sandbox's guard checks the result
                    return
                self.write(f"({value}.{method}() if type({value} := ")
                self.visit(node.node, frame)
                self.write(f") is str else {self.filters[node.name]}({value}))")
                return
            # Counted inline: the input's length (three times for a case change, which can
            # make a string longer: 'ß'.upper() is 'SS').
            factor = 1 if method == "strip" else 3
            size = f"len({value})" if factor == 1 else f"3 * len({value})"
            self.write(f"({value}.{method}() if type({value} := ")
            self.visit(node.node, frame)
            self.write(
                f") is str and (_ps_w := _ps_w + {size}) < _ps_room"
                f" else (_ps_str_filter({self.filters[node.name]}, {value}, _ps_w, {factor}), (_ps_w := 0))[0])"
            )
            return
        if self._prepared_selection(node, frame):
            return
        fast = _FAST_FILTERS.get(node.name)
        if fast is not None and node.node is not None and self._jinja_filter(node.name):
            self.write(f"{fast}(context, ")
            self.visit(node.node, frame)
            self.signature(node, frame)
            self.write(")")
            return
        super().visit_Filter(node, frame)

    def _prepared_selection(self, node: nodes.Filter, frame: Frame) -> bool:
        """``value|selectattr('role', 'equalto', 'user')`` (select, reject, selectattr,
        rejectattr with constant arguments): the filter prepared once, when the template
        is loaded (helpers' ``selector``), and its items all at once where the caller
        takes them all (see :meth:`_mark_eager`)."""
        if (
            not self._inline_budget
            or node.name not in _SELECTIONS
            or node.node is None
            or node.dyn_args
            or node.dyn_kwargs
            or not self._jinja_filter(node.name)
            or not all(_plain_const(argument) for argument in node.args)
            or not all(_plain_const(kw.value) for kw in node.kwargs)
        ):
            return False
        args = tuple(argument.value for argument in node.args)
        kwargs = {kw.key: kw.value.value for kw in node.kwargs}
        if helpers(self.environment)["selector"](node.name, args, kwargs) is None:
            return False
        lazy, eager = self.temporary_identifier(), self.temporary_identifier()
        self._module_lines.append(f"{lazy}, {eager} = _ps_fast['selector']({node.name!r}, {args!r}, {kwargs!r})")
        self.write(f"{eager if id(node) in self._eager_selections else lazy}(")
        self.visit(node.node, frame)
        self.write(")")
        return True

    def _mark_eager(self, node: nodes.Node) -> None:
        """``node`` is taken whole at once (a ``for`` loop's sequence, ``|list``): so is a
        chain of select/reject filters there (a list instead of a generator)."""
        while isinstance(node, nodes.Filter) and node.name in _SELECTIONS:
            self._eager_selections.add(id(node))
            node = node.node

    # -- attribute and item access ----------------------------------------------------

    def macro_def(self, macro_ref: Any, frame: Frame) -> None:
        if not _MACRO_FIELDS_OK:
            super().macro_def(macro_ref, frame)
            return
        arg_tuple = ", ".join(repr(x.name) for x in macro_ref.node.args)
        name = getattr(macro_ref.node, "name", None)
        if len(macro_ref.node.args) == 1:
            arg_tuple += ","
        if self._inline_budget and name in self._direct_macros:
            # Only ever called directly (see _find_direct_macros): its function is its value.
            self.write("macro")
            return
        if self._inline_budget and not frame.eval_ctx.volatile:
            # Everything but the function is known now: a class of this definition holds it
            # (made once, when the template is loaded), so a render only binds the function.
            site = self.temporary_identifier()
            self._module_lines.append(
                f"{site} = _ps_fast['macro_site']({name!r}, ({arg_tuple}), {macro_ref.accesses_kwargs!r},"
                f" {macro_ref.accesses_varargs!r}, {macro_ref.accesses_caller!r}, {frame.eval_ctx.autoescape!r})"
            )
            self.write(f"_ps_bind_macro({site}, macro)")
            return
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
            (
                kind.getattr is ImmutableSandboxedEnvironment.getattr
                or getattr(kind.getattr, "ps_same_as_sandbox", False)
            )
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
            self._inline_key(node.node, node.attr, "fast_getattr", frame, id(node) in self._truth_nodes)
            return
        self.write("fast_getattr(")
        self.visit(node.node, frame)
        self.write(f", {node.attr!r})")

    def _inline_key(self, subject: nodes.Node, name: str, fallback: str, frame: Frame, truth: bool = False) -> None:
        """``subject[key]`` read inline when ``subject`` is a dict holding ``key``,
        else ``fallback(subject, key)`` (the subject is evaluated once); for a key
        the template gives its namespaces, a namespace holding it is tried first.
        ``truth``: only the value's truth is read (see _truth_tested), and a dict
        without the key gives false instead of an undefined value."""
        key = repr(name)

        def miss(value: str) -> str:
            if truth:
                return f"(False if type({value}) is dict else {fallback}({value}, {key}))"
            return f"{fallback}({value}, {key})"

        if self._inline_budget and name in self._namespace_keys and name[:1] != "_":
            # ns.system_prompt: the namespace's attributes, read through their slot.
            value, attrs = self.temporary_identifier(), self.temporary_identifier()
            self.write(f"({attrs}[{key}] if type({value} := ")
            self.visit(subject, frame)
            self.write(
                f") is _ps_namespace and {key} in ({attrs} := _ps_namespace_attrs({value})) else"
                f" ({value}[{key}] if type({value}) is dict and {key} in {value} else {miss(value)}))"
            )
            return
        code = self._simple_code(subject, frame)
        if code is not None:
            self.write(f"({code}[{key}] if type({code}) is dict and {key} in {code} else {miss(code)})")
            return
        value = self.temporary_identifier()
        self.write(f"({value}[{key}] if type({value} := ")
        self.visit(subject, frame)
        self.write(f") is dict and {key} in {value} else {miss(value)})")

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
            truth = id(node) in self._truth_nodes and node.arg.value not in _DICT_ATTRIBUTES
            self._inline_key(node.node, node.arg.value, "fast_getitem", frame, truth)
            return
        if isinstance(node.arg, nodes.Const) and type(node.arg.value) is int:
            # messages[0], messages[-1] on a list that has the item: read it inline.
            index, value = node.arg.value, self.temporary_identifier()
            present = value if index in (0, -1) else f"len({value}) > {index if index >= 0 else -index - 1}"
            self.write(f"({value}[{index}] if type({value} := ")
            self.visit(node.node, frame)
            self.write(f") is list and {present} else fast_getitem({value}, {index}))")
            return
        self.write("fast_getitem(")
        self.visit(node.node, frame)
        self.write(", ")
        self.visit(node.arg, frame)
        self.write(")")

    def visit_Compare(self, node: nodes.Compare, frame: Frame) -> None:
        key = self._compared_key(node)
        if key is None:
            super().visit_Compare(node, frame)
            return
        # message['role'] == 'user': on a dict that has the key, its value compared inline;
        # where the key is missing (a dict without it, or the characters of a text), the
        # value is undefined, which equals no constant: the answer is known without making it.
        operand = node.ops[0]
        op = {"eq": "==", "ne": "!="}[operand.op]
        constant = repr(operand.expr.value)
        subject = self.temporary_identifier()
        access = "fast_getattr" if isinstance(node.expr, nodes.Getattr) else "fast_getitem"
        missing = "False" if operand.op == "eq" else "True"
        sequences = (
            ""
            if key in _SEQUENCE_ATTRIBUTES
            else f" or type({subject}) is str or type({subject}) is list or type({subject}) is tuple"
        )
        self.write(f"(({subject}[{key!r}] {op} {constant}) if type({subject} := ")
        self.visit(node.expr.node, frame)
        self.write(
            f") is dict and {key!r} in {subject} else ({missing} if type({subject}) is dict{sequences}"
            f" else {access}({subject}, {key!r}) {op} {constant}))"
        )

    def _compared_key(self, node: nodes.Compare) -> str | None:
        """The key of ``x['key'] == constant`` (or ``x.key != constant``) when it may be
        compared inline, else ``None``."""
        if not self._sandbox_access or len(node.ops) != 1 or node.ops[0].op not in ("eq", "ne"):
            return None
        constant = node.ops[0].expr
        if not isinstance(constant, nodes.Const) or type(constant.value) not in (str, int, float, bool, type(None)):
            return None
        target = node.expr
        if isinstance(target, nodes.Getattr):
            key = target.attr
            if isinstance(target.node, nodes.Name) and target.node.name == "loop":
                return None  # the loop's own values
        elif isinstance(target, nodes.Getitem) and isinstance(target.arg, nodes.Const):
            key = target.arg.value
        else:
            return None
        if type(key) is not str or key in _DICT_ATTRIBUTES:
            return None
        return key

    @optimizeconst
    def visit_Test(self, node: nodes.Test, frame: Frame) -> None:
        ref = self._defined_name_test(node, frame)
        if ref is not None:
            # tools is defined: a name that is not set is undefined (and so is a value that
            # is undefined itself), without making the undefined value Jinja would make.
            defined = f"({ref} is not missing and not isinstance({ref}, Undefined))"
            self.write(defined if node.name == "defined" else f"(not {defined})")
            return
        key = self._defined_key_test(node)
        if key is None:
            inline = _INLINE_TESTS.get(node.name)
            if (
                inline is None
                or node.args
                or node.kwargs
                or node.dyn_args
                or node.dyn_kwargs
                or self.environment.tests.get(node.name) is not jinja_tests.TESTS.get(node.name)
            ):
                super().visit_Test(node, frame)
                return
            # x is string: Jinja's test, inline (the value evaluated once).
            value = self.temporary_identifier()
            first, _, rest = inline.partition("{0}")
            self.write(f"({first}({value} := ")
            self.visit(node.node, frame)
            self.write(f"){rest.format(value)})")
            return
        # message.tool_calls is defined: whether the dict holds the key, without making an
        # undefined value when it does not; anything else as Jinja does.
        subject = self.temporary_identifier()
        present = f"({key!r} in {subject} and not isinstance({subject}[{key!r}], Undefined))"
        access = "fast_getattr" if isinstance(node.node, nodes.Getattr) else "fast_getitem"
        if node.name == "defined":
            self.write(f"({present} if type({subject} := ")
        else:
            self.write(f"(not {present} if type({subject} := ")
        self.visit(node.node.node, frame)
        self.write(f") is dict else {self.tests[node.name]}({access}({subject}, {key!r})))")

    def _defined_name_test(self, node: nodes.Test, frame: Frame) -> str | None:
        """The variable of ``name is defined`` / ``name is undefined`` when it may be
        tested inline (a name Jinja reads as ``undefined(...) if ref is missing else ref``)."""
        target = node.node
        if (
            not isinstance(target, nodes.Name)
            or target.ctx != "load"
            or target.name == "loop"
            or node.name not in ("defined", "undefined")
            or node.args
            or node.kwargs
            or node.dyn_args
            or node.dyn_kwargs
            or self.environment.tests.get(node.name) is not jinja_tests.TESTS[node.name]
        ):
            return None
        ref = frame.symbols.ref(target.name)
        load = frame.symbols.find_load(ref)
        if load is not None and load[0] == VAR_LOAD_PARAMETER and not self.parameter_is_undeclared(ref):
            return None  # a parameter: Jinja reads it as it is
        return ref

    def _defined_key_test(self, node: nodes.Test) -> str | None:
        """The key of ``x.key is defined`` / ``x['key'] is undefined`` when it may be
        tested inline, else ``None``."""
        if (
            not self._sandbox_access
            or node.name not in ("defined", "undefined")
            or node.args
            or node.kwargs
            or node.dyn_args
            or node.dyn_kwargs
            or self.environment.tests.get(node.name) is not jinja_tests.TESTS[node.name]
        ):
            return None
        target = node.node
        if isinstance(target, nodes.Getattr):
            key = target.attr
            if isinstance(target.node, nodes.Name) and target.node.name == "loop":
                return None  # loop.previtem is defined: the loop's own values
        elif isinstance(target, nodes.Getitem) and isinstance(target.arg, nodes.Const):
            key = target.arg.value
        else:
            return None
        if type(key) is not str or key in _DICT_ATTRIBUTES:
            return None
        return key

    def visit_Name(self, node: nodes.Name, frame: Frame) -> None:
        if node.ctx == "load" and id(node) in self._truth_nodes:
            ref = frame.symbols.ref(node.name)
            load = frame.symbols.find_load(ref)
            if not (load is not None and load[0] == VAR_LOAD_PARAMETER and not self.parameter_is_undeclared(ref)):
                # {% if tools %}: a name that is not set is false (only its truth is read).
                self.write(f"(False if {ref} is missing else {ref})")
                return
        super().visit_Name(node, frame)

    def visit_NSRef(self, node: nodes.NSRef, frame: Frame) -> None:
        if not self._inline_budget or node.attr[:1] == "_":
            super().visit_NSRef(node, frame)  # TemplateNamespace.__setitem__ refuses the name
            return
        # {% set ns.x = ... %} (visit_Assign has checked that ns is a namespace): into the
        # namespace's attributes, through their slot.
        ref = frame.symbols.ref(node.name)
        self.writeline(f"(_ps_namespace_attrs({ref}) if type({ref}) is _ps_namespace else {ref})[{node.attr!r}]")

    def visit_CallBlock(self, node: nodes.CallBlock, frame: Frame) -> None:
        call = node.call
        if not (
            self._inline_budget
            and not (frame.eval_ctx.volatile or frame.eval_ctx.autoescape)
            and isinstance(call, nodes.Call)
            and isinstance(call.node, nodes.ExtensionAttribute)
            and call.node.identifier == GenerationBlocks.identifier
            and call.node.name == "_generation"
            and len(call.args) == 1
            and not (call.kwargs or call.dyn_args or call.dyn_kwargs or node.args)
            and not find_undeclared(node.body, ("caller", "kwargs", "varargs"))
        ):
            super().visit_CallBlock(node, frame)
            return
        # {% generation %}: its body's function called directly, and its output wrapped in
        # the marks while spans are tracked (GenerationBlocks._generation, inline); the
        # result charged as the sandbox's call charges it.
        self.macro_body(node, frame)
        body, result = self.temporary_identifier(), self.temporary_identifier()
        self.writeline(f"{body} = macro()")
        self.writeline(f"{result} = _ps_generation_start + {body} + _ps_generation_end if (")
        self.visit(call.args[0], frame)
        self.write(f") is True else {body}")
        self.writeline(f"if (_ps_w := _ps_w + len({result})) >= _ps_room: _ps_w = _ps_spill(_ps_w, len({result}))")
        self.start_write(frame, node)
        self.write(result)
        self.end_write(frame)

    def _find_direct_macros(self, tree: nodes.Template) -> dict[str, int]:
        """The template's macros that are only ever called, directly, by their name, with
        positional arguments (at most their parameters): their number of parameters by
        name. Such a macro's value is its function (no ``Macro`` object is made for it)
        and a call passes ``missing`` for the parameters it leaves out, as
        ``Macro.__call__`` does. Each is defined once, at the top level, and takes no
        ``caller``, ``kwargs`` or ``varargs``; its name is nothing else in the template
        and no global (its value before the definition comes from the render's context,
        which holds data)."""
        if self.environment.autoescape:
            return {}
        defined = [macro.name for macro in tree.find_all(nodes.Macro)]
        stored = {name.name for name in tree.find_all(nodes.Name) if name.ctx != "load"}
        found: dict[str, int] = {}
        for macro in tree.body:
            if (
                isinstance(macro, nodes.Macro)
                and defined.count(macro.name) == 1
                and macro.name not in stored
                and macro.name not in self.environment.globals
                and macro.name not in ("strftime_now", "caller", "kwargs", "varargs", "loop", "self")
                and not find_undeclared(macro.body, ("caller", "kwargs", "varargs"))
            ):
                found[macro.name] = len(macro.args)
        if not found:
            return found
        called = {id(call.node): call for call in tree.find_all(nodes.Call)}
        with_caller = {id(block.call) for block in tree.find_all(nodes.CallBlock)}
        for name in tree.find_all(nodes.Name):
            if name.name in found:
                call = called.get(id(name))
                if (
                    call is None
                    or id(call) in with_caller
                    or call.kwargs
                    or call.dyn_args
                    or call.dyn_kwargs
                    or len(call.args) > found[name.name]
                ):
                    del found[name.name]
        return found

    def visit_Call(self, node: nodes.Call, frame: Frame, forward_caller: bool = False) -> None:
        if (
            self._inline_budget
            and not forward_caller
            and isinstance(node.node, nodes.Name)
            and node.node.name in self._direct_macros
            and not (frame.eval_ctx.volatile or frame.eval_ctx.autoescape)
        ):
            # A macro that is only ever called directly: its function, with `missing` for the
            # parameters left out (Macro.__call__); before its definition, as Jinja calls.
            ref = frame.symbols.ref(node.node.name)
            left_out = self._direct_macros[node.node.name] - len(node.args)
            self.write(f"({ref}(")
            for i, argument in enumerate(node.args):
                self.write(", " if i else "")
                self.visit(argument, frame)
            self.write(", missing" * left_out if node.args else ", ".join(["missing"] * left_out))
            self.write(f") if type({ref}) is _ps_function else fast_call(context, ")
            self.visit(node.node, frame)
            self._call_arguments(node, frame, forward_caller)
            self.write(")")
            return
        if (
            self._inline_budget
            and not forward_caller
            and isinstance(node.node, nodes.Name)
            and node.node.name == "namespace"
            and not (node.args or node.dyn_args or node.dyn_kwargs)
            and all(kw.key[:1] != "_" for kw in node.kwargs)
        ):
            # namespace(a=1, b=''): the template's namespace made directly (what its
            # __init__ does for names that do not start with "_"); anything else as below.
            callee, made = self.temporary_identifier(), self.temporary_identifier()
            self.write(f"((_ps_namespace_set({made} := _ps_new(_ps_namespace), {{")
            for i, kw in enumerate(node.kwargs):
                self.write(f"{', ' if i else ''}{kw.key!r}: ")
                self.visit(kw.value, frame)
            self.write(f"}}) or {made}) if ({callee} := ")
            self.visit(node.node, frame)
            self.write(f") is _ps_namespace else fast_call(context, {callee}")
            self._call_arguments(node, frame, forward_caller)
            self.write(")")
            return
        if (
            self._inline_budget
            and not forward_caller
            and isinstance(node.node, nodes.Name)
            and not (node.kwargs or node.dyn_args or node.dyn_kwargs)
            and not (frame.eval_ctx.volatile or frame.eval_ctx.autoescape)
        ):
            # A call of the template's own macro with all its arguments, positional: its
            # function, directly (what fast_call does after its checks); anything else as below.
            callee = self.temporary_identifier()
            self.write(f"({callee}._func(")
            for i, argument in enumerate(node.args):
                self.write(", " if i else "")
                self.visit(argument, frame)
            self.write(f") if type({callee} := ")
            self.visit(node.node, frame)
            self.write(
                f").__base__ is Macro and {callee}._ps_positional == {len(node.args)} else fast_call(context, {callee}"
            )
            self._call_arguments(node, frame, forward_caller)
            self.write(")")
            return
        if self._inline_dict_call(node, forward_caller):
            # message.get('name'), tool.items(): on a dict, called directly (constant arguments).
            subject, method = self.temporary_identifier(), node.node.attr
            arguments = ", ".join(repr(argument.value) for argument in node.args)
            self.write(f"({subject}.{method}({arguments}) if type({subject} := ")
            self.visit(node.node.node, frame)
            self.write(f") is dict else fast_call(context, fast_getattr({subject}, {method!r})")
            self._call_arguments(node, frame, forward_caller)
            self.write(")")
            return
        factor = self._inline_str_call(node, forward_caller)
        if factor is not None:
            # text.strip(), text.startswith('x'), text.replace('\r\n', '\n') on a str, called
            # directly (constant arguments: nothing else is evaluated first); anything else as below.
            subject, method = self.temporary_identifier(), node.node.attr
            arguments = ", ".join(repr(argument.value) for argument in node.args)
            self.write(f"({subject}.{method}({arguments}) if type({subject} := ")
            self.visit(node.node.node, frame)
            if factor:
                # The result can be up to `factor` times the text's length: counted inline.
                pending = f"(_ps_w - {factor} * len({subject}) if type({subject}) is str else _ps_w)"
                self.write(
                    f") is str and (_ps_w := _ps_w + {factor} * len({subject})) < _ps_room"
                    f" else ((_ps_w := _ps_spill({pending}, 0)) or "
                )
            else:
                self.write(") is str else (")
            self.write(f"fast_call(context, fast_getattr({subject}, {method!r})")
            self._call_arguments(node, frame, forward_caller)
            self.write("))")
            return
        self.write("fast_call(context, ")
        self.visit(node.node, frame)
        self._call_arguments(node, frame, forward_caller)

    def _inline_dict_call(self, node: nodes.Call, forward_caller: bool) -> bool:
        """Whether ``node`` is ``x.get(constants)`` (or ``items``, ``keys``, ``values``)."""
        return (
            self._inline_budget
            and self._sandbox_access
            and not forward_caller
            and isinstance(node.node, nodes.Getattr)
            and node.node.attr in _SAFE_DICT_METHODS
            and not (node.kwargs or node.dyn_args or node.dyn_kwargs)
            and all(isinstance(argument, nodes.Const) for argument in node.args)
            and not (isinstance(node.node.node, nodes.Name) and node.node.node.name == "loop")
        )

    def _inline_str_call(self, node: nodes.Call, forward_caller: bool) -> int | None:
        """For ``x.method(constants)`` with a method of :data:`_INLINE_STR_METHODS`: how
        many times the text's length its result can have (0: not a string), else ``None``."""
        if (
            not self._inline_budget
            or not self._sandbox_access
            or forward_caller
            or not isinstance(node.node, nodes.Getattr)
        ):
            return None
        factor = _INLINE_STR_METHODS.get(node.node.attr)
        if factor is None or node.kwargs or node.dyn_args or node.dyn_kwargs:
            return None
        if not all(isinstance(argument, nodes.Const) for argument in node.args):
            return None
        if node.node.attr == "replace":
            # Only a replace that cannot make the text longer.
            values = [argument.value for argument in node.args]
            if not (
                len(values) in (2, 3)
                and all(type(v) is str for v in values[:2])
                and len(values[1]) <= len(values[0])
                and (len(values) == 2 or type(values[2]) is int)
            ):
                return None
        return factor

    def pop_assign_tracking(self, frame: Frame) -> None:
        if self._no_loop_vars and frame.loop_frame and not frame.toplevel:
            self._assign_stack.pop()  # nothing reads a loop's `_loop_vars` (see _context_callables)
            return
        super().pop_assign_tracking(frame)

    def _call_arguments(self, node: nodes.Call, frame: Frame, forward_caller: bool) -> None:
        extra_kwargs = {"caller": "caller"} if forward_caller else None
        loop_kwargs = {"_loop_vars": "_loop_vars"} if frame.loop_frame and not self._no_loop_vars else {}
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
            or (not extended and not self._inline_budget)
            or any(block.scoped for block in node.find_all(nodes.Block))
            or (extended and not _simple_loop_use(node.body))
        ):
            super().visit_For(node, frame)
            return
        # Jinja's visit_For, with the LoopContext of an extended loop replaced by
        # enumerate over a list (no loop filter, not recursive: see _simple_loop_use),
        # and a loop over a sequence counted at once.
        loop_frame = frame.inner()
        loop_frame.loop_frame = True
        else_frame = frame.inner()
        loop_ref = loop_frame.symbols.declare_parameter("loop") if extended else None
        loop_frame.symbols.analyze_node(node, for_branch="body")
        if node.else_:
            else_frame.symbols.analyze_node(node, for_branch="else")
        if loop_ref is not None:
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
        counted = node.iter
        if (
            self._inline_budget
            and isinstance(counted, nodes.Filter)
            and counted.name == _jinja_env.LOOP_FILTER
            and len(counted.args) == 1
            and isinstance(counted.args[0], nodes.Const)
        ):
            # The sandbox's loop filter, for a loop over a sequence: counted at once
            # (inline for a list: its length as iterations, its literal text as characters).
            cost = counted.args[0].value
            self._mark_eager(counted.node)  # taken whole: loop_items makes a list of it
            self.writeline(f"{seq} = ", node)
            self.visit(counted.node, frame)
            if any(isinstance(n, nodes.Break) for n in _own_nodes(node.body)):
                # A loop that may stop early: a sequence's iterations (and literal text)
                # counted one at a time as they run, as the sandbox's loop filter counts
                # them, so that a {% break %} leaves the rest uncounted.
                per_item = self.temporary_identifier()
                self.writeline(f"{per_item} = type({seq})")
                self.writeline(f"if {per_item} is list or {per_item} is tuple or {per_item} is range:")
                self.indent()
                self.writeline(f"{per_item} = True")
                self.outdent()
                self.writeline("else:")
                self.indent()
                self.writeline(f"{seq} = _ps_loop_items({seq}, {cost!r})")
                self.writeline(f"{per_item} = False")
                self.outdent()
                cost = (per_item, cost)
            else:
                self._write_counted_at_once(seq, cost)
                cost = None
        else:
            cost = None
            self.writeline(f"{seq} = list(", node)
            self.visit(node.iter, frame)
            self.write(")")
        self._loop_body(node, loop_frame, else_frame, loop_ref, hoisted, seq, index, length, iteration_indicator, cost)

    def _write_counted_at_once(self, seq: str, cost: int) -> None:
        """A loop over a sequence counted when it starts (inline for a list: its
        length as iterations, its literal text as characters)."""
        self.writeline(f"if type({seq}) is list:")
        self.indent()
        self.writeline(f"_ps_b.iterations += len({seq})")
        self.writeline("if _ps_b.iterations > _ps_b.iter_limit: _ps_b.count(0)")
        if cost:
            self.writeline(f"if (_ps_w := _ps_w + {cost!r} * len({seq})) >= _ps_room: _ps_w = _ps_spill(_ps_w, 0)")
        self.outdent()
        self.writeline("else:")
        self.indent()
        self.writeline(f"{seq} = _ps_loop_items({seq}, {cost!r})")
        self.outdent()

    def _loop_body(
        self,
        node: nodes.For,
        loop_frame: Frame,
        else_frame: Frame,
        loop_ref: str | None,
        hoisted: set,
        seq: str,
        index: str,
        length: str,
        iteration_indicator: str | None,
        per_item: tuple[str, int] | None,
    ) -> None:
        """The rest of :meth:`visit_For`: the loop itself (``per_item``: the flag and
        the literal text of a loop counted one iteration at a time)."""
        if not isinstance(per_item, tuple):
            per_item = None
        # Jinja makes `_loop_vars` (what a `{% set %}` in the body adds, for functions that
        # take the context) at every iteration; a body without assignments or inner loops
        # needs one for the whole loop, and a body without calls either, none at all.
        inner = list(_own_nodes(node.body))
        assigns = any(isinstance(n, (nodes.Assign, nodes.AssignBlock, nodes.For)) for n in inner)
        calls = any(isinstance(n, (nodes.Call, nodes.CallBlock)) for n in inner)
        fresh_loop_vars = (assigns or not self._inline_budget) and not self._no_loop_vars
        if not fresh_loop_vars and calls and not self._no_loop_vars:
            self.writeline("_loop_vars = {}")
        if loop_ref is not None:
            self.writeline(f"{length} = len({seq})")
            self.writeline(f"for {index}, (")
            self.visit(node.target, loop_frame)
            self.write(f") in enumerate({seq}):")
        else:
            self.writeline("for (")
            self.visit(node.target, loop_frame)
            self.write(f") in {seq}:")
        self.indent()
        if per_item is not None:
            flag, cost = per_item
            self.writeline(f"if {flag}:")
            self.indent()
            self.writeline("_ps_b.iterations += 1")
            self.writeline("if _ps_b.iterations > _ps_b.iter_limit: _ps_b.count(0)")
            if cost:
                self.writeline(f"if (_ps_w := _ps_w + {cost!r}) >= _ps_room: _ps_w = _ps_spill(_ps_w, 0)")
            self.outdent()
        if self._inline_budget:
            self.writeline("if _ps_b.due: _ps_b.tick()")  # a check point of the deadline
        self._hoisted = hoisted
        self.enter_frame(loop_frame)
        outer = self._fast_loops.get(loop_ref) if loop_ref is not None else None
        if loop_ref is not None:
            self._fast_loops[loop_ref] = (seq, index, length)
        if fresh_loop_vars:
            self.writeline("_loop_vars = {}")
        self.blockvisit(node.body, loop_frame)
        # Loop identifiers are reused by sibling loops: this one ends here.
        if loop_ref is None:
            pass
        elif outer is None:
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
        python, self._root_takes_parent = _generated(environment, ast)
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
        self.runner = _jinja_env.runner()
        """jinja_env's runner: ``runner(render_context, None, template, None, None, (parent,))``
        is :meth:`render_owned` without its frame."""
        self.run_owned = _jinja_env.bound_runner(self.render_context, self.template)
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


def _generate(environment: Any, ast: nodes.Template) -> str:
    return _generated(environment, ast)[0]


def _generated(environment: Any, ast: nodes.Template) -> tuple[str, bool]:
    """The Python source of ``ast`` from :class:`FastCodeGenerator`. A sandbox with
    budgets rewrites the tree first (``jinja_env.prepare_tree``: every loop counted,
    every ``~`` sized), as its own compiler does."""
    ast = _jinja_env.prepare_tree(ast)
    _charge_printed_constants(ast)
    generator = FastCodeGenerator(environment, None, _FILENAME, optimized=environment.optimized)
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
    return source, generator._owned_context


_RESOLVED_NAME = re.compile(r"l_\d+_\w+")
_RESOLVED_KEY = re.compile(r"'[A-Za-z_][A-Za-z_0-9]*'")

_PREAMBLE = [
    (name, f"    {name} = {value}")
    for name, value in (
        ("resolve", "context.resolve_or_missing"),
        ("concat", "environment.concat"),
        ("cond_expr_undefined", "Undefined"),
    )
]


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


def compile_fast(environment: Any, source: str) -> FastTemplate:
    """The fast template for ``source`` (compiled once per process and environment)."""
    key = (id(environment), source)
    found = _FAST.get(key)
    if found is None or found.environment is not environment:
        found = _FAST[key] = FastTemplate(environment, source)
    return found
