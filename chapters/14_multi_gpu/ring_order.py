#!/usr/bin/env python3
"""The ring's ordering, checked on a model of launch_ring (all_reduce.cu). Needs no GPU.

usage: ring_order.py

launch_ring orders its work with events only. Per slice, task (call c, GPU g,
step s) runs on GPU g's stream after its own previous task, after GPU g-1's
step s-1 (s > 0), and, at step 0 of a later call, after GPU g+1's last step of
the call before. The model builds that graph for K = 2 to 6 GPUs and two
back-to-back calls, and checks:

1. every two tasks that touch the same chunk of the same GPU, one of them
   writing, are ordered by the graph (no race, whatever the GPUs' speeds);
2. any order of execution the graph allows leaves every GPU with the sum of all
   K inputs in every chunk (random orders, with the inputs as bit sets).

The chunk formulas are launch_ring's: reduce-scatter step s, GPU g:
recv[g][g-1-s] = send[g][c] + (s == 0 ? send : recv)[g-1][c]; all-gather step
t = s - (K-1): recv[g][g-t] = recv[g-1][g-t].
"""
import itertools
import random
import sys

CALLS = 2


def tasks_and_deps(k):
    steps = 2 * (k - 1)
    prev = lambda g: (g - 1) % k  # noqa: E731
    tasks = [(c, g, s) for c in range(CALLS) for g in range(k) for s in range(steps)]
    deps = {t: set() for t in tasks}
    for c, g, s in tasks:
        if s > 0:
            deps[(c, g, s)] |= {(c, g, s - 1), (c, prev(g), s - 1)}  # own stream; the previous GPU's step
        elif c > 0:
            deps[(c, g, s)] |= {(c - 1, g, steps - 1), (c - 1, (g + 1) % k, steps - 1)}  # own stream; entry
    return tasks, deps


def touches(k, task):
    """(reads, writes) of one task, as (buffer, gpu, chunk)."""
    _, g, s = task
    p = (g - 1) % k
    if s < k - 1:
        c = (g - 1 - s) % k
        return {("send", g, c), ("send" if s == 0 else "recv", p, c)}, {("recv", g, c)}
    c = (g - (s - (k - 1))) % k
    return {("recv", p, c)}, {("recv", g, c)}


def ancestors(deps):
    memo = {}

    def walk(t):
        if t not in memo:
            memo[t] = set()
            for d in deps[t]:
                memo[t] |= {d} | walk(d)
        return memo[t]

    for t in deps:
        walk(t)
    return memo


def unordered_conflicts(k):
    tasks, deps = tasks_and_deps(k)
    anc = ancestors(deps)
    bad = []
    for a, b in itertools.combinations(tasks, 2):
        ra, wa = touches(k, a)
        rb, wb = touches(k, b)
        if (wa & (rb | wb)) or (wb & ra):
            if a not in anc[b] and b not in anc[a]:
                bad.append((a, b))
    return bad


def random_schedule_sums(k, rng):
    """Runs the tasks in a random order the graph allows; True if every chunk ends as the full sum."""
    tasks, deps = tasks_and_deps(k)
    done, pending, recv = set(), list(tasks), {}
    send = {(g, c): 1 << g for g in range(k) for c in range(k)}  # GPU g's input: bit g
    while pending:
        t = rng.choice([t for t in pending if deps[t] <= done])
        pending.remove(t)
        done.add(t)
        _, g, s = t
        p = (g - 1) % k
        if s < k - 1:
            c = (g - 1 - s) % k
            theirs = send[(p, c)] if s == 0 else recv.get((p, c))
            recv[(g, c)] = None if theirs is None else send[(g, c)] | theirs
        else:
            c = (g - (s - (k - 1))) % k
            recv[(g, c)] = recv.get((p, c))
    return all(recv.get((g, c)) == (1 << k) - 1 for g in range(k) for c in range(k))


def main():
    rng = random.Random(14)
    failures = 0
    for k in range(2, 7):
        bad = unordered_conflicts(k)
        ok_sums = all(random_schedule_sums(k, rng) for _ in range(200))
        ok = not bad and ok_sums
        failures += not ok
        detail = f"{len(bad)} unordered conflicting pairs" + (f", e.g. {bad[0]}" if bad else "")
        print(f"{'PASS' if ok else 'FAIL'} K={k}: {detail}; 200 random schedules "
              f"{'all give the sum' if ok_sums else 'give a wrong sum'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
