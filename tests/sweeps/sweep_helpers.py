"""Helpers shared by the sweep tests."""
from pathlib import Path


def write_spec(path: Path, workloads, *, seeds=2, params='{ strict = [false, true] }', name="t") -> Path:
    wl = ", ".join(f'"{w}"' for w in workloads)
    path.write_text(f'name = "{name}"\nseeds = {seeds}\nworkloads = [{wl}]\n'
                    f'clusters = ["builtin:demo"]\n\n[[policies]]\nid = "fifo"\nparams = {params}\n')
    return path
