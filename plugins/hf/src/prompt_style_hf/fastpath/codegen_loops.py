"""The code generator's ``for`` loops: over the sequence itself, counted at once, ``loop.*`` computed inline."""

from __future__ import annotations

from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame, find_undeclared
from jinja2.idtracking import VAR_LOAD_RESOLVE

from prompt_style import safe as _safe

from .analysis import _own_nodes, _simple_loop_use


class LoopGenerator(CodeGenerator):
    """Jinja's code generator, with loops over the sequence itself (part of :class:`FastCodeGenerator`)."""

    # -- loops ------------------------------------------------------------------------

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        extended = "loop" in find_undeclared(node.iter_child_nodes(only=("body",)), ("loop",))
        breaks = any(isinstance(n, nodes.Break) for n in _own_nodes(node.body))
        if (
            node.recursive
            # A loop filter is applied to the counted sequence (below); with a {% break %} the
            # items would be counted as they run, which the filtered ones never do: Jinja's.
            or (node.test is not None and (breaks or not self._inline_budget))
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
        loop_filter = self._write_loop_filter(node, frame, loop_frame) if node.test is not None else None
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
        hoisted: dict[str, str | None] = {}
        stores = loop_frame.symbols.stores
        for target, (action, param) in loop_frame.symbols.loads.items():
            if action == VAR_LOAD_RESOLVE and param not in stores:
                self.writeline(f"{target} = {self.get_resolve_func()}({param!r})")
                hoisted[target] = None
            elif action == VAR_LOAD_RESOLVE and self._inline_budget:
                # A name the body assigns starts each iteration as the context has it, which
                # does not change while the loop runs: read once, assigned at each iteration.
                outer = self.temporary_identifier()
                self.writeline(f"{outer} = {self.get_resolve_func()}({param!r})")
                hoisted[target] = outer
        seq, index, length = (self.temporary_identifier() for _ in range(3))
        counted = node.iter
        if (
            self._inline_budget
            and isinstance(counted, nodes.Filter)
            and counted.name == _safe.LOOP_FILTER
            and len(counted.args) == 1
            and isinstance(counted.args[0], nodes.Const)
        ):
            # The sandbox's loop filter, for a loop over a sequence: counted at once
            # (inline for a list: its length as iterations, its literal text as characters).
            cost = counted.args[0].value
            self._mark_eager(counted.node)  # taken whole: loop_items makes a list of it
            self.writeline(f"{seq} = ", node)
            if not self._write_dict_items(counted.node, frame):
                self.visit(counted.node, frame)
            if breaks:
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
                if loop_filter is not None:
                    # Counted as the sandbox counts it (every item of the sequence, which
                    # the filter reads), then filtered: loop.length and loop.last are the
                    # filtered sequence's, as in Jinja's LoopContext.
                    self.writeline(f"{seq} = list({loop_filter}({seq}))")
        else:
            cost = None
            self.writeline(f"{seq} = list(", node)
            if loop_filter is not None:
                self.write(f"{loop_filter}(")
            self.visit(node.iter, frame)
            self.write("))" if loop_filter is not None else ")")
        self._loop_body(node, loop_frame, else_frame, loop_ref, hoisted, seq, index, length, iteration_indicator, cost)

    def _write_loop_filter(self, node: nodes.For, frame: Frame, loop_frame: Frame) -> str:
        """The generator function of a loop filter (``{% for x in xs if test %}``),
        written as Jinja's visit_For writes it; its name."""
        loop_filter = self.temporary_identifier()
        test_frame = frame.inner()
        test_frame.symbols.analyze_node(node, for_branch="test")
        self.writeline(f"{self.func(loop_filter)}(fiter):", node.test)
        self.indent()
        self.enter_frame(test_frame)
        self.writeline("for ")
        self.visit(node.target, loop_frame)
        self.write(" in fiter:")
        self.indent()
        self.writeline("if ", node.test)
        self.visit(node.test, test_frame)
        self.write(":")
        self.indent()
        self.writeline("yield ")
        self.visit(node.target, loop_frame)
        self.outdent(3)
        self.leave_frame(test_frame, with_python_scope=True)
        return loop_filter

    def _write_dict_items(self, node: nodes.Node, frame: Frame) -> bool:
        """``value|items`` as the sequence of a loop: for a dict, its items as a list with
        the guard's checks and counts made at once (runtime ``dict_items``); anything
        else through the filter. ``False`` when ``node`` is not such a filter."""
        if not (
            isinstance(node, nodes.Filter)
            and node.name == "items"
            and node.node is not None
            and not (node.args or node.kwargs or node.dyn_args or node.dyn_kwargs)
            and self._jinja_filter("items")
        ):
            return False
        value = self.temporary_identifier()
        self.write(f"(_ps_dict_items({value}) if type({value} := ")
        self.visit(node.node, frame)
        self.write(f") is dict else {self.filters['items']}({value}))")
        return True

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
        hoisted: dict[str, str | None],
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
