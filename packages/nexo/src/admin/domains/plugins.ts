/**
 * `nexo/admin/plugins/*`: `doctor` (plugin_doctor, read only) is the plugin manager's view of every
 * plugin it loaded — also the invalid and failed ones, with why — and `restart` (plugin_restart, a
 * separate grant because it interrupts a plugin's work) stops one plugin's process and starts a new
 * one (manifest read again, bound channels started again). Every nexo plugin is a subprocess, so
 * only an unknown id is refused (-32602).
 */
import { InvalidParamsError } from "@nexo/wire";
import type { PluginStatus } from "../../extensions/plugins/manager.js";
import { defineAdminDomain } from "../domain.js";
import { viaService } from "../service-errors.js";

export const pluginsDomain = defineAdminDomain({
  domain: "plugins",
  handlers: ({ daemon, now = Date.now }) =>
    daemon && {
      "nexo/admin/plugins/doctor": () => ({
        report: { plugins: daemon.plugins.list().map(doctorEntry) },
        generated_at_ms: now(),
      }),

      "nexo/admin/plugins/restart": ({ plugin_id }) =>
        viaService(async () => {
          if (!daemon.plugins.list().some((plugin) => plugin.id === plugin_id))
            throw new InvalidParamsError(`invalid params: plugin_id: no plugin "${plugin_id}" is loaded`);
          const { before, after, restartedAt } = await daemon.plugins.restart(plugin_id);
          const uptime =
            before.startedAt === undefined ? 0 : restartedAt.getTime() - before.startedAt.getTime();
          return {
            plugin_id,
            previous_uptime_ms: Math.max(0, uptime),
            restarted_at_ms: restartedAt.getTime(),
            ...(after.pid === undefined ? {} : { new_pid: after.pid }),
            // Loose fields: whether the new process came up, and why not.
            state: after.state,
            ...(after.lastError === undefined || after.state === "running" ? {} : { error: after.lastError }),
          };
        }),
    },
});

/** One plugin as the report shows it: the manager's status in the wire's snake_case. */
function doctorEntry(plugin: PluginStatus) {
  return {
    id: plugin.id,
    source: plugin.source,
    state: plugin.state,
    ...(plugin.version === undefined ? {} : { version: plugin.version }),
    ...(plugin.pid === undefined ? {} : { pid: plugin.pid }),
    ...(plugin.startedAt === undefined ? {} : { started_at_ms: plugin.startedAt.getTime() }),
    restarts: plugin.restarts,
    ...(plugin.sandboxed === undefined ? {} : { sandboxed: plugin.sandboxed }),
    tools: plugin.tools,
    warnings: plugin.warnings,
    dropped_events: plugin.droppedEvents,
    ...(plugin.lastError === undefined ? {} : { last_error: plugin.lastError }),
    stderr_tail: plugin.stderrTail,
  };
}
