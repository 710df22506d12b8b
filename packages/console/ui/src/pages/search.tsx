/**
 * Transcript search: the daemon's full-text index over an agent's (redacted) transcript lines,
 * best match first, narrowed here by channel, role and time.
 */
import { useState } from "preact/hooks";
import { rpc } from "../api.js";
import { Empty, ErrorNote, time, useLoad, usePage } from "../components.js";
import { AgentPicker, useAgentChoice } from "./agent-picker.js";

const LIMIT = 500;

/** The daemon marks matched words «like this». */
function Snippet({ text }: { text: string }) {
  return (
    <>
      {text
        .split(/(«[^»]*»)/)
        .map((part, i) => (part.startsWith("«") ? <mark key={i}>{part.slice(1, -1)}</mark> : part))}
    </>
  );
}

export function SearchPage() {
  const [agent, setAgent] = useAgentChoice();
  const [draft, setDraft] = useState({ query: "", channel: "", role: "", from: "", to: "" });
  const [asked, setAsked] = useState(draft);
  const hits = useLoad(
    () =>
      agent === undefined || asked.query.trim() === ""
        ? Promise.resolve(undefined)
        : rpc("agent_events/search", { agent_id: agent, query: asked.query.trim(), limit: LIMIT }),
    [agent, asked.query],
  );
  const from = asked.from === "" ? 0 : Date.parse(asked.from);
  const to = asked.to === "" ? Number.POSITIVE_INFINITY : Date.parse(asked.to) + 24 * 3600 * 1000;
  const matching = (hits.data?.hits ?? []).filter(
    (hit) =>
      (asked.channel === "" || hit.source_plugin === asked.channel) &&
      (asked.role === "" || hit.role === asked.role) &&
      hit.timestamp_ms >= from &&
      hit.timestamp_ms < to,
  );
  const { rows, pager } = usePage(matching);
  const input = (name: keyof typeof draft) => ({
    name,
    value: draft[name],
    onInput: (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value }),
  });

  return (
    <section>
      <h1>Transcript search</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setAsked(draft);
        }}
      >
        <AgentPicker value={agent} onChange={setAgent} />
        <label>
          words <input {...input("query")} placeholder='kettle, "a phrase", ship*' required />
        </label>
        <label>
          channel <input {...input("channel")} placeholder="loopback, internal…" />
        </label>
        <label>
          role{" "}
          <select {...input("role")}>
            <option value="">any</option>
            <option value="user">user</option>
            <option value="assistant">assistant</option>
            <option value="system">system</option>
          </select>
        </label>
        <label>
          from <input type="date" {...input("from")} />
        </label>
        <label>
          to <input type="date" {...input("to")} />
        </label>
        <button type="submit" class="primary">
          Search
        </button>
      </form>
      <ErrorNote error={hits.error} />
      {hits.data === undefined ? null : matching.length === 0 ? (
        <Empty>No transcript line matches.</Empty>
      ) : (
        <table data-testid="search-hits">
          <thead>
            <tr>
              <th>when</th>
              <th>role</th>
              <th>channel</th>
              <th>line</th>
              <th>conversation</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((hit) => (
              <tr key={`${hit.session_id}:${hit.timestamp_ms}:${hit.snippet}`}>
                <td>{time(hit.timestamp_ms)}</td>
                <td>{hit.role}</td>
                <td>{hit.source_plugin}</td>
                <td>
                  <Snippet text={hit.snippet} />
                </td>
                <td>
                  <a href={`/live?agent=${encodeURIComponent(agent ?? "")}`}>{hit.session_id.slice(0, 8)}</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pager}
    </section>
  );
}
