/**
 * Escalations: who is waiting for a human. Resolve one by dismissing it (with a reason) or by
 * taking the conversation over (which pauses it and opens the takeover page).
 */
import { useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { rpc } from "../api.js";
import { ActionButton, Empty, ErrorNote, time, useLoad, usePage } from "../components.js";
import { resyncs } from "../live.js";

type Filter = "pending" | "resolved" | "all";

export function EscalationsPage() {
  const [filter, setFilter] = useState<Filter>("pending");
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const { route } = useLocation();
  const list = useLoad(() => rpc("escalations/list", { filter, limit: 1000 }), [filter, resyncs.value]);
  const { rows, pager } = usePage(list.data?.entries ?? []);

  return (
    <section>
      <h1>Escalations</h1>
      <div class="filters">
        <label>
          show{" "}
          <select
            name="filter"
            value={filter}
            onChange={(e) => setFilter((e.target as HTMLSelectElement).value as Filter)}
          >
            <option value="pending">pending</option>
            <option value="resolved">resolved</option>
            <option value="all">all</option>
          </select>
        </label>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ErrorNote error={list.error} />
      {rows.length === 0 ? (
        <Empty>Nobody is waiting for a human.</Empty>
      ) : (
        <table data-testid="escalations">
          <thead>
            <tr>
              <th>agent</th>
              <th>conversation</th>
              <th>summary</th>
              <th>reason</th>
              <th>urgency</th>
              <th>requested</th>
              <th>state</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {rows.map((entry) => {
              const scope = entry.scope as Record<string, string>;
              const key = JSON.stringify(scope);
              const state = entry.state as Record<string, unknown>;
              const pending = state.state === "pending";
              return (
                <tr key={key}>
                  <td>{entry.agent_id}</td>
                  <td>
                    {scope.kind === "conversation"
                      ? `${scope.channel} · ${scope.contact_id}`
                      : scope.scope_id}
                  </td>
                  <td>{String(state.summary ?? "")}</td>
                  <td>{String(state.reason ?? "")}</td>
                  <td>{String(state.urgency ?? "")}</td>
                  <td>{time(state.requested_at_ms as number | undefined)}</td>
                  <td>{String(state.state)}</td>
                  <td class="buttons">
                    {pending ? (
                      <>
                        <input
                          name="dismiss_reason"
                          placeholder="why dismissed"
                          value={reasons[key] ?? ""}
                          onInput={(e) =>
                            setReasons({ ...reasons, [key]: (e.target as HTMLInputElement).value })
                          }
                        />
                        <ActionButton
                          label="Dismiss"
                          disabled={(reasons[key] ?? "").trim() === ""}
                          action={async () => {
                            await rpc("escalations/resolve", {
                              scope: entry.scope,
                              by: "dismissed",
                              dismiss_reason: reasons[key]!.trim(),
                            });
                            list.reload();
                          }}
                        />
                        {scope.kind === "conversation" ? (
                          <ActionButton
                            label="Take over"
                            kind="danger"
                            action={async () => {
                              await rpc("escalations/resolve", { scope: entry.scope, by: "takeover" });
                              await rpc("processing/pause", {
                                scope: entry.scope,
                                reason: "escalation taken over",
                              });
                              route(
                                `/takeover?${new URLSearchParams({
                                  agent: scope.agent_id ?? "",
                                  channel: scope.channel ?? "",
                                  account: scope.account_id ?? "default",
                                  contact: scope.contact_id ?? "",
                                })}`,
                              );
                            }}
                          />
                        ) : null}
                      </>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {pager}
    </section>
  );
}
