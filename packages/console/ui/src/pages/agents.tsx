/**
 * Agents: the list (enable / disable in place), and one form that creates or edits an agent. A
 * change the daemon refuses comes back with located issues, shown under the form.
 */
import { useState } from "preact/hooks";
import { type ConfigIssue, configIssues, describe, rpc } from "../api.js";
import { ActionButton, ErrorNote, useLoad, usePage } from "../components.js";

interface Draft {
  id: string;
  provider: string;
  model: string;
  system_prompt: string;
  allowed_tools: string;
  bindings: string;
  active: boolean;
}

const EMPTY: Draft = {
  id: "",
  provider: "scripted",
  model: "nexo-scripted-demo",
  system_prompt: "",
  allowed_tools: "",
  bindings: "",
  active: true,
};

const list = (text: string) =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

export function AgentsPage() {
  const agents = useLoad(() => rpc("agents/list"), []);
  const [draft, setDraft] = useState<Draft | undefined>(undefined);
  const [editing, setEditing] = useState(false);
  const { rows, pager } = usePage(agents.data?.agents ?? []);

  const edit = async (id: string) => {
    const agent = await rpc("agents/get", { agent_id: id });
    setEditing(true);
    setDraft({
      id: agent.id,
      provider: agent.model.provider,
      model: agent.model.model,
      system_prompt: agent.system_prompt,
      allowed_tools: agent.allowed_tools.join(", "),
      bindings: agent.inbound_bindings
        .map((b) => (b.instance ? `${b.plugin}:${b.instance}` : b.plugin))
        .join(", "),
      active: agent.active,
    });
  };

  return (
    <section>
      <h1>Agents</h1>
      <ErrorNote error={agents.error} />
      <table data-testid="agents">
        <thead>
          <tr>
            <th>id</th>
            <th>state</th>
            <th>provider</th>
            <th>channels</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {rows.map((agent) => (
            <tr key={agent.id} data-agent={agent.id}>
              <td>{agent.id}</td>
              <td>{agent.active ? "enabled" : "disabled"}</td>
              <td>{agent.model_provider}</td>
              <td>{agent.bindings_count}</td>
              <td class="buttons">
                <ActionButton label="Edit" action={() => edit(agent.id)} />
                <ActionButton
                  label={agent.active ? "Disable" : "Enable"}
                  action={async () => {
                    await rpc("agents/upsert", { id: agent.id, active: !agent.active });
                    agents.reload();
                  }}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {pager}
      {draft === undefined ? (
        <button
          type="button"
          class="primary"
          onClick={() => {
            setEditing(false);
            setDraft(EMPTY);
          }}
        >
          New agent
        </button>
      ) : (
        <AgentForm
          draft={draft}
          editing={editing}
          onDone={() => {
            setDraft(undefined);
            agents.reload();
          }}
        />
      )}
    </section>
  );
}

function AgentForm(props: { draft: Draft; editing: boolean; onDone: () => void }) {
  const [draft, setDraft] = useState(props.draft);
  const [issues, setIssues] = useState<ConfigIssue[]>([]);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const field = (name: keyof Draft) => ({
    name,
    value: draft[name] as string,
    onInput: (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value }),
  });
  const issueFor = (key: string) =>
    issues.filter(
      (i) => i.key !== undefined && (i.key === key || i.key.endsWith(`.${key}`) || i.key.includes(`${key}.`)),
    );

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setIssues([]);
    setError(undefined);
    try {
      await rpc("agents/upsert", {
        id: draft.id.trim(),
        model: { provider: draft.provider.trim(), model: draft.model.trim() },
        system_prompt: draft.system_prompt,
        // An empty field means no list, i.e. every tool (agents.yaml's default), never "no tools".
        ...(list(draft.allowed_tools).length === 0 ? {} : { allowed_tools: list(draft.allowed_tools) }),
        inbound_bindings: list(draft.bindings).map((b) => {
          const [plugin, instance] = b.split(":");
          return instance ? { plugin: plugin!, instance } : { plugin: plugin! };
        }),
        active: draft.active,
      });
      props.onDone();
    } catch (failure) {
      const located = configIssues(failure);
      setIssues(located);
      setError(describe(failure));
    } finally {
      setBusy(false);
    }
  };

  const Issues = ({ of }: { of: string }) => (
    <>
      {issueFor(of).map((i) => (
        <span class="error inline" key={i.message}>
          {i.message}
        </span>
      ))}
    </>
  );

  return (
    <form class="card" onSubmit={submit} data-testid="agent-form">
      <h2>{props.editing ? `Edit ${draft.id}` : "New agent"}</h2>
      <label>
        id <input {...field("id")} required disabled={props.editing} />
      </label>
      <label>
        provider <input {...field("provider")} required />
        <Issues of="provider" />
      </label>
      <label>
        model <input {...field("model")} required />
        <Issues of="model" />
      </label>
      <label>
        system prompt <textarea {...field("system_prompt")} rows={3} />
      </label>
      <label>
        allowed tools <input {...field("allowed_tools")} placeholder="empty: every tool; or Read, demo_*" />
        <Issues of="allowed_tools" />
      </label>
      <label>
        channels <input {...field("bindings")} placeholder="loopback, whatsapp:shared" />
        <Issues of="inbound_bindings" />
      </label>
      <label class="check">
        <input
          type="checkbox"
          name="active"
          checked={draft.active}
          onChange={(e) => setDraft({ ...draft, active: (e.target as HTMLInputElement).checked })}
        />
        enabled
      </label>
      {error === undefined ? null : (
        <div class="error" role="alert" data-testid="agent-errors">
          <p>{error}</p>
          {issues.length === 0 ? null : (
            <ul>
              {issues.map((i) => (
                <li key={`${i.key}:${i.message}`}>
                  {i.file ? `${i.file}${i.line ? `:${i.line}` : ""} ` : ""}
                  {i.key ? <code>{i.key}</code> : null} {i.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Saving…" : "Save"}
        </button>
        <button type="button" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
