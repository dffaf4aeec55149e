# expect: forbidden_api
# task: softmax_fp32
# why: looks for files beside the project (the folder above it, found from the worker's own modules) and at the top of the filesystem and reads every one it can, root-only ones included (a judge running as root reads them all), and lists the host's top-level folders (data, other projects); it raises what it found. The sandbox used to bind all of / read-only; it now shows only the system's folders and those the worker needs, and hides /etc's unreadable entries; the static check refuses the imports
# os-attack: outside-view
import os
import sys

import torch


def softmax(x):
    project = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["benchmarks"].__file__)))
    beside = os.path.dirname(project)
    read = []
    names = []
    for place in (beside, "/"):
        try:
            here = sorted(os.listdir(place))
        except OSError as exc:
            here = [f"(cannot list: {exc.strerror})"]
        names += here
        for name in here:
            path = os.path.join(place, name)
            if name.startswith("kf-planted-outside") and os.path.isfile(path):
                with open(path) as f:
                    read.append(f.read(200))
    shadow = []
    for path in ("/etc/shadow", "/etc/gshadow"):
        try:
            with open(path) as f:
                shadow.append(f"{path}: {len(f.read())} bytes")
        except OSError as exc:
            shadow.append(f"{path}: {exc.strerror}")
    raise RuntimeError(
        f"beside the project ({beside}): {names}; read {read}; top level {sorted(os.listdir('/'))}; "
        f"{shadow}; {torch.float32}"
    )
