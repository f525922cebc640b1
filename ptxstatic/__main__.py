"""``python -m ptxstatic``."""

from ptxstatic.cli.main import main

main()
