/**
 * `nexo/admin/microapps/list` (plugin_doctor, read only): a nexo addition to the admin RPC — the
 * microapp host's view of every microapp of extensions.yaml, the refused and failed ones too, with
 * what each declares and what it was granted. Error messages and stderr lines are diagnostic text:
 * they pass the same scrub as a provider's error before they leave the daemon.
 */
import type { admin } from "@nexo/wire/schemas";
import type { MicroappStatus } from "../../extensions/microapps/manager.js";
import { scrubSecrets } from "../../store/index.js";
import { defineAdminDomain } from "../domain.js";

export const microappsDomain = defineAdminDomain({
  domain: "microapps",
  handlers: ({ microapps, now = Date.now }) =>
    microapps && {
      "nexo/admin/microapps/list": () => ({
        microapps: microapps.status().map(health),
        generated_at_ms: now(),
      }),
    },
});

/** One microapp as the wire shows it: the host's status in snake_case. */
function health(status: MicroappStatus): admin.MicroappHealth {
  const at = status.lastError === undefined ? Number.NaN : Date.parse(status.lastError.at);
  return {
    id: status.id,
    state: status.state,
    ...(status.pid === undefined ? {} : { pid: status.pid }),
    ...(status.version === undefined ? {} : { version: status.version }),
    restarts: status.restarts,
    tools: status.tools,
    hooks: status.hooks,
    capabilities: { declared: status.declared, granted: status.granted },
    warnings: status.warnings,
    ...(status.lastError === undefined
      ? {}
      : {
          last_error: {
            code: status.lastError.code,
            message: scrubSecrets(status.lastError.message),
            at_ms: Number.isFinite(at) ? at : 0,
          },
        }),
    stderr_tail: status.stderrTail.map(scrubSecrets),
  };
}
