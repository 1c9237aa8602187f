"""Untrusted input, handled in one place: the Jinja sandbox every template renders
in, and the YAML loader every file is read with."""
