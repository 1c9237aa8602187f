"""What the code generator reads off a parsed template before it writes code (loops, tests, chains of ``+``)."""

from __future__ import annotations

from typing import Any

from jinja2 import nodes
from jinja2.utils import _PassArg

from prompt_style import safe as _safe

from .names import FAST_LOOP_ATTRIBUTES


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
            and counted.name == _safe.LOOP_FILTER
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


PLAIN_MESSAGE_KEYS = frozenset({"role", "content"})
"""The keys of a plain message: a ``dict`` of exactly these, both strings (see
:func:`_plain_message_reads`)."""


def _plain_message_reads(tree: nodes.Template) -> tuple[set[int], frozenset[str]]:
    """The ids of the names that read a message in the body of a ``{% for message in
    messages %}`` loop, where a render whose messages are all plain (``{"role": str,
    "content": str}``, nothing else) may read ``message.role`` and
    ``message['content']`` without asking what the message is; and the names other
    than ``messages`` that such loops go over (``loop_messages``), which a render
    through these reads must not be given as variables.

    Only where nothing can make the names mean anything else:

    - the lists: ``messages``, and a name the template assigns nothing but such a list
      or a slice of one (``{% set loop_messages = messages[1:] %}``, ``{% set messages
      = messages[1:] %}``, as Mistral's and Llama 3's templates do); never a loop
      target, a macro argument or a ``with`` name; nothing imported;
    - the loop: over one of those lists, not recursive, its target one name that its
      body never assigns; names in the loop's ``else`` (which runs without a message)
      and in macros, call blocks and blocks (which may run after the loop, or read the
      name from elsewhere) are left out."""
    if tree.find(nodes.Import) is not None or tree.find(nodes.FromImport) is not None:
        return set(), frozenset()
    values = {id(a.target): a.node for a in tree.find_all(nodes.Assign) if isinstance(a.target, nodes.Name)}
    stores: dict[str, list[nodes.Name]] = {}
    for name in tree.find_all(nodes.Name):
        if name.ctx != "load":
            stores.setdefault(name.name, []).append(name)
    lists = {"messages", *stores}

    def listed(value: Any) -> bool:
        if isinstance(value, nodes.Getitem) and isinstance(value.arg, nodes.Slice):
            value = value.node
        return isinstance(value, nodes.Name) and value.ctx == "load" and value.name in lists

    changed = True
    while changed:  # (each pass can only drop names)
        changed = False
        for name in list(lists):
            if any(id(store) not in values or not listed(values[id(store)]) for store in stores.get(name, ())):
                lists.discard(name)
                changed = True
    if "messages" not in lists:
        return set(), frozenset()
    found: set[int] = set()
    for loop in tree.find_all(nodes.For):
        counted = loop.iter
        if isinstance(counted, nodes.Filter) and counted.name == _safe.LOOP_FILTER:
            counted = counted.node  # the sandbox's counting filter (jinja_env.prepare_tree)
        if (
            loop.recursive
            or not isinstance(loop.target, nodes.Name)
            or not (isinstance(counted, nodes.Name) and counted.name in lists and counted.ctx == "load")
        ):
            continue
        name = loop.target.name
        body = nodes.Scope(loop.body)  # (a node to search: the body only, not the else)
        if any(n.name == name and n.ctx != "load" for n in body.find_all(nodes.Name)):
            continue
        stack: list[nodes.Node] = list(loop.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (nodes.Macro, nodes.CallBlock, nodes.Block)):
                continue
            if isinstance(node, nodes.Name) and node.name == name:
                found.add(id(node))
            stack.extend(node.iter_child_nodes())
    return found, frozenset(lists - {"messages"})
