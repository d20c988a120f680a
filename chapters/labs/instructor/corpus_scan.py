"""Correct solutions of the scan track's tasks, written differently from the reference
(see corpus.py)."""
from mistakes import Mistake  # noqa: F401

CORRECT = {}
