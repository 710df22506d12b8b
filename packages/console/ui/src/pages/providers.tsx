/**
 * LLM providers and MCP servers: list, add, remove, and test — a provider with a one-word
 * completion through the daemon (llm/complete, with the daemon's keys), an MCP server by its live
 * connection state, which the daemon reports after every change.
 */
import { useState } from "preact/hooks";
import { rpc } from "../api.js";
import { ActionButton, ErrorNote, useLoad } from "../components.js";

export function ProvidersPage() {
  return (
    <section>
      <h1>LLM providers</h1>
      <Providers />
      <h1>MCP servers</h1>
      <McpServers />
    </section>
  );
}

function Providers() {
  const providers = useLoad(() => rpc("llm_providers/list"), []);
  const [draft, setDraft] = useState({ id: "", factory_type: "openai_compatible", base_url: "", key: "" });
  const [model, setModel] = useState<Record<string, string>>({});
  const [tested, setTested] = useState<Record<string, string>>({});
  const input = (name: keyof typeof draft) => ({
    name,
    value: draft[name],
    onInput: (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value }),
  });
  return (
    <>
      <ErrorNote error={providers.error} />
      <table data-testid="providers">
        <thead>
          <tr>
            <th>id</th>
            <th>base URL</th>
            <th>key from</th>
            <th>test</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(providers.data?.providers ?? []).map((p) => (
            <tr key={p.id} data-provider={p.id}>
              <td>{p.id}</td>
              <td>{p.base_url}</td>
              <td>{p.api_key_env === "" ? "secret store" : `$${p.api_key_env}`}</td>
              <td>
                <input
                  name="model"
                  placeholder="model"
                  value={model[p.id] ?? ""}
                  onInput={(e) => setModel({ ...model, [p.id]: (e.target as HTMLInputElement).value })}
                />
                <ActionButton
                  label="Test"
                  disabled={(model[p.id] ?? "") === ""}
                  action={async () => {
                    const result = await rpc("llm/complete", {
                      provider: p.id,
                      model: model[p.id]!,
                      messages: [{ role: "user", content: "Reply with one word: ok" }],
                      max_tokens: 16,
                    });
                    setTested({ ...tested, [p.id]: `answered: ${result.content}` });
                  }}
                />
                <span class="note">{tested[p.id] ?? ""}</span>
              </td>
              <td>
                <ActionButton
                  label="Remove"
                  kind="danger"
                  action={async () => {
                    await rpc("llm_providers/delete", { provider_id: p.id });
                    providers.reload();
                  }}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form class="card inline-form" onSubmit={(e) => e.preventDefault()}>
        <input {...input("id")} placeholder="id" />
        <input {...input("factory_type")} placeholder="type" />
        <input {...input("base_url")} placeholder="base URL" />
        <input
          {...input("key")}
          type="password"
          autocomplete="off"
          placeholder="API key (stored as a secret)"
        />
        <ActionButton
          label="Add provider"
          kind="primary"
          action={async () => {
            await rpc("llm_providers/upsert", {
              id: draft.id.trim(),
              factory_type: draft.factory_type.trim(),
              base_url: draft.base_url.trim(),
              ...(draft.key === "" ? {} : { api_key_secret_value: draft.key }),
            });
            setDraft({ ...draft, id: "", base_url: "", key: "" });
            providers.reload();
          }}
        />
      </form>
    </>
  );
}

function McpServers() {
  const servers = useLoad(async () => {
    const { servers: list } = await rpc("mcp/list");
    return Promise.all(list.map(async (s) => (await rpc("mcp/get", { name: s.name })).server ?? s));
  }, []);
  const [draft, setDraft] = useState({ name: "", transport: "stdio", target: "" });
  const [result, setResult] = useState<string | undefined>(undefined);
  const input = (name: keyof typeof draft) => ({
    name,
    value: draft[name],
    onInput: (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value }),
  });
  return (
    <>
      <ErrorNote error={servers.error} />
      <table data-testid="mcp-servers">
        <thead>
          <tr>
            <th>name</th>
            <th>transport</th>
            <th>runs</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(servers.data ?? []).map((s) => (
            <tr key={s.name} data-mcp={s.name}>
              <td>{s.name}</td>
              <td>{s.transport}</td>
              <td>
                <code>
                  {"command" in s ? [s.command, ...((s.args as string[] | undefined) ?? [])].join(" ") : ""}
                </code>
                <code>{"url" in s ? String(s.url) : ""}</code>
              </td>
              <td>
                <ActionButton
                  label="Remove"
                  kind="danger"
                  action={async () => {
                    await rpc("mcp/delete", { name: s.name });
                    servers.reload();
                  }}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form class="card inline-form" onSubmit={(e) => e.preventDefault()}>
        <input {...input("name")} placeholder="name" />
        <select {...input("transport")}>
          <option value="stdio">stdio</option>
          <option value="streamable_http">streamable_http</option>
        </select>
        <input {...input("target")} placeholder={draft.transport === "stdio" ? "command and args" : "URL"} />
        <ActionButton
          label="Add and test"
          kind="primary"
          action={async () => {
            const [command, ...args] = draft.target.trim().split(/\s+/);
            const answer = await rpc(
              "mcp/upsert",
              draft.transport === "stdio"
                ? { name: draft.name.trim(), transport: "stdio", command: command ?? "", args }
                : { name: draft.name.trim(), transport: "streamable_http", url: draft.target.trim() },
            );
            const live = answer.server as { state?: string; tools?: string[]; error?: string };
            setResult(
              `${draft.name}: ${live.state ?? "?"}, ${live.tools?.length ?? 0} tool(s)${live.error ? `, ${live.error}` : ""}`,
            );
            servers.reload();
          }}
        />
      </form>
      {result === undefined ? null : (
        <p class="note" data-testid="mcp-result">
          {result}
        </p>
      )}
    </>
  );
}
