/**
 * Attack: a catastrophic regex in Grep while /healthz is polled (issue 10.19, after 10.7).
 *
 * A channel user's message makes the model (the mock LLM) call Grep — which needs no approval —
 * with `(a+)+$` over lines of 5,000 `a`s ending in `b`: a backtracking engine takes far longer than
 * the search's 30 s limit. Meanwhile /healthz of the real daemon is polled back to back. The long
 * form runs several such searches at once (one per sender) and waits for their replies; the short
 * form polls for a few seconds, then stops the daemon in the middle of the search.
 *
 * Property: /healthz keeps answering (median under 100 ms, none slower than 2 s, none failed);
 * in the long form every attacker gets a reply; a SIGTERM during the search stops the daemon
 * within the shutdown grace (2 s here) plus a margin: the search is cancelled, not waited for.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { endpoint, say } from "../packages/nexo/test/helpers/loopback.js";
import { leftBehind, pollHealth, runAttack } from "./lib.js";
import { chaosDaemon } from "./setup.js";

/** How long a SIGTERM lets the turn in flight run before cancelling it. */
const GRACE_MS = 2_000;

await runAttack("redos", async (attack) => {
  const attackers = attack.pick(1, 3);
  const script = Array.from({ length: attackers }, (_, i) => [
    {
      match: `attacker ${i}`,
      tool_calls: [{ name: "Grep", input: { pattern: "(a+)+$", path: "redos.txt" } }],
    },
  ]).flat();
  const config = await chaosDaemon(attack, {
    // The replies after the searches; each matches its attacker's tool result by position.
    script: [...script, ...Array.from({ length: attackers }, () => ({ text: "search finished" }))],
    agentExtra: ["approval: { allow: [info] }"],
    daemonYaml: `http: { bind: 127.0.0.1:0 }\nshutdown_grace_ms: ${GRACE_MS}\n`,
  });
  writeFileSync(join(config.workspace, "redos.txt"), `${"a".repeat(5_000)}b\n`.repeat(20));
  const daemon = await config.start();
  const url = await endpoint(config.stateDir);
  const health = `${daemon.healthUrl}/healthz`;

  const idle = pollHealth(health);
  await sleep(2_000);
  const before = await idle.stop();
  attack.figure("/healthz before the attack, p50", before.p50Ms, "ms");

  const poller = pollHealth(health);
  const started = performance.now();
  const replies = Array.from({ length: attackers }, (_, i) =>
    say(url, `attacker-${i}`, `attacker ${i}: search redos.txt`).then(
      (text) => ({ text, ms: performance.now() - started }),
      (error: Error) => ({ text: `failed: ${error.message}`, ms: performance.now() - started }),
    ),
  );
  // Wait until the model has been asked for the searches (they run from then on).
  while (config.mock.requests().length < attackers && performance.now() - started < 30_000) await sleep(50);
  let stopMs: number | undefined;
  if (attack.scale === "long") {
    const answered = await Promise.all(replies);
    for (const [i, reply] of answered.entries()) {
      attack.figure(`attacker ${i}: reply after`, reply.ms / 1000, "s");
      attack.expect(reply.text.includes("search finished"), `attacker ${i} got no reply: ${reply.text}`);
    }
  } else {
    await sleep(6_000);
  }
  const during = await poller.stop();
  if (attack.scale === "short") {
    const stopped = await daemon.stop("SIGTERM");
    stopMs = stopped.ms;
    attack.figure("SIGTERM to exit, during the search", stopMs, "ms");
    attack.expect(stopped.code === 0, `the daemon exited with ${stopped.code}/${stopped.signal}`);
    attack.expect(stopMs < GRACE_MS + 5_000, `stopping took ${stopMs} ms: it waited for the search`);
  }
  attack.figure("concurrent catastrophic searches", attackers);
  attack.figure("/healthz requests during the searches", during.requests);
  attack.figure("/healthz during, p50", during.p50Ms, "ms");
  attack.figure("/healthz during, p99", during.p99Ms, "ms");
  attack.figure("/healthz during, max", during.maxMs, "ms");
  attack.figure("/healthz failures", during.failures);
  attack.expect(during.requests > 10, `only ${during.requests} /healthz requests were made`);
  attack.expect(during.failures === 0, `${during.failures} /healthz requests failed`);
  attack.expect(
    during.p50Ms < 100,
    `median /healthz latency ${during.p50Ms.toFixed(1)} ms during the search`,
  );
  // A frozen event loop shows as the search's 30 s; the rest is the shared machine's noise.
  attack.expect(
    during.maxMs < 2_000,
    `slowest /healthz answer ${during.maxMs.toFixed(1)} ms during the search`,
  );
  if (attack.scale === "long") await daemon.stop("SIGTERM");
  const left = await leftBehind(config.marker);
  attack.expect(left.length === 0, `processes left behind: ${left.join(", ")}`);
});
