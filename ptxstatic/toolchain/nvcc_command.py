"""A model of an nvcc command line: does it compile CUDA to PTX, from which inputs, for which architectures?

The hook never changes the command it runs; this model only decides whether to look for the PTX nvcc writes
and which file to analyse. It understands launchers in front of nvcc (``ccache nvcc ...``), nvcc's own
response files (``--options-file FILE``; ``@FILE`` is expanded too, although nvcc itself rejects it), both
``-opt value`` and ``-opt=value`` spellings, ``-x cu``, ``-arch``/``-code``/``-gencode``, ``--keep`` and
the phase options. Steps that compile no CUDA to device code pass through: ``-E``, ``-M``/``-MM``, ``-ptx``,
``-cuda``, ``--version``, ``--help``, ``--dryrun``, ``-run``, ``-dlink``, link-only steps, ``.cpp``/``.o``/
``.obj``/``.a`` inputs, and link-time-optimisation IR (``-dlto``, ``code=lto_NN``).
"""

from __future__ import annotations

import os

#: programs that run the compiler given after them
LAUNCHERS = frozenset({"ccache", "sccache", "buildcache", "distcc", "icecc"})

#: options that take a value (``-o FILE``, ``-o=FILE``, ``--output-file FILE``, ``--output-file=FILE``)
_VALUE_OPTIONS = frozenset({
    "-o", "--output-file", "-include", "--pre-include", "-l", "--library", "-D", "--define-macro", "-U",
    "--undefine-macro", "-I", "--include-path", "-isystem", "--system-include", "-L", "--library-path", "-odir",
    "--output-directory", "-ccbin", "--compiler-bindir", "-arbin", "--archiver-binary", "-cudart", "--cudart",
    "-cudadevrt", "--cudadevrt", "-ldir", "--libdevice-directory", "-target-dir", "--target-directory",
    "-opt-info", "--optimization-info", "-O", "--optimize", "-dopt", "--dopt", "-ftemplate-backtrace-limit",
    "--ftemplate-backtrace-limit", "-ftemplate-depth", "--ftemplate-depth", "-x", "--x", "-std", "--std", "-m",
    "--machine", "-Xcompiler", "--compiler-options", "-Xlinker", "--linker-options", "-Xarchive",
    "--archive-options", "-Xptxas", "--ptxas-options", "-Xnvlink", "--nvlink-options", "-Xcudafe",
    "--cudafe-options", "-Xcicc", "-Xfatbin", "--fatbin-options", "-static-global-template-stub",
    "--static-global-template-stub", "-device-entity-has-hidden-visibility",
    "--device-entity-has-hidden-visibility", "-t", "--threads", "-split-compile", "--split-compile",
    "-split-compile-extended", "--split-compile-extended", "-fdevice-time-trace", "--fdevice-time-trace",
    "-keep-dir", "--keep-dir", "-time", "--time", "-run-args", "--run-args", "-idp", "--input-drive-prefix",
    "-ddp", "--dependency-drive-prefix", "-dp", "--drive-prefix", "-MT", "--dependency-target-name", "-MF",
    "--dependency-output", "-arch", "--gpu-architecture", "-code", "--gpu-code", "-gencode", "--generate-code",
    "-rdc", "--relocatable-device-code", "-e", "--entries", "-maxrregcount", "--maxrregcount", "-ftz", "--ftz",
    "-prec-div", "--prec-div", "-prec-sqrt", "--prec-sqrt", "-fmad", "--fmad", "-default-stream",
    "--default-stream", "-diag-error", "--diag-error", "-diag-suppress", "--diag-suppress", "-diag-warn",
    "--diag-warn", "-hls", "--host-linker-script", "-brief-diag", "--brief-diagnostics", "-jtd",
    "--jump-table-density", "-device-stack-protector", "--device-stack-protector", "-frandom-seed",
    "--frandom-seed", "-sanitize", "--sanitize", "-optf", "--options-file", "-Werror", "--Werror",
})
#: value options that may also be written with the value attached: ``-DNAME``, ``-I/path``, ``-O3``
_ATTACHED = ("-D", "-U", "-I", "-L", "-l", "-O")

#: phase options after which nvcc produces no device code from CUDA sources (the hook passes them through)
_NO_DEVICE_CODE = {
    "-E": "preprocessing only", "--preprocess": "preprocessing only",
    "-M": "dependency generation only", "--generate-dependencies": "dependency generation only",
    "-MM": "dependency generation only", "--generate-nonsystem-dependencies": "dependency generation only",
    "-ptx": "PTX output (analyse it with `ptxstatic check`)", "--ptx": "PTX output (analyse it with `ptxstatic check`)",
    "-cuda": "CUDA-to-C++ translation only", "--cuda": "CUDA-to-C++ translation only",
    "-optix-ir": "OptiX IR output", "--optix-ir": "OptiX IR output", "-ltoir": "LTO IR output",
    "--ltoir": "LTO IR output", "-dlto": "link-time optimisation IR", "--dlink-time-opt": "link-time optimisation IR",
    "-fdevice-syntax-only": "syntax check only", "--fdevice-syntax-only": "syntax check only",
    "-dryrun": "dry run", "--dryrun": "dry run", "-V": "version query", "--version": "version query",
    "-h": "help", "--help": "help", "-code-ls": "architecture list", "--list-gpu-code": "architecture list",
    "-arch-ls": "architecture list", "--list-gpu-arch": "architecture list", "-run": "compile and run",
    "--run": "compile and run", "-dlink": "device link", "--device-link": "device link",
    "-clean": "clean targets", "--clean-targets": "clean targets",
}
_KEEP = frozenset({"-keep", "--keep", "-save-temps", "--save-temps"})
_CUDA_SUFFIXES = (".cu", ".cup")


class NvccCommand:
    """What the hook needs to know about one compiler command (a plain class: ``dataclasses`` costs an
    import that would delay nvcc's start)."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv  # the command exactly as received, launchers included
        self.launchers: list[str] = []  # ``ccache`` etc. in front of the compiler
        self.compiler = ""  # the compiler program (``nvcc``, ``/usr/local/cuda/bin/nvcc``)
        self.args: list[str] = []  # its arguments, response files expanded
        self.inputs: list[str] = []  # CUDA source inputs
        self.output: str | None = None  # -o
        self.virtual_archs: list[str] | None = None  # compute_NN[a|f] it makes PTX for; None if unknown
        self.keep_dir: str | None = None  # where --keep puts intermediate files (None without --keep)
        self.sass_archs: list[str] = []  # the sm_NN[a|f] nvcc assembles for with ptxas's default options
        self.pass_reason: str | None = None  # why nothing is analysed (None: analyse)

    @property
    def analysed(self) -> bool:
        return self.pass_reason is None

    @property
    def best_arch(self) -> str | None:
        """The highest virtual architecture of the command (the one the hook analyses), if known."""
        return max(self.virtual_archs, key=arch_key) if self.virtual_archs else None

    @property
    def best_target(self) -> str | None:
        """The ``.target`` of the PTX nvcc writes for :attr:`best_arch` (``compute_90a``: ``sm_90a``)."""
        best = self.best_arch
        return "sm_" + best.split("_", 1)[1] if best is not None else None


def split_arch(name: str) -> tuple[str, int, str] | None:
    """``sm_90a`` as ``("sm", 90, "a")``: what comes before the last ``_``, the number after it and at most one
    lowercase letter; None for a name of another form. (String methods, not ``re``: the hook runs this on every
    compile, and ``re``'s import costs more than the rest of the command's parsing.)"""
    prefix, sep, tail = name.rpartition("_")
    letter = tail[-1:] if tail[-1:].isascii() and tail[-1:].islower() else ""
    digits = tail[:len(tail) - len(letter)]
    if not sep or not digits.isascii() or not digits.isdigit():
        return None
    return prefix, int(digits), letter


def arch_key(arch: str) -> tuple[int, int]:
    """Order ``compute_90`` < ``compute_90f`` < ``compute_90a`` < ``compute_100`` (also for ``sm_NN``)."""
    parts = split_arch(arch)
    if parts is None:
        return (-1, 0)
    return (parts[1], {"": 0, "f": 1, "a": 2}.get(parts[2], 0))


def _arch_of(name: str, prefixes: tuple[str, ...]) -> bool:
    """Whether ``name`` is ``PREFIX_NN`` with an optional letter, for one of ``prefixes``."""
    parts = split_arch(name)
    return parts is not None and parts[0] in prefixes


def parse_command(argv: list[str], cwd: str | None = None) -> NvccCommand:
    """Model ``argv`` (the full command, compiler path first, possibly behind a launcher)."""
    cmd = NvccCommand(list(argv))
    i = 0
    while i < len(argv) and os.path.basename(argv[i]) in LAUNCHERS:
        i += 1
    cmd.launchers = argv[:i]
    if i >= len(argv):
        cmd.pass_reason = "no compiler in the command"
        return cmd
    cmd.compiler = argv[i]
    if os.path.basename(cmd.compiler) not in ("nvcc", "nvcc.exe"):
        cmd.pass_reason = f"{os.path.basename(cmd.compiler)} is not nvcc"
        return cmd
    try:
        cmd.args = expand_response_files(argv[i + 1:], cwd)
    except OSError as exc:
        cmd.pass_reason = f"cannot read a response file: {exc}"
        return cmd
    _classify(cmd, cwd)
    return cmd


def expand_response_files(args: list[str], cwd: str | None = None, depth: int = 0) -> list[str]:
    """``--options-file FILE`` / ``-optf FILE`` / ``@FILE`` replaced by the options in FILE (shell quoting)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        path = None
        if name in ("--options-file", "-optf"):
            if eq:
                path = value
            elif i + 1 < len(args):
                path, i = args[i + 1], i + 1
        elif a.startswith("@") and len(a) > 1:
            path = a[1:]
        if path is None or depth > 8:
            out.append(a)
        else:
            import shlex  # only here: the hook imports this module on every compile

            for one in path.split(","):
                with open(os.path.join(cwd or ".", one), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                out += expand_response_files(shlex.split(text), cwd, depth + 1)
        i += 1
    return out


def _options(args: list[str]) -> list[tuple[str, str | None]]:
    """(option name, value) pairs in order; inputs come as ("", path)."""
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-") or a == "-":
            out.append(("", a))
        else:
            name, eq, value = a.partition("=")
            if name in _VALUE_OPTIONS:
                if not eq and i + 1 < len(args):
                    value, i = args[i + 1], i + 1
                out.append((name, value))
            else:
                attached = next((p for p in _ATTACHED if a.startswith(p) and len(a) > len(p)), None)
                out.append((attached, a[len(attached):]) if attached else (a, None))
        i += 1
    return out


def _classify(cmd: NvccCommand, cwd: str | None) -> None:
    opts = _options(cmd.args)
    names = {n for n, _ in opts}
    language = next((v for n, v in reversed(opts) if n in ("-x", "--x")), None)
    files = [v for n, v in opts if n == "" and v is not None]
    if language is not None:
        cmd.inputs = files if language == "cu" else []
    else:
        cmd.inputs = [f for f in files if f.endswith(_CUDA_SUFFIXES)]
    cmd.output = next((v for n, v in reversed(opts) if n in ("-o", "--output-file")), None)
    if names & _KEEP:
        keep = next((v for n, v in reversed(opts) if n in ("-keep-dir", "--keep-dir")), None)
        cmd.keep_dir = os.path.normpath(os.path.join(cwd or os.getcwd(), keep or "."))
    cmd.virtual_archs = _virtual_archs(opts)
    if not names & (_PTXAS_OPTIONS | _RELOCATABLE) and _relocatable(opts) is False:
        cmd.sass_archs = _sass_archs(opts)
    phase = next((n for n, _ in opts if n in _NO_DEVICE_CODE), None)
    lto_code = any(n in ("-gencode", "--generate-code", "-code", "--gpu-code") and v and "lto_" in v for n, v in opts)
    if phase is not None:
        cmd.pass_reason = _NO_DEVICE_CODE[phase]
    elif not cmd.inputs:
        cmd.pass_reason = "no CUDA source among the inputs"
    elif lto_code and not any(a.startswith("compute_") for a in _codes(opts)):
        cmd.pass_reason = "link-time optimisation IR"


def _codes(opts: list[tuple[str, str | None]]) -> list[str]:
    out = []
    for n, v in opts:
        if n in ("-code", "--gpu-code") and v:
            out += v.split(",")
        elif n in ("-gencode", "--generate-code") and v:
            at = v.find("code=")
            if at >= 0:
                codes = v[at + len("code="):].removeprefix("[")
                out += codes.partition("]")[0].split(",")
    return [c.strip() for c in out]


#: options that change what ptxas makes of the PTX (``-lineinfo``'s ``--generate-line-info`` does not), beside
#: relocatable device code (:data:`_RELOCATABLE`, ``-rdc=true``)
_PTXAS_OPTIONS = frozenset({
    "-Xptxas", "--ptxas-options", "-maxrregcount", "--maxrregcount", "-G", "--device-debug", "-split-compile",
    "--split-compile", "-split-compile-extended", "--split-compile-extended", "-ewp", "--extensible-whole-program",
    "-dopt", "--dopt",
})


def _relocatable(opts: list[tuple[str, str | None]]) -> bool | None:
    """Whether ``-rdc`` asks for relocatable device code (None: a value nvcc would reject)."""
    value = next((v for n, v in reversed(opts) if n in ("-rdc", "--relocatable-device-code")), "false")
    return {"true": True, "false": False}.get((value or "").lower())


def _sass_archs(opts: list[tuple[str, str | None]]) -> list[str]:
    """The real architectures nvcc assembles for (``-arch=sm_NN`` without ``-code``, ``sm_NN`` codes)."""
    codes = [c for c in _codes(opts) if c.startswith("sm_")]
    if not any(n in ("-code", "--gpu-code", "-gencode", "--generate-code") for n, _ in opts):
        codes += [a for n, v in opts if n in ("-arch", "--gpu-architecture") and v for a in v.split(",")
                  if _arch_of(a, ("sm",))]
    return sorted(set(codes), key=arch_key)


def _virtual_archs(opts: list[tuple[str, str | None]]) -> list[str] | None:
    """The virtual architectures nvcc compiles PTX for, or None when the command does not say (nvcc's
    default, ``native``, ``all``, ``all-major``)."""
    archs: list[str] = []
    for n, v in opts:
        if not v:
            continue
        if n in ("-gencode", "--generate-code"):
            at = v.find("arch=compute_")
            if at < 0:
                return None
            name = v[at + len("arch="):]
            end = next((i for i, c in enumerate(name) if not (c.isalnum() or c == "_")), len(name))
            if end == len("compute_"):
                return None
            archs.append(name[:end])
        elif n in ("-arch", "--gpu-architecture"):
            for a in v.split(","):
                if not _arch_of(a, ("sm", "compute", "lto")):
                    return None
                archs.append("compute_" + a.split("_", 1)[1])
    return sorted(set(archs), key=arch_key) or None


#: options a ``-ptx`` compilation of the same translation unit leaves out: phases, outputs, dependency files,
#: kept intermediates and architectures (:func:`ptx_arguments` puts back the one it analyses)
_NOT_FOR_PTX = frozenset({
    "-c", "--compile", "-ptx", "--ptx", "-cubin", "--cubin", "-fatbin", "--fatbin", "-E", "--preprocess", "-M",
    "--generate-dependencies", "-MM", "--generate-nonsystem-dependencies", "-MD",
    "--generate-dependencies-with-compile", "-MMD", "--generate-nonsystem-dependencies-with-compile", "-MP",
    "--generate-dependency-targets", "-MF", "--dependency-output", "-MT", "--dependency-target-name", "-o",
    "--output-file", "-odir", "--output-directory", "-keep", "--keep", "-keep-dir", "--keep-dir", "-save-temps",
    "--save-temps", "-arch", "--gpu-architecture", "-code", "--gpu-code", "-gencode", "--generate-code", "-lib",
    "--lib", "-link", "--link", "-dlink", "--device-link", "-optix-ir", "--optix-ir", "-ltoir", "--ltoir", "-dlto",
    "--dlink-time-opt", "-cuda", "--cuda", "-run", "--run", "-optf", "--options-file",
})
_RELOCATABLE = frozenset({"-dc", "--device-c", "-dw", "--device-w"})


def ptx_arguments(cmd: NvccCommand) -> list[str]:
    """nvcc's arguments for ``nvcc -ptx`` of the command's translation unit, as written in the command less
    its inputs, outputs, phase, dependency-file and architecture options; ``-arch=compute_NN`` for its
    highest virtual architecture (the one the hook analyses; nvcc's default where the command names none it
    can tell) and ``-rdc=true`` for ``-dc``."""
    out: list[str] = []
    relocatable = False
    args = cmd.args
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, _ = a.partition("=")
        span = args[i:i + 2] if name in _VALUE_OPTIONS and not eq else [a]
        i += len(span)
        if not a.startswith("-") or a == "-" or name in _NOT_FOR_PTX:
            continue
        if name in _RELOCATABLE:
            relocatable = True
            continue
        out += span
    if relocatable:
        out.append("-rdc=true")
    if cmd.best_arch is not None:
        out.append(f"-arch={cmd.best_arch}")
    return out


def include_dirs(args: list[str] | tuple[str, ...], cwd: str) -> tuple[list[str], list[str]]:
    """The directories an nvcc command searches for headers, absolute: (``-I``/``--include-path``,
    ``-isystem``/``--system-include``); relative ones are taken from ``cwd``."""
    user: list[str] = []
    system: list[str] = []
    names = {"-I": user, "--include-path": user, "-isystem": system, "--system-include": system}
    i = 0
    while i < len(args):
        name, eq, value = args[i].partition("=")
        if name in names and not eq and i + 1 < len(args):
            value, i = args[i + 1], i + 1
        elif name not in names and args[i].startswith("-I") and len(args[i]) > 2:
            name, value = "-I", args[i][2:]
        if name in names and value:
            names[name].append(os.path.normpath(os.path.join(cwd, value)))
        i += 1
    return user, system
