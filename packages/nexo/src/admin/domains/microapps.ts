/**
 * `nexo/admin/microapps/*`, nexo additions to the admin RPC. `list` (plugin_doctor, read only): the
 * microapp host's view of every microapp of extensions.yaml, the refused and failed ones too, with
 * what each declares and what it was granted. `restart` (plugin_restart, the grant that already
 * lets an operator's tool interrupt a plugin): one microapp's process stopped and a new one
 * started. Error messages and stderr lines are diagnostic text: they pass the same scrub as a
 * provider's error before they leave the daemon.
 *
 * A microapp restarting itself (the console's own restart button) cannot be answered after the
 * restart — the answer would go to a process that is gone — so it is answered at once
 * (`deferred: true`) and the restart begins once that answer is on its pipe: the answer is handed
 * to the pipe in the promise reactions that follow this handler, the restart is queued behind them
 * (setImmediate), and the `shutdown` request that starts the stop goes down the same pipe after it.
 */
import { InvalidParamsError } from "@nexo/wire";
import * as admin from "@nexo/wire/schemas/admin";
import type { MicroappStatus } from "../../extensions/microapps/manager.js";
import { scrubSecrets } from "../../store/index.js";
import { defineAdminDomain } from "../domain.js";

export const microappsDomain = defineAdminDomain({
  domain: "microapps",
  handlers: ({ microapps, now = Date.now }, { logger }) =>
    microapps && {
      "nexo/admin/microapps/list": () => ({
        microapps: microapps.status().map(health),
        generated_at_ms: now(),
      }),

      ...(microapps.restart === undefined
        ? {}
        : {
            "nexo/admin/microapps/restart": async ({ microapp_id }, call) => {
              const restart = microapps.restart!.bind(microapps);
              const before = microapps.status().find((status) => status.id === microapp_id);
              if (before === undefined)
                throw new InvalidParamsError(
                  `invalid params: microapp_id: no microapp "${microapp_id}" in extensions.yaml`,
                );
              const restartedAt = now();
              const previous = before.pid === undefined ? {} : { previous_pid: before.pid };
              if (microapp_id === call.microappId) {
                setImmediate(() => {
                  restart(microapp_id).catch((error: Error) =>
                    logger.error({ microapp: microapp_id, err: error.message }, "microapp restart failed"),
                  );
                });
                return {
                  microapp_id,
                  ...previous,
                  restarted_at_ms: restartedAt,
                  deferred: true,
                  state: admin.MICROAPP_RESTART_DEFERRED_STATE,
                };
              }
              const after = await restart(microapp_id);
              // Removed from extensions.yaml by a reload while it restarted.
              if (after === undefined)
                throw new InvalidParamsError(
                  `invalid params: microapp_id: no microapp "${microapp_id}" in extensions.yaml`,
                );
              return {
                microapp_id,
                ...previous,
                restarted_at_ms: restartedAt,
                deferred: false,
                state: after.state,
                ...(after.pid === undefined ? {} : { new_pid: after.pid }),
                ...(after.state === "running" || after.lastError === undefined
                  ? {}
                  : {
                      error: { code: after.lastError.code, message: scrubSecrets(after.lastError.message) },
                    }),
              };
            },
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
