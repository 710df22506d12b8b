/**
 * The part of the Anthropic SDK nexo uses: a client with the Messages API and the SDK's error
 * classes. Loaded by anthropic.ts on the first request.
 *
 * Why not the SDK's default export: the `Anthropic` class builds every API of the SDK in its
 * constructor (beta, organization, skills, files, …) and names them as its statics, so importing it
 * brings the whole SDK — 1.09 MB of the CLI bundle — which a one-shot `nexo agent` compiled before
 * its first request. `BaseAnthropic` is the same client (options, authentication, headers,
 * retries, errors, the request itself) without the API objects; with the Messages API attached
 * the way `Anthropic` attaches it, the bundler keeps about a third of the SDK.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, BaseAnthropic } from "@anthropic-ai/sdk";
import { Messages } from "@anthropic-ai/sdk/resources/messages";

/** `Anthropic` with only `messages`, the one API nexo calls. */
export class AnthropicMessagesClient extends BaseAnthropic {
  readonly messages: Messages = new Messages(this);
}

/** The error classes the SDK throws, for mapping its failures to nexo's typed errors. */
export const anthropicSdkErrors = { APIError, APIConnectionError, APIConnectionTimeoutError } as const;
