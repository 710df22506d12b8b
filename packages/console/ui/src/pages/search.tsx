/**
 * Transcript search: the daemon's full-text index over an agent's (redacted) transcript lines,
 * best match first, narrowed by channel, role and dates by the daemon itself (before ranking) and
 * paged by it (`offset` / `next_offset`), so every match is reachable however many there are.
 */
import { useState } from "preact/hooks";
import { rpc } from "../api.js";
import { Empty, ErrorNote, Pager, time, useLoad } from "../components.js";
import { AgentPicker, useAgentChoice } from "./agent-picker.js";

const PAGE = 20;
const DAY_MS = 24 * 3600 * 1000;

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
  // The offsets of the pages seen so far: the last is the page shown.
  const [offsets, setOffsets] = useState<number[]>([0]);
  const offset = offsets[offsets.length - 1] ?? 0;
  const hits = useLoad(() => {
    if (agent === undefined || asked.query.trim() === "") return Promise.resolve(undefined);
    const channel = asked.channel.trim();
    return rpc("agent_events/search", {
      agent_id: agent,
      query: asked.query.trim(),
      limit: PAGE,
      offset,
      ...(channel === "" ? {} : { channel }),
      ...(asked.role === "" ? {} : { role: asked.role as "user" | "assistant" | "system" }),
      ...(asked.from === "" ? {} : { since_ms: Date.parse(asked.from) }),
      ...(asked.to === "" ? {} : { until_ms: Date.parse(asked.to) + DAY_MS }),
    });
  }, [agent, asked, offset]);
  const rows = hits.data?.hits ?? [];
  const next = hits.data?.next_offset;
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
          setOffsets([0]);
        }}
      >
        <AgentPicker value={agent} onChange={setAgent} />
        <label>
          words <input {...input("query")} placeholder='kettle, "a phrase", ship*' required />
        </label>
        <label>
          channel <input {...input("channel")} placeholder="loopback, telegram…" />
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
      {hits.data === undefined ? null : rows.length === 0 ? (
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
                <td>{hit.channel ?? hit.source_plugin}</td>
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
      {offsets.length === 1 && next === undefined ? null : (
        <Pager
          label={`hits ${offset + 1}–${offset + rows.length}`}
          onPrevious={offsets.length > 1 ? () => setOffsets(offsets.slice(0, -1)) : undefined}
          onNext={next === undefined ? undefined : () => setOffsets([...offsets, next])}
        />
      )}
    </section>
  );
}
