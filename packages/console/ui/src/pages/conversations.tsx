/**
 * Live conversations: an agent's events as they happen. On open the page reads the stored events
 * back (agent_events/list, the newest BACKFILL) and then adds each live one; a lag notice or a
 * reconnect reads again, so nothing is missed. The list pages by EVENTS_PAGE from its end, which
 * follows new events; older ones than the backfill are found with Search. A person's message links
 * to taking that conversation over.
 */
import { useMemo, useState } from "preact/hooks";
import { rpc } from "../api.js";
import { Empty, ErrorNote, useLoad, usePage } from "../components.js";
import { type AgentEvent, liveEvents, resyncs } from "../live.js";
import { AgentPicker, useAgentChoice } from "./agent-picker.js";
import { EVENTS_PAGE, EventRow, mergeEvents } from "./events.js";

const BACKFILL = 200;

export function ConversationsPage() {
  const [agent, setAgent] = useAgentChoice();
  const [session, setSession] = useState<string | undefined>(undefined);
  const stored = useLoad(
    () =>
      agent === undefined
        ? Promise.resolve({ events: [] })
        : rpc("agent_events/list", { agent_id: agent, limit: BACKFILL }),
    [agent, resyncs.value],
  );
  const events = useMemo(
    () =>
      mergeEvents(
        (stored.data?.events ?? []) as AgentEvent[],
        liveEvents.value.filter((e) => e.agent_id === agent),
      ),
    [stored.data, liveEvents.value, agent],
  );
  const sessions = [...new Set(events.map((e) => e.session_id))];
  const shown = session === undefined ? events : events.filter((e) => e.session_id === session);
  const { rows, pager } = usePage(shown, { size: EVENTS_PAGE, fromEnd: true });

  return (
    <section>
      <h1>Live conversations</h1>
      <div class="filters">
        <AgentPicker value={agent} onChange={setAgent} />
        <label>
          conversation{" "}
          <select
            name="session"
            value={session ?? ""}
            onChange={(e) => setSession((e.target as HTMLSelectElement).value || undefined)}
          >
            <option value="">all ({sessions.length})</option>
            {sessions.map((id) => (
              <option key={id} value={id}>
                {id}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={stored.error} />
      {shown.length === 0 ? (
        <Empty>No events yet: they appear here as the agent works.</Empty>
      ) : (
        <ol class="events" data-testid="live-events">
          {rows.map((event) => (
            <EventRow
              key={`${event.session_id}#${event.seq}`}
              event={event}
              actions={
                event.kind === "transcript_appended" &&
                event.role === "user" &&
                typeof event.sender_id === "string" ? (
                  <a
                    class="take"
                    href={`/takeover?${new URLSearchParams({
                      agent: event.agent_id,
                      channel: String(event.source_plugin ?? ""),
                      contact: event.sender_id,
                      session: event.session_id,
                    })}`}
                  >
                    take over
                  </a>
                ) : null
              }
            />
          ))}
        </ol>
      )}
      {pager}
    </section>
  );
}
