/**
 * The two loads the daemon benchmark puts through the loopback channel:
 *
 *   throughput — closed loop: each lane is one contact that posts "hello" and long-polls for the
 *                reply, again and again until the time is up; replies per second over all lanes.
 *   burst      — N distinct contacts post one message each at (nearly) the same moment, and every
 *                one of them must get exactly one correct reply.
 *
 * Every reply is checked (recipient, kind, the scripted model's text): a fast wrong answer
 * measures nothing.
 */
import { SCRIPTED_INTRO } from "../../packages/nexo/src/engine/providers/scripted-rules.js";
import type { LoopbackClient, LoopbackReply } from "./loopback-client.js";

/** What every contact says: a plain greeting the scripted model answers without a tool. */
export const GREETING = "hello";
/** The longest one long-poll waits; below the plugin's LOOPBACK_MAX_WAIT_MS (30 s). */
const POLL_MS = 10_000;

export interface LoadErrors {
  /** Requests the channel refused or that failed on the wire. */
  http: number;
  /** Messages posted whose reply never came. */
  lost: number;
  /** Replies to the wrong contact, of the wrong kind, or not the scripted model's answer. */
  wrong: number;
  /** Replies beyond the one each message should get (a message routed twice). */
  duplicate: number;
  /** The first few error messages, for the report. */
  first: string[];
}

function noErrors(): LoadErrors {
  return { http: 0, lost: 0, wrong: 0, duplicate: 0, first: [] };
}

/** Several runs' errors as one account. */
export function mergeErrors(runs: readonly LoadErrors[]): LoadErrors {
  const merged = noErrors();
  for (const e of runs) {
    merged.http += e.http;
    merged.lost += e.lost;
    merged.wrong += e.wrong;
    merged.duplicate += e.duplicate;
    merged.first.push(...e.first.slice(0, 5 - merged.first.length));
  }
  return merged;
}

export function errorCount(errors: LoadErrors): number {
  return errors.http + errors.lost + errors.wrong + errors.duplicate;
}

function note(errors: LoadErrors, message: string): void {
  if (errors.first.length < 5) errors.first.push(message);
}

function isExpected(reply: LoopbackReply, contact: string): boolean {
  return reply.to === contact && reply.kind === "text" && (reply.text ?? "").startsWith(SCRIPTED_INTRO);
}

/** Long-polls until `contact` has a reply or `deadline` (performance.now()) passes; [] then. */
async function awaitReplies(
  client: LoopbackClient,
  contact: string,
  deadline: number,
): Promise<LoopbackReply[]> {
  for (;;) {
    const left = Math.floor(deadline - performance.now());
    if (left <= 0) return [];
    const replies = await client.poll(contact, Math.min(left, POLL_MS));
    if (replies.length > 0) return replies;
  }
}

/** Checks the replies one message got; true when it got exactly the one right reply. */
function judge(errors: LoadErrors, contact: string, replies: LoopbackReply[]): boolean {
  if (replies.length === 0) {
    errors.lost++;
    note(errors, `no reply for ${contact}`);
    return false;
  }
  if (replies.length > 1) {
    errors.duplicate += replies.length - 1;
    note(errors, `${replies.length} replies for one message of ${contact}`);
  }
  const first = replies[0]!;
  if (!isExpected(first, contact)) {
    errors.wrong++;
    note(errors, `unexpected reply for ${contact}: ${JSON.stringify(first).slice(0, 200)}`);
    return false;
  }
  return replies.length === 1;
}

export interface ThroughputResult {
  /** Correct replies received per second, all lanes together. */
  rate: number;
  /** Messages the channel accepted. */
  posted: number;
  replies: number;
  seconds: number;
  errors: LoadErrors;
}

/**
 * Keeps `lanes` contacts talking for `seconds`: each posts, waits for its reply, and posts again.
 * Lanes stop starting messages at the deadline; the ones in flight are waited for and counted.
 * A lane that meets an error stops (a failing request must not spin).
 */
export async function throughput(
  client: LoopbackClient,
  options: { lanes: number; seconds: number; contactPrefix: string; replyTimeoutMs: number },
): Promise<ThroughputResult> {
  const errors = noErrors();
  let posted = 0;
  let replies = 0;
  const start = performance.now();
  const deadline = start + options.seconds * 1000;
  const lane = async (contact: string) => {
    while (performance.now() < deadline) {
      try {
        await client.post(contact, GREETING);
        posted++;
        const got = await awaitReplies(client, contact, performance.now() + options.replyTimeoutMs);
        if (!judge(errors, contact, got)) return;
        replies++;
      } catch (error) {
        errors.http++;
        note(errors, (error as Error).message);
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: options.lanes }, (_, i) => lane(`${options.contactPrefix}-${i}`)));
  const seconds = (performance.now() - start) / 1000;
  return { rate: replies / seconds, posted, replies, seconds, errors };
}

export interface BurstResult {
  sessions: number;
  /** Messages the channel accepted. */
  posted: number;
  /** Contacts that got exactly one correct reply. */
  ok: number;
  errors: LoadErrors;
  /** From the first POST until every POST was accepted. */
  postSeconds: number;
  /** From the first POST until the last reply arrived (or was given up). */
  seconds: number;
}

/**
 * Every contact posts one message; POSTs go out `postConcurrency` at a time (a thousand TCP
 * handshakes at once would measure the kernel's accept queue, not the daemon). Each contact
 * starts long-polling as soon as its POST is accepted, so a thousand polls wait at once. At the
 * end every contact is asked once more, without waiting, to catch a second reply.
 */
export async function burst(
  client: LoopbackClient,
  options: { contacts: readonly string[]; postConcurrency: number; replyTimeoutMs: number },
): Promise<BurstResult> {
  const errors = noErrors();
  let posted = 0;
  const ok = new Set<string>();
  const start = performance.now();
  const deadline = start + options.replyTimeoutMs;
  const collectors: Array<Promise<void>> = [];
  const collect = async (contact: string) => {
    try {
      if (judge(errors, contact, await awaitReplies(client, contact, deadline))) ok.add(contact);
    } catch (error) {
      errors.http++;
      note(errors, (error as Error).message);
    }
  };
  let next = 0;
  const poster = async () => {
    while (next < options.contacts.length) {
      const contact = options.contacts[next++]!;
      try {
        await client.post(contact, GREETING);
        posted++;
        collectors.push(collect(contact));
      } catch (error) {
        errors.http++;
        note(errors, (error as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: options.postConcurrency }, poster));
  const postSeconds = (performance.now() - start) / 1000;
  await Promise.all(collectors);
  const seconds = (performance.now() - start) / 1000;

  // A message routed twice would leave a second reply behind: look for leftovers.
  let swept = 0;
  const sweeper = async () => {
    while (swept < options.contacts.length) {
      const contact = options.contacts[swept++]!;
      try {
        const extra = await client.poll(contact, 0);
        if (extra.length > 0) {
          ok.delete(contact);
          errors.duplicate += extra.length;
          note(errors, `${extra.length} extra replies for ${contact}`);
        }
      } catch (error) {
        errors.http++;
        note(errors, (error as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: options.postConcurrency }, sweeper));
  return { sessions: options.contacts.length, posted, ok: ok.size, errors, postSeconds, seconds };
}

/**
 * Calls `probe` every `everyMs` until stopped (never two at once); `stop` resolves after the last
 * probe, which runs once more at the end so the final state is seen, and rejects with the first
 * error a probe threw (probing ends there).
 */
export function every(everyMs: number, probe: () => Promise<void> | void): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      await probe();
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    await probe();
  })();
  // Reported by `stop`; until then a failed probe must not crash the process as unhandled.
  loop.catch(() => undefined);
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
