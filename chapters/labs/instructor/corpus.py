"""Correct solutions written differently from the reference: the grader must pass every
one (issue 47: a grader that fails a correct solution costs more trust than a missed
cheat). Instructor only, like mistakes.py: `new` is a solution.

Each entry is a Mistake whose `expect` is PASS: it replaces `old`, the reference's
whole region body as the repository holds it (mistakes.region_body), by `new` inside
the task's region, the way a student who thought differently would write the task
(another block size or loop shape, a guard the reference does not need, a butterfly
instead of a shift, another tile). The repository's tests apply each one to a
reference copy and require that the static pass finds nothing in it (test_labs.py);
the GPU self-test grades them and expects PASS (selftest.py). The entries of each
track are in corpus_<track>.py.
"""
from corpus_dot_top2 import CORRECT as DOT_TOP2
from corpus_gemm import CORRECT as GEMM
from corpus_histogram import CORRECT as HISTOGRAM
from corpus_reduce import CORRECT as REDUCE
from corpus_scan import CORRECT as SCAN
from corpus_transpose import CORRECT as TRANSPOSE

CORRECT = {**REDUCE, **HISTOGRAM, **TRANSPOSE, **DOT_TOP2, **SCAN, **GEMM}
