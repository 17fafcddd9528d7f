"""A tiny plain-Python reference scheduler for the golden cases (no schedlab code).

It replays a workload given as builder rows (``WorkloadBuilder().rows``) on machines given as
``(cpu, mem[, speed])`` tuples, one instance at a time, with a plain event loop:

- a task is *ready* at ``max(submit, end of its last parent instance)``;
- at each event time, completions are released first, then the rule places instances;
- an instance on a machine of speed ``s`` runs ``duration / s`` seconds.

Rules (each written from the policy's documented behaviour, not from its code):

- ``fifo``: ready tasks in order of readiness (ties: row order); each instance goes to the
  lowest-index machine with room; a task that does not fit is skipped (no blocking);
- ``fifo-strict-gang``: same order, but the head task must start all its instances at once
  or nothing later starts (strict FCFS);
- ``drf``: repeatedly, among jobs with a ready instance that fits somewhere, the job with the
  lowest dominant share (max over cpu, mem of allocated / cluster total; ties: first job
  seen) gets one instance of its earliest-ready task, first fit.
"""
from __future__ import annotations

_EPS = 1e-9


def reference_schedule(rows: list[dict], machines: list[tuple], rule: str) -> list[tuple]:
    """Rows ``(job, task, instance, machine_id, start, end)``, sorted by job, task, instance."""
    free = [[float(m[0]), float(m[1])] for m in machines]
    speed = [float(m[2]) if len(m) > 2 else 1.0 for m in machines]
    total = [sum(m[0] for m in machines), sum(m[1] for m in machines)]
    key = [(r["job_id"], r["task_id"]) for r in rows]
    parents = [[key.index((r["job_id"], p)) for p in str(r.get("parents") or "").split(";") if p]
               for r in rows]
    pending = [int(r["instances"]) for r in rows]
    left = [int(r["instances"]) for r in rows]          # instances not yet ended
    last_end = [0.0] * len(rows)
    running: list[tuple[float, int, int]] = []          # (end, task, machine)
    job_alloc: dict[str, list[float]] = {}
    jobs_seen: list[str] = []
    out = []
    now = 0.0

    def need(i):
        return float(rows[i]["cpu"]), float(rows[i]["mem"])

    def fits(i, m):
        c, g = need(i)
        return free[m][0] + _EPS >= c and free[m][1] + _EPS >= g

    def ready_time(i):
        if any(left[p] for p in parents[i]):
            return None
        return max([float(rows[i]["submit_time"])] + [last_end[p] for p in parents[i]])

    def start(i, m):
        c, g = need(i)
        free[m][0] -= c
        free[m][1] -= g
        a = job_alloc.setdefault(rows[i]["job_id"], [0.0, 0.0])
        a[0] += c
        a[1] += g
        inst = int(rows[i]["instances"]) - pending[i]
        pending[i] -= 1
        end = now + float(rows[i]["duration"]) / speed[m]
        running.append((end, i, m))
        out.append((rows[i]["job_id"], rows[i]["task_id"], inst, f"m{m}", now, end))

    def first_fit(i):
        return next((m for m in range(len(free)) if fits(i, m)), None)

    def queue():
        ready = [(ready_time(i), i) for i in range(len(rows)) if pending[i]]
        return [i for r, i in sorted((r, i) for r, i in ready if r is not None and r <= now + _EPS)]

    def schedule():
        for i in queue():
            if rows[i]["job_id"] not in jobs_seen:
                jobs_seen.append(rows[i]["job_id"])
        if rule == "fifo":
            for i in queue():
                while pending[i] and (m := first_fit(i)) is not None:
                    start(i, m)
        elif rule == "fifo-strict-gang":
            for i in queue():
                trial = [row[:] for row in free]
                placed = []
                for _ in range(pending[i]):
                    m = first_fit(i)
                    if m is None:
                        break
                    placed.append(m)
                    free[m][0] -= need(i)[0]
                    free[m][1] -= need(i)[1]
                free[:] = trial
                if len(placed) < pending[i]:
                    return
                for m in placed:
                    start(i, m)
        elif rule == "drf":
            while True:
                best = None
                for i in queue():
                    if first_fit(i) is None:
                        continue
                    j = rows[i]["job_id"]
                    a = job_alloc.get(j, [0.0, 0.0])
                    share = max(a[0] / total[0], a[1] / total[1])
                    cand = (share, jobs_seen.index(j), i)
                    if best is None or cand[:2] < best[:2]:
                        best = cand
                if best is None:
                    return
                start(best[2], first_fit(best[2]))
        else:
            raise ValueError(rule)

    arrivals = sorted({float(r["submit_time"]) for r in rows})
    while True:
        schedule()
        nxt = [t for t in arrivals if t > now + _EPS] + [e for e, _, _ in running]
        if not nxt:
            break
        now = min(nxt)
        for e, i, m in [r for r in running if r[0] <= now + _EPS]:
            running.remove((e, i, m))
            c, g = need(i)
            free[m][0] += c
            free[m][1] += g
            a = job_alloc[rows[i]["job_id"]]
            a[0] -= c
            a[1] -= g
            left[i] -= 1
            last_end[i] = max(last_end[i], e)
    assert not any(pending), "the reference left work unplaced"
    return sorted(out)
