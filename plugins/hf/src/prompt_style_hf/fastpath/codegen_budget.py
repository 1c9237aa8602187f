"""The code generator's budgets checked inline: ``+``, ``~``, ``%`` and printed values counted in a local number."""

from __future__ import annotations

import re
from typing import Any

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.runtime import Undefined

from prompt_style import safe as _safe

from .analysis import PLAIN_MESSAGE_KEYS, _const_str, _plus_chain

_RESOLVED_NAME = re.compile(r"l_\d+_\w+|t_\d+")
_SMALL_DIVISOR = 1 << 64  # `%` by a smaller int is linear in the dividend
_RESOLVED_KEY = re.compile(r"'[A-Za-z_][A-Za-z_0-9]*'")


class InlineBudgetGenerator(CodeGenerator):
    """Jinja's code generator, with budgets checked inline (part of :class:`FastCodeGenerator`)."""

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
        # A macro's (or caller's) function counts a macro call, as the sandbox's call
        # counts one (a {% generation %} body is called by the extension, uncounted).
        counted = name == "macro" and not self._uncounted_body
        if self._inline_budget and name != "root":
            self._def_pending = "call" if counted else "tick"
        elif counted:
            self._def_pending = "budget"  # no local budget: the render's, looked up
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
        if self._hoist_next_def and x.startswith("def macro("):
            self._hoist_next_def = False
            self._hoist_start = self.code_lineno  # the line just written (see macro_body)
        if self._def_pending and x.startswith(("def ", "async def ")):
            counted = self._def_pending == "call"
            if self._def_pending == "budget":
                self._def_pending = False
                self.indent()
                super().writeline("_ps_budget().call()")
                self.outdent()
                return
            self._def_pending = False
            self.indent()
            super().writeline("nonlocal _ps_w")
            if counted:
                super().writeline("_ps_b.calls += 1")
                super().writeline("if _ps_b.calls > _ps_b.call_limit: _ps_b.call()")
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
        if isinstance(node, nodes.Name) and node.ctx == "load" and self.environment.undefined is Undefined:
            # {{ bos_token }} where nothing sets it prints Jinja's Undefined: nothing, and no
            # charge but the pending count (print_value's). Written as '', without the
            # Undefined made and taken through the sandbox's print (see visit_Name).
            self._printed_names.add(id(node))
        self.write(f"({value} if {self._str_test_head(node)}{value} := ")

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
            f"{self._str_test_tail(node)} and (_ps_w := _ps_w + len({value})) < _ps_room"
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
                checked = node.right
                self.write(f"({constant!r} + {other} if {self._str_test_head(checked)}{other} := ")
                self.visit(node.right, frame)
                operands = f"{constant!r}, {other}"
            else:
                constant, checked = _const_str(node.right), node.left
                self.write(f"({other} + {constant!r} if {self._str_test_head(checked)}{other} := ")
                self.visit(node.left, frame)
                operands = f"{other}, {constant!r}"
            self.write(
                f"{self._str_test_tail(checked)} and (_ps_w := _ps_w + len({other}) + {len(constant)}) < _ps_room"
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
        joined = _joined(names, constants)

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
            self.write(f" if {self._str_test_head(operands[position])}{names[position]} := ")
            self.visit(operands[position], frame)
            self.write(f"{self._str_test_tail(operands[position])} else ")
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
        if type(divisor) is int and not -_SMALL_DIVISOR < divisor < _SMALL_DIVISOR:
            divisor = None  # a divisor this large costs a long division: the sandbox sizes it
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
        # Two ints and a divisor below 2**64 (linear in the dividend): anything else, the
        # sandbox's call_binop (which sizes a long division).
        bound = _SMALL_DIVISOR
        self.write(f") is int) and {-bound} < {right} < {bound} else _ps_binop('%', {left}, {right}))")

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

    def _known_str(self, node: nodes.Node) -> bool:
        """Whether ``node`` is a str whatever the data: a plain message's ``role`` or
        ``content`` in a template compiled for plain messages (see
        ``analysis._plain_message_reads``)."""
        if isinstance(node, nodes.Getattr):
            key = node.attr
        elif isinstance(node, nodes.Getitem) and type(node.arg) is nodes.Const:
            key = node.arg.value
        else:
            return False
        return key in PLAIN_MESSAGE_KEYS and id(node.node) in self._plain_messages

    # `type(v := value) is str`, the test of a value that must be a str (the parts around
    # the value's code); for a value known to be one, `(v := value) is not None` (true).

    def _str_test_head(self, node: nodes.Node) -> str:
        return "(" if self._known_str(node) else "type("

    def _str_test_tail(self, node: nodes.Node) -> str:
        return ") is not None" if self._known_str(node) else ") is str"

    def _inline_concat(self, node: nodes.Filter, frame: Frame) -> bool:
        """``a ~ b ~ ...`` (``ps-concat`` of a tuple) of strings, counted inline."""
        items = node.node.items if isinstance(node.node, nodes.Tuple) else None
        if not self._inline_budget or not items or node.args or node.kwargs or node.dyn_args or node.dyn_kwargs:
            return False
        constants = [_const_str(item) for item in items]
        if all(c is not None for c in constants):
            return False
        names = [repr(c) if c is not None else self.temporary_identifier() for c in constants]
        joined = _joined(names, constants)
        self.write(f"({joined} if ")
        first = True
        for name, item, constant in zip(names, items, constants):
            if constant is not None:
                continue  # a string constant: nothing to check
            self.write(f"{'' if first else ' & '}({self._str_test_head(item)}{name} := ")
            first = False
            self.visit(item, frame)
            self.write(f"{self._str_test_tail(item)})")
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
            and node.name == _safe.CONCAT_FILTER
            and isinstance(node.node, nodes.Tuple)
            and bool(node.node.items)
            and not (node.args or node.kwargs or node.dyn_args or node.dyn_kwargs)
            and any(_const_str(item) is None for item in node.node.items)
        )


def _joined(names: list[str], constants: list[str | None]) -> str:
    """The code of the strings ``names`` (``constants[i]`` is the text of a constant part,
    ``None`` for a variable that holds a str) joined: one f-string of three parts or more
    (one ``BUILD_STRING``, which takes an exact str as it is: no tuple, no method call, no
    string between), ``a + b`` of two."""
    if len(names) <= 2:
        return " + ".join(names)
    return (
        "("
        + " ".join(name if constant is not None else f"f'{{{name}}}'" for name, constant in zip(names, constants))
        + ")"
    )
