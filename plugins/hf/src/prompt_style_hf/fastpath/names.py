"""The facts the compiler's fast paths stand on: each type's attributes and safe methods, Jinja's Context and Macro."""

from __future__ import annotations

from jinja2 import filters as jinja_filters
from jinja2.runtime import Context, LoopContext, Macro

from prompt_style.safe import AMPLIFYING_STR_METHODS

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

FAST_LOOP_ATTRIBUTES = frozenset(
    {"index0", "index", "first", "last", "length", "revindex", "revindex0", "previtem", "nextitem", "depth", "depth0"}
)


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
