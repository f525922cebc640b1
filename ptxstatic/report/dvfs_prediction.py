"""The DVFS prediction of one kernel as a JSON-ready dict, and its text rendering."""

from __future__ import annotations

from ptxstatic.decisions.clocks import ScalingTable, min_energy, pareto_set

ABSOLUTE = ("time_ms", "power_w", "energy_mj")


def prediction_dict(
    kernel: str, file: str, gpu: str, model: dict, table: ScalingTable | None, max_slowdown: float | None,
    absolute: dict[str, float] | None = None, notes: list[str] | None = None, reference: dict | None = None,
) -> dict:
    """Everything ``ptxstatic predict`` reports for one kernel.

    ``absolute``: predicted time (ms) and/or power (W) at the reference configuration, if known; every
    configuration then also gets absolute values (energy in mJ when both are known). Without a scaling
    ``table`` (a GPU with absolute models only) there are no configurations, and ``reference`` gives the
    clocks the absolute values are for.
    """
    absolute = dict(absolute or {})
    if "time_ms" in absolute and "power_w" in absolute:
        absolute["energy_mj"] = round(absolute["time_ms"] * absolute["power_w"], 6)
    if table is None:
        return {
            "kernel": kernel, "file": file, "gpu": gpu, "model": model, "reference": {**(reference or {}), **absolute},
            "energy_source": None, "max_slowdown": max_slowdown, "min_energy": None, "pareto": [], "configs": [],
            "notes": notes or [],
        }
    clocks = table.clocks
    ref = clocks.reference
    best = min_energy(table, max_slowdown)
    front = pareto_set(table, max_slowdown)
    rows = []
    for i in range(len(clocks)):
        row = {
            "f_mem_mhz": clocks.f_mem[i], "f_core_mhz": clocks.f_core[i],
            "time_scaling": round(float(table.time[i]), 5), "power_scaling": round(float(table.power[i]), 5),
            "energy_scaling": round(float(table.energy[i]), 5),
            "speedup": round(float(table.speedup[i]), 5), "min_energy": i == best, "pareto": i in front,
        }
        if "time_ms" in absolute:
            row["time_ms"] = round(absolute["time_ms"] * float(table.time[i]), 6)
        if "power_w" in absolute:
            row["power_w"] = round(absolute["power_w"] * float(table.power[i]), 4)
        if "time_ms" in absolute and "power_w" in absolute:
            row["energy_mj"] = round(row["time_ms"] * row["power_w"], 6)
        rows.append(row)

    def brief(i: int) -> dict:
        return {
            "f_mem_mhz": clocks.f_mem[i], "f_core_mhz": clocks.f_core[i],
            "time_scaling": round(float(table.time[i]), 5),
            "energy_scaling": round(float(table.decision_energy[i]), 5),
        }

    return {
        "kernel": kernel, "file": file, "gpu": gpu, "model": model,
        "reference": {"f_mem_mhz": clocks.f_mem[ref], "f_core_mhz": clocks.f_core[ref], **absolute},
        "energy_source": table.energy_source,
        "max_slowdown": max_slowdown,
        "min_energy": brief(best),
        "pareto": [brief(i) for i in front],
        "configs": rows,
        "notes": notes or [],
    }


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
