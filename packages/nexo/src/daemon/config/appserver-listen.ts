/**
 * `--listen`: where the AppServer serves.
 *
 *   stdio://              JSON lines on stdin/stdout (the default; one client, the parent)
 *   ws://HOST:PORT        WebSocket at ws://HOST:PORT/ws; stdin is ignored
 *   ws+stdio://HOST:PORT  both at once
 *
 * A WebSocket on an address other machines can reach needs a token; that rule lives here so no
 * caller can start such a listener without it. It sits with the daemon's config because both
 * `nexo app-server --listen` and the daemon's appserver.yaml are read through it.
 */
import { tokenProblem } from "../http-auth.js";
import { isLoopbackHost } from "./daemon.js";

export interface ListenPlan {
  stdio: boolean;
  /** Absent when only stdio is served. */
  websocket?: { host: string; port: number; token?: string };
}

export class ListenError extends Error {
  override readonly name = "ListenError";
}

const FORMS = "stdio://, ws://HOST:PORT or ws+stdio://HOST:PORT";

/** Reads `--listen` (and the token) into a plan, or throws ListenError saying what is wrong. */
export function parseListen(listen: string | undefined, token: string | undefined): ListenPlan {
  const text = (listen ?? "stdio://").trim();
  if (text === "stdio://" || text === "stdio") {
    if (token !== undefined) checkToken(token);
    return { stdio: true };
  }
  const match = /^(ws|ws\+stdio|wss|wss\+stdio):\/\/(.*)$/i.exec(text);
  if (!match) throw new ListenError(`--listen ${text}: expected ${FORMS}`);
  const scheme = match[1]!.toLowerCase();
  if (scheme.startsWith("wss")) {
    throw new ListenError(
      `--listen ${text}: wss:// is not served; put a TLS-terminating proxy in front of ws://127.0.0.1:PORT`,
    );
  }
  const rest = match[2]!;
  const address = /^(?:\[([^\]]+)\]|([^:/[\]]+)):(\d{1,5})\/?$/.exec(rest);
  if (!address) throw new ListenError(`--listen ${text}: expected ${FORMS} (the port is required)`);
  const host = bindHost(address[1] ?? address[2]!);
  const port = Number(address[3]);
  if (port > 65_535) throw new ListenError(`--listen ${text}: port ${port} is out of range (0-65535)`);
  if (token !== undefined) checkToken(token);
  else if (!isLoopbackHost(host)) {
    throw new ListenError(
      `--listen ${text}: ${host} is reachable from other machines, so a token is required ` +
        "(--token, NEXO_APPSERVER_TOKEN or appserver.yaml); or listen on 127.0.0.1",
    );
  }
  return {
    stdio: scheme === "ws+stdio",
    websocket: { host, port, ...(token === undefined ? {} : { token }) },
  };
}

/**
 * `localhost` is bound as 127.0.0.1: what the name resolves to is up to the resolver, and a
 * loopback listener must stay loopback.
 */
function bindHost(host: string): string {
  return host.toLowerCase() === "localhost" ? "127.0.0.1" : host;
}

function checkToken(token: string): void {
  const problem = tokenProblem(token);
  if (problem !== undefined) throw new ListenError(`the AppServer token is rejected: ${problem}`);
}
