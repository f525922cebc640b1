"""The DVFS prediction of one kernel (:func:`ptxstatic.predict.prediction`) as text: every number with its
interval and the model that produced it."""

from __future__ import annotations

HEADS = ("time", "power", "energy")


def _value(row: dict, name: str, digits: int = 3) -> str:
    """``1.234 (1.10–1.40)``: a value with its interval, where it has one."""
    v = row[f"{name}_scaling"]
    low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
    return f"{v:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})" if low is not None else f"{v:.{digits}f}"


def _ms(value: float, low: float | None, high: float | None) -> str:
    return f"{value:.4g}" + (f" ({low:.3g}–{high:.3g})" if low is not None else "")


def _header(d: dict) -> list[str]:
    m = d["model"]
    default = ", the default" if m.get("default") else ""
    level = f"; {100 * m['interval_level']:.0f} % intervals" if m.get("interval_level") else ""
    ref = d["reference"]
    source = "time × power" if d["energy_source"] == "time*power" else "the energy head"
    return [f"kernel {d['kernel']} ({d['file']}) on {d['gpu']}, model {m['name']} ({m['path']}){default}{level}",
            f"scaling relative to F_max = mem {ref['f_mem_mhz']} MHz, core {ref['f_core_mhz']} MHz; "
            f"energy from {source}"]


def _table(d: dict) -> list[str]:
    timed = "time_ms" in d["configs"][0]
    width = 21 if "time_low" in d["configs"][0] else 7
    header = f"   {'mem':>5} {'core':>5} " + " ".join(f"{h:>{width}}" for h in HEADS) + (
        "  time ms (estimate)" if timed else "")
    lines = [header]
    for r in d["configs"]:
        mark = ("*" if r["min_energy"] else " ") + ("p" if r["pareto"] else " ")
        cells = " ".join(f"{_value(r, h):>{width}}" for h in HEADS)
        ms = f"  {_ms(r['time_ms'], r.get('time_ms_low'), r.get('time_ms_high'))}" if timed else ""
        lines.append(f"{mark} {r['f_mem_mhz']:>5} {r['f_core_mhz']:>5} {cells}{ms}")
    return lines


def _decision(d: dict) -> list[str]:
    best = d["min_energy"]
    limit = f" with at most {100 * d['max_slowdown']:.3g}% slowdown" if d["max_slowdown"] is not None else ""
    saving = f"expected saving {100 * best['saving']:.1f} %"
    if "saving_low" in best:
        saving += f" (range {100 * best['saving_low']:.1f} % to {100 * best['saving_high']:.1f} %)"
    pareto = ", ".join(f"{p['f_mem_mhz']}/{p['f_core_mhz']} ({1 / p['time_scaling']:.3f}, {p['energy_scaling']:.3f})"
                       for p in d["pareto"])
    return [f"minimum energy{limit}: mem {best['f_mem_mhz']} MHz, core {best['f_core_mhz']} MHz — energy "
            f"{_value(best, 'energy')}× F_max, time {_value(best, 'time')}×; {saving}",
            f"pareto (speed-up, energy): {pareto}"]


def _ood(d: dict) -> list[str]:
    o = d.get("ood")
    if not o:
        return []
    unseen = f"; unseen in training: {', '.join(o['unseen'])}" if o["unseen"] else ""
    outside = f"; features outside the training range: {', '.join(o['out_of_range'])}" if o["out_of_range"] else ""
    state = "out of distribution" if o["score"] > 0 else "in distribution"
    return [f"{state}: score {o['score']:.2f}{unseen}{outside}; shrunk {100 * o['shrinkage']:.0f} % toward the "
            "training mean surface"]


def _absolute(d: dict) -> list[str]:
    a = d.get("absolute")
    if not a:
        return []
    board = a["gpu"]["board"]
    r = a["resources_ms"]
    lines = [f"absolute time at mem {a['f_mem_mhz']:g} MHz, core {a['f_core_mhz']:g} MHz: "
             f"{_ms(a['time_ms'], a['time_ms_low'], a['time_ms_high'])} ms — a {a['model']} estimate on the "
             f"published figures of the {board} ({a['parameters']}), not a measurement; {a['bound']}-bound (core "
             f"{r['core']:.3g} ms, DRAM {r['dram']:.3g} ms, L2 {r['l2']:.3g} ms, L1 {r['l1']:.3g} ms, launch "
             f"{a['overhead_ms']:.3g} ms); memory-bound share {a['memory_share']:.2f}"]
    if "power_w" in a:
        energy = _ms(a["energy_mj"], a["energy_mj_low"], a["energy_mj_high"])
        lines.append(f"board power at the same clocks: {a['power_w']:.0f} W ({a['power_w_low']:.0f}–"
                     f"{a['power_w_high']:.0f}) — the {a['power_model']} model ({a['power_parameters']}), not a "
                     f"measurement; energy per launch {energy} mJ")
    t = a.get("traffic")
    if t:
        lines.append(f"traffic: DRAM {_bytes(t['dram_read_bytes'])} read, {_bytes(t['dram_write_bytes'])} written; "
                     f"L2 {_bytes(t['l2_bytes'])}; L1 {_bytes(t['l1_bytes'])}")
        for i in t["instructions"]:
            if i["per_request"] >= 2 * i["ideal_per_request"]:
                lines.append(f"  line {i['line']}: {i['space']} {i['kind']} {i['per_request']:.1f} sectors/request "
                             f"(minimum {i['ideal_per_request']:.1f}), {i['method']}")
    return lines


def _bytes(e: dict) -> str:
    """A byte count with its interval, in the unit that suits it."""
    v, lo, hi = e["value"], e["low"], e["high"]
    unit, k = next(((u, k) for u, k in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)) if v >= k), ("B", 1.0))
    if lo == v == hi:
        return f"{v / k:.3g} {unit}"
    return f"{v / k:.3g} {unit} [{lo / k:.3g}, {hi / k:.3g}]"


def prediction_text(d: dict) -> str:
    """A compact table: one line per configuration, ``*`` the minimum-energy one, ``p`` Pareto members; each
    factor with its interval; then the decision, the out-of-distribution report and the absolute estimate."""
    if d["model"] is None:
        lines = [f"kernel {d['kernel']} ({d['file']}) on {d['gpu']}: no DVFS model for this GPU", *_absolute(d)]
        return "\n".join(lines + [f"note: {n}" for n in d["notes"]])
    lines = _header(d) + _table(d) + _decision(d) + _ood(d) + _absolute(d)
    if d.get("quantities"):
        lines.append("quantities: " + ", ".join(f"{k} {v:.2f}" for k, v in d["quantities"].items()))
    return "\n".join(lines + [f"note: {n}" for n in d["notes"]])
