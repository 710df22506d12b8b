/**
 * Live conversations: an agent's events as they happen, oldest at the top, in one scrolling list.
 * On open the page reads the newest stored events back (./event-history.ts) and then adds each
 * live one; a lag notice or a reconnect reads again, so nothing is missed. "Load earlier" at the
 * top reads the page before the oldest one held (the agent's, or the picked conversation's) and
 * puts it above, keeping in place what the operator was looking at. The list follows new events while it is scrolled to its end. A person's
 * message links to taking that conversation over.
 */
import { useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { Empty, ErrorNote } from "../components.js";
import { type AgentEvent, liveEvents, resyncs } from "../live.js";
import { AgentPicker, useAgentChoice } from "./agent-picker.js";
import { useEventHistory } from "./event-history.js";
import { EventRow, eventKey, mergeEvents } from "./events.js";

/** How close to its end (px) the list counts as at its end, and so follows new events. */
const AT_END = 24;

/** A row the operator was looking at, and how far below the list's top edge it was. */
interface Anchor {
  key: string;
  offset: number;
}

export function ConversationsPage() {
  const [agent, setAgent] = useAgentChoice();
  const [session, setSession] = useState<string | undefined>(undefined);
  const history = useEventHistory(agent, resyncs.value);
  const events = useMemo(
    () =>
      mergeEvents(
        history.events,
        liveEvents.value.filter((e) => e.agent_id === agent),
      ),
    [history.events, liveEvents.value, agent],
  );
  const sessions = [...new Set(events.map((e) => e.session_id))];
  const shown = useMemo(
    () => (session === undefined ? events : events.filter((e) => e.session_id === session)),
    [events, session],
  );

  // One conversation picked: "earlier" is that conversation's, before its oldest seq shown.
  const conversation = useMemo(
    () =>
      session === undefined || shown.length === 0
        ? undefined
        : { session, oldestSeq: Math.min(...shown.map((e) => e.seq)) },
    [session, shown],
  );
  const hasEarlier = history.hasEarlier(conversation);

  const list = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  const anchor = useRef<Anchor | undefined>(undefined);
  const [earlierError, setEarlierError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(false);

  // After each change of the rows. While an earlier page loads, the anchored row is put back where
  // it was on every render: live events may render before the page does, and the page goes in
  // above. The anchor is let go once the load ended (that render comes after the page's).
  // Otherwise a list at its end stays at its end (new events, the first page).
  useLayoutEffect(() => {
    const box = list.current;
    if (box === null) return;
    const kept = anchor.current;
    if (kept !== undefined) {
      const row = box.querySelector<HTMLElement>(`[data-key="${CSS.escape(kept.key)}"]`);
      if (row !== null) box.scrollTop = row.offsetTop - kept.offset;
      if (!loading) anchor.current = undefined;
    } else if (atEnd.current) box.scrollTop = box.scrollHeight;
  }, [shown, loading]);

  const loadEarlier = async () => {
    const box = list.current;
    if (box !== null) {
      // The first row still in sight is the one to keep in place.
      const rows = [...box.querySelectorAll<HTMLElement>("[data-key]")];
      const first = rows.find((row) => row.offsetTop + row.offsetHeight > box.scrollTop);
      if (first !== undefined)
        anchor.current = { key: first.dataset.key ?? "", offset: first.offsetTop - box.scrollTop };
    }
    setLoading(true);
    setEarlierError(undefined);
    try {
      await history.loadEarlier(conversation);
    } catch (failure) {
      setEarlierError(failure);
    } finally {
      setLoading(false);
    }
  };

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
      <ErrorNote error={history.error} />
      <div
        class="scroller"
        ref={list}
        data-testid="live-scroller"
        onScroll={(e) => {
          const box = e.currentTarget;
          atEnd.current = box.scrollHeight - box.scrollTop - box.clientHeight <= AT_END;
        }}
      >
        <div class="earlier">
          {hasEarlier ? (
            <button type="button" disabled={loading} onClick={loadEarlier}>
              {loading ? "Loading earlier events…" : "Load earlier"}
            </button>
          ) : events.length > 0 ? (
            <span class="note">
              {session === undefined
                ? "The oldest stored event."
                : "This conversation's oldest stored event."}
            </span>
          ) : null}
          <ErrorNote error={earlierError} />
        </div>
        {shown.length === 0 ? (
          <Empty>No events yet: they appear here as the agent works.</Empty>
        ) : (
          <ol class="events" data-testid="live-events" data-count={shown.length}>
            {shown.map((event) => (
              <EventRow key={eventKey(event)} event={event} actions={takeOver(event)} />
            ))}
          </ol>
        )}
      </div>
    </section>
  );
}

/** A person's message: the link that takes its conversation over. */
function takeOver(event: AgentEvent) {
  if (event.kind !== "transcript_appended" || event.role !== "user" || typeof event.sender_id !== "string")
    return null;
  return (
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
  );
}
