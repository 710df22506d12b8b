/**
 * The two helpers a client's UI asks the model for outside any conversation, each one request on
 * the server's model (suggestions/):
 *
 * - `workspace/commitMessage/suggest {threadId, paths, maxDiffChars?}`: the git diff of the paths
 *   (workspace-relative, held inside the thread's workspace) sent to the thread's model; the answer
 *   is `{message}`. No thread is created for it and the thread's history is not touched, so no
 *   thread event is sent. A path outside the workspace, a workspace that is not a git repository
 *   and paths with no change are -32602 saying which; a model that cannot be reached is -32603.
 * - `welcome/suggestions {identity, maxItems?}` (`extensions.welcomeSuggestions`): see
 *   suggestions/welcome.ts. appserver.yaml's `welcome_suggestions: false` (what
 *   `workspace/config/update welcomeSuggestionsEnabled` writes) makes it answer `source: "none"`
 *   without asking the model.
 *
 * The suggestion modules are imported on first use, off the start-up path of `initialize`.
 */

import { realpath } from "node:fs/promises";
import { appServerMethods } from "@nexo/wire/schemas/appserver";
import { isoTime } from "../../../iso-time.js";
import { suggestionFlags } from "../capability-flags.js";
import { appServerErrors } from "../errors.js";
import { defineFamily } from "../family.js";
import type { AppServerHost } from "../host.js";
import type { WelcomeSuggestions } from "../suggestions/welcome.js";
import { workspaceOf } from "../threads/records.js";

/** One cache per server (the host's workspace state). */
const welcomeOf = new WeakMap<AppServerHost, WelcomeSuggestions>();

/** Whether appserver.yaml lets welcome/suggestions ask the model (no config directory: yes). */
export async function welcomeEnabled(host: AppServerHost): Promise<boolean> {
  const services = host.management?.services;
  if (services === undefined) return true;
  const { readAppServerFile } = await import("../appserver-file.js");
  // An appserver.yaml that cannot be read leaves the default; config validation names the problem.
  const file = await readAppServerFile(services).catch(() => undefined);
  return file?.welcome_suggestions !== false;
}

async function samePlace(a: string, b: string): Promise<boolean> {
  const [ra, rb] = await Promise.all([realpath(a).catch(() => a), realpath(b).catch(() => b)]);
  return ra.toLowerCase() === rb.toLowerCase();
}

export const suggestionsFamily = defineFamily({
  name: "suggestions",
  methods: appServerMethods,
  capabilities: suggestionFlags,
  handlers: {
    "workspace/commitMessage/suggest": async ({ threadId, paths, maxDiffChars }, { host }) => {
      const record = await host.threads.record(threadId);
      const workspace = workspaceOf(record, host.workspace);
      const [{ suggestCommitMessage }, { DiffError }] = await Promise.all([
        import("../suggestions/commit-message.js"),
        import("../suggestions/git-diff.js"),
      ]);
      const model = await host.threads.modelOf(threadId);
      try {
        return { message: await suggestCommitMessage(model, workspace, paths, maxDiffChars) };
      } catch (error) {
        if (error instanceof DiffError) {
          throw error.kind === "git"
            ? appServerErrors.internal(error.message)
            : appServerErrors.invalidParams(error.message);
        }
        throw appServerErrors.internal(`the model could not write the message: ${(error as Error).message}`);
      }
    },
    "welcome/suggestions": async ({ identity, maxItems }, { host }) => {
      // The workspace a thread started with this identity would work in. A pinned one (the
      // daemon's door) is the agent's whatever path is named: a remote client's local path means
      // nothing on this machine. A standalone server serves one workspace (the hub starts one per
      // path), so another path means the client reached the wrong server.
      const wanted = identity.workspacePath;
      if (
        !host.workspacePinned &&
        wanted !== undefined &&
        wanted !== "" &&
        !(await samePlace(wanted, host.workspace))
      )
        throw appServerErrors.invalidParams(
          `identity.workspacePath ${wanted} is not this server's workspace (${host.workspace})`,
        );
      const { WelcomeSuggestions, DEFAULT_WELCOME_ITEMS, MAX_WELCOME_ITEMS } = await import(
        "../suggestions/welcome.js"
      );
      const count = Math.min(maxItems ?? DEFAULT_WELCOME_ITEMS, MAX_WELCOME_ITEMS);
      if (!(await welcomeEnabled(host))) {
        return {
          items: [],
          source: "none" as const,
          generatedAt: isoTime(),
          fingerprint: "disabled",
        };
      }
      let welcome = welcomeOf.get(host);
      if (welcome === undefined) {
        welcome = new WelcomeSuggestions();
        welcomeOf.set(host, welcome);
      }
      return welcome.suggest({
        workspace: host.workspace,
        maxItems: count,
        recentTitles: await host.threads.recentTitles(host.workspace, 10),
        model: () => host.threads.modelOf(),
        logger: host.logger,
      });
    },
  },
});
