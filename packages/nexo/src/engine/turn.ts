/**
 * One turn: the user's message in, events out (published through the session's hub, never waiting
 * for readers), and a consistent history.
 *
 * The loop calls the model (turn-model.ts), runs the tool calls it asks for in parallel, each
 * through hooks and approval (turn-tools.ts), feeds the results back, and repeats until the model
 * stops asking for tools or `maxTurns` model calls have been made. Whatever happens — a provider
 * error, a denial, a cancellation — every tool call in the history gets its result, so the next
 * request to the model is always valid.
 */
import { LlmContextOverflowError } from "@nexo/wire";
import { compact, compactionCut, needsCompaction } from "./compaction.js";
import type { TurnEndReason, TurnEvent, TurnInput, TurnOutcome } from "./events.js";
import type { MidTurnEvent } from "./thread-hub.js";
import { callModel, type ModelReply, providerErrorEvent } from "./turn-model.js";
import { estimateRequestTokens, type TurnRun } from "./turn-run.js";
import { runToolCalls } from "./turn-tools.js";
import type { ContentBlock } from "./types.js";

/** How the turn's work ended, before `before_reply` hooks had their say. */
interface WorkOutcome {
  reason: TurnEndReason;
  /** The model's last text, when the turn completed. */
  reply?: string;
}

/** Runs the turn to its end; resolves with how it ended (after `turn_end` was published). */
export async function runTurn(run: TurnRun, turnInput: TurnInput): Promise<TurnOutcome> {
  const { session, turnId, signal } = run;
  let reason: TurnEndReason = "error";
  let reply: string | undefined;
  run.start({ type: "turn_start", turnId, input: turnInput });
  try {
    ({ reason, reply } = await work(run, turnInput));
    // Whatever the turn appended since its last write is kept before anyone hears it ended.
    if (session.unflushed) await session.flush();
  } catch (error) {
    // A bug or an unexpected failure: report it, keep the session usable.
    session.logger?.error({ err: (error as Error).stack, turnId }, "turn failed unexpectedly");
    run.emit({
      type: "error",
      turnId,
      failure: "internal",
      message: (error as Error).message,
      retryable: false,
    });
    reason = signal.aborted ? "cancelled" : "error";
    reply = undefined;
    await flushAfterFailure(run);
  } finally {
    run.emit({ type: "usage", turnId, turn: run.usage, session: session.usage });
    // Built without a conditional spread (a throw-away object and V8's slow copy path per turn).
    const end: TurnEvent & { type: "turn_end" } = { type: "turn_end", turnId, reason, usage: run.usage };
    if (reply !== undefined) end.reply = reply;
    run.end(end);
  }
  const outcome: TurnOutcome = { turnId, reason, usage: run.usage };
  if (reply !== undefined) outcome.reply = reply;
  return outcome;
}

/** The turn's work: hooks on the input, then model calls and tool calls until the model is done. */
async function work(run: TurnRun, turnInput: TurnInput): Promise<WorkOutcome> {
  const { session, turnId, signal } = run;
  let input = turnInput.content;
  let reason: TurnEndReason = "completed";
  let lastText: string | undefined;
  // Hook: before the message is handled.
  if (!turnInput.alreadyStored && session.hooks?.has("before_message")) {
    const textIn = input
      .filter((b) => b.type === "text")
      .map((b) => (b as { text: string }).text)
      .join("\n");
    const outcome = await session.hooks.run("before_message", { text: textIn }, session.hookContext);
    if (outcome.decision === "block") {
      run.emit({ type: "info", turnId, message: `message blocked by ${outcome.by}: ${outcome.reason}` });
      return { reason: "blocked" };
    }
    if (typeof outcome.payload.text === "string" && outcome.payload.text !== textIn) {
      input = [{ type: "text", text: outcome.payload.text }, ...input.filter((b) => b.type !== "text")];
    }
  }
  if (!turnInput.alreadyStored) {
    session.append({ role: "user", content: input }, turnId, turnInput.origin);
    // Kept before the model is asked, unless the caller keeps it until the turn ends anyway.
    if (!turnInput.durable && session.unflushed) await session.flush();
  }

  let step = 0;
  let compactedThisStep = false;
  while (true) {
    if (signal.aborted) {
      reason = "cancelled";
      break;
    }
    if (step >= session.config.maxTurns) {
      reason = "max_turns";
      run.emit({
        type: "info",
        turnId,
        message: `stopped after ${session.config.maxTurns} model calls (max_turns); send another message to continue`,
      });
      break;
    }
    step++;
    // Most steps are far from the window: decided here without a promise.
    const compaction = compactionDue(run) ? await compactSafely(run, false) : "skipped";
    if (compaction === "cancelled") {
      reason = "cancelled";
      break;
    }
    if (compaction !== "done" && compaction !== "skipped") {
      run.emit(compaction);
      reason = "error";
      break;
    }

    let modelReply: ModelReply;
    try {
      modelReply = await callModel(run);
      compactedThisStep = false;
    } catch (error) {
      if (signal.aborted) {
        reason = "cancelled";
        break;
      }
      if (error instanceof LlmContextOverflowError && !compactedThisStep) {
        compactedThisStep = true;
        const compaction = await compactSafely(run, true);
        if (compaction === "done") {
          step--;
          continue;
        }
        if (compaction === "cancelled") {
          reason = "cancelled";
          break;
        }
        if (compaction !== "skipped") {
          run.emit(compaction);
          reason = "error";
          break;
        }
      }
      run.emit(providerErrorEvent(turnId, error));
      reason = "error";
      break;
    }

    const assistant: ContentBlock[] = [];
    if (modelReply.thinking?.text) assistant.push({ type: "thinking", ...modelReply.thinking });
    if (modelReply.text) assistant.push({ type: "text", text: modelReply.text });
    assistant.push(...modelReply.toolCalls);
    if (assistant.length > 0) session.append({ role: "assistant", content: assistant }, turnId);
    if (modelReply.text) lastText = modelReply.text;

    if (signal.aborted && modelReply.toolCalls.length === 0) {
      reason = "cancelled";
      break;
    }
    if (modelReply.toolCalls.length === 0) break;

    // The calls are kept before they run: a tool's effects outlive the process, so a restart must
    // find them asked for (and not run them again); their results are kept before the model is
    // asked again, so a kill during that call leaves every call with its result.
    if (session.unflushed) await session.flush();
    const results = await runToolCalls(run, modelReply.toolCalls);
    session.append({ role: "user", content: results }, turnId);
    if (session.unflushed) await session.flush();
    if (signal.aborted) {
      reason = "cancelled";
      break;
    }
  }

  if (reason !== "completed") return { reason };
  let reply = lastText ?? "";
  if (session.hooks?.has("before_reply")) {
    const outcome = await session.hooks.run("before_reply", { text: reply }, session.hookContext);
    if (outcome.decision === "block") {
      run.emit({ type: "info", turnId, message: `reply blocked by ${outcome.by}: ${outcome.reason}` });
      return { reason: "blocked" };
    }
    if (typeof outcome.payload.text === "string") reply = outcome.payload.text;
  }
  return { reason, reply };
}

/** Keeps what a failed turn had appended (its partial answer); a second failure is reported. */
async function flushAfterFailure(run: TurnRun): Promise<void> {
  try {
    await run.session.flush();
  } catch (error) {
    run.session.logger?.error({ err: (error as Error).stack, turnId: run.turnId }, "transcript write failed");
    run.emit({
      type: "error",
      turnId: run.turnId,
      failure: "internal",
      message: `the transcript could not be written: ${(error as Error).message}`,
      retryable: false,
    });
  }
}

/**
 * Compaction asks the model for a summary, so it fails and gets stopped like any model call: a
 * stop is a cancellation (the history is left as it was), a failure is the provider's error.
 */
async function compactSafely(
  run: TurnRun,
  force: boolean,
): Promise<"done" | "skipped" | "cancelled" | MidTurnEvent> {
  try {
    const compacted = await maybeCompact(run, force);
    if (run.signal.aborted) return "cancelled";
    return compacted ? "done" : "skipped";
  } catch (error) {
    if (run.signal.aborted) return "cancelled";
    return providerErrorEvent(run.turnId, error, "compacting the conversation");
  }
}

/** Whether the next request would pass the compaction threshold (what `maybeCompact` checks first). */
function compactionDue(run: TurnRun): boolean {
  const window = run.session.contextWindow();
  if (window === undefined) return false;
  return needsCompaction(estimateRequestTokens(run), {
    contextWindow: window,
    maxTokens: run.session.config.maxTokens,
  });
}

/** Compacts when the next request would not fit (or when `force`d by an overflow); true when it did. */
async function maybeCompact(run: TurnRun, force: boolean): Promise<boolean> {
  const { session, turnId, signal } = run;
  const window = session.contextWindow();
  if (window === undefined) return false;
  const options = { contextWindow: window, maxTokens: session.config.maxTokens };
  const tokensBefore = estimateRequestTokens(run);
  if (!force && !needsCompaction(tokensBefore, options)) return false;
  const cut = compactionCut(session.history);
  if (cut <= 0) return false;
  const result = await compact(session.config.provider, session.config.model, session.history, cut, signal);
  // A stopped summary is cut off: never let it replace the conversation.
  if (signal.aborted) return false;
  session.replaceHistory(result.messages);
  run.emit({
    type: "compaction",
    turnId,
    trigger: force ? "overflow" : "threshold",
    removedMessages: result.removed,
    tokensBefore,
    tokensAfter: estimateRequestTokens(run),
  });
  return true;
}
