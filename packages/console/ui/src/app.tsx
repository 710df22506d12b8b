/**
 * The console's shell: the login gate, then the navigation and the pages (preact-iso's router).
 * A login URL carries the token in its fragment (`#token=…`), never sent to any server: the page
 * posts it to /api/login once and removes it from the address bar.
 */
import { useEffect, useState } from "preact/hooks";
import { LocationProvider, Route, Router } from "preact-iso";
import { describe, login, logout, restoreSession, session } from "./api.js";
import { caughtUp, connectLive, disconnectLive, liveState } from "./live.js";
import { AgentsPage } from "./pages/agents.js";
import { AuditPage } from "./pages/audit.js";
import { ConversationsPage } from "./pages/conversations.js";
import { EscalationsPage } from "./pages/escalations.js";
import { ExtensionsPage } from "./pages/extensions.js";
import { PairingPage } from "./pages/pairing.js";
import { ProvidersPage } from "./pages/providers.js";
import { SearchPage } from "./pages/search.js";
import { TakeoverPage } from "./pages/takeover.js";

const PAGES = [
  ["/", "Agents"],
  ["/live", "Live"],
  ["/search", "Search"],
  ["/escalations", "Escalations"],
  ["/takeover", "Takeover"],
  ["/extensions", "Extensions"],
  ["/providers", "Providers & MCP"],
  ["/pairing", "Link a device"],
  ["/audit", "Audit"],
] as const;

/** Logs in with a `#token=…` in the address, and takes it out of the address bar. */
function loginFromFragment(): boolean {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  if (token === null) return false;
  history.replaceState(null, "", location.pathname + location.search);
  login(token).catch(() => {
    session.value = null;
  });
  return true;
}

export function App() {
  useEffect(() => {
    if (!loginFromFragment()) void restoreSession();
    // A login URL opened in a tab that already shows the console only changes the fragment.
    const onHash = () => void loginFromFragment();
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  const current = session.value;
  useEffect(() => {
    if (current) connectLive();
    else disconnectLive();
  }, [current]);

  if (current === undefined) return <p class="empty">Loading…</p>;
  if (current === null) return <Login />;
  return (
    <LocationProvider>
      <header>
        <strong>nexo console</strong>
        <nav>
          {PAGES.map(([href, label]) => (
            <a key={href} href={href}>
              {label}
            </a>
          ))}
        </nav>
        <span
          class={`live ${liveState.value}`}
          title={`live updates; ${caughtUp.value} event(s) read back after falling behind`}
          data-caught-up={caughtUp.value}
        >
          ● {liveState.value}
        </span>
        <button type="button" onClick={() => void logout()}>
          Log out
        </button>
      </header>
      <main>
        <Router>
          <Route path="/" component={AgentsPage} />
          <Route path="/live" component={ConversationsPage} />
          <Route path="/search" component={SearchPage} />
          <Route path="/escalations" component={EscalationsPage} />
          <Route path="/takeover" component={TakeoverPage} />
          <Route path="/extensions" component={ExtensionsPage} />
          <Route path="/providers" component={ProvidersPage} />
          <Route path="/pairing" component={PairingPage} />
          <Route path="/audit" component={AuditPage} />
          <Route default component={() => <p class="empty">No such page.</p>} />
        </Router>
      </main>
    </LocationProvider>
  );
}

function Login() {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await login(token.trim());
    } catch (failure) {
      setError(describe(failure));
    }
  };
  return (
    <form class="login" onSubmit={submit}>
      <h1>nexo console</h1>
      <p>
        Paste the login token, or open the URL <code>nexo console url</code> prints.
      </p>
      <input
        type="password"
        name="token"
        autocomplete="off"
        placeholder="login token"
        value={token}
        onInput={(e) => setToken((e.target as HTMLInputElement).value)}
      />
      <button type="submit" class="primary">
        Log in
      </button>
      {error === undefined ? null : (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
