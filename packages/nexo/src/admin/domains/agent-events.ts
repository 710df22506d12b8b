/**
 * `nexo/admin/agent_events/*` (transcripts_read): the agent event log read back — an agent's events
 * newest first (`list`, paged back with `before` = the previous page's `next_before`, a nexo
 * addition), one stream after a seq (`read`, the resync after a missed live frame: the
 * seqs are the ones the live frames carried), and full-text search over the redacted transcript
 * lines (`search`, the transcripts' own index; narrowed by channel, role and time before ranking and
 * paged with `offset` — nexo additions to the spec's params).
 */
import { InvalidParamsError } from "@nexo/wire";
import * as admin from "@nexo/wire/schemas/admin";
import type { AgentEventPosition, StoredAgentEvent } from "../../store/index.js";
import { DEFAULT_AGENT_EVENTS_READ_LIMIT, MAX_AGENT_EVENTS_LIMIT } from "../../store/index.js";
import { defineAdminDomain } from "../domain.js";

export const DEFAULT_AGENT_EVENTS_SEARCH_LIMIT = 50;
export const MAX_AGENT_EVENTS_SEARCH_LIMIT = 500;

const clamp = (limit: number | undefined, fallback: number, max: number) =>
  Math.min(max, Math.max(1, limit || fallback));

export const agentEventsDomain = defineAdminDomain({
  domain: "agent_events",
  handlers: ({ agentEvents, transcripts, now = Date.now }) =>
    agentEvents &&
    transcripts && {
      "nexo/admin/agent_events/list": (params) => {
        const page = agentEvents.page({
          agentId: params.agent_id,
          sinceMs: params.since_ms ?? now() - admin.AGENT_EVENTS_LIST_DEFAULT_WINDOW_MS,
          limit: clamp(
            params.limit,
            admin.AGENT_EVENTS_LIST_DEFAULT_LIMIT,
            admin.AGENT_EVENTS_LIST_MAX_LIMIT,
          ),
          ...(params.kind === undefined ? {} : { kind: params.kind }),
          ...(params.tenant_id === undefined ? {} : { tenantId: params.tenant_id }),
          ...(params.before === undefined ? {} : { before: parseCursor(params.before) }),
        });
        return {
          events: page.events.map(wire),
          ...(page.next === undefined ? {} : { next_before: formatCursor(page.next) }),
        };
      },
      "nexo/admin/agent_events/read": (params) => ({
        // Another agent's stream reads as empty, exactly like an unknown one.
        events: agentEvents
          .read(params.session_id, {
            sinceSeq: params.since_seq ?? 0,
            limit: clamp(params.limit, DEFAULT_AGENT_EVENTS_READ_LIMIT, MAX_AGENT_EVENTS_LIMIT),
          })
          .filter((event) => event.agent_id === params.agent_id)
          .map(wire),
      }),
      "nexo/admin/agent_events/search": (params) => {
        // Only transcript lines are indexed: asking for another kind finds nothing.
        if (params.kind !== undefined && params.kind !== "transcript_appended") return { hits: [] };
        // Tool calls and results are stored inside the assistant's and user's lines, never as their own.
        if (params.role === "tool") return { hits: [] };
        const limit = clamp(params.limit, DEFAULT_AGENT_EVENTS_SEARCH_LIMIT, MAX_AGENT_EVENTS_SEARCH_LIMIT);
        const offset = params.offset ?? 0;
        // One more than asked: whether another page follows, without counting every match.
        const found = transcripts.search(params.query, {
          agentId: params.agent_id,
          limit: limit + 1,
          offset,
          ...(params.channel === undefined ? {} : { channel: params.channel }),
          ...(params.role === undefined ? {} : { role: params.role }),
          ...(params.since_ms === undefined ? {} : { sinceMs: params.since_ms }),
          ...(params.until_ms === undefined ? {} : { untilMs: params.until_ms }),
        });
        return {
          hits: found.slice(0, limit).map(({ entry, snippet, channel }) => ({
            session_id: entry.sessionId,
            timestamp_ms: Date.parse(entry.createdAt),
            role: entry.role,
            source_plugin: entry.sourcePlugin ?? "internal",
            snippet,
            ...(channel === null ? {} : { channel }),
          })),
          ...(found.length > limit ? { next_offset: offset + limit } : {}),
        };
      },
    },
});

/**
 * `next_before` / `before`: the page's oldest event as `<at_ms>:<row id>` (clients treat it as
 * opaque). The wire's schema has checked the form; a number past JavaScript's exact integers is
 * refused here, with the same -32602, rather than rounded onto another event.
 */
function formatCursor(position: AgentEventPosition): string {
  return `${position.atMs}:${position.id}`;
}

function parseCursor(cursor: string): AgentEventPosition {
  const [atMs, id] = cursor.split(":").map(Number);
  if (!Number.isSafeInteger(atMs) || !Number.isSafeInteger(id))
    throw new InvalidParamsError(
      `invalid params: before: not a cursor of agent_events/list: ${JSON.stringify(cursor)}`,
    );
  return { atMs: atMs as number, id: id as number };
}

/** The stored event as the wire carries it (`tenant_id: null` on single-tenant deployments). */
const wire = (event: StoredAgentEvent): admin.AgentEvent => event;
