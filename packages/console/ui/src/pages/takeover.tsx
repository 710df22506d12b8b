/**
 * Takeover of one conversation: pause it (the agent stops answering; what the person sends is
 * held), answer as the operator, resume (the held messages are written to the transcript in the
 * order they came, and the agent answers again from the next message on).
 */
import { useMemo, useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { rpc } from "../api.js";
import { ActionButton, ErrorNote, useLoad, usePage } from "../components.js";
import { type AgentEvent, liveEvents, resyncs } from "../live.js";
import { EVENTS_PAGE, EventRow, mergeEvents } from "./events.js";

export function TakeoverPage() {
  const { query } = useLocation();
  const [form, setForm] = useState({
    agent: query.agent ?? "",
    channel: query.channel ?? "",
    account: query.account ?? "default",
    contact: query.contact ?? "",
    session: query.session ?? "",
  });
  const [scopeKey, setScopeKey] = useState(query.agent && query.contact ? JSON.stringify(form) : "");
  const input = (name: keyof typeof form) => ({
    name,
    value: form[name],
    onInput: (e: Event) => setForm({ ...form, [name]: (e.target as HTMLInputElement).value }),
  });
  return (
    <section>
      <h1>Takeover</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setScopeKey(JSON.stringify(form));
        }}
      >
        <label>
          agent <input {...input("agent")} required />
        </label>
        <label>
          channel <input {...input("channel")} required />
        </label>
        <label>
          account <input {...input("account")} required />
        </label>
        <label>
          contact <input {...input("contact")} required />
        </label>
        <label>
          session <input {...input("session")} placeholder="(for the summary)" />
        </label>
        <button type="submit">Open</button>
      </form>
      {scopeKey === "" ? null : <Conversation key={scopeKey} {...(JSON.parse(scopeKey) as typeof form)} />}
    </section>
  );
}

function Conversation(props: {
  agent: string;
  channel: string;
  account: string;
  contact: string;
  session: string;
}) {
  const scope = {
    kind: "conversation" as const,
    agent_id: props.agent,
    channel: props.channel,
    account_id: props.account,
    contact_id: props.contact,
  };
  const stream = `conversation:${props.agent}/${props.channel}/${props.account}/${props.contact}`;
  const [reply, setReply] = useState("");
  const [summary, setSummary] = useState("");
  const [note, setNote] = useState<string | undefined>(undefined);
  const state = useLoad(() => rpc("processing/state", { scope }), [stream, resyncs.value]);
  const [reading, setReading] = useState<number | undefined>(undefined);
  const stored = useLoad(async () => {
    const progress = (count: number) => setReading(count);
    const scopeEvents = await readStream(props.agent, stream, progress);
    const transcript = props.session === "" ? [] : await readStream(props.agent, props.session, progress);
    setReading(undefined);
    return [...scopeEvents, ...transcript];
  }, [stream, props.session, resyncs.value]);
  const live = liveEvents.value.filter((e) => e.session_id === stream || e.session_id === props.session);
  const events = useMemo(() => mergeEvents(stored.data ?? [], live), [stored.data, live]);
  const { rows, pager } = usePage(events, { size: EVENTS_PAGE, fromEnd: true });
  const paused = (state.data?.state as { state?: string } | undefined)?.state === "paused_by_operator";
  const reloadState = () => state.reload();

  return (
    <div class="card" data-testid="takeover">
      <p>
        <strong data-testid="takeover-state">
          {paused ? "paused by the operator" : "the agent answers"}
        </strong>
        {note === undefined ? null : <span class="note"> — {note}</span>}
      </p>
      <ErrorNote error={state.error ?? stored.error} />
      <div class="buttons">
        <ActionButton
          label="Pause"
          kind="danger"
          disabled={paused}
          action={async () => {
            await rpc("processing/pause", { scope, reason: "operator takeover from the console" });
            setNote("paused: the person's messages are held");
            reloadState();
          }}
        />
      </div>
      <label>
        reply as the operator
        <textarea
          name="reply"
          rows={2}
          value={reply}
          onInput={(e) => setReply((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      <ActionButton
        label="Send"
        kind="primary"
        disabled={!paused || reply.trim() === ""}
        action={async () => {
          await rpc("processing/intervention", {
            scope,
            action: {
              kind: "reply",
              channel: props.channel,
              account_id: props.account,
              to: props.contact,
              body: reply,
              msg_kind: "text",
            },
          });
          setReply("");
          setNote("reply sent");
        }}
      />
      <label>
        summary for the agent (optional)
        <input
          name="summary"
          value={summary}
          onInput={(e) => setSummary((e.target as HTMLInputElement).value)}
        />
      </label>
      <ActionButton
        label="Resume"
        disabled={!paused}
        action={async () => {
          const result = await rpc("processing/resume", {
            scope,
            ...(props.session === "" ? {} : { session_id: props.session }),
            ...(summary.trim() === "" || props.session === "" ? {} : { summary_for_agent: summary.trim() }),
          });
          setNote(`resumed; ${result.drained_pending ?? 0} held message(s) written to the transcript`);
          setSummary("");
          reloadState();
          stored.reload();
        }}
      />
      {reading === undefined ? null : (
        <p class="note" data-testid="takeover-reading">
          reading the conversation: {reading} events so far…
        </p>
      )}
      <ol class="events" data-testid="takeover-events">
        {rows.map((event) => (
          <EventRow key={`${event.session_id}#${event.seq}`} event={event} />
        ))}
      </ol>
      {pager}
    </div>
  );
}

/** The most agent_events/read returns at once. */
const READ_PAGE = 1000;

/**
 * One stream's stored events, all of them: agent_events/read pages from a seq on, oldest first, so
 * a long conversation takes several reads; `progress` is told the count after each.
 */
async function readStream(
  agent: string,
  sessionId: string,
  progress: (count: number) => void,
): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for (let since = 0; ; ) {
    const page = (await rpc("agent_events/read", {
      agent_id: agent,
      session_id: sessionId,
      since_seq: since,
      limit: READ_PAGE,
    })) as { events: AgentEvent[] };
    events.push(...page.events);
    progress(events.length);
    const last = page.events.at(-1);
    if (page.events.length < READ_PAGE || last === undefined) return events;
    since = last.seq;
  }
}
