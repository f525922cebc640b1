"""The rules: every module here is imported by :func:`ptxstatic.rules.registry.all_rules`."""
