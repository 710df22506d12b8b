/** The agent select most pages start from; remembers the choice in the URL's query. */
import { useEffect } from "preact/hooks";
import { useLocation } from "preact-iso";
import { rpc } from "../api.js";
import { ErrorNote, useLoad } from "../components.js";

export function useAgentChoice(): [string | undefined, (id: string) => void] {
  const location = useLocation();
  const chosen = location.query.agent;
  const choose = (id: string) => {
    const query = new URLSearchParams({ ...location.query, agent: id });
    location.route(`${location.path}?${query}`, true);
  };
  return [chosen === "" ? undefined : chosen, choose];
}

export function AgentPicker(props: { value: string | undefined; onChange: (id: string) => void }) {
  const agents = useLoad(() => rpc("agents/list"), []);
  const ids = agents.data?.agents.map((a) => a.id) ?? [];
  const first = ids[0];
  // No agent chosen yet: the first one, so the page shows something.
  useEffect(() => {
    if (props.value === undefined && first !== undefined) props.onChange(first);
  }, [props.value, first, props.onChange]);
  return (
    <label>
      agent{" "}
      <select
        name="agent"
        value={props.value ?? ""}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}
      >
        {ids.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
      <ErrorNote error={agents.error} />
    </label>
  );
}
