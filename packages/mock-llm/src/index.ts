/** The mock LLM server: a scripted stand-in for Anthropic's and OpenAI's streaming APIs. */

export {
  loadMockScript,
  type MockResponse,
  MockResponseSchema,
  type MockScript,
  MockScriptError,
  type MockScriptInput,
  MockScriptSchema,
  parseMockScript,
} from "./script.js";
export { MockLlmServer, type MockLlmServerOptions, type RecordedRequest } from "./server.js";
