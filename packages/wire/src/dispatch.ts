/**
 * Serving a protocol's method table on a peer: one handler per method, its params checked against
 * the method's schema before the handler runs, its types read from the same schema.
 *
 *   const dispatcher = new Dispatcher(peer, { requests: appServerMethods });
 *   const stop = dispatcher.handle("thread/read", async (params) => readThread(params.threadId));
 *   stop(); // thread/read now answers -32601
 *
 * Rules:
 * - params that break the schema are answered -32602 `invalid <method> params: <issues>` with no
 *   `data` (strict clients compare the error's keys; `invalidParams` changes the error per
 *   protocol); the handler never sees them;
 * - the handler gets the parsed params: defaults applied, unknown fields kept (every schema is a
 *   loose object, as the specs' compatibility rules require); a method whose table entry has a
 *   `quickParams` check gets the value as received when that check recognises it;
 * - with `checkResults`, a result that breaks the schema is answered -32603 (it is the serving
 *   side's bug) and reported; the result goes out as the handler returned it, never re-shaped;
 * - a method nobody handles is answered -32601 by the peer; `handle` returns the disposer that
 *   makes a method unhandled again;
 * - `guard` runs before the params are read, with the method's table entry (the admin RPC checks
 *   the entry's `capability` there);
 * - `around` wraps each served request — guard, params check and handler — and sees every
 *   outcome, refusals included (the admin RPC's audit log);
 * - notifications whose params break the schema are dropped (nobody to answer) and reported as
 *   the peer's protocol problem `invalid_notification`.
 */
import { InternalError, InvalidParamsError, type RpcError } from "./errors.js";
import { formatIssues, type IssueLike } from "./issues.js";
import {
  acceptsAnything,
  type Disposer,
  type MethodOf,
  type NoNotifications,
  type NotificationTable,
  type ParamsOf,
  type RequestTable,
  type ResultIn,
  type SchemaFailure,
} from "./method-table.js";
import type { JsonRpcPeer, NotificationHandler, RequestContext, RequestHandler } from "./peer.js";
import { isThenable } from "./thenable.js";

export type TypedRequestHandler<T extends RequestTable, M extends MethodOf<T>> = (
  params: ParamsOf<T, M>,
  ctx: RequestContext,
) => ResultIn<T, M> | Promise<ResultIn<T, M>>;

export type TypedNotificationHandler<N extends NotificationTable, M extends MethodOf<N>> = (
  params: ParamsOf<N, M>,
) => void | Promise<void>;

export interface DispatcherOptions<T extends RequestTable> {
  /** The reply to params that break the schema. Default: -32602 without `data`. */
  invalidParams?(method: string, issues: readonly IssueLike[]): RpcError;
  /** Check each result against the method's result schema. Default false. */
  checkResults?: boolean;
  /** The reply to a result that breaks the schema. Default: -32603 without `data`. */
  invalidResult?(method: string, issues: readonly IssueLike[]): RpcError;
  /** Told about every value that broke its schema (log it, count it). */
  onSchemaFailure?(failure: SchemaFailure): void;
  /** Runs before the params are read; throw an RpcError to refuse the call. */
  guard?(method: MethodOf<T>, entry: T[MethodOf<T>], ctx: RequestContext): void;
  /**
   * What a request without params (absent or `null`) is checked as. Default: as it came, so an
   * object schema refuses it. The AppServer reads a missing params object as `{}`, as its reference does.
   */
  missingParams?: unknown;
  /**
   * Wraps every served request: `serve()` runs the guard, the params check and the handler, and
   * returns (or throws, or rejects with) exactly what will be answered. Whatever `around` returns
   * is the reply, so it must pass `serve()`'s outcome on. Not called for methods nobody handles.
   */
  around?(call: ServedCall<T>, serve: () => unknown): unknown;
}

/** A request as `around` sees it, before anything has checked its params. */
export interface ServedCall<T extends RequestTable> {
  method: MethodOf<T>;
  entry: T[MethodOf<T>];
  /** The params as received. */
  params: unknown;
  ctx: RequestContext;
}

export function defaultInvalidParams(method: string, issues: readonly IssueLike[]): RpcError {
  return new InvalidParamsError(`invalid ${method} params: ${formatIssues(issues, "(params)")}`);
}

function defaultInvalidResult(method: string, issues: readonly IssueLike[]): RpcError {
  return new InternalError(
    `the ${method} handler returned an invalid result: ${formatIssues(issues, "(result)")}`,
  );
}

export class Dispatcher<T extends RequestTable, N extends NotificationTable = NoNotifications> {
  private readonly requests: T;
  private readonly notifications: N;

  constructor(
    private readonly peer: JsonRpcPeer,
    tables: { requests?: T; notifications?: N },
    private readonly options: DispatcherOptions<T> = {},
  ) {
    this.requests = tables.requests ?? ({} as T);
    this.notifications = tables.notifications ?? ({} as N);
  }

  /** Serves `method` with `handler` until the returned disposer is called. */
  handle<M extends MethodOf<T>>(method: M, handler: TypedRequestHandler<T, M>): Disposer {
    const entry = this.requests[method];
    if (entry === undefined) throw new TypeError(`${method} is not in this dispatcher's method table`);
    const { guard, onSchemaFailure } = this.options;
    const invalidParams = this.options.invalidParams ?? defaultInvalidParams;
    const paramsSchema = entry.params;
    const resultSchema =
      this.options.checkResults && !acceptsAnything(entry.result) ? entry.result : undefined;
    const invalidResult = this.options.invalidResult ?? defaultInvalidResult;
    const hasMissingParams = "missingParams" in this.options;
    const missingParams = this.options.missingParams;

    const checkResult = (result: unknown): unknown => {
      const checked = resultSchema!.safeParse(result);
      if (checked.success) return result;
      onSchemaFailure?.({ method, part: "result", issues: checked.error.issues });
      throw invalidResult(method, checked.error.issues);
    };

    const quickParams = entry.quickParams;
    const serve: RequestHandler = (raw, ctx) => {
      if (guard) guard(method, entry as T[MethodOf<T>], ctx);
      const input = raw == null && hasMissingParams ? missingParams : raw;
      let params: ParamsOf<T, M>;
      if (quickParams?.(input)) {
        params = input as ParamsOf<T, M>;
      } else {
        const parsed = paramsSchema.safeParse(input);
        if (!parsed.success) {
          onSchemaFailure?.({ method, part: "params", issues: parsed.error.issues });
          throw invalidParams(method, parsed.error.issues);
        }
        params = parsed.data as ParamsOf<T, M>;
      }
      const outcome = handler(params, ctx);
      if (resultSchema === undefined) return outcome;
      return isThenable(outcome) ? outcome.then(checkResult) : checkResult(outcome);
    };
    const { around } = this.options;
    const served: RequestHandler =
      around === undefined
        ? serve
        : (raw, ctx) =>
            around({ method, entry: entry as T[MethodOf<T>], params: raw, ctx }, () => serve(raw, ctx));
    this.peer.onRequest(method, served);
    return () => this.peer.removeRequestHandler(method, served);
  }

  /** Receives `method` notifications with checked params until the returned disposer is called. */
  on<M extends MethodOf<N>>(method: M, handler: TypedNotificationHandler<N, M>): Disposer {
    const entry = this.notifications[method];
    if (entry === undefined) throw new TypeError(`${method} is not in this dispatcher's notification table`);
    const { onSchemaFailure } = this.options;
    const schema = entry.params;
    const received: NotificationHandler = (raw) => {
      const parsed = schema.safeParse(raw);
      if (!parsed.success) {
        const issues = parsed.error.issues;
        onSchemaFailure?.({ method, part: "notification", issues });
        const detail = formatIssues(issues, "(params)");
        this.peer.reportProblem(
          { kind: "invalid_notification", method, detail },
          "notification dropped: params break the schema",
        );
        return;
      }
      return handler(parsed.data as ParamsOf<N, M>);
    };
    this.peer.onNotification(method, received);
    return () => this.peer.removeNotificationHandler(method, received);
  }
}
