"""The rules, one module each: :func:`ptxstatic.rules.catalog.all_rules` imports every module here."""
