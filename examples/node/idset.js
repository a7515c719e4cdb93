#!/usr/bin/env node
// A minimal flux-conformance implementation in JavaScript: RFC 22 idset decode and encode.
// It speaks the protocol of docs/protocol.md on stdin/stdout, one JSON object per line.
"use strict";

const readline = require("readline");

// Ids above this cannot be held exactly in a JS number: refuse rather than round.
const MAX_ID = Number.MAX_SAFE_INTEGER;
// Refuse to expand sets larger than this.
const MAX_IDS = 1 << 24;

class IdsetError extends Error {
  constructor(category, message) {
    super(message);
    this.category = category;
  }
}

function parseId(text) {
  if (!/^(0|[1-9][0-9]*)$/.test(text)) {
    throw new IdsetError("syntax", `not an id: ${JSON.stringify(text)}`);
  }
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value > MAX_ID) {
    throw new IdsetError("limit", `id ${text} is larger than ${MAX_ID}`);
  }
  return value;
}

// Strict RFC 22: one optional pair of brackets; ascending, unique ids; no empty elements;
// ranges a-b with a < b; no leading zeros; nothing but digits, commas and hyphens inside.
function decode(text) {
  let body = text;
  if (body.startsWith("[") && body.endsWith("]")) {
    body = body.slice(1, -1);
  }
  if (/[^0-9,-]/.test(body)) {
    throw new IdsetError("syntax", "only digits, ',' and '-' may appear");
  }
  if (body === "") {
    return [];
  }
  const ranges = [];
  let count = 0;
  let last = -1;
  for (const element of body.split(",")) {
    const parts = element.split("-");
    if (parts.length > 2) {
      throw new IdsetError("syntax", `bad element ${JSON.stringify(element)}`);
    }
    const lo = parseId(parts[0]);
    const hi = parts.length === 2 ? parseId(parts[1]) : lo;
    if (parts.length === 2 && hi <= lo) {
      throw new IdsetError("syntax", `range ${element} does not ascend`);
    }
    if (lo <= last) {
      throw new IdsetError("syntax", "ids must be unique and ascending");
    }
    count += hi - lo + 1;
    if (count > MAX_IDS) {
      throw new IdsetError("limit", `more than ${MAX_IDS} ids`);
    }
    ranges.push([lo, hi]);
    last = hi;
  }
  const ids = [];
  for (const [lo, hi] of ranges) {
    for (let id = lo; id <= hi; id++) ids.push(id);
  }
  return ids;
}

function encode(ids) {
  if (!Array.isArray(ids) || !ids.every((id) => Number.isInteger(id) && id >= 0)) {
    throw new IdsetError("invalid", "input must be a list of non-negative integers");
  }
  // JSON.parse has already rounded ids beyond 2**53: refuse them rather than encode wrongly.
  if (!ids.every(Number.isSafeInteger)) {
    throw new IdsetError("limit", `ids above ${MAX_ID} cannot be represented exactly`);
  }
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const out = [];
  let i = 0;
  while (i < sorted.length) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    out.push(j > i ? `${sorted[i]}-${sorted[j]}` : `${sorted[i]}`);
    i = j + 1;
  }
  return out.join(",");
}

const OPERATIONS = {
  "idset.decode": (input) => {
    if (typeof input !== "string") throw new IdsetError("syntax", "input must be a string");
    return decode(input);
  },
  "idset.encode": encode,
};

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.cmd === "hello") {
    send({
      protocol: 1,
      implementation: { name: "idset.js example", version: "1.0" },
      operations: Object.keys(OPERATIONS),
    });
  } else if (message.cmd === "run") {
    const op = OPERATIONS[message.operation];
    if (!op) {
      send({ seq: message.seq, unsupported: { reason: "not implemented" } });
      return;
    }
    try {
      send({ seq: message.seq, output: op(message.input) });
    } catch (err) {
      if (!(err instanceof IdsetError)) throw err;
      send({ seq: message.seq, error: { category: err.category, message: err.message } });
    }
  } else if (message.cmd === "stop") {
    process.exit(0);
  }
});
