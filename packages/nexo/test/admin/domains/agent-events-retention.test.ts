/**
 * The agent event retention through a real daemon started from a config directory: events are
 * written into the daemon's SQLite log with their ages, the daemon restarts, and daemon.yaml's
 * `agent_events.retention_days` decides what the start's sweep deletes — the default 30 days keeps
 * ten-day-old events, 7 days drops them and keeps the newer ones, and a stream's newest event stays
 * whatever its age so its seq counts on after the restart.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { type DaemonDir, restartFromDir, startFromDir } from "../../helpers/daemon-dir.js";

const DAY_MS = 86_400_000;
const BUSY = "retention-busy";
const QUIET = "retention-quiet";

describe("agent_events.retention_days on a real daemon", () => {
  let run: DaemonDir | undefined;
  after(() => run?.daemon.stop("test over"));

  /** Every event of `stream` as [seq, text], oldest first. */
  const seqs = (stream: string) =>
    run!.daemon.store.agentEvents.read(stream).map((event) => [event.seq, (event as { text?: string }).text]);

  it("prunes at start what is older than the configured days, keeping newer events and each stream's newest", async () => {
    run = await startFromDir({ "agents.yaml": "agents: []\n" });
    const now = Date.now();
    const append = (sessionId: string, ageMs: number, text: string) =>
      run!.daemon.store.agentEvents.append({
        kind: "retention_probe",
        agentId: "ana",
        sessionId,
        atMs: now - ageMs,
        fields: { text },
      });
    append(BUSY, 10 * DAY_MS, "ten days old");
    append(BUSY, 8 * DAY_MS, "eight days old");
    append(BUSY, 2 * DAY_MS, "two days old");
    append(BUSY, 3_600_000, "an hour old");
    append(QUIET, 10 * DAY_MS, "the quiet stream's only event");
    const all = [
      [1, "ten days old"],
      [2, "eight days old"],
      [3, "two days old"],
      [4, "an hour old"],
    ];
    await run.daemon.stop("restart with the default retention");

    // The default (30 days) keeps everything written above.
    run = await restartFromDir(run);
    assert.deepEqual(seqs(BUSY), all);
    await run.daemon.stop("restart with a 7-day retention");

    run.write(
      "daemon.yaml",
      `state_dir: ${run.stateDir}\nhttp: { enabled: false }\nagent_events: { retention_days: 7 }\n`,
    );
    run = await restartFromDir(run);
    assert.deepEqual(seqs(BUSY), all.slice(2), "only the events of the last 7 days stay");
    assert.deepEqual(seqs(QUIET), [[1, "the quiet stream's only event"]], "a stream's newest event stays");
    // The kept newest event keeps the quiet stream counting: no seq is reused.
    const next = run.daemon.store.agentEvents.append({
      kind: "retention_probe",
      agentId: "ana",
      sessionId: QUIET,
      fields: { text: "after the restart" },
    });
    assert.equal(next.seq, 2);
  });
});
