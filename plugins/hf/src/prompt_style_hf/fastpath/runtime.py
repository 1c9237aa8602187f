"""The runtime helpers the generated code calls: fast accessors, calls, filters, macros and contexts per environment."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from types import BuiltinMethodType, FunctionType
from typing import Any

from jinja2 import tests as jinja_tests
from jinja2.exceptions import FilterArgumentError
from jinja2.filters import _prepare_attribute_parts
from jinja2.nodes import EvalContext
from jinja2.runtime import Context, LoopContext, Macro, Undefined, missing
from jinja2.utils import _PassArg
from markupsafe import Markup

from prompt_style import LimitError
from prompt_style import safe as _safe
from prompt_style.safe import CHEAP_TEXT, call_method, check_str_call, current_budget

from ..environment import GENERATION_END, GENERATION_START, NAMESPACE_ATTRIBUTES, TemplateNamespace
from .names import (
    _DICT_ATTRIBUTES,
    _LOOP_ATTRIBUTES,
    _MACRO_FIELDS_OK,
    _SAFE_DICT_METHODS,
    _SAFE_STR_METHODS,
    _SEQUENCE_ATTRIBUTES,
    AMPLIFYING_STR_METHODS,
)


def _long_arguments(args: tuple, kwargs: dict) -> bool:
    """Whether a str method's arguments hold a text longer than CHEAP_TEXT (below which, with
    a short text, no method costs anything but the work it builds)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, (str, bytes)) and len(value) > CHEAP_TEXT:
            return True
    return False


EAGER_ITEMS = 4096
"""The most items a select/reject filter whose items are all taken at once filters
in one go (its deadline is checked before; longer inputs are filtered item by item)."""

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
    plain_undefined = undefined is Undefined
    tests = environment.tests
    namespace_attrs = NAMESPACE_ATTRIBUTES.__get__
    env_range = environment.globals.get("range")
    # The render's budget in one call of C (current_budget() is two calls of Python).
    active = _safe.budget_getter()

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
                if owner is str and (len(func.__self__) > CHEAP_TEXT or _long_arguments(args, kwargs)):
                    # Sized before it runs (its result, its cost, split's items), called and
                    # charged as the sandbox's call does.
                    return call_method(func, args, kwargs)
                if name in AMPLIFYING_STR_METHODS and owner is str:
                    args = check_str_call(func, args, kwargs)  # sized before it runs, as the sandbox does
                result = func(*args, **kwargs)
                kind = type(result)
                if kind is str or kind is list:
                    # What the sandbox's call charges: strings and lists built (upper, split...).
                    budget = active() or current_budget()
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
                budget = active() or current_budget()
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
        budget = active() or current_budget()
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
            kind = type(value)
            if value is None or ((kind is list or kind is tuple) and not value):
                # Nothing to filter (Jinja's filter yields nothing for a false value): the
                # guard's check point only.
                budget = active() or current_budget()
                if budget.due:
                    budget.tick()
                return []
            budget = sized_input(name, value)
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

    # The limits under which the guarded trim/lower/upper/capitalize let Jinja's plain
    # Undefined through (see str_filter).
    undefined_passes: list[Any] = [None]

    def str_filter(func: Any, value: Any, pending: int, factor: int) -> Any:
        """The slow path of an inline trim/lower/upper/capitalize: charge what was counted
        inline (``factor`` times the value's length for a string), then the guarded filter.

        Of Jinja's plain ``Undefined`` (``param.description|trim`` where a parameter has
        none), each of them makes ``''``, and what the guard checks first (the value's
        size as text against ``max_string``) and charges (nothing) depends on the limits
        only: once the guarded filter has let one through under a budget's limits, an
        ``Undefined`` under the same limits is ``''`` after the guard's check point."""
        budget = None
        if pending:
            if type(value) is str:
                pending -= factor * len(value)
            budget = active() or current_budget()
            budget.charge(pending)
        if type(value) is undefined and plain_undefined:
            budget = budget or active() or current_budget()
            if budget.limits is undefined_passes[0]:
                if budget.due:
                    budget.tick()
                return ""
            text = func(value)
            if text == "" and type(text) is str:
                undefined_passes[0] = budget.limits
            return text
        return func(value)

    def spill(pending: int, size: int) -> int:
        """Charge ``pending`` characters counted inline, the last operation having built
        ``size`` (checked against ``max_string``); the count starts again from 0."""
        budget = active() or current_budget()
        budget.work += pending
        if budget.work > budget.work_check:
            budget.over_size(size, "a macro's result")
        return 0

    def dict_items(value: dict) -> list:
        """``value|items`` of a dict whose items a ``for`` loop takes whole: the guarded
        filter's checks (the deadline, ``max_items``) and the iterations its lazy counter
        counts as the loop reads them, at once; the items as a list."""
        budget = active() or current_budget()
        if budget.due:
            budget.tick()
        size = len(value)
        if size > budget.limits.max_items:
            limit = budget.limits.max_items
            raise LimitError(f"filter 'items' got {size:,} items (more than {limit:,})", limit="max_items", value=limit)
        budget.iterations += size  # budget.count(size), inline: count(0) raises or reads the clock
        if budget.iterations > budget.iter_limit or budget.due:
            budget.count(0)
        return list(value.items())

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
        "active": active,
        "loop_items": _safe.loop_items,
        "binop": partial(_safe.binop_value, environment),
        "plus": partial(_safe.plus_values, environment),
        "concat": _safe.concat_values,
        "compare": _safe.compare_values,
        # Operands whose comparison with anything costs at most a text's length (in C).
        "compared": frozenset({str, bytes, int, float, bool, type(None)}),
        "print": _safe.print_value,
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
        "dict_items": dict_items,
        "dict_attributes": _DICT_ATTRIBUTES,
    }
    _HELPERS[id(environment)] = (environment, made)
    return made


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
