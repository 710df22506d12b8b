/**
 * Operator takeover tests over a real daemon (processing/*, escalations/*): a config directory with
 * the loopback channel plugin, the scripted model, and two probe microapps the daemon runs from
 * extensions.yaml — `ops`, granted operator_intervention, escalations_* and the agent-event
 * firehose, and `viewer`, granted only audit_read — and the calls and reads the tests share
 * (events are read back from the store's agent event log).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { conversationKey } from "../../src/daemon/processing/scope.js";
import { scopeStreamId } from "../../src/store/agent-events.js";
import { MICROAPPS_DIR } from "../fixtures/microapps/harness.js";
import { type DaemonDir, EXAMPLE_PLUGINS } from "./daemon-dir.js";

export const OPERATOR = "abcdef0123456789";

export const AGENTS = `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: loopback }]
`;

export const OPS_GRANTS =
  "[audit_read, operator_intervention, escalations_read, escalations_resolve, agent_events_subscribe_all]";

export function files(): Record<string, string> {
  const probe = join(MICROAPPS_DIR, "probe/main.mjs");
  return {
    "agents.yaml": AGENTS,
    "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n`,
    "extensions.yaml": `extensions:
  entries:
    ops:
      path: ${probe}
      capabilities_grant: ${OPS_GRANTS}
      config: { daemon_timeout_ms: 60000 }
    viewer:
      path: ${probe}
      capabilities_grant: [audit_read]
      config: { daemon_timeout_ms: 60000 }
`,
  };
}

export interface Frame {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** The microapp `id` of the daemon sends one admin request; the daemon's whole answer. */
export async function call(run: DaemonDir, id: string, method: string, params?: unknown): Promise<Frame> {
  const host = run.daemon.microapps.host(id);
  assert.ok(host, `microapp ${id} runs`);
  const reply = await host.callTool({
    tool: `${id}_admin`,
    args: { method, params },
    binding_context: { agent_id: "test" },
  });
  return reply.output as Frame;
}

export function ok(frame: Frame): Record<string, unknown> {
  assert.equal(frame.error, undefined, JSON.stringify(frame.error));
  return frame.result!;
}

/** The agent events of `kind` recorded on the conversation scope's stream of the event log, oldest first. */
export function events(
  run: DaemonDir,
  scope: Record<string, unknown>,
  kind: string,
): Array<Record<string, unknown>> {
  return run.daemon.store.agentEvents
    .read(scopeStreamId(scope))
    .filter((event) => event.kind === kind) as unknown as Array<Record<string, unknown>>;
}

export const scopeOf = (contact: string) => ({
  kind: "conversation",
  agent_id: "ana",
  channel: "loopback",
  account_id: "default",
  contact_id: contact,
});

export const keyOf = (contact: string) => conversationKey("ana", "loopback", "default", contact);

export async function post(url: string, from: string, text: string): Promise<void> {
  const res = await fetch(`${url}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ from, text }),
  });
  assert.equal(res.status, 202);
}

/** Replies waiting for `to` (none within `ms`: []). */
export async function replies(url: string, to: string, ms: number): Promise<string[]> {
  const res = await fetch(`${url}/messages?to=${to}&timeout=${ms}`);
  return ((await res.json()) as { messages: Array<{ text: string }> }).messages.map((m) => m.text);
}

export async function until(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The newest audit row of a microapp's calls. */
export function lastAudit(run: DaemonDir, microapp: string) {
  return run.daemon.store.audit.tail({ microappId: microapp, limit: 1 }).entries[0];
}
