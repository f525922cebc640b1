"""The program ``collect --counters`` runs under Nsight Compute: every launch of a plan, once each, in order.

``python -m ptxstatic.collect.launch_once PLAN.json`` reads a plan (written by
:mod:`ptxstatic.collect.counters`): the device, a deadline (seconds since the epoch) and the tasks, each a
PTX file, a kernel and a launch. It loads each module once, runs each launch once (its buffers filled as
``collect`` fills them) and appends one JSON line per task to the plan's ``ran`` file: ``{"task": i,
"ok": true}`` after the kernel finished, or the error. Past the deadline it starts no new launch, so that
a profiler's run ends in time with what was done. A sticky fault resets the device and the run goes on.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ptxstatic.collect.features import loaded
from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.device import DeviceFault, Gpu
from ptxstatic.gpu.open import open_device
from ptxstatic.launch import Launch


def run_plan(plan: dict, gpu: Gpu) -> int:
    """Run the plan's tasks on ``gpu``; the number that ran."""
    ran_path = Path(plan["ran"])
    texts: dict[str, str] = {}
    done = 0
    with ran_path.open("a") as ran:
        for i, task in enumerate(plan["tasks"]):
            if time.time() > plan["deadline"]:
                break
            record: dict = {"task": i, "ok": False}
            try:
                text = texts.get(task["ptx"])
                if text is None:
                    text = texts[task["ptx"]] = Path(task["ptx"]).read_text()
                with loaded(gpu, text, task["kernel"], Launch.from_dict(task["launch"])) as (_, prepared):
                    gpu.run(prepared)
                record["ok"] = True
                done += 1
            except DeviceFault as exc:
                record["error"] = str(exc)
                if exc.sticky:
                    gpu.reset()
            except PtxstaticError as exc:
                record["error"] = str(exc)
            except Exception as exc:  # one kernel's defect must not end the run: recorded, skipped
                record["error"] = f"internal error: {type(exc).__name__}: {exc}"
            ran.write(json.dumps(record) + "\n")
            ran.flush()
    return done


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m ptxstatic.collect.launch_once PLAN.json", file=sys.stderr)
        return 2
    try:
        plan = json.loads(Path(args[0]).read_text())
        device = open_device(plan.get("device", "cuda"), int(plan.get("index", 0)))
    except (OSError, ValueError, PtxstaticError) as exc:
        print(f"launch_once: {exc}", file=sys.stderr)
        return 2
    try:
        run_plan(plan, device.gpu)
    finally:
        device.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
