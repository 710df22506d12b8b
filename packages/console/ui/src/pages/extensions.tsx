/**
 * Extension health: every plugin the daemon runs — state, pid, restarts, last error, stderr tail —
 * with a restart button (plugins/doctor and plugins/restart), and every microapp — state, pid,
 * restarts, last error, declared and granted capabilities (microapps/list, a nexo addition).
 * Microapps have no restart button: the admin RPC has no method for it (a microapp restarts when
 * its extensions.yaml entry changes and the daemon reloads, or by the host after a crash).
 */
import { useState } from "preact/hooks";
import { rpc } from "../api.js";
import { ActionButton, Empty, ErrorNote, time, useLoad } from "../components.js";

interface PluginHealth {
  id: string;
  state: string;
  version?: string;
  pid?: number;
  started_at_ms?: number;
  restarts: number;
  sandboxed?: boolean;
  tools: string[];
  warnings: string[];
  last_error?: string;
  stderr_tail: string[];
}

export function ExtensionsPage() {
  const doctor = useLoad(() => rpc("plugins/doctor"), []);
  const [note, setNote] = useState<string | undefined>(undefined);
  const plugins = ((doctor.data?.report as { plugins?: PluginHealth[] } | undefined)?.plugins ??
    []) as PluginHealth[];
  return (
    <section>
      <h1>Extensions</h1>
      <p class="note">
        Plugins as the daemon reports them{doctor.data ? `, ${time(doctor.data.generated_at_ms)}` : ""}.{" "}
        <button type="button" onClick={doctor.reload}>
          Refresh
        </button>
      </p>
      {note === undefined ? null : (
        <p class="note" data-testid="extensions-note">
          {note}
        </p>
      )}
      <ErrorNote error={doctor.error} />
      {plugins.length === 0 && doctor.data ? (
        <Empty>No plugins are configured.</Empty>
      ) : (
        <table data-testid="plugins">
          <thead>
            <tr>
              <th>plugin</th>
              <th>state</th>
              <th>pid</th>
              <th>up since</th>
              <th>restarts</th>
              <th>tools</th>
              <th>last error</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {plugins.map((plugin) => (
              <tr key={plugin.id} data-plugin={plugin.id}>
                <td>
                  {plugin.id}
                  {plugin.version ? <small> {plugin.version}</small> : null}
                  {plugin.sandboxed ? <small> · sandboxed</small> : null}
                </td>
                <td class={`state ${plugin.state}`}>{plugin.state}</td>
                <td>{plugin.pid ?? ""}</td>
                <td>{time(plugin.started_at_ms)}</td>
                <td>{plugin.restarts}</td>
                <td>{plugin.tools.length}</td>
                <td>
                  {plugin.last_error ?? ""}
                  {plugin.warnings.length > 0 ? <small> {plugin.warnings.join("; ")}</small> : null}
                  {plugin.stderr_tail.length > 0 ? (
                    <details>
                      <summary>stderr</summary>
                      <pre>{plugin.stderr_tail.join("\n")}</pre>
                    </details>
                  ) : null}
                </td>
                <td>
                  <ActionButton
                    label="Restart"
                    action={async () => {
                      const result = await rpc("plugins/restart", { plugin_id: plugin.id });
                      const outcome = result as typeof result & {
                        state?: string;
                        error?: { message?: string };
                      };
                      setNote(
                        `${result.plugin_id} restarted: ${outcome.state ?? "?"}${result.new_pid ? `, pid ${result.new_pid}` : ""}` +
                          `${outcome.error?.message ? ` (${outcome.error.message})` : ""}; it had run ${Math.round(result.previous_uptime_ms / 1000)} s`,
                      );
                      doctor.reload();
                    }}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Microapps />
    </section>
  );
}

function Microapps() {
  const list = useLoad(() => rpc("microapps/list"), []);
  const microapps = list.data?.microapps ?? [];
  return (
    <>
      <h2>Microapps</h2>
      <p class="note">
        A microapp restarts when its <code>extensions.yaml</code> entry changes and the daemon reloads, or by
        itself after a crash: the admin RPC has no restart method for microapps.{" "}
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </p>
      <ErrorNote error={list.error} />
      {microapps.length === 0 && list.data ? (
        <Empty>No microapps are configured.</Empty>
      ) : (
        <table data-testid="microapps">
          <thead>
            <tr>
              <th>microapp</th>
              <th>state</th>
              <th>pid</th>
              <th>restarts</th>
              <th>capabilities</th>
              <th>last error</th>
            </tr>
          </thead>
          <tbody>
            {microapps.map((app) => {
              const { declared, granted } = app.capabilities;
              const missing = declared.optional.filter((name) => !granted.includes(name));
              return (
                <tr key={app.id} data-microapp={app.id}>
                  <td>
                    {app.id}
                    {app.version ? <small> {app.version}</small> : null}
                  </td>
                  <td class={`state ${app.state}`}>{app.state}</td>
                  <td>{app.pid ?? ""}</td>
                  <td>{app.restarts}</td>
                  <td>
                    <span data-testid="granted">{granted.length} granted</span>
                    {missing.length > 0 ? <small> · not granted: {missing.join(", ")}</small> : null}
                    <details>
                      <summary>declared</summary>
                      <p>required: {declared.required.join(", ") || "none"}</p>
                      <p>optional: {declared.optional.join(", ") || "none"}</p>
                      <p>granted: {granted.join(", ") || "none"}</p>
                    </details>
                  </td>
                  <td>
                    {app.last_error ? `${app.last_error.message} (${time(app.last_error.at_ms)})` : ""}
                    {app.warnings.length > 0 ? <small> {app.warnings.join("; ")}</small> : null}
                    {app.stderr_tail.length > 0 ? (
                      <details>
                        <summary>stderr</summary>
                        <pre>{app.stderr_tail.join("\n")}</pre>
                      </details>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </>
  );
}
