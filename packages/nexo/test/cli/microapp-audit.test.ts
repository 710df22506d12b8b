/**
 * `nexo microapp audit tail`: the real `nexo` reading a daemon's database — filters, paging, JSON
 * and table output, the state dir found through --config, and a clear error without a database.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type AuditRow, Store } from "../../src/store/index.js";
import { runCli } from "../helpers/cli.js";

let root: string;
let stateDir: string;
const now = Date.now();

before(() => {
  root = mkdtempSync(join(tmpdir(), "nexo-audit-cli-"));
  stateDir = join(root, "state");
  const store = Store.open(join(stateDir, "nexo.db"));
  const row = (overrides: Partial<AuditRow>): AuditRow => ({
    microapp_id: "probe",
    method: "nexo/admin/microapp_audit/tail",
    capability: "audit_read",
    args_hash: "h",
    started_at_ms: now - 3_600_000,
    result: "ok",
    error_code: null,
    duration_ms: 2,
    tenant_id: null,
    ...overrides,
  });
  store.audit.append(row({}));
  store.audit.append(
    row({
      started_at_ms: now - 60_000,
      method: "nexo/admin/secrets/write",
      capability: "secrets_write",
      result: "denied",
      error_code: -32004,
      tenant_id: "acme",
    }),
  );
  store.audit.append(row({ started_at_ms: now - 30_000, microapp_id: "other" }));
  store.close();
  writeFileSync(join(root, "daemon.yaml"), `state_dir: ${stateDir}\n`);
});
after(() => rmSync(root, { recursive: true, force: true }));

const nexo = (...args: string[]) => runCli(args, { env: { PATH: process.env.PATH, NEXO_LOG: "silent" } });

describe("nexo microapp audit tail", () => {
  it("prints the newest rows as a table", async () => {
    const run = await nexo("microapp", "audit", "tail", "--state-dir", stateDir);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trim().split("\n");
    assert.match(lines[0] ?? "", /^started\s+microapp\s+method\s+capability\s+result\s+code\s+ms\s+tenant$/);
    assert.match(lines[1] ?? "", /other\s+nexo\/admin\/microapp_audit\/tail/);
    assert.match(
      lines[2] ?? "",
      /probe\s+nexo\/admin\/secrets\/write\s+secrets_write\s+denied\s+-32004\s+2\s+acme/,
    );
    assert.equal(lines.at(-1), "3 of 3 rows");
  });

  it("filters (result, microapp, tenant, since) and pages, as JSON", async () => {
    const denied = JSON.parse(
      (await nexo("microapp", "audit", "tail", "--state-dir", stateDir, "--result", "denied", "--json"))
        .stdout,
    );
    assert.deepEqual(
      denied.entries.map((e: AuditRow) => e.method),
      ["nexo/admin/secrets/write"],
    );
    const tenant = JSON.parse(
      (await nexo("microapp", "audit", "tail", "--config", root, "--tenant", "acme", "--json")).stdout,
    );
    assert.equal(tenant.total, 1);
    const recent = JSON.parse(
      (
        await nexo(
          "microapp",
          "audit",
          "tail",
          "--state-dir",
          stateDir,
          "--since-mins",
          "5",
          "--microapp-id",
          "probe",
          "--json",
        )
      ).stdout,
    );
    assert.deepEqual(
      recent.entries.map((e: AuditRow) => e.result),
      ["denied"],
    );
    const page = JSON.parse(
      (await nexo("microapp", "audit", "tail", "--state-dir", stateDir, "--limit", "2", "--json")).stdout,
    );
    assert.deepEqual([page.entries.length, page.total, page.has_more, page.next_offset], [2, 3, true, 2]);
  });

  it("refuses a bad --result and a state dir without a database", async () => {
    const bad = await nexo("microapp", "audit", "tail", "--state-dir", stateDir, "--result", "maybe");
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--result is ok, error or denied/);
    const none = await nexo("microapp", "audit", "tail", "--state-dir", join(root, "nowhere"));
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no nexo database in/);
  });
});
