"""The code generator's root function (it fills a list and makes its own context) and its filters, written inline."""

from __future__ import annotations

from typing import Any

from jinja2 import filters as jinja_filters
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, DependencyFinderVisitor, Frame, optimizeconst
from jinja2.idtracking import VAR_LOAD_RESOLVE
from jinja2.runtime import Undefined

from prompt_style import safe as _safe

from .analysis import _context_callables, _plain_const, _truth_tested
from .names import _CONTEXT_FIELDS_OK, _FAST_FILTERS, _MACRO_FIELDS_OK, _SELECTION_FILTERS, _SELECTIONS, _STR_FILTERS
from .runtime import helpers

# The sandbox's names of comparison operators (ps-compare's argument), as Python writes them.
_COMPARE_OPERATORS = {
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "lteq": "<=",
    "gt": ">",
    "gteq": ">=",
    "in": "in",
    "notin": "not in",
}


class BufferedRootGenerator(CodeGenerator):
    """Jinja's code generator, with a root that returns a list and filters written inline
    (part of :class:`FastCodeGenerator`)."""

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
            # The budget's slow path joins the output as it grows (safe/_sandbox/budget.py).
            self.writeline("_ps_b.out = _ps_out")
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
        hoisted, self._hoisted = self._hoisted, {}  # for the loop frame being entered only
        if not hoisted:
            super().enter_frame(frame)
            return
        saved = {target: frame.symbols.loads.pop(target) for target in hoisted if target in frame.symbols.loads}
        for target, outer in hoisted.items():
            if outer is not None and target in saved:
                self.writeline(f"{target} = {outer}")  # read before the loop (see visit_For)
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
        self.writeline("from prompt_style_hf.fastpath.runtime import helpers as _ps_helpers")
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
            "compare",
            "compared",
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
            "dict_items",
            "dict_attributes",
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

    def _inline_list(self, node: nodes.Node) -> bool:
        """Whether ``node`` is ``x|list`` that :meth:`_inline_selection` writes inline: a
        list (a copy, or the guarded filter's list)."""
        return (
            isinstance(node, nodes.Filter)
            and node.name == "list"
            and self._inline_budget
            and node.node is not None
            and not (node.args or node.kwargs or node.dyn_args or node.dyn_kwargs)
            and self._jinja_filter("list")
        )

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
        if name in ("length", "count") and self._inline_list(node.node):
            # x|list|length: the inline list filter gives a list, whatever x is.
            self.write("len(")
            self.visit(node.node, frame)
            self.write(")")
            return True
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

    def _inline_compare(self, node: nodes.Filter, frame: Frame) -> bool:
        """``a op b`` (the sandbox's ``ps-compare``) inline when neither operand can make it
        costly (for ``in``: a container that is not a list or tuple); else the sandbox's
        ``compare_values``, which sizes it first. The operands are evaluated in order, once."""
        items = node.node.items if isinstance(node.node, nodes.Tuple) else None
        if not items or len(items) != 2 or len(node.args) != 1 or not isinstance(node.args[0], nodes.Const):
            return False
        op = node.args[0].value
        python = _COMPARE_OPERATORS.get(op)
        if python is None:
            return False
        left, right = self.temporary_identifier(), self.temporary_identifier()
        if _plain_const(items[0]):
            # 'tool_calls' in message: the constant is written as it is, and for anything but
            # `in` a constant of a plain type makes the comparison cheap (known now).
            constant = repr(items[0].value)
            plain = self._plain_message(items[1], frame) if op in ("in", "notin") else None
            if plain is not None:
                self.write(f"({constant} {python} {plain})")  # 'tool_calls' in message: a plain message's dict
                return True
            if op in ("in", "notin"):
                cheap = f"type({right}) is not list and type({right}) is not tuple"
                if type(items[0].value) is str:
                    # in a list or tuple: its length times the text's, within max_op_cost
                    # (as the sandbox's check_compare sizes it)
                    per = max(len(items[0].value), 1)
                    cheap = f"({cheap} or len({right}) * {per} <= _ps_b.limits.max_op_cost)"
                # 'tool_calls' in message: a dict, the commonest case, tested first (the
                # same test: a dict is neither a list nor a tuple).
                self.write(f"({constant} {python} {right} if type({right} := ")
                self.visit(items[1], frame)
                self.write(f") is dict or {cheap} else _ps_compare(({constant}, {right}), {op!r}))")
                return True
            self.write(f"({constant} {python} {right} if (({right} := ")
            self.visit(items[1], frame)
            self.write(f") is {right}) else _ps_compare(({constant}, {right}), {op!r}))")
            return True
        if op in ("in", "notin"):
            # a text in a list or tuple: its length times the list's, within max_op_cost (as the
            # sandbox's check_compare sizes it); anything else in one, through check_compare
            cheap = (
                f"(type({right}) is not list and type({right}) is not tuple"
                f" or type({left}) is str and len({right}) * (len({left}) or 1) <= _ps_b.limits.max_op_cost)"
            )
        else:
            cheap = f"(type({left}) in _ps_compared or type({right}) in _ps_compared)"
        # (each operand evaluated in order, once: `(x := ...) is x` is true, and builds nothing)
        self.write(f"({left} {python} {right} if (({left} := ")
        self.visit(items[0], frame)
        self.write(f") is {left}) & (({right} := ")
        self.visit(items[1], frame)
        self.write(f") is {right}) and {cheap} else _ps_compare(({left}, {right}), {op!r}))")
        return True

    def _jinja_filter(self, name: str) -> bool:
        """Whether the environment's filter ``name`` is Jinja's own (or the sandbox's
        guard around it)."""
        func = self.environment.filters.get(name)
        return func is not None and getattr(func, "__wrapped__", func) is jinja_filters.FILTERS.get(name)

    @optimizeconst
    def visit_Filter(self, node: nodes.Filter, frame: Frame) -> None:
        if node.name == _safe.CONCAT_FILTER and self._inline_concat(node, frame):
            return
        if node.name == getattr(_safe, "COMPARE_FILTER", None) and self._inline_compare(node, frame):
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
        if id(node) not in self._eager_selections:
            self.write(f"{lazy}(")
            self.visit(node.node, frame)
            self.write(")")
            return True
        # Taken whole: nothing to select from (`tools|selectattr(...)|list` without tools) is
        # an empty list after the filter's check point, inline (as `eager` does it).
        value = self.temporary_identifier()
        self.write(f"([] if ((({value} := ")
        self.visit(node.node, frame)
        self.write(f") is None or type({value}) is list and not {value}) and not _ps_b.due) else {eager}({value}))")
        return True

    def _mark_eager(self, node: nodes.Node) -> None:
        """``node`` is taken whole at once (a ``for`` loop's sequence, ``|list``): so is a
        chain of select/reject filters there (a list instead of a generator)."""
        while isinstance(node, nodes.Filter) and node.name in _SELECTIONS:
            self._eager_selections.add(id(node))
            node = node.node
