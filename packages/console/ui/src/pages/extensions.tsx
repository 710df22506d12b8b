/**
 * Extension health: every plugin the daemon runs — state, pid, restarts, last error, stderr tail —
 * with a restart button (plugins/doctor and plugins/restart), and every microapp — state, pid,
 * restarts, last error, declared and granted capabilities — with a restart button too
 * (microapps/list and microapps/restart, nexo additions). Restarting the console itself ends every
 * browser session, this page's included: its button asks first, and the page then says how to
 * come back (the daemon answers before it restarts the console, so the answer always arrives).
 */
import { useState } from "preact/hooks";
import { rpc, session } from "../api.js";
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
      <Microapps report={setNote} />
    </section>
  );
}

function Microapps({ report }: { report: (note: string) => void }) {
  const list = useLoad(() => rpc("microapps/list"), []);
  const microapps = list.data?.microapps ?? [];
  const self = session.value?.id;
  const [confirming, setConfirming] = useState(false);
  const restart = async (id: string) => {
    const result = await rpc("microapps/restart", { microapp_id: id });
    if (result.deferred) {
      report(
        `The console is restarting (it ran as pid ${result.previous_pid ?? "?"}): this page has lost its ` +
          "connection and every browser session has ended. Open the login URL again — `nexo console url` " +
          "prints it (the port is new unless the console's `port` is set).",
      );
      setConfirming(false);
      return;
    }
    report(
      `${result.microapp_id} restarted: ${result.state}${result.new_pid ? `, pid ${result.new_pid}` : ""}` +
        `${result.error ? ` (${result.error.message})` : ""}` +
        `${result.previous_pid ? `; it was pid ${result.previous_pid}` : ""}`,
    );
    list.reload();
  };
  return (
    <>
      <h2>Microapps</h2>
      <p class="note">
        Restart stops a microapp's process and starts a new one with its <code>extensions.yaml</code> entry as
        it is (a failed one gets a fresh start; a refused one needs its grant changed there).{" "}
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
              <th />
            </tr>
          </thead>
          <tbody>
            {microapps.map((app) => {
              const { declared, granted } = app.capabilities;
              const missing = declared.optional.filter((name) => !granted.includes(name));
              const itself = app.id === self;
              return (
                <tr key={app.id} data-microapp={app.id}>
                  <td>
                    {app.id}
                    {app.version ? <small> {app.version}</small> : null}
                    {itself ? <small> · this console</small> : null}
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
                  <td>
                    {!itself ? (
                      <ActionButton label="Restart" action={() => restart(app.id)} />
                    ) : confirming ? (
                      <span data-testid="restart-self">
                        <small>Every browser session ends, this one included. </small>
                        <ActionButton
                          label="Restart the console"
                          kind="danger"
                          action={() => restart(app.id)}
                        />{" "}
                        <button type="button" onClick={() => setConfirming(false)}>
                          Cancel
                        </button>
                      </span>
                    ) : (
                      <button type="button" onClick={() => setConfirming(true)}>
                        Restart
                      </button>
                    )}
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
