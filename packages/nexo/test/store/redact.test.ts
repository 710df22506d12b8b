import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import fc from "fast-check";
import { forgetSecretsForTesting, rememberSecret } from "../../src/secrets/known.js";
import { luhnValid, type RedactionLabel, redact, redactJson, scrubSecrets } from "../../src/store/index.js";
import { GUARDED_PATTERNS, MAY_MATCH } from "../../src/store/redact.js";

const only = (text: string, label: RedactionLabel, count = 1) => {
  const result = redact(text);
  const nonZero = Object.entries(result.counts).filter(([, n]) => n > 0);
  assert.deepEqual(
    nonZero,
    [[label, count]],
    `counts for ${JSON.stringify(text)}: ${JSON.stringify(result)}`,
  );
  return result.text;
};
const unchanged = (text: string) =>
  assert.equal(redact(text).text, text, `should survive: ${JSON.stringify(text)}`);

/** A Luhn-valid number of `length` digits starting with `first`. */
function cardNumber(first: number, body: number[], length: number): string {
  const digits = [first, ...body].slice(0, length - 1);
  while (digits.length < length - 1) digits.push(0);
  for (let check = 0; check <= 9; check++) {
    const candidate = [...digits, check].join("");
    if (luhnValid(candidate)) return candidate;
  }
  throw new Error("unreachable: one check digit always fits");
}

describe("redact: e-mail addresses", () => {
  it("replaces addresses and keeps the text around them", () => {
    assert.equal(only("write to ana.lopez+tag@example.co.uk.", "email"), "write to [REDACTED:email].");
    assert.equal(only("<bob@mail.example.com>", "email"), "<[REDACTED:email]>");
    assert.equal(only("to='ana@x.org'", "email"), "to='[REDACTED:email]'");
    assert.equal(only("?email=bob@x.io&next=1", "email"), "?email=[REDACTED:email]&next=1");
    assert.equal(only("a@b.co and c@d.io", "email", 2), "[REDACTED:email] and [REDACTED:email]");
  });

  it("leaves @-handles, package scopes and hosts without a TLD alone", () => {
    unchanged("ping @maria about @nexo/wire");
    unchanged("ssh root@localhost");
    unchanged("user@ without domain");
  });

  it("property: any generated address is gone and a placeholder is in its place", () => {
    fc.assert(
      fc.property(fc.emailAddress(), fc.stringMatching(/^[a-z ]{0,12}$/), (email, words) => {
        const out = redact(`${words} ${email} ${words}`).text;
        assert.ok(!out.includes(email), out);
        assert.ok(out.includes("[REDACTED:email]"), out);
        assert.ok(!out.includes("@"), out);
      }),
      { numRuns: 500 },
    );
  });
});

describe("redact: credentials", () => {
  it("replaces provider API keys", () => {
    for (const key of [
      "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abc",
      "sk-ant-oat01-abcdefghijklmnopqrstuvwxyz",
      "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12",
      "sk-1234567890abcdefghijABCDEFGHIJ",
      "AKIAIOSFODNN7EXAMPLE",
      "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
      "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
      "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
      "sk_live_51HabcdefghijklmnopQRST",
    ]) {
      assert.equal(only(`key: ${key} end`, "api_key"), "key: [REDACTED:api_key] end", key);
    }
  });

  it("replaces secrets assigned to a secret-sounding name, keeping the name", () => {
    assert.equal(only("api_key=0123456789abcdef0123456789abcdef", "api_key"), "api_key=[REDACTED:api_key]");
    assert.equal(
      only('{"access_token": "ya29.a0AfH6SMBx3jkl2Qw"}', "api_key"),
      '{"access_token": "[REDACTED:api_key]"}',
    );
    assert.equal(
      only("https://x.io/cb?token=ZXhhbXBsZS1zZWNyZXQtMTIzNDU2Nzg5MA==&a=1", "api_key"),
      "https://x.io/cb?token=[REDACTED:api_key]&a=1",
    );
    assert.equal(
      only("CLIENT_SECRET: 9f86d081884c7d659a2feaa0c55ad015", "api_key"),
      "CLIENT_SECRET: [REDACTED:api_key]",
    );
  });

  it("replaces bearer tokens and JWTs", () => {
    assert.equal(
      only("Authorization: Bearer abcdef0123456789xyz", "bearer"),
      "Authorization: Bearer [REDACTED:bearer]",
    );
    assert.equal(only("bearer 8f3a9c2e1d", "bearer"), "bearer [REDACTED:bearer]");
    const jwt =
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    assert.equal(only(`token ${jwt} here`, "bearer"), "token [REDACTED:bearer] here");
  });

  it("leaves prose and ordinary identifiers alone", () => {
    unchanged("the bearer of bad news");
    unchanged("Bearer token auth is configured");
    unchanged("token: verification_code_value");
    unchanged("task-management-system-overview");
    unchanged("ask-me-anything-about-sk-learn");
    unchanged("password: hunter2");
    unchanged("see src/store/transcripts.ts and packages/nexo/src/index.ts");
  });
});

describe("redact: card numbers", () => {
  it("replaces Luhn-valid numbers of the card networks, grouped or not", () => {
    for (const card of [
      "4111111111111111",
      "4111 1111 1111 1111",
      "5500-0000-0000-0004",
      "378282246310005",
      "6011111111111117",
      "30569309025904",
      "3530111333300000",
    ]) {
      assert.equal(only(`card ${card}, exp 12/29`, "card"), "card [REDACTED:card], exp 12/29", card);
    }
  });

  it("keeps numbers that fail the Luhn check or cannot be cards", () => {
    unchanged("card 4111 1111 1111 1112");
    unchanged("ts 1714492951000 id 1234567890123456789");
    unchanged("pi 3.14159265358979323846");
    unchanged("hash 4111111111111111abc");
    unchanged("-1001234567890");
  });

  it("property: generated Luhn-valid cards are always redacted", () => {
    const card = fc
      .record({
        first: fc.integer({ min: 2, max: 6 }),
        body: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 18, maxLength: 18 }),
        length: fc.integer({ min: 13, max: 19 }),
        grouping: fc.constantFrom("", " ", "-"),
      })
      .map(({ first, body, length, grouping }) => {
        const digits = cardNumber(first, body, length);
        return { digits, text: grouping === "" ? digits : (digits.match(/.{1,4}/g) ?? []).join(grouping) };
      });
    fc.assert(
      fc.property(card, ({ digits, text }) => {
        const out = redact(`pay with ${text} please`);
        assert.equal(out.text, "pay with [REDACTED:card] please", `${text} → ${out.text}`);
        assert.ok(!out.text.includes(digits));
      }),
      { numRuns: 500 },
    );
  });

  it("property: a bare digit run changes only when it is a Luhn-valid card", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,30}$/), (digits) => {
        const isCard =
          digits.length >= 13 && digits.length <= 19 && "23456".includes(digits[0]!) && luhnValid(digits);
        assert.equal(redact(`id ${digits} ok`).text, isCard ? "id [REDACTED:card] ok" : `id ${digits} ok`);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("redact: phone numbers", () => {
  it("replaces international and common national formats", () => {
    for (const phone of [
      "+54 9 11 2233-4455",
      "+44 (0)20 7946 0958",
      "+4915112345678",
      "+1 (555) 123-4567",
      "(555) 123-4567",
      "555-123-4567",
      "555.123.4567",
      "1-800-555-1234",
      "030 1234567",
      "07700 900123",
      "06 12 34 56 78",
      "011 4555-1234",
    ]) {
      assert.equal(only(`call ${phone} today`, "phone"), "call [REDACTED:phone] today", phone);
    }
  });

  it("replaces any number announced as a phone", () => {
    assert.equal(only("tel: 5551234567", "phone"), "tel: [REDACTED:phone]");
    assert.equal(only("mi celular es 1122334455", "phone"), "mi celular es [REDACTED:phone]");
    assert.equal(only("WhatsApp 11 2233 4455 anytime", "phone"), "WhatsApp [REDACTED:phone] anytime");
    assert.equal(only("Phone number: 612 34 56 78", "phone"), "Phone number: [REDACTED:phone]");
  });

  it("keeps dates, times, versions, addresses, amounts, short numbers and ids", () => {
    for (const text of [
      "on 2024-01-15 at 10:30:45",
      "15/01/2024 and 15.01.2024 and 2024/01/15",
      "05-06-2024 12 people came",
      "v1.2.3, 10.15.7 and node 20.19.0",
      "server 192.168.100.200:8080",
      "price $1,299.99 x 3 = 3,899.97",
      "dial 112 or 911",
      "order 1234567890 shipped",
      "Tel Aviv 2024",
      "phone 112",
      "2024-01-01T10:00:00+0000",
      "offset +01:00 and +5",
      "1 234 567 inhabitants",
      "ISBN 978-3-16-148410-0",
    ]) {
      unchanged(text);
    }
  });

  it("property: generated international numbers are always redacted", () => {
    const phone = fc
      .record({
        country: fc.stringMatching(/^[1-9][0-9]{0,2}$/),
        groups: fc.array(fc.stringMatching(/^[0-9]{2,4}$/), { minLength: 2, maxLength: 4 }),
        separator: fc.constantFrom(" ", "-", ".", ""),
      })
      .map(({ country, groups, separator }) => `+${country} ${groups.join(separator)}`)
      .filter((p) => {
        const n = p.replace(/\D/g, "").length;
        return n >= 8 && n <= 15;
      });
    fc.assert(
      fc.property(phone, (p) => {
        assert.equal(redact(`reach me at ${p} now`).text, "reach me at [REDACTED:phone] now", p);
      }),
      { numRuns: 500 },
    );
  });

  it("property: dates, times and versions survive", () => {
    const two = (n: number) => String(n).padStart(2, "0");
    const date = fc
      .record({
        y: fc.integer({ min: 1900, max: 2099 }),
        m: fc.integer({ min: 1, max: 12 }),
        d: fc.integer({ min: 1, max: 28 }),
        sep: fc.constantFrom("-", "/", "."),
      })
      .chain(({ y, m, d, sep }) =>
        fc.constantFrom(`${y}${sep}${two(m)}${sep}${two(d)}`, `${two(d)}${sep}${two(m)}${sep}${y}`),
      );
    const time = fc
      .tuple(
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 59 }),
      )
      .map(([h, m, s]) => `${two(h)}:${two(m)}:${two(s)}`);
    const version = fc
      .array(fc.integer({ min: 0, max: 999 }), { minLength: 2, maxLength: 4 })
      .map((parts) => `v${parts.join(".")}`);
    fc.assert(
      fc.property(date, time, version, (d, t, v) => unchanged(`released ${v} on ${d} ${t} UTC`)),
      { numRuns: 500 },
    );
  });
});

describe("redact: invariants", () => {
  it("property: text without digits, '@' or 16-character runs is unchanged", () => {
    const word = fc.oneof(
      fc.constantFrom(
        "Bearer",
        "bearer",
        "sk-",
        "key=",
        "token:",
        "AKIA",
        "ghp_",
        "eyJ",
        "xoxb-",
        "+",
        "(",
        ")",
        "-",
        ".",
      ),
      fc.string({ unit: fc.constantFrom(..."abcXYZ_-./:=+'\"`ñé漢{}()[]".split("")), maxLength: 15 }),
    );
    fc.assert(
      fc.property(fc.array(word, { maxLength: 20 }), fc.constantFrom(" ", "\n", "\t"), (words, space) => {
        const text = words.join(space);
        fc.pre(!text.split(/\s+/).some((run) => run.length >= 16));
        unchanged(text);
      }),
      { numRuns: 2000 },
    );
  });

  it("property: redacting twice changes nothing more", () => {
    const chunk = fc.oneof(
      fc.emailAddress(),
      fc.stringMatching(/^\+[0-9]{1,3}( [0-9]{2,4}){2,4}$/),
      fc.stringMatching(/^[0-9 .:/+-]{1,24}$/),
      fc.constantFrom("tel:", "Bearer", "api_key=", "sk-", "card", "AKIAIOSFODNN7EXAMPLE"),
      fc.string({ maxLength: 12 }),
    );
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 8 }), (chunks) => {
        const once = redact(chunks.join(" ")).text;
        assert.equal(redact(once).text, once);
      }),
      { numRuns: 2000 },
    );
  });

  it("property: a rule's shortcut says no only when its patterns cannot match", () => {
    // Pieces that make every guarded pattern match now and then, glued without spaces too.
    const piece = fc.oneof(
      fc.constantFrom(
        "@",
        "ana@x.org",
        "a.b@mail.example.com",
        "eyJhbGciOiJI.eyJzdWIiOiIx.c2ln",
        "Bearer ",
        "bearer\t",
        "sk-",
        "sk-ant-api03-",
        "AKIA",
        "ghp_",
        "github_pat_",
        "xoxb-",
        "xoxb-1234567890",
        "xapp-1-",
        "AIza",
        "sk_live_",
        "api_key",
        "Token",
        "PASSWORD",
        "credentials",
        "auth",
        '"',
        "'",
        ": ",
        "=",
        "4111 1111 1111 1111",
        "5555-5555-5555-4444",
        "+54 9 11 2233-4455",
        " ",
        "\n",
      ),
      fc.string({ unit: fc.constantFrom(..."aZ09_-.+/~=:@ ".split("")), maxLength: 24 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join("");
        for (const [rule, patterns] of Object.entries(GUARDED_PATTERNS)) {
          const matches = patterns.some((pattern) => text.search(pattern) !== -1);
          if (matches)
            assert.ok(MAY_MATCH[rule as keyof typeof MAY_MATCH](text), `${rule}: ${JSON.stringify(text)}`);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it("counts every replacement by label", () => {
    const result = redact(
      "ana@x.org, +44 20 7946 0958, 4111111111111111, Bearer abcdefgh12345678, sk-abcdefghijklmnopqrstuvwx",
    );
    assert.deepEqual(result.counts, { secret: 0, email: 1, bearer: 1, api_key: 1, card: 1, phone: 1 });
  });
});

describe("remembered secrets", () => {
  afterEach(() => forgetSecretsForTesting());

  it("are replaced whatever they look like, longest first, before every other rule", () => {
    rememberSecret("hunter2hunter2");
    rememberSecret("hunter2hunter2-and-more");
    rememberSecret("short"); // too short to be remembered: scrubbing it would mangle text
    assert.equal(
      only("pw hunter2hunter2-and-more then hunter2hunter2 and short", "secret", 2),
      "pw [REDACTED:secret] then [REDACTED:secret] and short",
    );
    // A remembered value with regex characters is matched literally.
    rememberSecret("a.b*c(d)[e]+f?");
    assert.equal(redact("x a.b*c(d)[e]+f? y").text, "x [REDACTED:secret] y");
    assert.equal(redact("x aXbbc(d)[e]+f? y").text, "x aXbbc(d)[e]+f? y");
  });
});

describe("scrubSecrets (diagnostic text)", () => {
  afterEach(() => forgetSecretsForTesting());

  it("removes remembered values, keys by shape and name, bearer tokens and random-looking tokens", () => {
    rememberSecret("plain-looking-password");
    const text =
      "invalid x-api-key plain-looking-password; sent Authorization: Bearer abcDEF123456ghiJKL; " +
      "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345; api_key=Zq81kdPq0Lz93mMn; " +
      "token 7f3kQ92LmZp0Xr8sT4vW1yBc6dE5gH2j was refused";
    assert.equal(
      scrubSecrets(text),
      "invalid x-api-key [REDACTED:secret]; sent Authorization: Bearer [REDACTED:bearer]; " +
        "key [REDACTED:api_key]; api_key=[REDACTED:api_key]; token [REDACTED:api_key] was refused",
    );
  });

  it("keeps what an operator needs to read an error", () => {
    for (const text of [
      "model claude-sonnet-4-5-20250929 not found (request req_011CSHoEeqs5C35K2UUqWZxA)",
      "request 123e4567-e89b-12d3-a456-426614174000 failed at https://api.example.com/v1/chat/completions",
      "contact ana@x.org or +44 20 7946 0958; quota 4111111111111111",
      "/usr/lib/node_modules/some_very_long_function_name_here_2/index.js",
    ]) {
      assert.equal(scrubSecrets(text), text);
    }
  });
});

describe("redactJson", () => {
  it("redacts strings at any depth, keeps keys and non-strings, and does not mutate its input", () => {
    const input = {
      to: "ana@x.org",
      nested: [{ note: "call +44 20 7946 0958" }, 42, true, null],
      "bob@x.org": "key kept",
      count: 3,
    };
    const copy = structuredClone(input);
    const { value, counts } = redactJson(input);
    assert.deepEqual(value, {
      to: "[REDACTED:email]",
      nested: [{ note: "call [REDACTED:phone]" }, 42, true, null],
      "bob@x.org": "key kept",
      count: 3,
    });
    assert.deepEqual(input, copy);
    assert.equal(counts.email, 1);
    assert.equal(counts.phone, 1);
  });

  it("replaces whole values under secret-sounding keys, whatever their shape", () => {
    const { value } = redactJson({
      api_key: "plainletterskey",
      password: "correct horse battery staple",
      headers: { Authorization: "Bearer abc.def" },
      client_secret: "short",
      tokens_used: 1234,
    });
    assert.deepEqual(value, {
      api_key: "[REDACTED:api_key]",
      password: "[REDACTED:api_key]",
      headers: { Authorization: "[REDACTED:bearer]" },
      client_secret: "short",
      tokens_used: 1234,
    });
  });
});
