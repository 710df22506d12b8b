/**
 * Attack: SIGKILL of the daemon under load (issue 10.19).
 *
 * Many users post messages through the loopback channel at once while the model (the mock LLM)
 * answers slowly, so that turns are in flight and messages wait in the sessions' queues. In the
 * middle of it the daemon is killed with SIGKILL. Then, before anything else touches it, the
 * SQLite database is checked (`PRAGMA integrity_check`, `foreign_key_check`); the daemon is
 * started again on the same state directory (it must start, reap what was left running, and
 * serve), stopped cleanly, and the transcripts are read.
 *
 * A message is acknowledged when the channel answered its POST with 202. Property: the database
 * is intact after the kill, the daemon restarts and answers, no process of the killed daemon is
 * left after the restart, and every acknowledged message is in the transcript after the restart.
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { endpoint, say } from "../packages/nexo/test/helpers/loopback.js";
import { leftBehind, processesWithEnv, runAttack } from "./lib.js";
import { chaosDaemon } from "./setup.js";

await runAttack("sigkill-load", async (attack) => {
  const senders = attack.pick(10, 40);
  const perSender = attack.pick(4, 10);
  const total = senders * perSender;
  const config = await chaosDaemon(attack, {
    // Slow answers: each reply streams its events 150 ms apart.
    // The restart's own check comes first: unmatched entries answer any message.
    script: [
      { match: "after the restart", text: "back again" },
      ...Array.from({ length: total }, () => ({ text: "ok, noted", delay_ms: 150 })),
    ],
  });
  const daemon = await config.start();
  const url = await endpoint(config.stateDir);

  /** Acknowledged message text → acknowledged after the kill. */
  const acknowledged = new Map<string, boolean>();
  let refused = 0;
  let killedAt = Number.POSITIVE_INFINITY;
  const killAfter = Math.floor(total / 2);
  const perSenderPause = attack.pick(150, 100);
  const started = performance.now();
  const sender = async (s: number) => {
    for (let m = 0; m < perSender; m++) {
      const text = `load message ${s}-${m} ${Math.random().toString(36).slice(2)}`;
      try {
        const res = await fetch(`${url}/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ from: `user-${s}`, text }),
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        if (res.status === 202) acknowledged.set(text, performance.now() > killedAt);
        else refused++;
      } catch {
        refused++;
      }
      await sleep(perSenderPause * (0.5 + Math.random()));
    }
  };
  const killer = (async () => {
    // Kill once half the messages are acknowledged and turns are running.
    const running = () => config.mock.requests().length >= Math.min(senders, killAfter) / 2;
    while ((acknowledged.size < killAfter || !running()) && performance.now() - started < 60_000)
      await sleep(5);
    const inFlight = config.mock.requests().length;
    killedAt = performance.now();
    await daemon.stop("SIGKILL");
    attack.figure("model requests made before the kill", inFlight);
  })();
  await Promise.all([...Array.from({ length: senders }, (_, s) => sender(s)), killer]);
  attack.figure("messages posted", total);
  attack.figure("acknowledged (202) by the channel", acknowledged.size);
  attack.figure("of them after the kill", [...acknowledged.values()].filter(Boolean).length);
  attack.figure("refused or failed (after the kill)", refused);
  attack.figure("kill after", (killedAt - started) / 1000, "s");

  // The database as the kill left it.
  const dbPath = join(config.stateDir, "nexo.db");
  const db = new Database(dbPath);
  const integrity = db.pragma("integrity_check", { simple: true });
  const foreignKeys = db.pragma("foreign_key_check") as unknown[];
  db.close();
  attack.note(`PRAGMA integrity_check: ${String(integrity)}`);
  attack.figure("foreign key violations", foreignKeys.length);
  attack.expect(integrity === "ok", `integrity_check after SIGKILL: ${String(integrity)}`);
  attack.expect(foreignKeys.length === 0, `${foreignKeys.length} foreign key violations`);

  // The next start on the same state directory.
  const orphans = processesWithEnv(config.marker).length;
  attack.figure("plugin processes still running after the kill", orphans);
  const restartAt = performance.now();
  const second = await config.start();
  attack.figure("restart to ready", performance.now() - restartAt, "ms");
  const secondUrl = await endpoint(config.stateDir);
  const answer = await say(secondUrl, "late-user", "after the restart").catch((e: Error) => e.message);
  attack.expect(answer.includes("back again"), `the restarted daemon did not answer: ${answer}`);
  const stopped = await second.stop("SIGTERM");
  attack.expect(stopped.code === 0, `the restarted daemon did not stop cleanly: ${stopped.code}`);
  const left = await leftBehind(config.marker);
  attack.figure("processes left behind after the restart and stop", left.length);
  attack.expect(left.length === 0, `processes left behind: ${left.join(", ")}`);

  // Every acknowledged message in a transcript.
  const after = new Database(dbPath, { readonly: true });
  const contents = (
    after.prepare("SELECT content FROM transcript_entries").all() as Array<{ content: string }>
  ).map((row) => row.content);
  const finalIntegrity = after.pragma("integrity_check", { simple: true });
  after.close();
  const stored = contents.join("\n");
  const lost = [...acknowledged.keys()].filter((text) => !stored.includes(text));
  attack.figure("transcript entries after the restart", contents.length);
  attack.figure("acknowledged messages lost", lost.length, `of ${acknowledged.size}`);
  attack.figure(
    "of them acknowledged before the kill",
    lost.filter((text) => !acknowledged.get(text)).length,
  );
  attack.expect(finalIntegrity === "ok", `integrity_check after the restart: ${String(finalIntegrity)}`);
  attack.expect(
    lost.length === 0,
    `${lost.length} of ${acknowledged.size} acknowledged messages are not in any transcript, e.g. "${lost[0]}"`,
  );
});
