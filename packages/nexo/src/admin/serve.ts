/**
 * The admin RPC inside a running daemon: what `nexo start` composes into the daemon's microapps
 * component (`spec.microappRequests`). It builds the frame over the daemon's real subsystems — the
 * store's audit log and memory, the providers, the state dir's secrets, the operator token, the
 * daemon's notifications — and keeps the audit log within its retention (at start, then hourly).
 */

import { join } from "node:path";
import type { MicroappRequestServer } from "../daemon/components/microapps.js";
import { MemorySnapshots } from "../memory/snapshots.js";
import { rememberSecret } from "../secrets/index.js";
import { auditRetentionFromEnv, keepAuditBounded } from "./audit.js";
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
        memorySnapshots: new MemorySnapshots(store.memory, join(runtime.stateDir, MEMORY_SNAPSHOTS_DIR)),
        providers: runtime.providers,
        secrets: {
          stateDir: runtime.stateDir,
          env: runtime.configEnv,
          remember: (value) => void rememberSecret(value),
        },
        operatorToken: runtime.operatorToken,
        notify: (method, params) => runtime.notify(method, params),
      },
      env: runtime.env,
      logger,
      ...(options.domains ? { domains: options.domains } : {}),
    });
    const stopSweeping = keepAuditBounded(store.audit, retention, logger);
    return { serve: (identity, peer) => frame.serve(identity, peer), close: stopSweeping };
  };
}
