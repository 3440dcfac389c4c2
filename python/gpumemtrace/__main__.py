"""`python -m gpumemtrace ...`: the gpumemtrace CLI."""

from gpumemtrace._cli import main

main()
