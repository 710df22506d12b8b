/**
 * The operator console: nexo's own microapp. It serves a web UI on loopback and does everything
 * through the daemon's admin RPC and agent-event notifications, with the capabilities the operator
 * granted it in extensions.yaml — no other way into the daemon.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Microapp } from "nexo-plugin-sdk/microapp";
import { writeEndpoint } from "./endpoint.js";
import { type ConsoleServer, startConsoleServer } from "./http-server.js";
import { LiveStreams } from "./live.js";
import { LoginGate, loadLoginToken } from "./login.js";
import { pairingForBrowser } from "./pairing.js";
import { type Settings, SettingsSchema } from "./settings.js";

const VERSION = "0.1.0";
/**
 * How long a stopping console lets the answers already being written finish (its own restart's
 * answer among them) before it cuts the connections left; well inside the 5 s the daemon gives
 * `shutdown`.
 */
const CLOSE_GRACE_MS = 2_000;
const UI_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "ui");

const live = new LiveStreams();
let running: ConsoleServer | undefined;
let removeEndpoint: (() => void) | undefined;

const app: Microapp<Settings> = new Microapp<Settings>({
  id: "console",
  version: VERSION,
  config: SettingsSchema,
  onInitialize: async ({ extensionId, stateDir, config }) => {
    const gate = new LoginGate(loadLoginToken(stateDir));
    app.admin.setOperatorTokenHash(() => gate.operatorHash);
    running = await startConsoleServer({
      port: config.port,
      uiDir: UI_DIR,
      gate,
      live,
      admin: app.admin,
      about: { version: VERSION, id: extensionId },
    });
    removeEndpoint = writeEndpoint(stateDir, running.url);
    // The URL only: the login token is in the state directory, printed by `nexo console url`.
    app.log.info(`console listening on ${running.url} (login URL: nexo console url)`);
  },
  onShutdown: async () => {
    removeEndpoint?.();
    live.close();
    const server = running?.server;
    if (server === undefined) return;
    // Idle connections go now; a response still being written (the answer to the button that
    // restarted this console) gets CLOSE_GRACE_MS to finish before the rest are cut.
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeIdleConnections();
    const grace = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
    await closed;
    clearTimeout(grace);
  },
});

app.on("nexo/notify/agent_event", (event) => live.send("agent_event", event));
app.on("nexo/notify/agent_events_lagged", (lagged) => live.send("lagged", lagged));
app.on("nexo/notify/pairing_status_changed", (status) => live.send("pairing", pairingForBrowser(status)));

await app.run();
