/**
 * How a BrokerSender (or a microapp's admin client) reaches the daemon. The adapter's link
 * forwards to its JsonRpcPeer once `run()` has started; a LineWriter link (for tests of publishing
 * code) can only send notifications.
 */
import {
  ConnectionClosedError,
  type JsonRpcPeer,
  type RequestOptions,
  type StreamRequestOptions,
} from "@nexo/wire";
import { RpcTransportError } from "./errors.js";
import { JSONRPC_VERSION, serializeFrame } from "./wire.js";

/** Writes one serialized frame (a line ending in `\n`). */
export type LineWriter = (line: string) => void;

/** What a BrokerSender sends through; JsonRpcPeer fits as it is. */
export interface HostLink {
  notify(method: string, params?: unknown): Promise<void>;
  request<R = unknown>(method: string, params?: unknown, options?: RequestOptions): Promise<R>;
  requestStream<R = unknown, D = unknown>(
    method: string,
    params: unknown,
    options: StreamRequestOptions<D>,
  ): Promise<R>;
}

/** The host connection, attached when `run()` starts. */
export class PeerLink implements HostLink {
  peer: JsonRpcPeer | undefined;

  /** `owner` names what must be running in the error of a call made too early. */
  constructor(private readonly owner = "the adapter") {}

  private get connected(): JsonRpcPeer {
    if (!this.peer) throw new ConnectionClosedError(`${this.owner} is not running (call run() first)`);
    return this.peer;
  }

  notify(method: string, params?: unknown): Promise<void> {
    try {
      return this.connected.notify(method, params);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  request<R>(method: string, params?: unknown, options?: RequestOptions): Promise<R> {
    try {
      return this.connected.request<R>(method, params, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  requestStream<R, D>(method: string, params: unknown, options: StreamRequestOptions<D>): Promise<R> {
    try {
      return this.connected.requestStream<R, D>(method, params, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

/** The link of a BrokerSender built on a LineWriter: notifications only. */
export class LineWriterLink implements HostLink {
  constructor(private readonly write: LineWriter) {}

  async notify(method: string, params?: unknown): Promise<void> {
    this.write(serializeFrame({ jsonrpc: JSONRPC_VERSION, method, params }));
  }

  request<R>(method: string): Promise<R> {
    return Promise.reject(
      new RpcTransportError(
        `cannot send ${method}: this BrokerSender writes to a LineWriter and gets no replies`,
      ),
    );
  }

  requestStream<R>(method: string): Promise<R> {
    return this.request<R>(method);
  }
}
