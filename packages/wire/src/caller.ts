/**
 * Calling a protocol's methods with the types of its method table, the reply checked against the
 * method's result schema before the caller sees it.
 *
 *   const calls = new Caller(peer, { requests: pluginMethods, notifications: pluginNotifications });
 *   const reply = await calls.request("channel.send_outbound", { kind, msg }, { timeoutMs });
 *   reply.message_id; // typed from ChannelSendOutboundResultSchema
 *
 * - a reply that breaks the schema rejects with `invalidReply` (default MalformedReplyError): what
 *   the other side sends is never trusted; `z.unknown()` results are not walked, and a method's
 *   `quickResult` check passes the replies it recognises without a parse;
 * - `checkParams` also checks outgoing params (for params built from outside data); off by
 *   default, since the types already hold the caller to the schema;
 * - `requestStream` checks each delta against the notification table; a malformed delta fails the
 *   whole call with `invalidReply` and cancels it;
 * - `notify` sends a notification of the table (server → client events), typed the same way.
 */

import { defaultInvalidParams } from "./dispatch.js";
import { MalformedReplyError } from "./errors.js";
import { formatIssues, type IssueLike } from "./issues.js";
import {
  acceptsAnything,
  type MethodOf,
  type NoNotifications,
  type NotificationTable,
  type ParamsIn,
  type ParamsOf,
  type RequestTable,
  type ResultOf,
} from "./method-table.js";
import type { RequestOptions, StreamRequestOptions } from "./peer.js";

/** What a Caller sends through: a JsonRpcPeer, or anything that forwards to one (a plugin host). */
export interface RequestSender {
  request<R = unknown>(method: string, params: unknown, options?: RequestOptions): Promise<R>;
  requestStream<R = unknown, D = unknown>(
    method: string,
    params: unknown,
    options: StreamRequestOptions<D>,
  ): Promise<R>;
  /** Needed only for `Caller.notify`; a JsonRpcPeer has it. */
  notify?(method: string, params?: unknown): Promise<void>;
}

export interface CallerOptions {
  /** Check outgoing params too. Default false. */
  checkParams?: boolean;
  /** The error for outgoing params that break the schema. Default: InvalidParamsError (-32602). */
  invalidParams?(method: string, issues: readonly IssueLike[]): Error;
  /** The error for a reply or delta that breaks the schema. Default: MalformedReplyError. */
  invalidReply?(method: string, detail: string): Error;
}

export interface TypedStreamOptions<N extends NotificationTable, D extends MethodOf<N>>
  extends RequestOptions {
  deltaMethod: D;
  onDelta: (params: ParamsOf<N, D>) => void;
}

export class Caller<T extends RequestTable, N extends NotificationTable = NoNotifications> {
  private readonly requests: T;
  private readonly notifications: N;
  private readonly invalidReply: (method: string, detail: string) => Error;

  constructor(
    private readonly sender: RequestSender,
    tables: { requests: T; notifications?: N },
    private readonly options: CallerOptions = {},
  ) {
    this.requests = tables.requests;
    this.notifications = tables.notifications ?? ({} as N);
    this.invalidReply = options.invalidReply ?? ((method, detail) => new MalformedReplyError(method, detail));
  }

  request<M extends MethodOf<T>>(
    method: M,
    params: ParamsIn<T, M>,
    options?: RequestOptions,
  ): Promise<ResultOf<T, M>> {
    // Not `async` (the path of every microapp tool call): the sender's promise mapped once, and
    // what throws before sending still arrives as a rejection.
    try {
      const entry = this.entry(method);
      this.checkParams(method, entry.params, params);
      return this.sender
        .request(method, params, options)
        .then((reply) => this.parseReply(method, entry, reply) as ResultOf<T, M>);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async requestStream<M extends MethodOf<T>, D extends MethodOf<N>>(
    method: M,
    params: ParamsIn<T, M>,
    options: TypedStreamOptions<N, D>,
  ): Promise<ResultOf<T, M>> {
    const entry = this.entry(method);
    const deltaSchema = this.notifications[options.deltaMethod]?.params;
    if (deltaSchema === undefined) {
      throw new TypeError(`${options.deltaMethod} is not in this caller's notification table`);
    }
    this.checkParams(method, entry.params, params);
    const controller = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
    let malformed: Error | undefined;
    const onDelta = (raw: unknown): void => {
      if (malformed) return;
      const parsed = deltaSchema.safeParse(raw);
      if (parsed.success) {
        options.onDelta(parsed.data as ParamsOf<N, D>);
        return;
      }
      malformed = this.invalidReply(options.deltaMethod, formatIssues(parsed.error.issues, "(params)"));
      controller.abort(malformed);
    };
    let reply: unknown;
    try {
      reply = await this.sender.requestStream(method, params, { ...options, signal, onDelta });
    } catch (error) {
      throw malformed ?? error;
    }
    return this.parseReply(method, entry, reply) as ResultOf<T, M>;
  }

  /** Sends a notification of the notification table, its params typed from the schema. */
  notify<M extends MethodOf<N>>(method: M, params: ParamsIn<N, M>): Promise<void> {
    if (this.notifications[method] === undefined) {
      throw new TypeError(`${method} is not in this caller's notification table`);
    }
    if (this.sender.notify === undefined) throw new TypeError("this caller's sender cannot notify");
    return this.sender.notify(method, params);
  }

  private entry<M extends MethodOf<T>>(method: M): T[M] {
    const entry = this.requests[method];
    if (entry === undefined) throw new TypeError(`${method} is not in this caller's method table`);
    return entry;
  }

  private checkParams(method: string, schema: T[MethodOf<T>]["params"], params: unknown): void {
    if (!this.options.checkParams) return;
    const checked = schema.safeParse(params);
    if (checked.success) return;
    throw (this.options.invalidParams ?? defaultInvalidParams)(method, checked.error.issues);
  }

  private parseReply(method: string, entry: T[MethodOf<T>], reply: unknown): unknown {
    const schema = entry.result;
    // The method's hand check, where it has one, stands for the schema on the replies it recognises.
    if (acceptsAnything(schema) || entry.quickResult?.(reply)) return reply;
    const parsed = schema.safeParse(reply);
    if (parsed.success) return parsed.data;
    throw this.invalidReply(method, formatIssues(parsed.error.issues, "(result)"));
  }
}
