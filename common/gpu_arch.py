#!/usr/bin/env python3
"""Which GPU architectures to build for: meson.build asks this script once, at setup.

    gpu_arch.py CHOICE [--emulate none|t4|sm86] [--nvcc NVCC] [--gpu-code-file FILE] [--gpus CC,...]

CHOICE (meson's -Dgpu_arch):
  auto      the compute capabilities of the visible GPUs (nvidia-smi
            --query-gpu=compute_cap); with no GPU visible, the portable set
  portable  machine code for sm_75, sm_80, sm_90, sm_100 and sm_120, each only
            where this nvcc builds it (nvcc --list-gpu-code), and PTX for the newest
            of them, which the driver compiles at load time on a GPU newer than all;
            with both sm_100 and sm_120, PTX for compute_100, from which sm_120's
            machine code is compiled too (a device pass less per file, the same code)
  80,90     exactly these (an error names the ones this nvcc cannot build)
--emulate t4 or sm86 overrides CHOICE: PTX for compute_75 (or compute_86) only, so
the driver compiles it for the GPU in the machine and every __CUDA_ARCH__ branch
takes that GPU's path (common/device.cu caps the limits the programs see).

It prints four lines for meson.build:
  sass=75,80,90        machine code (may be empty); 120:100 is sm_120's from compute_100
  ptx=90               the one PTX target (may be empty)
  why=<one sentence>   what was chosen and why; meson prints it
  portable=yes|no      yes for the portable set, built where no GPU is to run it: meson
                       then leaves out -lineinfo (source lines in Nsight Compute and
                       compute-sanitizer) and compiles the chapters marked 'unity' in
                       chapters/meson.build as one file each
and exits 1 with a one-line message on stderr when no build can work.
--gpu-code-file and --gpus replace asking nvcc and nvidia-smi (the host test
feeds captured `nvcc --list-gpu-code` outputs of several CUDA versions).
"""
import argparse
import os
import re
import subprocess
import sys

PORTABLE = (75, 80, 90, 100, 120)
# meson's -Demulate value -> (the compute capability built as PTX, the GPU common/device.cu emulates)
EMULATED = {"t4": (75, "Tesla T4"), "sm86": (86, "GeForce RTX 3090")}


class ArchError(Exception):
    pass


def parse_gpu_code(text):
    """The architectures in `nvcc --list-gpu-code` output ("sm_90" lines), as sorted ints."""
    return sorted({int(m) for m in re.findall(r"\bsm_(\d+)\b", text)})


def cc_to_arch(cc):
    """"9.0" -> 90, "12.1" -> 121, "90" -> 90."""
    cc = cc.strip()
    m = re.fullmatch(r"(\d+)\.(\d)", cc)
    if m:
        return int(m.group(1)) * 10 + int(m.group(2))
    if re.fullmatch(r"\d{2,3}", cc):
        return int(cc)
    raise ArchError(f"'{cc}' is not a compute capability (write it as 90 or 9.0)")


def names(archs, prefix="sm_"):
    return ", ".join(f"{prefix}{a}" for a in archs)


def span(supported):
    return f"sm_{supported[0]} to sm_{supported[-1]}" if supported else "nothing"


def ask_nvcc(nvcc):
    """The output of `nvcc --list-gpu-code`, or None where nvcc cannot say."""
    try:
        p = subprocess.run([nvcc, "--list-gpu-code"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout if p.returncode == 0 and "sm_" in p.stdout else None


def visible_gpus():
    """(compute capabilities of the visible GPUs, how we know) from nvidia-smi."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return [], "CUDA_VISIBLE_DEVICES hides every GPU"
    cmd = ["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"]
    tries = [cmd + ["--id=" + visible.strip()], cmd] if visible else [cmd]
    for c in tries:
        try:
            p = subprocess.run(c, capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            return [], "no nvidia-smi, so no NVIDIA driver"
        except (OSError, subprocess.TimeoutExpired) as e:
            return [], f"nvidia-smi failed ({e})"
        if p.returncode == 0:
            break
    else:
        why = (p.stderr.strip() or p.stdout.strip()).splitlines()
        return [], "nvidia-smi sees no usable GPU" + (f" ({why[0]})" if why else "")
    gpus = []
    for line in p.stdout.strip().splitlines():
        name, _, cc = line.rpartition(",")
        try:
            gpus.append((name.strip(), cc_to_arch(cc)))
        except ArchError:  # an old driver's nvidia-smi without compute_cap
            return [], f"nvidia-smi does not report compute capabilities ('{line.strip()}')"
    if not gpus:
        return [], "nvidia-smi lists no GPU"
    return gpus, "nvidia-smi"


def choose(choice, supported, gpus, gpu_probe, emulate="none", version=""):
    """(sass list, ptx arch or None, one sentence). supported: what nvcc builds (sorted);
    gpus: [(name, arch)] visible; gpu_probe: how that list was found, or why it is empty."""
    nvcc = f"nvcc {version}".strip()
    if emulate != "none":
        cc, gpu = EMULATED[emulate]
        if cc not in supported:
            raise ArchError(f"it needs compute_{cc}, which {nvcc} does not build ({span(supported)})")
        ignored = f" (gpu_arch={choice} does not apply)" if choice != "auto" else ""
        return [], cc, (f"emulate={emulate}: PTX for compute_{cc} only, which the driver compiles for the GPU in "
                        f"the machine at load time; the programs see a {gpu}'s limits{ignored}")
    if choice == "auto" and gpus:
        local = sorted({a for _, a in gpus})
        models = "; ".join(sorted({f"{n} (sm_{a})" for n, a in gpus}))
        old = [a for a in local if a < supported[0]]
        if old:
            raise ArchError(f"the visible GPU {models} is older than anything {nvcc} builds ({span(supported)}): "
                            f"use a CUDA Toolkit that supports it, or -Dgpu_arch=portable for other machines")
        sass = [a for a in local if a in supported]
        newer = [a for a in local if a not in supported]
        ptx = None
        why = f"gpu_arch=auto: {names(sass) or 'no machine code'} for the visible GPU(s), {models} ({gpu_probe})"
        if newer:  # a GPU this nvcc does not know: PTX of the newest it knows, compiled by the driver
            ptx = max(a for a in supported if a < min(newer))
            why += f"; {names(newer)} is newer than {nvcc} knows, so PTX for compute_{ptx} that the driver compiles"
        return sass, ptx, why
    if choice in ("auto", "portable"):
        sass = [a for a in PORTABLE if a in supported]
        if not sass:
            raise ArchError(f"{nvcc} builds none of the portable set ({names(PORTABLE)})")
        left_out = [a for a in PORTABLE if a not in supported]
        lead = f"gpu_arch=auto: no GPU visible ({gpu_probe}), so the portable set" if choice == "auto" \
            else "gpu_arch=portable"
        # sm_120's machine code from compute_100's PTX, which is also the PTX built: one device pass
        # less for every file. No source here takes another path for compute_120 than for
        # compute_100 (CUB's newest tuning is sm_100's): sm_120's code is the same.
        ptx = 100 if 100 in sass and 120 in sass else sass[-1]
        why = f"{lead}: {names(sass)} and PTX for compute_{ptx}"
        if ptx != sass[-1]:
            why += f" ({names([a for a in sass if a > ptx])} from that PTX)"
        if left_out:
            why += f" ({names(left_out)} left out: {nvcc} builds {span(supported)})"
        return sass, ptx, why
    wanted = [cc_to_arch(a) for a in choice.split(",") if a.strip()]
    if not wanted:
        raise ArchError("gpu_arch is empty: use auto, portable or a list such as 90 or 80,90")
    missing = [a for a in wanted if a not in supported]
    if missing:
        raise ArchError(f"{nvcc} cannot build {names(missing)} (it builds {span(supported)})")
    return wanted, None, f"gpu_arch={choice}: {names(wanted)} as asked, no PTX"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("choice")
    ap.add_argument("--emulate", default="none", choices=["none"] + sorted(EMULATED))
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--nvcc-version", default="", help="for the message, e.g. 13.0")
    ap.add_argument("--gpu-code-file", help="captured `nvcc --list-gpu-code` output instead of asking nvcc")
    ap.add_argument("--gpus", help="comma list of visible GPUs' compute capabilities instead of asking "
                                   "nvidia-smi ('' for none)")
    args = ap.parse_args(argv)
    try:
        if args.gpu_code_file:
            with open(args.gpu_code_file) as f:
                text = f.read()
        else:
            text = ask_nvcc(args.nvcc)
        if text is None:
            raise ArchError(f"could not run {args.nvcc} --list-gpu-code (CUDA 11 and later have it)")
        supported = parse_gpu_code(text)
        if not supported:
            raise ArchError(f"no sm_ architecture in the output of {args.nvcc} --list-gpu-code")
        if args.gpus is not None:
            gpus = [("GPU", cc_to_arch(c)) for c in args.gpus.split(",") if c.strip()]
            probe = "--gpus" if gpus else "--gpus is empty"
        elif args.choice == "auto" and args.emulate == "none":
            gpus, probe = visible_gpus()
        else:
            gpus, probe = [], ""
        sass, ptx, why = choose(args.choice.strip(), supported, gpus, probe, args.emulate, args.nvcc_version)
    except (ArchError, OSError) as e:
        option = f"emulate={args.emulate}" if args.emulate != "none" else f"gpu_arch={args.choice}"
        print(f"{option}: {e}", file=sys.stderr)
        return 1
    # An architecture newer than the PTX target (the portable set's sm_120) is compiled from that
    # PTX: written 120:100 (machine code for sm_120 from compute_100).
    print("sass=" + ",".join(f"{a}:{ptx}" if ptx and a > ptx else str(a) for a in sass))
    print("ptx=" + (str(ptx) if ptx else ""))
    print("why=" + why)
    # The portable set is built where no GPU is, to run elsewhere: no edit-and-rerun, no profiler.
    portable = args.emulate == "none" and (args.choice.strip() == "portable" or (args.choice.strip() == "auto"
                                                                                 and not gpus))
    print("portable=" + ("yes" if portable else "no"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
