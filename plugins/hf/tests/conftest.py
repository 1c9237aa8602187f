"""prompt-style-hf's tests import their shared data helpers from _hf_test_support."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
