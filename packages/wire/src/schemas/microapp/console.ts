/**
 * The operator console (packages/console, nexo's own microapp) and `nexo console url` meet in the
 * console's state directory (`<state_dir>/extensions/<id>/state`): the console writes where it
 * listens to `console.json` once its server is up, and keeps its login token in `login-token`
 * (mode 0600, never in the JSON, never logged). The CLI reads both to print the login URL.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

/** The extension id the console runs under in extensions.yaml (the quickstart's). */
export const CONSOLE_EXTENSION_ID = "console";
export const CONSOLE_ENDPOINT_FILE = "console.json";
export const CONSOLE_TOKEN_FILE = "login-token";

export const ConsoleEndpointSchema = lazySchema("microapp.console", () =>
  z.looseObject({
    /** The console's base URL, `http://127.0.0.1:PORT/` (no token). */
    url: z.string().startsWith("http://"),
    /** The console process: a file whose pid is gone is a console that stopped. */
    pid: z.number().int().positive(),
    started_at_ms: z.number().int().nonnegative(),
  }),
);
export type ConsoleEndpoint = z.infer<typeof ConsoleEndpointSchema>;

/** The login URL: the token rides in the fragment, which the browser never sends to a server. */
export function consoleLoginUrl(endpoint: Pick<ConsoleEndpoint, "url">, token: string): string {
  return `${endpoint.url}#token=${encodeURIComponent(token)}`;
}
