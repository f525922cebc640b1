"""What the tests share, imported as ``support.<module>`` (``tests/`` is on ``sys.path``): ``paths`` (where the
test data is, skips for missing tools), ``kernels`` (hand-written kernels with known block counts), ``check``
(``ptxstatic check`` as a process, the check project), ``hook`` (builds under the nvcc hook, the compiler-diagnostic
pattern editors read), ``lsp`` (a language-server client), ``report`` (the HTML report's ten-kernel file),
``rules`` (the compiled rule kernels and their ``expect:`` marks), ``mutants`` (grammar-aware PTX mutants),
``agreement`` (ptxas against validation over those mutants), ``unreadable`` (files a child process cannot read,
also as root) and ``tools`` (a ptxas that hangs, whether a process has ended)."""
