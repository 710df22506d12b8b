/**
 * `nexo/admin/llm/complete` (llm_complete): one completion on a provider of llm.yaml, run with the
 * daemon's own keys, so a microapp uses an LLM without ever holding a credential. The same one-shot
 * path as a plugin's `llm.complete` (engine/providers/one-shot.ts); bounded at 300 s.
 */
import { InternalError, InvalidParamsError } from "@nexo/wire";
import * as plugin from "@nexo/wire/schemas/plugin";
import { oneShotRequest, runOneShot } from "../../engine/providers/one-shot.js";
import { defineAdminDomain } from "../domain.js";

export const ADMIN_LLM_TIMEOUT_MS = 300_000;

export const llmDomain = defineAdminDomain({
  domain: "llm",
  handlers: ({ providers }) =>
    providers && {
      "nexo/admin/llm/complete": async (params, call) => {
        const provider = providers.get(params.provider);
        if (provider === undefined)
          throw new InvalidParamsError(
            `invalid params: no LLM provider named "${params.provider}" in llm.yaml`,
          );
        const request = oneShotRequest({
          model: params.model,
          ...(params.system_prompt === undefined ? {} : { systemPrompt: params.system_prompt }),
          messages: params.messages,
          maxTokens: params.max_tokens ?? plugin.LLM_COMPLETE_DEFAULT_MAX_TOKENS,
          ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
          signal: AbortSignal.any([call.signal, AbortSignal.timeout(ADMIN_LLM_TIMEOUT_MS)]),
        });
        if (request === undefined)
          throw new InvalidParamsError(
            "invalid params: messages holds only system messages; nothing to answer",
          );
        let outcome: Awaited<ReturnType<typeof runOneShot>>;
        try {
          outcome = await runOneShot(provider, request);
        } catch (error) {
          throw new InternalError(`internal: the provider failed: ${(error as Error).message}`, {
            reason: "provider_failed",
            provider: params.provider,
          });
        }
        if (outcome.content === "" && outcome.toolCalls > 0)
          throw new InternalError(
            "internal: the provider answered with tool calls only; llm/complete returns text",
            {
              reason: "tool_calls_only",
              provider: params.provider,
            },
          );
        const { inputTokens, outputTokens } = outcome.usage;
        return {
          content: outcome.content,
          model: params.model,
          usage: {
            prompt_tokens: inputTokens,
            completion_tokens: outputTokens,
            total_tokens: inputTokens + outputTokens,
          },
        };
      },
    },
});
