#!/usr/bin/env python3
"""Chapter 14 on one GPU: --verify-only with CUDA_VISIBLE_DEVICES=0.

usage: CHAPTER_EXE=PROGRAM one_gpu.py   (chapters/meson.build sets it)

With a single GPU visible the program's default (every visible GPU) is K = 1:
the sharded sum has one shard, the all-reduce has no neighbour, and both parts
must still run and verify. The exit code is the program's: 0, 1, or 77 without
a GPU (an error with REQUIRE_GPU=1).
"""
import os
import subprocess
import sys


def main():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="0", NCCL_NVLS_ENABLE="0")
    p = subprocess.run([os.environ["CHAPTER_EXE"], "--verify-only"], env=env, timeout=600)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
