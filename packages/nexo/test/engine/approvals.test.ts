/**
 * The approval policy: modes, the operator's allow-list, and what "always" grants — never more than
 * what the user saw (issue 10.5), checked from the side of a model trying to ride on a grant.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApprovalPolicy, grantCovers, grantFor, PendingApprovals } from "../../src/engine/approvals.js";

const bash = (command: string) => ({ name: "Bash", category: "exec" as const, command });

describe("approval policy", () => {
  test("modes: auto_edit runs info and edit without asking but asks for exec; yolo asks for nothing", () => {
    const policy = new ApprovalPolicy({ mode: "auto_edit", allowList: ["Special"] });
    assert.equal(policy.needsApproval({ name: "Read", category: "info" }), false);
    assert.equal(policy.needsApproval({ name: "Write", category: "edit" }), false);
    assert.equal(policy.needsApproval(bash("ls")), true);
    assert.equal(policy.needsApproval({ name: "x_tool", category: "mcp" }), true);
    assert.equal(policy.needsApproval({ name: "Special", category: "exec" }), false);
    policy.mode = "default";
    assert.equal(policy.needsApproval({ name: "Read", category: "info" }), true);
    policy.mode = "yolo";
    assert.equal(policy.needsApproval(bash("rm -rf /")), false);
  });

  test("always for a plain command grants its program, and only plain invocations of it", () => {
    const policy = new ApprovalPolicy();
    policy.grantAlways(grantFor(bash("echo hi")));
    assert.deepEqual(policy.grants, [{ kind: "program", tool: "Bash", program: "echo" }]);
    assert.equal(policy.needsApproval(bash("echo something else")), false);
    assert.equal(policy.needsApproval(bash("'echo' \"quoted args\"")), false);
    for (const ride of [
      "touch x",
      "echo hi; rm -rf ~",
      "echo hi && touch x",
      "echo hi | sh",
      "echo hi > ~/.bashrc",
      "echo $(rm -rf ~)",
      "echo `id`",
      'echo "$HOME"',
      "echo hi &",
      "echo hi\ntouch x",
      "LD_PRELOAD=/tmp/x.so echo hi",
      "echo \\; touch x",
      "echo 'unterminated",
    ]) {
      assert.equal(policy.needsApproval(bash(ride)), true, `${JSON.stringify(ride)} must still ask`);
    }
    // The grant is for Bash: another command tool with the same program is not covered.
    assert.equal(policy.needsApproval({ name: "Shell", category: "exec", command: "echo hi" }), true);
  });

  test("always for a line that is more than one plain invocation grants exactly that line", () => {
    for (const line of ["ls | wc -l", "env FOO=1 make", "sudo apt update", "bash -c 'ls'", "X=1 ls"]) {
      const policy = new ApprovalPolicy();
      const grant = grantFor(bash(line));
      assert.deepEqual(grant, { kind: "command", tool: "Bash", command: line });
      policy.grantAlways(grant);
      assert.equal(policy.needsApproval(bash(line)), false);
      assert.equal(policy.needsApproval(bash(`${line} `)), true, "only the exact line");
      assert.equal(policy.needsApproval(bash("ls")), true);
    }
  });

  test("info and edit grant their category; MCP and other tools grant only themselves", () => {
    assert.deepEqual(grantFor({ name: "Write", category: "edit" }), { kind: "category", category: "edit" });
    assert.deepEqual(grantFor({ name: "Read", category: "info" }), { kind: "category", category: "info" });
    const policy = new ApprovalPolicy();
    policy.grantAlways(grantFor({ name: "mcp__gh__create_issue", category: "mcp" }));
    assert.equal(policy.needsApproval({ name: "mcp__gh__create_issue", category: "mcp" }), false);
    assert.equal(policy.needsApproval({ name: "mcp__gh__delete_repo", category: "mcp" }), true);
    policy.grantAlways(grantFor({ name: "Spawn", category: "exec" }));
    assert.equal(policy.needsApproval({ name: "Spawn", category: "exec" }), false);
    assert.equal(policy.needsApproval(bash("ls")), true);
    policy.grantAlways(grantFor({ name: "Edit", category: "edit" }));
    assert.equal(policy.needsApproval({ name: "Write", category: "edit" }), false);
  });

  test("grants are kept once each and reported through onChange, for persistence", () => {
    let changes = 0;
    const policy = new ApprovalPolicy({ grants: [{ kind: "category", category: "info" }] });
    policy.onChange = () => changes++;
    policy.grantAlways({ kind: "category", category: "info" });
    policy.grantAlways({ kind: "tool", tool: "Spawn" });
    policy.grantAlways({ kind: "tool", tool: "Spawn" });
    assert.equal(changes, 1);
    assert.equal(policy.grants.length, 2);
    assert.ok(grantCovers(policy.grants[1]!, { name: "Spawn", category: "exec" }));
  });

  test("approving with scope always grants what the waiting call would grant", async () => {
    const policy = new ApprovalPolicy();
    const pending = new PendingApprovals(policy);
    const signal = new AbortController().signal;
    const decision = pending.wait("c1", bash("git status"), signal);
    assert.ok(pending.approve("c1", "always"));
    assert.deepEqual(await decision, { approved: true, scope: "always" });
    assert.deepEqual(policy.grants, [{ kind: "program", tool: "Bash", program: "git" }]);
    await assert.rejects(
      Promise.all([pending.wait("c2", bash("ls"), signal), pending.wait("c2", bash("rm x"), signal)]),
      /already pending/,
    );
  });
});
