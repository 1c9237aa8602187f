"""A faster code generator for chat templates: Jinja's own, with cheaper hot paths.

Jinja compiles a template to Python source. Chat templates spend most of their
time in a few places of that code: the sandbox's ``getattr``/``getitem`` for
every ``message['role']`` and ``message.content``, the sandbox's ``call`` for
every ``content.strip()``, its budget checks on every ``+`` and printed value,
``LoopContext`` objects for ``loop.index0`` and ``loop.last``, and the
creation of a ``Context`` per render. This package subclasses Jinja's
``CodeGenerator`` and changes only those:

* ``x.attr`` and ``x[key]`` on a plain ``dict``, ``list``, ``tuple`` or ``str``
  read the value directly when it is there (a dict key that is not a dict
  method name; an index in range; a str key known only when it runs, that the
  dict holds), and so do comparisons of such a value with a constant and
  ``is defined`` tests of it; anything else goes to the
  sandbox's own ``getattr``/``getitem``, unchanged.
* Calling a bound method of a ``str`` or ``dict`` that the sandbox already
  handed out (``strip``, ``split``, ``get``, ``items``, ...; never
  ``str.format``) calls it directly (inline when its arguments are
  constants), a str method that can amplify after the sandbox's size check,
  and a macro of the template with all its arguments calls its function;
  any other call goes to the sandbox's ``call``, unchanged.
* ``for`` loops run over the sequence itself (counted at once; a loop filter,
  ``{% for x in xs if test %}``, applied to it as Jinja's generator does, unless
  the body can ``{% break %}``; ``value|items`` of a dict taken as a list with the
  filter's checks and counts made at once), and a loop whose body reads only
  ``loop.index0``, ``index``, ``first``, ``last``, ``length``, ``revindex``,
  ``revindex0``, ``previtem``, ``nextitem``, ``depth`` or ``depth0`` (not
  recursive) with ``enumerate``,
  computing those values inline.
* **Budgets are checked inline** (the contract of
  ``jinja_env.prepare_tree``): ``+`` and ``~`` of strings (a chain of ``+``
  joined at once, in Jinja's order of evaluation), printed strings, ``trim``
  and case filters, and the filters that only read their value count what
  they build in a local number charged to the render's budget at a
  threshold; every loop iteration and macro call is a deadline check point;
  anything unusual goes through the sandbox's own functions.
* **Plain messages**: a second compilation, for conversations whose messages are
  all ``{"role": str, "content": str}`` (``HFChat.apply_messages`` checks them
  anyway), reads ``message.role`` and ``message['content']`` in a ``{% for message
  in messages %}`` loop (or over ``loop_messages``, a slice of them) directly, as
  the strings they are (where nothing can make the name mean anything else:
  ``analysis._plain_message_reads``). It has the same lines of code as the general
  one, so errors name the same template lines.
* A render builds its ``Context`` directly (same attributes as Jinja's), and
  reuses those of finished renders; root-level macros are functions made once per
  render instance (``hoist.py``), not once per render.

Everything else — scoping, macros, filters, tests, Undefined, whitespace — is
Jinja's code generator itself. The result is checked against Jinja's own
rendering on every corpus template and golden conversation (the ``jinja``
engine of the tests), and the budgets with the sandbox's payloads
(``tests/test_fast_budgets.py``). The environment (with its sandbox) is the one
:mod:`prompt_style.safe.jinja_env` builds for the profile.

Where the parts live (each module imports only those listed before it):

- ``names.py``: each type's attributes and safe methods, the filters and tests
  with fast versions, what Jinja's ``Context`` and ``Macro`` hold;
- ``analysis.py``: what is read off a parsed template before code is written;
- ``runtime.py``: :func:`~prompt_style_hf.fastpath.runtime.helpers`, the
  functions the generated code calls (one set per environment);
- ``codegen_budget.py``, ``codegen_root.py``, ``codegen_access.py``,
  ``codegen_loops.py``: the code generator's parts (inline budgets; the root
  function and filters; attributes, items, tests and calls; loops), mixed
  into :class:`~prompt_style_hf.fastpath.codegen.FastCodeGenerator` in
  ``codegen.py``;
- ``hoist.py``: the generated module rearranged so that root-level macros are
  defined once per render instance (a pool of them), not at every render;
- ``template.py``: :class:`FastTemplate` and :func:`compile_fast`.
"""

from __future__ import annotations

from .names import FAST_LOOP_ATTRIBUTES
from .template import FastTemplate, compile_fast

__all__ = ["FastTemplate", "compile_fast", "FAST_LOOP_ATTRIBUTES"]
