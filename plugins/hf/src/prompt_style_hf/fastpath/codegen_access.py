"""The code generator's attribute and item access, tests, calls and macros, read or called directly where it can."""

from __future__ import annotations

from typing import Any

from jinja2 import nodes
from jinja2 import tests as jinja_tests
from jinja2.compiler import CodeGenerator, Frame, find_undeclared, optimizeconst
from jinja2.idtracking import VAR_LOAD_PARAMETER
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..environment import GenerationBlocks
from .analysis import PLAIN_MESSAGE_KEYS
from .names import (
    _DICT_ATTRIBUTES,
    _INLINE_STR_METHODS,
    _INLINE_TESTS,
    _MACRO_FIELDS_OK,
    _SAFE_DICT_METHODS,
    _SEQUENCE_ATTRIBUTES,
    FAST_LOOP_ATTRIBUTES,
)


class AccessGenerator(CodeGenerator):
    """Jinja's code generator, with attributes, items, tests and calls done directly where it
    can (part of :class:`FastCodeGenerator`)."""

    # -- attribute and item access ----------------------------------------------------

    def macro_body(self, node: Any, frame: Frame) -> Any:
        # A macro defined at the root of a template whose root makes its own context:
        # its definition's lines are recorded, for the generated module to define it once
        # per render instance instead of once per render (see hoist.py).
        hoist = self._owned_context and isinstance(node, nodes.Macro) and frame.rootlevel
        if hoist:
            self._hoist_next_def = True
        result = super().macro_body(node, frame)
        if hoist:
            self._hoisted_macros.append((self._hoist_start, self.code_lineno))
        return result

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
        code = self._plain_message(subject, frame, name)
        if code is not None:
            self.write(f"{code}[{key}]")  # a dict with the key
            return

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

    def _plain_message(self, node: nodes.Node, frame: Frame, key: str | None = None) -> str | None:
        """The code of ``node`` when it is a plain message (``{"role": str, "content":
        str}``, see ``analysis._plain_message_reads``) and ``key``, if given, one of its
        keys; else ``None``."""
        if id(node) not in self._plain_messages or (key is not None and key not in PLAIN_MESSAGE_KEYS):
            return None
        return self._simple_code(node, frame)

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
        # map[key] with a key known only when it runs: a str key a dict holds, read inline;
        # anything else (a missing key may name a dict method) through fast_getitem.
        value, key = self.temporary_identifier(), self.temporary_identifier()
        self.write(f"({value}[{key}] if (type({value} := ")
        self.visit(node.node, frame)
        self.write(f") is dict) & (type({key} := ")
        self.visit(node.arg, frame)
        self.write(f") is str) and {key} in {value} else fast_getitem({value}, {key}))")

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
        code = self._plain_message(node.expr.node, frame, key)
        if code is not None:
            self.write(f"({code}[{key!r}] {op} {constant})")  # a dict with the key
            return
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
        if key is None and self._dynamic_defined_test(node, frame):
            return
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

    def _plain_defined_test(self, node: nodes.Test) -> bool:
        """Whether ``node`` is Jinja's own ``defined`` or ``undefined`` test, without arguments."""
        return (
            node.name in ("defined", "undefined")
            and not (node.args or node.kwargs or node.dyn_args or node.dyn_kwargs)
            and self.environment.tests.get(node.name) is jinja_tests.TESTS[node.name]
        )

    def _dynamic_defined_test(self, node: nodes.Test, frame: Frame) -> bool:
        """``map[key] is defined`` with a key known only when it runs: a str key a dict
        holds is tested inline (its value is defined unless it is an undefined value), and
        so is a str key it does not hold that names no attribute of a dict (the sandbox's
        getitem then gives an undefined value: Hermes' ``basic_type_map[json_spec.type]``
        for an ``object`` parameter); anything else as Jinja does, through fast_getitem (a
        missing key may name a dict method, which is defined)."""
        target = node.node
        if (
            not self._sandbox_access
            or not self._plain_defined_test(node)
            or not isinstance(target, nodes.Getitem)
            or isinstance(target.arg, (nodes.Const, nodes.Slice))
        ):
            return False
        value, key = self.temporary_identifier(), self.temporary_identifier()
        negate = "" if node.name == "defined" else "not "
        absent = "False" if node.name == "defined" else "True"
        test = f"{self.tests[node.name]}(fast_getitem({value}, {key}))"
        self.write(
            f"(({negate}(not isinstance({value}[{key}], Undefined)) if {key} in {value}"
            f" else {absent} if {key} not in _ps_dict_attributes else {test}) if (type({value} := "
        )
        self.visit(target.node, frame)
        self.write(f") is dict) & (type({key} := ")
        self.visit(target.arg, frame)
        self.write(f") is str) else {test})")
        return True

    def _defined_name_test(self, node: nodes.Test, frame: Frame) -> str | None:
        """The variable of ``name is defined`` / ``name is undefined`` when it may be
        tested inline (a name Jinja reads as ``undefined(...) if ref is missing else ref``)."""
        target = node.node
        if (
            not isinstance(target, nodes.Name)
            or target.ctx != "load"
            or target.name == "loop"
            or not self._plain_defined_test(node)
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
        if not self._sandbox_access or not self._plain_defined_test(node):
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
        if node.ctx == "load" and (id(node) in self._truth_nodes or id(node) in self._printed_names):
            ref = frame.symbols.ref(node.name)
            load = frame.symbols.find_load(ref)
            if not (load is not None and load[0] == VAR_LOAD_PARAMETER and not self.parameter_is_undeclared(ref)):
                # {% if tools %}: a name that is not set is false (only its truth is read);
                # {{ bos_token }}: it prints as nothing (see _output_child_pre).
                absent = "False" if id(node) in self._truth_nodes else "''"
                self.write(f"({absent} if {ref} is missing else {ref})")
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
        self._uncounted_body = True
        try:
            self.macro_body(node, frame)
        finally:
            self._uncounted_body = False
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
        if node.node.attr in ("strip", "lstrip", "rstrip") and any(
            isinstance(argument.value, str) and len(argument.value) > 32 for argument in node.args
        ):
            return None  # stripping many characters costs their number per character: sized by the sandbox
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
