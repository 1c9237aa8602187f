"""The package that plugin files from plugin folders are imported into.

``shout.py`` in a folder named by ``PROMPT_STYLE_PLUGINS_DIR`` is the module
``prompt_style._dir_plugins.shout``: ``__path__`` is those folders, so the
standard import machinery finds the file again in any process with the same
environment (a worker unpickling a renderer that holds the plugin's objects).
``prompt_style._plugins_dir`` loads the files and adds the folders a manager is
given in Python. Nothing else lives here: every attribute may be a plugin's name.
"""

import os as _os

__path__ = [
    _os.path.abspath(_item)
    for _item in _os.environ.get("PROMPT_STYLE_PLUGINS_DIR", "").split(_os.pathsep)
    if _item.strip()
]

del _os
