"""The lint pipeline: from a file (or an editor's unsaved text) to findings, and from many paths to one run.

:func:`.document.analyse_document` compiles a ``.cu`` with the flags its build records
(:mod:`.compile_db`) or the configuration's, parses the PTX and runs the rules, with a cancellable compile and
a content-keyed result cache (:mod:`.cache`); :func:`.run.lint_paths` does it for every file under the given
paths (:mod:`.sources`), in parallel. ``ptxstatic check``, the language server and the HTML report share it.
"""
