import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isSecretName, withoutSecrets } from "../../src/secrets/index.js";

describe("isSecretName", () => {
  it("knows provider keys, *_API_KEY, *_TOKEN, *_SECRET, *PASSWORD* and credential words", () => {
    for (const name of [
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
      "DEEPSEEK_API_KEY",
      "MY_APIKEY",
      "NEXO_HTTP_TOKEN",
      "NEXO_ADMIN_TOKEN",
      "GITHUB_TOKEN",
      "TOKEN",
      "AWS_SECRET_ACCESS_KEY",
      "AWS_ACCESS_KEY",
      "CLIENT_SECRET",
      "PGPASSWORD",
      "DB_PASSWD",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "SSH_PRIVATE_KEY",
      "slack_bot_token",
    ]) {
      assert.equal(isSecretName(name), true, name);
    }
  });

  it("leaves ordinary variables alone, including ones that merely contain the words", () => {
    for (const name of [
      "PATH",
      "HOME",
      "TOKENIZERS_PARALLELISM",
      "NEXO_LOG",
      "KEYBOARD",
      "SECRETARY_NAME",
      "LANG",
    ]) {
      assert.equal(isSecretName(name), false, name);
    }
  });

  it("withoutSecrets keeps only the others", () => {
    const env = withoutSecrets({
      PATH: "/usr/bin",
      OPENAI_API_KEY: "sk-x",
      DB_PASSWORD: "pw",
      HOME: "/root",
    });
    assert.deepEqual(Object.keys(env).sort(), ["HOME", "PATH"]);
  });
});
