"""The DVFS prediction of one kernel (:func:`ptxstatic.predict.prediction`) as text."""

from __future__ import annotations

from ptxstatic.predict import ABSOLUTE


def prediction_text(d: dict) -> str:
    """A compact table: one line per configuration, ``*`` the minimum-energy one, ``p`` Pareto members."""
    ref = d["reference"]
    values = "".join(f", {k.replace('_', ' ')} {v:.4g}" for k, v in ref.items() if k in ABSOLUTE)
    clocks = f"mem {ref.get('f_mem_mhz', '?')} MHz, core {ref.get('f_core_mhz', '?')} MHz"
    lines = [f"kernel {d['kernel']} ({d['file']}) on {d['gpu']}, model {d['model']['kind']} ({d['model']['path']})"]
    if not d["configs"]:
        lines.append(f"absolute at {clocks}{values}" if values else "no prediction")
        return "\n".join(lines + [f"note: {n}" for n in d["notes"]])
    lines.append(f"scaling relative to F_max = {clocks}{values}")
    absolute = [k for k in ABSOLUTE if k in d["configs"][0]]
    header = f"   {'mem':>5} {'core':>5} {'time':>7} {'power':>7} {'energy':>7}" + "".join(
        f" {k.replace('_', ' '):>10}" for k in absolute
    )
    lines.append(header)
    for r in d["configs"]:
        mark = ("*" if r["min_energy"] else " ") + ("p" if r["pareto"] else " ")
        lines.append(
            f"{mark} {r['f_mem_mhz']:>5} {r['f_core_mhz']:>5} {r['time_scaling']:>7.3f} {r['power_scaling']:>7.3f} "
            f"{r['energy_scaling']:>7.3f}" + "".join(f" {r[k]:>10.4g}" for k in absolute)
        )
    best = d["min_energy"]
    limit = f" with at most {100 * d['max_slowdown']:.3g}% slowdown" if d["max_slowdown"] is not None else ""
    lines.append(
        f"minimum energy{limit}: mem {best['f_mem_mhz']} MHz, core {best['f_core_mhz']} MHz — energy "
        f"{best['energy_scaling']:.3f}× F_max, time {best['time_scaling']:.3f}× (energy from {d['energy_source']})"
    )
    lines.append(
        "pareto (speed-up, energy): " + ", ".join(
            f"{p['f_mem_mhz']}/{p['f_core_mhz']} ({1 / p['time_scaling']:.3f}, {p['energy_scaling']:.3f})"
            for p in d["pareto"]
        )
    )
    lines += [f"note: {n}" for n in d["notes"]]
    return "\n".join(lines)
