"""The language server (``ptxstatic lsp``): editor diagnostics, hovers and quick fixes over ``lint.document``
and ``predict``."""
