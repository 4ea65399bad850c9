"""The recompute pipeline under faults: a worker killed mid-recompute, Redis restarted during a
burst of quote edits, PostgreSQL restarted while the worker computes.

Each scenario ends with the same convergence check (driver.py ``check``): every candidate
table's rows equal a fresh in-process recompute of the database as it is (row by row: quote /
route ids, cost lines, monthly cost, accepted outputs, unit cost, rank, ...), no table stale or
queued after the sweeper ran, and no quote or decision record lost or duplicated.

The sweeper runs as beat would run it, every so often: ``FaultEnv.converge`` waits for the
queue and sweeps whenever tables stay stale, moving stale tables' ``queued_at`` back by
``LOST_TASK_AFTER`` first (two minutes passing, without waiting them out).
"""

import time

import pytest

from .harness import FaultEnv, pg_restart, redis_start, redis_stop, restore_services

pytestmark = pytest.mark.faults


def assert_converged(env: FaultEnv, log: list) -> dict:
    check = env.driver("check", timeout=600)
    problems = []
    if check["stale"]:
        problems.append(f"stale tables left: {check['stale']}")
    if check["queued"]:
        problems.append(f"tables left queued (pending): {check['queued']}")
    if check["n_mismatches"]:
        problems.append(f"{check['n_mismatches']} differences from a fresh recompute:")
        problems.extend(str(m) for m in check["mismatches"][:10])
    assert not problems, "\n".join(problems) + f"\nconverge log: {log}"
    assert check["tables"] == len(env.setup["brief_ids"])
    return check


def assert_same_records(before: dict, after: dict) -> None:
    assert after["quotes"] == before["quotes"], "quotes changed, were lost or duplicated"
    assert after["decisions"] == before["decisions"], "decision records lost or changed"
    assert after["audit_events"] == before["audit_events"]
    assert after["briefs"] == before["briefs"]


def baseline(env: FaultEnv) -> dict:
    """Every scenario starts from a converged database. A scenario that failed half-way can
    leave tables stale with no worker running; then a worker of baseline's own converges them
    (and is stopped), so that one failure does not fail every scenario after it."""
    log = env.converge(rounds=1, wait_s=10)
    if not log[-1].get("wait", {}).get("done"):
        helper = env.start_worker()
        try:
            log += env.converge(rounds=4, wait_s=30)
        finally:
            helper.stop()
    assert log[-1].get("wait", {}).get("done"), f"no clean start: {log}"
    return env.driver("snapshot")


@pytest.mark.parametrize("kill", ["pool-child", "whole-worker"])
def test_a_worker_killed_mid_recompute_converges(fault_env, workers, kill):
    """SIGKILL the pool child while it computes a table (``pool-child``: the worker's main
    process survives, rejects the message back to the queue — acks_late +
    reject_on_worker_lost — and a new child runs it again), or the whole worker (its reserved
    message sits unacked in Redis for the visibility timeout: only the sweeper can recover).
    A new worker is started either way, the sweeper runs, and the tables converge."""
    env = fault_env
    before = baseline(env)
    first = workers.start()
    env.driver("touch-assumptions")  # every table recomputed in full: ~1 s each
    with env.recompute_held() as victim:  # the worker cannot write this table before the kill
        if kill == "pool-child":
            killed = first.kill_child()
        else:
            first.kill_all()
            killed = first.proc.pid
        state = env.sql(
            "SELECT brief_id, queued_at IS NULL, computed_version, requested_version "
            "FROM finance_candidatetable WHERE brief_id = %s",
            (victim,),
        )
    victims = [victim]
    assert any(c < r for _, _, c, r in state), f"the kill missed the recompute: {state}"
    workers.start()
    sweep = env.driver("sweep")  # queued_at was cleared by the killed task: swept at once
    log = [{"killed_pid": killed, "victims": victims, "state_after_kill": state},
           {"sweep_now": sweep}, *env.converge()]  # fmt: skip
    assert log[-1].get("wait", {}).get("done"), f"did not converge: {log}"
    check = assert_converged(env, log)
    print(f"\n[a/{kill}] {log}\ncheck: {check['tables']} tables, {check['rows']} rows equal")
    assert_same_records(before, env.driver("snapshot"))
    if kill == "pool-child":
        assert "WorkerLostError" in first.log_text() or "SIGKILL" in first.log_text()


def _expected_writes(calls: list[dict]) -> tuple[dict[int, int], dict[int, bool], list[int]]:
    bumps: dict[int, int] = {}
    retired: dict[int, bool] = {}
    creates = []
    for call in calls:
        if call["op"] in ("price", "retire"):
            bumps[call["quote"]] = bumps.get(call["quote"], 0) + 1
        if call["op"] == "retire":
            retired[call["quote"]] = True
        if call["op"] == "create":
            creates.append(call["n"])
    return bumps, retired, creates


def test_b_redis_restarted_during_a_burst_of_quote_edits(fault_env, workers):
    """Redis shut down (nosave: the queue is lost) and started again while quote edits go
    through the API. Every edit must commit whatever the broker does, and the API must not
    answer 500 for a write that committed; then the sweeper brings every table back."""
    env = fault_env
    before = baseline(env)
    workers.start()
    # Every table is current and off the queue, so the burst's first edit enqueues every
    # table (later edits only bump versions: coalesced). Redis goes down just before the
    # burst, so that enqueue meets a dead broker, and comes back while the burst goes on.
    try:
        t_down = time.monotonic()
        redis_stop()
        burst = env.driver_start(
            "burst", "--token", env.setup["token"], "--count", "60", "--pace", "0.1",
            "--seed", "7", "--max-seconds", "120",
        )  # fmt: skip
        time.sleep(4.0)
        up_after = redis_start()
        outage_s = time.monotonic() - t_down
    finally:
        restore_services()
    calls = env.driver_finish(burst, timeout=300)["calls"]
    log = [{"outage_s": round(outage_s, 1), "redis_up_after_s": round(up_after, 1)}]
    log += env.converge()
    assert log[-1].get("wait", {}).get("done"), f"did not converge: {log}"
    check = assert_converged(env, log)
    statuses = [c["status"] for c in calls]
    print(f"\n[b] {log}\ncheck: {check['tables']} tables, {check['rows']} rows equal")
    odd = [c for c in calls if c["status"] not in (200, 201)]
    print(
        f"[b] {len(calls)} API calls, statuses {sorted(set(map(str, statuses)))}; slowest "
        f"{max(c['ms'] for c in calls)} ms; non-2xx: {odd[:3]}"
    )

    # No write lost, none applied twice: every quote's version moved by exactly the number
    # of edits sent for it (each edit is a new price, or a retire), each new quote exists once.
    after = env.driver("snapshot")
    refused = [c for c in calls if isinstance(c["status"], int) and 400 <= c["status"] < 500]
    assert not refused, f"edits refused: {refused[:5]}"
    bumps, retired, creates = _expected_writes(calls)
    for pk, n in bumps.items():
        v0, v1 = before["quotes"][str(pk)][0], after["quotes"][str(pk)][0]
        assert v1 - v0 == n, f"quote #{pk}: {n} edits sent, version moved {v0} -> {v1}"
    for pk in retired:
        assert after["quotes"][str(pk)][2] is True, f"quote #{pk}: retire lost"
    last_price = {c["quote"]: c["price"] for c in calls if c["op"] == "price"}
    for pk, price in last_price.items():
        assert after["quotes"][str(pk)][1] == price, f"quote #{pk}: last price {price} lost"
    new_ids = set(after["quotes"]) - set(before["quotes"])
    assert set(before["quotes"]) <= set(after["quotes"]), "quotes lost"
    assert len(new_ids) == len(creates), f"{len(creates)} quotes created, {len(new_ids)} new rows"
    assert after["decisions"] == before["decisions"]
    assert after["audit_events"] == before["audit_events"]

    failed = [c for c in calls if c["status"] == "exception" or c["status"] >= 500]
    assert not failed, (
        f"BUG: {len(failed)} of {len(calls)} API edits answered 5xx/raised while Redis was down "
        f"although the write committed (delay_on_commit raising after commit): {failed[:3]}"
    )


def test_b2_an_edit_while_the_broker_is_unreachable_answers_promptly(fault_env, workers):
    """A quote edit while the broker cannot be reached (a closed port: nothing restarted) must
    commit and answer without waiting on the broker once per table. The edit asks every
    brief's table to recompute, so after commit ``_enqueue`` hands the recomputes to the
    broker; each attempt first waits out kombu's connect (~0.4-0.8 s here). Sent one table a
    task, that grew with the number of briefs (20 here, 200 in the bench seed: minutes, past
    gunicorn's timeout, which kills the request of a write that has committed). Now the tables
    go RECOMPUTE_BATCH a task, the first failure stops, and the unsent tables are taken off
    the queue (``queued_at`` cleared) so that the sweeper sends them again."""
    env = fault_env
    before = baseline(env)
    dead = dict(env.env, CELERY_BROKER_URL="redis://127.0.0.1:1/0")  # nothing listens on 1
    saved, env.env = env.env, dead
    try:
        calls = env.driver("burst", "--token", env.setup["token"], "--count", "1",
                           "--pace", "0", "--seed", "11")["calls"]  # fmt: skip
    finally:
        env.env = saved
    (call,) = calls
    assert call["status"] in (200, 201), f"the edit failed with the broker down: {call}"
    queued = env.sql("SELECT brief_id FROM finance_candidatetable WHERE queued_at IS NOT NULL")
    stale = env.sql(
        "SELECT count(*) FROM finance_candidatetable WHERE computed_version < requested_version"
    )[0][0]
    assert call["sends"] == 1, (
        f"BUG: one quote edit tried the broker {call['sends']} times while it was unreachable "
        f"({len(env.setup['brief_ids'])} briefs; each try waits out a connect): {call}"
    )
    assert stale == len(env.setup["brief_ids"]), f"the edit did not ask for recomputes: {stale}"
    assert not queued, f"tables left marked queued with no task sent: {queued}"
    workers.start()
    log = [{"calls": calls}, *env.converge()]
    assert log[-1].get("wait", {}).get("done"), f"did not converge: {log}"
    check = assert_converged(env, log)
    after = env.driver("snapshot")
    print(f"\n[b2] edit answered in {call['ms']} ms; {log}\ncheck: {check['tables']} tables")
    assert after["decisions"] == before["decisions"]


def test_c_postgresql_restarted_while_the_worker_computes(fault_env, workers):
    """PostgreSQL restarted (fast shutdown: sessions terminated) in the middle of a recompute:
    that task and those that run while the database is down fail (acked: acks_late acks a
    failed task), their tables stay stale, and the sweeper recomputes them."""
    env = fault_env
    before = baseline(env)
    worker = workers.start()
    env.driver("touch-assumptions")
    try:
        with env.recompute_held() as victim:  # the restart ends this lock with its session
            victims = [victim]
            restart_s = pg_restart()
    finally:
        restore_services()
    log = [{"victims": victims, "restart_s": round(restart_s, 1)}]
    if worker.proc.poll() is not None:  # a worker that dies with its database is a finding
        log.append({"worker_exited": worker.proc.returncode, "tail": worker.tail()})
        workers.start()
    log += env.converge()
    assert log[-1].get("wait", {}).get("done"), f"did not converge: {log}"
    check = assert_converged(env, log)
    print(f"\n[c] {log}\ncheck: {check['tables']} tables, {check['rows']} rows equal")
    assert_same_records(before, env.driver("snapshot"))
    assert worker.proc.poll() is None, f"the worker died with PostgreSQL: {log}"
