/**
 * The admin RPC inside a running daemon: what `nexo start` composes into the daemon's microapps
 * component (`spec.microappRequests`). It builds the frame over the daemon's real subsystems — the
 * store's audit log and memory, the providers, the state dir's secrets, the operator token, the
 * daemon's notifications — and keeps the audit log within its retention (at start, then hourly).
 */

import { join } from "node:path";
import type { MicroappRequestServer } from "../daemon/components/microapps.js";
import type { Logger } from "../log.js";
import { MemorySnapshots } from "../memory/snapshots.js";
import { rememberSecret } from "../secrets/index.js";
import type { AgentEventRepository } from "../store/index.js";
import { AgentEventFirehose, DEFAULT_AGENT_EVENTS_QUEUE } from "./agent-event-firehose.js";
import {
  AUDIT_SWEEP_INTERVAL_MS,
  auditRetentionFromEnv,
  keepAuditBounded,
  sweepNowAndEvery,
} from "./audit.js";
import type { AdminDomainModule } from "./domain.js";
import { AdminFrame } from "./frame.js";

/** Where memory snapshots are kept, under the state dir. */
export const MEMORY_SNAPSHOTS_DIR = "memory-snapshots";

export interface AdminRpcOptions {
  /** Default: every domain nexo has. */
  domains?: readonly AdminDomainModule[];
}

/**
 * Throws (when the daemon starts its microapps) for a kill switch or a retention variable that
 * is not a valid value, naming the variable.
 */
export function adminRpc(options: AdminRpcOptions = {}): MicroappRequestServer {
  return (runtime) => {
    const { store, logger } = runtime;
    const retention = auditRetentionFromEnv(runtime.env);
    if (runtime.env.NEXO_MICROAPP_ADMIN_AUDIT_DB)
      logger.warn(
        { audit: store.path },
        "NEXO_MICROAPP_ADMIN_AUDIT_DB is not read: the admin audit log lives in the daemon's database",
      );
    const frame = new AdminFrame({
      services: {
        audit: store.audit,
        daemon: runtime.services,
        memory: store.memory,
        agentEvents: store.agentEvents,
        transcripts: store.transcripts,
        memorySnapshots: new MemorySnapshots(store.memory, join(runtime.stateDir, MEMORY_SNAPSHOTS_DIR)),
        providers: runtime.providers,
        secrets: {
          stateDir: runtime.stateDir,
          env: runtime.configEnv,
          remember: (value) => void rememberSecret(value),
        },
        operatorToken: runtime.operatorToken,
        microapps: { status: () => runtime.status(), restart: (id) => runtime.restart(id) },
        notify: (method, params) => runtime.notify(method, params),
      },
      env: runtime.env,
      logger,
      ...(options.domains ? { domains: options.domains } : {}),
    });
    const stopSweeping = keepAuditBounded(store.audit, retention, logger);
    const stopPruning = keepAgentEventsBounded(store.agentEvents, runtime.agentEventRetentionDays, logger);
    const firehose = agentEventsFirehose(runtime);
    return {
      serve: (identity, peer) => frame.serve(identity, peer),
      served: () => frame.served(),
      close: () => {
        firehose?.close();
        stopSweeping();
        stopPruning();
        frame.close();
      },
    };
  };
}

const DAY_MS = 86_400_000;

/**
 * Deletes agent events older than `days` (daemon.yaml `agent_events.retention_days`) at start and
 * hourly, in batches until none is left; the newest event of each stream stays, so its seq keeps
 * counting. Returns the stop.
 */
export function keepAgentEventsBounded(
  events: Pick<AgentEventRepository, "prune">,
  days: number,
  logger: Pick<Logger, "info" | "error">,
  intervalMs = AUDIT_SWEEP_INTERVAL_MS,
  now: () => number = Date.now,
): () => void {
  return sweepNowAndEvery(() => {
    try {
      let deleted = 0;
      for (
        let batch = events.prune(now() - days * DAY_MS);
        batch > 0;
        batch = events.prune(now() - days * DAY_MS)
      )
        deleted += batch;
      if (deleted > 0)
        logger.info({ deleted, retentionDays: days }, "agent events past their retention deleted");
    } catch (error) {
      logger.error({ err: (error as Error).message }, "agent event retention sweep failed");
    }
  }, intervalMs);
}

/**
 * The live agent events, unless NEXO_MICROAPP_AGENT_EVENTS_ENABLED=0 turns the firehose off (the
 * log is still written and agent_events/* still reads it). NEXO_MICROAPP_AGENT_EVENTS_QUEUE bounds
 * each microapp's queue (default 256).
 */
function agentEventsFirehose(runtime: Parameters<MicroappRequestServer>[0]): AgentEventFirehose | undefined {
  const enabled = runtime.env.NEXO_MICROAPP_AGENT_EVENTS_ENABLED;
  if (enabled !== undefined && enabled !== "1" && enabled !== "0")
    throw new Error(`NEXO_MICROAPP_AGENT_EVENTS_ENABLED must be 0 or 1, got ${JSON.stringify(enabled)}`);
  if (enabled === "0") return undefined;
  const rawQueue = runtime.env.NEXO_MICROAPP_AGENT_EVENTS_QUEUE;
  const capacity = rawQueue === undefined ? DEFAULT_AGENT_EVENTS_QUEUE : Number(rawQueue);
  if (!Number.isInteger(capacity) || capacity < 1)
    throw new Error(
      `NEXO_MICROAPP_AGENT_EVENTS_QUEUE must be a positive integer, got ${JSON.stringify(rawQueue)}`,
    );
  return new AgentEventFirehose({
    events: runtime.store.agentEvents,
    outlets: () => runtime.outlets(),
    capacity,
    logger: runtime.logger,
  });
}
