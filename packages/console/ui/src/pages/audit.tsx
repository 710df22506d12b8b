/**
 * The audit log: every admin call any microapp made — the console's own included — granted,
 * denied or failed, newest first, filtered and paged by the daemon.
 */
import { useState } from "preact/hooks";
import { rpc } from "../api.js";
import { ErrorNote, Pager, time, useLoad } from "../components.js";
import { resyncs } from "../live.js";

const PAGE = 50;

export function AuditPage() {
  const [draft, setDraft] = useState({ microapp_id: "", method: "", result: "", since_mins: "" });
  const [filter, setFilter] = useState(draft);
  const [offset, setOffset] = useState(0);
  const tail = useLoad(
    () =>
      rpc("microapp_audit/tail", {
        limit: PAGE,
        offset,
        ...(filter.microapp_id === "" ? {} : { microapp_id: filter.microapp_id }),
        ...(filter.method === "" ? {} : { method: filter.method }),
        ...(filter.result === "" ? {} : { result: filter.result as "ok" | "error" | "denied" }),
        ...(filter.since_mins === "" ? {} : { since_ms: Date.now() - Number(filter.since_mins) * 60_000 }),
      }),
    [filter, offset, resyncs.value],
  );
  const input = (name: keyof typeof draft) => ({
    name,
    value: draft[name],
    onInput: (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value }),
  });
  const total = tail.data?.total ?? 0;
  return (
    <section>
      <h1>Audit log</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setFilter(draft);
        }}
      >
        <label>
          microapp <input {...input("microapp_id")} />
        </label>
        <label>
          method <input {...input("method")} placeholder="nexo/admin/agents/upsert" />
        </label>
        <label>
          result{" "}
          <select {...input("result")}>
            <option value="">any</option>
            <option value="ok">ok</option>
            <option value="denied">denied</option>
            <option value="error">error</option>
          </select>
        </label>
        <label>
          last minutes <input {...input("since_mins")} type="number" min="1" />
        </label>
        <button type="submit" class="primary">
          Filter
        </button>
        <button type="button" onClick={tail.reload}>
          Refresh
        </button>
      </form>
      <ErrorNote error={tail.error} />
      <table data-testid="audit">
        <thead>
          <tr>
            <th>when</th>
            <th>microapp</th>
            <th>method</th>
            <th>capability</th>
            <th>result</th>
            <th>code</th>
            <th>ms</th>
          </tr>
        </thead>
        <tbody>
          {(tail.data?.entries ?? []).map((row) => (
            <tr key={`${row.started_at_ms}:${row.method}:${row.args_hash}`} class={`result ${row.result}`}>
              <td>{time(row.started_at_ms)}</td>
              <td>{row.microapp_id}</td>
              <td>{row.method}</td>
              <td>{row.capability}</td>
              <td>{row.result}</td>
              <td>{row.error_code ?? ""}</td>
              <td>{row.duration_ms}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager
        label={total === 0 ? "no rows" : `${offset + 1}–${Math.min(offset + PAGE, total)} of ${total}`}
        onPrevious={offset > 0 ? () => setOffset(Math.max(0, offset - PAGE)) : undefined}
        onNext={tail.data?.has_more ? () => setOffset(offset + PAGE) : undefined}
      />
    </section>
  );
}
