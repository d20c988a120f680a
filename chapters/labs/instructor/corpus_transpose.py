"""Correct solutions of the transpose track's tasks, written differently from the reference
(see corpus.py)."""
from mistakes import Mistake  # noqa: F401

CORRECT = {}
